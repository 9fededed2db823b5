//! A test a mode measures on its own connections, outside the request engine (a
//! `--pubsub`/`--stream` delivery test), run and reported as a benchmark's test: the server
//! watch around it, its seconds and progress ticks to the journal, live metrics and the
//! progress line while it runs (through the engine's observer, `record_hook::Journaled`), its
//! record (an ordinary test, with the mode's block beside it), the report, then the run's
//! summary. The mode says what it measures ([`OwnTest`], [`Measured`]); this file is the run's
//! part, so the mode's folder needs none of the run's pieces.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{Failure, ModeContext, Session, live_metrics, print_result, record_hook};
use crate::engine::{ClusterShared, ConnSetup, Observer};
use crate::metrics::TestResult;
use crate::plan::Format;
use crate::record::TestExtras;
use crate::record::block::{Blocks, HEAD, TEST};
use crate::report::{Operations, ReportContext};
use crate::workload::Template;

/// What the run needs of a mode's own test before it runs.
pub struct OwnTest<'t> {
    /// The test's title in reports and records.
    pub title: &'t str,
    /// The commands it sends, as a template (the record's `commands`).
    pub template: Template,
    /// The sockets it opens (the open-files limit is raised for them first).
    pub sockets: u64,
    /// The report header's "parallel clients": the connections it opens (not the engine's
    /// `-c`, which it does not use).
    pub clients: u32,
    pub operations: Operations,
    /// Its block's head (`record::block::Block::Head`), so a killed test's journal rebuilds the
    /// block.
    pub heads: Blocks<HEAD>,
}

/// Where a mode's own test runs: its connections' setup and the cluster map, the Ctrl-C and
/// SIGTERM flags, and the observer its seconds and progress ticks go to.
pub struct OwnRun<'r> {
    pub setup: &'r ConnSetup,
    pub cluster: Option<&'r ClusterShared>,
    pub interrupted: Arc<AtomicBool>,
    /// Set (with `interrupted`) when the signal was SIGTERM.
    pub terminated: Arc<AtomicBool>,
    pub observer: &'r mut dyn Observer,
}

/// Writes a mode's own lines of its test's report.
pub type Lines = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()>>;

/// What a mode's own test measured, as a test.
pub struct Measured {
    /// Its figures as a test's (completions, latency, failures, timeline, outcome).
    pub result: TestResult,
    /// Its blocks (the mode's, by its kind), in the test's record.
    pub blocks: Blocks<TEST>,
    /// The mode's own lines after the test's full report (text format only).
    pub report: Lines,
    /// How the run goes on after the report: `Err(Interrupted)` after Ctrl-C, a fatal error when
    /// the test was aborted.
    pub end: Result<(), Failure>,
}

/// Runs the mode's test (`measure`) and reports it, then the run's summary (see the module
/// comment).
pub fn own_test(
    mut ctx: ModeContext<'_>,
    test: OwnTest<'_>,
    measure: impl FnOnce(OwnRun<'_>) -> Result<Measured, Failure>,
) -> Result<(), Failure> {
    let out = ctx.prepare()?;
    let mut session = Session::new(ctx, out);
    session.own_test(test, measure)?;
    session.finish()
}

impl<W: Write> Session<'_, W> {
    /// The test measured by `measure`, recorded and reported; Ctrl-C is returned after the
    /// report.
    fn own_test(
        &mut self,
        test: OwnTest<'_>,
        measure: impl FnOnce(OwnRun<'_>) -> Result<Measured, Failure>,
    ) -> Result<(), Failure> {
        let title = test.title;
        crate::engine::limits::ensure_open_files(test.sockets).map_err(Failure::Fatal)?;
        let watch = self.rec.begin_test();
        // Live metrics see the test, each second it finishes, and at its end its totals.
        live_metrics::test_started(&mut self.console, title, watch.as_ref());
        // The progress line (a terminal's) ticks with the mode's own counts.
        self.console.title.clear();
        self.console.title.push_str(title);
        let interrupted = self.console.interrupted.clone();
        let terminated = self.console.terminated.clone();
        let measured = {
            let mut observer = record_hook::Journaled::new(
                &mut self.console,
                self.rec,
                title,
                &test.template,
                &self.load,
            );
            // No `--rps` target: the engine's achieved-rate samples do not exist for it.
            observer.heads = test.heads;
            observer.target_rps = None;
            let cluster = self.cluster.as_ref().map(|c| &*c.shared);
            measure(OwnRun {
                setup: &self.setup,
                cluster,
                interrupted,
                terminated,
                observer: &mut observer,
            })?
        };
        let result = &measured.result;
        live_metrics::test_ended(&mut self.console, result);
        let extras = TestExtras {
            blocks: Some(&measured.blocks),
            ..TestExtras::of(result)
        };
        let record = self.rec.end_test(watch, &test.template, result, extras);
        self.console.clear();
        let ctx = ReportContext {
            clients: test.clients,
            operations: test.operations,
            ..self.ctx.clone()
        };
        print_result(self.plan, &ctx, result, &mut self.out)?;
        record_hook::print_server_notes(self.plan, &self.ctx, record, &mut self.out)?;
        if self.plan.format == Format::Text {
            (measured.report)(&mut self.out)?;
            self.out.flush()?;
        }
        measured.end
    }
}
