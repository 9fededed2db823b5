//! Where the run meets `--fuzz`: after the control connection (and cluster discovery) the run
//! hands over to `crate::fuzz` instead of running tests, as the reference does (idle mode, the
//! CSV header, then fuzz mode), and puts its block in the record.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Failure;
use crate::engine::ConnSetup;
use crate::fuzz::{FuzzOutcome, FuzzRun};
use crate::plan::RunPlan;
use crate::record::RunRecord;

/// Runs the fuzzer; a crash or hang of the server is exit 1 with the verdict as the message.
pub(super) fn run_fuzz(
    plan: &RunPlan,
    setup: &ConnSetup,
    cluster: bool,
    interrupted: &Arc<AtomicBool>,
    rec: &mut RunRecord,
) -> Result<(), Failure> {
    let stdout_taken = rec.owns_stdout();
    let mut out: Box<dyn Write> = match stdout_taken {
        true => Box::new(io::stderr().lock()),
        false => Box::new(io::stdout().lock()),
    };
    let run = FuzzRun {
        setup: Arc::new(setup.clone()),
        args: &plan.fuzz,
        clients: plan.load.clients,
        requests: match plan.load.stop {
            crate::engine::Stop::Requests(n) => n,
            crate::engine::Stop::After(_) => u64::MAX,
        },
        keyspace: plan.load.keyspace,
        seed: plan.load.seed,
        cluster,
        interrupted: interrupted.clone(),
        stdout_taken,
    };
    let FuzzOutcome { record, broken } = crate::fuzz::run(run, &mut out).map_err(Failure::Fatal)?;
    let message = match broken {
        true => Some(format!(
            "fuzz: the server {} ({}){}",
            record.verdict,
            record.reason.as_deref().unwrap_or(""),
            match record.reproducer.as_ref().and_then(|r| r.path.as_deref()) {
                Some(p) => format!("; reproducer: {p}"),
                None => String::new(),
            }
        )),
        false => None,
    };
    rec.set_fuzz(record);
    if interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Failure::Interrupted);
    }
    match message {
        Some(m) => Err(Failure::Fatal(m)),
        None => Ok(()),
    }
}
