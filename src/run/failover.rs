//! The run's failover parts: starting the Sentinel watch (`--sentinel`) before anything connects,
//! the report's line for each primary switch, and the lost-writes check of `--check-counters`
//! (the counters' sum before and after an INCR test, on the primary of the moment).

use std::collections::HashSet;
use std::io::Write;

use resp::Value;

use super::Failure;
use crate::engine::Target;
use crate::engine::control::{ControlConn, error_text};
use crate::metrics::TestResult;
use crate::plan::counters::CounterCheck;
use crate::plan::{Format, RunPlan};
use crate::record::failover::CounterRecord;
use crate::sentinel::{SentinelRun, Sentinels};

/// `--sentinel`: discovers the primary (one line and exit 1 when no Sentinel can name it) and
/// starts watching for failovers.
pub(super) fn start_sentinel(plan: &RunPlan) -> Result<Option<SentinelRun>, Failure> {
    match Sentinels::of(&plan.sentinel) {
        None => Ok(None),
        Some(cfg) => SentinelRun::start(cfg).map(Some).map_err(Failure::Fatal),
    }
}

/// Lines the full and quiet reports add after a test (CSV keeps its rows; the record has all).
pub(super) fn print_lines(
    plan: &RunPlan,
    lines: &[String],
    out: &mut impl Write,
) -> Result<(), Failure> {
    if plan.format == Format::Csv {
        return Ok(());
    }
    for l in lines {
        writeln!(out, "{l}")?;
    }
    out.flush()?;
    Ok(())
}

/// How many SCAN keys are read back per `MGET`.
const MGET_CHUNK: usize = 500;

/// The sum of the counters matching the check's pattern, read on a fresh connection (the
/// primary of the moment, when it is followed). Each key is counted once although `SCAN` may
/// return it twice.
pub(super) fn counters_sum(
    target: &Target,
    auth: Option<&[Vec<u8>]>,
    check: &CounterCheck,
) -> Result<i64, Failure> {
    let failed = |e: String| Failure::Fatal(format!("--check-counters: {e}"));
    let mut conn = ControlConn::connect_auth(target, auth)?;
    if check.db != 0 {
        let v = conn.call(&[b"SELECT".to_vec(), check.db.to_string().into_bytes()])?;
        if let Some(e) = error_text(&v) {
            return Err(failed(e));
        }
    }
    let mut keys: HashSet<Vec<u8>> = HashSet::new();
    let mut cursor = b"0".to_vec();
    loop {
        let v = conn.call(&[
            b"SCAN".as_slice(),
            &cursor,
            b"MATCH",
            &check.pattern,
            b"COUNT",
            b"1000",
        ])?;
        let (next, batch) = scan_reply(v).map_err(failed)?;
        keys.extend(batch);
        if next == b"0" {
            break;
        }
        cursor = next;
    }
    let keys: Vec<Vec<u8>> = keys.into_iter().collect();
    let mut sum: i64 = 0;
    for chunk in keys.chunks(MGET_CHUNK) {
        let mut cmd: Vec<&[u8]> = vec![b"MGET"];
        cmd.extend(chunk.iter().map(Vec::as_slice));
        let Value::Array(values) = conn.call(&cmd)? else {
            return Err(failed("MGET gave no array".to_string()));
        };
        for (key, v) in chunk.iter().zip(values) {
            let n = match v {
                Value::Null => 0, // gone since SCAN
                other => other
                    .as_str()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| {
                        failed(format!(
                            "{} holds something other than a counter",
                            String::from_utf8_lossy(key)
                        ))
                    })?,
            };
            sum = sum.saturating_add(n);
        }
    }
    Ok(sum)
}

/// `SCAN`'s `[cursor, [keys…]]`.
fn scan_reply(v: Value) -> Result<(Vec<u8>, Vec<Vec<u8>>), String> {
    if let Some(e) = error_text(&v) {
        return Err(e);
    }
    let Value::Array(mut parts) = v else {
        return Err("SCAN gave no array".to_string());
    };
    if parts.len() != 2 {
        return Err("SCAN gave a malformed reply".to_string());
    }
    let keys = match parts.pop() {
        Some(Value::Array(keys)) => keys
            .into_iter()
            .filter_map(|k| match k {
                Value::BulkString(b) | Value::SimpleString(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => return Err("SCAN gave a malformed reply".to_string()),
    };
    let cursor = match parts.pop() {
        Some(Value::BulkString(c) | Value::SimpleString(c)) => c,
        _ => return Err("SCAN gave a malformed reply".to_string()),
    };
    Ok((cursor, keys))
}

/// The record entry and the report line for one checked test.
pub(super) fn counter_result(
    check: &CounterCheck,
    result: &TestResult,
    before: i64,
    after: i64,
) -> (CounterRecord, String) {
    let acknowledged = result.completed;
    let unacknowledged = result.issued.saturating_sub(result.completed);
    let found = after.saturating_sub(before);
    // found = acknowledged - lost + (unacknowledged ones applied), the last between 0 and
    // `unacknowledged`.
    let ack = i128::from(acknowledged);
    let net = ack - i128::from(found);
    let clamp = |x: i128| u64::try_from(x.clamp(0, ack)).unwrap_or(0);
    let lost_min = clamp(net);
    let lost_max = clamp(net + i128::from(unacknowledged));
    let lost = if lost_min == lost_max {
        format!("lost {lost_min}")
    } else {
        format!(
            "lost {lost_min} to {lost_max} ({unacknowledged} INCR unacknowledged: failed or \
             unanswered, applied or not)"
        )
    };
    let line = format!("lost writes: acknowledged {acknowledged}, found {found}, {lost}");
    let record = CounterRecord {
        test: check.test.clone(),
        pattern: String::from_utf8_lossy(&check.pattern).into_owned(),
        acknowledged,
        unacknowledged,
        before,
        after,
        found,
        lost_min,
        lost_max,
    };
    (record, line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Outcome;

    fn result(completed: u64, issued: u64) -> TestResult {
        let mut r = TestResult::empty("INCR", None, Outcome::Completed);
        r.completed = completed;
        r.issued = issued;
        r
    }

    fn check() -> CounterCheck {
        CounterCheck {
            test: "INCR".into(),
            pattern: b"counter:*".to_vec(),
            db: 0,
        }
    }

    #[test]
    fn lost_writes_are_bounded_by_what_was_not_acknowledged() {
        let (r, line) = counter_result(&check(), &result(100, 100), 5, 105);
        assert_eq!((r.found, r.lost_min, r.lost_max), (100, 0, 0));
        assert_eq!(line, "lost writes: acknowledged 100, found 100, lost 0");
        // 7 acknowledged increments missing, none in doubt.
        let (r, line) = counter_result(&check(), &result(100, 100), 0, 93);
        assert_eq!((r.lost_min, r.lost_max), (7, 7));
        assert!(line.ends_with("lost 7"), "{line}");
        // 3 unacknowledged: they may have been applied (hiding as many lost ones).
        let (r, line) = counter_result(&check(), &result(100, 103), 0, 98);
        assert_eq!((r.unacknowledged, r.lost_min, r.lost_max), (3, 2, 5));
        assert!(
            line.contains("lost 2 to 5 (3 INCR unacknowledged"),
            "{line}"
        );
        // More found than acknowledged: unacknowledged ones applied, none provably lost.
        let (r, _) = counter_result(&check(), &result(100, 103), 0, 102);
        assert_eq!((r.lost_min, r.lost_max), (0, 1));
    }
}
