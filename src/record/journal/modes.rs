//! The blocks a killed run's modes leave beside (or instead of) a test, rebuilt from the
//! journal's full seconds as the run would have written them at a Ctrl-C there: a
//! `--connect-storm`'s `storm` block, a `--fuzz` run's `fuzz` block, a `--pubsub`/`--stream`
//! test's `delivery` block. Each mode's `begin` line carries what the seconds do not say (the
//! block's head); the counts are the seconds' sums. What a killed run cannot know is listed in
//! `docs/journal.md`.
//!
//! Why sums kept as the lines are read, not the lines: the reader holds a line at a time
//! (`read.rs`: a day's journal is gigabytes); what a block needs beyond the test's own sums
//! (`read::Open`) is added up here, second by second.

use std::collections::BTreeMap;

use super::SecondLine;
use crate::metrics::{ErrorCounts, FAILURE_KINDS, LatencyHistogram};
use crate::record::delivery::{DeliveryRecord, DeliverySecond};
use crate::record::document::ServerTestRecord;
use crate::record::fuzz::FuzzRecord;
use crate::record::hdr;
use crate::record::storm::{STAGES, StageRecord, StormContext, StormFailure, StormRecord, side_of};

/// A `--connect-storm`'s sums beyond a test's (a connection is a second's request: completed
/// when it finished every stage, its total the latency; each opener counts into the second's
/// full-precision part as it goes, `SecondTally::direct`): each stage's histogram (the part's
/// per-stage latencies) and the failures by stage and kind (the part's error words,
/// `"stage kind"`), while every second that measured something has its part.
pub(super) struct StormSums {
    exact: bool,
    stages: Vec<LatencyHistogram>,
    failures: BTreeMap<(usize, String), u64>,
}

/// A killed storm's figures that are a test's sums too (`read::Open`'s).
pub(super) struct StormCounts {
    pub completed: u64,
    pub failed: u64,
    /// The seconds' corrected histograms: the full-precision parts' sum when every second has
    /// one, else the coarse ones'.
    pub exact_total: Option<LatencyHistogram>,
    pub coarse_total: LatencyHistogram,
    /// Its `second` lines.
    pub seconds: usize,
}

impl StormSums {
    pub(super) fn new() -> Self {
        Self {
            exact: true,
            stages: Vec::new(),
            failures: BTreeMap::new(),
        }
    }

    /// Adds one second's stages and failures.
    pub(super) fn add(&mut self, s: &SecondLine) -> Result<(), String> {
        if s.exact.is_none() && s.completed + s.failed > 0 {
            self.exact = false;
            self.stages = Vec::new();
            self.failures = BTreeMap::new();
        }
        let Some(e) = s.exact.as_ref().filter(|_| self.exact) else {
            return Ok(());
        };
        let what = "journal storm second";
        for (k, part) in e.commands.iter().enumerate() {
            if self.stages.len() <= k {
                self.stages.resize_with(k + 1, LatencyHistogram::new);
            }
            hdr::add_encoded(&mut self.stages[k], &part.latency, what)?;
        }
        for (word, n) in &e.errors {
            let (stage, kind) = word.split_once(' ').unwrap_or(("connect", word));
            let at = STAGES.iter().position(|s| *s == stage);
            *self
                .failures
                .entry((at.unwrap_or(0), kind.to_string()))
                .or_default() += n;
        }
        Ok(())
    }

    /// A killed storm's block: its total, each stage's histogram, the failures by stage and
    /// kind. What the seconds do not say stays out (`docs/journal.md`): each failure's first
    /// message, the client limits and the server's connection counters, read when the storm
    /// ends. A stage's `sum_ns` is its histogram's (the clock's exact sum is kept by a finished
    /// storm only). A journal of a respbench before the full-precision parts has the seconds'
    /// coarse totals (2 significant figures) and no stages. `server`: the watch's blocks from
    /// the seconds' samples.
    pub(super) fn block(
        self,
        ctx: &StormContext,
        counts: StormCounts,
        server: Vec<ServerTestRecord>,
    ) -> StormRecord {
        let StormCounts {
            completed, failed, ..
        } = counts;
        let total = match counts.exact_total.filter(|_| self.exact) {
            Some(h) => h,
            None => counts.coarse_total,
        };
        let secs = counts.seconds as f64;
        let stage = |name: &str, hist: &LatencyHistogram| {
            let sum_ns = (hist.mean_ns() * hist.len() as f64) as u128;
            StageRecord::of(name, hist, sum_ns, true)
        };
        StormRecord {
            openers: ctx.openers,
            target_rate: ctx.target_rate,
            tls_resume: ctx.tls_resume,
            command: ctx.command.clone(),
            duration_s: secs,
            attempted: completed + failed,
            completed,
            failed,
            connects_per_s: completed as f64 / secs,
            interrupted: true,
            total: stage("total", &total),
            stages: STAGES
                .iter()
                .zip(self.stages)
                .filter(|(_, h)| !h.is_empty())
                .map(|(s, h)| stage(s, &h))
                .collect(),
            failures: self
                .failures
                .into_iter()
                .map(|((at, kind), count)| StormFailure {
                    stage: STAGES[at].into(),
                    side: side_of(&kind).into(),
                    kind,
                    count,
                    message: None,
                })
                .collect(),
            client_limits: Vec::new(),
            connections_received: None,
            connected_clients_after: None,
            server,
        }
    }
}

/// A killed `--fuzz` run's block: its head as the `begin` line holds it (seed, modes, clients,
/// the table's commands, the log), and from the seconds' sums (`seconds` lines) the commands
/// sent (`sent`: each client counts its writes), the replies that were not errors (`ok`), and
/// the errors by kind (the seconds' error `words`, and their requests `lost` without a reply by
/// kind, `metrics::FAILURE_KINDS`' order: `timeout`, the rest `disconnected`, as the clients
/// name them). Its verdict is `survived`, as a Ctrl-C's while the server answered: a crash or
/// hang stops the clients and the run writes its record.
pub(super) fn fuzz_block(
    head: &FuzzRecord,
    seconds: usize,
    (sent, ok): (u64, u64),
    words: &ErrorCounts,
    lost: &[u64],
) -> FuzzRecord {
    let secs = seconds as f64;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (word, n) in words.iter() {
        *errors.entry(word.to_string()).or_default() += n;
    }
    for (kind, n) in FAILURE_KINDS.iter().zip(lost).filter(|(_, n)| **n > 0) {
        let name = match *kind {
            "timeout" => "timeout",
            _ => "disconnected",
        };
        *errors.entry(name.to_string()).or_default() += n;
    }
    FuzzRecord {
        commands_sent: sent,
        seconds: secs,
        commands_per_sec: sent as f64 / secs,
        ok_replies: ok,
        errors_by_kind: errors,
        verdict: "survived".into(),
        ..head.clone()
    }
}

/// A `--pubsub`/`--stream` test's sums beyond a test's: the messages published, the deliveries
/// they owe (`expected`), and a row per second (published, delivered, the slowest delivery).
#[derive(Default)]
pub(super) struct DeliverySums {
    published: u64,
    expected: u64,
    seconds: Vec<DeliverySecond>,
}

impl DeliverySums {
    /// Adds one second.
    pub(super) fn add(&mut self, s: &SecondLine) {
        self.published += s.published;
        self.expected += s.owed;
        self.seconds.push(DeliverySecond {
            second: s.second as u32,
            published: s.published,
            delivered: s.completed,
            max_latency_us: (s.completed > 0).then(|| {
                let slowest = s.slots.iter().map(|x| x[5]).max().unwrap_or(0);
                slowest as f64 / 1000.0
            }),
            ..DeliverySecond::default()
        });
    }

    /// A killed test's block: its shape as the `begin` line holds it (`head`), and from the
    /// seconds the messages published, the deliveries owed, the first deliveries (`delivered`,
    /// the test's completed requests), and those owed but not delivered by the last full
    /// second (`lost`: lost, or still on their way). What only the run's end or the server's
    /// monitor says (publish errors, duplicates, the server's fan-out or acks, disconnects, how
    /// far receivers were behind, output buffers, pending entries, per-node figures) is not in
    /// it (`docs/journal.md`).
    pub(super) fn block(self, head: &DeliveryRecord, delivered: u64) -> DeliveryRecord {
        DeliveryRecord {
            published: self.published,
            expected: self.expected,
            delivered,
            lost: self.expected.saturating_sub(delivered),
            seconds: self.seconds,
            ..head.clone()
        }
    }
}
