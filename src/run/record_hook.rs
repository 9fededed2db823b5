//! Where the run meets the record and the server watch: which servers to watch, the report's
//! server block, and writing the record whatever way the run ended. Kept apart from `run.rs` so
//! the test loop stays about running tests.

use std::io::Write;

use crate::engine::{ConnSetup, LoadSpec, Observer, Snapshot};
use crate::metrics::{Second, Signal};
use crate::plan::{Format, RunPlan};
use crate::record::journal::TestStart;
use crate::record::{RunRecord, TestRecord};
use crate::report::{self, ReportContext};
use crate::watch::WatchTarget;
use crate::workload::Template;

use super::Failure;
use super::cluster::ClusterCtx;
use super::console::Console;

/// The servers to watch: the target, or in cluster mode every benchmark node, reached with the
/// run's own transport (TLS) and AUTH.
pub(super) fn watch_targets(
    plan: &RunPlan,
    setup: &ConnSetup,
    cluster: Option<&ClusterCtx>,
) -> Vec<WatchTarget> {
    match cluster {
        None => vec![WatchTarget {
            address: setup.target.display(),
            target: setup.target.clone(),
            auth: plan.auth.clone(),
        }],
        Some(c) => {
            let topo = c.shared.topology();
            c.bench_nodes
                .iter()
                .map(|&n| WatchTarget {
                    address: topo.nodes[n].display(),
                    target: c.shared.target(n),
                    auth: plan.auth.clone(),
                })
                .collect()
        }
    }
}

/// After a test's report: the server block (full report only, so `-q` and `--csv` keep their
/// bytes) and, whatever the format, a stderr warning when respbench itself or the machine was
/// the limit.
pub(super) fn print_server_notes(
    plan: &RunPlan,
    ctx: &ReportContext,
    test: &TestRecord,
    out: &mut impl Write,
) -> Result<(), Failure> {
    if plan.format == Format::Text {
        report::write_server_block(out, test, ctx.precision)?;
        out.flush()?;
    }
    if let Some(w) = report::verdict_warning(test, plan.repeat) {
        eprintln!("{w}");
    }
    Ok(())
}

/// Writes the record (`--json`) and the HTML report (`--html`) with the run's outcome, however
/// it ended. One that cannot be written fails a run that otherwise succeeded; an earlier failure
/// keeps its own exit code.
pub(super) fn finish(
    plan: &RunPlan,
    rec: &mut RunRecord,
    result: Result<(), Failure>,
) -> Result<(), Failure> {
    // Sub-second tests judged machine-busy or client-bound, summed up (the longer ones were
    // warned about one by one), however the run ended.
    for w in report::short_tests_warnings(rec.document()) {
        eprintln!("{w}");
    }
    let (outcome, error) = match &result {
        Ok(()) | Err(Failure::BrokenPipe) => ("completed", None),
        Err(Failure::Interrupted) => ("interrupted", None),
        Err(Failure::Fatal(m) | Failure::Reference(m) | Failure::Usage(m)) => {
            ("failed", Some(m.clone()))
        }
    };
    let mut problem = rec.finish(outcome, error).err().map(|e| match &plan.json {
        Some(p) => format!("cannot write the --json record {}: {e}", p.display()),
        None => format!("cannot write the --json record: {e}"),
    });
    // A run with something to show: tests, a mode's run-wide block (a storm's), or memtier's `--verify-only` result.
    let doc = rec.document();
    let shown = !doc.tests.is_empty() || doc.blocks.drawn() || doc.verify.is_some();
    if let Some(path) = &plan.html
        && shown
        && let Err(e) = crate::compare::html::write_html(&[rec.document()], path)
    {
        problem.get_or_insert(e);
    }
    match (problem, result) {
        (Some(p), Ok(())) => Err(Failure::Fatal(p)),
        (_, result) => result,
    }
}

/// Checks before the run that the `--html` file can be written (exit 1 before any connection,
/// as for `--json`), leaving an earlier file there as it is until the new report replaces it
/// whole (`record::atomic`).
pub(super) fn check_html_path(plan: &RunPlan) -> Result<(), Failure> {
    match &plan.html {
        Some(path) => crate::record::atomic::check_writable(path).map_err(|e| {
            Failure::Fatal(format!("--html {}: cannot write it: {e}", path.display()))
        }),
        None => Ok(()),
    }
}

/// The engine's observer during a test: the console (progress, Ctrl-C), and each completed
/// second to the record's journal (`record::journal`), so a killed run keeps it.
pub(super) struct Journaled<'a> {
    pub console: &'a mut Console,
    pub rec: &'a mut RunRecord,
    pub name: &'a str,
    pub repetition: Option<u32>,
    /// The commands the test sends, lower case, as its record names them.
    pub commands: Vec<String>,
    pub target_rps: Option<u64>,
    /// A mix's commands as it names them, in its order (empty otherwise): the journal keeps
    /// each one's seconds.
    pub mix: Vec<String>,
    /// Cluster mode: each node's address and role, by node index (the journal's per-node
    /// figures are by index).
    pub nodes: Vec<(String, String)>,
    /// A test with a block of its own (a `--pubsub`/`--stream` test's `delivery`): the block's
    /// head, for the journal (`record::block::Block::Head`).
    pub heads: crate::record::block::Blocks<{ crate::record::block::HEAD }>,
}

impl<'a> Journaled<'a> {
    /// For a test of `template` (or the load's mix) under `load`.
    pub(super) fn new(
        console: &'a mut Console,
        rec: &'a mut RunRecord,
        name: &'a str,
        template: &Template,
        load: &LoadSpec,
    ) -> Self {
        let commands = match &load.mix {
            Some(mix) => mix
                .commands
                .iter()
                .map(|c| c.name.to_ascii_lowercase())
                .collect(),
            None => crate::record::build::command_names(template),
        };
        Self {
            console,
            rec,
            name,
            repetition: None,
            commands,
            target_rps: load.rps,
            mix: load
                .mix
                .iter()
                .flat_map(|m| m.commands.iter().map(|c| c.name.clone()))
                .collect(),
            nodes: Vec::new(),
            heads: Default::default(),
        }
    }

    /// Cluster mode: names the test's nodes (`run`, the test's cluster part) for the journal.
    pub(super) fn in_cluster(mut self, run: Option<&crate::engine::ClusterRun>) -> Self {
        self.nodes = run
            .map(|r| {
                r.node_labels()
                    .into_iter()
                    .map(|(address, role)| (address, role.name().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        self
    }
}

impl Observer for Journaled<'_> {
    fn interrupted(&self) -> bool {
        self.console.interrupted()
    }

    fn signal(&self) -> Signal {
        self.console.signal()
    }

    fn tick(&mut self, snapshot: &Snapshot) {
        self.console.tick(snapshot);
    }

    fn second(&mut self, index: usize, second: &Second) {
        self.console.second(index, second);
        let test = TestStart {
            name: self.name,
            repetition: self.repetition,
            commands: self.commands.clone(),
            target_rps: self.target_rps,
            started_at: None,
            mix: self.mix.clone(),
            nodes: self.nodes.clone(),
            heads: self.heads.clone(),
        };
        self.rec.second(test, index, second);
    }

    fn exact_seconds(&self) -> bool {
        self.rec.journaling()
    }
}
