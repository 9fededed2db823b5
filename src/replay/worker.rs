//! A replay thread: the connections it owns (one per original client, or per fold), each
//! command written at its intended send time and timed on its own reply from that time.
//!
//! Why not the engine's worker loop: the engine sends one template (or mix) from every
//! connection, re-filled in place; a replay sends a different command on a different connection
//! each time, in an order and at times the trace fixes. What is shared is everything that makes
//! the figures comparable: `metrics::Recorder` (corrected latency from the intended time, the
//! per-second timeline, per-command histograms as a `--ratio` mix has), `engine::Target` and
//! `ControlConn` for connecting and authenticating, `resp::Scanner` for framing replies.
//!
//! Commands arrive in chunks over a bounded channel (memory stays bounded whatever the trace's
//! length); a connection's commands are pipelined when their times come before the replies do,
//! which keeps the open loop open, with at most [`MAX_IN_FLIGHT`] per connection.
//!
//! Writes are batched as the engine batches them (docs/architecture.md, "Rules the hot path
//! keeps"): a command due now is queued on its connection, and every connection with queued
//! commands is written once the chunk is done or before the thread waits for anything (a later
//! command's time, room in flight, replies), with one clock read for the batch, which is the
//! commands' send time. A replay at `--speed max` (or behind its trace) thus writes a few
//! commands per system call rather than one.
//!
//! Failures follow the benchmark's rules, from the engine's one home for them (`engine::FailKind`,
//! `engine::record_error`, `engine::backoff_step`): `--timeout`, `-e`, lost commands by kind,
//! reconnects with the same backoff (`conn_fail.rs`). A `SELECT` to a database this thread has not
//! seen answered is waited for before its connection's next command is written, so a database
//! the target lacks is found before anything could run in the wrong one.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};
use resp::{Kind, Scan, Scanner};

use crate::engine::cluster::ClusterShared;
use crate::engine::conn::Stream;
use crate::engine::{ErrorPolicy, FailKind, Target, is_maxclients, record_error};
use crate::metrics::thread_cpu::{ThreadCpuMark, ThreadCpuUsage, current_tid};
use crate::metrics::{Recorder, SharedTimeline};

use super::redirect::{Redirects, is_redirect};

/// Requests a connection may have unanswered before its next write waits (`--speed max`, or a
/// server that fell far behind).
pub const MAX_IN_FLIGHT: usize = 1024;

/// [`Sent::select`] of a command that is not a `SELECT`.
pub(super) const NO_SELECT: u32 = u32::MAX;

/// How long replies are waited for after the last command was sent (a blocking command whose
/// original data is not there may never be answered).
pub const DRAIN: Duration = Duration::from_secs(5);

/// One command of a chunk: its bytes are `bytes[start..end]` of the chunk.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    pub due_ns: Option<u64>,
    pub conn: u32,
    /// `--cluster`: the node (an index of [`Setup::nodes`]) its connection goes to.
    pub node: u16,
    pub name: u16,
    pub measured: bool,
    /// A `SELECT` (the trace's or one the schedule added): the database it switches to.
    pub select: Option<u32>,
    pub start: u32,
    pub end: u32,
}

/// Commands for one thread, encoded back to back.
#[derive(Debug, Default)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub jobs: Vec<Job>,
}

impl Chunk {
    /// A chunk with room for `jobs` commands and `bytes` bytes of them: two allocations per
    /// hand-over, not a growth of each `Vec` at every doubling.
    pub fn with_capacity(jobs: usize, bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(bytes),
            jobs: Vec::with_capacity(jobs),
        }
    }
}

/// One second of the schedule as it ran: how many commands were due in it and were sent in it
/// (by wall clock from the replay's start), and the slip of those sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlipSecond {
    pub due: u64,
    pub sent: u64,
    /// Largest and summed lateness of the sends of this second, µs.
    pub slip_max_us: u64,
    pub slip_sum_us: u64,
    /// Commands written in each 100 ms of the second (a gap shorter than a second shows here).
    pub sent_slots: [u64; 10],
}

/// Adds `other`'s seconds into `into`.
pub fn merge_slip(into: &mut Vec<SlipSecond>, other: &[SlipSecond]) {
    if into.len() < other.len() {
        into.resize(other.len(), SlipSecond::default());
    }
    for (a, b) in into.iter_mut().zip(other) {
        a.due += b.due;
        a.sent += b.sent;
        a.slip_max_us = a.slip_max_us.max(b.slip_max_us);
        a.slip_sum_us += b.slip_sum_us;
        for (x, y) in a.sent_slots.iter_mut().zip(b.sent_slots) {
            *x += y;
        }
    }
}

/// What a thread needs.
pub struct Setup {
    pub target: Target,
    /// `--cluster`: the shared slot map, whose node indexes the jobs name (without it, every
    /// connection goes to `target`). With it, `-MOVED`/`-ASK` replies are followed
    /// (`redirect.rs`).
    pub cluster: Option<Arc<ClusterShared>>,
    /// `AUTH`'s arguments (the target's credentials), when given.
    pub auth: Option<Vec<Vec<u8>>>,
    /// The replay's start: intended times are offsets from it.
    pub start: Instant,
    /// Where measurement starts (`--warmup-from`), for the timeline's second 0.
    pub measure_start: Instant,
    pub timeline: SharedTimeline,
    pub stop: Arc<AtomicBool>,
    /// Raised by the thread whose failure ends the replay (without `-e`), so the others stop.
    pub failed: Arc<AtomicBool>,
    /// `--timeout`, and `-e` (`Count`) or not (`Abort`).
    pub timeout: Option<Duration>,
    pub policy: ErrorPolicy,
    /// Where the thread publishes its kernel id, for the journal's reading of its CPU
    /// (`engine::seconds::ThreadClocks`).
    pub tid: Arc<AtomicU64>,
}

/// What a thread measured.
pub struct Outcome {
    pub recorder: Recorder,
    pub slip: Vec<SlipSecond>,
    pub issued: u64,
    pub connections: u64,
    pub fatal: Option<String>,
    /// `--cluster`: redirects followed.
    pub moved: u64,
    pub ask: u64,
    /// The thread's CPU from its start to its end (the record's client CPU).
    pub cpu: ThreadCpuUsage,
}

pub(super) struct Sent {
    pub(super) intended: Instant,
    pub(super) sent: Instant,
    pub(super) name: u16,
    pub(super) measured: bool,
    /// Due at once (`--speed max`, or a command the replay adds): its intended time is when it
    /// is written.
    pub(super) asap: bool,
    /// A `SELECT`: its database (its reply says whether the target has it); [`NO_SELECT`]
    /// otherwise (not an `Option`: that would grow every request in flight by 8 bytes, and a
    /// replay holds up to [`MAX_IN_FLIGHT`] of them per connection).
    pub(super) select: u32,
    /// `--cluster`: the command, to send again where a redirect says.
    pub(super) bytes: Option<Box<[u8]>>,
}

pub(super) struct Conn {
    /// `None` while it is down (`-e`: until its backoff is over and its next command is due).
    pub(super) stream: Option<Stream>,
    pub(super) node: u16,
    pub(super) inflight: VecDeque<Sent>,
    pub(super) out: Vec<u8>,
    pub(super) input: Vec<u8>,
    pub(super) scanner: Scanner,
    pub(super) writable: bool,
    /// Commands at the back of `inflight` queued since its last write (their send time is the
    /// write's), and whether it is on the thread's list of connections to write.
    pub(super) queued: usize,
    pub(super) dirty: bool,
    /// Given up for good (its 1,024 requests unanswered for [`DRAIN`], no `--timeout`): its later
    /// commands are lost as "connection closed".
    pub(super) abandoned: bool,
    /// Down: why (its commands due meanwhile are lost under this kind), when it may be reopened,
    /// its backoff, and when it was last opened.
    pub(super) down: FailKind,
    pub(super) retry_at: Instant,
    pub(super) backoff: Duration,
    pub(super) opened_at: Instant,
    /// Reopened (`-e`) and not answered on yet: its first reply counts as the reconnect (a
    /// frozen server's kernel accepts connections it never answers on).
    pub(super) reopened: bool,
    /// The database its last `SELECT` switched to (a reopened connection selects it again).
    pub(super) db: u32,
    /// A `SELECT` to a database not yet answered on this thread is in flight: the next command
    /// waits for its reply.
    pub(super) select_wait: bool,
    /// Its last `SELECT` was refused (a database the target lacks): that error, which each of
    /// its commands until the next `SELECT` is counted as, unsent.
    pub(super) bad_db: Option<Box<[u8]>>,
}

pub(super) struct Thread {
    pub(super) setup: Setup,
    pub(super) poll: Poll,
    pub(super) events: Events,
    /// By the schedule's connection number (this thread's only).
    pub(super) conns: Vec<Option<Conn>>,
    pub(super) rec: Recorder,
    pub(super) slip: Vec<SlipSecond>,
    pub(super) opened: u64,
    pub(super) read_buf: Vec<u8>,
    /// Connections with commands queued and not yet written (`Conn::dirty`).
    pub(super) dirty: Vec<usize>,
    /// The last poll's events: connection, readable, writable.
    pub(super) ready: Vec<(usize, bool, bool)>,
    pub(super) redirects: Option<Redirects>,
    /// Databases a `SELECT` succeeded or failed in on this thread: a later `SELECT` to a known
    /// good one is pipelined; to a known bad one it is not sent.
    pub(super) good_dbs: HashSet<u32>,
    pub(super) bad_dbs: HashMap<u32, Box<[u8]>>,
    /// The next look for `--timeout`s, and the backoff jitter's state.
    pub(super) next_watch: Instant,
    pub(super) jitter: u64,
}

/// Runs one thread until its channel closes and its replies are in (or [`DRAIN`] passed), or
/// the stop flag is raised.
pub fn run(setup: Setup, rx: Receiver<Chunk>) -> Outcome {
    let clock = ThreadCpuMark::now();
    setup.tid.store(current_tid(), Ordering::Relaxed);
    let rec = Recorder::new(setup.measure_start, setup.timeline.clone());
    let mut t = Thread {
        poll: match Poll::new() {
            Ok(p) => p,
            Err(e) => {
                setup.failed.store(true, Ordering::Relaxed);
                return Outcome {
                    recorder: rec,
                    slip: Vec::new(),
                    issued: 0,
                    connections: 0,
                    fatal: Some(format!("cannot create a poller: {e}")),
                    moved: 0,
                    ask: 0,
                    cpu: clock.usage_since(),
                };
            }
        },
        redirects: setup
            .cluster
            .as_ref()
            .map(|c| Redirects::new(setup.target.clone(), setup.auth.clone(), Arc::clone(c))),
        jitter: u64::from(current_tid() as u32) | 1 << 40,
        setup,
        events: Events::with_capacity(256),
        conns: Vec::new(),
        rec,
        slip: Vec::new(),
        opened: 0,
        read_buf: vec![0; 64 * 1024],
        dirty: Vec::new(),
        ready: Vec::new(),
        good_dbs: HashSet::new(),
        bad_dbs: HashMap::new(),
        next_watch: Instant::now(),
    };
    let fatal = t.main_loop(&rx).err();
    if fatal.is_some() {
        // The others stop too: the replay ends here, as a benchmark run does.
        t.setup.failed.store(true, Ordering::Relaxed);
    }
    t.rec.unanswered = t
        .conns
        .iter()
        .flatten()
        .flat_map(|c| c.inflight.iter())
        .filter(|s| s.measured)
        .count() as u64;
    t.rec.flush();
    let (moved, ask) = t.redirects.as_ref().map_or((0, 0), |r| (r.moved, r.ask));
    Outcome {
        issued: t.rec.issued,
        recorder: t.rec,
        slip: t.slip,
        connections: t.opened,
        fatal,
        moved,
        ask,
        cpu: clock.usage_since(),
    }
}

impl Thread {
    pub(super) fn stopped(&self) -> bool {
        self.setup.stop.load(Ordering::Relaxed) || self.setup.failed.load(Ordering::Relaxed)
    }

    fn main_loop(&mut self, rx: &Receiver<Chunk>) -> Result<(), String> {
        loop {
            let chunk = match rx.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Empty) => {
                    if self.has_inflight() {
                        self.poll_io(Some(Duration::from_millis(1)))?;
                        if self.stopped() {
                            return Ok(());
                        }
                        continue;
                    }
                    match rx.recv_timeout(Duration::from_millis(50)) {
                        Ok(c) => c,
                        Err(RecvTimeoutError::Timeout) if self.stopped() => return Ok(()),
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Err(TryRecvError::Disconnected) => break,
            };
            for job in &chunk.jobs {
                if self.stopped() {
                    return Ok(());
                }
                let bytes = &chunk.bytes[job.start as usize..job.end as usize];
                self.send(job, bytes)?;
            }
            self.flush_queued()?;
        }
        // Replies are awaited for DRAIN after the last command, or until `--timeout` has failed
        // whatever is still unanswered.
        let wait = self
            .setup
            .timeout
            .map_or(DRAIN, |t| DRAIN.max(t + Duration::from_millis(200)));
        let deadline = Instant::now() + wait;
        while self.has_inflight() && !self.stopped() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            self.poll_io(Some((deadline - now).min(Duration::from_millis(50))))?;
        }
        Ok(())
    }

    fn has_inflight(&self) -> bool {
        self.conns
            .iter()
            .flatten()
            .any(|c| !c.inflight.is_empty() || !c.out.is_empty())
    }

    /// Waits for the job's time (reading replies meanwhile), then writes it.
    fn send(&mut self, job: &Job, bytes: &[u8]) -> Result<(), String> {
        let due = job
            .due_ns
            .map(|ns| self.setup.start + Duration::from_nanos(ns));
        // Connect while the command waits for its time (it arrives up to the dispatcher's
        // lookahead early), so a new client's first command is not late by a connect.
        let k = job.conn as usize;
        if self.conns.len() <= k {
            self.conns.resize_with(k + 1, || None);
        }
        if self.conns[k].is_none() {
            self.conns[k] = Some(self.open(k, job.node)?);
        }
        if let Some(due) = due {
            loop {
                let now = Instant::now();
                if now >= due || self.stopped() {
                    break;
                }
                self.poll_io(Some((due - now).min(Duration::from_millis(50))))?;
            }
        }
        self.wait_room(k)?;
        if self.stopped() {
            return Ok(());
        }
        let now = Instant::now();
        let intended = due.unwrap_or(now);
        self.note_send(due, now);
        if self.unsendable(k, job, now)? {
            return Ok(());
        }
        let select = self.select_of(k, job);
        let conn = self.conns[k].as_mut().expect("opened above");
        conn.out.extend_from_slice(bytes);
        conn.inflight.push_back(Sent {
            intended,
            sent: now,
            name: job.name,
            measured: job.measured,
            asap: due.is_none(),
            select: select.unwrap_or(NO_SELECT),
            bytes: self.redirects.is_some().then(|| bytes.into()),
        });
        if job.measured {
            self.rec.issued += 1;
        }
        self.queue(k);
        Ok(())
    }

    /// Connection `k` has a command queued: written with the batch (`flush_queued`).
    pub(super) fn queue(&mut self, k: usize) {
        let conn = self.conns[k].as_mut().expect("open");
        conn.queued += 1;
        if !conn.dirty {
            conn.dirty = true;
            self.dirty.push(k);
        }
    }

    /// Writes every connection with commands queued, their send time read once for all.
    fn flush_queued(&mut self) -> Result<(), String> {
        if self.dirty.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        let mut dirty = std::mem::take(&mut self.dirty);
        for &k in &dirty {
            if let Some(conn) = self.conns[k].as_mut() {
                conn.dirty = false;
                let queued = std::mem::take(&mut conn.queued).min(conn.inflight.len());
                let from = conn.inflight.len() - queued;
                for s in conn.inflight.range_mut(from..) {
                    s.sent = now;
                    if s.asap {
                        s.intended = now;
                    }
                }
                self.flush(k)?;
            }
        }
        dirty.clear();
        self.dirty = dirty;
        Ok(())
    }

    /// Waits (reading replies) until connection `k` may take a command: fewer than
    /// [`MAX_IN_FLIGHT`] unanswered, and no `SELECT` to a database not yet known in flight.
    fn wait_room(&mut self, k: usize) -> Result<(), String> {
        let full_since = Instant::now();
        while self.conns[k].as_ref().is_some_and(|c| {
            c.stream.is_some() && (c.inflight.len() >= MAX_IN_FLIGHT || c.select_wait)
        }) {
            if self.stopped() {
                return Ok(());
            }
            if self.setup.timeout.is_none() && full_since.elapsed() >= DRAIN {
                // A connection that answers nothing for this long (a blocking command whose
                // data the target lacks) is given up: its requests fail as timeouts, and its
                // later commands as lost, rather than the replay waiting for ever. (With
                // `--timeout`, that rule fails them sooner.)
                self.give_up(k);
                break;
            }
            self.poll_io(Some(Duration::from_millis(10)))?;
        }
        Ok(())
    }

    /// The schedule's per-second figures for a command due at `due` and sent at `now`.
    fn note_send(&mut self, due: Option<Instant>, now: Instant) {
        let start = self.setup.start;
        let second = |at: Instant| at.saturating_duration_since(start).as_secs() as usize;
        let sent_s = second(now);
        let slot = now.saturating_duration_since(start).subsec_millis() as usize / 100;
        let due_s = due.map(second).unwrap_or(sent_s);
        let need = sent_s.max(due_s) + 1;
        if self.slip.len() < need {
            self.slip.resize(need, SlipSecond::default());
        }
        self.slip[due_s].due += 1;
        let s = &mut self.slip[sent_s];
        s.sent += 1;
        s.sent_slots[slot] += 1;
        if let Some(due) = due {
            let late = now.saturating_duration_since(due).as_micros() as u64;
            s.slip_max_us = s.slip_max_us.max(late);
            s.slip_sum_us += late;
        }
    }

    /// Writes what connection `k` has pending; watches for writability while some is left. A
    /// write that fails fails the connection (`conn_fail.rs`).
    pub(super) fn flush(&mut self, k: usize) -> Result<(), String> {
        let conn = self.conns[k].as_mut().expect("open");
        let Some(stream) = conn.stream.as_mut() else {
            return Ok(());
        };
        while !conn.out.is_empty() {
            match stream.write(&conn.out) {
                Ok(0) => break,
                Ok(n) => {
                    conn.out.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // What the server said before it closed first (a server at `maxclients`
                    // refuses a connection so: `replies`).
                    self.read(k)?;
                    if self.conns[k].as_ref().is_none_or(|c| c.stream.is_none()) {
                        return Ok(());
                    }
                    let message = format!("{}: {e}", self.setup.target.display());
                    return self.conn_failed(k, FailKind::of(&e), message);
                }
            }
        }
        let want = !conn.out.is_empty();
        if want != conn.writable {
            conn.writable = want;
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            self.poll
                .registry()
                .reregister(stream, Token(k), interest)
                .map_err(|e| format!("cannot watch a connection: {e}"))?;
        }
        Ok(())
    }

    pub(super) fn poll_io(&mut self, timeout: Option<Duration>) -> Result<(), String> {
        // Nothing queued waits while the thread does.
        self.flush_queued()?;
        let timeout = match self.setup.timeout {
            Some(t) => Some(timeout.map_or(t / 10, |w| w.min(t / 10))),
            None => timeout,
        };
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(format!("poll: {e}")),
        }
        // Copied out of `events` (handling them needs `self`), into a list kept for the next.
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            self.events
                .iter()
                .map(|e| (e.token().0, e.is_readable(), e.is_writable())),
        );
        for &(k, readable, writable) in &ready {
            if writable {
                self.flush(k)?;
            }
            if readable {
                self.read(k)?;
            }
        }
        self.ready = ready;
        self.watch_timeouts(Instant::now())
    }

    /// Reads connection `k` until drained and accounts for every whole reply.
    fn read(&mut self, k: usize) -> Result<(), String> {
        let Some(conn) = self.conns.get_mut(k).and_then(|c| c.as_mut()) else {
            return Ok(());
        };
        let Some(stream) = conn.stream.as_mut() else {
            return Ok(());
        };
        loop {
            match stream.read(&mut self.read_buf) {
                Ok(0) => {
                    // What came before the close first: a server at `maxclients` says so, then
                    // closes (a refusal, not a close).
                    self.replies(k)?;
                    if self.conns[k].as_ref().is_none_or(|c| c.stream.is_none()) {
                        return Ok(());
                    }
                    let message = format!(
                        "{}: the server closed the connection",
                        self.setup.target.display()
                    );
                    return self.conn_failed(k, FailKind::Closed, message);
                }
                Ok(n) => {
                    conn.input.extend_from_slice(&self.read_buf[..n]);
                    if n < self.read_buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let message = format!("{}: {e}", self.setup.target.display());
                    return self.conn_failed(k, FailKind::of(&e), message);
                }
            }
        }
        self.replies(k)
    }

    /// Accounts for every whole reply connection `k` has read.
    fn replies(&mut self, k: usize) -> Result<(), String> {
        let now = Instant::now();
        let mut pos = 0;
        let mut result = Ok(());
        let mut refused = false;
        loop {
            let conn = self.conns[k].as_mut().expect("read above");
            if pos >= conn.input.len() {
                break;
            }
            match conn.scanner.scan(&conn.input[pos..]) {
                Ok(Scan::Reply { consumed, info }) => {
                    let reply = &conn.input[pos..pos + consumed];
                    pos += consumed;
                    if info.kind == Kind::Push {
                        self.rec.pushes.other += 1;
                        continue;
                    }
                    let error = info.error.map(|r| reply.get(r).unwrap_or(b"ERR").to_vec());
                    if self.setup.policy == ErrorPolicy::Count
                        && error.as_deref().is_some_and(is_maxclients)
                    {
                        // The server at `maxclients` refused the connection (its first reply,
                        // whatever was in flight, then it closes): the engine's rule, the
                        // connection fails as refused and what it carried is lost so.
                        refused = true;
                        break;
                    }
                    let Some(sent) = conn.inflight.pop_front() else {
                        continue;
                    };
                    if let Err(e) = self.settle(k, sent, error, now) {
                        result = Err(e);
                        break;
                    }
                }
                Ok(Scan::Partial { consumed }) => {
                    pos += consumed;
                    break;
                }
                Err(e) => {
                    result = Err(format!(
                        "{}: protocol error: {e}",
                        self.setup.target.display()
                    ));
                    break;
                }
            }
        }
        let conn = self.conns[k].as_mut().expect("read above");
        conn.input.drain(..pos);
        if refused && result.is_ok() {
            if std::mem::take(&mut conn.reopened) {
                self.rec.reconnect_refused();
            }
            let message = format!(
                "{}: ERR max number of clients reached",
                self.setup.target.display()
            );
            return self.conn_failed(k, FailKind::Refused, message);
        }
        result
    }

    /// One command's reply, `error` its error text if it is one: a redirect followed to the
    /// node that answers (timed when that answer came), a `SELECT`'s database marked as the
    /// target has it or lacks it, and the command counted as the engine counts a request.
    fn settle(
        &mut self,
        k: usize,
        s: Sent,
        mut error: Option<Vec<u8>>,
        now: Instant,
    ) -> Result<(), String> {
        let conn = self.conns[k].as_mut().expect("read above");
        if std::mem::take(&mut conn.reopened) {
            self.rec.reconnected(now);
        }
        // A command's histogram is made when its first reply comes (a histogram is
        // large: making all of them up front would cost a thread tens of MB).
        let name = s.name as usize;
        if s.measured && self.rec.commands.len() <= name {
            self.rec.commands.resize_with(name + 1, Default::default);
        }
        let mut at = now;
        if let (Some(text), Some(r), Some(bytes)) =
            (&error, self.redirects.as_mut(), s.bytes.as_deref())
            && is_redirect(text)
        {
            // The redirected node's answer is the command's, timed when it came.
            error = r.follow(text, bytes).err();
            at = Instant::now();
        }
        if s.select != NO_SELECT {
            let db = s.select;
            conn.select_wait = false;
            match &error {
                None => {
                    self.good_dbs.insert(db);
                }
                Some(text) => {
                    self.bad_dbs.insert(db, text.as_slice().into());
                    conn.bad_db = Some(text.as_slice().into());
                }
            }
        }
        match error {
            Some(text) => {
                record_error(&mut self.rec, self.setup.policy, !s.measured, &text, at)
                    .map_err(|e| e.to_string())?;
                self.rec.command_error(name, !s.measured);
            }
            None => {
                self.rec
                    .success_of(Some(name), s.intended, s.sent, !s.measured, at);
            }
        }
        if s.measured {
            self.rec.last_reply = Some(at);
        }
        Ok(())
    }
}
