//! Golden tests: deterministic results rendered in every mode and compared byte for byte with
//! `src/report/golden/*`. Run with `REGENERATE_GOLDEN=1` to rewrite the files after an intended
//! change (then review the diff).

use std::path::PathBuf;
use std::time::Duration;

use crate::metrics::{ErrorCounts, LatencyHistogram, Outcome, PushCounts, Signal, TestResult};

use super::{ReportContext, write_csv_header, write_csv_row, write_full, write_quiet};

/// A fixed 64-bit LCG (Knuth's MMIX constants): integer-only, so the data is the same everywhere.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// A plausible latency shape: a 180–480 µs body, a skewed shoulder up to +0.8 ms and a 1% tail
/// up to +4.5 ms.
fn typical_latencies(n: u64, seed: u64, scale_percent: u64) -> LatencyHistogram {
    let mut rng = Lcg(seed);
    let mut h = LatencyHistogram::new();
    for _ in 0..n {
        let a = rng.next() % 1000;
        let b = rng.next() % 1000;
        let c = rng.next() % 1000;
        let mut v = 180_000 + a * 300 + b * b * b / 1_000_000 * 800;
        if c < 10 {
            v += c * 500_000;
        }
        h.record(v * scale_percent / 100);
    }
    h
}

fn base_result(title: &str, latency: LatencyHistogram, completed: u64, millis: u64) -> TestResult {
    TestResult {
        title: title.into(),
        completed,
        elapsed: Duration::from_millis(millis),
        latency_uncorrected: latency.clone(),
        latency,
        errors: ErrorCounts::default(),
        pushes: PushCounts::default(),
        cluster: None,
        target_rps: None,
        rps_samples: Vec::new(),
        outcome: Outcome::Completed,
        ..TestResult::empty(title, None, Outcome::Completed)
    }
}

fn ctx(precision: usize) -> ReportContext {
    ReportContext {
        clients: 50,
        payload_bytes: 3,
        keepalive: 1,
        server_save: Some("3600 1 300 100 60 10000".into()),
        server_appendonly: Some("no".into()),
        threads: None,
        precision,
        cluster: None,
        tracking: false,
        operations: Default::default(),
    }
}

/// Every scenario: (golden name, context, result).
fn scenarios() -> Vec<(&'static str, ReportContext, TestResult)> {
    let set = base_result("SET", typical_latencies(100_000, 1, 100), 100_000, 2_090);

    let mut errors = base_result("SET", typical_latencies(12_345, 2, 150), 12_345, 730);
    for _ in 0..480 {
        errors.errors.record(b"WRONGTYPE Operation against a key");
    }
    for _ in 0..20 {
        errors.errors.record(b"ERR unknown");
    }
    errors.pushes = PushCounts {
        invalidations: 7,
        messages: 3,
        other: 1,
    };
    errors.outcome = Outcome::Interrupted(Signal::Interrupt);
    // Measured from the actual send the latencies look 40% lower: the corrected figures include
    // the time requests waited behind a stalled server.
    errors.latency_uncorrected = typical_latencies(12_345, 2, 90);
    let errors_ctx = ReportContext {
        server_save: None,
        server_appendonly: None,
        threads: Some(4),
        ..ctx(3)
    };

    let mut rps = base_result("GET", typical_latencies(27_000, 3, 100), 27_000, 3_000);
    rps.target_rps = Some(10_000);
    rps.rps_samples = vec![
        40.0, 8_920.0, 9_100.0, 9_012.0, 8_876.0, 9_204.0, 9_088.0, 8_990.0, 9_132.0, 9_060.0,
        9_016.0, 8_944.0,
    ];

    let mut quote = base_result(
        "set \"foo bar\" baz",
        typical_latencies(5_000, 4, 100),
        5_000,
        120,
    );
    quote.latency_uncorrected = LatencyHistogram::new();

    let mut empty = base_result("LPUSH", LatencyHistogram::new(), 0, 0);
    empty.outcome = Outcome::Interrupted(Signal::Interrupt);

    let mut aborted = base_result("INCR", typical_latencies(3, 5, 100), 3, 1);
    aborted.outcome = Outcome::Aborted;
    aborted.errors.record(b"NOAUTH Authentication required.");

    vec![
        ("set", ctx(3), set.clone()),
        ("set_precision0", ctx(0), set.clone()),
        ("set_precision5", ctx(5), set),
        ("errors_interrupted", errors_ctx, errors),
        ("rps_target", ctx(3), rps),
        ("custom_quote", ctx(3), quote),
        ("empty", ctx(3), empty),
        ("aborted_tiny", ctx(3), aborted),
    ]
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/report/golden")
        .join(name)
}

/// Compares `actual` with the golden file `name`, or rewrites it under `REGENERATE_GOLDEN=1`.
fn check_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var_os("REGENERATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (run with REGENERATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from the golden file at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
             --- actual output ---\n{actual}",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line),
        );
    }
}

fn render_full(ctx: &ReportContext, r: &TestResult) -> String {
    let mut v = Vec::new();
    write_full(&mut v, ctx, r).unwrap();
    String::from_utf8(v).unwrap()
}

#[test]
fn golden_full_reports() {
    for (name, ctx, r) in scenarios() {
        check_golden(&format!("{name}.full.txt"), &render_full(&ctx, &r));
    }
}

#[test]
fn golden_quiet_lines() {
    let mut v = Vec::new();
    for (_, ctx, r) in scenarios() {
        write_quiet(&mut v, &ctx, &r).unwrap();
    }
    check_golden("quiet.txt", &String::from_utf8(v).unwrap());
}

#[test]
fn golden_csv() {
    let mut v = Vec::new();
    write_csv_header(&mut v).unwrap();
    for (_, ctx, r) in scenarios() {
        write_csv_row(&mut v, &ctx, &r).unwrap();
    }
    check_golden("csv.txt", &String::from_utf8(v).unwrap());
}

/// Structural checks that hold independently of the golden files, so a wrong regeneration is
/// caught too.
#[test]
fn full_report_structure() {
    for (name, ctx, r) in scenarios() {
        let s = render_full(&ctx, &r);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], format!("====== {} ======", r.title), "{name}");
        let pct = lines
            .iter()
            .position(|l| *l == "Latency by percentile distribution:")
            .unwrap();
        let cum = lines
            .iter()
            .position(|l| *l == "Cumulative distribution of latencies:")
            .unwrap();
        let sum = lines.iter().position(|l| *l == "Summary:").unwrap();
        assert!(pct < cum && cum < sum, "{name}");
        assert_eq!(lines[pct - 1], "", "{name}");
        assert_eq!(lines[cum - 1], "", "{name}");
        assert_eq!(lines[sum - 1], "", "{name}");
        let total = r.latency.len();
        for section in [&lines[pct + 1..cum - 1], &lines[cum + 1..sum - 1]] {
            if total == 0 {
                assert!(section.is_empty(), "{name}");
                continue;
            }
            let last = section.last().unwrap();
            assert!(last.starts_with("100.000% <= "), "{name}: {last}");
            assert!(
                last.ends_with(&format!("(cumulative count {total})")),
                "{name}: {last}"
            );
        }
        assert!(
            lines[sum + 1].starts_with("  throughput summary: "),
            "{name}"
        );
        if r.completed == 0 {
            assert_eq!(
                lines[sum + 2],
                "  no request completed: no latency figures",
                "{name}"
            );
            assert_eq!(lines.len(), sum + 3, "{name}");
            continue;
        }
        assert_eq!(lines[sum + 2], "  latency summary (msec):", "{name}");
        assert_eq!(
            lines[sum + 3],
            "          avg       min       p50       p95       p99       max",
            "{name}"
        );
        assert!(s.ends_with('\n'));
    }
}

#[test]
fn set_report_header_is_reference_compatible() {
    let (_, ctx, r) = scenarios().remove(0);
    let s = render_full(&ctx, &r);
    assert!(s.starts_with(
        "====== SET ======\n  100000 requests completed in 2.09 seconds\n  50 parallel clients\n  \
         3 bytes payload\n  keep alive: 1\n  host configuration \"save\": 3600 1 300 100 60 10000\n  \
         host configuration \"appendonly\": no\n  multi-thread: no\n\nLatency by percentile \
         distribution:\n0.000% <= "
    ));
    assert!(s.contains("\nSummary:\n  throughput summary: 47846.89 requests per second\n"));
    // No additions without something to say.
    for absent in [
        "interrupted",
        "aborted",
        "error replies",
        "push messages",
        "invalidation",
        "RPS",
        "uncorrected",
    ] {
        assert!(!s.contains(absent), "{absent}");
    }
}

#[test]
fn additions_appear_between_threads_and_percentiles() {
    let (_, ctx, r) = scenarios().remove(3);
    let s = render_full(&ctx, &r);
    assert!(s.contains(
        "  multi-thread: yes\n  threads: 4\n  interrupted: yes (partial results: measured until \
         Ctrl-C)\n  error replies: 500 (not counted as completed)\n    WRONGTYPE: 480\n    \
         ERR: 20\n  invalidation messages: 7\n  pub/sub messages: 3\n  other push messages: 1\n\n\
         Latency by percentile distribution:\n"
    ));
    assert!(s.contains("  latency summary, uncorrected (from actual send, msec):\n"));
}

#[test]
fn rps_summary_placement_and_shortfall() {
    let (_, ctx, mut r) = scenarios().remove(4);
    let s = render_full(&ctx, &r);
    assert!(s.contains(
        "  multi-thread: no\n\nRPS Summary:\n  target RPS: 10000.00\n  RPS distribution \
         (reqs/sec):\n          avg       min       p50       p95       p99       max\n"
    ));
    assert!(s.contains(
        "  target RPS not reached: achieved 9000.00 requests per second (90.0% of target)\n\n\
         Latency by percentile distribution:\n"
    ));
    // Reached (>= 95%): no shortfall line, but still the summary.
    r.completed = 28_500;
    let s = render_full(&ctx, &r);
    assert!(s.contains("RPS Summary:"));
    assert!(!s.contains("not reached"));
}
