//! The workload options (issue 12) resolved into the engine's `LoadSpec`: the key pattern and
//! range, the arrival process. Checked here, before anything connects, with the same code the
//! workers sample with (`workload::distribution::Sampler::new`), so a parameter the sampler
//! cannot use is one line and exit 2 rather than a surprise during the run.

use crate::cli::{Args, ArrivalArg, DataSizes, KeyDist, WorkloadArgs};
use crate::engine::{Arrival, LoadSpec};
use crate::workload::PayloadGenerator;
use crate::workload::distribution::{KeyPattern, KeyRange, Sampler};
use crate::workload::sizes::SizeDist;
use crate::workload::suite;
use crate::workload::template::parse_custom_command;

use super::Workload;
use super::mix::{MixSource, MixSpec};

/// `--ratio` or `--command`s as one mixed test; `None` when neither is given.
pub(super) fn mix(args: &Args, data_size: usize) -> Result<Option<Workload>, String> {
    let w = &args.workload;
    let own = |dist: Option<KeyDist>| -> Result<Option<KeyPattern>, String> {
        let Some(dist) = dist else { return Ok(None) };
        let p = pattern(dist, w);
        if let Some(range) = key_range(args) {
            Sampler::new(p, range).map_err(|e| e.0)?;
        }
        Ok(Some(p))
    };
    if let Some((set, get)) = w.ratio {
        let title = format!("SET:GET {set}:{get}");
        // memtier's --multi-key-get: MGETs of up to N keys make up the GET count.
        let multi = w.memtier.as_ref().map_or(0, |m| m.multi_key_get);
        if multi > 1 && args.conn.wait.is_some_and(|x| x.waits > 0) {
            // The MGETs' key counts follow memtier's SET:GET cycle, which WAITs would reshape.
            return Err("--multi-key-get cannot be combined with --wait-ratio".into());
        }
        let get_weight = crate::workload::shape::MemtierShape::get_weight(get, multi);
        let (set, get_weight, waits) = super::wait::with_waits(set, get_weight, args.conn.wait);
        let mut commands = vec![
            MixSpec {
                name: "SET".into(),
                source: MixSource::Suite(suite::by_name("set")),
                weight: set,
                keys: None,
            },
            MixSpec {
                name: "GET".into(),
                source: MixSource::Suite(suite::by_name("get")),
                weight: get_weight,
                keys: own(w.get_key_dist)?,
            },
        ];
        commands.extend(waits);
        return Ok(Some(Workload::Mix { title, commands }));
    }
    if w.commands.is_empty() {
        return Ok(None);
    }
    let mut commands: Vec<MixSpec> = Vec::new();
    for c in &w.commands {
        let prefix = key_prefix(args);
        let args: Vec<Vec<u8>> = c.args.iter().map(|a| memtier_key(a, prefix)).collect();
        let items = parse_custom_command(&args, None, data_size, &mut PayloadGenerator::default())?;
        let line = crate::redact::command(&c.args);
        if items.len() != 1 || items[0].repeat != 1 {
            return Err(format!(
                "--command \"{line}\": one command per --command (no ';' or repeat count)"
            ));
        }
        let word = String::from_utf8_lossy(&c.args[0]).to_uppercase();
        let same = commands
            .iter()
            .filter(|m| m.name.split('#').next() == Some(word.as_str()))
            .count();
        let name = if same == 0 {
            word
        } else {
            format!("{word}#{}", same + 1)
        };
        commands.push(MixSpec {
            name,
            source: MixSource::Line(args),
            weight: c.ratio,
            keys: own(c.key_dist)?,
        });
    }
    if w.memtier.as_ref().is_some_and(|m| m.scan_incremental)
        && let [first] = commands.as_mut_slice()
    {
        // memtier's two rows for a cursor walk: the cycle's first `SCAN 0` and its continuations
        // (`SCAN <cursor>`, timed into this second entry by the engine's scan path; the line is
        // only its name, the walk rewrites the first's).
        first.name = "SCAN 0".into();
        let continuation = MixSpec {
            name: "SCAN <cursor>".into(),
            ..first.clone()
        };
        commands.push(continuation);
    }
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    let weights: Vec<String> = commands.iter().map(|c| c.weight.to_string()).collect();
    let title = format!("{} {}", names.join(":"), weights.join(":"));
    Ok(Some(Workload::Mix { title, commands }))
}

/// The default tests' key prefix: `key:` as the reference, or `--key-prefix`.
pub(super) fn key_prefix(args: &Args) -> &[u8] {
    args.workload.key_prefix.as_deref().unwrap_or(b"key:")
}

/// memtier's `__key__` as respbench's key and placeholder (`key:__rand_int__`, the default
/// tests' keys, with `--key-prefix` in place of `key:`).
fn memtier_key(arg: &[u8], prefix: &[u8]) -> Vec<u8> {
    const TOKEN: &[u8] = b"__key__";
    let mut out = Vec::with_capacity(arg.len() + 8);
    let mut i = 0;
    while i < arg.len() {
        if arg[i..].starts_with(TOKEN) {
            out.extend_from_slice(prefix);
            out.extend_from_slice(b"__rand_int__");
            i += TOKEN.len();
        } else {
            out.push(arg[i]);
            i += 1;
        }
    }
    out
}

/// The key range placeholders take, when `-r` or `--key-maximum` makes them live.
fn key_range(args: &Args) -> Option<KeyRange> {
    let end = match args.workload.key_maximum {
        Some(max) => max + 1,
        None => args.keyspace?,
    };
    let min = args.workload.key_minimum.unwrap_or(0);
    (end > min).then(|| KeyRange { min, max: end - 1 })
}

/// A key distribution as the sampler's pattern, with the options that parameterise it.
fn pattern(dist: KeyDist, w: &WorkloadArgs) -> KeyPattern {
    match dist {
        KeyDist::Uniform => KeyPattern::Uniform,
        KeyDist::Sequential => KeyPattern::Sequential,
        KeyDist::Parallel => KeyPattern::Parallel,
        KeyDist::Gaussian => KeyPattern::Gaussian {
            median: w.key_median,
            stddev: w.key_stddev,
        },
        KeyDist::Zipf(exp) => KeyPattern::Zipf {
            exponent: exp.or(w.key_zipf_exp).unwrap_or(DEFAULT_ZIPF_EXPONENT),
        },
    }
}

/// Zipf's exponent when neither `--keys zipf:EXP` nor `--key-zipf-exp` gives one.
const DEFAULT_ZIPF_EXPONENT: f64 = 1.0;

/// The value size templates are encoded at: the largest variable size, else `-d`.
pub(super) fn data_size(args: &Args) -> usize {
    match &args.workload.data_sizes {
        Some(DataSizes::Range(_, max)) => *max,
        Some(DataSizes::List(list)) => list
            .iter()
            .filter(|p| p.1 > 0)
            .map(|p| p.0)
            .max()
            .unwrap_or(args.data_size),
        None => args.data_size,
    }
}

/// `--data-size-range`/`--data-size-list` as the engine's size distribution. Cluster mode
/// re-sends redirected commands from the template's fixed layout and a dataset brings its own
/// values, so neither combines with variable sizes (yet).
fn value_sizes(args: &Args) -> Result<Option<SizeDist>, String> {
    let Some(sizes) = &args.workload.data_sizes else {
        return Ok(None);
    };
    if args.cluster {
        return Err(
            "--data-size-range/--data-size-list with --cluster is not supported yet".into(),
        );
    }
    if args.dataset.is_some() {
        return Err("--data-size-range/--data-size-list do not apply to --dataset's values".into());
    }
    Ok(match sizes {
        DataSizes::Range(min, max) => Some(SizeDist::Range {
            min: *min,
            max: *max,
        }),
        DataSizes::List(list) => SizeDist::list(list),
    })
}

/// Sets `load`'s key pattern, key range and arrival process from `args`.
pub(super) fn apply(
    args: &Args,
    load: &mut LoadSpec,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let w = &args.workload;
    let mixed = w.ratio.is_some() || !w.commands.is_empty();
    if mixed && args.dataset.is_some() {
        return Err("--ratio/--command and --dataset both choose the commands; give one".into());
    }
    load.value_sizes = value_sizes(args)?;
    let dist = w.key_dist.unwrap_or(if args.sequential {
        KeyDist::Sequential
    } else {
        KeyDist::Uniform
    });
    let pattern = pattern(dist, w);
    // --key-maximum is inclusive, -r N is 0..N-1: both become the keyspace's end.
    if let Some(max) = w.key_maximum {
        load.keyspace = Some(max + 1);
    }
    let min = w.key_minimum.unwrap_or(0);
    match load.keyspace {
        Some(keyspace) if min >= keyspace.max(1) => {
            return Err(format!(
                "--key-minimum {min} leaves no keys below the keyspace's end {keyspace} (-r or \
                 --key-maximum)"
            ));
        }
        Some(keyspace) if keyspace > 0 => {
            let range = KeyRange {
                min,
                max: keyspace - 1,
            };
            Sampler::new(pattern, range).map_err(|e| e.0)?;
        }
        // No key range: `-r 0` (the reference's: every placeholder is 000000000000) or none.
        Some(_) | None => {
            let given = [
                (w.key_dist.is_some(), "--key-pattern/--keys"),
                (w.key_minimum.is_some(), "--key-minimum"),
            ];
            let given: Vec<&str> = given.iter().filter(|g| g.0).map(|g| g.1).collect();
            if !given.is_empty() {
                warnings.push(format!(
                    "WARNING: {} {} no effect {}",
                    given.join(", "),
                    if given.len() == 1 { "has" } else { "have" },
                    match load.keyspace {
                        Some(_) => "with -r 0 (every placeholder is 000000000000)",
                        None => "without -r or --key-maximum",
                    }
                ));
            }
        }
    }
    load.key_pattern = pattern;
    load.key_min = min;
    load.sequential = matches!(pattern, KeyPattern::Sequential | KeyPattern::Parallel);
    load.arrival = match w.arrival.unwrap_or_default() {
        ArrivalArg::Uniform => Arrival::Uniform,
        ArrivalArg::Poisson => Arrival::Poisson,
    };
    if w.arrival.is_some() && load.rps.is_none() {
        warnings.push("WARNING: --arrival has no effect without --rps".to_string());
    }
    if w.key_prefix.is_some() && !args.command.is_empty() {
        warnings.push(
            "WARNING: --key-prefix has no effect on a command given on the command line (its \
             keys are as written; the prefix is for the default tests and --command's __key__)"
                .to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::cli::{Invocation, parse};
    use crate::engine::Arrival;
    use crate::plan::RunPlan;
    use crate::workload::distribution::KeyPattern;

    fn plan(argv: &[&str]) -> Result<RunPlan, String> {
        let args = match parse(argv.iter().map(|s| s.into())) {
            Ok(Invocation::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        RunPlan::new(&args, None).map_err(|e| e.to_string())
    }

    #[test]
    fn memtier_and_native_spellings_give_the_same_pattern() {
        let a = plan(&["--key-pattern=Z:Z", "--key-zipf-exp=1.2", "-r", "100"]).unwrap();
        let b = plan(&["--keys", "zipf:1.2", "-r", "100"]).unwrap();
        assert_eq!(a.load.key_pattern, KeyPattern::Zipf { exponent: 1.2 });
        assert_eq!(b.load.key_pattern, a.load.key_pattern);
        let p = plan(&[
            "--keys",
            "parallel",
            "--key-minimum",
            "10",
            "--key-maximum",
            "99",
        ]);
        let p = p.unwrap();
        assert_eq!(p.load.key_pattern, KeyPattern::Parallel);
        assert_eq!((p.load.key_min, p.load.keyspace), (10, Some(100)));
        assert!(p.load.sequential, "counter-based: shared counters");
        let s = plan(&["--sequential", "-r", "5"]).unwrap();
        assert_eq!(s.load.key_pattern, KeyPattern::Sequential);
    }

    #[test]
    fn bad_combinations_are_one_line() {
        let e = plan(&["-r", "10", "--key-minimum", "10"]).unwrap_err();
        assert!(e.starts_with("--key-minimum 10 leaves no keys"), "{e}");
        let e = plan(&["-r", "10", "--keys", "gaussian", "--key-median", "50"]).unwrap_err();
        assert!(e.contains("outside the key range 0..=9"), "{e}");
    }

    #[test]
    fn warnings_for_options_without_effect() {
        let p = plan(&["--keys", "zipf", "--arrival", "poisson"]).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("--key-pattern/--keys has no effect"))
        );
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("--arrival has no effect"))
        );
        let p = plan(&["-r", "0", "--keys", "zipf"]).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("--key-pattern/--keys has no effect with -r 0")),
            "{:?}",
            p.warnings
        );
        let p = plan(&["--key-prefix", "app:", "set", "k", "v"]).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("--key-prefix has no effect on a command")),
            "{:?}",
            p.warnings
        );
        let p = plan(&["--rps", "100", "--arrival", "poisson"]).unwrap();
        assert_eq!(p.load.arrival, Arrival::Poisson);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }
}
