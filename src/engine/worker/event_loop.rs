//! A worker's event loop: one `mio` poll over its connections, the `--rps` timer and the stop
//! waker, until the test's requests are done (or a deadline, a stop, a failure).

use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Token};

use super::state::{Worker, loop_error};
use crate::engine::EngineError;
use crate::engine::timer::Timer;

/// The poll token of the waker the main thread uses to stop a worker.
pub(crate) const WAKER: Token = Token(usize::MAX);
/// The poll token of the `--rps` timerfd.
const TIMER: Token = Token(usize::MAX - 1);
/// With `--duration`, how long replies still in flight at the end are waited for.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

impl Worker<'_> {
    pub(super) fn event_loop(&mut self) -> Result<(), EngineError> {
        for (i, c) in self.conns.iter_mut().enumerate() {
            self.poll
                .registry()
                .register(&mut c.stream, Token(i), Interest::READABLE)
                .map_err(loop_error)?;
        }
        if self.flow.pacer.is_some() {
            // Without a timerfd (not Linux) pacing falls back to the poll timeout.
            if let Ok(mut timer) = Timer::new() {
                timer
                    .register(self.poll.registry(), TIMER)
                    .map_err(loop_error)?;
                self.flow.timer = Some(timer);
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
            if !self.flow.exhausted && self.cfg.deadline.is_some_and(|d| now >= d) {
                // Every connection may be waiting for a reply (a server that stopped
                // answering): the deadline ends sending without one becoming free.
                self.flow.exhausted = true;
                self.flow.free.clear();
            }
            if self.flow.exhausted && self.flow.active == 0 && self.outstanding() == 0 {
                return Ok(());
            }
            if self.cluster.is_some() {
                self.cluster_tick(now)?;
            }
            if self.flow.exhausted && self.cfg.deadline.is_some_and(|d| now >= d + DRAIN_LIMIT) {
                // Draining after --duration took too long: what is in flight is unanswered.
                return Ok(());
            }
            self.watch_outages(now)?;
            self.ramp_tick(now)?;
            let timeout = self.poll_timeout(now);
            let timeout = [self.watch_timeout(now), self.ramp_timeout(now)]
                .into_iter()
                .fold(timeout, |t, other| match (t, other) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                });
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(loop_error(e)),
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    TIMER => {
                        if let Some(t) = self.flow.timer.as_mut() {
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
            if self.flow.pacer.is_some() {
                self.dispatch_due(Instant::now())?;
            }
            self.publish();
        }
    }

    /// How long the poll may wait, from the loop turn's `now` (a little early by whatever the
    /// turn did since: the wait ends at most that much late, for no extra clock read).
    fn poll_timeout(&self, now: Instant) -> Option<Duration> {
        if let Some(deadline) = self.cfg.deadline {
            if self.flow.exhausted {
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
        if self.flow.timer.is_none() && !self.flow.free.is_empty() {
            // No timer (not Linux): fall back to the poll timeout for pacing.
            return self
                .flow
                .pacer
                .as_ref()
                .map(|p| p.next_due().saturating_duration_since(now));
        }
        None
    }
}
