//! Live metrics (`crate::live`): the address `/metrics` is served on and how long it stays up
//! after the run. Kept in a file of their own so they are added to the table as one part.

use std::net::SocketAddr;

use super::super::UsageError;
use super::super::flag::{Flag, Value};
use super::super::state::State;
use super::super::value::{invalid_value, seconds};

/// `--metrics-listen`'s value, for every table that has it (the main one, `replay`'s). An
/// address, not a name: nothing is resolved while the command line is read, and the port must
/// be given (there is no usual one to assume).
pub fn metrics_address(name: &str, v: &std::ffi::OsStr) -> Result<SocketAddr, UsageError> {
    let addr = v.to_str().and_then(|s| s.parse::<SocketAddr>().ok());
    let expected = "an address and port, e.g. 127.0.0.1:9100 or [::1]:9100";
    addr.ok_or_else(|| invalid_value(name, v, expected))
}

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// `--metrics-listen` and `--metrics-linger`.
pub(in crate::cli) const LIVE: &[Flag<State>] = &[
    F::value(
        &["--metrics-listen"],
        Value::Text,
        "--metrics-listen <addr:port>",
        "Serve live metrics (Prometheus/OpenMetrics text) on\n\
         http://addr:port/metrics while the run lasts, e.g.\n\
         127.0.0.1:9100 (0.0.0.0:9100 for a scraper elsewhere)",
        |st, name, v| {
            st.args.metrics_listen = Some(metrics_address(name, v)?);
            Ok(())
        },
    )
    .example(&["--metrics-listen", "127.0.0.1:9100"]),
    F::value(
        &["--metrics-linger"],
        Value::Text,
        "--metrics-linger <sec>",
        "Keep serving /metrics this long after the run ends, so\n\
         the last scrape sees the final figures (default 0)",
        |st, name, v| {
            st.args.metrics_linger = Some(seconds(name, v)?);
            Ok(())
        },
    )
    .example(&[
        "--metrics-listen",
        "127.0.0.1:9100",
        "--metrics-linger",
        "15",
    ]),
];
