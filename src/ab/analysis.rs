//! The answer of an A/B run: per test and metric, B's change against A from the paired blocks
//! (`compare::stats::from_pairs`, the one home of intervals) and its verdict, and the confounders
//! the blocks still show.
//!
//! The verdict reads the interval as `compare` does (`Estimate::excludes_zero`, `too_wide`), with
//! one addition for pairs: better or worse only when the whole interval lies beyond
//! ±[`MIN_EFFECT_PCT`], and an interval within it is `within_noise`, not a finding. Paired intervals get narrow enough to exclude zero for a
//! difference no one would act on (a port's, a block order's), and on a shared machine a change
//! that small is not attributable to the servers.

use crate::record::TestRecord;
use crate::record::ab::{AbBlock, AbVerdict};
use crate::stats::{self, Estimate};
use crate::verdict::Verdict;

/// The smallest change a paired interval may call better or worse.
pub const MIN_EFFECT_PCT: f64 = 2.0;

/// The metrics answered, with whether more is better. `cpu_us` is the server's CPU time per
/// request (its process CPU over the block, from the server watch): on a machine whose load
/// changes faster than a block, a server-bound test's throughput follows the CPU share the
/// server got, while its cost per request does not, so `cpu_us` can answer where `rps` cannot.
pub const METRICS: [(&str, bool); 4] = [
    ("rps", true),
    ("p50", false),
    ("p99", false),
    ("cpu_us", false),
];

/// A test's figure of `metric` (0 when the record lacks it: the pair is then dropped).
fn figure(t: &TestRecord, metric: &str) -> f64 {
    match metric {
        "rps" => t.throughput_rps,
        "p50" => t.latency_us.corrected.p50,
        "p99" => t.latency_us.corrected.p99,
        _ => {
            let cpu = t.server.first().and_then(|s| s.cpu_pct).unwrap_or(0.0);
            let n = t.requests.completed + t.requests.failed;
            cpu / 100.0 * t.duration_s * 1e6 / n.max(1) as f64
        }
    }
}

/// Per test, in A's first measured block's order, the pairs' figures: (A's, B's) per round
/// where both blocks completed it. Tests pair by their place in the block (the sides may run
/// different commands: `--a '-- EVAL …' --b '-- EVAL …'`); the label is the test's name, or
/// what the two names share.
fn pairs(blocks: &[AbBlock]) -> Vec<(String, Vec<(&TestRecord, &TestRecord)>)> {
    let measured = |side: &str| {
        blocks
            .iter()
            .filter(|b| b.round > 0 && b.side == side)
            .collect::<Vec<_>>()
    };
    let (a, b) = (measured("a"), measured("b"));
    let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
        return Vec::new();
    };
    let count = a0.record.tests.len().min(b0.record.tests.len());
    fn completed(blk: &AbBlock, k: usize) -> Option<&TestRecord> {
        blk.record.tests.get(k).filter(|t| t.outcome == "completed")
    }
    (0..count)
        .map(|k| {
            let label = label(&a0.record.tests[k].name, &b0.record.tests[k].name);
            let ps = a
                .iter()
                .filter_map(|ba| {
                    let bb = b.iter().find(|bb| bb.round == ba.round)?;
                    let (x, y) = (completed(ba, k)?, completed(bb, k)?);
                    (x.name == a0.record.tests[k].name && y.name == b0.record.tests[k].name)
                        .then_some((x, y))
                })
                .collect();
            (label, ps)
        })
        .collect()
}

/// A test's label: its name when both sides ran the same, else the command word both share
/// (`EVAL`), else both names.
fn label(a: &str, b: &str) -> String {
    let word = |s: &str| s.split_whitespace().next().unwrap_or("").to_string();
    if a == b {
        a.to_string()
    } else if word(a) == word(b) {
        word(a)
    } else {
        format!("{a} | {b}")
    }
}

/// The verdict word of an interval for a metric (`higher`: more is better).
pub fn judge(e: Option<&Estimate>, higher: bool) -> &'static str {
    let Some(e) = e else { return "cant_tell" };
    let within = |bound: f64| {
        let b = (bound / 100.0).ln_1p();
        let ln = |p: f64| (p / 100.0).ln_1p();
        ln(e.lo) >= -b && ln(e.hi) <= b
    };
    // A finding needs the whole interval beyond the smallest change worth naming, not only past
    // zero: on a shared machine the pairs are not independent draws, and an A/A interval that
    // just misses zero ([−27.6, −0.4] in one loaded run) is noise, not a finding.
    let m = (MIN_EFFECT_PCT / 100.0).ln_1p();
    let ln = |p: f64| (p / 100.0).ln_1p();
    if ln(e.lo) > m || ln(e.hi) < -m {
        if (e.pct > 0.0) == higher {
            "better"
        } else {
            "worse"
        }
    } else if within(MIN_EFFECT_PCT) || (!e.excludes_zero() && !e.too_wide()) {
        "within_noise"
    } else {
        "cant_tell"
    }
}

/// How many intervals an answer of `blocks` reads together: every test's [`METRICS`]. Each
/// interval is taken at [`stats::joint_confidence`] of this, so the whole answer holds at 95 %.
pub fn comparisons(blocks: &[AbBlock]) -> usize {
    pairs(blocks).len() * METRICS.len()
}

/// Every test's verdicts, in test order then [`METRICS`] order, each interval at the joint
/// confidence of all of them (see [`comparisons`]).
pub fn verdicts(blocks: &[AbBlock]) -> Vec<AbVerdict> {
    let mut out = Vec::new();
    let confidence = stats::joint_confidence(comparisons(blocks));
    for (test, ps) in pairs(blocks) {
        for (metric, higher) in METRICS {
            let a: Vec<f64> = ps.iter().map(|(x, _)| figure(x, metric)).collect();
            let b: Vec<f64> = ps.iter().map(|(_, y)| figure(y, metric)).collect();
            let e = stats::from_pairs_at(&a, &b, confidence);
            let both: Vec<(f64, f64)> = a
                .iter()
                .zip(&b)
                .filter(|(x, y)| **x > 0.0 && **y > 0.0)
                .map(|(x, y)| (*x, *y))
                .collect();
            let gm = |k: usize| {
                let n = both.len() as f64;
                (n > 0.0).then(|| {
                    (both
                        .iter()
                        .map(|p| if k == 0 { p.0 } else { p.1 }.ln())
                        .sum::<f64>()
                        / n)
                        .exp()
                })
            };
            out.push(AbVerdict {
                a: gm(0),
                b: gm(1),
                test: test.clone(),
                metric: metric.into(),
                verdict: judge(e.as_ref(), higher).into(),
                change_pct: e.map(|e| e.pct),
                interval: e.map(|e| [e.lo, e.hi]),
                pairs: ps.len() as u32,
            });
        }
    }
    out
}

/// What could still explain a difference, one sentence each: a side client-bound in most of its
/// blocks of a test (its figures are respbench's), a server restarted between a side's blocks
/// (its `run_id` changed), a test with unequal error rates on the two sides.
pub fn confounders(blocks: &[AbBlock]) -> Vec<String> {
    let mut out = Vec::new();
    for side in ["a", "b"] {
        let mine: Vec<&AbBlock> = blocks.iter().filter(|b| b.side == side).collect();
        let ids: Vec<&str> = mine
            .iter()
            .filter_map(|b| {
                b.record
                    .servers
                    .first()?
                    .identity
                    .as_ref()?
                    .run_id
                    .as_deref()
            })
            .collect();
        if ids.windows(2).any(|w| w[0] != w[1]) {
            out.push(format!(
                "{}'s server restarted between blocks (its run_id changed)",
                side.to_uppercase()
            ));
        }
    }
    for (test, ps) in pairs(blocks) {
        for (k, side) in ["A", "B"].iter().enumerate() {
            let bound = ps
                .iter()
                .map(|p| if k == 0 { p.0 } else { p.1 })
                .filter(|t| t.verdict.kind == Verdict::ClientBound)
                .count();
            if bound * 2 > ps.len() {
                out.push(format!(
                    "{side} was client-bound in {bound} of {} blocks of {test}: its figures describe respbench, not the server (more --threads)",
                    ps.len()
                ));
            }
        }
        let rate = |k: usize| {
            let (failed, all) = ps.iter().fold((0u64, 0u64), |(f, n), p| {
                let t = if k == 0 { p.0 } else { p.1 };
                (
                    f + t.requests.failed,
                    n + t.requests.failed + t.requests.completed,
                )
            });
            (failed, failed as f64 / all.max(1) as f64)
        };
        let ((fa, ra), (fb, rb)) = (rate(0), rate(1));
        if (fa > 0 || fb > 0) && (ra.max(rb) > 2.0 * ra.min(rb)) && (ra - rb).abs() > 1e-3 {
            out.push(format!(
                "unequal errors in {test}: A {fa} error replies ({:.2}%), B {fb} ({:.2}%)",
                ra * 100.0,
                rb * 100.0
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Evidence;

    fn est(pct: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            pct,
            lo,
            hi,
            evidence: Evidence::Pairs,
        }
    }

    #[test]
    fn verdicts_read_the_interval_by_the_metric_direction() {
        assert_eq!(judge(Some(&est(-12.3, -15.1, -9.6)), true), "worse");
        assert_eq!(judge(Some(&est(-12.3, -15.1, -9.6)), false), "better");
        assert_eq!(judge(Some(&est(1.0, -2.0, 4.0)), true), "within_noise");
        // Excludes zero but too small to attribute.
        assert_eq!(judge(Some(&est(0.8, 0.2, 1.5)), true), "within_noise");
        assert_eq!(judge(Some(&est(5.0, -18.0, 40.0)), true), "cant_tell");
        // Past zero but not past the smallest change worth naming: a loaded A/A run's interval.
        assert_eq!(judge(Some(&est(-15.1, -27.6, -0.4)), true), "cant_tell");
        assert_eq!(judge(None, true), "cant_tell");
    }

    fn block(side: &str, round: u32, rps: f64, failed: u64) -> AbBlock {
        let mut t = TestRecord {
            name: "GET".into(),
            outcome: "completed".into(),
            throughput_rps: rps,
            ..Default::default()
        };
        t.requests.completed = 1000;
        t.requests.failed = failed;
        let mut b = AbBlock {
            side: side.into(),
            round,
            ..Default::default()
        };
        b.record.tests.push(t);
        b
    }

    #[test]
    fn pairs_give_the_change_and_confounders_are_named() {
        let mut blocks = vec![block("a", 0, 1.0, 0), block("b", 0, 1.0, 0)];
        for (r, (a, b)) in [(100.0, 50.0), (120.0, 61.0), (90.0, 44.0), (110.0, 56.0)]
            .iter()
            .enumerate()
        {
            blocks.push(block("a", r as u32 + 1, *a, 0));
            blocks.push(block("b", r as u32 + 1, *b, 100));
        }
        let v = verdicts(&blocks);
        assert_eq!(v.len(), 4);
        assert_eq!(v[3].verdict, "cant_tell", "no server figures: no pairs");
        assert_eq!(
            (v[0].metric.as_str(), v[0].verdict.as_str(), v[0].pairs),
            ("rps", "worse", 4)
        );
        assert!((v[0].change_pct.unwrap() + 50.0).abs() < 2.0, "{v:?}");
        let c = confounders(&blocks);
        assert!(
            c.iter().any(|c| c.contains("unequal errors in GET")),
            "{c:?}"
        );
        // Means over the pairs: the ratio of the two is the change.
        let (ga, gb) = (v[0].a.unwrap(), v[0].b.unwrap());
        assert!(((gb / ga - 1.0) * 100.0 - v[0].change_pct.unwrap()).abs() < 1e-9);
    }
}
