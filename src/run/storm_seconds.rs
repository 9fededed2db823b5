//! `--connect-storm`'s (and `--fuzz`'s) seconds for the journal (`record::journal`) and live
//! metrics (`crate::live`). The fuzzer keeps one counter, commands sent, which is fed here as
//! `completed` under the test name `fuzz`. The storm is its own loop (`crate::storm`), with no engine seconds: what it
//! keeps while it runs is two counters (connections that finished every stage, and connections
//! that failed). This turns them into the same `metrics::Second`s the engine hands over, so
//! a storm goes through the one journal writer and the one endpoint instead of a copy of either:
//! a storm killed mid-way leaves a journal that `recover` turns into a record of its finished
//! seconds (a connection is a "request": `completed` finished every stage, `failed` did not), and
//! `/metrics` shows the connections counter move.
//!
//! Why polled from the main thread rather than counted per connection: the openers stay as they
//! are (one relaxed atomic add each), and the journal's write and `fdatasync` stay off them. A
//! 100 ms slot is closed on the first poll after its end (the poll naps 10 ms), so a connection
//! ended a few milliseconds after a boundary can land in the slot before it; the totals are
//! exact. The seconds carry no latency: a connection's stage times are only in the storm block
//! the record gets at the end.

use std::time::{Duration, Instant};

use crate::live::Feed;
use crate::metrics::{SLOTS, Second};
use crate::record::RunRecord;
use crate::record::journal::TestStart;

/// The test name the journal and `/metrics` give a storm.
pub(super) const STORM: &str = "connect storm";
/// And the fuzzer.
pub(super) const FUZZ: &str = "fuzz";

/// One 100 ms slot.
const SLOT: Duration = Duration::from_millis(100);

/// The counters read at one poll: connections that finished every stage, and that failed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Counts {
    pub completed: u64,
    pub failed: u64,
}

impl Counts {
    /// The storm's tally now.
    pub(super) fn of(tally: &crate::storm::Tally) -> Self {
        use std::sync::atomic::Ordering::Relaxed;
        Self {
            completed: tally.completed.load(Relaxed),
            failed: tally.failed.load(Relaxed),
        }
    }
}

/// The second under way, fed from polls.
pub(super) struct TallySeconds<'a> {
    rec: &'a mut RunRecord,
    title: &'static str,
    live: Option<Feed>,
    commands: Vec<String>,
    openers: u64,
    start: Instant,
    /// Slots closed since the start.
    slots: usize,
    /// The counts when the last slot closed.
    seen: Counts,
    current: Second,
}

impl<'a> TallySeconds<'a> {
    /// Starts the test (live metrics see its name and the server watch's samplers).
    pub(super) fn new(
        rec: &'a mut RunRecord,
        title: &'static str,
        live: Option<Feed>,
        command: Option<&str>,
        openers: u32,
        servers: Vec<crate::watch::SampleFeed>,
    ) -> Self {
        if let Some(feed) = &live {
            feed.test_started(title, servers);
        }
        Self {
            rec,
            title,
            live,
            commands: command
                .map(|c| vec![c.to_ascii_lowercase()])
                .unwrap_or_default(),
            openers: u64::from(openers),
            start: Instant::now(),
            slots: 0,
            seen: Counts::default(),
            current: Second::default(),
        }
    }

    /// A poll at `now` with the counters `counts`: closes every slot that has ended (and every
    /// second with its tenth slot), and tells live metrics the progress.
    pub(super) fn poll(&mut self, now: Instant, counts: Counts) {
        if let Some(feed) = &self.live {
            feed.progress(false, counts.completed, self.openers, 0);
        }
        while now >= self.start + SLOT * (self.slots as u32 + 1) {
            // Counts go into the first slot closed; the ones after it (a late poll) stay empty.
            self.close_slot(counts);
        }
    }

    fn close_slot(&mut self, counts: Counts) {
        let slot = &mut self.current.slots[self.slots % SLOTS];
        slot.completed = counts.completed - self.seen.completed;
        slot.failed = counts.failed - self.seen.failed;
        self.current.completed += slot.completed;
        self.current.failed += slot.failed;
        self.seen = counts;
        self.slots += 1;
        if self.slots.is_multiple_of(SLOTS) {
            let second = std::mem::take(&mut self.current);
            let index = self.slots / SLOTS - 1;
            let test = TestStart {
                name: self.title,
                commands: self.commands.clone(),
                ..TestStart::default()
            };
            self.rec.second(test, index, &second);
            if let Some(feed) = &self.live {
                feed.second(&second);
            }
        }
    }

    /// The storm ended with `counts`: live metrics get the rest of the last, partial second,
    /// so their counters end at the storm's totals. (The journal keeps whole seconds only; the
    /// record the run writes next has the storm block.)
    pub(super) fn end(mut self, counts: Counts) {
        let Some(feed) = self.live.take() else {
            return;
        };
        self.current.completed += counts.completed - self.seen.completed;
        self.current.failed += counts.failed - self.seen.failed;
        feed.second(&self.current);
        feed.progress(false, counts.completed, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::RunPlan;

    #[test]
    fn counts_become_slots_and_a_whole_second_reaches_the_journal() {
        let dir = std::env::temp_dir().join(format!("respbench-tally-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let journal = dir.join("j.partial");
        let _ = std::fs::remove_file(&journal);
        // The arguments without the program's name.
        let argv = ["--journal", journal.to_str().unwrap()];
        let args = match crate::cli::parse(argv.iter().map(Into::into)).unwrap() {
            crate::cli::Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        let plan = RunPlan::new(&args, None).unwrap();
        let mut rec = RunRecord::open(&plan, &["respbench".into()]).unwrap();
        let base = Instant::now();
        let mut t = TallySeconds::new(&mut rec, STORM, None, Some("PING"), 2, Vec::new());
        let counts = |completed, failed| Counts { completed, failed };
        // Slot 0 closes with 5 + 1; the late poll closes slots 1..9 (the rest in slot 1) and
        // second 0 with it.
        t.poll(base + Duration::from_millis(150), counts(5, 1));
        assert_eq!(t.slots, 1);
        t.poll(base + Duration::from_millis(1_050), counts(20, 3));
        assert_eq!(t.slots, SLOTS);
        let text = std::fs::read_to_string(&journal).unwrap();
        let second: serde_json::Value = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["kind"] == "second")
            .expect("second 0 journaled");
        assert_eq!(
            (second["completed"].as_u64(), second["failed"].as_u64()),
            (Some(20), Some(3))
        );
        let slots = second["slots"].as_array().unwrap();
        let pair = |i: usize| (slots[i][0].as_u64().unwrap(), slots[i][1].as_u64().unwrap());
        assert_eq!((pair(0), pair(1)), ((5, 1), (15, 2)));
        assert!(slots[2..].iter().all(|s| s[0] == 0 && s[1] == 0));
        assert!(text.contains("\"name\":\"connect storm\"") && text.contains("\"ping\""));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
