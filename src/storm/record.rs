//! The storm's result as the record's `storm` block (`block.rs`, the block's shape, which
//! every reader of records shares): what the storm measured, with what the run knew around it.

use super::block::{ClientLimitRecord, StageRecord, StormContext, StormFailure, StormRecord};
use super::{Side, Stage, StageFigures, StormResult};
use crate::record::document::ServerTestRecord;
use crate::record::timeline::outage_records;

/// A stage's (or the total's) figures in the record.
fn stage(name: &str, f: &StageFigures) -> StageRecord {
    StageRecord::of(name, &f.hist, f.sum_ns, true)
}

/// The block for `r` (`server`: the watch's figures over the storm).
pub fn block(r: &StormResult, ctx: StormContext, server: Vec<ServerTestRecord>) -> StormRecord {
    let secs = r.elapsed.as_secs_f64();
    let stages = Stage::ALL
        .iter()
        .filter(|s| !r.stage(**s).hist.is_empty())
        .map(|s| stage(s.name(), r.stage(*s)))
        .collect();
    StormRecord {
        openers: ctx.openers,
        target_rate: ctx.target_rate,
        tls_resume: ctx.tls_resume,
        command: ctx.command,
        duration_s: secs,
        attempted: r.attempted,
        completed: r.completed,
        failed: r.failed(),
        connects_per_s: if secs > 0.0 {
            r.completed as f64 / secs
        } else {
            0.0
        },
        interrupted: r.interrupted,
        total: stage("total", &r.total),
        stages,
        failures: r
            .failures
            .iter()
            .map(|((stage, kind), n)| StormFailure {
                stage: stage.name().into(),
                kind: (*kind).into(),
                side: Side::of(kind).name().into(),
                count: *n,
                message: r.messages.get(&(*stage, *kind)).cloned(),
            })
            .collect(),
        errors: StormRecord::errors_of(
            r.failures
                .iter()
                .map(|(key, n)| (key.1, *n, r.messages.get(key).map(String::as_str))),
        ),
        outages: outage_records(&r.outages),
        client_limits: r
            .client_limits
            .iter()
            .map(|l| ClientLimitRecord {
                kind: l.kind.into(),
                failures: l.failures,
                figure: l.figure.clone(),
            })
            .collect(),
        connections_received: ctx.connections_received,
        connected_clients_after: ctx.connected_clients_after,
        server,
    }
}
