//! `--fill` and `--memory-per-key`: their checks, and the fill's load (every key of the `-r`
//! range once). The fill walks the keys with the one mechanism that writes a range exactly once:
//! `--sequential`'s shared counter over `-n` = the range's length (and, with `--cluster`,
//! `engine::allkeys`, which the runner picks for a sequential test), so there is no second walk.

use crate::cli::Args;
use crate::engine::{LoadSpec, Stop};
use crate::workload::distribution::KeyPattern;

/// Whether memory per key is measured; with `--fill`, `load` becomes the fill's. An option the
/// fill cannot honour is a usage error (exit 2).
pub fn apply(args: &Args, load: &mut LoadSpec) -> Result<bool, String> {
    // Memory per key's options are its folder's; the plan asks for them by spelling.
    let fill = args.asks("--fill");
    if !fill && !args.asks("--memory-per-key") {
        return Ok(false);
    }
    // What the fill and memory per key refuse of the other modes: `conflicts.rs`.
    if !fill {
        return Ok(true);
    }
    let Some(keyspace) = load.keyspace else {
        return Err("--fill needs -r: the range of keys to write once".into());
    };
    let fill_refused = [
        (args.duration.is_some(), "--duration"),
        (load.rps.is_some(), "--rps (a fill goes as fast as it can)"),
        (args.warmup.is_some(), "--warmup"),
        (args.dataset.is_some(), "--dataset"),
        (args.loop_forever, "-l"),
        (
            !matches!(
                load.key_pattern,
                KeyPattern::Uniform | KeyPattern::Sequential
            ),
            "a key pattern other than sequential",
        ),
    ];
    if let Some((_, other)) = fill_refused.iter().find(|(given, _)| *given) {
        return Err(format!("--fill cannot be combined with {other}"));
    }
    let keys = keyspace.saturating_sub(load.key_min);
    if keys == 0 {
        return Err("--fill: the -r range holds no key".into());
    }
    load.sequential = true;
    load.key_pattern = KeyPattern::Sequential;
    load.stop = Stop::Requests(keys);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use crate::engine::Stop;
    use crate::plan::RunPlan;
    use crate::workload::distribution::KeyPattern;

    fn plan(argv: &[&str]) -> Result<RunPlan, String> {
        let args = match crate::cli::parse(argv.iter().map(|s| s.into())) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            Ok(other) => panic!("{other:?}"),
            Err(e) => return Err(e.0),
        };
        RunPlan::new(&args, None).map_err(|e| e.to_string())
    }

    #[test]
    fn fill_walks_the_range_once_in_order() {
        let p = plan(&["-t", "set", "-r", "1000", "--key-minimum", "100", "--fill"]).unwrap();
        assert!(p.memory_per_key);
        assert!(p.load.sequential);
        assert_eq!(p.load.key_pattern, KeyPattern::Sequential);
        assert_eq!(p.load.stop, Stop::Requests(900));
        let p = plan(&["-t", "set", "-r", "10", "--memory-per-key"]).unwrap();
        assert!(p.memory_per_key && !p.load.sequential);
        assert!(!plan(&["-t", "set"]).unwrap().memory_per_key);
    }

    #[test]
    fn fill_refuses_what_would_not_write_each_key_once() {
        let refused = |argv: &[&str], words: &str| {
            let e = plan(argv).unwrap_err();
            assert!(e.contains(words), "{argv:?}: {e}");
        };
        refused(&["--fill"], "--fill needs -r");
        refused(&["-r", "10", "--fill", "-n", "5"], "-n does not apply");
        refused(&["-r", "10", "--fill", "--duration", "2"], "--duration");
        refused(&["-r", "10", "--fill", "--keys", "zipf"], "key pattern");
        refused(&["--memory-per-key", "--connect-storm"], "--connect-storm");
    }
}
