//! Where the run meets `--fuzz`: after the control connection (and cluster discovery) the
//! registry hands the run's context (`run::ModeContext`) to the fuzzer instead of running tests,
//! as the reference does (idle mode, the CSV header, then fuzz mode), and its block goes in the
//! record.

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

use super::block::FuzzRecord;
use super::cli::FuzzArgs;
use super::route::Routes;
use super::{FuzzOutcome, FuzzRun};
use crate::engine::ConnSetup;
use crate::engine::cluster::ClusterShared;
use crate::run::{Failure, ModeContext, ModeSeconds};
use crate::watch::{ServerWatch, TestWatch, WatchTarget};

/// The test name the journal and `/metrics` give a fuzz run.
pub const TEST_NAME: &str = "fuzz";

/// The server watch's samplers for the fuzz run's live metrics (the run's own targets: the
/// server, or every cluster node); a server that refuses `INFO` says so on stderr, as in a
/// benchmark run.
fn server_watch(targets: Vec<WatchTarget>) -> TestWatch {
    let (watch, warnings) = ServerWatch::new(targets, true);
    for w in warnings {
        eprintln!("{w}");
    }
    watch.begin_test(Instant::now())
}

/// Runs the fuzzer (after the control connection and cluster discovery, before the server
/// watch), with its options (`--fuzz`'s, the registry's from the command line); a crash or hang
/// of the server is exit 1 with the verdict as the message.
pub fn run(mut ctx: ModeContext<'_>, args: &FuzzArgs) -> Result<(), Failure> {
    let (plan, interrupted, live) = (ctx.plan(), ctx.interrupted(), ctx.live());
    let setup = ctx.setup().clone();
    let routes = ctx.cluster_map().map(|c| routes(c, &setup));
    let targets = ctx.watch_targets();
    let rec = ctx.record();
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
        .map(|_| server_watch(targets));
    let servers = watch.as_ref().map(TestWatch::feeds).unwrap_or_default();
    // Commands sent, second by second, to the journal and live metrics (`run::ModeSeconds`).
    let clients = plan.load.clients;
    let seconds = RefCell::new(ModeSeconds::new(
        rec, TEST_NAME, live, None, clients, servers,
    ));
    let timeline = seconds.borrow().timeline();
    // The commands sent include errors: the live counter follows the seconds' answered ones.
    let tell = |_sent: u64| seconds.borrow_mut().poll(Instant::now(), 0);
    // The block's head, for the journal's `begin` line.
    let started = |head| seconds.borrow_mut().set_head::<FuzzRecord>(head);
    let run = FuzzRun {
        setup: Arc::new(setup),
        args,
        clients: plan.load.clients,
        requests: match plan.load.stop {
            crate::engine::Stop::Requests(n) => n,
            crate::engine::Stop::After(_) => u64::MAX,
        },
        keyspace: plan.load.keyspace,
        seed: plan.load.seed,
        routes,
        interrupted: interrupted.clone(),
        stdout_taken,
        on_progress: Some(&tell),
        timeline: Some(timeline),
        on_start: Some(&started),
    };
    let ran = super::run(run, &mut out);
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
    rec.set_block(&record);
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
fn routes(c: &ClusterShared, setup: &ConnSetup) -> Routes {
    let topology = c.topology();
    let primaries = topology.primaries();
    let nodes = (0..topology.nodes.len())
        .map(|i| {
            primaries.contains(&i).then(|| {
                Arc::new(ConnSetup {
                    target: c.target(i),
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
