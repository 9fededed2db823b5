//! The end of a multi-test full report: one line per test, so a run of the default suite (75
//! lines a test) ends with its answer rather than with its last test's distribution. Read from the
//! run's record, so it says what the record says: throughput, p50/p99/p99.9, error replies and
//! requests lost without a reply apart, the verdict as judged, and the outages.

use std::fmt::Write as _;

use crate::record::document::{Document, TestRecord};

/// `SET (repetition 2 of 3)` for a repetition of a `--repeat` run (`of`: the repetitions the
/// run had or planned), else the name: a repeated test's lines (this summary, the stderr
/// warnings) are told apart.
pub fn titled(name: &str, repetition: Option<u32>, of: u32) -> String {
    match repetition {
        Some(k) if of > 1 => format!("{name} (repetition {k} of {of})"),
        _ => name.to_string(),
    }
}

/// Requests lost without a reply over the test (the record's `failed` counts them too).
fn lost(t: &TestRecord) -> u64 {
    t.timeline.iter().flat_map(|r| r.lost.values()).sum()
}

/// The summary of `doc`'s tests; empty for a run of fewer than two tests (its own report is the
/// summary).
pub fn run_summary(doc: &Document, precision: usize) -> String {
    if doc.tests.len() < 2 {
        return String::new();
    }
    // Each repetition as many as the record holds of its test (the run ends after a failed
    // one, so they are the ones it had).
    let of = |t: &TestRecord| {
        (doc.tests.iter())
            .filter(|x| x.name == t.name)
            .filter_map(|x| x.repetition)
            .max()
            .unwrap_or(1)
    };
    let width = doc
        .tests
        .iter()
        .map(|t| titled(&t.name, t.repetition, of(t)).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40);
    // A long name is cut, its repetition never.
    let names: Vec<String> = doc
        .tests
        .iter()
        .map(|t| {
            let suffix = titled("", t.repetition, of(t));
            let room = width.saturating_sub(suffix.chars().count()).max(4);
            let name: String = t.name.chars().take(room).collect();
            name + &suffix
        })
        .collect();
    let p = precision;
    let mut s = format!(
        "\nRun summary ({} tests; latencies in ms):\n",
        doc.tests.len()
    );
    let _ = writeln!(
        s,
        "  {:<width$} {:>12} {:>9} {:>9} {:>9} {:>8} {:>6}  {:<13} outages",
        "test", "rps", "p50", "p99", "p99.9", "errors", "lost", "limited by"
    );
    for (t, name) in doc.tests.iter().zip(&names) {
        let l = &t.latency_us.corrected;
        let lost = lost(t);
        let outages = if t.outages.is_empty() {
            "none".to_string()
        } else {
            let total: f64 = t.outages.iter().map(|o| o.duration_s).sum();
            format!("{} ({total:.1} s)", t.outages.len())
        };
        let _ = writeln!(
            s,
            "  {name:<width$} {:>12.2} {:>9.p$} {:>9.p$} {:>9.p$} {:>8} {:>6}  {:<13} {outages}",
            t.throughput_rps,
            l.p50 / 1000.0,
            l.p99 / 1000.0,
            l.p99_9 / 1000.0,
            t.requests.failed.saturating_sub(lost),
            lost,
            t.verdict.kind.name(),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::timeline::{OutageRecord, TimelineRow};

    fn test(name: &str, failed: u64, lost: u64) -> TestRecord {
        let mut t = TestRecord {
            name: name.into(),
            throughput_rps: 1234.5,
            ..TestRecord::default()
        };
        t.latency_us.corrected.p50 = 100.0;
        t.latency_us.corrected.p99 = 2000.0;
        t.latency_us.corrected.p99_9 = 3500.0;
        t.requests.failed = failed;
        let mut row = TimelineRow::default();
        if lost > 0 {
            row.lost.insert("connection reset".into(), lost);
        }
        t.timeline.push(row);
        t
    }

    #[test]
    fn one_line_per_test_with_lost_apart_from_error_replies() {
        let mut doc = Document::default();
        doc.tests.push(test("SET", 0, 0));
        assert_eq!(
            run_summary(&doc, 3),
            "",
            "one test: its report is the summary"
        );
        let mut failover = test("GET", 52, 50);
        failover.outages.push(OutageRecord {
            start_s: 5.0,
            end_s: 8.0,
            duration_s: 3.0,
            ..OutageRecord::default()
        });
        doc.tests.push(failover);
        let s = run_summary(&doc, 3);
        assert!(
            s.starts_with("\nRun summary (2 tests; latencies in ms):\n"),
            "{s}"
        );
        let get = s.lines().find(|l| l.starts_with("  GET")).unwrap();
        let cells: Vec<&str> = get.split_whitespace().collect();
        assert_eq!(
            cells[1..8],
            ["1234.50", "0.100", "2.000", "3.500", "2", "50", "unknown"]
        );
        assert!(get.ends_with("1 (3.0 s)"), "{get}");
        assert!(
            s.lines()
                .any(|l| l.starts_with("  SET") && l.ends_with("none"))
        );
    }

    #[test]
    fn repetitions_are_numbered() {
        // The trial's `--repeat 3 -t set,get`: "SET" three times, nothing to tell them apart.
        let mut doc = Document::default();
        for name in ["SET", "LRANGE_600 (first 600 elements) of a long name"] {
            for k in 1..=3 {
                let mut t = test(name, 0, 0);
                t.repetition = Some(k);
                doc.tests.push(t);
            }
        }
        let s = run_summary(&doc, 3);
        let names: Vec<&str> = s
            .lines()
            .skip(3)
            .map(|l| l[2..].split("  ").next().unwrap().trim_end())
            .collect();
        assert_eq!(
            names[..3],
            [
                "SET (repetition 1 of 3)",
                "SET (repetition 2 of 3)",
                "SET (repetition 3 of 3)"
            ],
            "{s}"
        );
        assert!(
            names[5].starts_with("LRANGE_600") && names[5].ends_with(" (repetition 3 of 3)"),
            "a long name is cut, its repetition kept: {s}"
        );
        assert_eq!(titled("SET", None, 3), "SET");
        assert_eq!(
            titled("SET", Some(1), 1),
            "SET",
            "--repeat 1 is no repetition"
        );
    }
}
