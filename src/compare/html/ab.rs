//! An A/B record's HTML report (`respbench ab --html`, `respbench report` of an `ab` record): the
//! answer, a forest plot of the paired changes (B against A, each with its interval (95 % for all together), on a
//! log-ratio axis as the comparison's plot), and every block in the order it ran, so a reader
//! sees the interleaving and any block that stands out.
//!
//! Owns: this page. Must not: judge a change (the verdicts are the record's, `ab::analysis`).

use std::fmt::Write as _;

use crate::html::esc;
use crate::record::Document;
use crate::record::ab::{AbRecord, AbVerdict};

const W: f64 = 760.0;
const LABEL: f64 = 170.0;
const PLOT: f64 = 380.0;
const ROW: f64 = 20.0;

fn colour(verdict: &str) -> &'static str {
    match verdict {
        "better" => "#1a7f37",
        "worse" => "#cf222e",
        _ => "#6e7781",
    }
}

/// The forest plot: one row per test and metric with an interval.
fn forest(verdicts: &[AbVerdict]) -> String {
    let rows: Vec<&AbVerdict> = verdicts.iter().filter(|v| v.interval.is_some()).collect();
    if rows.is_empty() {
        return String::new();
    }
    let ln = |p: f64| (p / 100.0).ln_1p().max(-3.0);
    let half = rows
        .iter()
        .flat_map(|v| v.interval.unwrap())
        .map(|p| ln(p).abs())
        .fold(0.02f64.ln_1p(), f64::max)
        * 1.1;
    let x = |p: f64| LABEL + PLOT / 2.0 + ln(p).clamp(-half, half) / half * PLOT / 2.0;
    let h = 30.0 + ROW * rows.len() as f64;
    let mut s = format!(
        "<svg viewBox=\"0 0 {W} {h}\" width=\"{W}\" role=\"img\" aria-label=\"paired changes\">\
         <line x1=\"{0}\" y1=\"10\" x2=\"{0}\" y2=\"{1}\" stroke=\"#999\"/>\
         <text x=\"{0}\" y=\"{2}\" font-size=\"11\" text-anchor=\"middle\">0%</text>",
        x(0.0),
        h - 16.0,
        h - 4.0
    );
    let edge = ((half.exp() - 1.0) * 100.0).round();
    for t in [-edge, edge] {
        let p = if t < 0.0 {
            (1.0 / (1.0 + edge / 100.0) - 1.0) * 100.0
        } else {
            t
        };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{p:+.0}%</text>",
            x(p),
            h - 4.0
        );
    }
    for (i, v) in rows.iter().enumerate() {
        let y = 18.0 + ROW * i as f64;
        let [lo, hi] = v.interval.unwrap();
        let c = colour(&v.verdict);
        let pct = v.change_pct.unwrap_or(0.0);
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{}\" font-size=\"12\">{} {}</text>\
             <line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{c}\" stroke-width=\"2\"/>\
             <circle cx=\"{}\" cy=\"{y}\" r=\"4\" fill=\"{c}\"><title>{pct:+.1}% [{lo:+.1}, {hi:+.1}]</title></circle>\
             <text x=\"{}\" y=\"{}\" font-size=\"12\">{pct:+.1}% [{lo:+.1}, {hi:+.1}] {}</text>",
            y + 4.0,
            esc(&v.test),
            esc(&v.metric),
            x(lo),
            x(hi),
            x(pct),
            LABEL + PLOT + 10.0,
            y + 4.0,
            esc(&v.verdict.replace('_', " "))
        );
    }
    s.push_str("</svg>");
    s
}

/// The blocks in the order they ran: side, round, start, and each test's rps and p99.
fn blocks(rec: &AbRecord) -> String {
    let mut s = String::from(
        "<table><tr><th>#</th><th>side</th><th>round</th><th>started</th><th>test</th>\
         <th>rps</th><th>p99 ms</th><th>verdict</th></tr>",
    );
    for (i, b) in rec.blocks.iter().enumerate() {
        let round = match b.round {
            0 => "warm-up".to_string(),
            r => r.to_string(),
        };
        for t in &b.record.tests {
            let _ = write!(
                s,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{:.0}</td><td>{:.3}</td><td>{}</td></tr>",
                esc(&b.side),
                i + 1,
                esc(&b.side.to_uppercase()),
                round,
                esc(t.started_at.as_deref().unwrap_or("")),
                esc(&t.name),
                t.throughput_rps,
                t.latency_us.corrected.p99 / 1000.0,
                esc(t.verdict.reason.split('.').next().unwrap_or(""))
            );
        }
    }
    s.push_str("</table>");
    s
}

/// The page of an `ab` record (`None` when it is not one).
pub fn page(doc: &Document) -> Option<String> {
    let rec = doc.ab.as_deref()?;
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>respbench ab</title><style>\
         body{font-family:sans-serif;max-width:900px;margin:1em auto}\
         table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:right}\
         tr.a{background:#eef4ff}tr.b{background:#fff4e5}</style></head><body>",
    );
    let _ = write!(s, "<h1>A/B</h1><p><b>{}</b></p>", esc(&rec.answer));
    for side in &rec.sides {
        let _ = write!(
            s,
            "<p>{}: <code>{}</code></p>",
            esc(&side.side.to_uppercase()),
            esc(&side.options)
        );
    }
    let _ = write!(
        s,
        "<h2>Paired changes (B against A, {})</h2>",
        if rec.comparisons > 1 {
            format!(
                "95 % intervals holding together over all {}",
                rec.comparisons
            )
        } else {
            "95 % interval".to_string()
        }
    );
    s.push_str(&forest(&rec.verdicts));
    for c in &rec.confounders {
        let _ = write!(s, "<p>Note: {}</p>", esc(c));
    }
    let _ = write!(
        s,
        "<h2>Blocks in the order they ran</h2><p>Order {} (seed {}).</p>",
        esc(&rec.order),
        rec.seed
    );
    s.push_str(&blocks(rec));
    s.push_str("</body></html>\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_the_answer_the_plot_and_the_blocks() {
        let mut rec = AbRecord {
            answer: "B is 50.0 % slower on <GET>".into(),
            ..Default::default()
        };
        rec.verdicts.push(AbVerdict {
            test: "GET".into(),
            metric: "rps".into(),
            verdict: "worse".into(),
            change_pct: Some(-50.0),
            interval: Some([-55.0, -45.0]),
            pairs: 4,
            ..Default::default()
        });
        let doc = Document {
            ab: Some(Box::new(rec)),
            ..Default::default()
        };
        let p = page(&doc).unwrap();
        assert!(p.contains("B is 50.0 % slower on &lt;GET&gt;"), "{p}");
        assert!(p.contains("<svg") && p.contains("#cf222e"));
        assert!(page(&Document::default()).is_none());
    }
}
