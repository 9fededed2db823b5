//! memtier's `--data-verify` (and `--verify-only`): after the test, the keys the run wrote are
//! read back on a connection of their own and each value is compared with the one the import
//! file gives that key, as memtier's verify client does. Not measured: it runs after the
//! test's record is complete.
//!
//! Which keys: with SETs walking the range in order (the file's keys, or `--generate-keys`
//! with a sequential SET pattern), the first `n` of the range when the test that wrote most
//! sent `n` SETs (at most the whole range); otherwise, and with `--verify-only`, the whole
//! range. Reads are the run's own (`GET`, `GETRANGE` with `--data-offset`), written by the
//! request writer (`workload::shape`), pipelined [`CHUNK`] at a time.

use std::sync::atomic::Ordering;

use resp::Value;

use super::Failure;
use crate::engine::ConnSetup;
use crate::engine::control::{ControlConn, error_text};
use crate::plan::RunPlan;
use crate::record::RunRecord;
use crate::record::shape::VerifyRecord;

/// Reads sent before their replies are read.
const CHUNK: u64 = 1_000;
/// Keys that failed named on stderr at most (then how many more).
const NAMED: u64 = 10;

/// Runs the verification when the plan asks for it and puts its result in the record.
pub(super) fn run(
    plan: &RunPlan,
    setup: &ConnSetup,
    rec: &mut RunRecord,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Result<(), Failure> {
    let (Some(v), Some(shape)) = (&plan.verify, &plan.memtier) else {
        return Ok(());
    };
    let Some(import) = &shape.import else {
        return Ok(());
    };
    let keys = if v.only || !v.in_order {
        v.keys
    } else {
        v.keys.min(sets_sent(rec))
    };
    let fail = |m: String| Failure::Fatal(format!("--data-verify: {m}"));
    let mut conn = ControlConn::connect(&setup.target)?;
    // AUTH, SELECT, HELLO 3: as every connection of the run starts.
    if let Some((name, e)) = conn.send_prefix(setup)? {
        return Err(fail(format!("{name} failed: {e}")));
    }
    let mut found = VerifyRecord::default();
    let (mut out, mut key) = (Vec::new(), Vec::new());
    let mut start = 0;
    while start < keys {
        if interrupted.load(Ordering::Relaxed) {
            rec.set_verify(found);
            return Err(Failure::Interrupted);
        }
        let n = CHUNK.min(keys - start);
        out.clear();
        for i in start..start + n {
            shape.read(&mut out, v.first + i);
        }
        let replies = conn.call_raw(&out, n as usize)?;
        for (i, reply) in (start..).zip(replies) {
            let want = import.item(v.first + i).value;
            let problem = match reply {
                Value::BulkString(got) if want.is(&got) => None,
                Value::BulkString(got) => Some(format!(
                    "holds {} bytes, not the {} bytes expected",
                    got.len(),
                    want.len()
                )),
                Value::Null => Some("is missing".to_string()),
                other => Some(match error_text(&other) {
                    Some(e) => format!("could not be read: {e}"),
                    None => "gave a reply that is not a value".to_string(),
                }),
            };
            found.keys += 1;
            match &problem {
                None => found.verified += 1,
                Some(p) if p == "is missing" => found.missing += 1,
                Some(_) => found.mismatched += 1,
            }
            let failed = found.missing + found.mismatched;
            if let Some(p) = problem.filter(|_| failed <= NAMED) {
                key.clear();
                shape.key_bytes(&mut key, v.first + i);
                eprintln!(
                    "respbench memtier: --data-verify: key {} {p}",
                    shown(&key, plan)
                );
            }
        }
        start += n;
    }
    let failed = found.missing + found.mismatched;
    if failed > NAMED {
        eprintln!(
            "respbench memtier: --data-verify: {} more keys failed",
            failed - NAMED
        );
    }
    rec.set_verify(found);
    Ok(())
}

/// The most SETs one test of the run sent (each test's walk starts again at the range's start).
fn sets_sent(rec: &RunRecord) -> u64 {
    (rec.document().tests.iter())
        .flat_map(|t| t.mix.iter().filter(|m| m.name == "SET"))
        .map(|m| m.completed + m.failed)
        .max()
        .unwrap_or(0)
}

/// A key as a message shows it: quoted and escaped, the run's secrets hidden.
fn shown(key: &[u8], plan: &RunPlan) -> String {
    let text = format!("{:?}", String::from_utf8_lossy(key));
    crate::redact::scrub(&text, &super::secrets(plan))
}
