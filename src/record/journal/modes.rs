//! The blocks a killed run's modes leave beside (or instead of) a test, rebuilt from the
//! journal's full seconds as the run would have written them at a Ctrl-C there: a
//! `--connect-storm`'s `storm` block, a `--fuzz` run's `fuzz` block, a `--pubsub`/`--stream`
//! test's `delivery` block. Each mode's `begin` line carries what the seconds do not say (the
//! block's head); the counts are the seconds' sums. What a killed run cannot know is listed in
//! `docs/journal.md`.

use std::collections::BTreeMap;

use super::SecondLine;
use crate::metrics::{FAILURE_KINDS, LatencyHistogram};
use crate::record::delivery::{DeliveryRecord, DeliverySecond};
use crate::record::document::ServerTestRecord;
use crate::record::fuzz::FuzzRecord;
use crate::record::hdr;
use crate::record::storm::{StageRecord, StormContext, StormFailure, StormRecord};
use crate::storm::{Side, Stage, StageFigures};

/// A killed `--connect-storm`'s block from its full seconds (a connection is a second's
/// request: completed when it finished every stage, its total the latency; each opener counts
/// into the second's full-precision part as it goes, `SecondTally::direct`): its total, each
/// stage's histogram (the part's per-stage latencies), the failures by stage and kind (the
/// part's error words, `"stage kind"`). What the seconds do not say stays out (`docs/journal.md`):
/// each failure's first message, the client limits and the server's connection counters, read
/// when the storm ends. A stage's `sum_ns` is its histogram's (the clock's exact sum is kept by
/// a finished storm only). A journal of a respbench before the full-precision parts has the
/// seconds' coarse totals (2 significant figures) and no stages. `server`: the watch's blocks
/// from the seconds' samples.
pub(super) fn storm_block(
    seconds: &[SecondLine],
    ctx: &StormContext,
    server: Vec<ServerTestRecord>,
) -> Result<StormRecord, String> {
    let completed: u64 = seconds.iter().map(|s| s.completed).sum();
    let failed: u64 = seconds.iter().map(|s| s.failed).sum();
    let exact = seconds
        .iter()
        .all(|s| s.exact.is_some() || s.completed + s.failed == 0);
    let mut total = LatencyHistogram::new();
    let mut stages: Vec<LatencyHistogram> = Vec::new();
    let mut failures: BTreeMap<(usize, String), u64> = BTreeMap::new();
    if exact {
        for e in seconds.iter().filter_map(|s| s.exact.as_ref()) {
            let what = "journal storm second";
            hdr::add_encoded(&mut total, &e.corrected, what)?;
            for (k, part) in e.commands.iter().enumerate() {
                if stages.len() <= k {
                    stages.resize_with(k + 1, LatencyHistogram::new);
                }
                hdr::add_encoded(&mut stages[k], &part.latency, what)?;
            }
            for (word, n) in &e.errors {
                let (stage, kind) = word.split_once(' ').unwrap_or(("connect", word));
                let at = Stage::ALL.iter().position(|s| s.name() == stage);
                *failures
                    .entry((at.unwrap_or(0), kind.to_string()))
                    .or_default() += n;
            }
        }
    } else {
        for s in seconds {
            total.merge(&s.to_second().latency);
        }
    }
    let secs = seconds.len() as f64;
    let figures = |hist: LatencyHistogram| StageFigures {
        sum_ns: (hist.mean_ns() * hist.len() as f64) as u128,
        hist,
    };
    Ok(StormRecord {
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
        total: StageRecord::of("total", &figures(total), true),
        stages: Stage::ALL
            .iter()
            .zip(stages)
            .filter(|(_, h)| !h.is_empty())
            .map(|(s, h)| StageRecord::of(s.name(), &figures(h), true))
            .collect(),
        failures: failures
            .into_iter()
            .map(|((at, kind), count)| StormFailure {
                stage: Stage::ALL[at].name().into(),
                side: Side::of(&kind).name().into(),
                kind,
                count,
                message: None,
            })
            .collect(),
        client_limits: Vec::new(),
        connections_received: None,
        connected_clients_after: None,
        server,
    })
}

/// A killed `--fuzz` run's block: its head as the `begin` line holds it (seed, modes, clients,
/// the table's commands, the log), and from the seconds the commands sent (each client counts
/// its writes), the replies that were not errors, and the errors by kind (the seconds' error
/// words, and their requests lost without a reply: `timeout`, the rest `disconnected`, as the
/// clients name them). Its verdict is `survived`, as a Ctrl-C's while the server answered: a
/// crash or hang stops the clients and the run writes its record.
pub(super) fn fuzz_block(seconds: &[SecondLine], head: &FuzzRecord) -> FuzzRecord {
    let secs = seconds.len() as f64;
    let sent: u64 = seconds.iter().filter_map(|s| s.issued).sum();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for s in seconds {
        for (word, n) in s.exact.iter().flat_map(|e| &e.errors) {
            *errors.entry(word.clone()).or_default() += n;
        }
        for (kind, n) in FAILURE_KINDS.iter().zip(&s.lost).filter(|(_, n)| **n > 0) {
            let name = match *kind {
                "timeout" => "timeout",
                _ => "disconnected",
            };
            *errors.entry(name.to_string()).or_default() += n;
        }
    }
    FuzzRecord {
        commands_sent: sent,
        seconds: secs,
        commands_per_sec: sent as f64 / secs,
        ok_replies: seconds.iter().map(|s| s.completed).sum(),
        errors_by_kind: errors,
        verdict: "survived".into(),
        ..head.clone()
    }
}

/// A killed `--pubsub`/`--stream` test's block: its shape as the `begin` line holds it, and
/// from the seconds the messages published, the deliveries they owe (`expected`), the first
/// deliveries, and those owed but not delivered by the last full second (`lost`: lost, or
/// still on their way), with a row per second (published, delivered, the slowest delivery).
/// What only the run's end or the server's monitor says (publish errors, duplicates, the
/// server's fan-out or acks, disconnects, how far receivers were behind, output buffers,
/// pending entries, per-node figures) is not in it (`docs/journal.md`).
pub(super) fn delivery_block(seconds: &[SecondLine], head: &DeliveryRecord) -> DeliveryRecord {
    let published = seconds.iter().map(|s| s.published).sum();
    let expected: u64 = seconds.iter().map(|s| s.owed).sum();
    let delivered: u64 = seconds.iter().map(|s| s.completed).sum();
    DeliveryRecord {
        published,
        expected,
        delivered,
        lost: expected.saturating_sub(delivered),
        seconds: seconds
            .iter()
            .map(|s| DeliverySecond {
                second: s.second as u32,
                published: s.published,
                delivered: s.completed,
                max_latency_us: (s.completed > 0).then(|| {
                    let slowest = s.slots.iter().map(|x| x[5]).max().unwrap_or(0);
                    slowest as f64 / 1000.0
                }),
                ..DeliverySecond::default()
            })
            .collect(),
        ..head.clone()
    }
}
