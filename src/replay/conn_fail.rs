//! A replay thread's connections failing and coming back, by the benchmark's rules: a command
//! unanswered for `--timeout` fails its connection as a timeout, as a reset or a close does;
//! without `-e` that ends the replay (with the benchmark's hint), with `-e` the commands it
//! carried count as lost by kind, and it is reopened with the benchmark's backoff
//! (`engine::backoff_step`) when its next command is due after it — a command due while it is
//! down is lost under the same kind, as the open loop does not wait. A command whose database
//! the target refused (`SELECT` answered with an error) is counted as that error and not sent,
//! so it never runs in another database.
//!
//! Why the rules are the engine's and the loop is not: the replay's connections each carry their
//! own command stream at its own times (`worker.rs`), but what a failure means — its kinds, the
//! hint, the backoff, error replies under `-e` — has one home, `engine::worker::outage`.

use std::time::{Duration, Instant};

use mio::{Interest, Token};
use resp::Scanner;

use crate::engine::conn::Stream;
use crate::engine::control::ControlConn;
use crate::engine::{
    BACKOFF_START, EngineError, ErrorPolicy, FailKind, backoff_step, jitter_from, record_error,
    with_hint,
};
use crate::metrics::Recorder;

use super::schedule::ADDED;
use super::worker::{Conn, Job, Sent, Thread};

/// One measured request of command `name` lost without a reply, in the totals and in its
/// command's figures (a mix's per-command failures add up to the test's).
fn lost_one(rec: &mut Recorder, name: u16, kind: FailKind) {
    let k = name as usize;
    if rec.commands.len() <= k {
        rec.commands.resize_with(k + 1, Default::default);
    }
    rec.failed(kind as usize, 1, Instant::now());
    rec.command_error(k, false);
}

impl Thread {
    /// Connection `k` to `node`, opened now. A connect that fails ends the replay without `-e`;
    /// with it, the connection starts down (its first command is lost, a later one reopens it).
    pub(super) fn open(&mut self, k: usize, node: u16) -> Result<Conn, String> {
        let now = Instant::now();
        let mut conn = Conn {
            stream: None,
            node,
            inflight: Default::default(),
            out: Vec::with_capacity(4096),
            input: Vec::with_capacity(16 * 1024),
            scanner: Scanner::new(),
            writable: false,
            queued: 0,
            dirty: false,
            abandoned: false,
            down: FailKind::Other,
            retry_at: now,
            backoff: BACKOFF_START,
            opened_at: now,
            reopened: false,
            db: 0,
            select_wait: false,
            bad_db: None,
        };
        match self.connect(k, node) {
            Ok(stream) => {
                conn.stream = Some(stream);
                self.opened += 1;
            }
            Err((_, e)) if self.setup.policy == ErrorPolicy::Abort => return Err(e),
            Err((kind, _)) => self.went_down(&mut conn, kind, now),
        }
        Ok(conn)
    }

    /// Connects (and authenticates) to `node` within `--timeout` (or the connect timeout), and
    /// watches the socket under token `k`.
    fn connect(&mut self, k: usize, node: u16) -> Result<Stream, (FailKind, String)> {
        let target = match &self.setup.cluster {
            Some(c) => c.target(usize::from(node)),
            None => self.setup.target.clone(),
        };
        let limit = target.connect_timeout();
        let within = self.setup.timeout.map_or(limit, |t| t.min(limit));
        let failed = |e: EngineError| (FailKind::of_connect(&e), e.to_string());
        let mut control = ControlConn::connect_within(&target, within).map_err(failed)?;
        if let Some(auth) = self.setup.auth.as_deref() {
            // A frozen server accepts (the kernel does) but never answers the AUTH.
            if let Some(t) = self.setup.timeout {
                control.set_timeout(t).map_err(failed)?;
            }
            control
                .auth(auth)
                .map_err(|e| (FailKind::Timeout, e.to_string()))?;
        }
        let mut stream = control
            .into_stream()
            .into_nonblocking()
            .map_err(|e| (FailKind::of(&e), format!("{}: {e}", target.display())))?;
        self.poll
            .registry()
            .register(&mut stream, Token(k), Interest::READABLE)
            .map_err(|e| (FailKind::Other, format!("cannot watch a connection: {e}")))?;
        Ok(stream)
    }

    /// `conn` is down (`kind`) from `now`: it may be reopened after its backoff.
    fn went_down(&mut self, conn: &mut Conn, kind: FailKind, now: Instant) {
        conn.down = kind;
        let up_for = now.saturating_duration_since(conn.opened_at);
        let jitter = jitter_from(&mut self.jitter);
        let wait;
        (wait, conn.backoff) = backoff_step(conn.backoff, up_for, jitter, None);
        conn.retry_at = now + wait;
    }

    /// Connection `k` failed (`kind`, `message` saying how). Without `-e` that ends the replay;
    /// with it, the commands it carried are lost under `kind` and it goes down until its backoff
    /// is over.
    pub(super) fn conn_failed(
        &mut self,
        k: usize,
        kind: FailKind,
        message: String,
    ) -> Result<(), String> {
        if self.setup.policy == ErrorPolicy::Abort {
            return Err(with_hint(EngineError::Io(message)).to_string());
        }
        let now = Instant::now();
        let Some(mut conn) = self.conns.get_mut(k).and_then(Option::take) else {
            return Ok(());
        };
        let lost = self.close(&mut conn);
        for s in lost.iter().filter(|s| s.measured) {
            lost_one(&mut self.rec, s.name, kind);
        }
        self.went_down(&mut conn, kind, now);
        self.conns[k] = Some(conn);
        Ok(())
    }

    /// Closes `conn`'s socket and forgets what it was doing; returns its commands in flight.
    fn close(&mut self, conn: &mut Conn) -> Vec<Sent> {
        if let Some(mut stream) = conn.stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
            stream.shutdown();
        }
        conn.out.clear();
        conn.input.clear();
        conn.scanner = Scanner::new();
        conn.writable = false;
        conn.select_wait = false;
        std::mem::take(&mut conn.inflight).into()
    }

    /// Gives connection `k` up for good: its requests in flight fail as timeouts, its later
    /// commands are lost as "connection closed" (a blocking command the target never answers).
    pub(super) fn give_up(&mut self, k: usize) {
        let Some(mut conn) = self.conns.get_mut(k).and_then(Option::take) else {
            return;
        };
        conn.abandoned = true;
        for s in self.close(&mut conn).iter().filter(|s| s.measured) {
            lost_one(&mut self.rec, s.name, FailKind::Timeout);
        }
        self.conns[k] = Some(conn);
    }

    /// `--timeout`: every connection whose oldest command has waited that long fails as a
    /// timeout. Looked at every tenth of the timeout (1 ms to 100 ms), as the benchmark does.
    pub(super) fn watch_timeouts(&mut self, now: Instant) -> Result<(), String> {
        let Some(limit) = self.setup.timeout else {
            return Ok(());
        };
        if now < self.next_watch {
            return Ok(());
        }
        self.next_watch =
            now + (limit / 10).clamp(Duration::from_millis(1), Duration::from_millis(100));
        for k in 0..self.conns.len() {
            let late = self.conns[k].as_ref().is_some_and(|c| {
                c.stream.is_some()
                    && c.inflight
                        .front()
                        .is_some_and(|s| now.saturating_duration_since(s.sent) >= limit)
            });
            if late {
                let message = format!(
                    "no reply from {} within {} s",
                    self.setup.target.display(),
                    limit.as_secs_f64()
                );
                self.conn_failed(k, FailKind::Timeout, message)?;
            }
        }
        Ok(())
    }

    /// Whether `job` must not be written on connection `k`, having been counted instead: lost
    /// (its connection is down or given up; with `-e` a connection past its backoff is reopened
    /// first), or refused (its database is one the target lacks: counted as the `SELECT`'s
    /// error, never run in another database).
    pub(super) fn unsendable(&mut self, k: usize, job: &Job, now: Instant) -> Result<bool, String> {
        let mut conn = self.conns[k].take().expect("opened");
        let verdict = self.judge(k, &mut conn, job, now);
        self.conns[k] = Some(conn);
        verdict
    }

    fn judge(
        &mut self,
        k: usize,
        conn: &mut Conn,
        job: &Job,
        now: Instant,
    ) -> Result<bool, String> {
        if conn.abandoned {
            self.lost(job, FailKind::Closed);
            return Ok(true);
        }
        if conn.stream.is_none() {
            if now >= conn.retry_at {
                self.reopen(k, conn, now);
            }
            if conn.stream.is_none() {
                self.lost(job, conn.down);
                return Ok(true);
            }
        }
        if let Some(db) = job.select {
            conn.bad_db = self.bad_dbs.get(&db).cloned();
        }
        match conn.bad_db.clone() {
            Some(text) => self.refused(job, &text, now).map(|()| true),
            None => Ok(false),
        }
    }

    /// `-e`: reopens `conn` (down), selecting its database again; counted as a reconnect
    /// attempt, and as a reconnect when its first reply comes (`worker.rs`).
    fn reopen(&mut self, k: usize, conn: &mut Conn, now: Instant) {
        self.rec.reconnect_attempt(now);
        match self.connect(k, conn.node) {
            Ok(stream) => {
                conn.stream = Some(stream);
                conn.opened_at = now;
                conn.reopened = true;
                if conn.db != 0 {
                    let db = conn.db.to_string();
                    resp::encode_command(&mut conn.out, &[b"SELECT".as_slice(), db.as_bytes()]);
                    conn.select_wait = !self.good_dbs.contains(&conn.db);
                    conn.inflight.push_back(Sent {
                        intended: now,
                        sent: now,
                        name: ADDED,
                        measured: false,
                        asap: true,
                        select: conn.db,
                        bytes: None,
                    });
                }
            }
            Err((kind, _)) => {
                if kind == FailKind::Refused {
                    self.rec.reconnect_refused();
                }
                self.went_down(conn, kind, now);
            }
        }
    }

    /// `job` not sent: lost under `kind` (when measured, it was issued and failed).
    fn lost(&mut self, job: &Job, kind: FailKind) {
        if job.measured {
            self.rec.issued += 1;
            lost_one(&mut self.rec, job.name, kind);
        }
    }

    /// `job` not sent because its database was refused: counted as that error reply (by its
    /// first word, as the benchmark counts error replies), which without `-e` ends the replay.
    fn refused(&mut self, job: &Job, text: &[u8], now: Instant) -> Result<(), String> {
        let warmup = !job.measured;
        if job.measured {
            self.rec.issued += 1;
            let k = job.name as usize;
            if self.rec.commands.len() <= k {
                self.rec.commands.resize_with(k + 1, Default::default);
            }
        }
        record_error(&mut self.rec, self.setup.policy, warmup, text, now)
            .map_err(|e| e.to_string())?;
        self.rec.command_error(job.name as usize, warmup);
        Ok(())
    }

    /// A `SELECT` job about to be written on connection `k`: its database, which the
    /// connection is in from now on; one not yet answered on this thread holds the connection's
    /// next command until its reply says whether the target has it.
    pub(super) fn select_of(&mut self, k: usize, job: &Job) -> Option<u32> {
        let db = job.select.filter(|&d| d != super::worker::NO_SELECT)?;
        let conn = self.conns[k].as_mut().expect("opened");
        conn.db = db;
        conn.select_wait = !self.good_dbs.contains(&db);
        Some(db)
    }
}
