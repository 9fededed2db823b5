//! The Sentinel options (`--sentinel`, `--primary-name`/`--master-name`, `--sentinel-user`,
//! `--sentinel-password`) and the lost-writes check (`--check-counters`): their values and the
//! checks that need the whole line. Kept apart from the main table (`flags/`) so that a Sentinel option's entry sits beside its
//! value's parser.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::flag::{Flag, Value};
use super::state::State;
use super::value::{invalid_value, text};
use super::{Args, UsageError};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// The options' table entries, in the help's order.
pub(super) const FLAGS: &[Flag<State>] = &[
    F::value(
        &["--sentinel"],
        Value::Text,
        "--sentinel <host:port[,host:port...]>",
        "Ask these Sentinels (in turn) where the primary is, run\n\
         against it, and follow it when a failover moves it (the\n\
         switch is in the report and the JSON). Replaces -h/-p.",
        |st, name, v| {
            st.args.sentinel.nodes = nodes(name, v)?;
            Ok(())
        },
    )
    .example(&["--sentinel", "h:26379", "--primary-name", "mymaster"]),
    F::value(
        &["--primary-name", "--master-name"],
        Value::Text,
        "--primary-name <name>",
        "The name the Sentinels monitor the primary by (needed with\n\
         --sentinel; --master-name is the same).",
        |st, name, v| {
            let n = text(name, v)?;
            if n.is_empty() {
                return Err(invalid_value(name, v, "the primary's name"));
            }
            st.args.sentinel.primary_name = Some(n);
            Ok(())
        },
    )
    .example(&["--primary-name", "mymaster", "--sentinel", "h:26379"]),
    F::value(
        &["--sentinel-user"],
        Value::Text,
        "--sentinel-user <user>, --sentinel-password <password>",
        "AUTH to the Sentinels (-a/--user stay for the primary).",
        |st, _, v| {
            st.args.sentinel.user = Some(v.as_bytes().to_vec());
            Ok(())
        },
    )
    .example(&[
        "--sentinel-user",
        "u",
        "--sentinel-password",
        "pw",
        "--sentinel",
        "h:26379",
        "--primary-name",
        "m",
    ]),
    // Described with --sentinel-user in the help.
    F::value(&["--sentinel-password"], Value::Text, "", "", |st, _, v| {
        st.args.sentinel.password = Some(v.as_bytes().to_vec());
        Ok(())
    })
    .secret()
    .example(&[
        "--sentinel-password",
        "pw",
        "--sentinel",
        "h:26379",
        "--primary-name",
        "m",
    ]),
    F::switch(
        &["--check-counters"],
        "--check-counters",
        "For an INCR test (-t incr, or a custom INCR key): count\n\
         the counters before and after it and report acknowledged\n\
         increments, what the server holds and how many were lost.",
        |st, _, _| {
            st.args.check_counters = true;
            Ok(())
        },
    ),
];

/// The Sentinel options, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentinelArgs {
    /// `--sentinel HOST:PORT[,HOST:PORT…]`, in the order given (asked in that order).
    pub nodes: Vec<(String, u16)>,
    /// `--primary-name` (or `--master-name`): the name the Sentinels monitor the primary by.
    pub primary_name: Option<String>,
    /// `--sentinel-user` (only with a Sentinel password).
    pub user: Option<Vec<u8>>,
    /// `--sentinel-password`: AUTH to the Sentinels (the data nodes use `-a`/`--user`).
    pub password: Option<Vec<u8>>,
}

/// `HOST:PORT[,HOST:PORT…]`; an IPv6 address in brackets (`[::1]:26379`).
pub(super) fn nodes(flag: &str, v: &OsStr) -> Result<Vec<(String, u16)>, UsageError> {
    let expected = "HOST:PORT[,HOST:PORT...] (IPv6 as [ADDR]:PORT)";
    let err = || invalid_value(flag, v, expected);
    let text = std::str::from_utf8(v.as_bytes()).map_err(|_| err())?;
    let mut out = Vec::new();
    for item in text.split(',') {
        let (host, port) = item.rsplit_once(':').ok_or_else(err)?;
        let host = match host.strip_prefix('[') {
            Some(inner) => inner.strip_suffix(']').ok_or_else(err)?,
            None if host.contains(':') => return Err(err()),
            None => host,
        };
        if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let port: u16 = port.parse().ok().filter(|&p| p > 0).ok_or_else(err)?;
        out.push((host.to_string(), port));
    }
    Ok(out)
}

/// The whole-line checks: a Sentinel run needs the primary's name, the Sentinel-only options
/// need `--sentinel`, and the data nodes are TCP, not a unix socket or a cluster.
pub(super) fn check(args: &Args, socket_given: bool) -> Result<(), UsageError> {
    let s = &args.sentinel;
    let usage = |m: &str| Err(UsageError(m.to_string()));
    if s.nodes.is_empty() {
        if s.primary_name.is_some() {
            return usage("--primary-name needs --sentinel (the Sentinels to ask for it)");
        }
        if s.user.is_some() || s.password.is_some() {
            return usage("--sentinel-user and --sentinel-password need --sentinel");
        }
        return Ok(());
    }
    if s.primary_name.is_none() {
        return usage(
            "--sentinel needs --primary-name (the name the Sentinels monitor the primary by)",
        );
    }
    if s.user.is_some() && s.password.is_none() {
        return usage("--sentinel-user needs --sentinel-password");
    }
    if socket_given {
        return usage("--sentinel finds a TCP primary; it does not go with -s");
    }
    if args.cluster {
        return usage("--sentinel and --cluster do not go together (a cluster has no Sentinels)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Invocation, parse};

    fn args(line: &[&str]) -> Result<Args, UsageError> {
        match parse(line.iter().map(Into::into))? {
            Invocation::Run(a) => Ok(*a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn master_name_is_primary_name_and_credentials_are_kept_apart() {
        let a = args(&[
            "--sentinel",
            "s1:26379,s2:26380",
            "--master-name",
            "mymaster",
            "--sentinel-user",
            "su",
            "--sentinel-password",
            "sp",
            "-a",
            "dp",
        ])
        .unwrap();
        assert_eq!(a.sentinel.primary_name.as_deref(), Some("mymaster"));
        assert_eq!(a.sentinel.nodes.len(), 2);
        assert_eq!(a.sentinel.user.as_deref(), Some(b"su".as_slice()));
        assert_eq!(a.sentinel.password.as_deref(), Some(b"sp".as_slice()));
        assert_eq!(a.password.as_deref(), Some(b"dp".as_slice()));
        let e = args(&["--sentinel", "s:1", "--primary-name", "m", "-s", "/tmp/x"]).unwrap_err();
        assert!(e.0.contains("-s"), "{}", e.0);
        let e = args(&[
            "--sentinel",
            "s:1",
            "--primary-name",
            "m",
            "--sentinel-user",
            "u",
        ]);
        assert!(e.unwrap_err().0.contains("--sentinel-password"));
        let e = args(&["--sentinel-password", "p"]).unwrap_err();
        assert!(e.0.contains("need --sentinel"), "{}", e.0);
    }

    #[test]
    fn sentinel_lists_parse_or_say_what_is_expected() {
        let ok = |v: &str| nodes("--sentinel", OsStr::new(v)).unwrap();
        assert_eq!(ok("127.0.0.1:26379"), vec![("127.0.0.1".into(), 26379)]);
        assert_eq!(
            ok("a:1,[::1]:2,b.example:3"),
            vec![("a".into(), 1), ("::1".into(), 2), ("b.example".into(), 3)]
        );
        for bad in [
            "", "host", "host:", ":1", "h:0", "h:70000", "h:1,", "::1:5", "h:x",
        ] {
            let e = nodes("--sentinel", OsStr::new(bad)).unwrap_err();
            assert!(e.0.contains("HOST:PORT"), "{bad}: {}", e.0);
        }
    }
}
