//! Records for the unit tests of `compare` and its HTML report.

use super::input::{FileRun, Format, Input, Sample, Test, input_of, parse};

/// A respbench record of one mix test `name` whose commands are `commands` (`(name, completed,
/// p99 µs)`, each with a p99.9 of 1.5 × its p99); the test's own figures are the last command's.
pub fn mix_record(name: &str, rps: f64, commands: &[(&str, u64, f64)]) -> FileRun {
    let summary = |count: u64, p99: f64| {
        serde_json::json!({"count": count, "avg": p99 / 2.0, "min": 10.0, "p50": p99 / 2.0,
            "p90": p99 * 0.9, "p95": p99 * 0.95, "p99": p99, "p99_9": p99 * 1.5,
            "p99_99": p99 * 2.0, "max": p99 * 3.0})
    };
    let total: u64 = commands.iter().map(|c| c.1).sum();
    let mix: Vec<_> = commands
        .iter()
        .map(|&(cmd, completed, p99)| {
            serde_json::json!({"name": cmd, "completed": completed, "failed": 0,
                "throughput_rps": rps * completed as f64 / total as f64,
                "latency_us": summary(completed, p99), "histogram": ""})
        })
        .collect();
    let last_p99 = commands.last().map_or(0.0, |c| c.2);
    let doc = serde_json::json!({
        "schema": "respbench/1",
        "tests": [{"name": name, "throughput_rps": rps,
            "latency_us": {"corrected": summary(total, last_p99)},
            "requests": {"completed": total, "failed": 0},
            "mix": mix}]
    });
    parse(&doc.to_string()).unwrap()
}

/// One side labelled `label` from one run.
pub fn side(label: &str, run: FileRun) -> Input {
    input_of(label.into(), vec![format!("{label}.json")], vec![run]).unwrap()
}

/// A side labelled `label` of `format` with `tests` and nothing else (no files, server, facts,
/// search, problems or costs): what most unit tests of a comparison start from.
pub fn input(label: &str, format: Format, tests: Vec<Test>) -> Input {
    Input {
        label: label.into(),
        files: vec![],
        format,
        server: None,
        facts: vec![],
        tests,
        find_max: None,
        problems: vec![],
        costs: Default::default(),
    }
}

/// Tests named as in `tests`, a sample per throughput listed, each made by `sample`.
pub fn tests_of(tests: &[(&str, &[f64])], sample: impl Fn(f64) -> Sample) -> Vec<Test> {
    tests
        .iter()
        .map(|(name, rps)| Test {
            name: name.to_string(),
            samples: rps.iter().map(|&r| sample(r)).collect(),
        })
        .collect()
}
