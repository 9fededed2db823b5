//! The per-second timeline of a test: what the engine fills while it runs, and the rows the record
//! shows.
//!
//! The engine side: each worker keeps a [`Timeline`] and, for every completed or failed request,
//! adds it to the entry of the second (from the start of the measured phase) in which its reply
//! arrived; the runner merges the workers' timelines by index, like the other per-worker figures.
//! Entries are created when a second starts (one histogram per second per worker, never per
//! request). The invariant the record checks ([`Timeline::check_totals`]): the timeline's sums
//! equal the test's totals, so a row can be trusted as a slice of the whole.

use serde::Serialize;

use crate::metrics::{LatencyHistogram, TestResult};
use crate::watch::ServerInterval;

/// One second of a test.
#[derive(Clone, Debug, Default)]
pub struct Second {
    /// Replies that were not errors.
    pub completed: u64,
    /// Error replies.
    pub failed: u64,
    /// Corrected latency of this second's completed requests (nanoseconds).
    pub latency: LatencyHistogram,
}

/// A test's seconds, index = second since the start of the measured phase.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub seconds: Vec<Second>,
}

impl Timeline {
    /// The entry of second `index`, created (with the ones before it) when first reached.
    pub fn second_mut(&mut self, index: usize) -> &mut Second {
        if self.seconds.len() <= index {
            self.seconds.resize_with(index + 1, Second::default);
        }
        &mut self.seconds[index]
    }

    /// Adds another worker's timeline, second by second.
    pub fn merge(&mut self, other: &Timeline) {
        for (i, s) in other.seconds.iter().enumerate() {
            let mine = self.second_mut(i);
            mine.completed += s.completed;
            mine.failed += s.failed;
            mine.latency.merge(&s.latency);
        }
    }

    /// `Ok` when the seconds add up to the test's totals: completed, error replies, and the
    /// corrected histogram's count.
    pub fn check_totals(&self, r: &TestResult) -> Result<(), String> {
        let completed: u64 = self.seconds.iter().map(|s| s.completed).sum();
        let failed: u64 = self.seconds.iter().map(|s| s.failed).sum();
        let recorded: u64 = self.seconds.iter().map(|s| s.latency.len()).sum();
        let mut wrong = Vec::new();
        if completed != r.completed {
            wrong.push(format!("completed {completed} != {}", r.completed));
        }
        if failed != r.errors.total() {
            wrong.push(format!("failed {failed} != {}", r.errors.total()));
        }
        if recorded != r.latency.len() {
            wrong.push(format!("latencies {recorded} != {}", r.latency.len()));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("timeline sums differ: {}", wrong.join(", ")))
        }
    }

    /// The record's rows, with each second's server intervals (`server[node]`: that node's
    /// intervals; the one starting in second `i` goes to row `i`).
    pub fn rows(&self, server: &[Vec<ServerInterval>]) -> Vec<TimelineRow> {
        self.seconds
            .iter()
            .enumerate()
            .map(|(i, s)| TimelineRow {
                second: i,
                completed: s.completed,
                failed: s.failed,
                p50_us: us(s.latency.value_at_percentile_ns(50.0)),
                p99_us: us(s.latency.value_at_percentile_ns(99.0)),
                max_us: us(s.latency.max_ns()),
                server: server
                    .iter()
                    .filter_map(|node| node.iter().find(|x| x.t as usize == i).copied())
                    .collect(),
            })
            .collect()
    }
}

/// Nanoseconds as microseconds (fractional).
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// One row of the record's timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelineRow {
    pub second: usize,
    pub completed: u64,
    pub failed: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// The server figures of that second, one per watched node (empty without server figures).
    pub server: Vec<ServerInterval>,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::Outcome;

    /// Two workers' timelines over 3 seconds and the result their totals make.
    fn synthetic() -> (Timeline, TestResult) {
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut merged = Timeline::default();
        for worker in 0..2u64 {
            let mut t = Timeline::default();
            for sec in 0..3usize {
                let s = t.second_mut(sec);
                for k in 0..(100 * (sec as u64 + 1) + worker) {
                    let v = 50_000 + k * 1_000 + worker;
                    s.latency.record(v);
                    s.completed += 1;
                    r.latency.record(v);
                    r.completed += 1;
                }
                if sec == 1 {
                    s.failed += 2;
                    r.errors.record(b"ERR boom");
                    r.errors.record(b"WRONGTYPE no");
                }
            }
            merged.merge(&t);
        }
        r.elapsed = Duration::from_secs(3);
        (merged, r)
    }

    #[test]
    fn merged_timelines_add_up_to_the_totals() {
        let (t, r) = synthetic();
        assert_eq!(t.seconds.len(), 3);
        assert_eq!(t.seconds[0].completed, 201);
        assert_eq!(t.seconds[1].failed, 4);
        assert_eq!(t.check_totals(&r), Ok(()));
    }

    #[test]
    fn a_lost_second_is_caught() {
        let (mut t, r) = synthetic();
        t.seconds[2].completed -= 1;
        let e = t.check_totals(&r).unwrap_err();
        assert!(e.contains("completed 1202 != 1203"), "{e}");
        let (mut t, r) = synthetic();
        t.seconds.pop();
        let e = t.check_totals(&r).unwrap_err();
        assert!(e.contains("latencies"), "{e}");
    }

    #[test]
    fn rows_carry_each_seconds_figures_and_server_interval() {
        let (t, _) = synthetic();
        let node = vec![
            ServerInterval {
                t: 0.0,
                cpu_pct: 10.0,
                ..ServerInterval::default()
            },
            ServerInterval {
                t: 1.0,
                cpu_pct: 20.0,
                ..ServerInterval::default()
            },
        ];
        let rows = t.rows(&[node]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].second, 2);
        assert_eq!(rows[2].completed, 601);
        assert_eq!(rows[1].failed, 4);
        assert!(rows[0].p50_us >= 50.0 && rows[0].p50_us <= rows[0].p99_us);
        assert!(rows[0].p99_us <= rows[0].max_us);
        assert_eq!(rows[1].server.len(), 1);
        assert_eq!(rows[1].server[0].cpu_pct, 20.0);
        assert!(rows[2].server.is_empty(), "no sample for second 2");
        let sum: u64 = rows.iter().map(|r| r.completed).sum();
        assert_eq!(sum, 1203);
    }
}
