//! A killed storm's `storm` block, rebuilt from its journal's sums (`record::block::Recovered`).

use std::collections::BTreeMap;

use super::block::{STAGES, StageRecord, StormContext, StormFailure, StormRecord, side_of};
use crate::metrics::LatencyHistogram;
use crate::record::block::Recovered;

/// A killed storm's block (a connection is a second's request: completed when it finished
/// every stage, its total the latency; its stages are the seconds' full-precision parts, its
/// failures their error words, `"stage kind"`): its total, each stage's histogram, the failures
/// by stage and kind. What the seconds do not say stays out (`docs/journal.md`): each failure's
/// first message, the client limits and the server's connection counters, read when the storm
/// ends. A stage's `sum_ns` is its histogram's (the clock's exact sum is kept by a finished
/// storm only). A journal of a respbench before the full-precision parts has the seconds'
/// coarse totals (2 significant figures) and no stages.
pub fn recovered(ctx: &StormContext, sums: &Recovered) -> StormRecord {
    let (completed, failed) = (sums.completed, sums.failed);
    let secs = sums.seconds as f64;
    let stage = |name: &str, hist: &LatencyHistogram| {
        let sum_ns = (hist.mean_ns() * hist.len() as f64) as u128;
        StageRecord::of(name, hist, sum_ns, true)
    };
    let mut failures: BTreeMap<(usize, String), u64> = BTreeMap::new();
    for (word, n) in &sums.part_errors {
        let (stage, kind) = word.split_once(' ').unwrap_or(("connect", word));
        let at = STAGES.iter().position(|s| *s == stage);
        *failures
            .entry((at.unwrap_or(0), kind.to_string()))
            .or_default() += n;
    }
    let errors = StormRecord::errors_of(failures.iter().map(|((_, k), n)| (k.as_str(), *n, None)));
    StormRecord {
        errors,
        // A killed storm's seconds are the journal's: its outages are not rebuilt.
        outages: Vec::new(),
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
        total: stage("total", &sums.total),
        stages: STAGES
            .iter()
            .zip(&sums.parts)
            .filter(|(_, h)| !h.is_empty())
            .map(|(s, h)| stage(s, h))
            .collect(),
        failures: failures
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
        server: sums.server.clone(),
    }
}
