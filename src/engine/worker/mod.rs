//! One worker thread: its connections, its event loop, its recorder.
//!
//! Per request in steady state (closed loop, `-P 1`): one `write`, one `read` (a short read means
//! the socket is drained, so no second read to see EAGAIN), a share of one `epoll_wait`, and two
//! clock reads (vDSO, no syscall). Write interest is registered only while a write is partial.

mod cluster;
mod cluster_fail;
mod conn;
mod outage;
mod reply;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use self::conn::{Conn, State};
use super::cluster::{ClusterRun, ClusterWorker};
use super::conn::{Stream, Target};
use super::monitor::Live;
use super::pacer::Pacer;
use super::timer::Timer;
use super::{ConnSetup, EngineError, LoadSpec};
use crate::metrics::thread_cpu::ThreadCpuMark;
use crate::metrics::{ClusterStats, Recorder, SharedTimeline, ThreadCpuUsage};
use crate::workload::distribution::KeyPattern;
use crate::workload::keys::{KeyGen, SequentialCounters};
use crate::workload::sizes::fill_sized;
use crate::workload::template::{Placeholder, Template, fill};

/// The poll token of the waker the main thread uses to stop a worker.
pub(crate) const WAKER: Token = Token(usize::MAX);
/// The poll token of the `--rps` timerfd.
const TIMER: Token = Token(usize::MAX - 1);

/// Read buffer shared by a worker's connections; bytes of an incomplete reply line are carried
/// per connection, so memory does not grow with `-c`.
const READ_BUF: usize = 64 * 1024;
/// A single RESP line longer than this is treated as a protocol error.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// With `--duration`, how long replies still in flight at the end are waited for.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Where a load connection goes (cluster mode; node 0 otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Placement {
    /// The node index in the cluster's topology.
    pub node: usize,
    /// A slot of the node's shard, followed after a failover.
    pub home: u16,
    /// Bound to a primary (follows the shard's primary) rather than to a replica.
    pub follow_primary: bool,
}

/// What a worker hands back.
#[derive(Debug)]
pub(crate) struct WorkerResult {
    /// Everything it measured, merged into the test's result by the runner.
    pub(super) recorder: Recorder,
    /// Cluster mode's per-node figures and redirect counts.
    pub(super) cluster: Option<ClusterStats>,
    /// What stopped this worker, if anything did.
    pub(super) fatal: Option<EngineError>,
    /// Its thread's CPU time over its life (the verdict's client side).
    pub(super) cpu: ThreadCpuUsage,
    /// Measured commands it wrote (answered or not).
    pub(super) sent: u64,
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
    pub cluster: Option<&'a ClusterRun>,
    /// Cluster: load connections this worker opens to a primary that appears during the test.
    pub new_node_conns: usize,
}

/// What a free connection does next.
enum Decision {
    /// A batch of `units` units (fewer than `-P` for the last batch of a `-n` share), timed from
    /// `intended`.
    Send {
        units: usize,
        intended: Instant,
        warmup: bool,
    },
    /// `--rps`: the next send time is in the future.
    Wait,
    /// Nothing more to send in this test.
    Done,
}

/// One worker thread's state. It owns its connections and its poller outright, so deciding to
/// send and sending happen in one call with no queue or lock in between; everything it measures
/// stays in its own recorder until the test ends.
pub(crate) struct Worker<'a> {
    cfg: WorkerConfig<'a>,
    /// Cluster mode: this worker's copy of the slot map, its side connections and redirects.
    cluster: Option<ClusterWorker<'a>>,
    poll: Poll,
    /// Indexed by poll token: the load connections the runner opened, then those opened during
    /// the test (side connections, load connections to a new primary); a `-k 0` reconnect keeps
    /// its index.
    conns: Vec<Conn>,
    /// The read buffer all connections share (bytes of a partial reply are carried per
    /// connection), so memory does not grow with `-c`.
    rbuf: Vec<u8>,
    rec: Recorder,
    keys: KeyGen,
    /// Placeholder offsets of a batch: the same for every connection's `wbuf`.
    batch_placeholders: Vec<Placeholder>,
    /// Splits `batch_placeholders` into units without storing unit boundaries.
    placeholders_per_unit: usize,
    unit_len: usize,
    cmds_per_unit: u64,
    /// Commands issued against the quota (measured phase only).
    issued: u64,
    /// Measured commands written, with or without a quota (the record's "issued").
    sent: u64,
    /// Nothing more will be sent (quota issued or deadline passed); the loop ends once nothing
    /// is in flight.
    exhausted: bool,
    /// Connections with a batch in flight (or waiting for a reconnect).
    active: usize,
    /// `--rps`: connections waiting for the next send time.
    free: Vec<usize>,
    pacer: Option<Pacer>,
    /// Variable value sizes: the RNG sizes are drawn from (seeded per worker) and one drawn
    /// size per value argument of a unit (reused).
    size_rng: Xoshiro256PlusPlus,
    size_scratch: Vec<usize>,
    /// A mix whose commands draw keys with their own patterns: a generator per command (empty
    /// otherwise: every command draws from `keys`).
    mix_keys: Vec<KeyGen>,
    /// `--rps` on Linux: wakes the poll at the next send time with nanosecond precision
    /// (`epoll_wait`'s timeout is whole milliseconds).
    timer: Option<Timer>,
    /// Connections down after a failure, waiting for their backoff (`outage.rs`).
    down: usize,
    /// Connections being reopened after a failure.
    recovering: usize,
    /// When the outage watch next checks for timeouts.
    next_watch: Instant,
    /// Backoff jitter's generator state (never 0).
    jitter_state: u64,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        cfg: WorkerConfig<'a>,
        streams: Vec<(Stream, Placement)>,
        poll: Poll,
    ) -> Self {
        let (wbuf, batch_placeholders) = cfg.template.batch(cfg.load.pipeline as usize);
        let now = cfg.start;
        let cluster = cfg.cluster.map(ClusterWorker::new);
        let conns = streams
            .into_iter()
            .map(|(stream, place)| {
                let route = cluster
                    .as_ref()
                    .and_then(|c| c.shard_of.get(place.node).copied())
                    .unwrap_or(0);
                let prefix = cfg.setup.prefix_commands.len();
                let mut c = Conn::new(stream, false, wbuf.clone(), prefix, place, route, None, now);
                c.epoch = cfg.setup.target.epoch();
                c
            })
            .collect();
        let keys = KeyGen::new(
            cfg.load.keyspace.unwrap_or(0),
            cfg.load.seed,
            cfg.id as u64,
            cfg.sequential.clone(),
        )
        .with_pattern(
            cfg.load.key_pattern,
            cfg.load.key_min,
            u64::from(cfg.load.clients),
        )
        .in_shard(cfg.load.shard);
        // Poisson gaps: one stream per worker, repeatable with --seed.
        let pacer_seed = cfg.load.seed ^ (cfg.id as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let pacer = cfg
            .rate_per_sec
            .map(|rate| Pacer::new(cfg.start, rate, cfg.load.arrival, pacer_seed));
        let mixed = cfg.load.mix.as_ref().map_or(0, |m| m.commands.len());
        let mix_keys = mix_keys(&cfg);
        let rec = Recorder::new(cfg.measure_start, cfg.timeline.clone()).with_commands(mixed);
        let cfg_values = cfg
            .load
            .mix
            .iter()
            .flat_map(|m| m.commands.iter().map(|c| c.template.values.len()))
            .chain([cfg.template.values.len()])
            .max()
            .unwrap_or(0);
        let id = cfg.id;
        Self {
            placeholders_per_unit: cfg.template.placeholders.len(),
            unit_len: cfg.template.unit.len(),
            cmds_per_unit: u64::from(cfg.template.commands_per_unit),
            cfg,
            cluster,
            poll,
            conns,
            rbuf: vec![0; READ_BUF],
            rec,
            keys,
            batch_placeholders,
            issued: 0,
            sent: 0,
            exhausted: false,
            active: 0,
            free: Vec::new(),
            pacer,
            size_rng: Xoshiro256PlusPlus::seed_from_u64(
                pacer_seed.rotate_left(17) ^ 0x5eed_5e1d_da7a_0001,
            ),
            size_scratch: Vec::with_capacity(cfg_values),
            mix_keys,
            timer: None,
            down: 0,
            recovering: 0,
            next_watch: now,
            jitter_state: (jitter_seed(now) ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1,
        }
    }

    pub(crate) fn run(mut self) -> WorkerResult {
        let cpu = ThreadCpuMark::now();
        let fatal = self.event_loop().err();
        self.count_unanswered();
        if fatal.is_some() {
            self.cfg.live.failed.store(true, Ordering::Relaxed);
        }
        self.publish();
        self.rec.tally.flush();
        WorkerResult {
            cluster: self.cluster.map(|c| c.stats),
            recorder: self.rec,
            fatal,
            cpu: cpu.usage_since(),
            sent: self.sent,
        }
    }

    fn event_loop(&mut self) -> Result<(), EngineError> {
        for (i, c) in self.conns.iter_mut().enumerate() {
            self.poll
                .registry()
                .register(&mut c.stream, Token(i), Interest::READABLE)
                .map_err(loop_error)?;
        }
        if self.pacer.is_some() {
            // Without a timerfd (not Linux) pacing falls back to the poll timeout.
            if let Ok(mut timer) = Timer::new() {
                timer
                    .register(self.poll.registry(), TIMER)
                    .map_err(loop_error)?;
                self.timer = Some(timer);
            }
        }
        let start = self.cfg.start;
        for i in 0..self.conns.len() {
            self.on_free(i, start)?;
        }
        let mut events = Events::with_capacity(1024);
        loop {
            if self.cfg.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let now = Instant::now();
            if !self.exhausted && self.cfg.deadline.is_some_and(|d| now >= d) {
                // Every connection may be waiting for a reply (a server that stopped
                // answering): the deadline ends sending without one becoming free.
                self.exhausted = true;
                self.free.clear();
            }
            if self.exhausted && self.active == 0 && self.outstanding() == 0 {
                return Ok(());
            }
            if self.cluster.is_some() {
                self.cluster_tick(now)?;
            }
            if self.exhausted && self.cfg.deadline.is_some_and(|d| now >= d + DRAIN_LIMIT) {
                // Draining after --duration took too long: what is in flight is unanswered.
                return Ok(());
            }
            self.watch_outages(now)?;
            let timeout = self.poll_timeout(now);
            let timeout = match (timeout, self.watch_timeout(now)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(loop_error(e)),
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    TIMER => {
                        if let Some(t) = self.timer.as_mut() {
                            t.clear();
                        }
                    }
                    Token(i) => {
                        if ev.is_writable() {
                            self.on_writable(i)?;
                        }
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.on_readable(i)?;
                        }
                    }
                }
            }
            if self.pacer.is_some() {
                self.dispatch_due(Instant::now())?;
            }
            self.publish();
        }
    }

    /// Makes the live counters visible to the main thread (plain stores: one writer).
    fn publish(&self) {
        let l = self.cfg.live;
        l.all_completed
            .store(self.rec.all_completed, Ordering::Relaxed);
        l.all_latency_sum_ns
            .store(self.rec.all_latency_sum_ns, Ordering::Relaxed);
        l.measured_completed
            .store(self.rec.completed, Ordering::Relaxed);
        l.measured_latency_sum_ns
            .store(self.rec.latency_sum_ns, Ordering::Relaxed);
    }

    /// How long the poll may wait, from the loop turn's `now` (a little early by whatever the
    /// turn did since: the wait ends at most that much late, for no extra clock read).
    fn poll_timeout(&self, now: Instant) -> Option<Duration> {
        if let Some(deadline) = self.cfg.deadline {
            if self.exhausted {
                return Some((deadline + DRAIN_LIMIT).saturating_duration_since(now));
            }
            // Wake at the deadline even if no reply comes (the loop then stops sending).
            let to_deadline = deadline.saturating_duration_since(now);
            return Some(match self.poll_timeout_running(now) {
                Some(t) => t.min(to_deadline),
                None => to_deadline,
            });
        }
        self.poll_timeout_running(now)
    }

    /// The poll's limit while the test is sending (cluster retries, pacing without a timerfd).
    fn poll_timeout_running(&self, now: Instant) -> Option<Duration> {
        if let Some(cl) = &self.cluster {
            // Delayed retries (TRYAGAIN, CLUSTERDOWN), and a look at the topology now and then.
            let cap = Duration::from_millis(100);
            let wait = cl
                .next_due()
                .map_or(cap, |due| due.saturating_duration_since(now).min(cap));
            return Some(wait.max(Duration::from_millis(1)));
        }
        if self.timer.is_none() && !self.free.is_empty() {
            // No timer (not Linux): fall back to the poll timeout for pacing.
            return self
                .pacer
                .as_ref()
                .map(|p| p.next_due().saturating_duration_since(now));
        }
        None
    }

    /// Decides what connection `i`, free since `now`, does next, and does it.
    fn on_free(&mut self, i: usize, now: Instant) -> Result<(), EngineError> {
        match self.decide(now) {
            Decision::Send {
                units,
                intended,
                warmup,
            } => self.send_batch(i, units, intended, warmup),
            Decision::Wait => {
                self.free.push(i);
                self.arm_timer(now);
                Ok(())
            }
            Decision::Done => Ok(()),
        }
    }

    /// Closed loop: the request is intended for `now`, when its connection became free.
    /// `--rps`: for its scheduled send time, which may have passed.
    fn decide(&mut self, now: Instant) -> Decision {
        if self.exhausted {
            return Decision::Done;
        }
        let intended = match &self.pacer {
            None => now,
            Some(p) => {
                let due = p.next_due();
                if due > now {
                    return Decision::Wait;
                }
                // A send time that passed while no connection was free keeps its time: the wait is
                // charged to the request (coordinated omission corrected).
                due
            }
        };
        let warmup = intended < self.cfg.measure_start;
        let mut units = self.cfg.load.pipeline as usize;
        if !warmup {
            if self.cfg.deadline.is_some_and(|d| intended >= d) {
                self.exhausted = true;
                return Decision::Done;
            }
            if let Some(quota) = self.cfg.quota {
                let remaining = quota - self.issued;
                if remaining == 0 {
                    self.exhausted = true;
                    return Decision::Done;
                }
                units = units.min(remaining.div_ceil(self.cmds_per_unit) as usize);
                self.issued = quota.min(self.issued + units as u64 * self.cmds_per_unit);
            }
        }
        if !warmup {
            self.sent += units as u64 * self.cmds_per_unit;
        }
        if let Some(p) = self.pacer.as_mut() {
            p.advance(units as u64 * self.cmds_per_unit);
        }
        Decision::Send {
            units,
            intended,
            warmup,
        }
    }

    /// `--rps`: hands due send times to waiting connections.
    fn dispatch_due(&mut self, now: Instant) -> Result<(), EngineError> {
        while !self.exhausted
            && !self.free.is_empty()
            && self.pacer.as_ref().is_some_and(|p| p.next_due() <= now)
        {
            if let Some(i) = self.free.pop()
                && self.conns[i].state != State::Down
            {
                self.on_free(i, now)?;
            }
        }
        if self.exhausted {
            self.free.clear();
        }
        self.arm_timer(now);
        Ok(())
    }

    fn arm_timer(&mut self, now: Instant) {
        if self.free.is_empty() || self.exhausted {
            return;
        }
        if let (Some(t), Some(p)) = (self.timer.as_mut(), self.pacer.as_ref()) {
            t.arm(p.next_due(), now);
        }
    }

    fn send_batch(
        &mut self,
        i: usize,
        units: usize,
        intended: Instant,
        warmup: bool,
    ) -> Result<(), EngineError> {
        // The batch is set up before a reconnect, so that a failed one counts its requests.
        let reconnect = if let Some(node) = self.conns[i].rebind.take() {
            let c = &mut self.conns[i];
            c.node = node;
            c.route = node as u16;
            true
        } else {
            (!self.cfg.load.keepalive && self.conns[i].used) || self.stale(i)
        };
        // The parallel key pattern walks a slice per connection.
        self.keys.select_conn(i);
        for k in &mut self.mix_keys {
            k.select_conn(i);
        }
        let wlen = self.fill_batch(i, units);
        let c = &mut self.conns[i];
        c.used = true;
        c.wlen = wlen;
        c.written = 0;
        c.pending = units as u64 * self.cmds_per_unit;
        c.batch_cmds = c.pending;
        c.intended = intended;
        c.warmup = warmup;
        self.active += 1;
        if reconnect {
            self.replace_stream(i)?;
        }
        let c = &mut self.conns[i];
        if c.state == State::Open {
            c.sent = Instant::now();
            self.flush(i)?;
        }
        Ok(())
    }

    /// Writes connection `i`'s next batch of `units` units (placeholders filled, values sized,
    /// or a dataset's records) and returns its length in bytes.
    fn fill_batch(&mut self, i: usize, units: usize) -> usize {
        let load = self.cfg.load;
        if let Some(dataset) = &load.dataset {
            return dataset.fill_batch(&mut self.conns[i].wbuf, units, &mut self.keys);
        }
        if let Some(mix) = &load.mix {
            let c = &mut self.conns[i];
            let keys = if self.mix_keys.is_empty() {
                std::slice::from_mut(&mut self.keys)
            } else {
                &mut self.mix_keys[..]
            };
            return mix.fill_batch(
                &mut c.wbuf,
                &mut c.kinds,
                units,
                &mut self.size_rng,
                load.value_sizes.as_ref(),
                keys,
                &mut self.size_scratch,
            );
        }
        if self.cluster.is_some() {
            self.fill_cluster(i, units);
        } else if let Some(dist) = load.value_sizes.as_ref()
            && !self.cfg.template.values.is_empty()
        {
            return fill_sized(
                &mut self.conns[i].wbuf,
                self.cfg.template,
                units,
                dist,
                &mut self.size_rng,
                &mut self.keys,
                &mut self.size_scratch,
            );
        } else {
            fill(
                &mut self.conns[i].wbuf,
                &self.batch_placeholders[..units * self.placeholders_per_unit],
                self.placeholders_per_unit,
                &mut self.keys,
            );
        }
        units * self.unit_len
    }

    /// Where node `node` is (the one server outside cluster mode).
    fn target(&self, node: usize) -> &Target {
        match &self.cluster {
            Some(cl) => &cl.targets[node],
            None => &self.cfg.setup.target,
        }
    }

    /// Redirected requests not answered yet.
    fn outstanding(&self) -> usize {
        self.cluster.as_ref().map_or(0, |c| c.outstanding())
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
            KeyGen::new(load.keyspace.unwrap_or(0), seed, cfg.id as u64, shared)
                .with_pattern(pattern, load.key_min, u64::from(load.clients))
                .in_shard(load.shard)
        })
        .collect()
}

/// A failure of the poller itself (not of a connection).
fn loop_error(e: io::Error) -> EngineError {
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
