//! Formatting of results: the full report, `-q` lines, `--csv`, and the live progress line.
//!
//! Owns: text layout only. Must not: touch sockets, measure, decide exit codes, choose the output
//! stream or do terminal control (clearing the progress line, `\r`). The full, quiet and CSV
//! formats follow valkey-benchmark byte for byte (spec §4.3–4.6) except where documented here and
//! in docs/differences.md: our additions to the full report appear
//! only when they have something to say, latency figures use `--precision` decimal places
//! (the reference always prints 3, our default), and CSV titles are escaped.
//!
//! Layout: `format` writes the text; `distribution` replicates HdrHistogram_c's percentile and
//! linear iterators for the two distribution listings. Golden files for the tests live in
//! `src/report/golden/` (regenerate with `REGENERATE_GOLDEN=1 cargo test --lib report::`).

mod commands;
mod delivery;
mod distribution;
mod format;
#[cfg(test)]
mod golden_tests;
mod outages;
mod repeat;
mod run_summary;
mod server;

pub use delivery::write_delivery;
pub use format::{
    Progress, ProgressPhase, progress_line, side_notes, write_cluster_listing, write_csv_header,
    write_csv_row, write_full, write_quiet,
};
pub use repeat::Repetitions;
pub use run_summary::run_summary;
pub use server::{short_tests_warnings, verdict_warning, write_server_block};

/// What the report says about the run's setup (the header lines of the full report).
#[derive(Clone, Debug, Default)]
pub struct ReportContext {
    /// `-c`.
    pub clients: u32,
    /// `-d`, or the RESP length of one custom command unit (with `--dataset`, the mean length of
    /// the records' units).
    pub payload_bytes: usize,
    /// `-k` as given (printed raw, as the reference does).
    pub keepalive: i64,
    /// `CONFIG GET save` / `appendonly` from the server, when they could be fetched.
    pub server_save: Option<String>,
    pub server_appendonly: Option<String>,
    /// `--threads` when given explicitly (prints "multi-thread: yes" and "threads: N").
    pub threads: Option<u32>,
    /// Decimal places of latency figures (`--precision`, default 3).
    pub precision: usize,
    /// `--enable-tracking`: the invalidation count is shown even when it is 0.
    pub tracking: bool,
    /// Cluster mode's header lines.
    pub cluster: Option<ClusterHeader>,
    /// What the test's operations are, in the report's words.
    pub operations: Operations,
}

/// What a mode's operations are (issue 33): a `--pubsub` test's completions are deliveries, and
/// "49,999 requests per second" for 5,000 publishes a second read as a wrong figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Operations {
    /// The benchmark's, memtier's, a fill's.
    #[default]
    Requests,
    /// `--pubsub`/`--stream`: messages arrived at a receiver.
    Deliveries,
    /// `respbench replay`.
    ReplayedCommands,
}

impl Operations {
    /// The plural noun: "requests", "deliveries", "replayed commands".
    pub fn plural(self) -> &'static str {
        match self {
            Operations::Requests => "requests",
            Operations::Deliveries => "deliveries",
            Operations::ReplayedCommands => "replayed commands",
        }
    }
}

/// `cluster mode: yes (<count> <kind>)` and the per-node configuration lines.
#[derive(Clone, Debug, Default)]
pub struct ClusterHeader {
    /// Benchmark nodes.
    pub count: usize,
    /// `primary`, `replica` or `cluster` (as `--rfr` no / yes / all).
    pub kind: &'static str,
    /// Per benchmark node, `CONFIG GET save` / `appendonly` when they could be fetched.
    pub node_configs: Vec<(Option<String>, Option<String>)>,
}
