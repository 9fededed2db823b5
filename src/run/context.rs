//! The one context every mode gets once the server is known ([`ModeContext`]): the plan, where
//! the load goes (the connection setup, whose prefix — AUTH, HELLO, SELECT, the client name — is
//! checked in one place, [`ModeContext::connect`]), the control connection and the cluster map,
//! the console (progress line, live metrics, the stop/interrupt flags), the record, and the
//! report's output once the mode asks for it ([`ModeContext::prepare`]).
//!
//! The registry (`crate::modes`) picks the mode and hands it this context; a mode's folder
//! reads it through the methods below, so no mode receives the run's pieces one by one.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Failure;
use super::cluster::ClusterCtx;
use super::console::Console;
use crate::engine::control::ControlConn;
use crate::engine::{ConnSetup, LoadSpec};
use crate::plan::{Format, RunPlan};
use crate::record::RunRecord;
use crate::sentinel::SentinelRun;

/// What a mode runs with (see the module comment).
pub struct ModeContext<'a> {
    pub(super) plan: &'a RunPlan,
    /// The plan's load, with the worker count cluster mode chose.
    pub(super) load: LoadSpec,
    /// `--threads` as the report shows it (cluster mode: one per benchmark node).
    pub(super) threads_shown: Option<u32>,
    pub(super) setup: ConnSetup,
    /// For setup commands (functions), `COMMAND INFO` in cluster mode, `INFO` around a storm.
    pub(super) control: ControlConn,
    pub(super) cluster: Option<ClusterCtx>,
    /// `CONFIG GET save` and `appendonly` (standalone servers), for the report's heading.
    pub(super) server_config: (Option<String>, Option<String>),
    pub(super) console: Console,
    /// The `--json` record and the server watch.
    pub(super) rec: &'a mut RunRecord,
    /// `--sentinel`: the switches seen, placed in the test under way.
    pub(super) sentinel: Option<&'a mut SentinelRun>,
}

impl<'a> ModeContext<'a> {
    pub fn plan(&self) -> &'a RunPlan {
        self.plan
    }

    /// Where the load goes and what every connection sends first.
    pub fn setup(&self) -> &ConnSetup {
        &self.setup
    }

    /// The control connection (blocking, not measured).
    pub fn control(&mut self) -> &mut ControlConn {
        &mut self.control
    }

    /// The record, for the mode's block and its journal.
    pub fn record(&mut self) -> &mut RunRecord {
        self.rec
    }

    /// Set by the first Ctrl-C or SIGTERM: the mode stops and reports what it measured.
    pub fn interrupted(&self) -> Arc<AtomicBool> {
        self.console.interrupted.clone()
    }

    /// `--metrics-listen`'s feed, told about each second the mode hands over.
    pub fn live(&self) -> Option<crate::live::Feed> {
        self.console.live.clone()
    }

    /// The secrets the run sends, to scrub from any message a server echoes back.
    pub fn secrets(&self) -> Vec<Vec<u8>> {
        super::secrets(self.plan)
    }

    /// `--cluster`: the shared slot map (refreshed as the cluster changes).
    pub fn cluster_map(&self) -> Option<&crate::engine::cluster::ClusterShared> {
        self.cluster.as_ref().map(|c| &*c.shared)
    }

    /// The servers the run watches: the target, or the cluster's benchmark nodes.
    pub fn watch_targets(&self) -> Vec<crate::watch::WatchTarget> {
        super::record_hook::watch_targets(self.plan, &self.setup, self.cluster.as_ref())
    }

    /// What a mode that reports as the benchmark does first, once: the server watch, the
    /// cluster's listing, the CSV header, the dataset's summary, then `--start-at`. Returns where
    /// the human report goes (stderr when the record owns stdout; nowhere when the caller writes
    /// its own output).
    pub fn prepare(&mut self) -> Result<Box<dyn Write>, Failure> {
        let plan = self.plan;
        let targets = self.watch_targets();
        for w in self.rec.watch_servers(targets) {
            eprintln!("{w}");
        }
        // With `--json -` the record owns stdout; the human report goes to stderr.
        let mut out: Box<dyn Write> = if self.rec.report_silenced() {
            Box::new(io::sink())
        } else if self.rec.owns_stdout() {
            Box::new(io::stderr().lock())
        } else {
            Box::new(io::stdout().lock())
        };
        if let Some(c) = &self.cluster {
            // On stdout in every format, as the reference prints it: stderr stays empty on a
            // run that succeeds.
            c.write_listing(&mut out)?;
            out.flush()?;
        }
        if plan.format == Format::Csv {
            crate::report::write_csv_header(&mut out)?;
            out.flush()?;
        }
        if let (Some(dataset), Format::Text) = (&plan.load.dataset, plan.format) {
            writeln!(out, "{}", dataset.summary())?;
        }
        // --start-at (shards starting together): after connecting and preparing, before the
        // first test.
        super::start::begin(plan, &self.console.interrupted, self.rec)?;
        Ok(out)
    }
}
