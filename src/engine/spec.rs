//! What the engine executes: where connections go and how they are prepared (`ConnSetup`), and
//! how the load is applied (`LoadSpec`, `Stop`, `ErrorPolicy`). `plan` fills these in.

use std::sync::Arc;
use std::time::Duration;

use super::Target;
use super::pacer::Arrival;
use crate::workload::dataset::Dataset;
use crate::workload::distribution::KeyPattern;
use crate::workload::drift::KeyDrift;
use crate::workload::mix::Mix;
use crate::workload::sizes::SizeDist;
use crate::workload::split::Share;

/// How connections reach and prepare the server.
#[derive(Clone, Debug)]
pub struct ConnSetup {
    pub target: Target,
    /// AUTH / SELECT / HELLO 3, pipelined before the first batch of every connection; their
    /// replies are checked and never measured.
    pub prefix: Vec<u8>,
    /// Names of the prefix commands in order, for messages.
    pub prefix_commands: Vec<&'static str>,
}

/// A staircase ramp, per worker (memtier's counts are per thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ramp {
    pub start: u32,
    pub step: u32,
    pub every: Duration,
}

/// When a test ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After this many commands (`-n`).
    Requests(u64),
    /// After this long (`--duration`); replies in flight at the end are waited for.
    After(Duration),
}

/// What to do with an error reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorPolicy {
    /// Stop the run (the reference's behaviour).
    Abort,
    /// Count it by its first word and go on (`-e`).
    Count,
}

/// How the load is applied; the same for every test of a run.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    pub clients: u32,
    pub workers: usize,
    pub pipeline: u32,
    pub stop: Stop,
    pub warmup: Duration,
    /// Target commands per second over all workers (`--rps`); `None` = closed loop.
    pub rps: Option<u64>,
    /// `-k 1`: keep connections; `false` reconnects after every batch.
    pub keepalive: bool,
    /// memtier's `--reconnect-interval N`: a connection that has sent N commands is replaced
    /// (closed and opened again, prefix resent, as `-k 0` does) before its next batch. `None`
    /// keeps it for the whole test.
    pub reconnect_interval: Option<u64>,
    /// memtier's `--thread-conn-start-min/max-jitter-micros`: a pause drawn uniformly from
    /// this range (µs) before each connection is set up; `(0, 0)` sets them up back to back.
    pub conn_start_jitter_us: (u64, u64),
    /// memtier's staircase ramp (`--clients-start`, `--clients-step`, `--step-duration`): each
    /// worker starts with `start` connections and opens `step` more every `every` until it has
    /// its share of `clients`; `None` opens them all before the test.
    pub ramp: Option<Ramp>,
    /// memtier's `--reconnect-backoff-factor` (with `-e`): a failed connection's wait before
    /// the next attempt grows by this factor (0: no wait); `None` doubles it (respbench's own).
    /// Either way it starts at 10 ms and stays under 500 ms.
    pub backoff_factor: Option<f64>,
    /// memtier's `--max-reconnect-attempts` (with `-e`): a connection that failed this many
    /// reopening attempts in a row ends the run with an error; `None` retries until the test
    /// ends.
    pub max_reconnect_attempts: Option<u32>,
    /// `-r`; `None` leaves placeholders literal.
    pub keyspace: Option<u64>,
    pub sequential: bool,
    pub seed: u64,
    pub on_error: ErrorPolicy,
    /// `--dataset`: each unit is the next record's pre-encoded command instead of the template's
    /// unit (the template still gives the commands per unit).
    pub dataset: Option<Arc<Dataset>>,
    /// `--timeout`: a batch unanswered this long (or a reconnect not done) fails as `timeout`
    /// and its connection is reopened; `None` waits as long as the test lasts.
    pub reply_timeout: Option<Duration>,
    /// How placeholder values are drawn (`--key-pattern`/`--keys`); uniform by default.
    /// `sequential` is also set for the counter-based patterns (sequential, parallel), so the
    /// runner gives their workers shared counters.
    pub key_pattern: KeyPattern,
    /// The lowest placeholder value (`--key-minimum`); values run over `key_min..keyspace`.
    pub key_min: u64,
    /// `--arrival`: how `--rps` sends are spaced.
    pub arrival: Arrival,
    /// `--data-size-range`/`--data-size-list`: value sizes drawn per request (templates are
    /// encoded at the largest); `None` keeps every value at `-d` bytes.
    pub value_sizes: Option<SizeDist>,
    /// `--ratio`: each unit is one command drawn from this mix instead of the template's unit
    /// (the template is the mix's first command), each timed into its own histogram.
    pub mix: Option<Arc<Mix>>,
    /// In a sharded run (`--shard I/N`), this process's share of the keyspace: counter-based
    /// patterns (sequential, parallel) walk only its part, so N shards together write each key
    /// once per lap. `Share::WHOLE` when not sharded.
    pub shard: Share,
    /// `--key-drift`: the random pattern's hot spot moves during the test (`workload::drift`);
    /// `None` keeps it where it is.
    pub key_drift: Option<KeyDrift>,
    /// memtier's `--scan-incremental-iteration` (`-P 1`, one `SCAN` command): each connection's
    /// next `SCAN` sends the cursor its last reply returned (`scan_walk.rs`); `None` sends the
    /// template as it is.
    pub scan_walk: Option<super::ScanWalk>,
    /// memtier's `--client-stats`: every connection keeps its own per-second counts
    /// (`metrics::ConnSeconds`), handed to the test's timeline at the end.
    pub conn_seconds: bool,
    /// memtier's `-n`: each connection sends exactly its share of the worker's quota (memtier's
    /// requests per client), rather than the worker's connections sharing it first come first
    /// served; with `--key-pattern P:P` each connection's slice of the range is then walked
    /// exactly. Standalone and without a ramp only.
    pub quota_per_conn: bool,
}
