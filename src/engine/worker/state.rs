//! A worker's state: what the runner gives it, what it hands back, and the `Worker` itself with
//! its fields grouped by what uses them (the batch being written, the flow of requests, the
//! outage watch). Building it and running it to the end are here; the loop, sending, I/O,
//! replies, outages and cluster mode are each an `impl Worker` block in their own file, which
//! import this one and never the other way round.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mio::Poll;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::conn::{Conn, Placement};
use crate::engine::allkeys::AllKeys;
use crate::engine::cluster::{ClusterRun, ClusterWorker};
use crate::engine::conn::{Stream, Target};
use crate::engine::monitor::Live;
use crate::engine::pacer::Pacer;
use crate::engine::scan_walk::{self, ScanWalk};
use crate::engine::timer::Timer;
use crate::engine::{ConnSetup, EngineError, LoadSpec};
use crate::metrics::thread_cpu::ThreadCpuMark;
use crate::metrics::{ClusterStats, Recorder, SharedTimeline, ThreadCpuUsage};
use crate::workload::dataset::Dataset;
use crate::workload::distribution::KeyPattern;
use crate::workload::keys::{KeyGen, SequentialCounters};
use crate::workload::mix::Mix;
use crate::workload::sizes::SizeDist;
use crate::workload::template::{Gap, Placeholder, Template};

/// Read buffer shared by a worker's connections; bytes of an incomplete reply line are carried
/// per connection, so memory does not grow with `-c`.
const READ_BUF: usize = 64 * 1024;

/// What a worker hands back.
#[derive(Debug)]
pub(crate) struct WorkerResult {
    /// Everything it measured, merged into the test's result by the runner.
    pub(crate) recorder: Recorder,
    /// Cluster mode's per-node figures and redirect counts.
    pub(crate) cluster: Option<ClusterStats>,
    /// What stopped this worker, if anything did.
    pub(crate) fatal: Option<EngineError>,
    /// Its thread's CPU time over its life (the verdict's client side).
    pub(crate) cpu: ThreadCpuUsage,
    /// Measured commands it wrote, answered or not (the record's "issued").
    pub(crate) issued: u64,
}

/// What the runner gives a worker: its share of the test, the test's clock, and where it reports.
pub(crate) struct WorkerConfig<'a> {
    /// Seeds this worker's key generator apart from the others'.
    pub id: usize,
    pub setup: &'a ConnSetup,
    pub load: &'a LoadSpec,
    pub template: &'a Template,
    /// Commands this worker issues in the measured phase (`-n` share).
    pub quota: Option<u64>,
    /// When the test (warmup included) started: the first intended send time.
    pub start: Instant,
    /// Requests intended before this are warmup: sent and checked, not recorded.
    pub measure_start: Instant,
    /// `--duration`: no request is intended at or after this.
    pub deadline: Option<Instant>,
    /// This worker's share of `--rps`.
    pub rate_per_sec: Option<f64>,
    /// Where the progress figures are published for the monitor.
    pub live: &'a Live,
    /// The test's per-second timeline, which this worker adds its seconds to.
    pub timeline: SharedTimeline,
    /// Set by the monitor (Ctrl-C, another worker's failure): return at the next loop turn.
    pub stop: &'a AtomicBool,
    /// `--sequential`: the counters all workers draw keys from.
    pub sequential: Option<Arc<SequentialCounters>>,
    /// `--cluster --sequential` with one key per unit: every key of the range once, per node
    /// (`engine/allkeys.rs`); `quota` is then `None`.
    pub allkeys: Option<Arc<AllKeys>>,
    pub cluster: Option<&'a ClusterRun>,
    /// Cluster: load connections this worker opens to a primary that appears during the test.
    pub new_node_conns: usize,
    /// A staircase ramp (`LoadSpec::ramp`): the connections this worker grows to.
    pub ramp_target: usize,
}

/// How a batch is written, chosen once per test from the test's load (`send.rs` follows it), so
/// a batch takes one branch rather than a check of each option.
#[derive(Clone, Copy)]
pub(super) enum FillPath<'a> {
    /// `--dataset`: copy the next pre-encoded records.
    Dataset(&'a Dataset),
    /// `--ratio`: draw each unit's command from the mix (values sized with a size option).
    Mix(&'a Mix, Option<&'a SizeDist>),
    /// `--cluster`: fill for the connection's node.
    Cluster,
    /// `--cluster` with a mix: each unit drawn, and sent by the node its keys belong to
    /// (`cluster_mix.rs`).
    ClusterMix(&'a Mix, Option<&'a SizeDist>),
    /// `--data-size-range`/`--data-size-list` with value arguments: values sized per unit.
    Sized(&'a SizeDist),
    /// Placeholders overwritten in place.
    Plain,
    /// memtier's `--scan-incremental-iteration`: the unit rewritten with the connection's cursor
    /// in the argument at `arg` (`engine/scan_walk.rs`).
    Scan { arg: (usize, usize), walk: ScanWalk },
}

/// The batch buffer every connection starts from, its placeholders, its large values left out
/// (the plain path only: the other paths rewrite or copy whole units) and its unit length.
fn batch_buffer(
    cfg: &WorkerConfig<'_>,
    path: FillPath<'_>,
) -> (Vec<u8>, Vec<Placeholder>, Vec<Gap>, usize) {
    let pipeline = cfg.load.pipeline as usize;
    if matches!(path, FillPath::Plain)
        && let Some(s) = cfg.template.sparse_batch(pipeline)
    {
        return (s.buf, s.placeholders, s.gaps, s.unit_len);
    }
    let (mut wbuf, placeholders) = cfg.template.batch(pipeline);
    if matches!(path, FillPath::Mix(..) | FillPath::ClusterMix(..)) {
        // A mix writes every batch from empty: a buffer holding the template (a large value)
        // per connection would only cost memory.
        wbuf = Vec::new();
    }
    (wbuf, placeholders, Vec::new(), cfg.template.unit.len())
}

impl<'a> FillPath<'a> {
    fn of(load: &'a LoadSpec, template: &Template, cluster: bool) -> Self {
        if let Some(dataset) = &load.dataset {
            return FillPath::Dataset(dataset);
        }
        // The one `--command` (the mix's first, so the template): the memtier line is refused
        // without one of the form `SCAN <cursor> …` (`memtier/cli/scan.rs`).
        if let Some(walk) = load.scan_walk
            && let Some(arg) = scan_walk::split(&template.unit)
        {
            return FillPath::Scan {
                arg: (arg.start, arg.end),
                walk,
            };
        }
        if let Some(mix) = &load.mix {
            if cluster {
                return FillPath::ClusterMix(mix, load.value_sizes.as_ref());
            }
            return FillPath::Mix(mix, load.value_sizes.as_ref());
        }
        if cluster {
            return FillPath::Cluster;
        }
        match &load.value_sizes {
            Some(dist) if !template.values.is_empty() => FillPath::Sized(dist),
            _ => FillPath::Plain,
        }
    }
}

/// What writing a batch needs: the path, the key generators, where placeholders are, and the
/// unit's shape.
pub(super) struct Fill<'a> {
    pub(super) path: FillPath<'a>,
    /// Every reply to a batch is a plain success or an error, with nothing of its own to note:
    /// no mix command, no cluster node, no per-connection seconds, no SCAN cursor. The replies
    /// are then framed by `reply.rs`'s `frame_plain` (chosen once per test, as `path` is).
    pub(super) plain_replies: bool,
    pub(super) keys: KeyGen,
    /// A mix whose commands draw keys with their own patterns: a generator per command (empty
    /// otherwise: every command draws from `keys`).
    pub(super) mix_keys: Vec<KeyGen>,
    /// Where the batch buffers leave out large values, sent from the template's one copy by a
    /// gathered write (`io.rs`); empty unless the plain path has a value of at least
    /// `SHARED_VALUE_MIN` bytes, so every other batch is written as one buffer, as before.
    pub(super) gaps: Vec<Gap>,
    /// Placeholder offsets of a batch: the same for every connection's batch buffer.
    pub(super) placeholders: Vec<Placeholder>,
    /// Splits `placeholders` into units without storing unit boundaries.
    pub(super) placeholders_per_unit: usize,
    pub(super) unit_len: usize,
    pub(super) cmds_per_unit: u64,
    /// `allkeys`: the node and its request number of the batch's first unit, claimed by
    /// `decide` just before the batch is filled.
    pub(super) allkeys_claim: (usize, u64),
    /// Variable value sizes: the RNG sizes are drawn from (seeded per worker) and one drawn
    /// size per value argument of a unit (reused).
    pub(super) size_rng: Xoshiro256PlusPlus,
    pub(super) size_scratch: Vec<usize>,
    /// Where gaps take their values (`Gap::src`): the template, or a mix's
    /// (`Mix::value_sources`).
    pub(super) value_sources: Vec<&'a [u8]>,
    /// Cluster mode with a mix in memtier's order: the worker's place in the weights' cycle.
    /// One cycle for all its connections, as a memtier client's one cycle feeds its connection
    /// to every node (`cluster_mix.rs`), so the split holds over what the worker sends.
    pub(super) cluster_turn: u64,
    /// Cluster mode with a mix: units the last batch's fill drew and parked for other nodes,
    /// less the parked units it sent. memtier counts `-n` as requests drawn, so these move the
    /// quota (`cluster_mix.rs`).
    pub(super) park_delta: i64,
}

/// The flow of requests: what the quota allows, what was written, who is busy or waiting.
pub(super) struct Flow {
    /// Commands counted against the `-n` quota (measured phase only).
    pub(super) quota_used: u64,
    /// Nothing more will be sent (quota issued or deadline passed); the loop ends once nothing
    /// is in flight.
    pub(super) exhausted: bool,
    /// Connections with a batch in flight (or waiting for a reconnect).
    pub(super) active: usize,
    /// `--rps`: connections waiting for the next send time.
    pub(super) free: Vec<usize>,
    pub(super) pacer: Option<Pacer>,
    /// `--rps` on Linux: wakes the poll at the next send time with nanosecond precision
    /// (`epoll_wait`'s timeout is whole milliseconds).
    pub(super) timer: Option<Timer>,
}

/// Connections that failed and are coming back (`outage.rs`).
pub(super) struct Outages {
    /// Connections down after a failure, waiting for their backoff.
    pub(super) down: usize,
    /// Connections being reopened after a failure.
    pub(super) recovering: usize,
    /// When the outage watch next checks for timeouts.
    pub(super) next_watch: Instant,
    /// Backoff jitter's generator state (never 0).
    pub(super) jitter_state: u64,
}

/// One worker thread's state. It owns its connections and its poller outright, so deciding to
/// send and sending happen in one call with no queue or lock in between; everything it measures
/// stays in its own recorder until the test ends.
pub(crate) struct Worker<'a> {
    pub(super) cfg: WorkerConfig<'a>,
    /// Cluster mode: this worker's copy of the slot map, its side connections and redirects.
    pub(super) cluster: Option<ClusterWorker<'a>>,
    pub(super) poll: Poll,
    /// Indexed by poll token: the load connections the runner opened, then those opened during
    /// the test (side connections, load connections to a new primary); a `-k 0` reconnect keeps
    /// its index.
    pub(super) conns: Vec<Conn>,
    /// The read buffer all connections share (bytes of a partial reply are carried per
    /// connection), so memory does not grow with `-c`.
    pub(super) rbuf: Vec<u8>,
    pub(super) rec: Recorder,
    pub(super) fill: Fill<'a>,
    pub(super) flow: Flow,
    pub(super) outages: Outages,
    /// memtier's staircase ramp: when the next step's connections open, and how many are
    /// still to open (`ramp.rs`).
    pub(super) ramp: Option<RampState>,
}

/// A worker's place in the staircase ramp.
pub(super) struct RampState {
    pub(super) next_at: Instant,
    pub(super) left: u32,
    /// Opened so far (the progress figures' connection count adds them).
    pub(super) opened: u32,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        cfg: WorkerConfig<'a>,
        streams: Vec<(Stream, Placement)>,
        poll: Poll,
    ) -> Self {
        let cluster = cfg.cluster.map(ClusterWorker::new);
        let path = FillPath::of(cfg.load, cfg.template, cluster.is_some());
        let (wbuf, placeholders, gaps, unit_len) = batch_buffer(&cfg, path);
        let conns = open_conns(&cfg, cluster.as_ref(), streams, &wbuf);
        // Poisson gaps: one stream per worker, repeatable with --seed.
        let pacer_seed = cfg.load.seed ^ (cfg.id as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let pacer = cfg
            .rate_per_sec
            .map(|rate| Pacer::new(cfg.start, rate, cfg.load.arrival, pacer_seed));
        let fill = Fill {
            path,
            plain_replies: cluster.is_none()
                && !cfg.load.conn_seconds
                && matches!(
                    path,
                    FillPath::Plain | FillPath::Sized(_) | FillPath::Dataset(_)
                ),
            gaps,
            keys: key_gen(
                &cfg,
                cfg.load.key_pattern,
                cfg.load.seed,
                cfg.sequential.clone(),
            ),
            mix_keys: mix_keys(&cfg),
            placeholders,
            placeholders_per_unit: cfg.template.placeholders.len(),
            unit_len,
            cmds_per_unit: u64::from(cfg.template.commands_per_unit),
            allkeys_claim: (0, 0),
            size_rng: Xoshiro256PlusPlus::seed_from_u64(
                pacer_seed.rotate_left(17) ^ 0x5eed_5e1d_da7a_0001,
            ),
            size_scratch: Vec::with_capacity(most_values(&cfg)),
            cluster_turn: 0,
            park_delta: 0,
            value_sources: match path {
                FillPath::Mix(mix, _) => mix.value_sources(),
                _ => vec![&cfg.template.unit[..]],
            },
        };
        let ramp = cfg.load.ramp.map(|r| RampState {
            next_at: cfg.start + r.every,
            left: u32::try_from(cfg.ramp_target.saturating_sub(conns.len())).unwrap_or(u32::MAX),
            opened: 0,
        });
        Self {
            rec: recorder(&cfg),
            outages: Outages::new(cfg.start, cfg.id),
            cfg,
            cluster,
            poll,
            conns,
            rbuf: vec![0; READ_BUF],
            fill,
            flow: Flow {
                quota_used: 0,
                exhausted: false,
                active: 0,
                free: Vec::new(),
                pacer,
                timer: None,
            },
            ramp,
        }
    }

    pub(crate) fn run(mut self) -> WorkerResult {
        let cpu = ThreadCpuMark::now();
        // For the main thread's once-a-second CPU reading (`engine::seconds::ThreadClocks`).
        self.cfg
            .live
            .tid
            .store(crate::metrics::thread_cpu::current_tid(), Ordering::Relaxed);
        let fatal = self.event_loop().err();
        self.count_unanswered();
        if fatal.is_some() {
            self.cfg.live.failed.store(true, Ordering::Relaxed);
        }
        self.publish();
        self.hand_over_conn_seconds();
        match &self.cluster {
            Some(cl) => self.rec.flush_cluster(Some(&cl.stats)),
            None => self.rec.flush(),
        }
        WorkerResult {
            issued: self.rec.issued,
            cluster: self.cluster.map(|c| c.stats),
            recorder: self.rec,
            fatal,
            cpu: cpu.usage_since(),
        }
    }

    /// memtier's `--client-stats`: each load connection's seconds (side connections of cluster
    /// mode are not memtier's clients) added to the test's timeline, once, at the end.
    fn hand_over_conn_seconds(&mut self) {
        if !self.cfg.load.conn_seconds {
            return;
        }
        let id = self.cfg.id;
        let own: Vec<_> = (self.conns.iter_mut())
            .filter(|c| c.bind.side.is_none())
            .enumerate()
            .map(|(n, c)| {
                let mut s = std::mem::take(&mut c.seconds);
                (s.worker, s.conn) = (id, n);
                s
            })
            .collect();
        let mut timeline = self.cfg.timeline.lock().unwrap_or_else(|e| e.into_inner());
        timeline.connections.extend(own);
    }

    /// Makes the live counters visible to the main thread (plain stores: one writer).
    pub(super) fn publish(&self) {
        let l = self.cfg.live;
        l.all_completed
            .store(self.rec.all_completed, Ordering::Relaxed);
        l.all_latency_sum_ns
            .store(self.rec.all_latency_sum_ns, Ordering::Relaxed);
        l.measured_completed
            .store(self.rec.completed, Ordering::Relaxed);
        l.measured_latency_sum_ns
            .store(self.rec.latency_sum_ns, Ordering::Relaxed);
        l.measured_bytes
            .store(self.rec.mix_bytes, Ordering::Relaxed);
        l.issued.store(self.rec.issued, Ordering::Relaxed);
        l.failures.store(self.rec.failures, Ordering::Relaxed);
        let down = self.outages.down + self.outages.recovering;
        l.conns_down.store(down as u64, Ordering::Relaxed);
        if let Some(r) = &self.ramp {
            l.conns_added.store(u64::from(r.opened), Ordering::Relaxed);
        }
    }

    /// Where node `node` is (the one server outside cluster mode).
    pub(super) fn target(&self, node: usize) -> &Target {
        match &self.cluster {
            Some(cl) => &cl.targets[node],
            None => &self.cfg.setup.target,
        }
    }

    /// Redirected requests not answered yet.
    pub(super) fn outstanding(&self) -> usize {
        self.cluster.as_ref().map_or(0, |c| c.outstanding())
    }
}

/// The runner's connections as the worker's `Conn`s, each starting from the batch buffer `wbuf`
/// with the run's prefix to answer first; in cluster mode each is routed to its node's shard.
fn open_conns(
    cfg: &WorkerConfig<'_>,
    cluster: Option<&ClusterWorker<'_>>,
    streams: Vec<(Stream, Placement)>,
    wbuf: &[u8],
) -> Vec<Conn> {
    let prefix = cfg.setup.prefix_commands.len();
    let epoch = cfg.setup.target.epoch();
    streams
        .into_iter()
        .map(|(stream, place)| {
            let route = cluster
                .and_then(|c| c.shard_of.get(place.node).copied())
                .unwrap_or(0);
            let buf = wbuf.to_vec();
            let mut c = Conn::new(stream, false, buf, prefix, place, route, None, cfg.start);
            c.epoch = epoch;
            c
        })
        .collect()
}

/// The worker's recorder: its measured phase starts with the test's, it keeps a row per mix
/// command, and in cluster mode per node.
fn recorder(cfg: &WorkerConfig<'_>) -> Recorder {
    let mixed = cfg.load.mix.as_ref().map_or(0, |m| m.commands.len());
    let rec = Recorder::new(cfg.measure_start, cfg.timeline.clone()).with_commands(mixed);
    if cfg.cluster.is_some() {
        return rec.in_cluster();
    }
    rec
}

/// The most value arguments any unit this worker writes has (the template's or a mix
/// command's): the size scratch is allocated once at this length, never on the hot path.
fn most_values(cfg: &WorkerConfig<'_>) -> usize {
    (cfg.load.mix.iter())
        .flat_map(|m| m.commands.iter().map(|c| c.template.values.len()))
        .chain([cfg.template.values.len()])
        .max()
        .unwrap_or(0)
}

/// A key generator of this worker drawing with `pattern` from `seed`'s stream (`shared`: the
/// counters of a sequential or parallel pattern), within the test's keyspace, shard and drift.
/// The worker's own keys and each mix command's are built the same way, so they differ only in
/// these three.
fn key_gen(
    cfg: &WorkerConfig<'_>,
    pattern: KeyPattern,
    seed: u64,
    shared: Option<Arc<SequentialCounters>>,
) -> KeyGen {
    let load = cfg.load;
    KeyGen::new(load.keyspace.unwrap_or(0), seed, cfg.id as u64, shared)
        .with_pattern(pattern, load.key_min, u64::from(load.clients))
        .in_shard(load.shard)
        .with_drift(load.key_drift, cfg.start)
}

impl Outages {
    /// No connection down yet; the watch first looks at `now`, and the backoff jitter is seeded
    /// apart per worker and per run, so reconnects after a shared outage do not come in step.
    fn new(now: Instant, worker: usize) -> Self {
        let id = worker as u64;
        Self {
            down: 0,
            recovering: 0,
            next_watch: now,
            jitter_state: (jitter_seed(now) ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
        }
    }
}

/// A mix with per-command key patterns: one generator per command, each its own stream (its
/// pattern's shared counters for sequential and parallel ones); empty for any other test.
fn mix_keys(cfg: &WorkerConfig) -> Vec<KeyGen> {
    let load = cfg.load;
    let Some(mix) = load.mix.as_ref().filter(|m| m.has_own_keys()) else {
        return Vec::new();
    };
    mix.commands
        .iter()
        .zip(&mix.counters)
        .enumerate()
        .map(|(k, (c, counters))| {
            let pattern = c.keys.unwrap_or(load.key_pattern);
            let counted = matches!(pattern, KeyPattern::Sequential | KeyPattern::Parallel);
            let shared = match (counted, c.keys.is_some()) {
                (false, _) => None,
                (true, true) => Some(counters.clone()),
                (true, false) => cfg.sequential.clone(),
            };
            let seed = load.seed ^ (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            key_gen(cfg, pattern, seed, shared)
        })
        .collect()
}

/// A failure of the poller itself (not of a connection).
pub(super) fn loop_error(e: io::Error) -> EngineError {
    EngineError::Other(format!("event loop: {e}"))
}

/// A seed for backoff jitter that differs between workers and runs (the clock's low bits).
fn jitter_seed(now: Instant) -> u64 {
    let since = now.elapsed().as_nanos() as u64;
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    since ^ wall.rotate_left(17)
}
