//! Where the run meets `--fuzz`: after the control connection (and cluster discovery) the run
//! hands over to `crate::fuzz` instead of running tests, as the reference does (idle mode, the
//! CSV header, then fuzz mode), and puts its block in the record.

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::Failure;
use super::cluster::ClusterCtx;
use super::storm_seconds::{FUZZ, ModeSeconds};
use crate::engine::ConnSetup;
use crate::fuzz::route::Routes;
use crate::fuzz::{FuzzOutcome, FuzzRun};
use crate::plan::RunPlan;
use crate::record::RunRecord;
use crate::watch::{ServerWatch, TestWatch};

/// The server watch's samplers for the fuzz run's live metrics (the run's own targets: the
/// server, or every cluster node); a server that refuses `INFO` says so on stderr, as in a
/// benchmark run.
fn server_watch(plan: &RunPlan, setup: &ConnSetup, cluster: Option<&ClusterCtx>) -> TestWatch {
    let targets = super::record_hook::watch_targets(plan, setup, cluster);
    let (watch, warnings) = ServerWatch::new(targets, true);
    for w in warnings {
        eprintln!("{w}");
    }
    watch.begin_test(Instant::now())
}

/// Runs the fuzzer; a crash or hang of the server is exit 1 with the verdict as the message.
pub(super) fn run_fuzz(
    plan: &RunPlan,
    setup: &ConnSetup,
    cluster: Option<&ClusterCtx>,
    interrupted: &Arc<AtomicBool>,
    rec: &mut RunRecord,
    live: Option<crate::live::Feed>,
) -> Result<(), Failure> {
    let stdout_taken = rec.owns_stdout();
    // Not locked for the run: the fuzz clients' log lines go to the same stream.
    let mut out: Box<dyn Write> = match stdout_taken {
        true => Box::new(io::stderr()),
        false => Box::new(io::stdout()),
    };
    // Its start, for the journal's `begin` line (a killed run ends at its last second). The
    // record's watch has not started (its block has no server figures).
    let _no_watch = rec.begin_test();
    // Live metrics' server figures: a fuzz run starts no server watch for its record (which
    // has no server block), so one runs for `/metrics` alone.
    let watch = live
        .as_ref()
        .filter(|_| plan.server_stats)
        .map(|_| server_watch(plan, setup, cluster));
    let servers = watch.as_ref().map(TestWatch::feeds).unwrap_or_default();
    // Commands sent, second by second, to the journal and live metrics (`storm_seconds`).
    let clients = plan.load.clients;
    let seconds = RefCell::new(ModeSeconds::new(rec, FUZZ, live, None, clients, servers));
    let timeline = seconds.borrow().timeline();
    // The commands sent include errors: the live counter follows the seconds' answered ones.
    let tell = |_sent: u64| seconds.borrow_mut().poll(Instant::now(), 0);
    // The block's head, for the journal's `begin` line.
    let started = |head| seconds.borrow_mut().fuzz(head);
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
        routes: cluster.map(|c| routes(c, setup)),
        interrupted: interrupted.clone(),
        stdout_taken,
        on_progress: Some(&tell),
        timeline: Some(timeline),
        on_start: Some(&started),
    };
    let ran = crate::fuzz::run(run, &mut out);
    // The seconds' counts: the fuzz block has the commands sent.
    seconds.into_inner().end(0);
    if let Some(w) = watch {
        w.end();
    }
    let FuzzOutcome { record, broken } = ran.map_err(Failure::Fatal)?;
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

/// The cluster's slot map and a connection setup for every primary that owns slots (the run's
/// prefix, which in cluster mode holds no SELECT).
fn routes(c: &ClusterCtx, setup: &ConnSetup) -> Routes {
    let topology = c.shared.topology();
    let primaries = topology.primaries();
    let nodes = (0..topology.nodes.len())
        .map(|i| {
            primaries.contains(&i).then(|| {
                Arc::new(ConnSetup {
                    target: c.shared.target(i),
                    prefix: setup.prefix.clone(),
                    prefix_commands: setup.prefix_commands.clone(),
                })
            })
        })
        .collect();
    Routes {
        nodes,
        owners: topology.slot_owners(),
    }
}
