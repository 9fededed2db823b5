//! A `--pubsub`/`--stream` run in place of the workload, from the context every mode gets
//! (`run::ModeContext`): the delivery test measured by `delivery::run`, recorded as an ordinary
//! test (its latency is send → first delivery, its completions the deliveries, its requests
//! issued the deliveries owed) with the record's `delivery` block beside it, and reported with
//! the block's lines. Its seconds and progress ticks go to the journal, live metrics and the
//! progress line while it runs, through the observer `run::own_test` gives it.

use std::sync::atomic::Ordering;

use super::block::DeliveryRecord;
use super::{DeliveryResult, DeliverySpec};
use crate::metrics::{Outcome, Signal, TestResult};
use crate::record::block::Blocks;
use crate::run::{Failure, Measured, ModeContext, OwnRun, OwnTest};
use crate::workload::template::parse_custom_command;
use crate::workload::{PayloadGenerator, Template};

/// Runs the delivery test and prints its report, then the run's summary; Ctrl-C is returned
/// after the report.
pub fn run(ctx: ModeContext<'_>, spec: &DeliverySpec) -> Result<(), Failure> {
    let title = spec.title();
    // The block's shape, so a killed test's journal rebuilds its block.
    let mut heads = Blocks::default();
    heads.put(&DeliveryRecord::shape(spec));
    let test = OwnTest {
        title,
        template: template(spec, title)?,
        // Every subscriber is a socket of this process (publishers: one per node, a few more).
        sockets: u64::from(spec.receivers()) + 4 * u64::from(spec.publishers) + 16,
        // The header's "parallel clients" are the connections this test opens (receivers and
        // publishers), not the engine's `-c`, which a delivery test does not use.
        clients: spec.receivers() + spec.publishers,
        operations: crate::report::Operations::Deliveries,
        heads,
    };
    crate::run::own_test(ctx, test, |run: OwnRun<'_>| {
        let measured = super::run(
            spec,
            (run.setup, run.cluster),
            run.interrupted,
            run.observer,
        )?;
        let terminated = run.terminated.load(Ordering::Relaxed);
        let result = test_result(spec, &measured, terminated);
        let block = measured.block.clone();
        let mut blocks = Blocks::default();
        blocks.put(&block);
        let end = if measured.interrupted {
            Err(Failure::Interrupted)
        } else {
            match aborted_by(spec, &measured) {
                Some(reason) => Err(Failure::Fatal(
                    crate::engine::with_hint(crate::engine::EngineError::Io(reason.into()))
                        .to_string(),
                )),
                None => Ok(()),
            }
        };
        Ok(Measured {
            result,
            blocks,
            report: Box::new(move |mut out| super::report::write_delivery(&mut out, &block)),
            end,
        })
    })
}

/// The delivery figures as a test's: deliveries are its completions and their latencies its
/// histogram; deliveries owed are its requests, those never delivered its unanswered ones; a
/// publish that failed is a failed request of its kind (an error reply's word, or how its
/// connection failed), so `issued = completed + failed + unanswered` holds as for any test.
fn test_result(spec: &DeliverySpec, m: &DeliveryResult, terminated: bool) -> TestResult {
    let outcome = match (m.interrupted, terminated) {
        (false, _) if aborted_by(spec, m).is_some() => Outcome::Aborted,
        (false, _) => Outcome::Completed,
        (true, false) => Outcome::Interrupted(Signal::Interrupt),
        (true, true) => Outcome::Interrupted(Signal::Terminate),
    };
    // No `--rps` target here: the engine's achieved-rate samples do not exist for a delivery
    // test (the block carries the rate asked and what was published each second).
    let mut r = TestResult::empty(spec.title(), None, outcome);
    let b = &m.block;
    r.completed = b.delivered;
    r.elapsed = m.elapsed;
    r.latency = m.latency.clone();
    r.latency_uncorrected = m.latency.clone();
    r.issued = b.expected + b.publish_errors;
    r.unanswered = b.lost;
    r.errors = m.failures.clone();
    r.reconnect_attempts = m.reconnect_attempts;
    r.reconnects = m.reconnects;
    r.pushes.messages = b.delivered + b.duplicates + b.foreign;
    r.timeline = m.timeline.clone();
    r
}

/// Without `-e`, a publisher connection that failed ended its publisher: the test is aborted,
/// as a benchmark's is, for this reason.
fn aborted_by<'m>(spec: &DeliverySpec, m: &'m DeliveryResult) -> Option<&'m str> {
    (!spec.keep_going && !m.interrupted)
        .then_some(m.connection_failure.as_deref())
        .flatten()
}

/// The commands the test sends, as a template (the record's `commands`).
fn template(spec: &DeliverySpec, title: &str) -> Result<Template, Failure> {
    let words: Vec<Vec<u8>> = title
        .split(" -> ")
        .next()
        .unwrap_or(title)
        .split(' ')
        .map(|w| w.as_bytes().to_vec())
        .chain([spec.prefix.clone(), b"x".to_vec()])
        .collect();
    let items = parse_custom_command(&words, None, spec.payload, &mut PayloadGenerator::default())
        .map_err(Failure::Fatal)?;
    Ok(Template::encode(&items, false))
}
