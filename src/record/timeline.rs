//! The per-second timeline's rows in the record. The timeline itself (what the workers fill,
//! and its "sums equal totals" check) is `metrics::Timeline`; a row adds that second's server
//! figures, the requests lost by kind and the reconnects of that second, and for a second in which
//! something failed or reconnected its ten 100 ms slots (to place an outage; quiet seconds leave
//! them out so a long run's record stays small). `outages` lists the outages found in the slots.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::outage::Outage;
use crate::metrics::{FAILURE_KINDS, SLOTS, Slot};
pub use crate::metrics::{Second, Timeline};
use crate::watch::ServerInterval;

/// A test of at most this many seconds keeps every second's 100 ms slots, troubled or not: its
/// report draws throughput and max latency at 0.1 s (the default suite's ~1 s tests and a
/// few-second test would otherwise be one to five points). Fifty slots keep the record small.
pub const SLOTS_KEPT_UP_TO_S: usize = 5;

/// The record's rows, with each second's server intervals (`server[node]`: that node's
/// intervals; the one starting in second `i` goes to row `i`).
pub fn rows(timeline: &Timeline, server: &[Vec<ServerInterval>]) -> Vec<TimelineRow> {
    SecondRows::of(timeline).rows(server)
}

/// A test's seconds as its record keeps them: each second's row (its server figures are placed
/// when the record is built) and its ten 100 ms slots (its outages are found in them, and a
/// troubled second's row shows them).
///
/// Why beside `metrics::Timeline`: a timeline second holds two histograms (packed once handed
/// over, `metrics::CoarseHistogram`, but a decode away from its figures); its row needs a few of
/// their figures. The journal's reader rebuilds the test a killed run was in
/// from these, second by second, so a day's test costs it about a kilobyte a second, not
/// gigabytes (`record::journal`). Rows come from here for a finished test too: one home.
#[derive(Clone, Debug, Default)]
pub struct SecondRows {
    rows: Vec<TimelineRow>,
    slots: Vec<[Slot; SLOTS]>,
}

impl SecondRows {
    /// A timeline's seconds.
    pub fn of(timeline: &Timeline) -> Self {
        let mut kept = SecondRows::default();
        for (i, s) in timeline.seconds.iter().enumerate() {
            kept.set(i, s);
        }
        kept
    }

    /// Second `index` is `s` (the seconds before it that were never set are empty, as
    /// `Timeline::second_mut` makes them).
    pub fn set(&mut self, index: usize, s: &Second) {
        while self.rows.len() <= index {
            self.rows.push(TimelineRow {
                second: self.rows.len(),
                ..TimelineRow::default()
            });
            self.slots.push([Slot::default(); SLOTS]);
        }
        // Unpacked once for both percentiles (`metrics::CoarseHistogram`).
        let latency = s.latency.histogram();
        self.rows[index] = TimelineRow {
            second: index,
            completed: s.completed,
            failed: s.failed,
            p50_us: us(latency.value_at_percentile_ns(50.0)),
            p99_us: us(latency.value_at_percentile_ns(99.0)),
            max_us: us(s.latency.max_ns()),
            lost: FAILURE_KINDS
                .iter()
                .zip(&s.lost)
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| ((*k).to_string(), *n))
                .collect(),
            client_delay_us: DelayRow::of(&s.client_delay),
            reconnect_attempts: s.reconnect_attempts(),
            reconnects: s.reconnects(),
            // Cluster mode's, added by `add_redirects`.
            redirects: BTreeMap::new(),
            invalidations: s.invalidations,
            slots: None,
            server: Vec::new(),
        };
        self.slots[index] = s.slots;
    }

    /// How many seconds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The record's rows: each with its server intervals (as [`rows`]), and its slots when
    /// something failed or reconnected in it or the test is short.
    pub fn rows(&self, server: &[Vec<ServerInterval>]) -> Vec<TimelineRow> {
        let short = self.rows.len() <= SLOTS_KEPT_UP_TO_S;
        self.rows
            .iter()
            .zip(&self.slots)
            .enumerate()
            .map(|(i, (row, slots))| {
                let troubled = row.failed > 0 || row.reconnect_attempts > 0;
                TimelineRow {
                    slots: (short || troubled).then(|| slots.iter().map(SlotRow::of).collect()),
                    server: server
                        .iter()
                        .filter_map(|node| node.iter().find(|x| x.t as usize == i).copied())
                        .collect(),
                    ..row.clone()
                }
            })
            .collect()
    }

    /// The outages in the seconds' slots (`metrics::outage`).
    pub fn outages(&self, elapsed: Duration, unanswered: u64) -> Vec<Outage> {
        crate::metrics::outage::outages_in(&self.slots, elapsed, unanswered)
    }
}

/// Adds cluster mode's redirects per second (`metrics::ClusterStats::timeline`, by
/// `RedirectKind` index) to the rows of the same seconds.
pub fn add_redirects(rows: &mut [TimelineRow], per_second: &[[u64; 4]]) {
    for (row, counts) in rows.iter_mut().zip(per_second) {
        for (kind, &n) in crate::metrics::RedirectKind::ALL.iter().zip(counts) {
            if n > 0 {
                row.redirects.insert(kind.name().to_string(), n);
            }
        }
    }
}

/// Nanoseconds as microseconds (fractional).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// One row of the record's timeline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimelineRow {
    pub second: usize,
    pub completed: u64,
    pub failed: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Of `failed`, the requests lost without a reply, by kind (`timeout`, `connection reset`,
    /// ...); empty when none.
    pub lost: BTreeMap<String, u64>,
    /// The client's delay sampled in this second (replies waiting in the kernel for respbench,
    /// `metrics::rx_delay`); absent where not measured and in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_delay_us: Option<DelayRow>,
    /// `-e`: attempts to reopen a failed connection in this second, and those that connected.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// Cluster mode: the redirects of this second by kind (`MOVED`, `ASK`, `TRYAGAIN`,
    /// `CLUSTERDOWN`), for the HTML report's burst markers; empty when none (and in records of
    /// earlier builds).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub redirects: BTreeMap<String, u64>,
    /// Client-side caching invalidations received in this second (`--enable-tracking`; a
    /// moving hot set's churn, `--key-drift`); absent when none (and in records of earlier
    /// builds).
    #[serde(skip_serializing_if = "is_zero")]
    pub invalidations: u64,
    /// The second's 100 ms slots when something failed or reconnected in it, and every second's
    /// in a test of at most [`SLOTS_KEPT_UP_TO_S`] seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots: Option<Vec<SlotRow>>,
    /// The server figures of that second, one per watched node (empty without server figures).
    pub server: Vec<ServerInterval>,
}

/// One second's client delay, µs, from its sampled reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DelayRow {
    pub avg: f64,
    pub p50: f64,
    pub p99: f64,
    /// Sampled reads behind the figures (1 read event in `rx_delay::SAMPLE_EVERY`): few samples
    /// make a noisy p99.
    pub samples: u64,
}

impl DelayRow {
    /// `None` for a second without samples.
    fn of(h: &crate::metrics::CoarseHistogram) -> Option<DelayRow> {
        let h = (!h.is_empty()).then(|| h.histogram())?;
        Some(DelayRow {
            avg: h.mean_ns() / 1000.0,
            p50: us(h.value_at_percentile_ns(50.0)),
            p99: us(h.value_at_percentile_ns(99.0)),
            samples: h.len(),
        })
    }
}

/// One 100 ms slot of a troubled second (or of any second of a short test).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlotRow {
    pub completed: u64,
    pub failed: u64,
    pub lost: u64,
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// The longest corrected latency of a request completed in the slot (µs): a short test's
    /// latency drawn at 0.1 s. The workers keep this maximum anyway (to tell a stall from a quiet
    /// spell), so it costs the per-reply path nothing more. Absent for a slot where nothing
    /// completed, and in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_us: Option<f64>,
    /// The busiest respbench worker's CPU in the slot (percent of one core), the longest
    /// run-queue wait of a worker (percent of the slot) and the slot's average sampled client
    /// delay (µs): what a sub-second test's verdict is judged from (`verdict::slots`). Absent
    /// where not measured (the first slot, the cut-short last one, a merged record) and in
    /// records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cpu_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_runqueue_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_delay_us: Option<f64>,
}

impl SlotRow {
    fn of(s: &Slot) -> SlotRow {
        SlotRow {
            completed: s.completed,
            failed: s.failed,
            lost: s.lost,
            reconnect_attempts: s.reconnect_attempts,
            reconnects: s.reconnects,
            max_us: (s.completed > 0).then(|| us(s.waited_ns)),
            client_cpu_pct: s.client_cpu_pct(),
            client_runqueue_pct: s.client_runqueue_pct(),
            client_delay_us: s.client_delay_avg_ns().map(|ns| ns / 1000.0),
        }
    }
}

/// One outage of the test (`metrics::outage`), in seconds from the start of the measured phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutageRecord {
    pub start_s: f64,
    pub end_s: f64,
    pub duration_s: f64,
    /// Requests failed in it (error replies and lost requests), and of those lost without reply.
    pub failed: u64,
    pub lost: u64,
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// The test ended during it.
    pub until_end: bool,
}

/// The record's outages.
pub fn outage_records(found: &[Outage]) -> Vec<OutageRecord> {
    let secs = |d: Duration| (d.as_secs_f64() * 10.0).round() / 10.0;
    found
        .iter()
        .map(|o| OutageRecord {
            start_s: secs(o.start()),
            end_s: secs(o.end()),
            duration_s: secs(o.duration()),
            failed: o.failed,
            lost: o.lost,
            reconnect_attempts: o.reconnect_attempts,
            reconnects: o.reconnects,
            until_end: o.until_end,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::{Outcome, TestResult};

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

    fn rows_of(t: &Timeline) -> Vec<TimelineRow> {
        rows(t, &[])
    }

    #[test]
    fn redirects_go_to_their_second_by_name() {
        let mut rows = vec![TimelineRow::default(), TimelineRow::default()];
        add_redirects(&mut rows, &[[0, 0, 0, 0], [40, 2, 0, 1]]);
        assert!(rows[0].redirects.is_empty());
        let names: Vec<(&str, u64)> = rows[1]
            .redirects
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(names, [("ASK", 2), ("CLUSTERDOWN", 1), ("MOVED", 40)]);
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert!(json.get("redirects").is_none(), "none: not written");
    }

    #[test]
    fn a_short_tests_slots_carry_their_longest_latency() {
        use std::time::Instant;

        use crate::metrics::{SecondTally, SharedTimeline};
        let shared = SharedTimeline::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut tally = SecondTally::new(start, shared.clone());
        tally.success(at(10), 200_000);
        tally.success(at(20), 900_000);
        tally.success(at(350), 50_000);
        tally.failure(at(150));
        tally.flush();
        let t = shared.lock().unwrap().clone();
        let slots = rows_of(&t)[0]
            .slots
            .clone()
            .expect("a short test keeps its slots");
        assert_eq!(slots[0].max_us, Some(900.0));
        assert_eq!(slots[3].max_us, Some(50.0));
        assert_eq!(slots[1].max_us, None, "an error reply has no latency");
        assert_eq!(slots[2].max_us, None, "nothing completed");
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
        let rows = rows(&t, &[node]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].second, 2);
        assert_eq!(rows[2].completed, 601);
        assert_eq!(rows[1].failed, 4);
        assert!(rows[0].p50_us >= 50.0 && rows[0].p50_us <= rows[0].p99_us);
        assert!(rows[0].p99_us <= rows[0].max_us);
        assert_eq!(rows[1].server.len(), 1);
        assert_eq!(rows[1].server[0].cpu_pct, 20.0);
        assert!(rows[2].server.is_empty(), "no sample for second 2");
        let mut long = t.clone();
        long.second_mut(SLOTS_KEPT_UP_TO_S); // one second longer than a short test
        let long = rows_of(&long);
        assert!(
            long[0].slots.is_none() && long[1].slots.is_some(),
            "a longer test keeps the slots of its troubled second only"
        );
        let mut short = t.clone();
        short.seconds.truncate(SLOTS_KEPT_UP_TO_S);
        assert!(
            rows_of(&short)
                .iter()
                .all(|r| r.slots.as_ref().is_some_and(|s| s.len() == 10)),
            "a short test keeps every second's slots"
        );
        let sum: u64 = rows.iter().map(|r| r.completed).sum();
        assert_eq!(sum, 1203);
    }
}
