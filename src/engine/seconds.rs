//! The one hook for a test's data as it happens: handing each completed second of the measured
//! phase to the [`Observer`](super::Observer) (`Observer::second`), for the journal that keeps a
//! killed run's record (`record::journal`) and for anything else that wants the run live.
//!
//! Why from the main thread and not the workers: a worker hands its second to the
//! [`SharedTimeline`] when a reply lands in a later second, under a lock it takes about once a
//! second; reading that timeline here, a few times a second, costs the workers nothing more and
//! keeps the hot path free of allocations and I/O. A second is handed over once [`GRACE`] has
//! passed after its end, by which time every busy worker has added its part; a worker that had
//! nothing to do until later adds to it after it was handed over, and only the test's final
//! record (written when the test ends) has those requests.

use std::time::{Duration, Instant};

use super::observer::Observer;
use crate::metrics::thread_cpu::TaskCpuMark;
use crate::metrics::{Second, SharedTimeline};

/// How long after a second's end it is handed over.
pub const GRACE: Duration = Duration::from_millis(200);

/// Which seconds of the test under way were handed over. Public for the modes with loops of
/// their own that keep a [`SharedTimeline`] too (`replay`): one hand-over rule for all.
pub struct SecondsOut<'a> {
    pub timeline: &'a SharedTimeline,
    pub measure_start: Instant,
    /// The next second to hand over.
    pub next: usize,
    /// The workers' CPU clocks (the engine's monitor marks them; empty for other loops): each
    /// handed second carries every worker's CPU so far (`Second::client_threads`).
    pub threads: ThreadClocks,
}

/// Each worker thread's CPU as the main thread reads it (`metrics::thread_cpu::TaskCpuMark`), so
/// a journal can keep the client's CPU of a test that is killed: a worker does nothing for it.
#[derive(Debug, Default)]
pub struct ThreadClocks {
    marks: Vec<Option<TaskCpuMark>>,
}

impl ThreadClocks {
    /// Marks every worker not marked yet whose thread id is known (`tids`, 0 while unknown; in
    /// the workers' order).
    pub fn mark(&mut self, tids: impl ExactSizeIterator<Item = u64>) {
        if self.marks.len() < tids.len() {
            self.marks.resize(tids.len(), None);
        }
        for (m, tid) in self.marks.iter_mut().zip(tids) {
            if m.is_none() && tid != 0 {
                *m = TaskCpuMark::of(tid);
            }
        }
    }

    /// Every worker's usage since its mark, when all are marked (else none: a partial set would
    /// read as fewer workers).
    fn usage(&self) -> Vec<crate::metrics::ThreadCpuUsage> {
        if self.marks.iter().any(Option::is_none) {
            return Vec::new();
        }
        self.marks
            .iter()
            .flatten()
            .map(|m| m.usage_since())
            .collect()
    }
}

impl SecondsOut<'_> {
    /// Hands every second that ended at least [`GRACE`] before `now` and was not handed yet.
    // Never inlined: `bench/journal-cost.sh` counts it by name (the main thread's part of the
    // journal: the seconds copied out, the workers' CPU read, the line written and synced).
    #[inline(never)]
    pub fn hand(&mut self, now: Instant, observer: &mut dyn Observer) {
        let Some(since) = now.checked_duration_since(self.measure_start + GRACE) else {
            return;
        };
        let done = since.as_secs() as usize;
        if done <= self.next {
            return;
        }
        // Copied out so the observer's work (a file write and sync) is not done under the lock
        // the workers take. The full-precision histograms are moved, not copied: the timeline
        // keeps only its coarse ones (`metrics::ExactSecond`).
        let mut seconds: Vec<Second> = {
            let mut t = self.timeline.lock().unwrap_or_else(|e| e.into_inner());
            (self.next..done)
                .map(|i| match t.seconds.get_mut(i) {
                    Some(s) => {
                        let exact = s.exact.take();
                        Second { exact, ..s.clone() }
                    }
                    None => Second::default(),
                })
                .collect()
        };
        let threads = self.threads.usage();
        for (i, s) in seconds.iter_mut().enumerate() {
            s.client_threads.clone_from(&threads);
            observer.second(self.next + i, s);
        }
        self.next = done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Snapshot;

    #[derive(Default)]
    struct Seen(Vec<(usize, u64)>);

    impl Observer for Seen {
        fn interrupted(&self) -> bool {
            false
        }
        fn tick(&mut self, _: &Snapshot) {}
        fn second(&mut self, index: usize, second: &Second) {
            self.0.push((index, second.completed));
        }
    }

    #[test]
    fn each_second_is_handed_once_after_its_grace_empty_ones_too() {
        let timeline = SharedTimeline::default();
        let start = Instant::now();
        timeline.lock().unwrap().second_mut(0).completed = 7;
        timeline.lock().unwrap().second_mut(2).completed = 9;
        let mut out = SecondsOut {
            timeline: &timeline,
            measure_start: start,
            next: 0,
            threads: ThreadClocks::default(),
        };
        let mut seen = Seen::default();
        out.hand(start + Duration::from_millis(1_100), &mut seen);
        assert!(seen.0.is_empty(), "second 0 is still in its grace");
        out.hand(start + Duration::from_millis(1_250), &mut seen);
        out.hand(start + Duration::from_millis(1_300), &mut seen);
        assert_eq!(seen.0, [(0, 7)]);
        out.hand(start + Duration::from_millis(3_300), &mut seen);
        assert_eq!(seen.0, [(0, 7), (1, 0), (2, 9)]);
    }
}
