//! The comparison as text (terminal, optionally coloured), Markdown, CSV and JSON.
//!
//! Owns: layout and number formatting. All four show the same rows: one per test and metric,
//! a value column per input and a change column per input after the base. Must not: decide
//! anything (that is `table`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::headline::{self, Summary};
use super::table::{Cell, Change, Comparison, Direction, Judgement, Metric};
use super::words::{interval_text, limits_text, pct_text};
use crate::stats::{CONFIDENCE, NOISY_PCT};
use crate::verdict::Verdict;

/// A value in its metric's unit: rps with 2 decimals, milliseconds with 3 (valkey-benchmark's
/// CSV precision).
pub fn value(metric: Metric, v: f64) -> String {
    if metric == Metric::Rps {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `59171.60`: the run's figure, or with repetitions their geometric mean ([`Cell::shown`], the
/// figure the change is computed from). No `±` beside it: the repetitions' spread is not an
/// error bar of the figure; the change's interval is beside the change, and a spread that makes
/// a change too noisy is named there in words.
pub fn cell_text(metric: Metric, c: Option<&Cell>) -> String {
    c.map_or("-".into(), |c| value(metric, c.shown()))
}

/// A change's verdict in words, the same in every output (the table's rows, the headline, the
/// HTML forest plot): `better`, `worse`, `same`, `within the noise`, `too noisy to tell`,
/// `better? (within-run evidence only)`, `worse? (can't tell: one run each)`, `can't tell: the
/// machine was busy for a and b`.
pub fn verdict_words(c: &Change, labels: (&str, &str)) -> String {
    let dir = c.direction.name();
    let (n1, n2) = c.n;
    match c.judgement {
        Judgement::Finding => dir.into(),
        Judgement::WithinNoise => "within the noise".into(),
        Judgement::TooNoisy { .. } => "too noisy to tell".into(),
        Judgement::WithinRunOnly => format!("{dir}? (within-run evidence only)"),
        Judgement::CantTell if c.direction == Direction::Same => dir.into(),
        Judgement::CantTell if (n1, n2) == (1, 1) => format!("{dir}? (can't tell: one run each)"),
        Judgement::CantTell => format!("{dir}? (can't tell: n={n1}+{n2})"),
        Judgement::Unattributable(l) => format!("can't tell: {}", limits_text(l, labels)),
    }
}

/// A change as the table shows it (`labels`: the base's and the other's, to name a side), its
/// words from [`verdict_words`]:
///
/// - a finding: `+3.49% better [+2.1%, +4.9%] (n=5+5)`;
/// - within the noise: `~ +0.50% [-1.2%, +2.3%] (n=5+5)`;
/// - too noisy: `+9.00% [-41.0%, +70.1%] too noisy to tell (b's repetitions spread ±560.0%)`;
/// - a single run's seconds: `+3.49% better? [+2.1%, +4.9%] (within-run evidence only)`;
/// - no interval: `+3.49% better? (can't tell: one run each)`;
/// - a side busy or client-bound: `+58.57% [+36.9%, +83.7%] can't tell: the machine was busy
///   for a and b (n=3+3)`.
pub fn change_text(c: Option<&Change>, labels: (&str, &str)) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let pct = pct_text(c.pct, 2);
    let dir = c.direction.name();
    let (n1, n2) = c.n;
    let words = verdict_words(c, labels);
    // The interval after a space, or nothing.
    let interval = c
        .estimate
        .as_ref()
        .map(|e| format!(" {}", interval_text(e)))
        .unwrap_or_default();
    match c.judgement {
        Judgement::Finding => format!("{pct} {words}{interval} (n={n1}+{n2})"),
        Judgement::WithinNoise => format!("~ {pct}{interval} (n={n1}+{n2})"),
        Judgement::TooNoisy { noisiest } => {
            let why = match noisiest {
                Some((side, spread)) => format!(
                    "{}'s repetitions spread ±{spread:.1}%",
                    if side == 0 { labels.0 } else { labels.1 }
                ),
                None => "the runs' seconds vary too much".into(),
            };
            format!("{pct}{interval} {words} ({why})")
        }
        Judgement::WithinRunOnly => format!("{pct} {dir}?{interval} (within-run evidence only)"),
        Judgement::CantTell => format!("{pct} {words}"),
        Judgement::Unattributable(_) => format!("{pct}{interval} {words} (n={n1}+{n2})"),
    }
}

/// The word CSV and JSON give a change's verdict: `better` or `worse` (a finding), `same`,
/// `noise`, `too-noisy`, `within-run-only`, `cant-tell` or `unattributable` (a side
/// machine-busy or client-bound in most repetitions).
fn verdict_word(c: &Change) -> &'static str {
    match c.judgement {
        Judgement::Finding => c.direction.name(),
        j => j.name(),
    }
}

/// The legend under the text and Markdown tables.
fn legend(cmp: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let any_reps = cmp
        .tests
        .iter()
        .flat_map(|t| &t.rows)
        .flat_map(|r| &r.cells)
        .any(|c| c.as_ref().is_some_and(|c| c.samples.len() > 1));
    let pct = CONFIDENCE * 100.0;
    let low = (100.0 / (1.0 + NOISY_PCT / 100.0) - 100.0).abs();
    if any_reps {
        out.push(format!(
            "Values are the repetitions' geometric means; a change is their ratio with its {pct:.0}% interval (Welch's, on the logarithms of the repetitions); better/worse: the interval does not include zero; ~: it does and both its ends are within +{NOISY_PCT:.0}% and -{low:.1}% (within the noise); \"too noisy to tell\": it does but an end is past them (a ratio of {:.1} either way)."
        , 1.0 + NOISY_PCT / 100.0));
    } else if cmp.labels.len() > 1 {
        // Storms and delivery tests refuse --repeat: their repetitions are separate runs.
        let repeat = if cmp.repeat_refused {
            "Repeat each side as separate runs given comma-separated (a1.json,a2.json,a3.json; --connect-storm, --pubsub and --stream refuse --repeat)"
        } else {
            "Repeat each side (--repeat 3)"
        };
        out.push(format!(
            "One run per side: a change with an interval comes from blocks of the runs' seconds ({pct:.0}%, within-run evidence only: it cannot see how much two runs of one server differ); without per-second figures there is none (can't tell). {repeat} for a verdict."
        ));
    }
    let unattributable = cmp
        .tests
        .iter()
        .flat_map(|t| &t.rows)
        .flat_map(|r| r.changes.iter().flatten())
        .any(|c| matches!(c.judgement, Judgement::Unattributable(_)));
    if unattributable {
        out.push("can't tell: a side was machine-busy or client-bound in most repetitions of the test (the warnings above): its figures describe the machine's load or respbench, so no difference, or its absence, can be put down to the servers. Run both sides again on a quiet machine (or with more --threads).".into());
    }
    // A mix's command rows are missing where their test is: said once, for the test.
    for t in cmp.tests.iter().filter(|t| t.mix_of.is_none()) {
        if !t.missing_from.is_empty() {
            let names: Vec<&str> = t
                .missing_from
                .iter()
                .map(|&i| cmp.labels[i].as_str())
                .collect();
            out.push(format!(
                "Test \"{}\" is missing from: {}.",
                t.name,
                names.join(", ")
            ));
        }
    }
    out
}

/// ANSI colour of a change: green better, red worse (findings only), dim for everything that
/// is not a finding.
fn colour(c: Option<&Change>) -> Option<&'static str> {
    let c = c?;
    match (c.is_finding(), c.direction) {
        (true, Direction::Better) => Some("32"),
        (true, Direction::Worse) => Some("31"),
        (_, Direction::Same) => None,
        (false, _) => Some("2"),
    }
}

/// The summary's lines for the text and Markdown formats: the headline, then what differs
/// besides the numbers, then warnings.
fn summary_lines(s: &Summary) -> Vec<String> {
    let mut out = s.headline.clone();
    if !s.differences.is_empty() {
        out.push(
            "Besides the numbers, the sides differ in (any of it may explain a difference):".into(),
        );
        out.extend(s.differences.iter().map(|d| format!("  {d}")));
    }
    out.extend(s.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

/// Aligned columns for a terminal, after the summary; `color` adds ANSI colours to the change
/// columns.
pub fn text(cmp: &Comparison, color: bool) -> String {
    let summary = summary_lines(&headline::summary(cmp));
    let mut header = vec!["test / metric".to_string()];
    header.extend(cmp.labels.iter().cloned());
    header.extend(
        cmp.labels[1..]
            .iter()
            .map(|l| format!("{l} vs {}", cmp.labels[0])),
    );
    // (text, colour) per column, per line; a test's name is a line of its own.
    let mut lines: Vec<Vec<(String, Option<&str>)>> =
        vec![header.into_iter().map(|h| (h, None)).collect()];
    for t in &cmp.tests {
        lines.push(vec![(t.name.clone(), None)]);
        for r in &t.rows {
            let mut line = vec![(format!("  {}", r.metric.label()), None)];
            line.extend(
                r.cells
                    .iter()
                    .map(|c| (cell_text(r.metric, c.as_ref()), None)),
            );
            line.extend(r.changes.iter().enumerate().map(|(k, c)| {
                (
                    change_text(c.as_ref(), (&cmp.labels[0], &cmp.labels[k + 1])),
                    colour(c.as_ref()),
                )
            }));
            lines.push(line);
        }
    }
    let cols = lines[0].len();
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .filter(|l| l.len() > 1)
                .map(|l| l[i].0.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    if !summary.is_empty() {
        out.push_str(&summary.join("\n"));
        out.push_str("\n\n");
    }
    for line in &lines {
        let mut s = String::new();
        for (i, (text, col)) in line.iter().enumerate() {
            let pad = width[i].saturating_sub(text.chars().count());
            let last = i + 1 == line.len();
            // Names left, numbers right; changes left (they start with the number).
            let body = if i == 0 || i > cmp.labels.len() || line.len() == 1 {
                format!(
                    "{text}{}",
                    if last { String::new() } else { " ".repeat(pad) }
                )
            } else {
                format!("{}{text}", " ".repeat(pad))
            };
            if i > 0 {
                s.push_str("  ");
            }
            match col {
                Some(code) if color => {
                    let _ = write!(s, "\x1b[{code}m{body}\x1b[0m");
                }
                _ => s.push_str(&body),
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    }
    for l in legend(cmp) {
        out.push('\n');
        out.push_str(&l);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A GitHub-flavoured Markdown table (for a pull request or a write-up).
pub fn markdown(cmp: &Comparison) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    let summary = summary_lines(&headline::summary(cmp));
    if !summary.is_empty() {
        for l in summary {
            // Indented lines would be code blocks: list items instead.
            match l.strip_prefix("  ") {
                Some(item) => {
                    let _ = writeln!(out, "- {item}");
                }
                None => {
                    let _ = writeln!(out, "{l}\n");
                }
            }
        }
        out.push('\n');
    }
    out.push_str("| test | metric |");
    for l in &cmp.labels {
        let _ = write!(out, " {} |", esc(l));
    }
    for l in &cmp.labels[1..] {
        let _ = write!(out, " {} vs {} |", esc(l), esc(&cmp.labels[0]));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---:|".repeat(cmp.labels.len()));
    out.push_str(&"---|".repeat(cmp.labels.len() - 1));
    out.push('\n');
    for t in &cmp.tests {
        for r in &t.rows {
            let _ = write!(out, "| {} | {} |", esc(&t.name), r.metric.label());
            for c in &r.cells {
                let _ = write!(out, " {} |", cell_text(r.metric, c.as_ref()));
            }
            for (k, c) in r.changes.iter().enumerate() {
                let labels = (cmp.labels[0].as_str(), cmp.labels[k + 1].as_str());
                let _ = write!(out, " {} |", esc(&change_text(c.as_ref(), labels)));
            }
            out.push('\n');
        }
    }
    let legend = legend(cmp);
    if !legend.is_empty() {
        out.push('\n');
        for l in legend {
            let _ = writeln!(out, "- {l}");
        }
    }
    out
}

/// CSV quoting: every field quoted, `"` doubled.
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// One row per test and metric: medians per input, then per other input its change in percent,
/// the interval's ends, the verdict ([`verdict_word`]), the direction and where the interval's
/// evidence came from (`repetitions`, `within-run`). Empty fields where a figure is missing.
pub fn csv(cmp: &Comparison) -> String {
    let mut head = vec![q("test"), q("metric"), q("unit")];
    head.extend(cmp.labels.iter().map(|l| q(l)));
    for l in &cmp.labels[1..] {
        for what in [
            "change_pct",
            "ci_low_pct",
            "ci_high_pct",
            "verdict",
            "direction",
            "evidence",
        ] {
            head.push(q(&format!("{l} {what}")));
        }
    }
    let mut out = head.join(",") + "\n";
    for t in &cmp.tests {
        for r in &t.rows {
            let mut f = vec![q(&t.name), q(r.metric.name()), q(r.metric.unit())];
            f.extend(r.cells.iter().map(|c| {
                q(&c.as_ref()
                    .map(|c| value(r.metric, c.shown()))
                    .unwrap_or_default())
            }));
            for c in &r.changes {
                match c {
                    Some(c) => {
                        let e = c.estimate.as_ref();
                        f.push(q(&format!("{:.2}", c.pct)));
                        f.push(q(&e.map(|e| format!("{:.2}", e.lo)).unwrap_or_default()));
                        f.push(q(&e.map(|e| format!("{:.2}", e.hi)).unwrap_or_default()));
                        f.push(q(verdict_word(c)));
                        f.push(q(c.direction.name()));
                        f.push(q(e.map(|e| e.evidence.name()).unwrap_or_default()));
                    }
                    None => f.extend(std::iter::repeat_n(q(""), 6)),
                }
            }
            out.push_str(&f.join(","));
            out.push('\n');
        }
    }
    out
}

/// The comparison as a JSON document (`respbench-compare/2`), for tools and dashboards: the
/// summary (headline, differences, warnings), then every row with each change's interval.
pub fn json(cmp: &Comparison, files: &[Vec<String>]) -> String {
    let mut s = serde_json::to_string_pretty(&json_value(cmp, files)).unwrap_or_default();
    s.push('\n');
    s
}

/// [`json`]'s document before it is written out: the HTML report embeds it without indentation
/// when it has thousands of tests, and need not parse the indented text back to drop it.
pub fn json_value(cmp: &Comparison, files: &[Vec<String>]) -> Value {
    let tests: Vec<Value> = cmp
        .tests
        .iter()
        .map(|t| {
            let metrics: Vec<Value> = t
                .rows
                .iter()
                .map(|r| {
                    json!({
                        "metric": r.metric.name(),
                        "unit": r.metric.unit(),
                        "higher_is_better": r.metric.higher_is_better(),
                        "values": r.cells.iter().map(|c| c.as_ref().map(|c| json!({
                            "value": c.shown(), "median": c.median, "spread_pct": c.spread_pct, "samples": c.samples,
                        }))).collect::<Vec<_>>(),
                        "changes": r.changes.iter().enumerate().map(|(k, c)| c.as_ref().map(|c| json!({
                            "pct": c.pct,
                            "ci": c.estimate.map(|e| [e.lo, e.hi]),
                            "evidence": c.estimate.map(|e| e.evidence.name()),
                            "verdict": verdict_word(c), "direction": c.direction.name(),
                            "limited_by": match c.judgement {
                                Judgement::Unattributable(l) => json!({
                                    "base": l.base.map(Verdict::name), "other": l.other.map(Verdict::name),
                                }),
                                _ => Value::Null,
                            },
                            "text": change_text(Some(c), (&cmp.labels[0], &cmp.labels[k + 1])),
                            "n": [c.n.0, c.n.1],
                        }))).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "name": t.name,
                "missing_from": t.missing_from.iter().map(|&i| &cmp.labels[i]).collect::<Vec<_>>(),
                "mix_of": t.mix_of.as_ref().map(|(test, command)| json!({"test": test, "command": command})),
                "metrics": metrics,
            })
        })
        .collect();
    let inputs: Vec<Value> = cmp
        .labels
        .iter()
        .zip(files)
        .map(|(l, f)| json!({"label": l, "files": f}))
        .collect();
    let summary = headline::summary(cmp);
    json!({
        "schema": "respbench-compare/2",
        "confidence": CONFIDENCE,
        "base": cmp.labels[0],
        "headline": summary.headline,
        "differences": summary.differences,
        "warnings": summary.warnings,
        "inputs": inputs,
        "tests": tests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::stats::{Estimate, Evidence};

    fn change(pct: f64, direction: Direction, judgement: Judgement) -> Change {
        let evidence = match judgement {
            Judgement::CantTell => None,
            Judgement::WithinRunOnly => Some(Evidence::WithinRun),
            _ => Some(Evidence::Repetitions),
        };
        Change {
            pct,
            direction,
            estimate: evidence.map(|evidence| Estimate {
                pct,
                lo: pct - 1.5,
                hi: pct + 1.25,
                evidence,
            }),
            judgement,
            n: (5, 5),
        }
    }

    #[test]
    fn change_texts() {
        let l = ("a", "b");
        assert_eq!(change_text(None, l), "-");
        assert_eq!(
            change_text(
                Some(&Change {
                    n: (1, 1),
                    ..change(3.456, Direction::Better, Judgement::CantTell)
                }),
                l
            ),
            "+3.46% better? (can't tell: one run each)"
        );
        assert_eq!(
            change_text(Some(&change(-2.0, Direction::Worse, Judgement::Finding)), l),
            "-2.00% worse [-3.5%, -0.8%] (n=5+5)"
        );
        assert_eq!(
            change_text(
                Some(&change(0.5, Direction::Better, Judgement::WithinNoise)),
                l
            ),
            "~ +0.50% [-1.0%, +1.8%] (n=5+5)"
        );
        let noisy = Judgement::TooNoisy {
            noisiest: Some((1, 560.0)),
        };
        assert_eq!(
            change_text(Some(&change(9.0, Direction::Better, noisy)), l),
            "+9.00% [+7.5%, +10.2%] too noisy to tell (b's repetitions spread ±560.0%)"
        );
        assert_eq!(
            change_text(
                Some(&Change {
                    n: (1, 1),
                    ..change(4.0, Direction::Better, Judgement::WithinRunOnly)
                }),
                l
            ),
            "+4.00% better? [+2.5%, +5.2%] (within-run evidence only)"
        );
    }

    #[test]
    fn colour_only_when_asked_and_only_on_findings() {
        use crate::compare::input::{Format, Sample, Test};
        let side = |label: &str, rps: &[f64]| {
            crate::compare::fixtures::input(
                label,
                Format::BenchmarkCsv,
                vec![Test {
                    name: "SET".into(),
                    samples: rps
                        .iter()
                        .map(|&rps| Sample {
                            rps,
                            p99: Some(1000.0),
                            ..Sample::default()
                        })
                        .collect(),
                }],
            )
        };
        let cmp = Comparison::new(
            &[
                side("a", &[100.0, 101.0, 99.0]),
                side("b", &[90.0, 91.0, 89.0]),
                side("c", &[110.0, 111.0, 109.0]),
                side("d", &[104.0, 90.0, 112.0]),
            ],
            &[Metric::Rps],
        );
        let plain = text(&cmp, false);
        assert!(!plain.contains('\x1b'));
        let coloured = text(&cmp, true);
        assert!(coloured.contains("\x1b[31m-10.00% worse"), "{coloured:?}");
        assert!(coloured.contains("\x1b[32m+10.00% better"), "{coloured:?}");
        assert!(
            coloured.contains(
                "\x1b[2m+1.59% [-22.7%, +33.5%] too noisy to tell (d's repetitions spread ±13.5%)"
            ),
            "{coloured:?}"
        );
        assert_eq!(
            coloured.matches("\x1b[0m").count(),
            3,
            "values are not coloured"
        );
        // Colour codes do not disturb the alignment: stripped, it is the plain text.
        assert_eq!(
            coloured
                .replace("\x1b[31m", "")
                .replace("\x1b[32m", "")
                .replace("\x1b[2m", "")
                .replace("\x1b[0m", ""),
            plain
        );
        // One run each: not a finding, so not green or red.
        let single = Comparison::new(&[side("a", &[100.0]), side("b", &[90.0])], &[Metric::Rps]);
        let t = text(&single, true);
        assert!(
            t.contains("\x1b[2m-10.00% worse? (can't tell: one run each)"),
            "{t:?}"
        );
    }

    #[test]
    fn a_mix_shows_each_command_in_every_format() {
        use crate::compare::fixtures::{mix_record, side};
        let run = |label: &str, get_p99: f64| {
            side(
                label,
                mix_record(
                    "SET:GET 1:10",
                    1100.0,
                    &[("SET", 100, 200.0), ("GET", 1000, get_p99)],
                ),
            )
        };
        let cmp = Comparison::new(&[run("a", 100.0), run("b", 150.0)], &[Metric::P99]);
        let t = text(&cmp, false);
        let lines: Vec<&str> = t.lines().collect();
        let at = lines
            .iter()
            .position(|l| *l == "SET:GET 1:10 / GET")
            .unwrap_or_else(|| panic!("{t}"));
        assert!(
            lines[at + 1].contains("0.100") && lines[at + 1].contains("+50.00% worse"),
            "{t}"
        );
        assert!(markdown(&cmp).contains("| SET:GET 1:10 / SET | p99 ms | 0.200 | 0.200 |"));
        assert!(csv(&cmp).contains(
            "\"SET:GET 1:10 / GET\",\"p99\",\"ms\",\"0.100\",\"0.150\",\"50.00\",\"\",\"\",\"cant-tell\",\"worse\",\"\""
        ));
        let doc: Value = serde_json::from_str(&json(&cmp, &[vec![], vec![]])).unwrap();
        assert_eq!(doc["tests"][0]["mix_of"], Value::Null);
        assert_eq!(
            doc["tests"][2]["mix_of"],
            json!({"test": "SET:GET 1:10", "command": "GET"})
        );
    }

    #[test]
    fn runs_of_modes_that_refuse_repeat_are_advised_comma_separated_runs() {
        use crate::compare::input::{Detail, Format, Sample, Test};
        let side = |label: &str, delivery: bool| {
            let detail = delivery.then(|| {
                // A delivery test's block, by its key (`compare` does not name the mode).
                let mut blocks = crate::record::block::Blocks::default();
                blocks.set("delivery", &serde_json::json!({}));
                Box::new(Detail {
                    blocks,
                    ..Detail::default()
                })
            });
            crate::compare::fixtures::input(
                label,
                Format::Respbench,
                vec![Test {
                    name: "PUBLISH -> SUBSCRIBE".into(),
                    samples: vec![Sample {
                        rps: 100.0,
                        detail,
                        ..Sample::default()
                    }],
                }],
            )
        };
        let advice = |delivery: bool| {
            let cmp = Comparison::new(&[side("a", delivery), side("b", false)], &[Metric::Rps]);
            (text(&cmp, false), markdown(&cmp))
        };
        let (t, md) = advice(true);
        for out in [&t, &md] {
            assert!(
                out.contains("comma-separated (a1.json,a2.json,a3.json"),
                "{out}"
            );
            assert!(!out.contains("(--repeat 3)"), "{out}");
        }
        let (t, _) = advice(false);
        assert!(t.contains("Repeat each side (--repeat 3)"), "{t}");
    }

    #[test]
    fn a_side_busy_in_most_repetitions_reads_cant_tell_in_every_format() {
        use crate::compare::input::{Format, Sample, Test};
        let side = |label: &str, rps: &[f64], kind: &str| {
            crate::compare::fixtures::input(
                label,
                Format::Respbench,
                vec![Test {
                    name: "INCR".into(),
                    samples: rps
                        .iter()
                        .map(|&rps| Sample {
                            rps,
                            limited_by: Some(kind.into()),
                            ..Sample::default()
                        })
                        .collect(),
                }],
            )
        };
        // The trial's INCR: +58.6% [+36.9%, +83.7%], every repetition machine-busy.
        let cmp = Comparison::new(
            &[
                side("a", &[58258.9, 56145.8, 51174.4], "machine-busy"),
                side("b", &[85931.4, 86542.3, 89740.0], "machine-busy"),
            ],
            &[Metric::Rps],
        );
        let row = "+58.57% [+36.9%, +83.7%] can't tell: the machine was busy for a and b (n=3+3)";
        let t = text(&cmp, true);
        assert!(
            t.contains(&format!("\x1b[2m{row}\x1b[0m")),
            "dim, not green: {t}"
        );
        let rps = t.lines().find(|l| l.starts_with("  rps")).unwrap();
        assert!(!rps.contains("better") && !rps.contains("worse"), "{t}");
        assert!(t.starts_with("b vs a: INCR can't tell: the machine was busy for a and b\n"));
        assert!(markdown(&cmp).contains(&format!("| {row} |")));
        assert!(csv(&cmp).contains(",\"58.57\","), "{}", csv(&cmp));
        assert!(csv(&cmp).contains(",\"unattributable\",\"better\",\"repetitions\"\n"));
        let doc: Value = serde_json::from_str(&json(&cmp, &[vec![], vec![]])).unwrap();
        let c = &doc["tests"][0]["metrics"][0]["changes"][0];
        assert_eq!(c["verdict"], "unattributable");
        assert_eq!(
            c["limited_by"],
            json!({"base": "machine-busy", "other": "machine-busy"})
        );
        assert_eq!(c["text"], row);
        // One side client-bound, the other busy.
        let cmp = Comparison::new(
            &[
                side("a", &[58258.9, 56145.8, 51174.4], "client-bound"),
                side("b", &[85931.4, 86542.3, 89740.0], "machine-busy"),
            ],
            &[Metric::Rps],
        );
        let c = cmp.tests[0].rows[0].changes[0].unwrap();
        assert_eq!(
            verdict_words(&c, ("a", "b")),
            "can't tell: the machine was busy for b; a was client-bound"
        );
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(q("MSET (10 \"keys\")"), "\"MSET (10 \"\"keys\"\")\"");
    }
}
