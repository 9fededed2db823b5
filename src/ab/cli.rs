//! `respbench ab`'s command line: its own options (the table below), the two targets of the short
//! form, and every other argument kept as the shared benchmark options both sides run with.
//!
//! Why not lexopt over the whole line: the shared options are the main table's (`-h` is a host
//! there, `-n 5`, a custom command at the end), so only this table's spellings are taken here and
//! the rest is passed on word for word, values found by `cli::takes_value`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::UsageError;
use crate::cli::flag::{self, Action, Flag, Value, help_block, utf8};

/// The default number of pairs: 10 pairs of 2 s blocks per test, a minute and a half for two
/// tests, and a t interval with 9 degrees of freedom (t = 2.26: little wider than the normal's).
pub const DEFAULT_ROUNDS: u32 = 10;

/// The default block length when neither `-n` nor `--duration` is given: long enough to average
/// the scheduler's short stalls, short against the machine's slow changes in load.
pub const DEFAULT_BLOCK_S: &str = "2";

/// `ab`'s options as given.
#[derive(Debug, Default)]
pub struct AbArgs {
    /// `--a`, `--b`: each side's own options, as typed (split by `cli::split_words`).
    pub a: Option<String>,
    pub b: Option<String>,
    /// The short form's two URIs (`-u` for each side).
    pub targets: Vec<String>,
    /// Every argument not of this table, in order: both sides run with these.
    pub shared: Vec<OsString>,
    pub rounds: Option<u32>,
    pub seed: Option<u64>,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub fail_if_worse: Option<f64>,
}

type F = Flag<AbArgs>;

fn text(a: &mut Option<String>, name: &str, v: &std::ffi::OsStr) -> Result<(), UsageError> {
    *a = Some(utf8(v, name)?);
    Ok(())
}

fn number<T: std::str::FromStr>(name: &str, v: &std::ffi::OsStr) -> Result<T, UsageError> {
    let s = utf8(v, name)?;
    s.parse()
        .map_err(|_| UsageError(format!("{name} {s}: expected a whole number")))
}

/// `ab`'s own options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["--a"],
        Value::Text,
        "--a 'OPTIONS'",
        "side A's own options: a target (-h/-p/-s/-u) or a\n\
         configuration (-c 1, a command, --tls...), one quoted word",
        |a, name, v| text(&mut a.a, name, v),
    )
    .secret_as(flag::SecretValue::Command),
    F::value(
        &["--b"],
        Value::Text,
        "--b 'OPTIONS'",
        "side B's own options, as --a",
        |a, name, v| text(&mut a.b, name, v),
    )
    .secret_as(flag::SecretValue::Command),
    F::value(
        &["--rounds"],
        Value::Text,
        "--rounds N",
        "pairs of blocks (default 10; at least 2)",
        |a, name, v| {
            let n: u32 = number(name, v)?;
            if n < 2 {
                return Err(UsageError(format!("{name} {n}: at least 2 pairs")));
            }
            a.rounds = Some(n);
            Ok(())
        },
    ),
    F::value(
        &["--seed"],
        Value::Text,
        "--seed N",
        "seed of the block order, and of both sides' keys\n\
         (default: from the clock)",
        |a, name, v| {
            a.seed = Some(number(name, v)?);
            Ok(())
        },
    ),
    F::value(
        &["--json"],
        Value::File("a file to write"),
        "--json FILE",
        "write the record: every block's, and the answer",
        |a, _, v| {
            a.json = Some(PathBuf::from(v));
            Ok(())
        },
    ),
    F::value(
        &["--html"],
        Value::File("a file to write"),
        "--html FILE",
        "write the HTML report (the paired changes, the blocks)",
        |a, _, v| {
            a.html = Some(PathBuf::from(v));
            Ok(())
        },
    ),
    F::value(
        &["--markdown"],
        Value::File("a file to write"),
        "--markdown FILE",
        "write the answer as a Markdown table (a PR comment)",
        |a, _, v| {
            a.markdown = Some(PathBuf::from(v));
            Ok(())
        },
    ),
    F::value(
        &["--fail-if-worse"],
        Value::Text,
        "--fail-if-worse PCT",
        "exit 1 when B is worse than A by more than PCT percent\n\
         in a metric (its interval excluding zero); exit 3 when\n\
         a metric cannot be told",
        |a, name, v| {
            let s = utf8(v, name)?;
            let pct = s
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    UsageError(format!("{name} {s}: expected a percentage (0 or more)"))
                })?;
            a.fail_if_worse = Some(pct);
            Ok(())
        },
    ),
    F::new(
        &["--help"],
        Value::None,
        "--help",
        "this help (-h is the host, as in the main command line)",
        Action::Help,
    ),
];

/// `respbench ab --help`.
pub fn help_text() -> String {
    format!(
        "{HELP_HEAD}{}{HELP_TAIL}",
        help_block(OPTIONS.iter().map(|f| &f.doc), 2, 23)
    )
}

const HELP_HEAD: &str = "\
Usage: respbench ab [SHARED OPTIONS] --a 'OPTIONS' --b 'OPTIONS'
       respbench ab [SHARED OPTIONS] URI_A URI_B

An A/B comparison that answers on a busy machine: A and B run in short blocks,
alternately, in a random balanced order (AB or BA per round), after one
warm-up block each. Neighbouring blocks share the machine's state, so the
ratio of each pair cancels most of its slow noise. Per test and metric (rps,
p50, p99, the server's CPU per request) the answer is B's change against A
from the pairs' log ratios, with a 95% Student t interval:
  better / worse  the interval excludes zero and is not all within +-2%
  within_noise    it spans zero, both ends within +20% and -16.7%
                  (or it lies within +-2%)
  cant_tell       neither: more --rounds or a quieter machine
and what could still explain it (a side client-bound in most of its blocks,
a server restarted between blocks, unequal errors).

SHARED OPTIONS are the main command line's (-t, -n or --duration per block,
-c, -P, -r, -d, a custom command...); without -n or --duration a block lasts
2 s. Each side's options come after them, so --a '-c 1' overrides a shared -c.
The short form's URIs are each side's -u.

Options:
";

const HELP_TAIL: &str = "
Example: respbench ab redis://127.0.0.1:6379 valkey://127.0.0.1:6380 -t get,set

Exit codes: 0 answered, 1 a run failed (the blocks measured are kept) or
--fail-if-worse tripped, 2 usage, 3 --fail-if-worse cannot tell, 130 Ctrl-C.
";

/// What the command line asks for.
pub enum Parsed {
    Help,
    Ab(Box<AbArgs>),
}

/// A URI the short form takes as a side's target.
fn is_uri(s: &str) -> bool {
    [
        "redis://",
        "rediss://",
        "valkey://",
        "valkeys://",
        "unix://",
    ]
    .iter()
    .any(|p| s.starts_with(p))
}

/// The arguments after `ab`.
pub fn parse(argv: Vec<OsString>) -> Result<Parsed, String> {
    let mut a = AbArgs::default();
    let mut args = argv.into_iter();
    while let Some(arg) = args.next() {
        let Some(s) = arg.to_str().map(str::to_owned) else {
            a.shared.push(arg);
            continue;
        };
        let (name, attached) = match s.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(OsString::from(v))),
            _ => (s.clone(), None),
        };
        if let Some((spelling, f)) = flag::find(&[OPTIONS], &name) {
            match f.action {
                Action::Help => return Ok(Parsed::Help),
                Action::Set(set) => {
                    let v = match attached {
                        Some(v) => v,
                        None if f.doc.value.taken() => args
                            .next()
                            .ok_or_else(|| format!("{spelling} needs a value"))?,
                        None => OsString::new(),
                    };
                    set(&mut a, spelling, &v).map_err(|e| e.0)?;
                }
                _ => {}
            }
            continue;
        }
        if s == "--" || (!s.starts_with('-') && !is_uri(&s)) {
            // A custom command: the rest of the line is its arguments.
            a.shared.push(arg);
            a.shared.extend(args.by_ref());
            break;
        }
        if is_uri(&s) {
            a.targets.push(s);
            continue;
        }
        a.shared.push(arg);
        if crate::cli::takes_value(&name) == Some(true)
            && attached.is_none()
            && let Some(v) = args.next()
        {
            a.shared.push(v);
        }
    }
    match (a.targets.len(), a.a.is_some() || a.b.is_some()) {
        (0, true) if a.a.is_some() && a.b.is_some() => {}
        (0, _) => return Err("give both --a 'OPTIONS' and --b 'OPTIONS', or two URIs".into()),
        (2, false) => {}
        (2, true) => return Err("two URIs and --a/--b: give one or the other".into()),
        (n, _) => return Err(format!("{n} URI(s): the short form takes two (A, then B)")),
    }
    Ok(Parsed::Ab(Box::new(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> AbArgs {
        match parse(line.iter().map(OsString::from).collect()) {
            Ok(Parsed::Ab(a)) => *a,
            Ok(Parsed::Help) => panic!("help"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn short_form_takes_two_uris_and_keeps_shared_options() {
        let a = args(&[
            "redis://a:6379",
            "-t",
            "get,set",
            "valkey://b:6380",
            "-n",
            "5",
        ]);
        assert_eq!(a.targets, ["redis://a:6379", "valkey://b:6380"]);
        assert_eq!(a.shared, ["-t", "get,set", "-n", "5"]);
    }

    #[test]
    fn own_options_are_taken_and_a_command_ends_the_options() {
        let a = args(&[
            "--rounds",
            "4",
            "-h",
            "127.0.0.1",
            "--a",
            "-c 1",
            "--b=-c 50",
            "--seed",
            "7",
            "SET",
            "k",
            "--a",
        ]);
        assert_eq!((a.rounds, a.seed), (Some(4), Some(7)));
        assert_eq!(
            (a.a.as_deref(), a.b.as_deref()),
            (Some("-c 1"), Some("-c 50"))
        );
        assert_eq!(a.shared, ["-h", "127.0.0.1", "SET", "k", "--a"]);
    }

    #[test]
    fn mistakes_are_refused_in_one_line() {
        let err = |line: &[&str]| parse(line.iter().map(OsString::from).collect()).err();
        assert!(err(&["--a", "-c 1"]).unwrap().contains("--b"));
        assert!(err(&["redis://a"]).unwrap().contains("two"));
        assert!(
            err(&["--rounds", "1", "redis://a", "redis://b"])
                .unwrap()
                .contains("at least 2")
        );
        assert!(err(&["--fail-if-worse", "x", "--a", "", "--b", ""]).is_some());
        assert!(matches!(parse(vec!["--help".into()]), Ok(Parsed::Help)));
    }
}
