//! A replay's journal (`record::journal`, docs/journal.md): `--json FILE` gives `FILE.partial`
//! (or `--journal PATH`, which `--json -` needs for one), the record's head and each completed
//! second of the replay as it goes, so a long replay killed near its end leaves what `recover`,
//! `compare` and `report` read (outcome `killed`); removed once the record is written whole.
//!
//! Why this way: the replay threads add their seconds to a `SharedTimeline` through the engine's
//! own `metrics::Recorder`, so the engine's hand-over rule (`engine::seconds::SecondsOut`, a
//! second once its grace has passed) reads it from the main thread, between hand-overs of the
//! schedule, and the one journal writer writes it: with a journal, each second carries its
//! full-precision part (histograms, error words, each command's figures, as a mix's) and each
//! replay thread's CPU so far (`ThreadClocks`, read here from the threads' ids), so the
//! recovered test is the record a Ctrl-C would have written. Nothing is added per command. The
//! same seconds go to live metrics (`--metrics-listen`, the one endpoint `crate::live`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::block::ReplayRecord;
use crate::engine::seconds::{SecondsOut, ThreadClocks};
use crate::engine::{Observer, Snapshot};
use crate::live::{Endpoint, Feed, Tick};
use crate::metrics::{Second, SharedTimeline};
use crate::record::block::Block;
use crate::record::document::Document;
use crate::record::journal::{Journal, TestStart};

use super::Fail;
use super::schedule::Scheduler;

/// The journal being written and the live metrics fed, and the timeline they follow.
pub(super) struct ReplayJournal {
    journal: Option<Journal>,
    feed: Option<Feed>,
    timeline: SharedTimeline,
    measure_start: Instant,
    /// The wall clock of the measured phase's start, as the record's `started_at`.
    started_at: Option<String>,
    /// The next second to hand over.
    next: usize,
    /// Each replay thread's id (0 until it runs), and its CPU clock marked once known.
    tids: Vec<Arc<AtomicU64>>,
    clocks: ThreadClocks,
    /// The record's head as journaled, and how many of the trace's commands its options' mix
    /// names: written again when the replay meets a new command (the test's `mix` figures are
    /// by the same names).
    head: Document,
    named: usize,
    /// A journal whose write failed: written no more, removed with the record (`remove`).
    failed: Option<Journal>,
}

/// `--metrics-listen`: the endpoint, bound before anything connects (a port that is taken is a
/// usage error, exit 2), and its feed, told the replay's test began.
pub(super) fn listen(a: &super::ReplayArgs) -> Result<(Option<Endpoint>, Option<Feed>), Fail> {
    let Some(addr) = a.metrics_listen else {
        return Ok((None, None));
    };
    let endpoint = Endpoint::listen(addr, String::new()).map_err(|e| Fail(2, e))?;
    let feed = endpoint.feed();
    feed.test_started("REPLAY", Vec::new());
    Ok((Some(endpoint), Some(feed)))
}

/// The replay ended and its record is written: the endpoint's counters become its totals, it
/// lingers (`--metrics-linger`; a Ctrl-C that arrives then ends it), and it closes.
pub(super) fn end_live(
    endpoint: Option<Endpoint>,
    result: &crate::metrics::TestResult,
    a: &super::ReplayArgs,
    stop: &AtomicBool,
) {
    if let Some(e) = endpoint {
        e.feed().test_ended(result);
        let already = stop.load(Ordering::Relaxed);
        let quit = || !already && stop.load(Ordering::Relaxed);
        e.finish(a.metrics_linger.unwrap_or_default(), &quit);
    }
}

/// `--journal PATH`, or `FILE.partial` beside `--json FILE` (none for `--json -` without
/// `--journal`, or without `--json`), as a benchmark run's (`plan`).
pub(super) fn path(a: &super::ReplayArgs) -> Option<PathBuf> {
    if let Some(j) = &a.journal {
        return Some(j.clone());
    }
    let j = a.json.as_deref().filter(|j| !crate::cli::is_stdout(j))?;
    let mut p = j.as_os_str().to_owned();
    p.push(".partial");
    Some(p.into())
}

impl ReplayJournal {
    /// Creates the journal at `path` (if any) with the record's `head` (its figures and the
    /// replay block are the final record's, so the head has neither); `None` when there is
    /// neither a journal nor live metrics to feed.
    pub(super) fn open(
        path: Option<PathBuf>,
        head: impl FnOnce() -> Document,
        feed: Option<Feed>,
        (timeline, tids): (SharedTimeline, Vec<Arc<AtomicU64>>),
        (measure_start, started_at): (Instant, Option<String>),
    ) -> Result<Option<Self>, Fail> {
        let mut head = head();
        head.blocks.remove(<ReplayRecord as Block>::KEY);
        let journal = match path {
            Some(path) => {
                let failed = |e: std::io::Error| {
                    Fail(
                        1,
                        format!("cannot write the journal {}: {e}", path.display()),
                    )
                };
                let mut journal = Journal::create(&path).map_err(failed)?;
                journal.head(&head).map_err(failed)?;
                Some(journal)
            }
            None => None,
        };
        if journal.is_none() && feed.is_none() {
            return Ok(None);
        }
        Ok(Some(Self {
            journal,
            feed,
            timeline,
            measure_start,
            started_at,
            next: 0,
            tids,
            clocks: ThreadClocks::default(),
            named: head.options.workload.mix.len(),
            head,
            failed: None,
        }))
    }

    /// Writes every second that is complete by now (`sched`'s names: the trace's commands so
    /// far, by the index each second's figures use), and tells live metrics how the replay goes
    /// (`Feed::progress`: the phase, the connections the schedule has opened so far, the
    /// requests completed by the seconds the threads have added to the timeline). A journal that
    /// cannot be written is dropped with one warning; the replay goes on.
    pub(super) fn poll(this: &mut Option<Self>, sched: &Scheduler) {
        let Some(j) = this.as_mut() else { return };
        if let Some(feed) = &j.feed {
            let completed = {
                let t = j.timeline.lock().unwrap_or_else(|e| e.into_inner());
                t.seconds.iter().map(|s| s.completed).sum()
            };
            let now = Instant::now();
            feed.progress(&Tick {
                warming_up: now < j.measure_start,
                measured_secs: now.saturating_duration_since(j.measure_start).as_secs_f64(),
                completed,
                connections: u64::from(sched.connections()),
                ..Tick::default()
            });
        }
        let names = &sched.names;
        let mut error = None;
        if let Some(journal) = j.journal.as_mut() {
            j.clocks
                .mark(j.tids.iter().map(|t| t.load(Ordering::Relaxed)));
            if names.len() > j.named {
                j.named = names.len();
                j.head.options.workload.mix = super::output::mix_options(sched);
                j.head.options.clients = sched.whole_connections();
                error = journal.head(&j.head).err();
            }
        }
        let mut out = SecondsOut {
            timeline: &j.timeline,
            measure_start: j.measure_start,
            next: j.next,
            threads: std::mem::take(&mut j.clocks),
        };
        let mut writer = Writer {
            journal: j.journal.as_mut(),
            feed: j.feed.as_ref(),
            started_at: &j.started_at,
            names,
            error,
        };
        out.hand(Instant::now(), &mut writer);
        j.next = out.next;
        j.clocks = out.threads;
        if let Some(e) = writer.error
            && let Some(journal) = j.journal.take()
        {
            eprintln!(
                "respbench: warning: the journal {} cannot be written ({e}); the replay goes on \
                 without it, and it is removed when the replay's record is written",
                journal.path().display()
            );
            // Kept (what it holds still reads after a kill) until the record is written, as a
            // run's (`record::RunRecord`): a replay that ends leaves no `.partial` behind.
            j.failed = Some(journal);
        }
    }

    /// The record is written: the journal goes (one that could not be written too).
    pub(super) fn remove(self) -> Result<(), Fail> {
        let Some(journal) = self.journal.or(self.failed) else {
            return Ok(());
        };
        let path = journal.path().display().to_string();
        journal
            .remove()
            .map_err(|e| Fail(1, format!("cannot remove the journal {path}: {e}")))
    }
}

/// The journal and live metrics as the hand-over's observer.
struct Writer<'a> {
    journal: Option<&'a mut Journal>,
    feed: Option<&'a Feed>,
    started_at: &'a Option<String>,
    names: &'a [String],
    error: Option<std::io::Error>,
}

impl Observer for Writer<'_> {
    fn interrupted(&self) -> bool {
        false
    }

    fn tick(&mut self, _: &Snapshot) {}

    fn second(&mut self, index: usize, second: &Second) {
        if let Some(feed) = self.feed {
            feed.second(second);
        }
        let Some(journal) = self.journal.as_mut().filter(|_| self.error.is_none()) else {
            return;
        };
        // The trace's commands are the test's mix, as its record has them (`output`).
        let test = TestStart {
            name: "REPLAY",
            started_at: self.started_at.clone(),
            commands: self.names.iter().map(|n| n.to_ascii_lowercase()).collect(),
            mix: self.names.to_vec(),
            ..TestStart::default()
        };
        if let Err(e) = journal.second(test, index, second) {
            self.error = Some(e);
        }
    }
}
