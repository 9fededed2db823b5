//! The workload options (issue 12): key distributions, value sizes, the SET:GET ratio and the
//! arrival process. memtier_benchmark's spellings where they do not clash with
//! valkey-benchmark's (its users type them from muscle memory and from vendors' guides, often as
//! `--ratio=0:1`, which lexopt accepts for every long option), plus `--keys`, a native spelling
//! that reads well on its own.
//!
//! Kept apart from the main table (`flags/`) so that each entry sits beside its value's parser;
//! `plan` turns the values into the engine's types (`cli` imports nothing of the crate, so these are its own plain types).

use std::ffi::OsStr;

use super::UsageError;
use super::drift::KeyDriftArg;
use super::flag::{Flag, SecretValue, Value};
use super::state::State;
use super::value::{invalid_value, text, whole};
use super::words::split_words;

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// Largest key value: the 12-digit placeholder's.
const MAX_KEY: u64 = 999_999_999_999;
/// Largest value size, as `-d`.
const MAX_SIZE: u64 = 1 << 30;

/// How placeholder values are drawn from the key range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDist {
    Uniform,
    Sequential,
    Gaussian,
    /// The exponent when `--keys zipf:EXP` gave one (else `--key-zipf-exp` or 1).
    Zipf(Option<f64>),
    Parallel,
}

/// How value sizes vary (`__data__` and the default tests' values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSizes {
    /// `--data-size-range MIN-MAX`: uniform over the inclusive range.
    Range(usize, usize),
    /// `--data-size-list SIZE:WEIGHT,...`: each size with its relative weight.
    List(Vec<(usize, u32)>),
}

/// `--arrival`: when `--rps` sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArrivalArg {
    /// Evenly spaced (the default).
    #[default]
    Uniform,
    /// Exponential gaps: a Poisson process with the same mean rate.
    Poisson,
}

/// The workload options as given (all absent by default: valkey-benchmark's behaviour).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadArgs {
    /// `--key-prefix`: replaces `key:` in the default tests' keys and memtier's `__key__`.
    pub key_prefix: Option<Vec<u8>>,
    /// `--key-pattern` or `--keys` (the later wins).
    pub key_dist: Option<KeyDist>,
    /// `--key-minimum`.
    pub key_minimum: Option<u64>,
    /// `--key-maximum` (inclusive; overrides `-r`'s top).
    pub key_maximum: Option<u64>,
    /// `--key-stddev` (Gaussian).
    pub key_stddev: Option<f64>,
    /// `--key-median` (Gaussian).
    pub key_median: Option<f64>,
    /// `--key-zipf-exp` (Zipf).
    pub key_zipf_exp: Option<f64>,
    /// `--data-size-range` or `--data-size-list` (the later wins).
    pub data_sizes: Option<DataSizes>,
    /// `--ratio SET:GET`.
    pub ratio: Option<(u32, u32)>,
    /// `--arrival`.
    pub arrival: Option<ArrivalArg>,
    /// `--key-pattern S:G` with different halves: GET's pattern in a `--ratio` mix
    /// (`key_dist` is SET's).
    pub get_key_dist: Option<KeyDist>,
    /// memtier's `--command` (repeatable), each with its `--command-ratio` and
    /// `--command-key-pattern` (which apply to the `--command` before them).
    pub commands: Vec<CommandArg>,
    /// The mix's commands in their weights' cycle rather than drawn (`respbench memtier`: its
    /// `--ratio 1:10` is one SET then ten GETs, an exact split).
    pub in_order: bool,
    /// `respbench memtier`'s data and key options (`None` outside memtier mode).
    pub memtier: Option<MemtierData>,
    /// `--key-drift` (`drift.rs`).
    pub key_drift: Option<KeyDriftArg>,
}

/// memtier's data options as given (`memtier/cli/`); `plan` turns them into the mix's
/// `workload::shape::MemtierShape`. Its keys are `memtier-123`, never zero-padded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemtierData {
    /// `-R`, `--random-data`.
    pub random_data: bool,
    /// `--data-size-pattern S` (sizes spread over the key range; `R` is the default).
    pub size_pattern_s: bool,
    /// `--data-offset`.
    pub data_offset: u64,
    /// `--expiry-range MIN-MAX`, seconds.
    pub expiry: Option<(u64, u64)>,
    /// `--multi-key-get N` (0: plain GETs).
    pub multi_key_get: u32,
    /// `--scan-incremental-iteration`: the `SCAN` command follows the returned cursor.
    pub scan_incremental: bool,
    /// `--scan-incremental-max-iterations` (0: until the cursor returns 0).
    pub scan_max_iterations: u64,
    /// `--data-import` and its options (`memtier/cli/import.rs`).
    pub import: Option<ImportArgs>,
}

/// memtier's `--data-import FILE` as the plan reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportArgs {
    pub path: std::path::PathBuf,
    /// `--generate-keys`: keys from the key options, values from the file.
    pub generate_keys: bool,
    /// `--no-expiry`: the file's expiry times are not sent.
    pub no_expiry: bool,
    /// `--data-verify` (`--verify-only` implies it): read the keys back after the test.
    pub verify: bool,
    /// `--verify-only`: the verification pass alone.
    pub verify_only: bool,
    /// `-n allkeys` with the file's keys: every item once (the plan counts them).
    pub all_items: bool,
}

/// One `--command` of a weighted mix.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandArg {
    /// The command line split into arguments as memtier does (`cli::words`: whitespace,
    /// quotes, escapes), memtier's `__key__` and `__data__` inside.
    pub args: Vec<Vec<u8>>,
    /// `--command-ratio` (default 1).
    pub ratio: u32,
    /// `--command-key-pattern` (default: the run's pattern).
    pub key_dist: Option<KeyDist>,
}

/// The workload options' table entries, in the help's order.
pub(super) const FLAGS: &[Flag<State>] = &[
    F::value(
        &["--keys"],
        Value::Choice(&["uniform", "sequential", "gaussian", "zipf", "parallel"]),
        "--keys <pattern>",
        "How __rand_int__ and __rand_Nth__ values are drawn from the\n\
         key range: uniform (default), sequential, gaussian, zipf,\n\
         zipf:<exponent> or parallel (each connection walks its\n\
         own slice of the range, in order)",
        |st, name, v| {
            st.args.workload.key_dist = Some(native_pattern(name, v)?);
            Ok(())
        },
    )
    .example(&["--keys", "zipf:1.1"]),
    F::value(
        &["--key-pattern"],
        Value::Choice(&["R", "S", "G", "Z", "P"]),
        "--key-pattern <p>",
        "The same in memtier_benchmark's letters: R, S, G, Z, P,\n\
         or a SET:GET pair (R:R; different halves need --ratio)",
        |st, name, v| {
            let w = &mut st.args.workload;
            let (set, get) = memtier_pattern(name, v)?;
            w.key_dist = Some(set);
            w.get_key_dist = (get != set).then_some(get);
            Ok(())
        },
    )
    .example(&["--key-pattern", "Z:Z"]),
    F::value(
        &["--key-minimum"],
        Value::Text,
        "--key-minimum <n>",
        "Lowest key value (default 0)",
        |st, name, v| {
            st.args.workload.key_minimum = Some(whole(name, v, 0, MAX_KEY)?);
            Ok(())
        },
    )
    .example(&["--key-minimum", "10"]),
    F::value(
        &["--key-maximum"],
        Value::Text,
        "--key-maximum <n>",
        "Highest key value (inclusive; replaces -r's keyspacelen-1)",
        |st, name, v| {
            st.args.workload.key_maximum = Some(whole(name, v, 0, MAX_KEY)?);
            Ok(())
        },
    )
    .example(&["--key-maximum", "10"]),
    F::value(
        &["--key-median"],
        Value::Text,
        "--key-median <n>",
        "Gaussian pattern: the centre (default: the middle)",
        |st, name, v| {
            st.args.workload.key_median = Some(number(name, v, 0.0)?);
            Ok(())
        },
    )
    .example(&["--keys", "gaussian", "--key-median", "1.5"]),
    F::value(
        &["--key-stddev"],
        Value::Text,
        "--key-stddev <n>",
        "Gaussian pattern: the spread (default: a sixth of the range)",
        |st, name, v| {
            st.args.workload.key_stddev = Some(positive(name, v)?);
            Ok(())
        },
    )
    .example(&["--keys", "gaussian", "--key-stddev", "1.5"]),
    F::value(
        &["--key-zipf-exp"],
        Value::Text,
        "--key-zipf-exp <s>",
        "Zipf pattern: the exponent, above 0 and at most 5\n\
         (default 1). memtier spellings also take --opt=value.",
        |st, name, v| {
            st.args.workload.key_zipf_exp = Some(zipf_exponent(name, v)?);
            Ok(())
        },
    )
    .example(&["--keys", "zipf", "--key-zipf-exp", "1.5"]),
    F::value(
        &["--key-prefix"],
        Value::Text,
        "--key-prefix <p>",
        "The default tests' and --command's __key__ keys start with\n\
         this instead of \"key:\" (e.g. memtier-)",
        |st, name, v| {
            st.args.workload.key_prefix = Some(key_prefix(name, v)?);
            Ok(())
        },
    )
    .example(&["--key-prefix", "memtier-"]),
    F::value(
        &["--data-size-range"],
        Value::Text,
        "--data-size-range <min-max>",
        "Value sizes uniform over min..max bytes (instead of -d)",
        |st, name, v| {
            st.args.workload.data_sizes = Some(size_range(name, v)?);
            Ok(())
        },
    )
    .example(&["--data-size-range", "10-20"]),
    F::value(
        &["--data-size-list"],
        Value::Text,
        "--data-size-list <size:weight,...>",
        "Value sizes drawn with these relative weights",
        |st, name, v| {
            st.args.workload.data_sizes = Some(size_list(name, v)?);
            Ok(())
        },
    )
    .example(&["--data-size-list", "10:1,100:3"]),
    F::value(
        &["--ratio"],
        Value::Text,
        "--ratio <set:get>",
        "Run one SET:GET mix test with these weights (e.g. 1:10)\n\
         instead of the default tests; each command is reported\n\
         on its own line, then the total",
        |st, name, v| {
            st.args.workload.ratio = Some(ratio(name, v)?);
            Ok(())
        },
    )
    .example(&["--ratio", "1:10"]),
    F::value(
        &["--command"],
        Value::Text,
        "--command <cmd>",
        "A command of a weighted mix, as memtier_benchmark's\n\
         (repeatable; __key__ is key:__rand_int__, __data__ a value)",
        |st, name, v| {
            // memtier's quoting (`cli::words`); the message never shows the value (secret).
            let args: Vec<Vec<u8>> = split_words(v.as_encoded_bytes())
                .map_err(|e| UsageError(format!("{name}: {e}")))?
                .into_iter()
                .map(|w| w.bytes)
                .collect();
            if args.is_empty() {
                return Err(invalid_value(
                    name,
                    v,
                    "a command, e.g. \"SET __key__ __data__\"",
                ));
            }
            st.args.workload.commands.push(CommandArg {
                args,
                ratio: 1,
                key_dist: None,
            });
            Ok(())
        },
    )
    .secret_as(SecretValue::Command)
    .example(&["--command", "GET __key__"]),
    F::value(
        &["--command-ratio"],
        Value::Text,
        "--command-ratio <n>",
        "The weight of the --command before it (default 1)",
        |st, name, v| {
            let ratio = whole(name, v, 0, 1_000_000)?;
            last_command(&mut st.args.workload, name)?.ratio = ratio;
            Ok(())
        },
    )
    .example(&["--command=GET k", "--command-ratio", "3"]),
    F::value(
        &["--command-key-pattern"],
        Value::Choice(&["R", "S", "G", "Z", "P"]),
        "--command-key-pattern <p>",
        "The key pattern (R, S, G, Z, P) of the --command before it",
        |st, name, v| {
            let (dist, _) = memtier_pattern(name, v)?;
            last_command(&mut st.args.workload, name)?.key_dist = Some(dist);
            Ok(())
        },
    )
    .example(&["--command=GET k", "--command-key-pattern", "G"]),
    F::value(
        &["--arrival"],
        Value::Choice(&["uniform", "poisson"]),
        "--arrival <a>",
        "With --rps: uniform (evenly spaced sends, the default) or\n\
         poisson (exponential gaps with the same mean rate)",
        |st, name, v| {
            st.args.workload.arrival = Some(match v.as_encoded_bytes() {
                b"uniform" => ArrivalArg::Uniform,
                b"poisson" => ArrivalArg::Poisson,
                _ => return Err(invalid_value(name, v, "uniform or poisson")),
            });
            Ok(())
        },
    )
    .example(&["--arrival", "poisson"]),
];

/// The `--command` an option that qualifies one applies to: the last given.
fn last_command<'a>(w: &'a mut WorkloadArgs, name: &str) -> Result<&'a mut CommandArg, UsageError> {
    w.commands
        .last_mut()
        .ok_or_else(|| UsageError(format!("{name} applies to a --command given before it")))
}

/// The checks that need several options: contradictions are refused, never resolved by
/// picking one (a benchmark that silently ran something else than asked is worse than none).
pub(super) fn check(st: &State) -> Result<(), UsageError> {
    let w = &st.args.workload;
    if let (Some(min), Some(max)) = (w.key_minimum, w.key_maximum)
        && min > max
    {
        return Err(UsageError(format!(
            "--key-minimum {min} is above --key-maximum {max}"
        )));
    }
    if w.get_key_dist.is_some() && w.ratio.is_none() {
        return Err(UsageError(
            "--key-pattern with different SET and GET patterns needs --ratio (the SET:GET mix \
             they apply to)"
                .to_owned(),
        ));
    }
    if !w.commands.is_empty() && w.ratio.is_some() {
        return Err(UsageError(
            "--ratio and --command both choose the commands; give one of them".to_owned(),
        ));
    }
    if !w.commands.is_empty() && w.commands.iter().all(|c| c.ratio == 0) {
        return Err(UsageError(
            "--command-ratio: every --command has weight 0".to_owned(),
        ));
    }
    if st.args.sequential && !matches!(w.key_dist, None | Some(KeyDist::Sequential)) {
        return Err(UsageError(
            "--sequential is the sequential key pattern; it cannot be combined with another \
             --key-pattern/--keys"
                .to_owned(),
        ));
    }
    if st.was_given("-r") && w.key_maximum.is_some() {
        return Err(UsageError(
            "-r and --key-maximum both set the top of the key range (-r N is --key-maximum \
             N-1); give one of them"
                .to_owned(),
        ));
    }
    check_pattern_parameters(w)?;
    check_sizes(st)
}

/// A pattern's parameters need that pattern somewhere (the run's, GET's under `--ratio`, or a
/// `--command`'s): otherwise they would be ignored.
fn check_pattern_parameters(w: &WorkloadArgs) -> Result<(), UsageError> {
    let patterns = || {
        [w.key_dist, w.get_key_dist]
            .into_iter()
            .chain(w.commands.iter().map(|c| c.key_dist))
            .flatten()
    };
    let gaussian = patterns().any(|d| d == KeyDist::Gaussian);
    let zipf = patterns().any(|d| matches!(d, KeyDist::Zipf(_)));
    for (given, name) in [
        (w.key_median.is_some(), "--key-median"),
        (w.key_stddev.is_some(), "--key-stddev"),
    ] {
        if given && !gaussian {
            return Err(UsageError(format!(
                "{name} applies to the Gaussian key pattern; add --keys gaussian (or \
                 --key-pattern G)"
            )));
        }
    }
    if w.key_zipf_exp.is_some() {
        if !zipf {
            return Err(UsageError(
                "--key-zipf-exp applies to the Zipf key pattern; add --keys zipf (or \
                 --key-pattern Z)"
                    .to_owned(),
            ));
        }
        if patterns().any(|d| matches!(d, KeyDist::Zipf(Some(_)))) {
            return Err(UsageError(
                "--keys zipf:EXP and --key-zipf-exp both give the Zipf exponent; give it once"
                    .to_owned(),
            ));
        }
    }
    Ok(())
}

/// One way to size values: `-d`, `--data-size-range` or `--data-size-list`.
fn check_sizes(st: &State) -> Result<(), UsageError> {
    let given: Vec<&str> = ["-d", "--data-size-range", "--data-size-list"]
        .into_iter()
        .filter(|n| st.was_given(n))
        .collect();
    if given.len() > 1 {
        return Err(UsageError(format!(
            "{} and {} both set the value size; give one of them",
            given[0], given[1]
        )));
    }
    Ok(())
}

/// `--key-prefix`: any bytes but whitespace (a key is one argument of an inline command too),
/// at most 200 of them; empty is allowed (bare numbers as keys, as memtier's `--key-prefix=`).
fn key_prefix(name: &str, v: &OsStr) -> Result<Vec<u8>, UsageError> {
    let b = v.as_encoded_bytes();
    if b.len() > 200 || b.iter().any(u8::is_ascii_whitespace) {
        return Err(invalid_value(
            name,
            v,
            "a key prefix of at most 200 bytes without spaces",
        ));
    }
    Ok(b.to_vec())
}

/// memtier's letters: one (`Z`, both halves) or a `SET:GET` pair (`Z:Z`, `R:G`).
fn memtier_pattern(name: &str, v: &OsStr) -> Result<(KeyDist, KeyDist), UsageError> {
    let expected = "R, S, G, Z or P (random, sequential, Gaussian, Zipf, parallel), or a pair \
                    like R:R";
    let s = text(name, v)?;
    let (set, get) = s.split_once(':').unwrap_or((&s, &s));
    let letter = |l: &str| match l {
        "R" | "r" => Some(KeyDist::Uniform),
        "S" | "s" => Some(KeyDist::Sequential),
        "G" | "g" => Some(KeyDist::Gaussian),
        "Z" | "z" => Some(KeyDist::Zipf(None)),
        "P" | "p" => Some(KeyDist::Parallel),
        _ => None,
    };
    match (letter(set), letter(get)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(invalid_value(name, v, expected)),
    }
}

/// `--keys uniform|sequential|gaussian|zipf[:EXP]|parallel`.
fn native_pattern(name: &str, v: &OsStr) -> Result<KeyDist, UsageError> {
    let expected = "uniform, sequential, gaussian, zipf, zipf:EXPONENT or parallel";
    let s = text(name, v)?;
    Ok(match s.as_str() {
        "uniform" => KeyDist::Uniform,
        "sequential" => KeyDist::Sequential,
        "gaussian" => KeyDist::Gaussian,
        "zipf" => KeyDist::Zipf(None),
        "parallel" => KeyDist::Parallel,
        other => match other.strip_prefix("zipf:") {
            Some(exp) => KeyDist::Zipf(Some(zipf_exponent(name, OsStr::new(exp))?)),
            None => return Err(invalid_value(name, v, expected)),
        },
    })
}

/// A finite decimal number at least `min`.
fn number(name: &str, v: &OsStr, min: f64) -> Result<f64, UsageError> {
    let n: f64 = text(name, v)?
        .parse()
        .map_err(|_| invalid_value(name, v, &format!("a number of at least {min}")))?;
    if !n.is_finite() || n < min {
        return Err(invalid_value(
            name,
            v,
            &format!("a number of at least {min}"),
        ));
    }
    Ok(n)
}

fn positive(name: &str, v: &OsStr) -> Result<f64, UsageError> {
    match number(name, v, 0.0) {
        Ok(n) if n > 0.0 => Ok(n),
        _ => Err(invalid_value(name, v, "a number greater than 0")),
    }
}

/// A Zipf exponent: above 0, at most 5 (the sampler's limits; about 1 is typical of caches).
fn zipf_exponent(name: &str, v: &OsStr) -> Result<f64, UsageError> {
    match positive(name, v) {
        Ok(n) if n <= 5.0 => Ok(n),
        _ => Err(invalid_value(
            name,
            v,
            "a number greater than 0 and at most 5 (about 1 is typical of caches)",
        )),
    }
}

/// `MIN-MAX` byte sizes, `1 <= MIN <= MAX <= 1 GiB`.
fn size_range(name: &str, v: &OsStr) -> Result<DataSizes, UsageError> {
    let bad = || {
        invalid_value(
            name,
            v,
            "MIN-MAX sizes in bytes, 1 <= MIN <= MAX, e.g. 32-1024",
        )
    };
    let s = text(name, v)?;
    let (lo, hi) = s.split_once('-').ok_or_else(bad)?;
    let lo: usize = whole(name, OsStr::new(lo), 1, MAX_SIZE).map_err(|_| bad())?;
    let hi: usize = whole(name, OsStr::new(hi), 1, MAX_SIZE).map_err(|_| bad())?;
    if lo > hi {
        return Err(bad());
    }
    Ok(DataSizes::Range(lo, hi))
}

/// `SIZE:WEIGHT,...` with sizes in `1..=1 GiB` and weights that are not all zero.
fn size_list(name: &str, v: &OsStr) -> Result<DataSizes, UsageError> {
    let bad = || {
        invalid_value(
            name,
            v,
            "SIZE:WEIGHT pairs separated by commas, e.g. 100:80,1000:20",
        )
    };
    let s = text(name, v)?;
    let mut list = Vec::new();
    for pair in s.split(',') {
        let (size, weight) = pair.split_once(':').ok_or_else(bad)?;
        let size: usize = whole(name, OsStr::new(size), 1, MAX_SIZE).map_err(|_| bad())?;
        let weight: u32 = whole(name, OsStr::new(weight), 0, 1_000_000).map_err(|_| bad())?;
        list.push((size, weight));
    }
    if list.iter().all(|&(_, w)| w == 0) {
        return Err(bad());
    }
    Ok(DataSizes::List(list))
}

/// `SET:GET` weights, not both zero.
fn ratio(name: &str, v: &OsStr) -> Result<(u32, u32), UsageError> {
    let bad = || invalid_value(name, v, "SET:GET weights like 1:10 (not both 0)");
    let s = text(name, v)?;
    let (set, get) = s.split_once(':').ok_or_else(bad)?;
    let set: u32 = whole(name, OsStr::new(set), 0, 1_000_000).map_err(|_| bad())?;
    let get: u32 = whole(name, OsStr::new(get), 0, 1_000_000).map_err(|_| bad())?;
    if set == 0 && get == 0 {
        return Err(bad());
    }
    Ok((set, get))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Invocation, parse};

    fn run(argv: &[&str]) -> WorkloadArgs {
        match parse(argv.iter().map(|s| s.into())) {
            Ok(Invocation::Run(a)) => a.workload,
            other => panic!("{argv:?}: {other:?}"),
        }
    }

    fn err(argv: &[&str]) -> String {
        match parse(argv.iter().map(|s| s.into())) {
            Err(UsageError(m)) => m,
            other => panic!("{argv:?}: {other:?}"),
        }
    }

    #[test]
    fn memtier_spellings_with_and_without_equals() {
        let w = run(&[
            "--ratio=0:1",
            "--key-pattern=P:P",
            "--key-maximum=999",
            "--key-minimum",
            "1",
        ]);
        assert_eq!(w.ratio, Some((0, 1)));
        assert_eq!(w.key_dist, Some(KeyDist::Parallel));
        assert_eq!((w.key_minimum, w.key_maximum), (Some(1), Some(999)));
        let w = run(&["--key-pattern=Z:Z", "--key-zipf-exp", "0.9"]);
        assert_eq!(w.key_zipf_exp, Some(0.9));
        let w = run(&["--key-pattern=G", "--key-median=5", "--key-stddev=2"]);
        assert_eq!((w.key_median, w.key_stddev), (Some(5.0), Some(2.0)));
        assert_eq!(
            run(&["--key-pattern", "G"]).key_dist,
            Some(KeyDist::Gaussian)
        );
        assert_eq!(
            run(&["--keys", "zipf:1.1"]).key_dist,
            Some(KeyDist::Zipf(Some(1.1)))
        );
        assert_eq!(
            run(&["--keys", "sequential"]).key_dist,
            Some(KeyDist::Sequential)
        );
        assert_eq!(
            run(&["--data-size-list", "100:80,1000:20"]).data_sizes,
            Some(DataSizes::List(vec![(100, 80), (1000, 20)]))
        );
        assert_eq!(
            run(&["--data-size-range=32-1024"]).data_sizes,
            Some(DataSizes::Range(32, 1024))
        );
        assert_eq!(
            run(&["--arrival", "poisson"]).arrival,
            Some(ArrivalArg::Poisson)
        );
    }

    #[test]
    fn bad_values_are_one_line() {
        for (argv, start) in [
            (&["--ratio", "1"][..], "invalid value \"1\" for --ratio"),
            (&["--ratio", "0:0"], "invalid value \"0:0\" for --ratio"),
            (
                &["--key-zipf-exp", "0"],
                "invalid value \"0\" for --key-zipf-exp",
            ),
            (&["--keys", "zipf:9"], "invalid value \"9\" for --keys"),
            (
                &["--data-size-range", "9-3"],
                "invalid value \"9-3\" for --data-size-range",
            ),
            (
                &["--data-size-list", "10:0"],
                "invalid value \"10:0\" for --data-size-list",
            ),
            (
                &["--key-pattern", "Q"],
                "invalid value \"Q\" for --key-pattern",
            ),
            (&["--keys", "pareto"], "invalid value \"pareto\" for --keys"),
            (
                &["--arrival", "bursty"],
                "invalid value \"bursty\" for --arrival",
            ),
            (&["--key-maximum", "1000000000000"], "invalid value"),
            (
                &["--key-minimum", "5", "--key-maximum", "4"],
                "--key-minimum 5 is above",
            ),
            (
                &["--sequential", "--keys", "zipf"],
                "--sequential is the sequential",
            ),
        ] {
            let e = err(argv);
            assert!(e.starts_with(start), "{argv:?}: {e}");
            assert!(!e.contains('\n'));
        }
        let e = err(&["--key-pattern", "R:S"]);
        assert!(e.contains("needs --ratio"), "{e}");
        let e = err(&["--command-ratio", "2"]);
        assert!(
            e.starts_with("--command-ratio applies to a --command"),
            "{e}"
        );
        let e = err(&["--command=GET a", "--ratio", "1:1"]);
        assert!(e.contains("give one of them"), "{e}");
    }

    #[test]
    fn contradictions_are_refused_not_resolved() {
        for (argv, start) in [
            (
                &["-r", "9", "--key-zipf-exp", "1.2"][..],
                "--key-zipf-exp applies to the Zipf key pattern",
            ),
            (
                &["--keys", "gaussian", "--key-zipf-exp", "1.2"],
                "--key-zipf-exp applies to the Zipf",
            ),
            (
                &["--keys", "zipf:1.1", "--key-zipf-exp", "1.2"],
                "--keys zipf:EXP and --key-zipf-exp both",
            ),
            (
                &["--keys", "zipf", "--key-stddev", "3"],
                "--key-stddev applies to the Gaussian key pattern",
            ),
            (
                &["--key-median", "3"],
                "--key-median applies to the Gaussian",
            ),
            (
                &["--data-size-range", "1-9", "--data-size-list", "5:1"],
                "--data-size-range and --data-size-list both set the value size",
            ),
            (
                &["--data-size-list", "5:1", "-d", "3"],
                "-d and --data-size-list both set the value size",
            ),
            (
                &["-d", "10", "--data-size-range=1-9"],
                "-d and --data-size-range both",
            ),
            (
                &["--key-maximum", "99", "-r", "100"],
                "-r and --key-maximum both set the top",
            ),
        ] {
            let e = err(argv);
            assert!(e.starts_with(start), "{argv:?}: {e}");
        }
        // The parameters are accepted wherever their pattern is used: GET's half of --ratio,
        // or one --command's own pattern.
        let w = run(&[
            "--ratio",
            "1:1",
            "--key-pattern",
            "R:G",
            "--key-stddev",
            "2",
        ]);
        assert_eq!(w.key_stddev, Some(2.0));
        let w = run(&[
            "--command=GET __key__",
            "--command-key-pattern",
            "Z",
            "--key-zipf-exp=0.8",
        ]);
        assert_eq!(w.key_zipf_exp, Some(0.8));
    }
}
