//! memtier's connection, reconnection, TLS-version, debug/show-config and WAIT options
//! (issue 23), as entries of its table (`table.rs` lists them in memtier's help order). Each
//! applies memtier's meaning through respbench's own mechanisms: `-e`'s reconnects, the
//! engine's one connect path ([`crate::cli::ConnArgs`] is what the plan hands it), the
//! `--ratio` mix (a WAIT command in it).

use std::time::Duration;

use super::{MemtierState, refused, via};
use crate::cli::UsageError;
use crate::cli::flag::{Flag, Value};
use crate::cli::value::{invalid_value, text, whole};
use crate::cli::{AddrFamily, TlsVersionsArg, WaitArgs};

type M = Flag<MemtierState>;

pub(super) const IPV4: M = M::switch(
    &["-4", "--ipv4"],
    "-4, --ipv4",
    "Resolve the server's name to IPv4 addresses only",
    |st, _, _| {
        st.main.args.conn.family = Some(AddrFamily::V4);
        Ok(())
    },
)
.example(&["-4"]);

pub(super) const IPV6: M = M::switch(
    &["-6", "--ipv6"],
    "-6, --ipv6",
    "Resolve the server's name to IPv6 addresses only",
    |st, _, _| {
        st.main.args.conn.family = Some(AddrFamily::V6);
        Ok(())
    },
)
.example(&["-6"]);

pub(super) const TLS_PROTOCOLS: M = M::value(
    &["--tls-protocols"],
    Value::Text,
    "--tls-protocols=LIST",
    "TLS versions to offer, comma-separated: TLSv1.2,\nTLSv1.3 (TLSv1 and TLSv1.1 are refused)",
    |st, n, v| {
        st.main.args.conn.tls_versions = Some(tls_versions(n, v)?);
        Ok(())
    },
)
.example(&["--tls", "--tls-protocols", "TLSv1.2,TLSv1.3"]);

pub(super) const DEBUG: M = M::switch(
    &["-D", "--debug"],
    "-D, --debug",
    "Print what the line became (connections, requests,\ncommands, target) on stderr first",
    |st, _, _| {
        st.opts.debug = true;
        Ok(())
    },
)
.example(&["-D"]);

pub(super) const SHOW_CONFIG: M = M::switch(
    &["--show-config"],
    "--show-config",
    "Print the configuration values before running",
    |st, _, _| {
        st.opts.show_config = true;
        Ok(())
    },
)
.example(&["--show-config"]);

pub(super) const RECONNECT_INTERVAL: M = M::value(
    &["--reconnect-interval"],
    Value::Text,
    "--reconnect-interval=NUM",
    "Close and reopen each connection after NUM requests",
    |st, n, v| {
        st.main.args.conn.reconnect_interval = Some(whole(n, v, 1, u64::MAX)?);
        Ok(())
    },
)
.example(&["--reconnect-interval", "100"]);

pub(super) const RECONNECT_ON_ERROR: M = M::switch(
    &["--reconnect-on-error"],
    "--reconnect-on-error",
    "Reopen a failed connection and go on, failures counted\n(respbench's -e)",
    |st, n, v| via("-e", st, n, v),
)
.example(&["--reconnect-on-error"]);

pub(super) const MAX_RECONNECT_ATTEMPTS: M = M::value(
    &["--max-reconnect-attempts"],
    Value::Text,
    "--max-reconnect-attempts=NUM",
    "With --reconnect-on-error: end the run once a connection\nfailed NUM reopening attempts in a row (0: unlimited)",
    |st, n, v| {
        let max: u32 = whole(n, v, 0, 1_000_000)?;
        st.main.args.conn.max_reconnect_attempts = (max > 0).then_some(max);
        Ok(())
    },
)
.example(&["--reconnect-on-error", "--max-reconnect-attempts", "5"]);

pub(super) const RECONNECT_BACKOFF_FACTOR: M = M::value(
    &["--reconnect-backoff-factor"],
    Value::Text,
    "--reconnect-backoff-factor=NUM",
    "Grow the wait before reopening a failed connection by\nNUM each time (0: no wait; from 10 ms, under 500 ms)",
    |st, n, v| match text(n, v)?.parse::<f64>() {
        Ok(f) if f.is_finite() && (0.0..=100.0).contains(&f) => {
            st.main.args.conn.backoff_factor = Some(f);
            Ok(())
        }
        _ => Err(invalid_value(n, v, "a number from 0 to 100")),
    },
)
.example(&["--reconnect-on-error", "--reconnect-backoff-factor", "2"]);

pub(super) const CONNECTION_TIMEOUT: M = M::value(
    &["--connection-timeout"],
    Value::Text,
    "--connection-timeout=SECS",
    "Give up a connect (and its TLS handshake) after SECS;\n0 keeps respbench's 10 s",
    |st, n, v| {
        let secs: u64 = whole(n, v, 0, 3600)?;
        st.main.args.conn.connect_timeout = (secs > 0).then(|| Duration::from_secs(secs));
        Ok(())
    },
)
.example(&["--connection-timeout", "3"]);

pub(super) const JITTER_MIN: M = M::value(
    &["--thread-conn-start-min-jitter-micros"],
    Value::Text,
    "--thread-conn-start-min-jitter-micros=NUM",
    "Shortest pause (µs) before each connection is set up",
    |st, n, v| {
        st.main.args.conn.start_jitter_us.0 = whole(n, v, 0, 1_000_000)?;
        Ok(())
    },
)
.example(&["--thread-conn-start-min-jitter-micros", "10"]);

pub(super) const JITTER_MAX: M = M::value(
    &["--thread-conn-start-max-jitter-micros"],
    Value::Text,
    "--thread-conn-start-max-jitter-micros=NUM",
    "Longest pause (µs) before each connection is set up",
    |st, n, v| {
        st.main.args.conn.start_jitter_us.1 = whole(n, v, 0, 1_000_000)?;
        Ok(())
    },
)
.example(&["--thread-conn-start-max-jitter-micros", "500"]);

pub(super) const WAIT_RATIO: M = M::value(
    &["--wait-ratio"],
    Value::Text,
    "--wait-ratio=RATIO",
    "SET:WAIT ratio: WAIT commands in the mix (1:0, none)",
    |st, n, v| {
        let (sets, waits) = pair(n, v, ':', "SETS:WAITS, e.g. 1:1")?;
        let w = wait(st);
        (w.sets, w.waits) = (sets as u32, waits as u32); // `pair` bounds them to 1000000
        Ok(())
    },
)
.example(&["--wait-ratio", "1:1"]);

pub(super) const NUM_SLAVES: M = M::value(
    &["--num-slaves"],
    Value::Text,
    "--num-slaves=RANGE",
    "WAIT for a replica count drawn from MIN-MAX (0-0)",
    |st, n, v| {
        let range = pair(n, v, '-', "MIN-MAX, e.g. 0-1")?;
        if range.1 - range.0 >= MAX_REPLICA_CHOICES {
            return Err(invalid_value(n, v, "a range of at most 16 replica counts"));
        }
        wait(st).replicas = range;
        Ok(())
    },
)
.example(&["--wait-ratio", "1:1", "--num-slaves", "0-1"]);

pub(super) const WAIT_TIMEOUT: M = M::value(
    &["--wait-timeout"],
    Value::Text,
    "--wait-timeout=RANGE",
    "WAIT timeout in ms: the middle of MIN-MAX (0-0)",
    |st, n, v| {
        wait(st).timeout_ms = pair(n, v, '-', "MIN-MAX in ms, e.g. 10-20")?;
        Ok(())
    },
)
.example(&["--wait-ratio", "1:1", "--wait-timeout", "10-20"]);

/// How many replica counts `--num-slaves` may span: each is a command of the mix.
const MAX_REPLICA_CHOICES: u64 = 16;

/// The WAIT settings, created at memtier's defaults (1:0, 0-0, 0-0) by the first WAIT option.
fn wait(st: &mut MemtierState) -> &mut WaitArgs {
    st.main.args.conn.wait.get_or_insert(WaitArgs {
        sets: 1,
        waits: 0,
        replicas: (0, 0),
        timeout_ms: (0, 0),
    })
}

/// `A:B` or `MIN-MAX` (with `sep`), whole numbers, the second at least the first for ranges.
fn pair(
    name: &str,
    v: &std::ffi::OsStr,
    sep: char,
    expected: &str,
) -> Result<(u64, u64), UsageError> {
    let s = text(name, v)?;
    let parsed = s
        .split_once(sep)
        .and_then(|(a, b)| Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?)))
        .filter(|(a, b)| sep == ':' || a <= b)
        .filter(|(a, b)| *a <= 1_000_000 && *b <= 1_000_000);
    parsed.ok_or_else(|| invalid_value(name, v, expected))
}

/// `--tls-protocols TLSv1.2,TLSv1.3`: the versions rustls has; TLSv1 and TLSv1.1 refused.
fn tls_versions(name: &str, v: &std::ffi::OsStr) -> Result<TlsVersionsArg, UsageError> {
    let mut out = TlsVersionsArg {
        tls12: false,
        tls13: false,
    };
    for part in text(name, v)?.split(',').map(str::trim) {
        match part {
            "TLSv1.2" => out.tls12 = true,
            "TLSv1.3" => out.tls13 = true,
            "TLSv1" | "TLSv1.1" => {
                return Err(refused(
                    name,
                    "TLSv1 and TLSv1.1 are obsolete (RFC 8996) and rustls does not offer them; \
                     use TLSv1.2 and/or TLSv1.3",
                ));
            }
            _ => {
                return Err(invalid_value(
                    name,
                    v,
                    "TLSv1.2 and/or TLSv1.3, separated by commas",
                ));
            }
        }
    }
    Ok(out)
}

pub(super) const CLIENTS_START: M = M::value(
    &["--clients-start"],
    Value::Text,
    "--clients-start=NUMBER",
    "Staircase ramp: connections per thread at the start\n(below --clients; needs --clients-step, --step-duration)",
    |st, n, v| {
        ramp(st).0 = whole(n, v, 1, 100_000)?;
        Ok(())
    },
)
.example(&[
    "--clients-start=1",
    "--clients-step=1",
    "--step-duration=1",
    "-c",
    "3",
    "--test-time=3",
]);

pub(super) const CLIENTS_STEP: M = M::value(
    &["--clients-step"],
    Value::Text,
    "--clients-step=NUMBER",
    "Staircase ramp: connections per thread added each step",
    |st, n, v| {
        ramp(st).1 = whole(n, v, 1, 100_000)?;
        Ok(())
    },
)
.example(&[
    "--clients-start=2",
    "--clients-step=2",
    "--step-duration=5",
    "-c",
    "10",
    "--test-time=30",
]);

pub(super) const STEP_DURATION: M = M::value(
    &["--step-duration"],
    Value::Text,
    "--step-duration=SECS",
    "Staircase ramp: seconds between steps",
    |st, n, v| {
        ramp(st).2 = whole(n, v, 1, 86_400)?;
        Ok(())
    },
)
.example(&[
    "--clients-start=1",
    "--clients-step=1",
    "--step-duration=2",
    "-c",
    "2",
    "--test-time=4",
]);

/// The ramp's three numbers, zero until given (`finish` checks that all three were).
fn ramp(st: &mut MemtierState) -> &mut (u32, u32, u64) {
    st.main.args.conn.ramp.get_or_insert((0, 0, 0))
}
