//! The monitor: what the main thread watches while workers run (progress figures, Ctrl-C, a
//! worker's failure), and the per-interval samples taken from them. The figures come from each
//! worker's [`Live`] counters: plain atomics with one writer, so watching costs the workers
//! nothing but a few relaxed stores per loop turn.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::observer::{Observer, Snapshot, TICK};
use super::seconds::{SecondsOut, ThreadClocks};
use crate::metrics::{SharedTimeline, Signal};

/// Per-worker live counters, written by one worker and read by the main thread.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub(super) all_completed: AtomicU64,
    pub(super) all_latency_sum_ns: AtomicU64,
    pub(super) measured_completed: AtomicU64,
    pub(super) measured_latency_sum_ns: AtomicU64,
    pub(super) measured_bytes: AtomicU64,
    /// Connections down or being reopened after a failure.
    pub(super) conns_down: AtomicU64,
    /// Measured requests written, and those failed (`Recorder::issued`, `Recorder::failures`).
    pub(super) issued: AtomicU64,
    pub(super) failures: AtomicU64,
    /// Connections a staircase ramp opened during the test (`worker/ramp.rs`).
    pub(super) conns_added: AtomicU64,
    pub(super) failed: AtomicBool,
    /// The worker thread's kernel id once it runs (0 before), so the main thread can read its
    /// CPU each second (`engine::seconds`) without the worker doing anything for it.
    pub(super) tid: AtomicU64,
}

/// Tells every worker to stop and wakes it from its poll.
pub(super) fn stop_workers(stop: &AtomicBool, wakers: &[mio::Waker]) {
    stop.store(true, Ordering::Relaxed);
    for w in wakers {
        let _ = w.wake();
    }
}

/// The main thread's side of a running test: it reads the workers' live counters every [`TICK`],
/// hands progress figures to the observer, and stops the workers on Ctrl-C or a failure.
pub(super) struct Monitor<'a> {
    pub lives: &'a [Live],
    pub stop: &'a AtomicBool,
    pub wakers: &'a [mio::Waker],
    pub start: Instant,
    pub measure_start: Instant,
    /// `--rps`: achieved-rate samples are taken.
    pub sample_rate: bool,
    /// Connections the test placed (for [`Snapshot::connections`]).
    pub connections: u64,
    /// The test's timeline, whose completed seconds go to [`Observer::second`].
    pub timeline: &'a SharedTimeline,
}

/// What the monitor saw by the time every worker finished.
pub(super) struct Watched {
    /// The signal that stopped the test (not a worker's failure).
    pub interrupted: Option<Signal>,
    /// `--rps`: the achieved rate of each measured interval.
    pub rps_samples: Vec<f64>,
}

impl Monitor<'_> {
    /// Watches until `finished` says every worker is done.
    pub(super) fn watch(
        &self,
        finished: impl Fn() -> bool,
        observer: &mut dyn Observer,
    ) -> Watched {
        let mut interrupted = None;
        let mut rate = RateSamples::default();
        let mut last_tick = self.start;
        let mut last_all = (0u64, 0u64);
        let mut last_bytes = 0u64;
        let mut stop_sent = false;
        let mut seconds = SecondsOut {
            timeline: self.timeline,
            measure_start: self.measure_start,
            next: 0,
            threads: ThreadClocks::default(),
        };
        loop {
            if finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            let failed = self.lives.iter().any(|l| l.failed.load(Ordering::Relaxed));
            if !stop_sent && (failed || observer.interrupted()) {
                interrupted = (!failed).then(|| observer.signal());
                stop_workers(self.stop, self.wakers);
                stop_sent = true;
            }
            let now = Instant::now();
            if now.duration_since(last_tick) >= TICK {
                let (all, measured) = self.totals();
                let warming_up = now < self.measure_start;
                let bytes: u64 = (self.lives.iter())
                    .map(|l| l.measured_bytes.load(Ordering::Relaxed))
                    .sum();
                let snap = Snapshot {
                    warming_up,
                    measured_secs: now
                        .saturating_duration_since(self.measure_start)
                        .as_secs_f64(),
                    measured_completed: measured.0,
                    measured_latency_sum_ns: measured.1,
                    interval_completed: all.0 - last_all.0,
                    interval_latency_sum_ns: all.1 - last_all.1,
                    interval_secs: now.duration_since(last_tick).as_secs_f64(),
                    measured_bytes: bytes,
                    interval_bytes: bytes.saturating_sub(last_bytes),
                    connections: self.connections
                        + self
                            .lives
                            .iter()
                            .map(|l| l.conns_added.load(Ordering::Relaxed))
                            .sum::<u64>(),
                    connections_down: self
                        .lives
                        .iter()
                        .map(|l| l.conns_down.load(Ordering::Relaxed))
                        .sum(),
                    in_flight: Some(self.in_flight(measured.0)),
                };
                if !warming_up && self.sample_rate {
                    rate.sample(now, self.measure_start, measured.0);
                }
                observer.tick(&snap);
                if !warming_up && observer.exact_seconds() {
                    // Only for a journal: each worker's CPU from its mark to each hand-over.
                    let tids = self.lives.iter().map(|l| l.tid.load(Ordering::Relaxed));
                    seconds.threads.mark(tids);
                }
                seconds.hand(now, observer);
                last_all = all;
                last_bytes = bytes;
                last_tick = now;
            }
        }
        Watched {
            interrupted,
            rps_samples: rate.samples,
        }
    }

    /// Measured requests in flight over all workers, `completed` of them answered.
    fn in_flight(&self, completed: u64) -> u64 {
        let (issued, failures) = self.lives.iter().fold((0u64, 0u64), |acc, l| {
            (
                acc.0 + l.issued.load(Ordering::Relaxed),
                acc.1 + l.failures.load(Ordering::Relaxed),
            )
        });
        issued.saturating_sub(completed + failures)
    }

    /// Completions and latency sums over all workers: everything (warmup included), and the
    /// measured phase only.
    fn totals(&self) -> ((u64, u64), (u64, u64)) {
        let all = self.lives.iter().fold((0, 0), |acc, l| {
            (
                acc.0 + l.all_completed.load(Ordering::Relaxed),
                acc.1 + l.all_latency_sum_ns.load(Ordering::Relaxed),
            )
        });
        let measured = self.lives.iter().fold((0, 0), |acc, l| {
            (
                acc.0 + l.measured_completed.load(Ordering::Relaxed),
                acc.1 + l.measured_latency_sum_ns.load(Ordering::Relaxed),
            )
        });
        (all, measured)
    }
}

/// `--rps`: the achieved rate per interval, for the RPS summary.
#[derive(Default)]
struct RateSamples {
    last_at: Option<Instant>,
    last_measured: u64,
    samples: Vec<f64>,
}

impl RateSamples {
    /// Takes one sample at `now`; the first interval starts at the measured phase's start, not at
    /// an earlier test's.
    fn sample(&mut self, now: Instant, measure_start: Instant, measured: u64) {
        let from = self.last_at.unwrap_or(measure_start);
        let dt = now.duration_since(from).as_secs_f64();
        if dt > 0.0 {
            self.samples
                .push((measured - self.last_measured) as f64 / dt);
        }
        self.last_at = Some(now);
        self.last_measured = measured;
    }
}
