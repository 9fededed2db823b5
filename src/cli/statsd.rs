//! Where a run's metrics go over StatsD (and Graphite's annotations): a sink the run sends to
//! as it goes (`crate::live::statsd`). memtier's command line is the one that sets it (its
//! `--statsd-*` entries and defaults are `memtier/cli/statsd.rs`); the run only needs the
//! address and names, so the type lives with the other options the run is given.

/// Where and how the run's metrics go (`--statsd-host` given).
#[derive(Clone, Debug, PartialEq)]
pub struct StatsdArgs {
    /// The StatsD (and Graphite) host, as given; resolved when the run starts.
    pub host: String,
    pub port: u16,
    pub prefix: String,
    /// Sanitized as memtier's.
    pub label: String,
    /// Graphite's HTTP port on the same host, for the start and end annotations.
    pub graphite_port: u16,
    /// `--print-percentiles`: a `latency_pN` gauge each.
    pub percentiles: Vec<f64>,
}
