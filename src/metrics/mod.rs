//! Measurement data: latency histograms, per-test counters and the merged result of a test.
//!
//! Owns: recording (constant time, no allocation) and merging. Must not: format output or touch
//! sockets. Invariant: merging per-worker histograms gives exactly what recording every value into
//! one histogram would have given.

mod coarse;
mod conn_seconds;
mod exact_second;
mod handed_over;
mod histogram;
pub mod outage;
mod recorder;
pub mod rx_delay;
pub mod thread_cpu;
mod timeline;

pub use coarse::CoarseHistogram;
pub use conn_seconds::{CONN_KINDS, ConnReply, ConnSecond, ConnSeconds};
pub use exact_second::{ExactCommand, ExactSecond, NodeSecond, SecondBase, Whole};
pub use handed_over::{DenseCounts, SparseHistogram};
pub use histogram::{LatencyHistogram, MAX_LATENCY_NS};
pub use outage::NodeOutage;
pub use recorder::{CommandFigures, CommandTally, Latency, Recorder};
pub use thread_cpu::ThreadCpuUsage;
pub use timeline::{
    OPEN_SECONDS, SLOT, SLOTS, Second, SecondTally, SharedTimeline, Slot, Timeline,
};

use std::time::{Duration, SystemTime};

/// The kinds a request fails under when no reply came (the worker's `outage.rs` chooses), next
/// to error replies' first words in [`ErrorCounts`]. Error words are upper case and one word, so
/// these cannot be mistaken for one.
pub const FAILURE_KINDS: [&str; 5] = [
    "timeout",
    "connection reset",
    "connection closed",
    "connection refused",
    "connection error",
];

/// Error replies counted by their first word (`WRONGTYPE`, `NOAUTH`, `ERR`, ...).
///
/// Kept as a short vector: a run sees a handful of distinct error words, so a linear scan beats a
/// map and nothing is allocated after a word's first appearance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    entries: Vec<(String, u64)>,
}

impl ErrorCounts {
    /// Counts one error reply whose text (without the leading `-`) is `message`.
    pub fn record(&mut self, message: &[u8]) {
        let word_end = message
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(message.len());
        let word = &message[..word_end.min(64)];
        if let Some(entry) = self.entries.iter_mut().find(|(w, _)| w.as_bytes() == word) {
            entry.1 += 1;
        } else {
            self.entries
                .push((String::from_utf8_lossy(word).into_owned(), 1));
        }
    }

    /// Counts `n` requests that failed without an error reply, under a whole kind name
    /// (`timeout`, `connection reset`, …: see the worker's `outage.rs`). The name is kept whole,
    /// not cut at its first word, so that it reads as the kind it is beside the reply words.
    pub fn record_kind(&mut self, kind: &str, n: u64) {
        if let Some(entry) = self.entries.iter_mut().find(|(w, _)| w == kind) {
            entry.1 += n;
        } else {
            self.entries.push((kind.to_string(), n));
        }
    }

    /// Every count back to 0, the words kept: a worker's per-second counts
    /// (`ExactSecond::errors`) then allocate a word once per test, not once per second.
    pub fn zero(&mut self) {
        for e in &mut self.entries {
            e.1 = 0;
        }
    }

    /// `(word, count)` in the order first seen, without allocating.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.entries.iter().map(|(w, c)| (w.as_str(), *c))
    }

    /// The count of `word` (0 when never seen).
    pub fn count(&self, word: &str) -> u64 {
        self.entries
            .iter()
            .find(|(w, _)| w == word)
            .map_or(0, |(_, c)| *c)
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, other: &ErrorCounts) {
        for (word, count) in &other.entries {
            if let Some(entry) = self.entries.iter_mut().find(|(w, _)| w == word) {
                entry.1 += count;
            } else {
                self.entries.push((word.clone(), *count));
            }
        }
    }

    /// Total error replies.
    pub fn total(&self) -> u64 {
        self.entries.iter().map(|(_, c)| c).sum()
    }

    /// `(word, count)` pairs, most frequent first, ties by word.
    pub fn sorted(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self.entries.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether some requests failed without a reply (a [`FAILURE_KINDS`] entry), not only by an
    /// error reply.
    pub fn has_failures_without_reply(&self) -> bool {
        self.entries
            .iter()
            .any(|(w, _)| FAILURE_KINDS.contains(&w.as_str()))
    }
}

/// RESP3 push messages seen between replies that were not replies themselves, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PushCounts {
    /// Client-side caching invalidations (`invalidate`, with `--enable-tracking`).
    pub invalidations: u64,
    /// Pub/sub deliveries (`message`, `pmessage`, `smessage`).
    pub messages: u64,
    /// Any other push.
    pub other: u64,
}

impl PushCounts {
    /// Adds another worker's counts.
    pub fn merge(&mut self, other: &PushCounts) {
        self.invalidations += other.invalidations;
        self.messages += other.messages;
        self.other += other.other;
    }

    /// What these counts gained since `base` (an earlier reading of the same counters).
    pub fn since(&self, base: &PushCounts) -> PushCounts {
        PushCounts {
            invalidations: self.invalidations.saturating_sub(base.invalidations),
            messages: self.messages.saturating_sub(base.messages),
            other: self.other.saturating_sub(base.other),
        }
    }
}

/// How a test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran to its `-n` count or `--duration`.
    Completed,
    /// Stopped by a signal (Ctrl-C, SIGTERM): the figures cover what was measured until then.
    Interrupted(Signal),
    /// Stopped by a fatal error (error reply without `-e`, lost connection, protocol error).
    Aborted,
}

/// The signal that stopped a run, so the partial report names it (a CI runner's SIGTERM is not
/// the user's Ctrl-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT.
    Interrupt,
    /// SIGTERM (what `timeout`, CI runners and systemd send).
    Terminate,
}

impl Signal {
    /// As the report says it: "measured until Ctrl-C", "measured until SIGTERM".
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// The merged measurements of one test (one `====== TITLE ======` block).
#[derive(Clone, Debug)]
pub struct TestResult {
    /// Title as printed: `SET`, `MSET (10 keys)`, or the custom command line.
    pub title: String,
    /// Replies that were not errors (each pipelined command counts one).
    pub completed: u64,
    /// From the start of the measured phase (after connect and warmup) to the last counted reply.
    pub elapsed: Duration,
    /// Latency from each request's intended send time to its own reply (coordinated omission
    /// corrected). Nanoseconds.
    pub latency: LatencyHistogram,
    /// Latency from the actual write of each request to its own reply. Nanoseconds.
    pub latency_uncorrected: LatencyHistogram,
    /// Error replies by first word; never counted in `completed` or the latency histograms.
    pub errors: ErrorCounts,
    /// RESP3 push messages (client-tracking invalidations, pub/sub messages, ...) seen between
    /// replies; never counted in `completed`.
    pub pushes: PushCounts,
    /// Cluster mode: redirects and per-node figures.
    pub cluster: Option<ClusterStats>,
    /// `--rps` target, if any.
    pub target_rps: Option<u64>,
    /// Achieved requests per second in each 250 ms interval (only with `--rps`), for the RPS
    /// summary. Values are whole requests per second.
    pub rps_samples: Vec<f64>,
    pub outcome: Outcome,
    /// The measured phase second by second (completed, failed, latency of each second).
    pub timeline: Timeline,
    /// Each worker thread's CPU over the test: whether respbench itself was the limit.
    pub client_threads: Vec<ThreadCpuUsage>,
    /// Sampled waits of replies in the kernel before respbench read them (`rx_delay`), ns;
    /// empty where not measured (unix sockets, TLS, kernels without receive timestamps).
    pub client_delay: LatencyHistogram,
    /// Measured commands written (answered, failed or still in flight at the end).
    pub issued: u64,
    /// Measured commands still unanswered when the test ended (Ctrl-C, SIGTERM, the end of the
    /// grace after `--duration`, a fatal error): `completed + errors.total() + unanswered ==
    /// issued` (cluster redirects still being retried aside).
    pub unanswered: u64,
    /// `-e`: attempts to reopen a connection that failed, those the server then answered on
    /// (reconnects), and those it refused (a refused connect, or `ERR max number of clients
    /// reached`). An attempt that timed out or was reset is neither.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    pub reconnect_refusals: u64,
    /// The wall-clock time the measured phase began (the timeline's second 0), for placing
    /// outages on the clock.
    pub started_at: Option<SystemTime>,
    /// A command mix (`--ratio`): each command's own figures, in the mix's order (empty for a
    /// test of one command or sequence). The totals above cover them all.
    pub commands: Vec<CommandResult>,
}

/// One command of a mix: its own latency, as if it had been a test of its own.
#[derive(Clone, Debug)]
pub struct CommandResult {
    /// As the mix names it (`SET`, `GET`).
    pub name: String,
    pub completed: u64,
    /// Error replies counted with `-e`.
    pub errors: u64,
    /// What the replies found (see `CommandTally::hits`): values and nils, memtier's hits and
    /// misses. `hits` is `None` when not counted (a journal of an earlier build: then every
    /// reply that was not nil was one).
    pub hits: Option<u64>,
    pub nils: u64,
    /// Corrected latency (from the intended send time).
    pub latency: LatencyHistogram,
    /// From just before the write (memtier's per-command figure).
    pub uncorrected: LatencyHistogram,
    /// Bytes of its answered requests and of their replies (`None`: not counted, as in a
    /// journal of an earlier build).
    pub bytes: Option<(u64, u64)>,
}

impl CommandResult {
    /// Nothing measured yet.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            completed: 0,
            errors: 0,
            hits: Some(0),
            nils: 0,
            latency: LatencyHistogram::new(),
            uncorrected: LatencyHistogram::new(),
            bytes: Some((0, 0)),
        }
    }

    /// Adds one worker's figures.
    pub fn merge(&mut self, t: &CommandTally) {
        self.completed += t.completed;
        self.errors += t.errors;
        self.hits = self.hits.map(|h| h + t.hits);
        self.nils += t.nils;
        self.latency.merge(&t.latency);
        self.uncorrected.merge(&t.uncorrected);
        self.bytes = self
            .bytes
            .map(|(tx, rx)| (tx + t.tx_bytes, rx + t.rx_bytes));
    }
}

impl TestResult {
    /// Adds one worker's mix commands (`Recorder::commands`): each to its own figures, and their
    /// latencies to the test's, which the worker recorded per command only (see
    /// `Recorder::success_of`). The one place a mix's totals are made (engine and replay).
    pub fn add_commands(&mut self, commands: &[CommandTally]) {
        for (total, tally) in self.commands.iter_mut().zip(commands) {
            total.merge(tally);
            self.latency.merge(&tally.latency);
            self.latency_uncorrected.merge(&tally.uncorrected);
        }
    }

    /// Adds one thread's recorder: its latencies, completions, errors, pushes and mix commands.
    /// The one place a thread's figures join the test's (engine workers and replay threads).
    pub fn add_recorded(&mut self, rec: &Recorder) {
        self.latency.merge(&rec.latency);
        self.latency_uncorrected.merge(&rec.uncorrected);
        self.completed += rec.completed;
        self.errors.merge(&rec.errors);
        self.pushes.merge(&rec.pushes);
        self.add_commands(&rec.commands);
    }

    /// A result with nothing measured yet.
    pub fn empty(title: &str, target_rps: Option<u64>, outcome: Outcome) -> Self {
        Self {
            title: title.to_string(),
            completed: 0,
            elapsed: Duration::ZERO,
            latency: LatencyHistogram::new(),
            latency_uncorrected: LatencyHistogram::new(),
            errors: ErrorCounts::default(),
            pushes: PushCounts::default(),
            cluster: None,
            target_rps,
            rps_samples: Vec::new(),
            timeline: Timeline::default(),
            client_threads: Vec::new(),
            client_delay: LatencyHistogram::new(),
            issued: 0,
            unanswered: 0,
            reconnect_attempts: 0,
            reconnects: 0,
            reconnect_refusals: 0,
            started_at: None,
            commands: Vec::new(),
            outcome,
        }
    }

    /// Requests per second over the measured phase (0 when nothing was measured).
    pub fn throughput(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.completed as f64 / secs
        } else {
            0.0
        }
    }
}

/// Redirect replies a cluster sends instead of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectKind {
    Moved = 0,
    Ask = 1,
    TryAgain = 2,
    ClusterDown = 3,
}

impl RedirectKind {
    pub const ALL: [RedirectKind; 4] = [
        RedirectKind::Moved,
        RedirectKind::Ask,
        RedirectKind::TryAgain,
        RedirectKind::ClusterDown,
    ];

    /// The error code as the server sends it.
    pub fn name(self) -> &'static str {
        match self {
            RedirectKind::Moved => "MOVED",
            RedirectKind::Ask => "ASK",
            RedirectKind::TryAgain => "TRYAGAIN",
            RedirectKind::ClusterDown => "CLUSTERDOWN",
        }
    }

    /// Recognises a redirect by the error reply's first word.
    pub fn of(error: &[u8]) -> Option<RedirectKind> {
        let word = error.split(|&b| b == b' ').next().unwrap_or_default();
        match word {
            b"MOVED" => Some(RedirectKind::Moved),
            b"ASK" => Some(RedirectKind::Ask),
            b"TRYAGAIN" => Some(RedirectKind::TryAgain),
            b"CLUSTERDOWN" => Some(RedirectKind::ClusterDown),
            _ => None,
        }
    }
}

/// A cluster node's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Primary,
    Replica,
}

impl Role {
    /// As the per-node summary writes it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Replica => "replica",
        }
    }

    /// As the cluster listing writes it (`Node 0(Primary): …`).
    pub fn title(self) -> &'static str {
        match self {
            Role::Primary => "Primary",
            Role::Replica => "Replica",
        }
    }
}

/// One node's share of a cluster test.
#[derive(Clone, Debug)]
pub struct NodeStats {
    /// `host:port`.
    pub address: String,
    /// Its role at the end of the test (`None` until the runner labels the merged figures).
    pub role: Option<Role>,
    /// Requests this node answered (redirected ones count where they finally succeeded).
    pub completed: u64,
    /// Corrected latency of those requests.
    pub latency: LatencyHistogram,
    /// `-e`: measured requests lost without a reply when connections to it failed (a node that
    /// died; also counted in the test's failures by kind).
    pub lost: u64,
    /// `-e`: when its connections failed and when its slots were served again.
    pub outage: Option<NodeOutage>,
}

/// What cluster mode adds to a test's result.
#[derive(Clone, Debug, Default)]
pub struct ClusterStats {
    /// Redirects in the measured phase, by [`RedirectKind`] index.
    pub redirects: [u64; 4],
    /// Redirects per second of the measured phase (index = second), by kind.
    pub timeline: Vec<[u64; 4]>,
    /// Per node, by node index (nodes that answered nothing are kept, with zeros).
    pub nodes: Vec<NodeStats>,
}

impl NodeStats {
    /// A node with nothing answered yet.
    pub fn new() -> Self {
        Self {
            address: String::new(),
            role: None,
            completed: 0,
            latency: LatencyHistogram::new(),
            lost: 0,
            outage: None,
        }
    }
}

impl Default for NodeStats {
    fn default() -> Self {
        Self::new()
    }
}

impl ClusterStats {
    /// Adds another worker's counts (node figures by index).
    pub fn merge(&mut self, other: &ClusterStats) {
        for k in 0..4 {
            self.redirects[k] += other.redirects[k];
        }
        if self.timeline.len() < other.timeline.len() {
            self.timeline.resize(other.timeline.len(), [0; 4]);
        }
        for (mine, theirs) in self.timeline.iter_mut().zip(&other.timeline) {
            for k in 0..4 {
                mine[k] += theirs[k];
            }
        }
        for (i, n) in other.nodes.iter().enumerate() {
            if i >= self.nodes.len() {
                self.nodes.push(n.clone());
            } else {
                self.nodes[i].completed += n.completed;
                self.nodes[i].latency.merge(&n.latency);
                self.nodes[i].lost += n.lost;
                self.nodes[i].outage = NodeOutage::merged(self.nodes[i].outage, n.outage);
            }
        }
    }
}
