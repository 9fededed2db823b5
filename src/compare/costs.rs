//! What a connection and a key cost the server, side by side: the connection storms'
//! (`--connect-storm`) connects per second and stage latencies, and the memory per key of the
//! tests that measured it (`--fill`, `--memory-per-key`), beside the speed table; and what the
//! delivery tests (`--pubsub`, `--stream`) delivered, lost and duplicated, which a latency
//! column cannot say (a side that lost half its messages can look fast); and what memtier's
//! `--data-verify` found. `compare` prints these
//! tables after its own (text and Markdown); the HTML report draws them as tables. Respbench
//! records only.

use crate::record::block::{self, Side, Tree};

use super::input::Input;

/// One table: its title, column heads and rows of cells (a mode's block draws its own).
pub use crate::record::block::Table;

/// The tables some side has figures for, in this order: the modes' run-wide blocks' (the
/// storm's: its speed, its failures by stage and kind, the client's limits, the server's side),
/// the tests' (memory per key, message delivery), client-side caching invalidations.
pub fn tables(inputs: &[Input]) -> Vec<Table> {
    let mut out = block_tables(inputs, block::RUN);
    out.extend(block_tables(inputs, block::TEST));
    out.extend(invalidations_table(inputs));
    out.extend(verify_table(inputs));
    out
}

/// The modes' blocks' tables (the run's blocks' for [`block::RUN`], the tests' for
/// [`block::TEST`]), by their kind (`record::block`), from every side that has one.
fn block_tables(inputs: &[Input], at: u8) -> Vec<Table> {
    let mut out = Vec::new();
    for kind in block::kinds().iter().filter(|k| k.at == at) {
        let sides = match at == block::RUN {
            true => run_sides(inputs, kind.key),
            false => test_sides(inputs, kind.key),
        };
        if !sides.is_empty() {
            out.extend(kind.tables(&sides));
        }
    }
    out
}

/// Each side's run-wide block `key`: a row per run, named by the side's label, with `#k` after
/// it when the side is several runs.
fn run_sides<'a>(inputs: &'a [Input], key: &str) -> Vec<(Side, &'a Tree)> {
    let mut sides = Vec::new();
    for (index, i) in inputs.iter().enumerate() {
        let trees: Vec<&Tree> = i.costs.runs.iter().filter_map(|b| b.tree(key)).collect();
        let several = trees.len() > 1;
        for (k, tree) in trees.into_iter().enumerate() {
            let label = match several {
                true => format!("{} #{}", i.label, k + 1),
                false => i.label.clone(),
            };
            let test = String::new();
            sides.push((Side { label, test, index }, tree));
        }
    }
    sides
}

/// Each side's tests' block `key`, by test name.
fn test_sides<'a>(inputs: &'a [Input], key: &str) -> Vec<(Side, &'a Tree)> {
    let mut sides = Vec::new();
    for (index, i) in inputs.iter().enumerate() {
        for (test, blocks) in &i.costs.tests {
            if let Some(tree) = blocks.tree(key) {
                let (label, test) = (i.label.clone(), test.clone());
                sides.push((Side { label, test, index }, tree));
            }
        }
    }
    sides
}

/// memtier's `--data-verify`/`--verify-only`: what reading the written keys back found, a row
/// per side and run (a `--verify-only` run has nothing else to show).
fn verify_table(inputs: &[Input]) -> Option<Table> {
    let mut rows = Vec::new();
    for input in inputs {
        let several = input.costs.verify.len() > 1;
        for (k, v) in input.costs.verify.iter().enumerate() {
            let side = match several {
                true => format!("{} #{}", input.label, k + 1),
                false => input.label.clone(),
            };
            rows.push(vec![
                side,
                v.keys.to_string(),
                v.verified.to_string(),
                v.missing.to_string(),
                v.mismatched.to_string(),
                (v.missing + v.mismatched).to_string(),
            ]);
        }
    }
    (!rows.is_empty()).then(|| Table {
        title: "Data verification",
        note: "respbench memtier --data-verify / --verify-only: the keys written read back and \
               compared with the imported file's values (memtier's \"keys failed\" = missing + \
               mismatched)",
        head: vec![
            "side",
            "keys read",
            "verified",
            "missing",
            "mismatched",
            "failed",
        ],
        rows,
    })
}

/// A row per test and side that received client-side caching invalidations
/// (`--enable-tracking`): how many, per second on average and in the busiest second, beside
/// the side's `--key-drift` (a moving hot spot is what makes them churn). Repetitions add up.
fn invalidations_table(inputs: &[Input]) -> Option<Table> {
    let mut rows = Vec::new();
    for input in inputs {
        let drift = input
            .facts
            .iter()
            .find(|f| f.0 == "--key-drift")
            .map_or("-".to_string(), |f| f.1.clone());
        for test in &input.tests {
            let seconds: Vec<_> = test
                .samples
                .iter()
                .filter_map(|s| s.detail.as_ref())
                .flat_map(|d| &d.timeline)
                .collect();
            let total: u64 = seconds.iter().map(|r| r.invalidations).sum();
            if total == 0 {
                continue;
            }
            let span: f64 = seconds.iter().map(|r| r.span).sum();
            let peak = seconds
                .iter()
                .map(|r| r.invalidations as f64 / r.span)
                .fold(0.0, f64::max);
            rows.push(vec![
                test.name.clone(),
                input.label.clone(),
                drift.clone(),
                total.to_string(),
                format!("{:.1}", total as f64 / span),
                format!("{peak:.1}"),
            ]);
        }
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a[0].cmp(&b[0]));
    Some(Table {
        title: "Invalidations",
        note: "client-side caching (--enable-tracking): invalidation messages received, summed \
               over the repetitions",
        head: vec![
            "test",
            "side",
            "--key-drift",
            "invalidations",
            "per second",
            "busiest second",
        ],
        rows,
    })
}

/// The tables as aligned text (empty without any).
pub fn text(inputs: &[Input]) -> String {
    let mut s = String::new();
    for t in tables(inputs) {
        let widths: Vec<usize> = (0..t.head.len())
            .map(|c| {
                t.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([t.head[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        s.push_str(&format!("\n{} ({})\n", t.title, t.note));
        let line = |cells: Vec<&str>| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("  {}\n", padded.join("  ").trim_end())
        };
        s.push_str(&line(t.head.clone()));
        for r in &t.rows {
            s.push_str(&line(r.iter().map(String::as_str).collect()));
        }
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::compare::input::{Detail, Format, Sample, Test};
    use crate::record::block::Blocks;

    /// A side whose test ran `reps` delivery tests (owed, delivered, one dropped by the
    /// server): their blocks as the record holds them, by key (`compare` does not name the mode).
    fn side(label: &str, reps: &[(u64, u64, bool)]) -> Input {
        let blocks: Vec<Blocks<{ block::TEST }>> = reps
            .iter()
            .map(|&(expected, delivered, dropped)| {
                let mut b = Blocks::default();
                let delivery = serde_json::json!({
                    "mode": "pubsub", "receivers": 10, "expected": expected,
                    "delivered": delivered, "lost": expected - delivered,
                    "disconnects": [{ "by_server": dropped }],
                });
                b.set("delivery", &delivery);
                b
            })
            .collect();
        let samples = blocks
            .iter()
            .map(|b| Sample {
                detail: Some(Box::new(Detail {
                    blocks: b.clone(),
                    ..Detail::default()
                })),
                ..Sample::default()
            })
            .collect();
        let name = "PUBLISH -> SUBSCRIBE";
        let mut input = crate::compare::fixtures::input(
            label,
            Format::Respbench,
            vec![Test {
                name: name.into(),
                samples,
            }],
        );
        input.costs.tests = blocks
            .into_iter()
            .take(1)
            .map(|b| (name.into(), b))
            .collect();
        input
    }

    /// A delivery test refuses `--repeat`: a side's row is its test's (the first repetition's,
    /// in a record that has more).
    #[test]
    fn delivery_counts_are_a_table_per_side() {
        let a = side("valkey", &[(100, 100, false), (100, 100, false)]);
        let b = side("redis", &[(100, 60, true), (100, 100, false)]);
        let text = text(&[a, b]);
        assert!(text.contains("Message delivery ("), "{text}");
        let row = |side: &str| {
            text.lines()
                .find(|l| l.contains(side))
                .unwrap_or_else(|| panic!("no {side} row: {text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            row("valkey"),
            "PUBLISH -> SUBSCRIBE valkey pubsub 10 100 100 0 0 - 0"
        );
        assert_eq!(
            row("redis"),
            "PUBLISH -> SUBSCRIBE redis pubsub 10 100 60 40 0 - 1"
        );
    }

    /// The table titled `title` in `text`, its rows' cells split on whitespace.
    pub(crate) fn table(text: &str, title: &str) -> Vec<Vec<String>> {
        let at = text
            .find(&format!("\n{title} ("))
            .unwrap_or_else(|| panic!("no {title}: {text}"));
        text[at + 1..]
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with("  "))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn invalidations_are_a_table_with_the_sides_drift() {
        use crate::compare::input::SecondRow;
        let side = |label: &str, drift: &str, per_second: &[u64]| {
            let timeline = per_second
                .iter()
                .enumerate()
                .map(|(i, &n)| SecondRow {
                    second: i as f64,
                    span: if i + 1 == per_second.len() { 0.5 } else { 1.0 },
                    invalidations: n,
                    ..SecondRow::default()
                })
                .collect();
            let sample = Sample {
                detail: Some(Box::new(Detail {
                    timeline,
                    ..Detail::default()
                })),
                ..Sample::default()
            };
            Input {
                facts: vec![("--key-drift", drift.into())],
                ..crate::compare::fixtures::input(
                    label,
                    Format::Respbench,
                    vec![Test {
                        name: "GET".into(),
                        samples: vec![sample],
                    }],
                )
            }
        };
        let text = text(&[
            side("still", "none", &[0, 0, 0]),
            side("moving", "hot:10:1", &[100, 300, 50]),
        ]);
        let rows = table(&text, "Invalidations");
        // The side that received none has no row; 450 over 2.5 s, the busiest 50 in half a second
        // is 100/s, below the 300 of the second before.
        assert_eq!(
            rows,
            [["GET", "moving", "hot:10:1", "450", "180.0", "300.0"]],
            "{text}"
        );
        let none = text_of_no_invalidations();
        assert!(!none.contains("Invalidations"), "{none}");
    }

    fn text_of_no_invalidations() -> String {
        let mut a = side("x", &[(10, 10, false)]);
        a.facts.push(("--key-drift", "none".into()));
        text(&[a])
    }

    #[test]
    fn no_delivery_test_no_table() {
        let mut a = side("x", &[]);
        a.tests[0].samples.push(Sample::default());
        assert!(!text(&[a]).contains("Message delivery"));
    }
}
