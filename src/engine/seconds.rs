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

use super::monitor::Observer;
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
}

impl SecondsOut<'_> {
    /// Hands every second that ended at least [`GRACE`] before `now` and was not handed yet.
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
        let seconds: Vec<Second> = {
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
        for (i, s) in seconds.iter().enumerate() {
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
