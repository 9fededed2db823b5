//! The load engine: worker threads that own their connections, send pre-encoded batches, scan
//! replies and record each request's latency.
//!
//! Owns: sockets, pacing, in-flight accounting, latency recording. Must not: format output or
//! decide exit codes (it returns data and typed errors). Invariants: every request is timed on its
//! own reply from its intended send time; nothing is allocated per request in steady state; no
//! queue or lock sits between deciding to send and sending.

pub mod cluster;
pub mod conn;
pub mod control;
mod idle;
pub mod limits;
mod push;
mod timer;
pub mod tls;
mod worker;

pub use cluster::{ClusterRun, ClusterShared};
pub use conn::{Target, Transport};
pub use idle::run_idle;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::metrics::{
    ClusterStats, ErrorCounts, LatencyHistogram, Outcome, PushCounts, TestResult,
};
use crate::workload::Template;
use crate::workload::dataset::Dataset;
use crate::workload::keys::SequentialCounters;

/// A fatal problem. `main` prints it and exits 1.
///
/// Where valkey-benchmark has a message for the same condition (its spec, §4.8), the text starts
/// with the reference's words (`Could not connect to server at …`, `Error from server: …`,
/// `Error: …`), because scripts and test harnesses match them; respbench's detail and hint follow
/// on the same line. [`EngineError::Other`] is respbench's own wording and gets its name in front
/// ([`EngineError::is_reference_text`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// Could not connect (or reconnect) to the server.
    Connect { target: String, reason: String },
    /// A socket failed or the server closed a connection.
    Io(String),
    /// The server sent bytes that are not RESP (the message says "protocol error: …").
    Protocol(String),
    /// An error reply that stops the run; `hint` says how to go on where there is a way.
    Server {
        message: String,
        hint: Option<&'static str>,
    },
    /// An error reply to AUTH/SELECT/HELLO sent before the first batch.
    Setup {
        command: &'static str,
        message: String,
    },
    /// The password (or user) was refused on a setup connection.
    Auth { target: String, message: String },
    /// `CLUSTER SLOTS` could not be fetched or read from the entry node.
    ClusterConfig { target: String, reason: String },
    /// Anything else that stops the run before it starts.
    Other(String),
    /// The TLS handshake (or the first exchange after it) failed.
    Tls { target: String, reason: String },
}

impl EngineError {
    /// Whether the message starts with valkey-benchmark's own words for the condition (then it is
    /// printed as it is; otherwise after `respbench: `).
    pub fn is_reference_text(&self) -> bool {
        !matches!(self, Self::Other(_))
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { target, reason } => {
                write!(f, "Could not connect to server at {target}: {reason}")
            }
            Self::Io(m) | Self::Protocol(m) => write!(f, "Error: {m}"),
            Self::Other(m) => f.write_str(m),
            Self::Server { message, hint } => {
                write!(f, "Error from server: {message}")?;
                match hint {
                    Some(h) => write!(f, " ({h})"),
                    None => Ok(()),
                }
            }
            Self::Setup { command, message } => {
                write!(f, "Error from server: {message} (the reply to {command})")
            }
            // Two lines, as the reference prints them.
            Self::Auth { target, message } => {
                write!(f, "Node {target} replied with error:\n{message}")
            }
            Self::ClusterConfig { target, reason } => {
                write!(
                    f,
                    "Failed to fetch cluster configuration from {target}: {reason}"
                )
            }
            Self::Tls { target, reason } => {
                write!(
                    f,
                    "Could not negotiate a TLS connection: {target}: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for EngineError {}

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
    /// `-r`; `None` leaves placeholders literal.
    pub keyspace: Option<u64>,
    pub sequential: bool,
    pub seed: u64,
    pub on_error: ErrorPolicy,
    /// `--dataset`: each unit is the next record's pre-encoded command instead of the template's
    /// unit (the template still gives the commands per unit).
    pub dataset: Option<Arc<Dataset>>,
}

/// Live figures for the progress line, read by the main thread every 250 ms.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    /// Still in `--warmup`.
    pub warming_up: bool,
    /// Seconds since the measured phase began (0 while warming up).
    pub measured_secs: f64,
    /// Non-error replies counted in the measured phase.
    pub measured_completed: u64,
    /// Sum of their corrected latencies.
    pub measured_latency_sum_ns: u64,
    /// Replies (warmup included) and their latency sum in the last interval.
    pub interval_completed: u64,
    pub interval_latency_sum_ns: u64,
    pub interval_secs: f64,
}

/// The caller's side of a running test: Ctrl-C and the progress line.
pub trait Observer {
    /// True once the user asked to stop.
    fn interrupted(&self) -> bool;
    /// Called every 250 ms with live figures.
    fn tick(&mut self, snapshot: &Snapshot);
}

/// Progress interval, as the reference.
pub const TICK: Duration = Duration::from_millis(250);

/// Per-worker live counters, written by one worker and read by the main thread.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct Live {
    all_completed: AtomicU64,
    all_latency_sum_ns: AtomicU64,
    measured_completed: AtomicU64,
    measured_latency_sum_ns: AtomicU64,
    failed: AtomicBool,
}

/// Where a load connection goes (cluster mode; node 0 otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Placement {
    pub node: usize,
    /// A slot of the node's shard, followed after a failover.
    pub home: u16,
    /// Bound to a primary (follows the shard's primary) rather than to a replica.
    pub follow_primary: bool,
}

/// What a worker hands back.
#[derive(Debug)]
pub(crate) struct WorkerResult {
    cluster: Option<ClusterStats>,
    latency: LatencyHistogram,
    latency_uncorrected: LatencyHistogram,
    completed: u64,
    errors: ErrorCounts,
    pushes: PushCounts,
    last_reply: Option<Instant>,
    fatal: Option<EngineError>,
}

/// Runs one test: opens `clients` fresh connections, drives them from `workers` threads until the
/// stop condition, Ctrl-C or a fatal error, and returns the merged result. The error, if any, is
/// returned beside the partial result so that nothing measured is lost.
pub fn run_test(
    setup: &ConnSetup,
    load: &LoadSpec,
    title: &str,
    template: &Template,
    cluster: Option<&ClusterRun>,
    observer: &mut dyn Observer,
) -> (TestResult, Option<EngineError>) {
    let empty = |outcome| TestResult::empty(title, load.rps, outcome);

    // Where each connection goes: the server, or in cluster mode `-c` connections per serving
    // node, interleaved so that workers get a mix.
    let mut places: Vec<(Target, Placement)> = Vec::new();
    match cluster {
        None => {
            places.extend((0..load.clients).map(|_| (setup.target.clone(), Placement::default())))
        }
        Some(run) => {
            let topo = run.shared.topology();
            let primaries = topo.primaries();
            let per_node: Vec<(Target, Placement)> = run
                .serving
                .iter()
                .map(|&node| {
                    let place = Placement {
                        node,
                        home: topo.first_slot(node).unwrap_or(0),
                        follow_primary: primaries.contains(&node),
                    };
                    (run.shared.target(node), place)
                })
                .collect();
            for _ in 0..load.clients {
                places.extend(per_node.iter().cloned());
            }
        }
    }
    let total_conns = places.len();

    // Connect everything first (connect time is not part of the measured phase, as in the
    // reference), spreading connections round-robin over the workers.
    let workers = load.workers.clamp(1, total_conns);
    let mut per_worker: Vec<Vec<(conn::Stream, Placement)>> =
        (0..workers).map(|_| Vec::new()).collect();
    for (i, (target, place)) in places.into_iter().enumerate() {
        if observer.interrupted() {
            return (empty(Outcome::Interrupted), None);
        }
        match target.connect_for_worker() {
            Ok(s) => per_worker[i % workers].push((s, place)),
            Err(e) => return (empty(Outcome::Aborted), Some(e)),
        }
    }

    let stop = AtomicBool::new(false);
    let lives: Vec<Live> = (0..workers).map(|_| Live::default()).collect();
    let sequential = load
        .sequential
        .then(|| Arc::new(SequentialCounters::default()));
    let start = Instant::now();
    let measure_start = start + load.warmup;
    let deadline = match load.stop {
        Stop::After(d) => Some(measure_start + d),
        Stop::Requests(_) => None,
    };
    let total_clients = total_conns as u64;

    let mut polls = Vec::with_capacity(workers);
    let mut wakers = Vec::with_capacity(workers);
    for _ in 0..workers {
        match mio::Poll::new().and_then(|p| {
            let w = mio::Waker::new(p.registry(), worker::WAKER)?;
            Ok((p, w))
        }) {
            Ok((p, w)) => {
                polls.push(p);
                wakers.push(w);
            }
            Err(e) => {
                return (
                    empty(Outcome::Aborted),
                    Some(EngineError::Other(format!(
                        "cannot create an event loop: {e}"
                    ))),
                );
            }
        }
    }

    let mut rps_samples = Vec::new();
    let mut interrupted = false;
    let mut spawn_error = None;
    let refresher_done = AtomicBool::new(false);
    let results: Vec<WorkerResult> = std::thread::scope(|scope| {
        if let Some(run) = cluster {
            let shared = &run.shared;
            let done = &refresher_done;
            let _ = std::thread::Builder::new()
                .name("respbench-cluster".into())
                .spawn_scoped(scope, move || cluster::refresher(shared, done));
        }
        let mut handles = Vec::with_capacity(workers);
        for (id, (streams, poll)) in per_worker.into_iter().zip(polls).enumerate() {
            let share = streams.len() as u64;
            let quota = match load.stop {
                // Split -n in proportion to each worker's connections; the first workers take
                // the remainder so the total is exact.
                // Split in whole units (a `;` sequence is sent whole), so the total is the
                // same as with one worker: -n rounded up to a whole number of units.
                Stop::Requests(n) => {
                    let per_unit = u64::from(template.commands_per_unit.max(1));
                    let units = quota_of(
                        id as u64,
                        workers as u64,
                        total_clients,
                        n.div_ceil(per_unit),
                    );
                    Some(units.saturating_mul(per_unit))
                }
                Stop::After(_) => None,
            };
            let rate = load
                .rps
                .map(|r| r as f64 * share as f64 / total_clients as f64);
            let cfg = worker::WorkerConfig {
                id,
                setup,
                load,
                template,
                quota,
                start,
                measure_start,
                deadline,
                rate_per_sec: rate,
                live: &lives[id],
                stop: &stop,
                sequential: sequential.clone(),
                cluster,
                new_node_conns: (load.clients as usize).div_ceil(workers),
            };
            let handle = std::thread::Builder::new()
                .name(format!("respbench-worker-{id}"))
                .spawn_scoped(scope, move || worker::Worker::new(cfg, streams, poll).run());
            match handle {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(EngineError::Other(format!(
                        "cannot start a worker thread: {e}"
                    )));
                    stop.store(true, Ordering::Relaxed);
                    for w in &wakers {
                        let _ = w.wake();
                    }
                    break;
                }
            }
        }

        // The main thread watches: progress ticks, Ctrl-C, a worker's fatal error.
        let mut last_tick = start;
        let mut last_all = (0u64, 0u64);
        let mut last_measured = 0u64;
        let mut last_sample_at: Option<Instant> = None;
        let mut stop_sent = false;
        loop {
            if handles.iter().all(|h| h.is_finished()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            let failed = lives.iter().any(|l| l.failed.load(Ordering::Relaxed));
            if !stop_sent && (failed || observer.interrupted()) {
                interrupted = !failed;
                stop.store(true, Ordering::Relaxed);
                for w in &wakers {
                    let _ = w.wake();
                }
                stop_sent = true;
            }
            let now = Instant::now();
            if now.duration_since(last_tick) >= TICK {
                let all = lives.iter().fold((0, 0), |acc, l| {
                    (
                        acc.0 + l.all_completed.load(Ordering::Relaxed),
                        acc.1 + l.all_latency_sum_ns.load(Ordering::Relaxed),
                    )
                });
                let measured = lives.iter().fold((0, 0), |acc, l| {
                    (
                        acc.0 + l.measured_completed.load(Ordering::Relaxed),
                        acc.1 + l.measured_latency_sum_ns.load(Ordering::Relaxed),
                    )
                });
                let warming_up = now < measure_start;
                let snap = Snapshot {
                    warming_up,
                    measured_secs: now.saturating_duration_since(measure_start).as_secs_f64(),
                    measured_completed: measured.0,
                    measured_latency_sum_ns: measured.1,
                    interval_completed: all.0 - last_all.0,
                    interval_latency_sum_ns: all.1 - last_all.1,
                    interval_secs: now.duration_since(last_tick).as_secs_f64(),
                };
                if !warming_up && load.rps.is_some() {
                    // Achieved rate per interval for the RPS summary; the first interval starts
                    // at the measured phase's start, not at an earlier test's.
                    let from = last_sample_at.unwrap_or(measure_start);
                    let dt = now.duration_since(from).as_secs_f64();
                    if dt > 0.0 {
                        rps_samples.push((measured.0 - last_measured) as f64 / dt);
                    }
                    last_sample_at = Some(now);
                    last_measured = measured.0;
                }
                observer.tick(&snap);
                last_all = all;
                last_tick = now;
            }
        }
        let results = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        refresher_done.store(true, Ordering::Relaxed);
        results
    });

    let mut result = empty(Outcome::Completed);
    result.rps_samples = rps_samples;
    let mut fatal = spawn_error;
    let mut last_reply: Option<Instant> = None;
    for r in results {
        result.latency.merge(&r.latency);
        result.latency_uncorrected.merge(&r.latency_uncorrected);
        result.completed += r.completed;
        result.errors.merge(&r.errors);
        result.pushes.merge(&r.pushes);
        if let Some(c) = &r.cluster {
            result
                .cluster
                .get_or_insert_with(ClusterStats::default)
                .merge(c);
        }
        last_reply = last_reply.max(r.last_reply);
        if fatal.is_none() {
            fatal = r.fatal;
        }
    }
    let end = if interrupted || fatal.is_some() {
        Instant::now()
    } else {
        last_reply.unwrap_or_else(Instant::now)
    };
    result.elapsed = end.saturating_duration_since(measure_start);
    if let (Some(run), Some(stats)) = (cluster, result.cluster.as_mut()) {
        let topo = run.shared.topology();
        let primaries = topo.primaries();
        while stats.nodes.len() < topo.nodes.len() {
            stats.nodes.push(crate::metrics::NodeStats {
                address: String::new(),
                role: "",
                completed: 0,
                latency: LatencyHistogram::new(),
            });
        }
        for (i, n) in stats.nodes.iter_mut().enumerate() {
            if let Some(addr) = topo.nodes.get(i) {
                n.address = addr.display();
            }
            n.role = if primaries.contains(&i) {
                "primary"
            } else {
                "replica"
            };
        }
    }
    result.outcome = if fatal.is_some() {
        Outcome::Aborted
    } else if interrupted {
        Outcome::Interrupted
    } else {
        Outcome::Completed
    };
    (result, fatal)
}

/// Worker `w`'s share of `-n`: in proportion to its connections, the remainder going one each to
/// the first workers, so the shares add up to exactly `n`.
fn quota_of(w: u64, workers: u64, total_conns: u64, n: u64) -> u64 {
    let share = |w: u64| {
        (u128::from(n) * u128::from(conns_of(w, workers, total_conns)) / u128::from(total_conns))
            as u64
    };
    let assigned: u64 = (0..workers).map(share).sum();
    share(w) + u64::from(w < n - assigned)
}

/// Connections of worker `w` under round-robin assignment of `total` connections.
fn conns_of(w: u64, workers: u64, total: u64) -> u64 {
    total / workers + u64::from(w < total % workers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_add_up_to_n_exactly() {
        for (workers, conns, n) in [
            (1, 50, 100_000),
            (3, 50, 100_001),
            (7, 10, 3),
            (2, 3, u64::MAX),
        ] {
            let total: u128 = (0..workers)
                .map(|w| u128::from(quota_of(w, workers, conns, n)))
                .sum();
            assert_eq!(
                total,
                u128::from(n),
                "{workers} workers, {conns} conns, n={n}"
            );
        }
    }

    #[test]
    fn round_robin_counts_add_up() {
        for total in 1..40u64 {
            for workers in 1..=total.min(7) {
                let sum: u64 = (0..workers).map(|w| conns_of(w, workers, total)).sum();
                assert_eq!(sum, total);
            }
        }
    }
}
