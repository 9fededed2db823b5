//! argv → [`Invocation`]: the option table (`flags/`) lexed with `lexopt`, every value
//! validated.
//!
//! Owns: where options end and the custom command begins, looking each spelling up in the table,
//! the checks every path value gets, and the cross-option checks. Must not: print, read stdin or touch the
//! network; resolve `-t` names or the command (that is `plan`/`workload`'s job).
//!
//! Rules (valkey-benchmark's, with numbers validated instead of `atoi`'d):
//! - each option's value is the next argv element, even if it starts with `-`; `-n100` and
//!   `--rps=10` are accepted too;
//! - later occurrences override earlier ones;
//! - options end at `--` or at the first argument that does not start with `-`; that argument and
//!   everything after it is the custom command, byte for byte;
//! - `--help` and `-v`/`--version` take effect where they appear, so an error before them wins
//!   and anything after them is not looked at.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use super::flag::{Action, Value};
use super::flags;
use super::state::State;
use super::value::invalid_value;
use super::{Args, Endpoint, Invocation, UsageError};

/// Parses the arguments (without the program name) into what the user asked for.
///
/// Returns [`Invocation::Help`] or [`Invocation::Version`] as soon as `--help` or
/// `-v`/`--version` is met among the options; otherwise the validated [`Args`]. Every mistake is
/// a one-line [`UsageError`] naming the option and, for a bad value, the value and what was
/// expected.
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Invocation, UsageError> {
    parse_with_env(args, None)
}

/// The environment variable a password may come from when neither `-a` nor `-u` gives one: the
/// convention redis-cli and valkey-cli users know, which keeps the password out of `ps`.
pub const PASSWORD_ENV: &str = "REDISCLI_AUTH";

/// [`parse`], with the value of [`PASSWORD_ENV`] (read by the caller, so that parsing stays a
/// pure function): used when the command line gives no password; an empty value is none.
pub fn parse_with_env<I: IntoIterator<Item = OsString>>(
    args: I,
    env_password: Option<OsString>,
) -> Result<Invocation, UsageError> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut st = State {
        env_password: env_password.filter(|p| !p.is_empty()),
        ..State::default()
    };

    loop {
        // Look at the next whole argument before lexopt does: valkey-benchmark stops at the first
        // non-option (lexopt would skip positionals and keep lexing options after them) and at
        // `--`; a lone `-` is an unknown option there, not a positional.
        if let Some(mut raw) = parser.try_raw_args() {
            match raw.peek().map(OsStr::as_bytes) {
                None => break,
                Some(b"--") => {
                    raw.next();
                    st.args.command = raw.map(OsStringExt::into_vec).collect();
                    break;
                }
                Some(b"-") => return Err(invalid_option("-")),
                Some(arg) if !arg.starts_with(b"-") => {
                    st.args.command = raw.map(OsStringExt::into_vec).collect();
                    break;
                }
                Some(_) => {}
            }
        }

        let name = match parser.next().map_err(lex_error)? {
            None => break,
            Some(lexopt::Arg::Short(c)) => format!("-{c}"),
            Some(lexopt::Arg::Long(long)) => format!("--{long}"),
            // Unreachable given the peek above; treated like any first non-option.
            Some(lexopt::Arg::Value(first)) => {
                st.args.command.push(first.into_vec());
                let rest = parser.raw_args().map_err(lex_error)?;
                st.args.command.extend(rest.map(OsStringExt::into_vec));
                break;
            }
        };
        let Some((name, flag)) = flags::find(&name) else {
            return Err(invalid_option(&name));
        };
        let value = if flag.doc.value.taken() {
            parser.value().map_err(|_| missing_value(name))?
        } else {
            OsString::new()
        };
        match flag.action {
            Action::Set(set) => {
                check_path(name, flag.doc.value, &value)?;
                set(&mut st, name, &value)?;
                st.given.push(flag.doc.names[0]);
            }
            Action::Help => return Ok(Invocation::Help),
            Action::Version => return Ok(Invocation::Version),
            Action::NotYet => {
                st.unsupported
                    .get_or_insert_with(|| UsageError(format!("{name} is not supported yet")));
            }
            Action::NotInThisBuild => {
                st.unsupported.get_or_insert_with(|| {
                    UsageError(format!("{name} is not supported by this build"))
                });
            }
        }
    }

    finish(st).map(|args| Invocation::Run(Box::new(args)))
}

/// The checks that need the whole line: unsupported options first, then conflicts (each
/// mode's own in the registry's order, `ModeArgs::check`).
pub(crate) fn finish(mut st: State) -> Result<Args, UsageError> {
    if let Some(err) = st.unsupported {
        return Err(err);
    }
    super::workloads::check(&st)?;
    for kind in super::mode_args::kinds() {
        (kind.check)(&mut st)?;
    }
    // `-n` at its default does not conflict with `--duration`; given, it does. A user from
    // `-u` never needs checking (it always comes with a password).
    let requests_given = st.was_given("-n");
    let user_given = st.was_given("--user");
    let mut args = st.args;
    if requests_given && args.duration.is_some() {
        return Err(UsageError(
            "options -n and --duration are mutually exclusive".to_owned(),
        ));
    }
    if requests_given && args.find_max.is_some() {
        return Err(UsageError(
            "--find-max measures each step for --step-duration seconds; -n does not apply"
                .to_owned(),
        ));
    }
    if args.step_duration.is_some() && args.find_max.is_none() {
        return Err(UsageError(
            "--step-duration needs --find-max (it is the length of each search step)".to_owned(),
        ));
    }
    if args.password.is_none() {
        args.password = st.env_password.map(OsStringExt::into_vec);
    }
    if user_given && args.password.is_none() {
        return Err(UsageError(format!(
            "--user needs a password (-a, or the {PASSWORD_ENV} environment variable)"
        )));
    }
    match (&args.tls.cert, &args.tls.key) {
        (Some(_), None) => {
            return Err(UsageError(
                "--cert needs --key (the private key of the client certificate)".to_owned(),
            ));
        }
        (None, Some(_)) => {
            return Err(UsageError(
                "--key needs --cert (the client certificate it belongs to)".to_owned(),
            ));
        }
        _ => {}
    }
    check_run_outputs(&args)?;
    super::sentinel::check(&args, st.socket.is_some())?;
    if st.socket.is_some() {
        // valkey-benchmark would try TLS over the unix socket and fail the handshake (servers
        // serve TLS on TCP ports), and refuses --mptcp with exit 1.
        if args.tls.enabled {
            return Err(UsageError(
                "--tls works over TCP only (-h/-p or -u), not with a unix socket (-s)".to_owned(),
            ));
        }
        if args.mptcp {
            return Err(UsageError(
                "--mptcp works over TCP only, not with a unix socket (-s)".to_owned(),
            ));
        }
    }
    args.endpoint = match st.socket {
        Some(path) => Endpoint::Unix(path),
        None => Endpoint::Tcp {
            host: st.host,
            port: st.port,
        },
    };
    Ok(args)
}

/// `--json` and `--html` by the rule every output follows (`paths.rs`): not one of the files
/// the run reads, not each other. The HTML page goes to a file only: stdout carries the report
/// (`respbench report RUN.json -o -` writes a page there).
fn check_run_outputs(args: &Args) -> Result<(), UsageError> {
    if args.html.as_deref().is_some_and(super::is_stdout) {
        return Err(UsageError(
            "--html needs a file (stdout is the report's; for the page on stdout: --json RUN.json, \
             then respbench report RUN.json -o -)"
                .to_owned(),
        ));
    }
    if args.journal.as_deref().is_some_and(super::is_stdout) {
        return Err(UsageError(
            "--journal needs a file (it is synced and read back after a kill)".to_owned(),
        ));
    }
    let outputs: Vec<(&str, &Path)> = [
        ("--json", &args.json),
        ("--html", &args.html),
        ("--journal", &args.journal),
    ]
    .into_iter()
    .filter_map(|(o, p)| Some((o, p.as_deref()?)))
    .collect();
    let inputs: Vec<(&str, &Path)> = [
        ("the --dataset file", &args.dataset),
        ("the --cacert file", &args.tls.cacert),
        ("the --cert file", &args.tls.cert),
        ("the --key file", &args.tls.key),
    ]
    .into_iter()
    .filter_map(|(o, p)| Some((o, p.as_deref()?)))
    .collect();
    super::check_outputs(&outputs, &inputs)
}

/// A file or directory value: not empty, and not an option's spelling (`--json -q`: the path
/// was forgotten, and taking `-q` as a file name would both write a stray file and lose the
/// option). `./-q` names such a file.
fn check_path(name: &str, kind: Value, v: &OsStr) -> Result<(), UsageError> {
    let (Value::File(expected) | Value::Dir(expected)) = kind else {
        return Ok(());
    };
    if v.is_empty() {
        return Err(invalid_value(name, v, expected));
    }
    if let Some(s) = v.to_str()
        && s.len() > 1
        && flags::takes_value(s.split('=').next().unwrap_or(s)).is_some()
    {
        return Err(UsageError(format!(
            "{name} needs {expected}, not the option {s} (for a file of that name, write ./{s})"
        )));
    }
    Ok(())
}

fn invalid_option(arg: &str) -> UsageError {
    UsageError(format!("invalid option {arg:?} (see --help)"))
}

fn missing_value(name: &str) -> UsageError {
    if name == "-h" {
        // `-h` is the host, as in valkey-benchmark, but many users expect help from it.
        return UsageError("option -h needs a value (-h is the host; help is --help)".to_owned());
    }
    UsageError(format!("option {name} needs a value"))
}

/// lexopt's own errors: the only ones `next()` and `raw_args()` can give here are a value
/// attached to a flag (`--csv=1`, `-q=1`) and, defensively, anything else verbatim.
fn lex_error(err: lexopt::Error) -> UsageError {
    match err {
        lexopt::Error::UnexpectedValue { option, .. } => {
            UsageError(format!("option {option} takes no value"))
        }
        lexopt::Error::MissingValue {
            option: Some(option),
        } => missing_value(&option),
        lexopt::Error::UnexpectedOption(option) => invalid_option(&option),
        other => UsageError(other.to_string()),
    }
}
