//! A replay's journal (`record::journal`, docs/journal.md): `--json FILE` gives `FILE.partial`,
//! the record's head and each completed second of the replay as it goes, so a long replay killed
//! near its end leaves what `recover`, `compare` and `report` read (outcome `killed`); removed
//! once the record is written whole.
//!
//! Why this way: the replay threads add their seconds to a `SharedTimeline` as the engine's
//! workers do, so the engine's own hand-over rule (`engine::seconds::SecondsOut`, a second once
//! its grace has passed) reads it from the main thread, between hand-overs of the schedule, and
//! the one journal writer writes it. Nothing is added on the replay threads.

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::seconds::SecondsOut;
use crate::engine::{Observer, Snapshot};
use crate::metrics::{Second, SharedTimeline};
use crate::record::document::Document;
use crate::record::journal::{Journal, TestStart};

use super::Fail;

/// The journal being written, and the timeline it follows.
pub(super) struct ReplayJournal {
    journal: Journal,
    timeline: SharedTimeline,
    measure_start: Instant,
    /// The wall clock of the measured phase's start, as the record's `started_at`.
    started_at: Option<String>,
    /// The next second to hand over.
    next: usize,
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
    /// Creates the journal at `path` with the record's `head` (its figures and the replay block
    /// are the final record's, so the head has neither).
    pub(super) fn create(
        path: &std::path::Path,
        mut head: Document,
        timeline: SharedTimeline,
        measure_start: Instant,
        started_at: Option<String>,
    ) -> Result<Self, Fail> {
        let failed = |e: std::io::Error| {
            Fail(
                1,
                format!("cannot write the journal {}: {e}", path.display()),
            )
        };
        let mut journal = Journal::create(path).map_err(failed)?;
        head.replay = None;
        head.outcome = "completed".into();
        journal.head(&head).map_err(failed)?;
        Ok(Self {
            journal,
            timeline,
            measure_start,
            started_at,
            next: 0,
        })
    }

    /// Writes every second that is complete by now. A journal that cannot be written is
    /// dropped with one warning; the replay goes on.
    pub(super) fn poll(this: &mut Option<Self>) {
        let Some(j) = this.as_mut() else { return };
        let mut out = SecondsOut {
            timeline: &j.timeline,
            measure_start: j.measure_start,
            next: j.next,
        };
        let mut writer = Writer {
            journal: &mut j.journal,
            started_at: &j.started_at,
            error: None,
        };
        out.hand(Instant::now(), &mut writer);
        j.next = out.next;
        if let Some(e) = writer.error
            && let Some(j) = this.take()
        {
            eprintln!(
                "respbench: warning: the journal {} cannot be written ({e}); the replay goes on without it",
                j.journal.path().display()
            );
        }
    }

    /// The record is written: the journal goes.
    pub(super) fn remove(self) -> Result<(), Fail> {
        let path = self.journal.path().display().to_string();
        self.journal
            .remove()
            .map_err(|e| Fail(1, format!("cannot remove the journal {path}: {e}")))
    }
}

/// The journal as the hand-over's observer.
struct Writer<'a> {
    journal: &'a mut Journal,
    started_at: &'a Option<String>,
    error: Option<std::io::Error>,
}

impl Observer for Writer<'_> {
    fn interrupted(&self) -> bool {
        false
    }

    fn tick(&mut self, _: &Snapshot) {}

    fn second(&mut self, index: usize, second: &Second) {
        if self.error.is_some() {
            return;
        }
        let test = TestStart {
            name: "REPLAY",
            started_at: self.started_at.clone(),
            ..TestStart::default()
        };
        if let Err(e) = self.journal.second(test, index, second) {
            self.error = Some(e);
        }
    }
}
