//! A `--pubsub`/`--stream` run in place of the workload: the delivery test measured by
//! `delivery::run`, recorded as an ordinary test (its latency is send → first delivery, its
//! completions the deliveries, its requests issued the deliveries owed) with the record's
//! `delivery` block beside it, and reported with the block's lines. Its seconds and progress
//! ticks go to the journal, live metrics and the progress line while it runs, through the
//! engine's observer (`record_hook`).

use std::io::Write;
use std::sync::atomic::Ordering;

use super::{Failure, Session, live_metrics, print_result, record_hook};
use crate::delivery::{self, DeliveryResult, DeliverySpec};
use crate::metrics::{Outcome, Signal, TestResult};
use crate::plan::Format;
use crate::record::TestExtras;
use crate::record::delivery::DeliveryRecord;
use crate::report::ReportContext;
use crate::workload::template::parse_custom_command;
use crate::workload::{PayloadGenerator, Template};

impl<W: Write> Session<'_, W> {
    /// Runs the delivery test and prints its report; Ctrl-C is returned after the report.
    pub(super) fn run_delivery(&mut self, spec: &DeliverySpec) -> Result<(), Failure> {
        let title = spec.title();
        let template = template(spec, title)?;
        // Every subscriber is a socket of this process (publishers: one per node, a few more).
        let sockets = u64::from(spec.receivers()) + 4 * u64::from(spec.publishers) + 16;
        crate::engine::limits::ensure_open_files(sockets).map_err(Failure::Fatal)?;
        let watch = self.rec.begin_test();
        // Live metrics see the test, each second the receivers finish (deliveries and their
        // latencies, as the journal gets them), and at its end its totals.
        live_metrics::test_started(&mut self.console, title, watch.as_ref());
        // The progress line (a terminal's) ticks with the deliveries so far (`delivery::run`).
        self.console.title.clear();
        self.console.title.push_str(title);
        let interrupted = self.console.interrupted.clone();
        let measured = {
            let mut observer = super::record_hook::Journaled::new(
                &mut self.console,
                self.rec,
                title,
                &template,
                &self.load,
            );
            // The block's shape, so a killed test's journal rebuilds its block; no `--rps`
            // target, as its record has none (`test_result`).
            observer.delivery = Some(DeliveryRecord::shape(spec));
            observer.target_rps = None;
            let cluster = self.cluster.as_ref().map(|c| &*c.shared);
            delivery::run(spec, (&self.setup, cluster), interrupted, &mut observer)?
        };
        let terminated = self.console.terminated.load(Ordering::Relaxed);
        let result = test_result(spec, &measured, terminated);
        live_metrics::test_ended(&mut self.console, &result);
        let block = DeliveryRecord::of(spec, &measured);
        let extras = TestExtras {
            delivery: Some(&block),
            ..TestExtras::of(&result)
        };
        let test = self.rec.end_test(watch, &template, &result, extras);
        self.console.clear();
        // The header's "parallel clients" are the connections this test opened (receivers and
        // publishers), not the engine's `-c`, which a delivery test does not use.
        let ctx = ReportContext {
            clients: spec.receivers() + spec.publishers,
            operations: crate::report::Operations::Deliveries,
            ..self.ctx.clone()
        };
        print_result(self.plan, &ctx, &result, &mut self.out)?;
        record_hook::print_server_notes(self.plan, &self.ctx, test, &mut self.out)?;
        if self.plan.format == Format::Text {
            crate::report::write_delivery(&mut self.out, &block)?;
            self.out.flush()?;
        }
        if measured.interrupted {
            return Err(Failure::Interrupted);
        }
        match aborted_by(spec, &measured) {
            Some(reason) => Err(Failure::Fatal(
                crate::engine::with_hint(crate::engine::EngineError::Io(reason.into())).to_string(),
            )),
            None => Ok(()),
        }
    }
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
    r.completed = m.delivered;
    r.elapsed = m.elapsed;
    r.latency = m.latency.clone();
    r.latency_uncorrected = m.latency.clone();
    r.issued = m.expected + m.publish_errors;
    r.unanswered = m.lost;
    r.errors = m.failures.clone();
    r.reconnect_attempts = m.reconnect_attempts;
    r.reconnects = m.reconnects;
    r.pushes.messages = m.delivered + m.duplicates + m.foreign;
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
