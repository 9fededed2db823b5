//! respbench's own record (`respbench/1`, see `src/record/document.rs`), read back.
//!
//! A reading model rather than the writer's types: it names only the fields compare and the
//! report use and ignores the rest, so a record from a newer respbench/1 with added fields still
//! reads. Headline latencies are the corrected ones, the figures respbench's report and `--csv`
//! print. Repetitions (`--repeat`) are test entries with the same name, optionally carrying a
//! `repetition` index; they are kept in file order.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::spectrum;
use super::{
    Curve, CurvePoint, Detail, FileRun, Format, MixCommand, Sample, SecondRow, ServerPoint,
    ServerSeries,
};

/// The schema this respbench reads.
const SCHEMA: &str = "respbench/1";

#[derive(Deserialize)]
struct Doc {
    /// `completed`, `interrupted` or `failed` (with `error`); absent in records built outside
    /// a run.
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    servers: Vec<Server>,
    tests: Vec<TestRec>,
    #[serde(default)]
    find_max: Option<FindMax>,
}

#[derive(Deserialize)]
struct FindMax {
    slo: String,
    answer_rps: Option<f64>,
    steps: Vec<FindMaxStep>,
}

#[derive(Deserialize)]
struct FindMaxStep {
    achieved_rps: f64,
    p50_us: f64,
    p99_us: f64,
    met: bool,
}

#[derive(Deserialize)]
struct Server {
    identity: Option<Identity>,
}

#[derive(Deserialize)]
struct Identity {
    name: String,
    version: String,
}

#[derive(Deserialize)]
struct TestRec {
    name: String,
    /// The measured time; the timeline's last second covers what is left of it.
    #[serde(default)]
    duration_s: Option<f64>,
    /// `completed`, `interrupted` or `aborted`.
    #[serde(default)]
    outcome: Option<String>,
    throughput_rps: f64,
    latency_us: LatencyPair,
    #[serde(default)]
    requests: Option<Requests>,
    #[serde(default)]
    histograms: Option<Histograms>,
    #[serde(default)]
    timeline: Vec<Row>,
    #[serde(default)]
    server: Vec<ServerTest>,
    #[serde(default)]
    mix: Vec<MixRec>,
}

/// One command of a mix (`tests[].mix[]`).
#[derive(Deserialize)]
struct MixRec {
    name: String,
    completed: u64,
    failed: u64,
    throughput_rps: f64,
    latency_us: Summary,
}

#[derive(Deserialize)]
struct LatencyPair {
    corrected: Summary,
}

#[derive(Deserialize)]
struct Summary {
    count: u64,
    avg: f64,
    min: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    /// Older records' mixes may lack it; the HTML table shows `-` then.
    #[serde(default)]
    p99_9: Option<f64>,
    max: f64,
}

#[derive(Deserialize)]
struct Requests {
    #[serde(default)]
    failed: u64,
    #[serde(default)]
    redirects: Option<BTreeMap<String, u64>>,
}

#[derive(Deserialize)]
struct Histograms {
    corrected: String,
    uncorrected: String,
}

#[derive(Deserialize)]
struct Row {
    second: f64,
    completed: u64,
    failed: u64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
}

#[derive(Deserialize)]
struct ServerTest {
    address: String,
    #[serde(default)]
    seconds: Vec<Interval>,
}

#[derive(Deserialize)]
struct Interval {
    t: f64,
    cpu_pct: f64,
    main_thread_cpu_pct: Option<f64>,
    used_memory: u64,
    used_memory_rss: u64,
}

/// Reads a document whose `schema` is `schema`, redacted again (a record written before a
/// spelling was redacted must not show its password in a comparison either).
pub fn read(mut value: Value, schema: &str) -> Result<FileRun, String> {
    if schema != SCHEMA {
        return Err(if schema.starts_with("respbench/") {
            format!("a {schema} record; this respbench reads {SCHEMA}")
        } else {
            format!("unknown schema \"{schema}\"; expected \"{SCHEMA}\"")
        });
    }
    crate::redact::record(&mut value);
    let doc: Doc =
        serde_json::from_value(value).map_err(|e| format!("not a valid {SCHEMA} record: {e}"))?;
    let problems = problems(&doc);
    let server = doc
        .servers
        .iter()
        .find_map(|s| s.identity.as_ref())
        .map(|i| format!("{} {}", i.name, i.version));
    let tests = doc
        .tests
        .into_iter()
        .map(|t| (t.name.clone(), sample(t)))
        .collect();
    let find_max = doc.find_max.map(|f| Curve {
        slo: f.slo,
        answer_rps: f.answer_rps,
        points: f
            .steps
            .iter()
            .map(|s| CurvePoint {
                achieved_rps: s.achieved_rps,
                p50_us: s.p50_us,
                p99_us: s.p99_us,
                met: s.met,
            })
            .collect(),
    });
    Ok(FileRun {
        format: Format::Respbench,
        server,
        tests,
        find_max,
        problems,
    })
}

/// What makes the record less than a whole run: the run's outcome (failed, interrupted) and
/// each test that did not complete (its figures are partial).
fn problems(doc: &Doc) -> Vec<String> {
    let mut out = Vec::new();
    match (doc.outcome.as_deref(), &doc.error) {
        (None | Some("completed"), _) => {}
        (Some(o), Some(e)) => out.push(format!("the run {o}: {e}")),
        (Some(o), None) => out.push(format!("the run was {o}")),
    }
    for t in &doc.tests {
        if let Some(o) = t.outcome.as_deref().filter(|o| *o != "completed") {
            out.push(format!("test {} was {o} (partial figures)", t.name));
        }
    }
    if out.is_empty() && doc.tests.is_empty() && doc.find_max.is_none() {
        out.push("no test in the record".to_string());
    }
    out
}

/// The headline figures of `l` (none when it counted nothing: the record writes 0s).
fn figures(rps: f64, l: &Summary) -> Sample {
    let fig = |v: f64| (l.count > 0).then_some(v);
    Sample {
        rps,
        avg: fig(l.avg),
        min: fig(l.min),
        p50: fig(l.p50),
        p95: fig(l.p95),
        p99: fig(l.p99),
        max: fig(l.max),
        detail: None,
        mix: Vec::new(),
    }
}

fn sample(t: TestRec) -> Sample {
    let hist = |text: Option<&String>| {
        text.and_then(|s| spectrum::decode(s))
            .map(|h| spectrum::points(&h, 0.001))
            .unwrap_or_default()
    };
    let detail = Detail {
        timeline: t
            .timeline
            .iter()
            .map(|r| SecondRow {
                second: r.second,
                span: t
                    .duration_s
                    .map_or(1.0, |d| (d - r.second).clamp(0.01, 1.0)),
                completed: r.completed,
                failed: r.failed,
                p50: r.p50_us,
                p99: r.p99_us,
                max: r.max_us,
            })
            .collect(),
        spectrum_corrected: hist(t.histograms.as_ref().map(|h| &h.corrected)),
        spectrum_uncorrected: hist(t.histograms.as_ref().map(|h| &h.uncorrected)),
        errors: t.requests.as_ref().map_or(0, |r| r.failed),
        redirects: t
            .requests
            .and_then(|r| r.redirects)
            .unwrap_or_default()
            .into_iter()
            .collect(),
        servers: t
            .server
            .into_iter()
            .map(|s| ServerSeries {
                address: s.address,
                points: s
                    .seconds
                    .iter()
                    .map(|i| ServerPoint {
                        t: i.t,
                        cpu_pct: i.cpu_pct,
                        main_thread_cpu_pct: i.main_thread_cpu_pct,
                        used_memory: i.used_memory,
                        used_memory_rss: i.used_memory_rss,
                    })
                    .collect(),
            })
            .collect(),
    };
    let mix = t
        .mix
        .iter()
        .map(|m| MixCommand {
            name: m.name.clone(),
            completed: m.completed,
            failed: m.failed,
            figures: figures(m.throughput_rps, &m.latency_us),
            p99_9: m.latency_us.p99_9.filter(|_| m.latency_us.count > 0),
        })
        .collect();
    Sample {
        detail: Some(Box::new(detail)),
        mix,
        ..figures(t.throughput_rps, &t.latency_us.corrected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal(schema: &str) -> Value {
        serde_json::json!({
            "schema": schema,
            "servers": [{"identity": {"name": "valkey", "version": "9.1.2"}}],
            "tests": [
                {"name": "SET", "throughput_rps": 1000.5,
                 "latency_us": {"corrected": {"count": 10, "avg": 1.0, "min": 0.5, "p50": 1.0,
                   "p90": 1.5, "p95": 2.0, "p99": 3.0, "p99_9": 3.5, "p99_99": 4.0, "max": 4.0}},
                 "a_future_field": true},
                {"name": "SET", "repetition": 2, "throughput_rps": 1100.0,
                 "latency_us": {"corrected": {"count": 0, "avg": 0.0, "min": 0.0, "p50": 0.0,
                   "p90": 0.0, "p95": 0.0, "p99": 0.0, "p99_9": 0.0, "p99_99": 0.0, "max": 0.0}}}
            ]
        })
    }

    #[test]
    fn reads_the_headline_figures_and_keeps_repetitions() {
        let run = read(minimal(SCHEMA), SCHEMA).unwrap();
        assert_eq!(run.server.as_deref(), Some("valkey 9.1.2"));
        assert_eq!(run.tests.len(), 2);
        let s = &run.tests[0].1;
        assert_eq!((s.rps, s.p95, s.max), (1000.5, Some(2.0), Some(4.0)));
        assert_eq!(run.tests[1].1.p50, None, "nothing measured: no latency");
    }

    #[test]
    fn a_failed_run_and_a_cut_short_test_are_problems() {
        let mut doc = minimal(SCHEMA);
        assert!(read(doc.clone(), SCHEMA).unwrap().problems.is_empty());
        doc["outcome"] = "failed".into();
        doc["error"] = "WRONGPASS invalid username-password pair".into();
        doc["tests"][1]["outcome"] = "aborted".into();
        let p = read(doc.clone(), SCHEMA).unwrap().problems;
        assert_eq!(
            p,
            [
                "the run failed: WRONGPASS invalid username-password pair",
                "test SET was aborted (partial figures)"
            ]
        );
        doc["outcome"] = "completed".into();
        doc["tests"] = serde_json::json!([]);
        let p = read(doc, SCHEMA).unwrap().problems;
        assert_eq!(p, ["no test in the record"]);
    }

    #[test]
    fn the_last_cut_short_second_is_a_rate_over_its_span() {
        let mut doc = minimal(SCHEMA);
        doc["tests"][0]["duration_s"] = 1.25.into();
        doc["tests"][0]["timeline"] = serde_json::json!([
            {"second": 0, "completed": 40000, "failed": 0, "p50_us": 1.0, "p99_us": 2.0, "max_us": 3.0},
            {"second": 1, "completed": 10000, "failed": 0, "p50_us": 1.0, "p99_us": 2.0, "max_us": 3.0}
        ]);
        let run = read(doc, SCHEMA).unwrap();
        let rows = &run.tests[0].1.detail.as_ref().unwrap().timeline;
        assert_eq!((rows[0].span, rows[1].span), (1.0, 0.25));
    }

    #[test]
    fn other_schemas_are_named() {
        let e = read(minimal("respbench/2"), "respbench/2").unwrap_err();
        assert_eq!(e, "a respbench/2 record; this respbench reads respbench/1");
        let e = read(serde_json::json!({"schema": "x"}), "x").unwrap_err();
        assert!(e.starts_with("unknown schema \"x\""), "{e}");
        let e = read(serde_json::json!({"schema": SCHEMA}), SCHEMA).unwrap_err();
        assert!(e.contains("missing field `tests`"), "{e}");
    }
}
