//! Where the run meets the record and the server watch: which servers to watch, the report's
//! server block, and writing the record whatever way the run ended. Kept apart from `run.rs` so
//! the test loop stays about running tests.

use std::io::Write;

use crate::engine::ConnSetup;
use crate::plan::{Format, RunPlan};
use crate::record::{Recorder, TestRecord};
use crate::report::{self, ReportContext};
use crate::watch::WatchTarget;

use super::{ClusterCtx, Failure};

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
/// bytes) and, whatever the format, a stderr warning when respbench itself was the limit.
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
    if let Some(w) = report::client_bound_warning(test) {
        eprintln!("{w}");
    }
    Ok(())
}

/// Writes the record with the run's outcome. A record that cannot be written fails a run that
/// otherwise succeeded; an earlier failure keeps its own exit code.
pub(super) fn finish(rec: Recorder, result: Result<(), Failure>) -> Result<(), Failure> {
    let (outcome, error) = match &result {
        Ok(()) | Err(Failure::BrokenPipe) => ("completed", None),
        Err(Failure::Interrupted) => ("interrupted", None),
        Err(Failure::Fatal(m) | Failure::Reference(m)) => ("failed", Some(m.clone())),
    };
    match (rec.finish(outcome, error), result) {
        (Err(e), Ok(())) => Err(Failure::Fatal(format!(
            "cannot write the --json record: {e}"
        ))),
        (_, result) => result,
    }
}
