//! The client delay (replies waiting in the kernel for respbench) across shards: per second and
//! over the test.
//!
//! Why these rules: each shard's delay is its own load generator's, and the shards' records hold
//! summaries, not histograms. The sampled reads add up (`samples`, `count`) and the average is
//! their samples-weighted mean, exact; a percentile cannot be rebuilt from summaries, so a merged
//! percentile is the largest of the shards' — an upper bound (no more than 1% of the union's
//! samples lie above the largest p99), the same rule as the timeline's `p50_us`/`p99_us`. `min`
//! and `max` are exact. A shard without the figure (unix socket, TLS) adds nothing; none with it:
//! absent.

use crate::record::document::LatencySummary;
use crate::record::timeline::DelayRow;

/// Adds one shard's second to the merged second's delay.
pub fn add_row(into: &mut Option<DelayRow>, row: Option<&DelayRow>) {
    let Some(row) = row.filter(|r| r.samples > 0) else {
        return;
    };
    let Some(m) = into else {
        *into = Some(*row);
        return;
    };
    let samples = m.samples.saturating_add(row.samples);
    m.avg = weighted(m.avg, m.samples, row.avg, row.samples);
    m.p50 = m.p50.max(row.p50);
    m.p99 = m.p99.max(row.p99);
    m.samples = samples;
}

/// The shards' whole-test delay (see the module comment).
pub fn whole<'a>(
    shards: impl Iterator<Item = Option<&'a LatencySummary>>,
) -> Option<LatencySummary> {
    shards
        .flatten()
        .filter(|s| s.count > 0)
        .fold(None, |into: Option<LatencySummary>, s| {
            let Some(m) = into else {
                return Some(s.clone());
            };
            Some(LatencySummary {
                count: m.count.saturating_add(s.count),
                avg: weighted(m.avg, m.count, s.avg, s.count),
                min: m.min.min(s.min),
                p50: m.p50.max(s.p50),
                p90: m.p90.max(s.p90),
                p95: m.p95.max(s.p95),
                p99: m.p99.max(s.p99),
                p99_9: m.p99_9.max(s.p99_9),
                p99_99: m.p99_99.max(s.p99_99),
                max: m.max.max(s.max),
            })
        })
}

/// The mean of two means weighted by their counts.
fn weighted(a: f64, na: u64, b: f64, nb: u64) -> f64 {
    let n = na as f64 + nb as f64;
    if n > 0.0 {
        (a * na as f64 + b * nb as f64) / n
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(avg: f64, p50: f64, p99: f64, samples: u64) -> DelayRow {
        DelayRow {
            avg,
            p50,
            p99,
            samples,
        }
    }

    #[test]
    fn a_second_adds_samples_weights_the_average_and_bounds_the_percentiles() {
        let mut m = None;
        add_row(&mut m, Some(&row(10.0, 8.0, 40.0, 300)));
        add_row(&mut m, None);
        add_row(&mut m, Some(&row(0.0, 0.0, 0.0, 0)));
        add_row(&mut m, Some(&row(30.0, 20.0, 90.0, 100)));
        let m = m.unwrap();
        assert_eq!(m.samples, 400);
        assert!(
            (m.avg - 15.0).abs() < 1e-9,
            "(10·300 + 30·100) / 400: {}",
            m.avg
        );
        assert_eq!((m.p50, m.p99), (20.0, 90.0));
        let mut none = None;
        add_row(&mut none, None);
        assert_eq!(none, None, "no shard measured it: absent");
    }

    #[test]
    fn the_whole_test_adds_counts_and_keeps_exact_extremes() {
        let s = |count, avg, min, p99, max| LatencySummary {
            count,
            avg,
            min,
            p50: avg,
            p99,
            max,
            ..LatencySummary::default()
        };
        let a = s(200, 12.0, 1.0, 80.0, 300.0);
        let b = s(600, 4.0, 0.5, 20.0, 900.0);
        let m = whole([Some(&a), None, Some(&b)].into_iter()).unwrap();
        assert_eq!(m.count, 800);
        assert!((m.avg - 6.0).abs() < 1e-9, "{}", m.avg);
        assert_eq!((m.min, m.max, m.p99, m.p50), (0.5, 900.0, 80.0, 12.0));
        assert!(whole([None, None].into_iter()).is_none());
    }
}
