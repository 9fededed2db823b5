//! `--connect-storm`'s part of the run, from the context every mode gets (`run::ModeContext`):
//! the storm's spec from the plan and the connection setup, the server's connection counters
//! before and after (`INFO`), the server watch around it, the record's `storm` block and the
//! report.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::block::{StormContext, StormRecord};
use super::plan::StormPlan;
use super::{Stage, StormSpec, split_commands};
use crate::engine::conn::CONNECT_TIMEOUT;
use crate::engine::control::{CONTROL_TIMEOUT, ControlConn};
use crate::run::{Failure, ModeContext, ModeSeconds};
use crate::watch::info::Info;
use crate::watch::{TestWatch, fetch_info};

/// The test name the journal and `/metrics` give a storm.
pub const TEST_NAME: &str = "connect storm";

/// Runs the storm and prints its report: after the server watch, the cluster's listing and
/// `--start-at` (`ModeContext::prepare`), as a benchmark's first test.
pub fn run(mut ctx: ModeContext<'_>, storm: &StormPlan) -> Result<(), Failure> {
    let mut out = ctx.prepare()?;
    let interrupted = ctx.interrupted();
    let (live, secrets) = (ctx.live(), ctx.secrets());
    let plan = ctx.plan();
    let setup = ctx.setup().clone();
    let setup_commands = split_commands(&setup.prefix)
        .ok_or_else(|| Failure::Fatal("cannot split the setup commands".into()))?;
    let mut spec = StormSpec {
        target: setup.target.clone(),
        setup: setup_commands
            .iter()
            .zip(&setup.prefix_commands)
            .map(|(bytes, name)| (Stage::of_setup(name), bytes.to_vec()))
            .collect(),
        cluster_slots: plan.cluster,
        command: storm.command.clone(),
        openers: plan.load.clients,
        stop: plan.load.stop,
        rate: plan.load.rps,
        stage_timeout: plan.load.reply_timeout.unwrap_or(CONNECT_TIMEOUT),
        ended: Arc::new(AtomicU64::new(0)),
        tally: Arc::default(),
        timeline: Default::default(),
        start: Instant::now(),
    };
    let (openers, target_rate) = (spec.openers, spec.rate);
    let context = |connections_received, connected_clients_after| StormContext {
        openers,
        target_rate,
        tls_resume: plan.tls.as_ref().is_some_and(|t| t.resume),
        command: storm.command_name.clone(),
        connections_received,
        connected_clients_after,
    };
    let before = counters(ctx.control());
    let rec = ctx.record();
    let watch = rec.begin_test();
    let progress = io::stderr().is_terminal();
    let servers = watch.as_ref().map(TestWatch::feeds).unwrap_or_default();
    // Its seconds to the journal and live metrics, as a test's (`run::ModeSeconds`).
    let mut seconds = ModeSeconds::new(
        rec,
        TEST_NAME,
        live,
        storm.command_name.as_deref(),
        spec.openers,
        servers,
    )
    .head::<StormRecord>(context(None, None));
    (spec.timeline, spec.start) = seconds.timeline();
    let completed = || spec.tally.completed.load(Ordering::Relaxed);
    let mut result = std::thread::scope(|s| {
        let storm = s.spawn(|| crate::storm::run(&spec, interrupted));
        show_progress(progress, &spec.ended, || {
            seconds.poll(Instant::now(), completed());
            storm.is_finished()
        });
        storm.join().unwrap_or_default()
    });
    seconds.end(completed());
    // An error reply may echo an argument (a password): scrubbed before the record or report.
    for m in result.messages.values_mut() {
        *m = crate::redact::scrub(m, &secrets);
    }
    // A server that stopped answering during the storm must not hold the run for the control
    // connection's 30 s: the read after it waits a stage's timeout at most (`--timeout`).
    let _ = ctx.control().set_timeout(spec.stage_timeout);
    let after = counters(ctx.control());
    let _ = ctx.control().set_timeout(CONTROL_TIMEOUT);
    let storm_ctx = context(
        match (before, after) {
            (Some((b, _)), Some((a, _))) => Some(a.saturating_sub(b)),
            _ => None,
        },
        after.map(|(_, c)| c),
    );
    let record = ctx.record().end_block(watch, |server| {
        super::record::block(&result, storm_ctx, server)
    });
    super::report::write_storm(&mut out, &record, &setup.target.display())?;
    out.flush()?;
    if result.interrupted {
        return Err(Failure::Interrupted);
    }
    // Some refusals are what a storm measures (a server at maxclients); none completing is a
    // storm that never ran (a wrong command, a wrong password): exit 1, as a benchmark whose
    // requests all fail, after the report that says by stage and kind why.
    if result.completed == 0 && result.failed() > 0 {
        let first = result.messages.values().next().cloned().unwrap_or_default();
        return Err(Failure::Fatal(format!(
            "--connect-storm: none of the {} connections completed ({first})",
            result.failed()
        )));
    }
    Ok(())
}

/// `total_connections_received` and `connected_clients` now; `None` when `INFO` is refused or
/// fails (the storm's own figures stand without them).
fn counters(control: &mut ControlConn) -> Option<(u64, u64)> {
    let text = fetch_info(control, &["stats", "clients"]).ok()?;
    let info = Info::new(&text);
    Some((
        info.u64("total_connections_received")?,
        info.u64("connected_clients")?,
    ))
}

/// While the storm runs: a progress line on stderr (a terminal only), every 250 ms, cleared at
/// the end; `finished` is asked every 10 ms (and feeds the storm's seconds).
fn show_progress(show: bool, ended: &AtomicU64, mut finished: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut shown = false;
    let mut next = start + Duration::from_millis(250);
    while !finished() {
        // Short naps, so a storm that ends is reported at once.
        std::thread::sleep(Duration::from_millis(10));
        if show && Instant::now() >= next {
            next += Duration::from_millis(250);
            let n = ended.load(Ordering::Relaxed);
            let secs = start.elapsed().as_secs_f64().max(1e-3);
            eprint!(
                "\rconnect storm: {n} connections, {:.0} per second   ",
                n as f64 / secs
            );
            shown = true;
        }
    }
    if shown {
        eprint!("\r{:60}\r", "");
    }
}
