//! An A/B record (`respbench ab`, `record::ab`) as text, Markdown and a gate: the one place its
//! verdicts are worded, used by `ab` as it ends and by `compare` reading the record later.
//!
//! Owns: the answer sentence, the table, the ✅/❌/➖ Markdown, `--fail-if-worse` on the
//! verdicts. Must not: compute a verdict (that is `ab::analysis`, from the blocks).

use std::fmt::Write as _;

use crate::record::Document;
use crate::record::ab::{AbRecord, AbVerdict};

/// The record at `path` when it is an A/B record (`None`: any other file, or none; the caller's
/// ordinary reading then says what is wrong with it).
pub fn read(path: &str) -> Option<Document> {
    /// Whether the document has an `ab` key, every value skipped unbuilt: a file that is not
    /// an A/B record (any other input of `compare` or `report`, or hostile JSON) costs a pass
    /// over its bytes, not a tree of them.
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        ab: Option<serde::de::IgnoredAny>,
    }
    let bytes = crate::record::input_file::read(std::path::Path::new(path)).ok()?;
    serde_json::from_slice::<Probe>(&bytes).ok()?.ab?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Document::read(value).ok().filter(|d| d.ab.is_some())
}

/// `-12.3`, `+4.0` with a minus sign a reader cannot miss (the text uses ASCII).
fn signed(p: f64) -> String {
    format!("{p:+.1}")
}

fn interval(v: &AbVerdict) -> String {
    v.interval.map_or("-".into(), |[lo, hi]| {
        format!("[{}, {}]", signed(lo), signed(hi))
    })
}

/// One test's phrase in the answer, from its throughput verdict.
fn phrase(v: &AbVerdict) -> String {
    let pct = v.change_pct.unwrap_or(0.0);
    match v.verdict.as_str() {
        "better" | "worse" => format!(
            "{:.1} % {} on {} {}",
            pct.abs(),
            if pct > 0.0 { "faster" } else { "slower" },
            v.test,
            interval(v)
        ),
        "within_noise" => format!("within the noise on {} {}", v.test, interval(v)),
        _ if v.pairs < 2 => format!("not measured on {} (fewer than 2 pairs)", v.test),
        _ => format!(
            "not told apart on {} {} (more --rounds)",
            v.test,
            interval(v)
        ),
    }
}

/// The first line of the output: B against A per test, on throughput
/// ("B is 12.3 % slower on GET [-15.1, -9.6], within the noise on SET [-1.2, +2.0]").
pub fn answer(verdicts: &[AbVerdict]) -> String {
    let phrases: Vec<String> = verdicts
        .iter()
        .filter(|v| v.metric == "rps")
        .map(phrase)
        .collect();
    if phrases.is_empty() {
        return "No answer: no test ran on both sides".into();
    }
    format!("B is {}", phrases.join(", "))
}

/// A figure of a metric: rps as a whole number, latencies in ms.
fn figure(metric: &str, v: Option<f64>) -> String {
    match (metric, v) {
        (_, None) => "-".into(),
        ("rps", Some(x)) => format!("{x:.0}"),
        ("cpu_us", Some(us)) => format!("{us:.2}"),
        (_, Some(us)) => format!("{:.3}", us / 1000.0),
    }
}

fn metric_label(m: &str) -> &str {
    match m {
        "rps" => "rps",
        "p50" => "p50 ms",
        "p99" => "p99 ms",
        "cpu_us" => "srv cpu µs/req",
        other => other,
    }
}

/// The table under the answer: per test and metric each side's geometric mean over the pairs,
/// the change, its interval and the verdict; then the confounders and how the blocks ran.
pub fn text(rec: &AbRecord) -> String {
    let mut out = format!("{}\n\n", rec.answer);
    let _ = writeln!(
        out,
        "{:<16} {:<14} {:>12} {:>12} {:>8} {:>18} {:>5}  verdict",
        "test",
        "metric",
        "A",
        "B",
        "change%",
        interval_heading(rec),
        "pairs"
    );
    for v in &rec.verdicts {
        let _ = writeln!(
            out,
            "{:<16} {:<14} {:>12} {:>12} {:>8} {:>18} {:>5}  {}",
            v.test,
            metric_label(&v.metric),
            figure(&v.metric, v.a),
            figure(&v.metric, v.b),
            v.change_pct.map_or("-".into(), signed),
            interval(v),
            v.pairs,
            v.verdict.replace('_', " ")
        );
    }
    out.push_str(&footer(rec));
    out
}

/// The interval column's heading: "95% joint" when the intervals hold together (records since
/// `comparisons`), "95% interval" for older records, whose intervals are each at 95 %.
fn interval_heading(rec: &AbRecord) -> &'static str {
    if rec.comparisons > 1 {
        "95% joint"
    } else {
        "95% interval"
    }
}

/// How the intervals were taken, in words.
fn interval_words(rec: &AbRecord) -> String {
    match rec.comparisons {
        m if m > 1 => format!(
            "with Student t intervals that hold together: all {m} at 95 % (each at {:.2} %, \
             Bonferroni),\nso an A/A run shows any better or worse at most 1 time in 20.",
            crate::stats::joint_confidence(m as usize) * 100.0
        ),
        _ => "with a 95% Student t interval.".into(),
    }
}

fn footer(rec: &AbRecord) -> String {
    let mut out = String::new();
    for c in &rec.confounders {
        let _ = writeln!(out, "Note: {c}");
    }
    let _ = writeln!(
        out,
        "\nA and B: geometric means over the pairs; change: B against A, the mean of the pairs' \
         log ratios,\n{}\n{} blocks of each side in the order {} (seed {}), after a warm-up \
         block each.",
        interval_words(rec),
        rec.order.len() / 2,
        rec.order,
        rec.seed
    );
    for s in &rec.sides {
        let _ = writeln!(out, "{}: {}", s.side.to_uppercase(), s.options);
    }
    out
}

/// The mark of a verdict in Markdown.
fn mark(verdict: &str) -> &'static str {
    match verdict {
        "better" => "✅",
        "worse" => "❌",
        "within_noise" => "➖",
        _ => "❔",
    }
}

/// The answer as Markdown for a pull-request comment: the answer in bold, then a table with a
/// ✅ (better), ❌ (worse), ➖ (within the noise) or ❔ (can't tell) per row.
pub fn markdown(rec: &AbRecord) -> String {
    let mut out = format!("**{}**\n\n", rec.answer);
    let _ = writeln!(
        out,
        "| | test | metric | A | B | change | {} | pairs |",
        interval_heading(rec)
    );
    out.push_str("|---|---|---|---:|---:|---:|---|---:|\n");
    for v in &rec.verdicts {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            mark(&v.verdict),
            v.test,
            metric_label(&v.metric),
            figure(&v.metric, v.a),
            figure(&v.metric, v.b),
            v.change_pct
                .map_or("-".into(), |p| format!("{}%", signed(p))),
            interval(v),
            v.pairs
        );
    }
    for c in &rec.confounders {
        let _ = writeln!(out, "\n> {c}");
    }
    out
}

/// `--fail-if-worse PCT` on the verdicts: 1 with the offending rows on stderr when a metric is
/// `worse` by more than PCT; else 3 when one cannot be told (`cant_tell`: neither a pass nor a
/// failure, never silent); else 0.
pub fn gate(rec: &AbRecord, pct: f64) -> u8 {
    let worse: Vec<&AbVerdict> = rec
        .verdicts
        .iter()
        .filter(|v| v.verdict == "worse" && v.change_pct.is_some_and(|c| c.abs() > pct))
        .collect();
    let unknown: Vec<&AbVerdict> = rec
        .verdicts
        .iter()
        .filter(|v| v.verdict == "cant_tell")
        .collect();
    let rows = |list: &[&AbVerdict]| {
        for v in list {
            eprintln!(
                "  {} {}: {}% {}",
                v.test,
                v.metric,
                v.change_pct.map_or("-".into(), signed),
                interval(v)
            );
        }
    };
    if !worse.is_empty() {
        eprintln!(
            "respbench: {} figure(s) of B worse than A by more than {pct}%:",
            worse.len()
        );
        rows(&worse);
        1
    } else if !unknown.is_empty() {
        eprintln!(
            "respbench: --fail-if-worse cannot tell for {} figure(s) (more --rounds, or a quieter machine):",
            unknown.len()
        );
        rows(&unknown);
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(test: &str, metric: &str, verdict: &str, pct: f64, lo: f64, hi: f64) -> AbVerdict {
        AbVerdict {
            test: test.into(),
            metric: metric.into(),
            verdict: verdict.into(),
            change_pct: Some(pct),
            interval: Some([lo, hi]),
            pairs: 10,
            a: Some(1000.0),
            b: Some(1000.0 * (1.0 + pct / 100.0)),
        }
    }

    #[test]
    fn the_answer_names_each_test_by_its_throughput_verdict() {
        let vs = [
            v("GET", "rps", "worse", -12.34, -15.1, -9.6),
            v("GET", "p99", "worse", 30.0, 20.0, 40.0),
            v("SET", "rps", "within_noise", 0.4, -1.2, 2.0),
        ];
        assert_eq!(
            answer(&vs),
            "B is 12.3 % slower on GET [-15.1, -9.6], within the noise on SET [-1.2, +2.0]"
        );
        let rec = AbRecord {
            answer: answer(&vs),
            verdicts: vs.to_vec(),
            ..Default::default()
        };
        let md = markdown(&rec);
        assert!(
            md.contains("| ❌ | GET | rps |") && md.contains("| ➖ | SET |"),
            "{md}"
        );
        assert!(text(&rec).starts_with("B is 12.3 % slower"));
        assert_eq!(gate(&rec, 5.0), 1);
        assert_eq!(gate(&rec, 50.0), 0);
    }
}
