//! The HTML report's replay section (`respbench replay`'s records): per run, which trace was
//! replayed and how (span, speed, laps, window), what was not sent and why (skipped by name,
//! script lines, `--cluster`'s CROSSSLOT commands and MULTI/EXEC blocks across slots, redirects
//! followed), and a chart of the schedule's slip per second — how far behind its intended times
//! respbench sent, which says whether the replay kept the trace's timing.
//!
//! Owns: that section. Must not: compute anything the record's `replay` block does not hold.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::block::{ReplayCluster, ReplayRecord, ReplaySecond};
use crate::html::esc;
use crate::html::svg::{self, Series, Stroke, XAxis};
use crate::html::svg::{chart, colour};
use crate::record::block::Side;

/// A run's replay block: its place among the inputs (its colour), its label.
type Run<'a> = (usize, &'a str, &'a ReplayRecord);

/// `name n, name n` of a count map, or `-`.
fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The window and laps as given: `10–20 s, 3 laps`.
fn window(r: &ReplayRecord) -> String {
    let mut w = match (r.start_s, r.end_s) {
        (None, None) => "whole trace".to_string(),
        (s, e) => format!(
            "{}–{} s",
            s.unwrap_or(0.0),
            e.map_or("end".to_string(), |e| e.to_string())
        ),
    };
    if r.loops > 1 {
        let _ = write!(w, ", {} laps", r.loops);
    }
    if r.warmup_s > 0.0 {
        let _ = write!(w, ", first {} s unmeasured", r.warmup_s);
    }
    w
}

/// One row of the table for one run.
fn row(s: &mut String, label: &str, r: &ReplayRecord) {
    let speed = r.speed.map_or("max".to_string(), |x| format!("{x}×"));
    let mut not_sent = counts(&r.filtered.skipped);
    if r.filtered.from_scripts > 0 {
        let _ = write!(not_sent, "; run by scripts {}", r.filtered.from_scripts);
    }
    let _ = write!(
        s,
        "<tr><td>{}</td><td>{}</td><td>{:.3} s</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td></tr>",
        esc(label),
        esc(&r.trace),
        r.span_s,
        esc(&speed),
        esc(&window(r)),
        r.entries,
        r.sent,
        r.connections,
        r.clients,
        esc(&not_sent),
        r.max_slip_ms,
    );
}

/// `--cluster` replays' routing: a row per run that has it; nothing when none does.
fn cluster_table(s: &mut String, runs: &[Run]) {
    let rows: Vec<(&str, &ReplayCluster)> = runs
        .iter()
        .filter_map(|(_, label, r)| Some((*label, r.cluster.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    s.push_str(
        "<h3>Cluster routing</h3><div class=\"scroll\"><table class=\"replay-cluster\"><tr>\
         <th>run</th><th>commands per node</th><th>CROSSSLOT (not sent)</th>\
         <th>MULTI/EXEC across slots (not sent)</th><th>MOVED followed</th>\
         <th>ASK followed</th></tr>",
    );
    for (label, c) in rows {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} ({} commands)</td><td>{}</td>\
             <td>{}</td></tr>",
            esc(label),
            esc(&counts(&c.routed)),
            esc(&counts(&c.crossslot)),
            c.multi_across_slots,
            c.multi_commands_skipped,
            c.moved,
            c.ask
        );
    }
    s.push_str("</table></div>");
}

/// The section, when some run is a replay (`compare::html` finds them by the block's kind);
/// nothing otherwise.
pub(super) fn section(s: &mut String, sides: &[(Side, &ReplayRecord)]) {
    let runs: Vec<Run> = sides
        .iter()
        .map(|(side, r)| (side.index, side.label.as_str(), *r))
        .collect();
    if runs.is_empty() {
        return;
    }
    s.push_str(
        "<section class=\"replay\" id=\"replay\"><h2>Replay</h2><p class=\"note\">The trace \
         replayed with its own timing: latency is measured from each command's intended send \
         time; the slip is how late respbench sent it.</p><div class=\"scroll\">\
         <table class=\"replay\"><tr>\
         <th>run</th><th>trace</th><th>span</th><th>speed</th><th>window</th><th>entries</th>\
         <th>sent</th><th>connections</th><th>clients</th><th>not sent</th>\
         <th>max slip ms</th></tr>",
    );
    for (_, label, r) in &runs {
        row(s, label, r);
    }
    s.push_str("</table></div>");
    cluster_table(s, &runs);
    let mut series = Vec::new();
    for (i, label, r) in &runs {
        let per = |f: fn(&ReplaySecond) -> f64| {
            r.seconds
                .iter()
                .enumerate()
                .map(|(k, x)| (k as f64, f(x)))
                .collect::<Vec<_>>()
        };
        series.push(Series {
            label: format!("{label} max"),
            colour: colour(*i),
            stroke: Stroke::Solid,
            points: per(|x| x.slip_max_ms),
        });
        series.push(Series {
            label: format!("{label} mean"),
            colour: colour(*i),
            stroke: Stroke::Dashed,
            points: per(|x| x.slip_mean_ms),
        });
    }
    if let Some(mut c) = chart(
        "replay-slip",
        "replay",
        "Schedule slip per second (max solid, mean dashed)",
        "s",
        "ms late",
        XAxis::Linear,
        series,
    ) {
        c.x_from_zero = true;
        c.legend = runs
            .iter()
            .map(|(i, label, _)| (label.to_string(), colour(*i)))
            .collect();
        s.push_str("<div class=\"charts\">");
        s.push_str(&svg::render(&c));
        s.push_str("</div>");
    }
    s.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::block::Filtered;

    fn side(label: &str, index: usize) -> Side {
        let label = label.into();
        Side {
            label,
            index,
            ..Side::default()
        }
    }

    #[test]
    fn the_section_shows_the_trace_skips_cluster_and_slip_chart() {
        let r = ReplayRecord {
            trace: "shop<1>.trace".into(),
            span_s: 20.5,
            speed: Some(2.0),
            loops: 1,
            entries: 100,
            sent: 90,
            filtered: Filtered {
                skipped: [("FLUSHDB".to_string(), 3)].into_iter().collect(),
                from_scripts: 2,
                ..Filtered::default()
            },
            max_slip_ms: 4.25,
            seconds: vec![
                ReplaySecond {
                    slip_max_ms: 1.0,
                    slip_mean_ms: 0.5,
                    ..Default::default()
                },
                ReplaySecond {
                    slip_max_ms: 4.25,
                    slip_mean_ms: 2.0,
                    ..Default::default()
                },
            ],
            cluster: Some(ReplayCluster {
                routed: [("a:1".to_string(), 50), ("b:2".to_string(), 40)]
                    .into_iter()
                    .collect(),
                crossslot: [("MSET".to_string(), 4)].into_iter().collect(),
                multi_across_slots: 1,
                multi_commands_skipped: 3,
                moved: 2,
                ask: 0,
            }),
            ..Default::default()
        };
        let mut s = String::new();
        // The first input has no replay: only the second's block is given, at its place.
        section(&mut s, &[(side("replayed", 1), &r)]);
        assert!(s.contains("id=\"replay\""), "{s}");
        assert!(s.contains("shop&lt;1&gt;.trace") && s.contains("2×"), "{s}");
        assert!(s.contains("FLUSHDB 3; run by scripts 2"), "{s}");
        assert!(
            s.contains("<td>a:1 50, b:2 40</td><td>MSET 4</td><td>1 (3 commands)</td><td>2</td>"),
            "{s}"
        );
        assert!(s.contains("data-chart=\"replay-slip\""), "{s}");
        assert!(
            !s.contains("<td>plain</td>"),
            "a run without a replay has no row"
        );
        let mut none = String::new();
        section(&mut none, &[]);
        assert!(none.is_empty());
    }
}
