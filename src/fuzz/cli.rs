//! The `--fuzz` options: valkey-benchmark's three (`--fuzz`, `--fuzz-mode`, `--fuzz-loglevel`)
//! and respbench's own (the log directory, the hang timeout, the restart command that lets the
//! reducer work, the exclusion list's changes).
//!
//! The fuzzer's part of the main option table (installed by the registry, `cli::ModeArgs`),
//! each entry beside its value's parser; the registry hands the values to the fuzzer's run.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::flag::{Flag, SecretValue, Value};
use crate::cli::value::{invalid_value, seconds, text, whole};
use crate::cli::{ModeArgs, Place, State, UsageError};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// How much the fuzzer prints, the reference's four levels (`--fuzz-loglevel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum FuzzLogLevel {
    None,
    Error,
    #[default]
    Info,
    Debug,
}

/// The fuzz options as given.
#[derive(Clone, Debug, PartialEq)]
pub struct FuzzArgs {
    /// `--fuzz`: the run is a fuzz run, not a benchmark.
    pub enabled: bool,
    /// `--fuzz-mode malformed-commands`: broken commands and framing too.
    pub malformed: bool,
    /// `--fuzz-mode config-commands`: `CONFIG SET` of the server's own parameters too.
    pub config: bool,
    /// `--fuzz-loglevel`.
    pub loglevel: FuzzLogLevel,
    /// `--fuzz-log DIR`: the ordered trace of every byte sent and each client's RESP stream.
    pub log_dir: Option<PathBuf>,
    /// `--fuzz-hang-timeout`: how long the server may leave a PING unanswered (default 5 s).
    pub hang_timeout: Duration,
    /// `--fuzz-restart CMD`: a shell command that starts the server again; it enables the
    /// reducer.
    pub restart: Option<String>,
    /// `--fuzz-exclude`: command names (lower case) added to the never-send list.
    pub exclude: Vec<String>,
    /// `--fuzz-include`: command names (lower case) taken off the never-send list.
    pub include: Vec<String>,
    /// `--fuzz-reduce-attempts`: the reducer's bound in server restarts.
    pub reduce_attempts: u32,
    /// `--fuzz-reduce-time`: the reducer's bound in time.
    pub reduce_time: Duration,
}

impl Default for FuzzArgs {
    fn default() -> Self {
        FuzzArgs {
            enabled: false,
            malformed: false,
            config: false,
            loglevel: FuzzLogLevel::Info,
            log_dir: None,
            hang_timeout: Duration::from_secs(5),
            restart: None,
            exclude: Vec::new(),
            include: Vec::new(),
            reduce_attempts: 200,
            reduce_time: Duration::from_secs(300),
        }
    }
}

impl ModeArgs for FuzzArgs {
    const FLAGS: &'static [Flag<State>] = FLAGS;
    const PLACE: Place = Place::Reference;

    fn check(st: &mut State) -> Result<(), UsageError> {
        check(st)
    }

    fn asks(&self, name: &str) -> bool {
        name == "--fuzz" && self.enabled
    }
}

/// `--fuzz-mode`'s list, in the reference's words when a mode is unknown.
fn modes(st: &mut State, name: &str, v: &OsStr) -> Result<(), UsageError> {
    let list = text(name, v)?;
    for mode in list.split(',') {
        match mode {
            "malformed-commands" => st.args.mode_mut::<FuzzArgs>().malformed = true,
            "config-commands" => st.args.mode_mut::<FuzzArgs>().config = true,
            other => return Err(UsageError(format!("Invalid fuzz mode: {other}"))),
        }
    }
    Ok(())
}

/// A comma-separated list of command names, lower case (`config|set` names a subcommand).
fn names(name: &str, v: &OsStr) -> Result<Vec<String>, UsageError> {
    let list = text(name, v)?;
    let out: Vec<String> = list
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    if out.is_empty() {
        return Err(invalid_value(name, v, "a list of command names"));
    }
    Ok(out)
}

/// The fuzz entries, in help order.
const FLAGS: &[Flag<State>] = &[
    F::switch(
        &["--fuzz"],
        "--fuzz",
        "Fuzz the server instead of benchmarking it: -c clients\n\
         send -n random commands built from the server's COMMAND\n\
         DOCS over -r keys; crashes and hangs are detected",
        |st, _, _| {
            st.args.mode_mut::<FuzzArgs>().enabled = true;
            Ok(())
        },
    )
    .example(&["--fuzz"]),
    F::value(
        &["--fuzz-mode"],
        Value::Text,
        "--fuzz-mode <modes>",
        "Comma-separated: malformed-commands (broken arity, types,\n\
         framing), config-commands (CONFIG SET of server parameters)",
        modes,
    )
    .example(&[
        "--fuzz",
        "--fuzz-mode",
        "malformed-commands,config-commands",
    ]),
    F::value(
        &["--fuzz-loglevel"],
        Value::Choice(&["none", "error", "info", "debug"]),
        "--fuzz-loglevel <l>",
        "none, error, info (default) or debug (every reply)",
        |st, name, v| {
            st.args.mode_mut::<FuzzArgs>().loglevel = match text(name, v)?.as_str() {
                "none" => FuzzLogLevel::None,
                "error" => FuzzLogLevel::Error,
                "info" => FuzzLogLevel::Info,
                "debug" => FuzzLogLevel::Debug,
                _ => return Err(invalid_value(name, v, "none, error, info or debug")),
            };
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-loglevel", "debug"]),
    F::value(
        &["--fuzz-log"],
        Value::Dir("a directory for the fuzz log"),
        "--fuzz-log <dir>",
        "Write the ordered trace of every byte sent (fuzz.trace)\n\
         and each client's stream as RESP (client-N.resp) there",
        |st, _, v| {
            st.args.mode_mut::<FuzzArgs>().log_dir = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-log", "fuzzlog"]),
    F::value(
        &["--fuzz-hang-timeout"],
        Value::Text,
        "--fuzz-hang-timeout <s>",
        "A server that leaves PING unanswered this long hangs\n\
         (seconds, default 5)",
        |st, name, v| {
            let t = seconds(name, v)?;
            if t.is_zero() {
                return Err(invalid_value(name, v, "seconds above 0"));
            }
            st.args.mode_mut::<FuzzArgs>().hang_timeout = t;
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-hang-timeout", "2"]),
    F::value(
        &["--fuzz-restart"],
        Value::Text,
        "--fuzz-restart <cmd>",
        "Shell command that starts the server again after a crash;\n\
         with it the log is reduced to a minimal reproducer",
        |st, name, v| {
            st.args.mode_mut::<FuzzArgs>().restart = Some(text(name, v)?);
            Ok(())
        },
    )
    .secret_as(SecretValue::Shell)
    .example(&[
        "--fuzz",
        "--fuzz-restart",
        "valkey-server --port 6379 --daemonize yes",
    ]),
    F::value(
        &["--fuzz-exclude"],
        Value::Text,
        "--fuzz-exclude <cmds>",
        "Comma-separated commands never to send, besides the\n\
         default list (shutdown, debug, flushall...: docs/fuzz.md)",
        |st, name, v| {
            st.args
                .mode_mut::<FuzzArgs>()
                .exclude
                .extend(names(name, v)?);
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-exclude", "keys,scan"]),
    F::value(
        &["--fuzz-include"],
        Value::Text,
        "--fuzz-include <cmds>",
        "Comma-separated commands to send although the default list\n\
         excludes them (e.g. flushall)",
        |st, name, v| {
            st.args
                .mode_mut::<FuzzArgs>()
                .include
                .extend(names(name, v)?);
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-include", "flushall"]),
    F::value(
        &["--fuzz-reduce-attempts"],
        Value::Text,
        "--fuzz-reduce-attempts <n>",
        "The reducer's bound in replays (default 200)",
        |st, name, v| {
            st.args.mode_mut::<FuzzArgs>().reduce_attempts = whole(name, v, 1, 100_000)?;
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-reduce-attempts", "50"]),
    F::value(
        &["--fuzz-reduce-time"],
        Value::Text,
        "--fuzz-reduce-time <s>",
        "The reducer's bound in seconds (default 300)",
        |st, name, v| {
            let t = seconds(name, v)?;
            if t.is_zero() {
                return Err(invalid_value(name, v, "seconds above 0"));
            }
            st.args.mode_mut::<FuzzArgs>().reduce_time = t;
            Ok(())
        },
    )
    .example(&["--fuzz", "--fuzz-reduce-time", "60"]),
];

/// The checks that need the whole line: respbench's own fuzz options need `--fuzz`.
fn check(st: &State) -> Result<(), UsageError> {
    if st.args.mode::<FuzzArgs>().enabled {
        // The reference's fuzzer sends -n commands; a time bound would be respbench's own.
        if st.was_given("--duration") {
            return Err(UsageError(
                "--fuzz sends -n commands in all; --duration does not apply".to_owned(),
            ));
        }
        return Ok(());
    }
    for name in [
        "--fuzz-log",
        "--fuzz-hang-timeout",
        "--fuzz-restart",
        "--fuzz-exclude",
        "--fuzz-include",
        "--fuzz-reduce-attempts",
        "--fuzz-reduce-time",
    ] {
        if st.was_given(name) {
            return Err(UsageError(format!("{name} needs --fuzz")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_options_parse() {
        let argv = [
            "--fuzz",
            "--fuzz-mode",
            "malformed-commands,config-commands",
            "--fuzz-loglevel",
            "debug",
            "--fuzz-exclude",
            "KEYS,scan",
            "--fuzz-include",
            "flushall",
            "--fuzz-hang-timeout",
            "2",
        ];
        let args = match crate::cli::parse(argv.iter().map(Into::into)) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        let a = args.mode::<FuzzArgs>();
        assert!(a.enabled && a.malformed && a.config);
        assert_eq!(a.loglevel, FuzzLogLevel::Debug);
        assert_eq!(a.exclude, vec!["keys", "scan"]);
        assert_eq!(a.include, vec!["flushall"]);
        assert_eq!(a.hang_timeout, std::time::Duration::from_secs(2));
    }
}
