//! `--key-drift` into the load spec's `workload::drift::KeyDrift`, checked against the key
//! pattern and range before anything connects (one line, exit 2). A load option of the engine's
//! (every test's keys move), whatever the mode.

use crate::cli::{Args, KeyDriftArg};
use crate::engine::LoadSpec;
use crate::workload::distribution::KeyPattern;
use crate::workload::drift::KeyDrift;

/// `--key-drift` into `load.key_drift`, after the key pattern and range are known.
pub(super) fn apply(args: &Args, load: &mut LoadSpec) -> Result<(), String> {
    let Some(arg) = args.workload.key_drift else {
        return Ok(());
    };
    let Some(len) = load.keyspace.map(|k| k.saturating_sub(load.key_min)) else {
        return Err("--key-drift moves keys within a key range; give -r (or --key-maximum)".into());
    };
    // With --cluster the drift is still only key choice: each connection draws from the
    // drifting pattern and keeps the keys its node owns (`engine/worker/cluster.rs`), so routing
    // by key needs nothing more.
    if args.sequential {
        return Err("--key-drift moves random keys; it does not apply to --sequential".into());
    }
    load.key_drift = Some(match arg {
        KeyDriftArg::Shift { step, every } => {
            if !matches!(
                load.key_pattern,
                KeyPattern::Gaussian { .. } | KeyPattern::Zipf { .. }
            ) {
                return Err(
                    "--key-drift STEP:SECS moves a gaussian or zipf pattern's centre \
                            (--keys gaussian|zipf); for a hot set use hot:H:SECS"
                        .into(),
                );
            }
            KeyDrift::Shift { step, every }
        }
        KeyDriftArg::HotSet { keys, every } => {
            if load.key_pattern != KeyPattern::Uniform {
                return Err(
                    "--key-drift hot:H:SECS draws uniformly from its hot set; it does \
                            not combine with --keys/--key-pattern"
                        .into(),
                );
            }
            if keys > len {
                return Err(format!(
                    "--key-drift hot:{keys}: a hot set larger than the {len} keys of the range"
                ));
            }
            KeyDrift::HotSet { keys, every }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::RunPlan;

    fn plan(argv: &[&str]) -> Result<RunPlan, String> {
        let args = match crate::cli::parse(argv.iter().map(Into::into)) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            Ok(other) => panic!("{other:?}"),
            Err(e) => return Err(e.0),
        };
        RunPlan::new(&args, None).map_err(|e| match e {
            crate::plan::PlanError::Usage(m) | crate::plan::PlanError::Io(m) => m,
        })
    }

    #[test]
    fn key_drift_needs_a_pattern_it_can_move() {
        let p = plan(&["-r", "1000", "--keys", "zipf", "--key-drift", "100:5"]).unwrap();
        assert!(matches!(
            p.load.key_drift,
            Some(KeyDrift::Shift { step: 100, .. })
        ));
        let p = plan(&["--cluster", "-r", "1000", "--key-drift", "hot:10:0.5"]).unwrap();
        assert!(matches!(
            p.load.key_drift,
            Some(KeyDrift::HotSet { keys: 10, .. })
        ));
        for (argv, start) in [
            (
                &["--key-drift", "hot:10:1"][..],
                "--key-drift moves keys within a key range",
            ),
            (
                &["-r", "100", "--key-drift", "10:1"],
                "--key-drift STEP:SECS moves",
            ),
            (
                &["-r", "100", "--key-drift", "hot:101:1"],
                "--key-drift hot:101",
            ),
            (
                &["-r", "100", "--keys", "zipf", "--key-drift", "hot:5:1"],
                "--key-drift hot:H",
            ),
            (
                &["-r", "100", "--key-drift", "hot:5"],
                "invalid value \"hot:5\" for --key-drift",
            ),
        ] {
            let e = plan(argv).unwrap_err();
            assert!(e.starts_with(start) && !e.contains('\n'), "{argv:?}: {e}");
        }
    }
}
