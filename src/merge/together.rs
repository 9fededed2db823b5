//! Whether the shards of one test ran together, which decides what their throughput is.
//!
//! Shards started together (`--start-at` starts them within milliseconds) each measured their
//! part of the same stretch of time, so the benchmark's rate is the sum of theirs. Shards that
//! ran at different times did not load the server together: the sum of their rates is a rate
//! nobody saw (two runs 3 s apart, 66k + 74k, are not 140k rps over 0.23 s). Those are merged
//! over the union of their spans instead — completed requests over the time from the first
//! start to the last end — and the record and the output say so (`--strict` refuses them).
//!
//! "Together": the part of the union that not every shard covers is at most half the union, or
//! at most [`SLACK_S`] (clock skew between machines, and tests too short for a half to mean
//! anything). Shards whose start is unknown (records built outside a run) count as together.

use std::time::SystemTime;

use crate::record::document::TestRecord;

/// The part of the union a shard may miss and still be together with the others, in seconds.
pub const SLACK_S: f64 = 1.0;

/// How the shards' runs of one test lie in time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spans {
    /// Ran together (or unknown): the rate is the sum of the shards' rates.
    Together,
    /// Ran apart: from the first start to the last end is `union_s` seconds.
    Apart { union_s: f64 },
}

/// The shards' spans of one test: each from its `started_at` for its `duration_s`.
pub fn spans(tests: &[&TestRecord], starts: &[Option<SystemTime>]) -> Spans {
    let Some(base) = starts.iter().flatten().min().copied() else {
        return Spans::Together;
    };
    let mut intervals = Vec::with_capacity(tests.len());
    for (t, s) in tests.iter().zip(starts) {
        let Some(s) = s else { return Spans::Together };
        let from = s.duration_since(base).map_or(0.0, |d| d.as_secs_f64());
        intervals.push((from, from + t.duration_s));
    }
    let first = intervals.iter().map(|i| i.0).fold(f64::INFINITY, f64::min);
    let last_end = intervals.iter().map(|i| i.1).fold(0.0, f64::max);
    let last_start = intervals.iter().map(|i| i.0).fold(0.0, f64::max);
    let first_end = intervals.iter().map(|i| i.1).fold(f64::INFINITY, f64::min);
    let union = last_end - first;
    let common = (first_end - last_start).max(0.0);
    if union - common <= (union / 2.0).max(SLACK_S) {
        Spans::Together
    } else {
        Spans::Apart { union_s: union }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(ms: u64) -> Option<SystemTime> {
        Some(SystemTime::UNIX_EPOCH + Duration::from_millis(1_800_000_000_000 + ms))
    }

    fn test(duration_s: f64) -> TestRecord {
        TestRecord {
            duration_s,
            ..TestRecord::default()
        }
    }

    #[test]
    fn shards_that_overlap_for_most_of_their_span_ran_together() {
        let (a, b) = (test(10.0), test(10.0));
        // 3 ms apart (a --start-at's skew), 3 s apart of 10 s: together.
        assert_eq!(spans(&[&a, &b], &[at(0), at(3)]), Spans::Together);
        assert_eq!(spans(&[&a, &b], &[at(0), at(3000)]), Spans::Together);
        // Short tests started one after the other, within the slack: together.
        let (s, t) = (test(0.2), test(0.2));
        assert_eq!(spans(&[&s, &t], &[at(0), at(300)]), Spans::Together);
        // Unknown starts: as before, together.
        assert_eq!(spans(&[&a, &b], &[at(0), None]), Spans::Together);
    }

    #[test]
    fn shards_run_seconds_apart_are_apart() {
        // The case: two runs of ~0.23 s started 3.3 s apart.
        let (a, b) = (test(0.23), test(0.2));
        assert_eq!(
            spans(&[&a, &b], &[at(0), at(3300)]),
            Spans::Apart { union_s: 3.5 }
        );
        // 10 s tests 6 s apart: 16 s, of which 6 + 6 are not common.
        let (c, d) = (test(10.0), test(10.0));
        assert_eq!(
            spans(&[&c, &d], &[at(0), at(6000)]),
            Spans::Apart { union_s: 16.0 }
        );
    }
}
