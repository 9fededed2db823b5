//! memtier_benchmark's connection options that valkey-benchmark's line has no spelling for
//! (issue 23): how often a connection is replaced, how long a connect may take, which address
//! family a host name resolves to, which TLS versions are offered, the jitter between a
//! thread's connection set-ups, and the `WAIT` commands of the mix. Only memtier's table (`memtier/cli/`) sets
//! them; `plan` copies them into the engine's contract (`cli` imports nothing of the crate).

use std::time::Duration;

/// The address family a host name is resolved to (`-4`, `-6`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrFamily {
    V4,
    V6,
}

/// `--tls-protocols`: the TLS versions offered (rustls has 1.2 and 1.3 only; older ones are
/// refused when the option is parsed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsVersionsArg {
    pub tls12: bool,
    pub tls13: bool,
}

/// memtier's WAIT options: after `sets` SETs, `waits` WAIT commands (`--wait-ratio`), each
/// for a replica count drawn from `replicas` and a timeout in ms from `timeout_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitArgs {
    pub sets: u32,
    pub waits: u32,
    pub replicas: (u64, u64),
    pub timeout_ms: (u64, u64),
}

/// The options, each `None` (or zero) when not given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnArgs {
    /// `--reconnect-interval N`: a connection is replaced after N commands.
    pub reconnect_interval: Option<u64>,
    /// `--connection-timeout SECS` (memtier's 0, "disabled", keeps respbench's 10 s bound).
    pub connect_timeout: Option<Duration>,
    /// `-4` / `-6`.
    pub family: Option<AddrFamily>,
    /// `--tls-protocols`.
    pub tls_versions: Option<TlsVersionsArg>,
    /// `--thread-conn-start-min/max-jitter-micros`: a pause drawn from this range (µs) before
    /// each connection a thread sets up.
    pub start_jitter_us: (u64, u64),
    /// `--max-reconnect-attempts` (memtier's 0, unlimited, is `None`).
    pub max_reconnect_attempts: Option<u32>,
    /// `--reconnect-backoff-factor`: how a failed connection's wait grows (0: no wait).
    pub backoff_factor: Option<f64>,
    /// memtier's staircase ramp: connections per thread at the start, added per step, and the
    /// step's length in seconds (`--clients-start`, `--clients-step`, `--step-duration`).
    pub ramp: Option<(u32, u32, u64)>,
    /// `--wait-ratio` with `--num-slaves` and `--wait-timeout`.
    pub wait: Option<WaitArgs>,
    /// memtier's `--client-stats`: keep per-connection seconds (`LoadSpec::conn_seconds`).
    pub client_stats: bool,
}
