//! The comparison as text (terminal, optionally coloured), Markdown, CSV and JSON.
//!
//! Owns: layout and number formatting. All four show the same rows: one per test and metric,
//! a value column per input and a change column per input after the base. Must not: decide
//! anything (that is `table`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::stats::{ALPHA, Noise};
use super::table::{Cell, Change, Comparison, Direction, Metric};

/// A value in its metric's unit: rps with 2 decimals, milliseconds with 3 (valkey-benchmark's
/// CSV precision).
pub fn value(metric: Metric, v: f64) -> String {
    if metric == Metric::Rps {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `59171.60` or, with repetitions, `59171.60 ±1.2%` (median and spread).
pub fn cell_text(metric: Metric, c: Option<&Cell>) -> String {
    match c {
        None => "-".into(),
        Some(c) => match c.spread_pct {
            Some(s) => format!("{} ±{s:.1}%", value(metric, c.median)),
            None => value(metric, c.median),
        },
    }
}

/// `+3.49% better`, `~ +0.50% (p=0.42 n=5+5)`, `+3.49% better (p=0.008 n=5+5)` or
/// `+3.49% better? (too few samples n=3+3)`.
pub fn change_text(c: Option<&Change>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let pct = format!("{:+.2}%", c.pct);
    let dir = c.direction.name();
    let (n1, n2) = c.n;
    match c.noise {
        None => format!("{pct} {dir}"),
        Some(Noise::Significant { p }) => format!("{pct} {dir} (p={p:.3} n={n1}+{n2})"),
        Some(Noise::Noise { p }) => format!("~ {pct} (p={p:.2} n={n1}+{n2})"),
        Some(Noise::TooFew) => format!("{pct} {dir}? (too few samples n={n1}+{n2})"),
    }
}

/// The word the CSV and JSON give a change's verdict: `better`, `worse`, `same`, or `noise`.
fn verdict_word(c: &Change) -> &'static str {
    if c.is_noise() {
        "noise"
    } else {
        c.direction.name()
    }
}

/// The noise test's outcome as a word (empty without repetitions).
fn noise_word(c: &Change) -> &'static str {
    match c.noise {
        None => "",
        Some(Noise::Significant { .. }) => "significant",
        Some(Noise::Noise { .. }) => "noise",
        Some(Noise::TooFew) => "too-few-samples",
    }
}

fn p_of(c: &Change) -> Option<f64> {
    match c.noise {
        Some(Noise::Significant { p } | Noise::Noise { p }) => Some(p),
        _ => None,
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
    if any_reps {
        out.push(format!(
            "Values are medians; ±: the largest distance of a repetition from the median. ~: within the noise (Mann-Whitney U, two-sided, p ≥ {ALPHA}); \"too few samples\": no difference can reach p < {ALPHA} with so few repetitions."
        ));
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

/// ANSI colour of a change: green better, red worse, dim within the noise.
fn colour(c: Option<&Change>) -> Option<&'static str> {
    let c = c?;
    if c.is_noise() {
        return Some("2");
    }
    match c.direction {
        Direction::Better => Some("32"),
        Direction::Worse => Some("31"),
        Direction::Same => None,
    }
}

/// Aligned columns for a terminal; `color` adds ANSI colours to the change columns.
pub fn text(cmp: &Comparison, color: bool) -> String {
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
            line.extend(
                r.changes
                    .iter()
                    .map(|c| (change_text(c.as_ref()), colour(c.as_ref()))),
            );
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
    let mut out = String::from("| test | metric |");
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
            for c in &r.changes {
                let _ = write!(out, " {} |", change_text(c.as_ref()));
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
/// verdict (`better`, `worse`, `same`, `noise`), noise test outcome and p-value. Empty fields
/// where a figure is missing.
pub fn csv(cmp: &Comparison) -> String {
    let mut head = vec![q("test"), q("metric"), q("unit")];
    head.extend(cmp.labels.iter().map(|l| q(l)));
    for l in &cmp.labels[1..] {
        for what in ["change_pct", "verdict", "noise_test", "p"] {
            head.push(q(&format!("{l} {what}")));
        }
    }
    let mut out = head.join(",") + "\n";
    for t in &cmp.tests {
        for r in &t.rows {
            let mut f = vec![q(&t.name), q(r.metric.name()), q(r.metric.unit())];
            f.extend(r.cells.iter().map(|c| {
                q(&c.as_ref()
                    .map(|c| value(r.metric, c.median))
                    .unwrap_or_default())
            }));
            for c in &r.changes {
                match c {
                    Some(c) => {
                        f.push(q(&format!("{:.2}", c.pct)));
                        f.push(q(verdict_word(c)));
                        f.push(q(noise_word(c)));
                        f.push(q(&p_of(c).map(|p| format!("{p:.4}")).unwrap_or_default()));
                    }
                    None => f.extend(std::iter::repeat_n(q(""), 4)),
                }
            }
            out.push_str(&f.join(","));
            out.push('\n');
        }
    }
    out
}

/// The comparison as a JSON document (`respbench-compare/1`), for tools and dashboards.
pub fn json(cmp: &Comparison, files: &[Vec<String>]) -> String {
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
                            "median": c.median, "spread_pct": c.spread_pct, "samples": c.samples,
                        }))).collect::<Vec<_>>(),
                        "changes": r.changes.iter().map(|c| c.as_ref().map(|c| json!({
                            "pct": c.pct, "verdict": verdict_word(c), "direction": c.direction.name(),
                            "noise_test": match noise_word(c) { "" => Value::Null, w => w.into() },
                            "p": p_of(c), "n": [c.n.0, c.n.1],
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
    let doc = json!({
        "schema": "respbench-compare/1",
        "alpha": ALPHA,
        "base": cmp.labels[0],
        "inputs": inputs,
        "tests": tests,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(pct: f64, direction: Direction, noise: Option<Noise>) -> Change {
        Change {
            pct,
            direction,
            noise,
            n: (5, 5),
        }
    }

    #[test]
    fn change_texts() {
        assert_eq!(change_text(None), "-");
        assert_eq!(
            change_text(Some(&Change {
                n: (1, 1),
                ..change(3.456, Direction::Better, None)
            })),
            "+3.46% better"
        );
        assert_eq!(
            change_text(Some(&change(
                -2.0,
                Direction::Worse,
                Some(Noise::Significant { p: 0.0079 })
            ))),
            "-2.00% worse (p=0.008 n=5+5)"
        );
        assert_eq!(
            change_text(Some(&change(
                0.5,
                Direction::Better,
                Some(Noise::Noise { p: 0.42 })
            ))),
            "~ +0.50% (p=0.42 n=5+5)"
        );
        assert_eq!(
            change_text(Some(&change(9.0, Direction::Better, Some(Noise::TooFew)))),
            "+9.00% better? (too few samples n=5+5)"
        );
    }

    #[test]
    fn colour_only_when_asked_and_only_on_changes() {
        use crate::compare::input::{Format, Input, Sample, Test};
        let side = |label: &str, rps: f64| Input {
            label: label.into(),
            files: vec![],
            format: Format::BenchmarkCsv,
            server: None,
            find_max: None,
            problems: vec![],
            tests: vec![Test {
                name: "SET".into(),
                samples: vec![Sample {
                    rps,
                    p99: Some(1000.0),
                    ..Sample::default()
                }],
            }],
        };
        let cmp = Comparison::new(
            &[side("a", 100.0), side("b", 90.0), side("c", 110.0)],
            &[Metric::Rps],
        );
        let plain = text(&cmp, false);
        assert!(!plain.contains('\x1b'));
        let coloured = text(&cmp, true);
        assert!(coloured.contains("\x1b[31m-10.00% worse"), "{coloured:?}");
        assert!(coloured.contains("\x1b[32m+10.00% better"), "{coloured:?}");
        assert_eq!(
            coloured.matches("\x1b[0m").count(),
            2,
            "values are not coloured"
        );
        // Colour codes do not disturb the alignment: stripped, it is the plain text.
        assert_eq!(
            coloured
                .replace("\x1b[31m", "")
                .replace("\x1b[32m", "")
                .replace("\x1b[0m", ""),
            plain
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
            "\"SET:GET 1:10 / GET\",\"p99\",\"ms\",\"0.100\",\"0.150\",\"50.00\",\"worse\""
        ));
        let doc: Value = serde_json::from_str(&json(&cmp, &[vec![], vec![]])).unwrap();
        assert_eq!(doc["tests"][0]["mix_of"], Value::Null);
        assert_eq!(
            doc["tests"][2]["mix_of"],
            json!({"test": "SET:GET 1:10", "command": "GET"})
        );
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(q("MSET (10 \"keys\")"), "\"MSET (10 \"\"keys\"\")\"");
    }
}
