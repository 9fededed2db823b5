//! The seconds of a mode that runs loops of its own (the connection storm's, the fuzzer's) for
//! the journal (`record::journal`) and live metrics (`crate::live`), as a test's.
//!
//! Why this way: such modes are loops of their own (`--connect-storm`, `--fuzz`), but each of
//! their threads counts in the engine's own per-second tally (`metrics::SecondTally`, into a
//! `metrics::SharedTimeline`): a storm's connection is a "request" (completed when it finished
//! every stage, with its total as latency; failed otherwise), a fuzz command one with its reply
//! time. So the seconds carry latency, and this file only hands them over by the engine's one
//! rule (`engine::seconds::SecondsOut`, from the main thread, a second once its grace has passed)
//! to the one journal writer and the one endpoint, instead of a copy of either. While a journal
//! is written the threads count into the seconds' full-precision parts too
//! (`metrics::SecondTally::direct`). The `begin` line carries what the mode's record block needs
//! beyond the seconds (a storm's openers, rate and command; the fuzzer's seed, modes, clients
//! and table), so `recover` rebuilds a killed storm or fuzz run as the record's block.

use std::time::{Duration, Instant};

use crate::engine::seconds::SecondsOut;
use crate::engine::{Observer, Snapshot};
use crate::live::{Feed, Tick};
use crate::metrics::{Second, SharedTimeline};
use crate::record::RunRecord;
use crate::record::block::{Block, Blocks, HEAD};
use crate::record::journal::TestStart;

/// A mode's timeline, handed over second by second.
pub struct ModeSeconds<'a> {
    rec: &'a mut RunRecord,
    title: &'static str,
    live: Option<Feed>,
    commands: Vec<String>,
    /// A mode's block's head (a storm's context, the fuzzer's head), for the `begin` line.
    heads: Blocks<HEAD>,
    /// Threads counting (for the live progress).
    threads: u64,
    timeline: SharedTimeline,
    start: Instant,
    /// The next second to hand over.
    next: usize,
}

impl<'a> ModeSeconds<'a> {
    /// Starts the test (live metrics see its name and the server watch's samplers); the
    /// threads count into [`ModeSeconds::timeline`] from its start.
    pub fn new(
        rec: &'a mut RunRecord,
        title: &'static str,
        live: Option<Feed>,
        command: Option<&str>,
        threads: u32,
        servers: Vec<crate::watch::SampleFeed>,
    ) -> Self {
        if let Some(feed) = &live {
            feed.test_started(title, servers);
        }
        // The threads' seconds carry their full-precision parts only for a journal.
        let timeline = SharedTimeline::default();
        timeline.lock().unwrap_or_else(|e| e.into_inner()).exact = rec.journaling();
        Self {
            rec,
            title,
            live,
            commands: command
                .map(|c| vec![c.to_ascii_lowercase()])
                .unwrap_or_default(),
            heads: Blocks::default(),
            threads: u64::from(threads),
            timeline,
            start: Instant::now(),
            next: 0,
        }
    }

    /// A mode's block's head (a storm's context): what the block needs beyond the seconds,
    /// for the journal (`Block::recover`).
    pub fn head<B: Block>(mut self, head: B::Head) -> Self {
        self.set_head::<B>(head);
        self
    }

    /// The same, once it is known (the fuzzer's: before any second is handed over).
    pub fn set_head<B: Block>(&mut self, head: B::Head) {
        self.heads.set(B::KEY, &head);
    }

    /// The timeline the threads count into, and second 0's start.
    pub fn timeline(&self) -> (SharedTimeline, Instant) {
        (self.timeline.clone(), self.start)
    }

    /// A poll at `now` (`completed`: the mode's count so far, for the live progress): hands
    /// over every second complete by now.
    pub fn poll(&mut self, now: Instant, completed: u64) {
        if let Some(feed) = &self.live {
            feed.progress(&Tick {
                measured_secs: now.saturating_duration_since(self.start).as_secs_f64(),
                completed,
                connections: self.threads,
                ..Tick::default()
            });
        }
        self.hand(now);
    }

    fn hand(&mut self, now: Instant) {
        let mut out = SecondsOut {
            timeline: &self.timeline,
            measure_start: self.start,
            next: self.next,
            threads: Default::default(),
        };
        let mut writer = Writer {
            rec: self.rec,
            live: self.live.as_ref(),
            name: self.title,
            commands: &self.commands,
            heads: &self.heads,
        };
        out.hand(now, &mut writer);
        self.next = out.next;
    }

    /// The mode ended (its threads have handed their last second over): every second left,
    /// the last partial one too, so live metrics end at the totals. (The record the run writes
    /// next has the mode's block; the journal goes then.)
    pub fn end(mut self, completed: u64) {
        self.hand(Instant::now() + Duration::from_secs(1) + crate::engine::seconds::GRACE);
        if let Some(feed) = &self.live {
            feed.progress(&Tick {
                measured_secs: self.start.elapsed().as_secs_f64(),
                completed,
                ..Tick::default()
            });
        }
    }
}

/// The journal and live metrics as the hand-over's observer.
struct Writer<'a> {
    rec: &'a mut RunRecord,
    live: Option<&'a Feed>,
    name: &'static str,
    commands: &'a [String],
    heads: &'a Blocks<HEAD>,
}

impl Observer for Writer<'_> {
    fn interrupted(&self) -> bool {
        false
    }

    fn tick(&mut self, _: &Snapshot) {}

    fn second(&mut self, index: usize, second: &Second) {
        let test = TestStart {
            name: self.name,
            commands: self.commands.to_vec(),
            heads: self.heads.clone(),
            ..TestStart::default()
        };
        self.rec.second(test, index, second);
        if let Some(feed) = self.live {
            feed.second(second);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::SecondTally;
    use crate::plan::RunPlan;

    #[test]
    fn a_threads_tally_reaches_the_journal_with_its_latency_once_its_second_is_over() {
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
        let mut m = ModeSeconds::new(&mut rec, "connect storm", None, Some("PING"), 2, Vec::new());
        let (timeline, start) = m.timeline();
        // A thread's connections in second 0: 20 finished (100 µs and 300 µs), 3 failed.
        let mut tally = SecondTally::new(start, timeline);
        for k in 0..20u64 {
            tally.success(
                start + Duration::from_millis(10 * k),
                100_000 + 200_000 * (k % 2),
            );
        }
        for _ in 0..3 {
            tally.failure(start + Duration::from_millis(500));
        }
        tally.success(start + Duration::from_millis(1_100), 50_000);
        m.poll(start + Duration::from_millis(1_100), 20);
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        assert!(
            !text.contains("\"kind\":\"second\""),
            "second 0 is not over yet"
        );
        m.poll(start + Duration::from_millis(1_250), 21);
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
        // The second's coarse histogram, as HdrHistogram V2 (the journal's format 2).
        let encoded = second["latency"].as_str().unwrap();
        let mut h = crate::metrics::LatencyHistogram::coarse();
        crate::record::hdr::add_encoded(&mut h, encoded, "latency").unwrap();
        assert_eq!(h.len(), 20, "each connection's total: {encoded}");
        assert_eq!(h.min_ns() / 1_000, 99, "{encoded}");
        assert!(text.contains("\"name\":\"connect storm\"") && text.contains("\"ping\""));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
