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

use super::conn::{Stream, io_reason};
use super::timer::Timer;
use super::{ConnSetup, EngineError, ErrorPolicy, Live, LoadSpec, WorkerResult};
use crate::metrics::{ErrorCounts, LatencyHistogram};
use crate::workload::keys::{KeyGen, SequentialCounters};
use crate::workload::template::{Slot, Template, fill};

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
    /// Replies outstanding in the current batch.
    pending: u64,
    intended: Instant,
    sent: Instant,
    warmup: bool,
    /// Has carried a batch (with `-k 0` it is replaced before the next one).
    used: bool,
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
    pushes: u64,
    last_reply: Option<Instant>,
}

pub(crate) struct Worker<'a> {
    cfg: WorkerConfig<'a>,
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
    pub(crate) fn new(cfg: WorkerConfig<'a>, streams: Vec<Stream>, poll: Poll) -> Self {
        let pipeline = cfg.load.pipeline as usize;
        let (wbuf, batch_slots) = cfg.template.batch(pipeline);
        let now = cfg.start;
        let conns = streams
            .into_iter()
            .map(|stream| Conn {
                stream,
                state: State::Open,
                wbuf: wbuf.clone(),
                wlen: 0,
                written: 0,
                prefix_written: 0,
                prefix_pending: cfg.setup.prefix_commands.len(),
                want_write: false,
                carry: Vec::with_capacity(64),
                scanner: Scanner::new(),
                pending: 0,
                intended: now,
                sent: now,
                warmup: false,
                used: false,
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
                pushes: 0,
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
            if self.exhausted && self.active == 0 {
                return Ok(());
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
        if !self.cfg.load.keepalive && self.conns[i].used {
            self.replace_stream(i)?;
        }
        let c = &mut self.conns[i];
        c.used = true;
        fill(
            &mut c.wbuf,
            &self.batch_slots[..units * self.slots_per_unit],
            self.slots_per_unit,
            &mut self.keys,
        );
        c.wlen = units * self.unit_len;
        c.written = 0;
        c.pending = units as u64 * self.cmds_per_unit;
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
                Err(e) => return Err(self.io_error(&e)),
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
                    return Err(self.cfg.setup.target.connect_error(&e));
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
                        "a reply line from {} is longer than {MAX_LINE} bytes",
                        self.cfg.setup.target.display()
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
                        self.cfg.setup.target.display()
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
                Err(e) => return Err(self.io_error(&e)),
            };
            now = Instant::now();
            let end = carry + n;
            let mut pos = 0;
            while pos < end {
                match c.scanner.scan(&self.rbuf[pos..end]) {
                    Ok(Scan::Reply { consumed, info }) => {
                        let reply = &self.rbuf[pos..pos + consumed];
                        if on_reply(
                            c,
                            &mut self.rec,
                            self.cfg.load.on_error,
                            self.cfg.setup,
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
                        return Err(EngineError::Protocol(format!(
                            "{} (from {})",
                            e,
                            self.cfg.setup.target.display()
                        )));
                    }
                }
            }
            c.carry.extend_from_slice(&self.rbuf[pos..end]);
            if end < self.rbuf.len() {
                break; // a short read: the socket is drained
            }
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
        let mut stream = self.cfg.setup.target.connect_nonblocking()?;
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

    fn io_error(&self, e: &io::Error) -> EngineError {
        EngineError::Io(format!(
            "connection to {} failed: {}",
            self.cfg.setup.target.display(),
            io_reason(e)
        ))
    }
}

/// A failure of the poller itself (not of a connection).
fn loop_error(e: io::Error) -> EngineError {
    EngineError::Other(format!("event loop: {e}"))
}

/// Accounts one reply; returns whether it completed the connection's batch.
#[inline]
fn on_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    policy: ErrorPolicy,
    setup: &ConnSetup,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<bool, EngineError> {
    if info.kind == Kind::Push {
        rec.pushes += 1;
        return Ok(false);
    }
    if c.prefix_pending > 0 {
        let index = setup.prefix_commands.len() - c.prefix_pending;
        c.prefix_pending -= 1;
        if let Some(range) = &info.error {
            return Err(EngineError::Setup {
                command: setup.prefix_commands[index],
                message: String::from_utf8_lossy(&reply[range.clone()]).into_owned(),
            });
        }
        return Ok(false);
    }
    if c.pending == 0 {
        return Err(EngineError::Protocol(
            "the server sent a reply nobody asked for".to_string(),
        ));
    }
    c.pending -= 1;
    if !c.warmup {
        rec.last_reply = Some(now);
    }
    let latency_ns = now.saturating_duration_since(c.intended).as_nanos() as u64;
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        match policy {
            ErrorPolicy::Abort => {
                return Err(EngineError::Server(
                    String::from_utf8_lossy(text).into_owned(),
                ));
            }
            ErrorPolicy::Count => {
                if !c.warmup {
                    rec.errors.record(text);
                }
            }
        }
    } else {
        rec.all_completed += 1;
        rec.all_latency_sum_ns += latency_ns;
        if !c.warmup {
            rec.latency.record(latency_ns);
            rec.uncorrected
                .record(now.saturating_duration_since(c.sent).as_nanos() as u64);
            rec.completed += 1;
            rec.latency_sum_ns += latency_ns;
        }
    }
    Ok(c.pending == 0)
}
