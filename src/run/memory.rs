//! `--memory-per-key`/`--fill`'s part of the run: the server's memory and keys before a test,
//! and after it once the server finished rehashing, turned into the test record's `memory`
//! block. Read on the control connection, outside the measured phase.

use super::cluster::ClusterCtx;
use crate::engine::control::ControlConn;
use crate::memory::{Settled, Snapshot, data_type, settled};
use crate::plan::RunPlan;
use crate::record::memory::MemoryRecord;
use crate::workload::Template;

/// What was read before a test: the figures, and with `--cluster` a connection to every
/// primary (their figures are added up).
pub(super) struct Before {
    snap: Snapshot,
    primaries: Option<Vec<ControlConn>>,
}

/// The snapshot before a test, when memory per key is measured and the servers answer.
pub(super) fn before(
    plan: &RunPlan,
    control: &mut ControlConn,
    cluster: Option<&ClusterCtx>,
) -> Option<Before> {
    if !plan.memory_per_key {
        return None;
    }
    match cluster {
        None => Some(Before {
            snap: Snapshot::take(control)?,
            primaries: None,
        }),
        Some(c) => {
            let mut conns = c.primary_connections().ok()?;
            let snaps: Option<Vec<Snapshot>> = conns.iter_mut().map(Snapshot::take).collect();
            Some(Before {
                snap: Snapshot::sum(&snaps?)?,
                primaries: Some(conns),
            })
        }
    }
}

/// The test's memory block: the "before" figures against those read once the servers have
/// settled (the slowest node's way of settling is the one named).
pub(super) fn after(
    control: &mut ControlConn,
    before: Option<Before>,
    template: &Template,
) -> Option<MemoryRecord> {
    let Before { snap, primaries } = before?;
    let (after, how) = match primaries {
        None => settled(control)?,
        Some(mut conns) => {
            let mut snaps = Vec::new();
            let mut how = Settled::RehashDone;
            for c in &mut conns {
                let (s, h) = settled(c)?;
                if h != Settled::RehashDone && how != Settled::TimedOut {
                    how = h;
                }
                snaps.push(s);
            }
            (Snapshot::sum(&snaps)?, how)
        }
    };
    let (command, payload) = unit_payload(template);
    Some(MemoryRecord::of(
        &snap,
        &after,
        how,
        data_type(&command),
        payload,
    ))
}

/// The unit's first command name and the bytes of its arguments after the name (the key and
/// value bytes a write carries).
fn unit_payload(t: &Template) -> (String, u64) {
    let Some(first) = t.layout.first() else {
        return (String::new(), 0);
    };
    let name = first
        .args
        .first()
        .and_then(|r| t.unit.get(r.clone()))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let payload = first.args.iter().skip(1).map(|r| r.len() as u64).sum();
    (name, payload)
}
