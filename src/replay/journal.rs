//! A replay's journal (`record::journal`, docs/journal.md): `--json FILE` gives `FILE.partial`,
//! the record's head and each completed second of the replay as it goes, so a long replay killed
//! near its end leaves what `recover`, `compare` and `report` read (outcome `killed`); removed
//! once the record is written whole.
//!
//! Why this way: the replay threads add their seconds to a `SharedTimeline` as the engine's
//! workers do, so the engine's own hand-over rule (`engine::seconds::SecondsOut`, a second once
//! its grace has passed) reads it from the main thread, between hand-overs of the schedule, and
//! the one journal writer writes it. Nothing is added on the replay threads. The same seconds go
//! to live metrics (`--metrics-listen`, the one endpoint `crate::live`).

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::seconds::SecondsOut;
use crate::engine::{Observer, Snapshot};
use crate::live::{Endpoint, Feed, Tick};
use crate::metrics::{Second, SharedTimeline};
use crate::record::document::Document;
use crate::record::journal::{Journal, TestStart};

use super::Fail;

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

/// The replay ended and its record is written: the endpoint's counters become its totals, and
/// it closes.
pub(super) fn end_live(endpoint: Option<Endpoint>, result: &crate::metrics::TestResult) {
    if let Some(e) = endpoint {
        e.feed().test_ended(result);
        e.finish(std::time::Duration::ZERO, &|| false);
    }
}

/// `FILE.partial` beside `--json FILE` (none for `--json -` or without `--json`), as a
/// benchmark run's (`plan`).
pub(super) fn path(json: Option<&std::path::Path>) -> Option<PathBuf> {
    let j = json.filter(|j| !crate::cli::is_stdout(j))?;
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
        timeline: SharedTimeline,
        (measure_start, started_at): (Instant, Option<String>),
    ) -> Result<Option<Self>, Fail> {
        let journal = match path {
            Some(path) => {
                let failed = |e: std::io::Error| {
                    Fail(
                        1,
                        format!("cannot write the journal {}: {e}", path.display()),
                    )
                };
                let mut journal = Journal::create(&path).map_err(failed)?;
                let mut head = head();
                head.replay = None;
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
        }))
    }

    /// Writes every second that is complete by now, and tells live metrics how the replay goes
    /// (`Feed::progress`: the phase, the `connections` the schedule has opened so far, the
    /// requests completed by the seconds the threads have added to the timeline). A journal that
    /// cannot be written is dropped with one warning; the replay goes on.
    pub(super) fn poll(this: &mut Option<Self>, connections: u32) {
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
                connections: u64::from(connections),
                ..Tick::default()
            });
        }
        let mut out = SecondsOut {
            timeline: &j.timeline,
            measure_start: j.measure_start,
            next: j.next,
            threads: Default::default(),
        };
        let mut writer = Writer {
            journal: j.journal.as_mut(),
            feed: j.feed.as_ref(),
            started_at: &j.started_at,
            error: None,
        };
        out.hand(Instant::now(), &mut writer);
        j.next = out.next;
        if let Some(e) = writer.error
            && let Some(journal) = j.journal.take()
        {
            eprintln!(
                "respbench: warning: the journal {} cannot be written ({e}); the replay goes on without it",
                journal.path().display()
            );
        }
    }

    /// The record is written: the journal goes.
    pub(super) fn remove(self) -> Result<(), Fail> {
        let Some(journal) = self.journal else {
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
        let test = TestStart {
            name: "REPLAY",
            started_at: self.started_at.clone(),
            ..TestStart::default()
        };
        if let Err(e) = journal.second(test, index, second) {
            self.error = Some(e);
        }
    }
}
