//! `--memory-per-key`/`--fill`'s part of the run: the server's memory and keys before a test,
//! and after it once the server finished rehashing, turned into the test record's `memory`
//! block. Read on the control connection, outside the measured phase.

use crate::engine::control::ControlConn;
use crate::memory::{Snapshot, data_type, settled};
use crate::plan::RunPlan;
use crate::record::memory::MemoryRecord;
use crate::workload::Template;

/// The snapshot before a test, when memory per key is measured and the server answers.
pub(super) fn before(plan: &RunPlan, control: &mut ControlConn) -> Option<Snapshot> {
    if !plan.memory_per_key {
        return None;
    }
    Snapshot::take(control)
}

/// The test's memory block: `before` against the snapshot once the server has settled.
pub(super) fn after(
    control: &mut ControlConn,
    before: Option<Snapshot>,
    template: &Template,
) -> Option<MemoryRecord> {
    let before = before?;
    let (after, how) = settled(control)?;
    let (command, payload) = unit_payload(template);
    Some(MemoryRecord::of(
        &before,
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
