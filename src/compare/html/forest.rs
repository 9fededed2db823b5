//! The comparison's forest plot: per test, metric and run against the base, the change with its
//! 95% interval, as `compare::table` computed and judged it (nothing is recomputed here). A
//! finding is a filled diamond in green (better) or red (worse); anything else is a grey open
//! circle, so an inconclusive change never reads as one, and the shape carries the judgement
//! for a reader who cannot tell the colours apart. Each row is labelled in the words the text
//! output uses (`render::verdict_words`).
//!
//! **The axis is a log ratio** (b/a), labelled in percent: a change is a ratio, so a halving and
//! a doubling are the same distance from 0%, and no interval can reach below −100% (a linear
//! axis of percents drew `-267%`). It spans the largest change or interval end, at least ±2%
//! and at most a factor of [`MAX_RATIO`] either way (−75% … +300%): a wild interval of a
//! noisy run is clipped there with an arrow (its figures are in the row's words and tooltip)
//! instead of squashing every real finding onto zero.
//!
//! Owns: the plot's layout and axis. Must not: judge a change (that is `Change::is_finding`).

use std::fmt::Write as _;

use crate::compare::render::verdict_words;
use crate::compare::table::{Change, Comparison, Direction, Metric};

use crate::html::esc;

/// The metrics the plot shows (the overview's, and the median).
const METRICS: [Metric; 3] = [Metric::Rps, Metric::P50, Metric::P99];

const LABEL: f64 = 250.0;
/// The plot's own width, between the labels and the words.
const PLOT: f64 = 340.0;
/// The words' column: at least this wide, wider for longer words.
const MIN_WORDS: f64 = 170.0;
const ROW: f64 = 18.0;
/// The largest scale the plot is drawn at (900 px for a viewBox of 760).
const ZOOM: f64 = 1.18;
const TOP: f64 = 26.0;
/// The widest the axis goes: a ratio of 4 either way (−75% … +300%).
const MAX_RATIO: f64 = 4.0;
/// The narrowest: ±2%.
const MIN_RATIO: f64 = 1.02;
/// Tick labels closer than this (px) would overlap: the later candidate is left out.
const TICK_GAP: f64 = 44.0;
/// Candidate ticks, in percent, most telling first (outermost first, so the axis's extent is
/// labelled), each kept only if it fits the range and clears the ticks kept before it.
const TICKS: [f64; 19] = [
    300.0, -75.0, 200.0, -67.0, 100.0, -50.0, 50.0, -33.0, 25.0, -20.0, 20.0, 10.0, -10.0, 5.0,
    -5.0, 2.0, -2.0, 1.0, -1.0,
];

/// One row: what it is, and the change.
struct Entry<'a> {
    label: String,
    test: &'a str,
    metric: Metric,
    change: &'a Change,
    /// The words beside the row (the text output's).
    words: String,
}

fn entries(cmp: &Comparison) -> Vec<Entry<'_>> {
    let mut out = Vec::new();
    let several = cmp.labels.len() > 2;
    for t in cmp.tests.iter().filter(|t| t.mix_of.is_none()) {
        for row in t.rows.iter().filter(|r| METRICS.contains(&r.metric)) {
            for (k, c) in row.changes.iter().enumerate() {
                let Some(change) = c else { continue };
                let label = if several {
                    format!("{} {} ({})", t.name, row.metric.name(), cmp.labels[k + 1])
                } else {
                    format!("{} {}", t.name, row.metric.name())
                };
                let labels = (cmp.labels[0].as_str(), cmp.labels[k + 1].as_str());
                let words = format!(
                    "{} {}",
                    crate::compare::words::signed_pct(change.pct),
                    verdict_words(change, labels)
                );
                out.push(Entry {
                    label,
                    test: &t.name,
                    metric: row.metric,
                    change,
                    words,
                });
            }
        }
    }
    out
}

/// A change in percent as a log ratio (a change of −100% or less, which only a zero figure
/// gives, is kept finite: it is clipped anyway).
fn log_ratio(pct: f64) -> f64 {
    (pct / 100.0).ln_1p().max(-50.0)
}

/// The axis's half-width in log-ratio units: the largest change or interval end, padded a
/// little, within [`MIN_RATIO`] and [`MAX_RATIO`].
fn half_range(rows: &[Entry]) -> f64 {
    let far = rows
        .iter()
        .flat_map(|r| {
            let c = r.change;
            let (lo, hi) = c.estimate.map_or((c.pct, c.pct), |e| (e.lo, e.hi));
            [c.pct, lo, hi]
        })
        .map(|p| log_ratio(p).abs())
        .fold(0.0, f64::max);
    (far * 1.08).clamp(MIN_RATIO.ln(), MAX_RATIO.ln())
}

/// The ticks (percent) of an axis of half-width `half` (log units) drawn over `px` pixels either
/// side of 0%: 0% and the candidates in [`TICKS`] that fit and do not crowd each other.
fn ticks(half: f64, px: f64) -> Vec<f64> {
    let mut kept = vec![0.0];
    for t in TICKS {
        let l = log_ratio(t);
        if l.abs() > half + 1e-9 {
            continue;
        }
        let x = l / half * px;
        if kept
            .iter()
            .all(|&k| (log_ratio(k) / half * px - x).abs() >= TICK_GAP)
        {
            kept.push(t);
        }
    }
    kept.sort_by(f64::total_cmp);
    kept
}

/// A tick's label: `0%`, `+100%`, `-50%`.
fn tick_label(t: f64) -> String {
    if t == 0.0 {
        "0%".into()
    } else {
        format!("{t:+.0}%")
    }
}

/// The plot as an `<svg>` (empty when there is no change to show).
pub fn render(cmp: &Comparison) -> String {
    let rows = entries(cmp);
    if rows.is_empty() {
        return String::new();
    }
    let half = half_range(&rows);
    // The words column fits its longest line (about 6.2 px a character at the chart's 11 px).
    let words_w = rows
        .iter()
        .map(|r| r.words.chars().count() as f64 * 6.2 + 16.0)
        .fold(MIN_WORDS, f64::max);
    let w = LABEL + PLOT + words_w;
    let (left, right) = (LABEL, LABEL + PLOT);
    let mid = (left + right) / 2.0;
    let sx = |pct: f64| mid + (log_ratio(pct) / half).clamp(-1.0, 1.0) * (PLOT / 2.0);
    let h = TOP + ROW * rows.len() as f64 + 24.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart forest" data-chart="forest" viewBox="0 0 {w:.0} {h}" style="max-width:{:.0}px" role="img" aria-label="Change against the base with 95% intervals"><title>Change against the base with 95% intervals</title>"#,
        // Drawn at most this much larger than its viewBox (900 px for the narrowest words): a
        // longer words column widens the plot rather than shrinking its text.
        w * ZOOM
    );
    for t in ticks(half, PLOT / 2.0) {
        let x = sx(t);
        let (stroke, class) = if t == 0.0 {
            ("#555", "zero")
        } else {
            ("#e6e6e6", "grid")
        };
        let _ = write!(
            s,
            r#"<line class="{class}" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="{stroke}"/><text class="tk" data-tick="{t}" x="{x:.1}" y="14" text-anchor="middle">{}</text>"#,
            TOP - 6.0,
            h - 20.0,
            tick_label(t)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64 + ROW / 2.0;
        row(&mut s, r, y, half, &sx, right + 8.0);
    }
    let _ = write!(
        s,
        r#"<text class="al" x="{mid:.1}" y="{:.1}" text-anchor="middle">change against the base (ratio, log scale; ◆ finding, ○ not a finding, ▸ interval beyond the axis)</text></svg>"#,
        h - 4.0
    );
    s
}

/// An arrow at `x` pointing outward (`dir` −1 left, +1 right): an interval that goes on beyond
/// the axis.
fn arrow(s: &mut String, x: f64, y: f64, dir: f64, colour: &str, end: &str) {
    let _ = write!(
        s,
        r#"<path class="clip" data-clip="{end}" d="M{:.1},{:.1}L{:.1},{y:.1}L{:.1},{:.1}Z" fill="{colour}"/>"#,
        x - dir * 6.0,
        y - 4.0,
        x + dir * 1.0,
        x - dir * 6.0,
        y + 4.0
    );
}

fn row(s: &mut String, r: &Entry, y: f64, half: f64, sx: &dyn Fn(f64) -> f64, words_x: f64) {
    let c = r.change;
    let finding = c.is_finding();
    let colour = match (finding, c.direction) {
        (true, Direction::Better) => "#08753a",
        (true, Direction::Worse) => "#b3261e",
        _ => "#888",
    };
    let _ = write!(
        s,
        r#"<g class="fr" data-test="{}" data-metric="{}" data-finding="{finding}" data-verdict="{}"><title>{}: {}</title><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        esc(r.test),
        r.metric.name(),
        c.judgement.name(),
        esc(&r.label),
        esc(&r.words),
        LABEL - 8.0,
        y + 4.0,
        esc(&r.label)
    );
    let beyond = |pct: f64| log_ratio(pct).abs() > half;
    if let Some(e) = &c.estimate {
        let (x0, x1) = (sx(e.lo), sx(e.hi));
        let _ = write!(
            s,
            r#"<line x1="{x0:.1}" x2="{x1:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/>"#
        );
        if beyond(e.lo) {
            arrow(s, x0, y, -1.0, colour, "lo");
        }
        if beyond(e.hi) {
            arrow(s, x1, y, 1.0, colour, "hi");
        }
    }
    let x = sx(c.pct);
    if beyond(c.pct) {
        // The change itself beyond the axis: an arrow where it leaves, its figure in the words.
        let dir = if c.pct < 0.0 { -1.0 } else { 1.0 };
        arrow(s, x, y, dir, colour, "change");
    } else if finding {
        let _ = write!(
            s,
            r#"<path d="M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}Z" fill="{colour}"/>"#,
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        );
    } else {
        let _ = write!(
            s,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="white" stroke="{colour}" stroke-width="1.5"/>"#
        );
    }
    let _ = write!(
        s,
        r#"<text x="{words_x:.1}" y="{:.1}" fill="{colour}">{}</text></g>"#,
        y + 4.0,
        esc(&r.words)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_ratios_that_never_crowd_or_pass_minus_100() {
        // The trial's wild intervals (up to +2164%): clipped at a ratio of 4.
        let half = MAX_RATIO.ln();
        let t = ticks(half, PLOT / 2.0);
        assert_eq!(t, [-75.0, -50.0, 0.0, 100.0, 300.0]);
        // Symmetric in log space: -50% and +100% as far from 0%.
        assert!((log_ratio(-50.0) + log_ratio(100.0)).abs() < 1e-12);
        // A quiet comparison's few percent.
        let t = ticks(log_ratio(11.0), PLOT / 2.0);
        assert!(
            t.contains(&0.0) && t.contains(&10.0) && t.contains(&-5.0),
            "{t:?}"
        );
        for half in [MIN_RATIO.ln(), 0.05, 0.1, 0.3, 0.7, 1.0, MAX_RATIO.ln()] {
            let t = ticks(half, PLOT / 2.0);
            assert!(t.contains(&0.0) && t.len() >= 3, "{half}: {t:?}");
            let xs: Vec<f64> = t
                .iter()
                .map(|&p| log_ratio(p) / half * PLOT / 2.0)
                .collect();
            for w in xs.windows(2) {
                assert!(w[1] - w[0] >= TICK_GAP, "{half}: {t:?} crowd");
            }
            assert!(
                t.iter()
                    .all(|&p| p > -100.0 && log_ratio(p).abs() <= half + 1e-9)
            );
        }
        assert_eq!(tick_label(0.0), "0%");
        assert_eq!(tick_label(-50.0), "-50%");
        assert_eq!(tick_label(100.0), "+100%");
    }
}
