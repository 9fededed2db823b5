//! The comparison's forest plot: per test, metric and run against the base, the change with its
//! 95% interval, as `compare::table` computed and judged it (nothing is recomputed here). A
//! finding is a filled diamond in green (better) or red (worse); anything else is a grey open
//! circle, so an inconclusive change never reads as one, and the shape carries the judgement
//! for a reader who cannot tell the colours apart. Each row is labelled in words too.
//!
//! Owns: the plot's layout. Must not: judge a change (that is `Change::is_finding`).

use std::fmt::Write as _;

use crate::compare::table::{Change, Comparison, Direction, Metric};

use super::esc;

/// The metrics the plot shows (the overview's, and the median).
const METRICS: [Metric; 3] = [Metric::Rps, Metric::P50, Metric::P99];

const W: f64 = 760.0;
const LABEL: f64 = 250.0;
const WORDS: f64 = 170.0;
const ROW: f64 = 18.0;
const TOP: f64 = 26.0;

/// One row: what it is, and the change.
struct Entry<'a> {
    label: String,
    test: &'a str,
    metric: Metric,
    change: &'a Change,
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
                out.push(Entry {
                    label,
                    test: &t.name,
                    metric: row.metric,
                    change,
                });
            }
        }
    }
    out
}

/// The plot as an `<svg>` (empty when there is no change to show).
pub fn render(cmp: &Comparison) -> String {
    let rows = entries(cmp);
    if rows.is_empty() {
        return String::new();
    }
    let ends = |c: &Change| {
        c.estimate
            .as_ref()
            .map_or((c.pct, c.pct), |e| (e.lo.min(c.pct), e.hi.max(c.pct)))
    };
    let (lo, hi) = rows.iter().fold((0f64, 0f64), |(a, b), r| {
        let (l, h) = ends(r.change);
        (a.min(l), b.max(h))
    });
    let pad = ((hi - lo) * 0.08).max(1.0);
    let (x0, x1) = (lo - pad, hi + pad);
    let plot = (LABEL, W - WORDS);
    let sx = |v: f64| plot.0 + (v - x0) / (x1 - x0) * (plot.1 - plot.0);
    let h = TOP + ROW * rows.len() as f64 + 24.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart forest" data-chart="forest" viewBox="0 0 {W} {h}" role="img" aria-label="Change against the base with 95% intervals"><title>Change against the base with 95% intervals</title>"#
    );
    let zero = sx(0.0);
    let _ = write!(
        s,
        r##"<line x1="{zero:.1}" x2="{zero:.1}" y1="{:.1}" y2="{:.1}" stroke="#555"/><text class="tk" x="{zero:.1}" y="14" text-anchor="middle">0%</text><text class="tk" x="{:.1}" y="14">{x0:.0}%</text><text class="tk" x="{:.1}" y="14" text-anchor="end">+{x1:.0}%</text>"##,
        TOP - 6.0,
        h - 20.0,
        plot.0,
        plot.1
    );
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64 + ROW / 2.0;
        row(&mut s, r, y, &sx);
    }
    let _ = write!(
        s,
        r#"<text class="al" x="{:.1}" y="{:.1}" text-anchor="middle">change against the base, % (◆ finding, ○ not a finding)</text></svg>"#,
        (plot.0 + plot.1) / 2.0,
        h - 4.0
    );
    s
}

fn row(s: &mut String, r: &Entry, y: f64, sx: &dyn Fn(f64) -> f64) {
    let c = r.change;
    let finding = c.is_finding();
    let colour = match (finding, c.direction) {
        (true, Direction::Better) => "#08753a",
        (true, Direction::Worse) => "#b3261e",
        _ => "#888",
    };
    let words = if finding {
        format!("{:+.1}% {}", c.pct, c.direction.name())
    } else {
        format!("{:+.1}% ({})", c.pct, c.judgement.name())
    };
    let _ = write!(
        s,
        r#"<g class="fr" data-test="{}" data-metric="{}" data-finding="{finding}"><title>{}: {}</title><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        esc(r.test),
        r.metric.name(),
        esc(&r.label),
        esc(&words),
        LABEL - 8.0,
        y + 4.0,
        esc(&r.label)
    );
    if let Some(e) = &c.estimate {
        let _ = write!(
            s,
            r#"<line x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"/>"#,
            sx(e.lo),
            sx(e.hi)
        );
    }
    let x = sx(c.pct);
    if finding {
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
        r#"<text x="{:.1}" y="{:.1}" fill="{colour}">{}</text></g>"#,
        W - WORDS + 8.0,
        y + 4.0,
        esc(&words)
    );
}
