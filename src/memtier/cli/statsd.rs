//! memtier's real-time metrics options: `--statsd-host`, `--statsd-port`, `--statsd-prefix`,
//! `--statsd-run-label`, `--graphite-port`, as table entries with memtier's defaults (8125,
//! `memtier`, `default`, 8080), turned into the run's [`StatsdArgs`] (`crate::live` sends them).
//!
//! memtier sanitizes the run label (anything but letters, digits, `_` and `-` becomes `_`); so
//! does this. A prefix holding what StatsD's line format uses (`:`, `|`, whitespace) is refused:
//! it could not be sent as one name. The other options without `--statsd-host` are refused too
//! (they would do nothing), as `--metrics-linger` without `--metrics-listen` is.

use super::{MemtierState, UsageError};
use crate::cli::StatsdArgs;
use crate::cli::flag::{Flag, Value};
use crate::cli::value::{invalid_value, text, whole};

type M = Flag<MemtierState>;

/// memtier's defaults.
pub const DEFAULT_PORT: u16 = 8125;
pub const DEFAULT_PREFIX: &str = "memtier";
pub const DEFAULT_LABEL: &str = "default";
pub const DEFAULT_GRAPHITE_PORT: u16 = 8080;

/// The options as given; [`finish`] checks them.
#[derive(Debug, Default)]
pub(in crate::memtier) struct StatsdFlags {
    host: Option<String>,
    port: Option<u16>,
    prefix: Option<String>,
    label: Option<String>,
    graphite_port: Option<u16>,
}

pub(super) const HOST: M = M::value(
    &["--statsd-host"],
    Value::Text,
    "--statsd-host=HOST",
    "Send real-time metrics to this StatsD host over UDP\n(memtier's gauges and timings, respbench's counters)",
    |st, n, v| {
        st.statsd.host = Some(text(n, v)?).filter(|h| !h.is_empty());
        Ok(())
    },
)
.example(&["--statsd-host=127.0.0.1"]);

pub(super) const PORT: M = M::value(
    &["--statsd-port"],
    Value::Text,
    "--statsd-port=PORT",
    "StatsD's UDP port (8125)",
    |st, n, v| {
        st.statsd.port = Some(whole(n, v, 1, 65_535)?);
        Ok(())
    },
)
.example(&["--statsd-host=127.0.0.1", "--statsd-port=9125"]);

pub(super) const PREFIX: M = M::value(
    &["--statsd-prefix"],
    Value::Text,
    "--statsd-prefix=PREFIX",
    "First part of every metric name (memtier)",
    |st, n, v| {
        let p = text(n, v)?;
        if p.chars()
            .any(|c| c == ':' || c == '|' || c == '@' || c.is_whitespace())
        {
            return Err(invalid_value(
                n,
                v,
                "a name without ':', '|', '@' or spaces",
            ));
        }
        st.statsd.prefix = Some(p);
        Ok(())
    },
)
.example(&["--statsd-host=127.0.0.1", "--statsd-prefix=bench.redis"]);

pub(super) const RUN_LABEL: M = M::value(
    &["--statsd-run-label"],
    Value::Text,
    "--statsd-run-label=LABEL",
    "Second part of every metric name, to tell runs apart\n(default)",
    |st, n, v| {
        st.statsd.label = Some(text(n, v)?);
        Ok(())
    },
)
.example(&["--statsd-host=127.0.0.1", "--statsd-run-label=baseline"]);

pub(super) const GRAPHITE_PORT: M = M::value(
    &["--graphite-port"],
    Value::Text,
    "--graphite-port=PORT",
    "Graphite's HTTP port on the StatsD host, for the start\nand end annotations (8080)",
    |st, n, v| {
        st.statsd.graphite_port = Some(whole(n, v, 1, 65_535)?);
        Ok(())
    },
)
.example(&["--statsd-host=127.0.0.1", "--graphite-port=80"]);

/// memtier's label: letters, digits, `_` and `-` kept, anything else `_`.
pub fn sanitize_label(label: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let out: String = label
        .chars()
        .map(|c| if kept(c) { c } else { '_' })
        .collect();
    if out.is_empty() {
        DEFAULT_LABEL.to_string()
    } else {
        out
    }
}

/// Checks the options together and sets the run's `statsd`.
pub(super) fn finish(st: &mut MemtierState) -> Result<(), UsageError> {
    let f = std::mem::take(&mut st.statsd);
    let Some(host) = f.host else {
        let given = [
            (f.port.is_some(), "--statsd-port"),
            (f.prefix.is_some(), "--statsd-prefix"),
            (f.label.is_some(), "--statsd-run-label"),
            (f.graphite_port.is_some(), "--graphite-port"),
        ];
        return match given.iter().find(|g| g.0) {
            Some((_, name)) => Err(UsageError(format!("{name} needs --statsd-host"))),
            None => Ok(()),
        };
    };
    st.main.args.statsd = Some(StatsdArgs {
        host,
        port: f.port.unwrap_or(DEFAULT_PORT),
        prefix: f.prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_string()),
        label: sanitize_label(f.label.as_deref().unwrap_or(DEFAULT_LABEL)),
        graphite_port: f.graphite_port.unwrap_or(DEFAULT_GRAPHITE_PORT),
        percentiles: st.opts.print_percentiles.clone(),
    });
    Ok(())
}
