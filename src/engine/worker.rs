//! One worker thread: its connections, its event loop, its recorder.
//!
//! Per request in steady state (closed loop, `-P 1`): one `write`, one `read` (a short read means
//! the socket is drained, so no second read to see EAGAIN), a share of one `epoll_wait`, and two
//! clock reads (vDSO, no syscall). Write interest is registered only while a write is partial.

use std::io::{self, IoSlice};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use resp::{Kind, Scan, Scanner};

use super::cluster::{
    ClusterRun, ClusterWorker, MAX_ATTEMPTS, Redirect, Retry, SideItem, SideQueue, parse_redirect,
};
use super::conn::{Stream, Target, io_reason};
use super::push::{self, Peek, PushKind};
use super::timer::Timer;
use super::{ConnSetup, EngineError, ErrorPolicy, Live, LoadSpec, Placement, WorkerResult};
use crate::cluster::slot::{TAG_PLACEHOLDER, key_slot};
use crate::cluster::topology::NO_OWNER;
use crate::metrics::{ErrorCounts, LatencyHistogram, PushCounts, RedirectKind};
use crate::workload::keys::{KeyGen, SequentialCounters};
use crate::workload::template::{Slot, Template, fill, fill_unit};

pub(crate) const WAKER: Token = Token(usize::MAX);
const TIMER: Token = Token(usize::MAX - 1);

/// Read buffer shared by a worker's connections; bytes of an incomplete reply line are carried
/// per connection, so memory does not grow with `-c`.
const READ_BUF: usize = 64 * 1024;
/// A single RESP line longer than this is treated as a protocol error.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// With `--duration`, how long replies still in flight at the end are waited for.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

pub(crate) struct WorkerConfig<'a> {
    pub id: usize,
    pub setup: &'a ConnSetup,
    pub load: &'a LoadSpec,
    pub template: &'a Template,
    /// Commands this worker issues in the measured phase (`-n` share).
    pub quota: Option<u64>,
    pub start: Instant,
    pub measure_start: Instant,
    pub deadline: Option<Instant>,
    /// This worker's share of `--rps`.
    pub rate_per_sec: Option<f64>,
    pub live: &'a Live,
    pub stop: &'a AtomicBool,
    pub sequential: Option<Arc<SequentialCounters>>,
    pub cluster: Option<&'a ClusterRun>,
    /// Cluster: load connections this worker opens to a primary that appears during the test.
    pub new_node_conns: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Connected; a batch may be in flight.
    Open,
    /// A `-k 0` reconnect is under way; the decided batch waits for it.
    Connecting,
}

struct Conn {
    stream: Stream,
    state: State,
    /// `-P` copies of the unit; placeholders patched before each send.
    wbuf: Vec<u8>,
    /// Bytes of `wbuf` in this batch (fewer units for a final partial batch).
    wlen: usize,
    written: usize,
    prefix_written: usize,
    prefix_pending: usize,
    want_write: bool,
    carry: Vec<u8>,
    scanner: Scanner,
    /// Kind of the push being scanned (classified from its head before the scanner consumes it).
    push_kind: PushKind,
    /// Replies outstanding in the current batch.
    pending: u64,
    intended: Instant,
    sent: Instant,
    warmup: bool,
    /// Has carried a batch (with `-k 0` it is replaced before the next one).
    used: bool,
    /// Commands in the current batch.
    batch_cmds: u64,
    /// The node it is connected to (always 0 outside cluster mode).
    node: usize,
    /// Cluster: the primary whose slots its units target (itself, or a replica's primary).
    route: u16,
    /// Cluster: a slot of the shard it was bound to; after a failover it follows that slot's
    /// new primary (only connections bound to primaries do).
    home: u16,
    follow_primary: bool,
    /// Cluster: reconnect to this node before the next batch.
    rebind: Option<usize>,
    /// Cluster: a side connection's queue of redirected requests (None for load connections).
    side: Option<SideQueue>,
}

impl Conn {
    /// A connection with nothing in flight; `connecting`: a non-blocking connect is under way
    /// (writable means connected). `route` is the primary whose slots its units target.
    #[allow(clippy::too_many_arguments)]
    fn new(
        stream: Stream,
        connecting: bool,
        wbuf: Vec<u8>,
        prefix_commands: usize,
        place: Placement,
        route: u16,
        side: Option<SideQueue>,
        now: Instant,
    ) -> Self {
        Conn {
            stream,
            state: if connecting {
                State::Connecting
            } else {
                State::Open
            },
            wbuf,
            wlen: 0,
            written: 0,
            prefix_written: 0,
            prefix_pending: prefix_commands,
            want_write: connecting,
            carry: Vec::with_capacity(64),
            scanner: Scanner::new(),
            push_kind: PushKind::Other,
            pending: 0,
            intended: now,
            sent: now,
            warmup: false,
            used: false,
            batch_cmds: 0,
            node: place.node,
            route,
            home: place.home,
            follow_primary: place.follow_primary,
            rebind: None,
            side,
        }
    }
}

/// What a free connection does next.
enum Decision {
    Send {
        units: usize,
        intended: Instant,
        warmup: bool,
    },
    /// `--rps`: the next slot is in the future.
    Wait,
    /// Nothing more to send in this test.
    Done,
}

/// The `--rps` schedule of one worker: slot k is due at `start + k / rate`.
struct Pacer {
    start: Instant,
    interval_ns: f64,
    slot: u64,
}

impl Pacer {
    fn next_due(&self) -> Instant {
        self.start + Duration::from_nanos((self.slot as f64 * self.interval_ns) as u64)
    }
}

struct Recorder {
    latency: LatencyHistogram,
    uncorrected: LatencyHistogram,
    completed: u64,
    latency_sum_ns: u64,
    all_completed: u64,
    all_latency_sum_ns: u64,
    errors: ErrorCounts,
    pushes: PushCounts,
    last_reply: Option<Instant>,
}

pub(crate) struct Worker<'a> {
    cfg: WorkerConfig<'a>,
    cluster: Option<ClusterWorker<'a>>,
    poll: Poll,
    conns: Vec<Conn>,
    rbuf: Vec<u8>,
    rec: Recorder,
    keys: KeyGen,
    /// Placeholder offsets of a batch: the same for every connection's `wbuf`.
    batch_slots: Vec<Slot>,
    slots_per_unit: usize,
    unit_len: usize,
    cmds_per_unit: u64,
    pipeline: usize,
    issued: u64,
    exhausted: bool,
    /// Connections with a batch in flight (or waiting for a reconnect).
    active: usize,
    /// `--rps`: connections waiting for their slot.
    free: Vec<usize>,
    pacer: Option<Pacer>,
    timer: Option<Timer>,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        cfg: WorkerConfig<'a>,
        streams: Vec<(Stream, Placement)>,
        poll: Poll,
    ) -> Self {
        let pipeline = cfg.load.pipeline as usize;
        let (wbuf, batch_slots) = cfg.template.batch(pipeline);
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
                Conn::new(stream, false, wbuf.clone(), prefix, place, route, None, now)
            })
            .collect();
        let keys = KeyGen::new(
            cfg.load.keyspace.unwrap_or(0),
            cfg.load.seed,
            cfg.id as u64,
            cfg.sequential.clone(),
        );
        let pacer = cfg.rate_per_sec.map(|rate| Pacer {
            start: cfg.start,
            interval_ns: 1e9 / rate.max(1e-9),
            slot: 0,
        });
        Self {
            slots_per_unit: cfg.template.slots.len(),
            unit_len: cfg.template.unit.len(),
            cmds_per_unit: u64::from(cfg.template.commands_per_unit),
            pipeline,
            cfg,
            cluster,
            poll,
            conns,
            rbuf: vec![0; READ_BUF],
            rec: Recorder {
                latency: LatencyHistogram::new(),
                uncorrected: LatencyHistogram::new(),
                completed: 0,
                latency_sum_ns: 0,
                all_completed: 0,
                all_latency_sum_ns: 0,
                errors: ErrorCounts::default(),
                pushes: PushCounts::default(),
                last_reply: None,
            },
            keys,
            batch_slots,
            issued: 0,
            exhausted: false,
            active: 0,
            free: Vec::new(),
            pacer,
            timer: None,
        }
    }

    pub(crate) fn run(mut self) -> WorkerResult {
        let fatal = self.event_loop().err();
        if fatal.is_some() {
            self.cfg.live.failed.store(true, Ordering::Relaxed);
        }
        self.publish();
        WorkerResult {
            cluster: self.cluster.map(|c| c.stats),
            latency: self.rec.latency,
            latency_uncorrected: self.rec.uncorrected,
            completed: self.rec.completed,
            errors: self.rec.errors,
            pushes: self.rec.pushes,
            last_reply: self.rec.last_reply,
            fatal,
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
            if self.exhausted && self.active == 0 && self.outstanding() == 0 {
                return Ok(());
            }
            if self.cluster.is_some() {
                self.cluster_tick(Instant::now())?;
            }
            let timeout = self.poll_timeout();
            if timeout == Some(Duration::ZERO) {
                // Draining after --duration took too long: abandon what is in flight.
                return Ok(());
            }
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

    fn poll_timeout(&self) -> Option<Duration> {
        if let (true, Some(deadline)) = (self.exhausted, self.cfg.deadline) {
            return Some((deadline + DRAIN_LIMIT).saturating_duration_since(Instant::now()));
        }
        if let Some(cl) = &self.cluster {
            // Delayed retries (TRYAGAIN, CLUSTERDOWN), and a look at the topology now and then.
            let cap = Duration::from_millis(100);
            let wait = cl.next_due().map_or(cap, |due| {
                due.saturating_duration_since(Instant::now()).min(cap)
            });
            return Some(wait.max(Duration::from_millis(1)));
        }
        if self.timer.is_none() && !self.free.is_empty() {
            // No timer (not Linux): fall back to the poll timeout for pacing.
            return self
                .pacer
                .as_ref()
                .map(|p| p.next_due().saturating_duration_since(Instant::now()));
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
    /// `--rps`: for its schedule slot, which may have passed.
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
                // A slot that passed while no connection was free keeps its time: the wait is
                // charged to the request (coordinated omission corrected).
                due
            }
        };
        let warmup = intended < self.cfg.measure_start;
        let mut units = self.pipeline;
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
        if let Some(p) = self.pacer.as_mut() {
            p.slot += units as u64 * self.cmds_per_unit;
        }
        Decision::Send {
            units,
            intended,
            warmup,
        }
    }

    /// `--rps`: hands due slots to waiting connections.
    fn dispatch_due(&mut self, now: Instant) -> Result<(), EngineError> {
        while !self.exhausted
            && !self.free.is_empty()
            && self.pacer.as_ref().is_some_and(|p| p.next_due() <= now)
        {
            if let Some(i) = self.free.pop() {
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
        if let Some(node) = self.conns[i].rebind.take() {
            let c = &mut self.conns[i];
            c.node = node;
            c.route = node as u16;
            self.replace_stream(i)?;
        } else if !self.cfg.load.keepalive && self.conns[i].used {
            self.replace_stream(i)?;
        }
        let wlen = if let Some(dataset) = &self.cfg.load.dataset {
            dataset.fill_batch(&mut self.conns[i].wbuf, units, &mut self.keys)
        } else {
            if self.cluster.is_some() {
                self.fill_cluster(i, units);
            } else {
                fill(
                    &mut self.conns[i].wbuf,
                    &self.batch_slots[..units * self.slots_per_unit],
                    self.slots_per_unit,
                    &mut self.keys,
                );
            }
            units * self.unit_len
        };
        let c = &mut self.conns[i];
        c.used = true;
        c.wlen = wlen;
        c.written = 0;
        c.pending = units as u64 * self.cmds_per_unit;
        c.batch_cmds = c.pending;
        c.intended = intended;
        c.warmup = warmup;
        self.active += 1;
        if c.state == State::Open {
            c.sent = Instant::now();
            self.flush(i)?;
        }
        Ok(())
    }

    /// Writes what is left of the prefix and the batch; registers write interest only while the
    /// socket's buffer is full.
    fn flush(&mut self, i: usize) -> Result<(), EngineError> {
        let prefix = &self.cfg.setup.prefix;
        let c = &mut self.conns[i];
        loop {
            let batch = &c.wbuf[c.written..c.wlen];
            let res = if c.prefix_written < prefix.len() {
                c.stream.write_vectored(&[
                    IoSlice::new(&prefix[c.prefix_written..]),
                    IoSlice::new(batch),
                ])
            } else if batch.is_empty() {
                break;
            } else {
                c.stream.write(batch)
            };
            match res {
                Ok(mut n) => {
                    let p = (prefix.len() - c.prefix_written).min(n);
                    c.prefix_written += p;
                    n -= p;
                    c.written += n;
                    if c.prefix_written == prefix.len() && c.written == c.wlen {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.want_write {
                        c.want_write = true;
                        self.poll
                            .registry()
                            .reregister(
                                &mut c.stream,
                                Token(i),
                                Interest::READABLE | Interest::WRITABLE,
                            )
                            .map_err(loop_error)?;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(i, &e)),
            }
        }
        let c = &mut self.conns[i];
        if c.want_write {
            c.want_write = false;
            self.poll
                .registry()
                .reregister(&mut c.stream, Token(i), Interest::READABLE)
                .map_err(loop_error)?;
        }
        Ok(())
    }

    fn on_writable(&mut self, i: usize) -> Result<(), EngineError> {
        let c = &mut self.conns[i];
        match c.state {
            State::Open => {
                if c.want_write {
                    self.flush(i)?;
                }
            }
            State::Connecting => {
                if let Err(e) = c.stream.finish_connect() {
                    if e.kind() == io::ErrorKind::NotConnected {
                        return Ok(()); // not yet
                    }
                    return Err(self.target(self.conns[i].node).connect_error(&e));
                }
                c.state = State::Open;
                // Registered for both while connecting; flush() settles the interest.
                c.want_write = true;
                c.sent = Instant::now();
                self.flush(i)?;
            }
        }
        Ok(())
    }

    fn on_readable(&mut self, i: usize) -> Result<(), EngineError> {
        let mut now = Instant::now();
        let mut batch_done = false;
        loop {
            let c = &mut self.conns[i];
            if c.state != State::Open {
                // A TLS handshake under way waits for the server's reply: readable moves it on.
                return self.on_writable(i);
            }
            let carry = c.carry.len();
            if carry == self.rbuf.len() {
                if self.rbuf.len() >= MAX_LINE {
                    return Err(EngineError::Protocol(format!(
                        "protocol error: a reply line from {} is longer than {MAX_LINE} bytes",
                        self.target(self.conns[i].node).display()
                    )));
                }
                let len = self.rbuf.len() * 2;
                self.rbuf.resize(len, 0);
            }
            self.rbuf[..carry].copy_from_slice(&c.carry);
            c.carry.clear();
            let n = match c.stream.read(&mut self.rbuf[carry..]) {
                Ok(0) => {
                    return Err(EngineError::Io(format!(
                        "the server at {} closed the connection",
                        self.target(self.conns[i].node).display()
                    )));
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.carry.extend_from_slice(&self.rbuf[..carry]);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    c.carry.extend_from_slice(&self.rbuf[..carry]);
                    continue;
                }
                Err(e) => return Err(self.io_error(i, &e)),
            };
            now = Instant::now();
            let end = carry + n;
            let mut pos = 0;
            while pos < end {
                if self.rbuf[pos] == b'>' && !c.scanner.in_progress() {
                    // Classify a push while its head is in hand; wait for more if it is not.
                    match push::classify(&self.rbuf[pos..end]) {
                        Peek::Kind(kind) => c.push_kind = kind,
                        Peek::Incomplete => break,
                    }
                }
                match c.scanner.scan(&self.rbuf[pos..end]) {
                    Ok(Scan::Reply { consumed, info }) => {
                        let reply = &self.rbuf[pos..pos + consumed];
                        let ctx = ReplyCtx {
                            policy: self.cfg.load.on_error,
                            setup: self.cfg.setup,
                            template: self.cfg.template,
                            unit_len: self.unit_len,
                            cmds_per_unit: self.cmds_per_unit,
                        };
                        if on_reply(
                            c,
                            &mut self.rec,
                            self.cluster.as_mut(),
                            &ctx,
                            &info,
                            reply,
                            now,
                        )? {
                            batch_done = true;
                        }
                        pos += consumed;
                    }
                    Ok(Scan::Partial { consumed }) => {
                        pos += consumed;
                        break;
                    }
                    Err(e) => {
                        let from = match &self.cluster {
                            Some(cl) => cl.targets[c.node].display(),
                            None => self.cfg.setup.target.display(),
                        };
                        return Err(EngineError::Protocol(format!("{e} (from {from})")));
                    }
                }
            }
            c.carry.extend_from_slice(&self.rbuf[pos..end]);
            if end < self.rbuf.len() {
                break; // a short read: the socket is drained
            }
        }
        if self
            .cluster
            .as_ref()
            .is_some_and(|cl| !cl.redirects.is_empty())
        {
            self.handle_redirects(now)?;
        }
        if batch_done {
            self.active -= 1;
            self.on_free(i, now)?;
        }
        Ok(())
    }

    /// `-k 0`: replaces a used connection before its next batch. The batch's intended time is
    /// when the old connection became free, so the reconnect is charged to it (the uncorrected
    /// figure, from the actual write, leaves it out).
    fn replace_stream(&mut self, i: usize) -> Result<(), EngineError> {
        let mut stream = self.target(self.conns[i].node).connect_nonblocking()?;
        self.poll
            .registry()
            .register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(loop_error)?;
        let c = &mut self.conns[i];
        let mut old = std::mem::replace(&mut c.stream, stream);
        let _ = self.poll.registry().deregister(&mut old);
        drop(old);
        c.state = State::Connecting;
        c.prefix_written = 0;
        c.prefix_pending = self.cfg.setup.prefix_commands.len();
        c.want_write = true;
        c.carry.clear();
        c.scanner.reset();
        Ok(())
    }

    /// Cluster: fills a batch for connection `i`'s node: `{tag}` gets a tag of one of the
    /// node's slots, and a unit whose random keys land elsewhere is drawn again.
    fn fill_cluster(&mut self, i: usize, units: usize) {
        let Some(cl) = self.cluster.as_ref() else {
            return;
        };
        let routes = &cl.run.routes;
        let spu = self.slots_per_unit;
        let c = &mut self.conns[i];
        let route = c.route;
        let serves_any = cl.counts.get(usize::from(route)).is_some_and(|&n| n > 0);
        for u in 0..units {
            let base = u * self.unit_len;
            if !routes.tags.is_empty() {
                let keys = &mut self.keys;
                let slot = cl.pick_slot(route, || keys.random());
                let tag = cl.run.tags.get(slot);
                for &off in &routes.tags {
                    c.wbuf[base + off..base + off + TAG_PLACEHOLDER.len()].copy_from_slice(tag);
                }
            }
            let unit_slots = &self.batch_slots[u * spu..(u + 1) * spu];
            let mut draws = 0;
            loop {
                fill_unit(&mut c.wbuf, unit_slots, &mut self.keys);
                draws += 1;
                let stray = routes.random_keys.iter().find_map(|k| {
                    let slot = key_slot(&c.wbuf[base + k.start..base + k.end]);
                    (!cl.serves(route, slot)).then_some(slot)
                });
                let Some(slot) = stray else {
                    break;
                };
                if !serves_any || draws >= MAX_DRAWS {
                    // This node holds none of the keys drawn (a small keyspace, or its slots
                    // migrated away): the unit goes anyway and is redirected, and a connection
                    // bound to a primary moves to where the keys are for its next batch.
                    let owner = cl.owners[usize::from(slot)];
                    if c.follow_primary && owner != NO_OWNER && usize::from(owner) != c.node {
                        c.rebind = Some(usize::from(owner));
                        c.home = slot;
                    }
                    break;
                }
            }
        }
    }

    /// Cluster: adopts a new topology (connections bound to a primary follow their shard to its
    /// new primary) and sends delayed retries that are due.
    fn cluster_tick(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        if cl.adopt_if_changed() {
            for c in self.conns.iter_mut().filter(|c| c.side.is_none()) {
                rebind_if_needed(c, cl);
            }
            if cl.run.all_primaries {
                self.connect_new_primaries(now)?;
            }
        }
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        if cl.next_due().is_some_and(|due| due <= now) {
            let mut due = Vec::new();
            let mut k = 0;
            while k < cl.delayed.len() {
                if cl.delayed[k].0 <= now {
                    due.push(cl.delayed.swap_remove(k));
                } else {
                    k += 1;
                }
            }
            for (_, node, retry) in due {
                self.enqueue(node, retry, false)?;
            }
        }
        Ok(())
    }

    /// Cluster: opens load connections to primaries that own slots but have none of this
    /// worker's connections (a node that slots were migrated to); they start sending at once.
    fn connect_new_primaries(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_ref() else {
            return Ok(());
        };
        let missing: Vec<usize> = (0..cl.counts.len())
            .filter(|&n| cl.counts[n] > 0)
            .filter(|&n| {
                !self
                    .conns
                    .iter()
                    .any(|c| c.side.is_none() && (c.node == n || c.rebind == Some(n)))
            })
            .collect();
        for node in missing {
            for _ in 0..self.cfg.new_node_conns {
                let Some(cl) = self.cluster.as_ref() else {
                    break;
                };
                let home = (0..cl.owners.len())
                    .find(|&s| usize::from(cl.owners[s]) == node)
                    .unwrap_or(0) as u16;
                let (wbuf, _) = self.cfg.template.batch(self.pipeline);
                let place = Placement {
                    node,
                    home,
                    follow_primary: true,
                };
                let i = self.open_conn(place, wbuf, None, now)?;
                self.on_free(i, now)?;
            }
        }
        Ok(())
    }

    /// Acts on the redirects just received: re-sends each request to the right node.
    fn handle_redirects(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        let mut list = std::mem::take(&mut cl.redirects);
        for r in list.drain(..) {
            let Some(cl) = self.cluster.as_mut() else {
                break;
            };
            if !r.retry.warmup {
                cl.count(r.kind, now, self.cfg.measure_start);
            }
            let target = match (r.kind, &r.to) {
                (RedirectKind::Moved | RedirectKind::Ask, Some((slot, host, port))) => {
                    let host = if host.is_empty() {
                        cl.run.shared.topology().nodes[r.from].host.clone()
                    } else {
                        host.clone()
                    };
                    let node = cl.resolve(&host, *port)?;
                    if r.kind == RedirectKind::Moved {
                        cl.moved(*slot, node);
                        for c in self.conns.iter_mut().filter(|c| c.side.is_none()) {
                            rebind_if_needed(c, cl);
                        }
                    }
                    Some(node)
                }
                _ => None,
            };
            if r.retry.attempts > MAX_ATTEMPTS
                || (target.is_none() && matches!(r.kind, RedirectKind::Moved | RedirectKind::Ask))
            {
                cl.outstanding -= 1;
                let warmup = r.retry.warmup;
                cl.spare.push(r.retry.cmd);
                let text = format!(
                    "{} (a request was still redirected after {MAX_ATTEMPTS} attempts)",
                    r.kind.name()
                );
                record_error(
                    &mut self.rec,
                    self.cfg.load.on_error,
                    warmup,
                    text.as_bytes(),
                )?;
                continue;
            }
            match r.kind {
                RedirectKind::Moved | RedirectKind::Ask => {
                    if let Some(node) = target {
                        self.enqueue(node, r.retry, r.kind == RedirectKind::Ask)?;
                    }
                }
                RedirectKind::TryAgain => {
                    let wait = Duration::from_millis(10 * u64::from(r.retry.attempts));
                    cl.delayed.push((now + wait, r.from, r.retry));
                }
                RedirectKind::ClusterDown => {
                    cl.run.shared.request_refresh();
                    let wait = Duration::from_millis((100 * u64::from(r.retry.attempts)).min(1000));
                    let node = r
                        .retry
                        .slot
                        .map(|s| cl.owners[usize::from(s)])
                        .filter(|&o| o != NO_OWNER)
                        .map_or(r.from, usize::from);
                    cl.delayed.push((now + wait, node, r.retry));
                }
            }
        }
        if let Some(cl) = self.cluster.as_mut() {
            cl.redirects = list;
        }
        Ok(())
    }

    /// Queues a redirected request on the side connection to `node` (opened on first use).
    fn enqueue(&mut self, node: usize, retry: Retry, asking: bool) -> Result<(), EngineError> {
        let i = self.side_conn(node)?;
        let c = &mut self.conns[i];
        if c.written == c.wlen {
            c.wbuf.clear();
            c.written = 0;
        }
        let q = c.side.get_or_insert_with(SideQueue::new);
        if asking {
            c.wbuf.extend_from_slice(b"*1\r\n$6\r\nASKING\r\n");
            q.push_back(SideItem::Asking);
        }
        c.wbuf.extend_from_slice(&retry.cmd);
        q.push_back(SideItem::Retry(retry));
        c.wlen = c.wbuf.len();
        if c.state == State::Open {
            self.flush(i)?;
        }
        Ok(())
    }

    /// Starts a non-blocking connect to `place.node` and adds the connection (its index is its
    /// token); it sends once writable says it is connected.
    fn open_conn(
        &mut self,
        place: Placement,
        wbuf: Vec<u8>,
        side: Option<SideQueue>,
        now: Instant,
    ) -> Result<usize, EngineError> {
        let mut stream = self.target(place.node).connect_nonblocking()?;
        let i = self.conns.len();
        self.poll
            .registry()
            .register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(loop_error)?;
        let prefix = self.cfg.setup.prefix_commands.len();
        let route = place.node as u16;
        self.conns.push(Conn::new(
            stream, true, wbuf, prefix, place, route, side, now,
        ));
        Ok(i)
    }

    /// The side connection to `node`, connecting it (without blocking) on first use.
    fn side_conn(&mut self, node: usize) -> Result<usize, EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Err(EngineError::Other("redirect outside cluster mode".into()));
        };
        if let Some(i) = cl.side[node] {
            return Ok(i);
        }
        let place = Placement {
            node,
            home: 0,
            follow_primary: false,
        };
        let i = self.open_conn(place, Vec::new(), Some(SideQueue::new()), Instant::now())?;
        if let Some(cl) = self.cluster.as_mut() {
            cl.side[node] = Some(i);
        }
        Ok(i)
    }

    fn io_error(&self, i: usize, e: &io::Error) -> EngineError {
        EngineError::Io(format!(
            "connection to {} failed: {}",
            self.target(self.conns[i].node).display(),
            io_reason(e)
        ))
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
        self.cluster.as_ref().map_or(0, |c| c.outstanding)
    }
}

/// Cluster: most draws of a unit before sending it to its node anyway (a redirect then fixes
/// it); with one random key and N equal nodes a unit needs N draws on average, and 256 fail
/// with a chance of (1 - 1/N)^256 (below 1e-7 for 16 nodes).
const MAX_DRAWS: u32 = 256;

/// Cluster: a connection bound to a primary moves to its home slot's owner when that changed;
/// a replica's connection targets its (possibly new) primary's slots.
fn rebind_if_needed(c: &mut Conn, cl: &ClusterWorker) {
    if c.follow_primary {
        let owner = cl.owners[usize::from(c.home)];
        if owner != NO_OWNER && usize::from(owner) != c.node {
            c.rebind = Some(usize::from(owner));
        }
    } else if let Some(&p) = cl.shard_of.get(c.node)
        && p != NO_OWNER
    {
        c.route = p;
    }
}

/// A failure of the poller itself (not of a connection).
fn loop_error(e: io::Error) -> EngineError {
    EngineError::Other(format!("event loop: {e}"))
}

/// What [`on_reply`] needs besides the connection and the recorder.
struct ReplyCtx<'a> {
    policy: ErrorPolicy,
    setup: &'a ConnSetup,
    template: &'a Template,
    unit_len: usize,
    cmds_per_unit: u64,
}

/// Counts one successful reply.
#[inline]
fn record_success(
    rec: &mut Recorder,
    intended: Instant,
    sent: Instant,
    warmup: bool,
    now: Instant,
) -> u64 {
    let latency_ns = now.saturating_duration_since(intended).as_nanos() as u64;
    rec.all_completed += 1;
    rec.all_latency_sum_ns += latency_ns;
    if !warmup {
        rec.latency.record(latency_ns);
        rec.uncorrected
            .record(now.saturating_duration_since(sent).as_nanos() as u64);
        rec.completed += 1;
        rec.latency_sum_ns += latency_ns;
    }
    latency_ns
}

/// An error reply that is not a redirect: fatal, or counted with `-e`.
fn record_error(
    rec: &mut Recorder,
    policy: ErrorPolicy,
    warmup: bool,
    text: &[u8],
) -> Result<(), EngineError> {
    match policy {
        ErrorPolicy::Abort => Err(EngineError::Server {
            message: String::from_utf8_lossy(text).into_owned(),
            hint: Some("use -e to count errors and go on"),
        }),
        ErrorPolicy::Count => {
            if !warmup {
                rec.errors.record(text);
            }
            Ok(())
        }
    }
}

/// Accounts one reply; returns whether it completed the connection's batch.
#[inline]
fn on_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cluster: Option<&mut ClusterWorker>,
    ctx: &ReplyCtx,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<bool, EngineError> {
    if info.kind == Kind::Push {
        let kind = std::mem::take(&mut c.push_kind);
        if !push::is_reply(kind, c.pending, c.prefix_pending) {
            push::count(&mut rec.pushes, kind);
            return Ok(false);
        }
    }
    if c.prefix_pending > 0 {
        let index = ctx.setup.prefix_commands.len() - c.prefix_pending;
        c.prefix_pending -= 1;
        if let Some(range) = &info.error {
            return Err(EngineError::Setup {
                command: ctx.setup.prefix_commands[index],
                message: String::from_utf8_lossy(&reply[range.clone()]).into_owned(),
            });
        }
        return Ok(false);
    }
    if c.side.is_some() {
        if let Some(cl) = cluster {
            side_reply(c, rec, cl, ctx, info, reply, now)?;
        }
        return Ok(false);
    }
    if c.pending == 0 {
        return Err(EngineError::Protocol(
            "protocol error: the server sent a reply nobody asked for".to_string(),
        ));
    }
    c.pending -= 1;
    if !c.warmup {
        rec.last_reply = Some(now);
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        if let Some(cl) = cluster
            && let Some(kind) = RedirectKind::of(text)
        {
            {
                // Which command of the batch this answers, copied out for the retry.
                let index = (c.batch_cmds - c.pending - 1) as usize;
                let per_unit = ctx.cmds_per_unit as usize;
                let base = (index / per_unit) * ctx.unit_len;
                let cmd = index % per_unit;
                let r = &ctx.template.layout[cmd].bytes;
                let mut bytes = cl.spare.pop().unwrap_or_default();
                bytes.clear();
                bytes.extend_from_slice(&c.wbuf[base + r.start..base + r.end]);
                let slot = cl.run.routes.first_key.get(cmd).and_then(|k| {
                    k.as_ref()
                        .map(|k| key_slot(&c.wbuf[base + k.start..base + k.end]))
                });
                cl.outstanding += 1;
                cl.redirects.push(Redirect {
                    kind,
                    retry: Retry {
                        cmd: bytes,
                        intended: c.intended,
                        sent: c.sent,
                        warmup: c.warmup,
                        attempts: 1,
                        slot,
                    },
                    to: parse_redirect(text),
                    from: c.node,
                });
                return Ok(c.pending == 0);
            }
        }
        record_error(rec, ctx.policy, c.warmup, text)?;
    } else {
        let latency = record_success(rec, c.intended, c.sent, c.warmup, now);
        if let Some(cl) = cluster
            && !c.warmup
        {
            cl.record(c.node, latency);
        }
    }
    Ok(c.pending == 0)
}

/// A reply on a side connection: to `ASKING`, or to a redirected request.
fn side_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cl: &mut ClusterWorker,
    ctx: &ReplyCtx,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<(), EngineError> {
    let item = c.side.as_mut().and_then(|q| q.pop_front());
    let Some(item) = item else {
        return Err(EngineError::Protocol(
            "protocol error: the server sent a reply nobody asked for".to_string(),
        ));
    };
    let SideItem::Retry(mut retry) = item else {
        // ASKING's +OK (an error here shows up again on the command that follows).
        return Ok(());
    };
    if !retry.warmup {
        rec.last_reply = Some(now);
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        if let Some(kind) = RedirectKind::of(text) {
            retry.attempts += 1;
            cl.redirects.push(Redirect {
                kind,
                retry,
                to: parse_redirect(text),
                from: c.node,
            });
            return Ok(());
        }
        cl.outstanding -= 1;
        let warmup = retry.warmup;
        cl.spare.push(retry.cmd);
        return record_error(rec, ctx.policy, warmup, text);
    }
    let latency = record_success(rec, retry.intended, retry.sent, retry.warmup, now);
    if !retry.warmup {
        cl.record(c.node, latency);
    }
    cl.outstanding -= 1;
    cl.spare.push(retry.cmd);
    Ok(())
}
