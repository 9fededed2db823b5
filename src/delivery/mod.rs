//! Message delivery latency (issue 26 item 3): `--pubsub` and `--stream` runs, where the figure
//! is not a command's reply but the time from a message's publication (or `XADD`) to its arrival
//! at each receiver, with what the request/response view cannot see: fan-out, lost and duplicate
//! messages, how far receivers fall behind, the server's output buffers and the clients it
//! disconnects for them.
//!
//! Owns: the modes' own connections and threads (publishers or producers at a set rate, each a
//! blocking connection of its own; `--pubsub`'s subscribers as non-blocking connections on a few
//! threads' poll loops, `subscribers.rs`; `--stream`'s consumers likewise, `consumers.rs`; a
//! monitor sampling the server), the stamp each message carries (`stamp.rs`), counting each
//! message once per receiver (`tally.rs`).
//! Must not: format output, choose exit codes, or touch the request/response engine's workers
//! (it borrows the engine's sockets, `engine::conn::Stream`, not its loop: bounded by `-n`
//! messages and the plan's caps). Each message's payload is stamped in place; the receiving side
//! parses every message into an owned value, a cost per message the `bench/delivery-cost.sh`
//! target measures against the engine's cost per request.

pub mod block;
pub mod cli;
mod conn;
mod connect;
mod consumers;
mod html;
#[cfg(test)]
mod journal_tests;
mod kind;
mod merge;
mod monitor;
pub mod plan;
mod pubsub;
mod record;
mod report;
mod result;
mod route;
pub mod run;
mod seconds;
pub mod stamp;
mod stream;
mod subscribe;
mod subscribers;
mod tables;
pub mod tally;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::engine::{ClusterShared, ConnSetup, EngineError, Observer};
use crate::metrics::{LatencyHistogram, SharedTimeline};

use block::DeliveryRecord;

/// Which delivery mode, with its receivers.
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    /// `--pubsub`.
    PubSub {
        subscribers: u32,
        channels: u32,
        /// `--psubscribe`.
        patterns: bool,
        /// `--sharded`: `SSUBSCRIBE`/`SPUBLISH`.
        sharded: bool,
        /// `--slow-subscribers`: how many, and their pause between reads.
        slow: Option<(u32, Duration)>,
    },
    /// `--stream`: a consumer group of this many consumers.
    Stream { consumers: u32 },
}

/// A delivery run, as the plan resolved it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliverySpec {
    pub mode: Mode,
    pub publishers: u32,
    /// Messages in all (`-n`, or `--rps` × `--duration`).
    pub messages: u64,
    /// Messages per second over all publishers (`--rps`); `None`: as fast as they go.
    pub rate: Option<u64>,
    /// Payload bytes (`-d`, at least the stamp).
    pub payload: usize,
    /// Where names start: channels `{prefix}{k}:ch`, the stream `{prefix}stream`.
    pub prefix: Vec<u8>,
    /// Threads the subscribers (or consumers) are spread over (`--threads`, or a default).
    pub threads: usize,
    /// `-e`: a connection that fails is counted and opened again, and the test goes on.
    pub keep_going: bool,
    /// `--timeout`: a publish unanswered this long fails (kind `timeout`), as a request does;
    /// `None`: the control connection's own bound.
    pub timeout: Option<Duration>,
}

impl DeliverySpec {
    /// The test's title in reports and records.
    pub fn title(&self) -> &'static str {
        match self.mode {
            Mode::PubSub { sharded: true, .. } => "SPUBLISH -> SSUBSCRIBE",
            Mode::PubSub { patterns: true, .. } => "PUBLISH -> PSUBSCRIBE",
            Mode::PubSub { .. } => "PUBLISH -> SUBSCRIBE",
            Mode::Stream { .. } => "XADD -> XREADGROUP",
        }
    }

    /// Receivers: subscribers, or consumers.
    pub fn receivers(&self) -> u32 {
        match self.mode {
            Mode::PubSub { subscribers, .. } => subscribers,
            Mode::Stream { consumers } => consumers,
        }
    }

    /// Channel `k`'s name.
    pub fn channel(&self, k: u32) -> Vec<u8> {
        let mut c = self.prefix.clone();
        c.extend_from_slice(format!("{k}:ch").as_bytes());
        c
    }

    /// The stream's key.
    pub fn stream_key(&self) -> Vec<u8> {
        let mut c = self.prefix.clone();
        c.extend_from_slice(b"stream");
        c
    }
}

/// What a delivery run measured: its record block (the shape, the message counts, the seconds,
/// the receivers dropped, the nodes), and what the run makes a test's figures of.
#[derive(Clone, Debug)]
pub struct DeliveryResult {
    /// The record's `delivery` block (`block.rs`): the runtime counts into it.
    pub block: DeliveryRecord,
    /// Failed publishes by kind: an error reply's first word, or how the connection failed.
    pub failures: crate::metrics::ErrorCounts,
    /// Connections opened again after one failed (`-e`): attempts, and those that connected.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// Send → first delivery, ns.
    pub latency: LatencyHistogram,
    /// From the first publish to the last delivery.
    pub elapsed: Duration,
    /// First deliveries per second and 100 ms slot, with their latencies (the test's timeline).
    pub timeline: crate::metrics::Timeline,
    /// Ctrl-C or SIGTERM cut the run short.
    pub interrupted: bool,
    /// The first publisher connection that failed, as one line (without `-e` it ended its
    /// publisher, so the test is aborted as a benchmark's would be).
    pub connection_failure: Option<String>,
}

/// What publishers and receivers share while the test runs.
pub(crate) struct Live {
    /// The test's origin: stamps are nanoseconds since it.
    pub origin: Instant,
    /// Acknowledged publishes per channel (streams: one).
    pub published: Vec<AtomicU64>,
    /// The deliveries each message of a channel owes: its subscribers (a stream's entry: one
    /// consumer), so each second's publishes say how many deliveries they owe (`Second::owed`).
    pub fanout: Vec<u64>,
    /// First deliveries per receiver.
    pub received: Vec<AtomicU64>,
    /// Their publish → receive latencies' sum per receiver, ns (for the progress ticks:
    /// `seconds::Waiting`).
    pub latency_ns: Vec<AtomicU64>,
    /// Each receiver has ended (set before its connection is closed, so the monitor does not
    /// take a receiver that finished for one the server dropped).
    pub finished: Vec<AtomicBool>,
    /// Every publisher has finished.
    pub publishing_done: AtomicBool,
    /// Per publisher, the seconds it has handed to `timeline` (those before this one;
    /// `usize::MAX` once it ended): the journal waits for them (`seconds::Waiting`).
    pub published_through: Vec<AtomicUsize>,
    /// Stop now (a signal, or every receiver is done).
    pub stop: AtomicBool,
    /// The run's Ctrl-C/SIGTERM flag.
    pub interrupted: Arc<AtomicBool>,
    /// The seconds the receivers have finished (`seconds.rs`), handed on to the run's observer
    /// while the test goes on.
    pub timeline: SharedTimeline,
    /// Sharded subscribers that subscribed again after their channel's slot moved
    /// (`resubscribe.rs`).
    pub resubscribed: AtomicU64,
}

impl Live {
    /// `fanout`: each channel's receivers; `exact`: the seconds keep their latencies at full
    /// precision too (a journal is written: `Observer::exact_seconds`).
    fn new(
        fanout: Vec<u64>,
        (publishers, receivers): (u32, usize),
        interrupted: Arc<AtomicBool>,
        exact: bool,
    ) -> Self {
        let timeline = SharedTimeline::default();
        timeline.lock().unwrap_or_else(|e| e.into_inner()).exact = exact;
        Self {
            origin: Instant::now(),
            published: fanout.iter().map(|_| AtomicU64::new(0)).collect(),
            fanout,
            received: (0..receivers).map(|_| AtomicU64::new(0)).collect(),
            latency_ns: (0..receivers).map(|_| AtomicU64::new(0)).collect(),
            finished: (0..receivers).map(|_| AtomicBool::new(false)).collect(),
            publishing_done: AtomicBool::new(false),
            published_through: (0..publishers).map(|_| AtomicUsize::new(0)).collect(),
            stop: AtomicBool::new(false),
            interrupted,
            timeline,
            resubscribed: AtomicU64::new(0),
        }
    }

    /// Whether the seconds keep their latencies at full precision (`Live::new`).
    pub fn exact(&self) -> bool {
        self.timeline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exact
    }

    /// Nanoseconds since the origin.
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// Whether to stop at once.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.interrupted.load(Ordering::Relaxed)
    }
}

/// How long receivers wait for what is still owed after the last publish, at most, and without
/// any delivery: a lost message must not hold the run.
pub(crate) const DRAIN_IDLE: Duration = Duration::from_secs(2);

/// The most receivers wait after the last publish (a slow subscriber's backlog is counted as
/// lost beyond it, so the run stays bounded).
pub(crate) const DRAIN_MAX: Duration = Duration::from_secs(3);

/// Runs one delivery test to its end (all messages published and delivered, the drain's idle
/// limit, or a signal). A failure to set up (connect, subscribe, create the group) is an error;
/// failures during the test are counted. Each second the receivers finish goes to `observer`
/// while the test runs (`Observer::second`: the journal, live metrics).
///
/// `cluster`: the run's cluster (`--cluster`); each channel's subscribers and publishes, or the
/// stream and its group, then go to the primary owning its slot (`route.rs`).
pub fn run(
    spec: &DeliverySpec,
    (setup, cluster): (&ConnSetup, Option<&ClusterShared>),
    interrupted: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<DeliveryResult, EngineError> {
    let names: Vec<Vec<u8>> = match spec.mode {
        Mode::PubSub { channels, .. } => (0..channels).map(|k| spec.channel(k)).collect(),
        Mode::Stream { .. } => vec![spec.stream_key()],
    };
    let nodes = match cluster {
        Some(shared) => route::Nodes::cluster(setup, shared, &names)?,
        None => route::Nodes::single(setup, names.len()),
    };
    let mut result = match spec.mode {
        Mode::PubSub { .. } => pubsub::run(spec, &nodes, interrupted, observer)?,
        Mode::Stream { .. } => stream::run(spec, &nodes, interrupted, observer)?,
    };
    // The nodes, the moves followed and the subscribers that followed them: `--cluster` only.
    let block = &mut result.block;
    if cluster.is_none() {
        block.nodes.clear();
    }
    if block.nodes.is_empty() {
        (block.moved, block.resubscribed) = (None, None);
    }
    Ok(result)
}
