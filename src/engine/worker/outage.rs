//! When a connection fails: a reply timeout (`--timeout`), a reset, a close, a refused
//! reconnect. With `-e` the requests it carried count as failed by kind, the connection waits a
//! capped, jittered, doubling backoff and is reopened without blocking (the prefix goes out again
//! with its first batch), and the test goes on; without `-e` the failure ends the run, as in the
//! reference, with a hint. Its own room so that the hot path in `io.rs` only gains a call at
//! each place a socket can fail.

use std::io;
use std::time::{Duration, Instant};

use super::conn::{BACKOFF_START, State};
use super::state::Worker;
use crate::engine::crash_board::{self, ConnState};
use crate::engine::{EngineError, ErrorPolicy};

/// The longest wait between two attempts, so a server that comes back is used within half a
/// second (the measured outage is at most that much longer than the server's).
const BACKOFF_MAX: Duration = Duration::from_millis(500);
/// A connection that stayed up this long before failing starts its backoff afresh. Not "once a
/// batch completes": a server at `maxclients` answers one error and closes, and resetting then
/// would reconnect to it every 10 ms.
const BACKOFF_RESET_AFTER: Duration = Duration::from_secs(2);
/// How often connections that are reconnecting are checked when there is no `--timeout`.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Why requests failed without a reply: the error kind they are counted under (beside error
/// replies' first words in `ErrorCounts`, so the report and the record show them without a new
/// field).
/// Shared with `replay`'s threads, so a replayed command is lost under the same kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailKind {
    // In `metrics::FAILURE_KINDS` order: `kind as usize` indexes it.
    /// No reply within `--timeout` (or a reconnect that did not finish in time).
    Timeout,
    /// Reset by the peer (also an aborted connection or a broken pipe).
    Reset,
    /// The server closed the connection.
    Closed,
    /// A reconnect was refused.
    Refused,
    /// Any other socket error.
    Other,
}

impl FailKind {
    pub(crate) fn of(e: &io::Error) -> FailKind {
        use io::ErrorKind as K;
        match e.kind() {
            K::TimedOut => FailKind::Timeout,
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => FailKind::Reset,
            K::UnexpectedEof => FailKind::Closed,
            K::ConnectionRefused => FailKind::Refused,
            _ => FailKind::Other,
        }
    }

    /// The kind of a failed connect attempt.
    pub(crate) fn of_connect(e: &EngineError) -> FailKind {
        match e {
            EngineError::Connect { reason, .. } if reason.contains("refused") => FailKind::Refused,
            _ => FailKind::Other,
        }
    }
}

/// The hint a fatal connection failure gets without `-e`.
const HINT: &str = "use -e to count failures, reconnect and go on";

/// Adds [`HINT`] to a connection failure that ends the run (a benchmark's or a replay's).
pub(crate) fn with_hint(err: EngineError) -> EngineError {
    match err {
        EngineError::Io(m) => EngineError::Io(format!("{m} ({HINT})")),
        EngineError::Connect { target, reason } => EngineError::Connect {
            target,
            reason: format!("{reason} ({HINT})"),
        },
        other => other,
    }
}

/// The backoff rule (one home: the benchmark's connections and a replay's): a connection that
/// failed after `up_for` with `backoff` as its current backoff waits the returned time, and its
/// next backoff is the second. Waits between half and all of the backoff (`jitter` in [0, 1)), so
/// connections that failed together do not all knock at the same moment; one that stayed up
/// [`BACKOFF_RESET_AFTER`] starts afresh. `factor`: memtier's `--reconnect-backoff-factor` (0
/// retries at the next look, F grows the wait F-fold, at least 1); respbench's own is doubling.
pub(crate) fn backoff_step(
    backoff: Duration,
    up_for: Duration,
    jitter: f64,
    factor: Option<f64>,
) -> (Duration, Duration) {
    let backoff = if up_for >= BACKOFF_RESET_AFTER {
        BACKOFF_START
    } else {
        backoff
    };
    let factor = factor.unwrap_or(2.0);
    let wait = if factor == 0.0 {
        Duration::ZERO
    } else {
        backoff.mul_f64(0.5 + 0.5 * jitter)
    };
    (wait, backoff.mul_f64(factor.max(1.0)).min(BACKOFF_MAX))
}

/// A number in [0, 1) from `state` (xorshift; no allocation, no shared state), for backoff jitter.
pub(crate) fn jitter_from(state: &mut u64) -> f64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

impl Worker<'_> {
    /// Connection `i` failed (`err` says how). Without `-e` that ends the run. With `-e`: its
    /// batch's requests count as failed under `kind`, and it is closed and scheduled to reopen
    /// after its backoff (cluster mode: also charged to its node, whose new owner is looked for;
    /// `cluster_fail.rs`).
    pub(super) fn conn_failed(
        &mut self,
        i: usize,
        kind: FailKind,
        err: EngineError,
    ) -> Result<(), EngineError> {
        if self.cfg.load.on_error != ErrorPolicy::Count {
            return Err(with_hint(err));
        }
        let now = Instant::now();
        // Cluster mode: the second under way goes with its nodes' part before the node is
        // charged with what it lost (`Recorder::hand_over_at`).
        self.rec
            .hand_over_at(now, self.cluster.as_ref().map(|cl| &cl.stats));
        if self.cluster.is_some() {
            self.cluster_conn_failed(i, kind, now);
        }
        let jitter = self.jitter();
        let prefix = self.cfg.setup.prefix_commands.len();
        let c = &mut self.conns[i];
        if kind == FailKind::Refused && (c.reopen.recovering || c.reopen.reopened) {
            self.rec.reconnect_refused();
        }
        if c.batch.pending > 0 {
            if !c.batch.warmup {
                self.rec.failed(kind as usize, c.batch.pending, now);
                // A mix: each lost request is also its command's failure (replies come in
                // order, so the unanswered ones are the batch's last `pending`).
                let done = (c.batch.commands - c.batch.pending) as usize;
                for k in c
                    .batch
                    .units
                    .kinds
                    .iter()
                    .skip(done)
                    .take(c.batch.pending as usize)
                {
                    self.rec.command_error(*k as usize, false);
                }
            }
            self.flow.active -= 1;
        }
        if c.reopen.recovering {
            c.reopen.recovering = false;
            self.outages.recovering -= 1;
        }
        c.reopen.refused = false;
        c.reopen.reopened = false;
        let _ = self.poll.registry().deregister(&mut c.stream);
        c.stream.shutdown();
        let up_for = now.saturating_duration_since(c.reopen.connect_started);
        let wait;
        (wait, c.reopen.backoff) = backoff_step(
            c.reopen.backoff,
            up_for,
            jitter,
            self.cfg.load.backoff_factor,
        );
        c.reopen.retry_at = now + wait;
        c.state = State::Down;
        c.batch.pending = 0;
        crash_board::note(self.cfg.id, i, ConnState::Disconnected, 0);
        c.batch.wlen = 0;
        c.batch.written = 0;
        c.prefix_written = 0;
        c.prefix_pending = prefix;
        c.want_write = false;
        c.used = false;
        c.carry.clear();
        c.scanner.reset();
        c.absorbed = 0;
        self.flow.free.retain(|&j| j != i);
        self.outages.down += 1;
        Ok(())
    }

    /// Whether the outage watch has anything to do: reply timeouts, or connections that are
    /// down or reconnecting.
    pub(super) fn watching(&self) -> bool {
        self.cfg.load.reply_timeout.is_some()
            || self.outages.down > 0
            || self.outages.recovering > 0
    }

    /// How long the poll may wait before the outage watch needs a look (`None`: no limit).
    pub(super) fn watch_timeout(&self, now: Instant) -> Option<Duration> {
        if !self.watching() {
            return None;
        }
        let mut wait = self
            .outages
            .next_watch
            .saturating_duration_since(now)
            .min(self.watch_every());
        if self.outages.down > 0 {
            for c in &self.conns {
                if c.state == State::Down {
                    wait = wait.min(c.reopen.retry_at.saturating_duration_since(now));
                }
            }
        }
        Some(wait)
    }

    /// One look: batches past `--timeout` fail, reconnects that take too long fail, connections
    /// whose backoff is over are reopened.
    pub(super) fn watch_outages(&mut self, now: Instant) -> Result<(), EngineError> {
        if !self.watching() {
            return Ok(());
        }
        if now >= self.outages.next_watch {
            self.outages.next_watch = now + self.watch_every();
            self.check_timeouts(now)?;
        }
        if self.outages.down > 0 {
            self.reopen_due(now)?;
        }
        Ok(())
    }

    /// A tenth of `--timeout` (1 ms to 100 ms), so a timeout is noticed at most 10% late.
    fn watch_every(&self) -> Duration {
        self.cfg.load.reply_timeout.map_or(WATCH_EVERY, |t| {
            (t / 10).clamp(Duration::from_millis(1), WATCH_EVERY)
        })
    }

    fn check_timeouts(&mut self, now: Instant) -> Result<(), EngineError> {
        let reply = self.cfg.load.reply_timeout;
        let connect = reply.unwrap_or(self.cfg.setup.target.connect_timeout());
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let (late, limit) = match c.state {
                State::Open => match reply {
                    Some(t) if c.batch.pending > 0 => {
                        (now.saturating_duration_since(c.batch.sent) >= t, t)
                    }
                    _ => (false, Duration::ZERO),
                },
                State::Connecting if c.batch.pending > 0 || c.reopen.recovering => (
                    now.saturating_duration_since(c.reopen.connect_started) >= connect,
                    connect,
                ),
                State::Connecting | State::Down => (false, Duration::ZERO),
            };
            if late {
                let err = EngineError::Io(format!(
                    "no reply from {} within {} s",
                    self.target(c.bind.node).display(),
                    limit.as_secs_f64()
                ));
                self.conn_failed(i, FailKind::Timeout, err)?;
            }
        }
        Ok(())
    }

    /// Reopens (without blocking) every connection whose backoff is over; a refused attempt
    /// waits for the next, longer, backoff.
    fn reopen_due(&mut self, now: Instant) -> Result<(), EngineError> {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if c.state != State::Down || c.reopen.retry_at > now {
                continue;
            }
            let node = c.bind.node;
            self.outages.down -= 1;
            self.gave_up(i)?;
            self.rec
                .hand_over_at(now, self.cluster.as_ref().map(|cl| &cl.stats));
            self.rec.reconnect_attempt(now);
            let epoch = self.target(node).epoch();
            match self.connect_nonblocking(node, i) {
                Ok(stream) => {
                    let c = &mut self.conns[i];
                    c.stream = stream;
                    c.epoch = epoch;
                    c.since_open = 0;
                    c.state = State::Connecting;
                    crash_board::note(self.cfg.id, i, ConnState::Connecting, 0);
                    c.want_write = true;
                    c.reopen.connect_started = now;
                    c.reopen.recovering = true;
                    self.outages.recovering += 1;
                }
                Err(e) => {
                    let kind = FailKind::of_connect(&e);
                    if kind == FailKind::Refused {
                        self.rec.reconnect_refused();
                    }
                    self.conn_failed(i, kind, e)?;
                }
            }
        }
        Ok(())
    }

    /// memtier's `--max-reconnect-attempts N`: the attempt about to be made on connection `i`
    /// would be its N+1-th since it was last up, so the run ends (as memtier gives up).
    fn gave_up(&mut self, i: usize) -> Result<(), EngineError> {
        let c = &mut self.conns[i];
        c.reopen.attempts = c.reopen.attempts.saturating_add(1);
        match self.cfg.load.max_reconnect_attempts {
            Some(max) if c.reopen.attempts > max => Err(EngineError::Other(format!(
                "gave up on a connection to {} after {max} reconnect attempts \
                 (--max-reconnect-attempts)",
                self.target(self.conns[i].bind.node).display()
            ))),
            _ => Ok(()),
        }
    }

    /// A reopened connection connected: it is free for the next batch (the prefix goes out
    /// first). It counts as a reconnect once the server answers on it (`io.rs`), not now: a
    /// server at `maxclients` accepts a connection and then refuses it.
    pub(super) fn reconnected(&mut self, i: usize, now: Instant) -> Result<(), EngineError> {
        self.conns[i].reopen.recovering = false;
        self.conns[i].reopen.reopened = true;
        self.outages.recovering -= 1;
        self.flush(i)?;
        // A side connection only sends the redirected requests queued on it.
        if self.conns[i].state == State::Open && self.conns[i].bind.side.is_none() {
            self.on_free(i, now)?;
        }
        Ok(())
    }

    /// Measured commands in flight when the worker stops: they count as unanswered, so that
    /// completed + failed + unanswered = issued.
    pub(super) fn count_unanswered(&mut self) {
        let n: u64 = self
            .conns
            .iter()
            .filter(|c| c.bind.side.is_none() && !c.batch.warmup)
            .map(|c| c.batch.pending)
            .sum();
        self.rec.unanswered += n + self.retries_unanswered();
    }

    /// `--sentinel`: connection `i` was opened to a primary that has since moved (its next
    /// batch goes over a new connection to the new primary). One relaxed atomic load, and only
    /// for connections that follow a primary.
    #[inline]
    pub(super) fn stale(&self, i: usize) -> bool {
        let c = &self.conns[i];
        c.epoch.is_some() && c.epoch != self.target(c.bind.node).epoch()
    }

    /// A number in [0, 1) for backoff jitter (xorshift; no allocation, no shared state).
    fn jitter(&mut self) -> f64 {
        jitter_from(&mut self.outages.jitter_state)
    }
}
