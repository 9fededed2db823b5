//! respbench's own record (`respbench/1`), read back through the record's own types
//! (`record::document`), so this reader cannot drift from the writer; those types ignore unknown
//! fields and default missing ones, so older and newer respbench/1 records read. Headline
//! latencies are the corrected ones, the figures respbench's report and `--csv` print.
//! Repetitions (`--repeat`) are test entries with the same name, optionally carrying a
//! `repetition` index; they are kept in file order.

use serde_json::Value;

use crate::record::document::{Document, LatencySummary, SCHEMA, ServerTestRecord, TestRecord};
use crate::record::failover::SwitchRecord;

use super::spectrum;
use super::{
    Curve, CurvePoint, Detail, FileRun, Format, MixCommand, Sample, SecondRow, ServerPoint,
    ServerSeries,
};

/// Reads a document whose `schema` is `schema`.
pub fn read(value: Value, schema: &str) -> Result<FileRun, String> {
    if schema != SCHEMA {
        return Err(if schema.starts_with("respbench/") {
            format!("a {schema} record; this respbench reads {SCHEMA}")
        } else {
            format!("unknown schema \"{schema}\"; expected \"{SCHEMA}\"")
        });
    }
    from_document(Document::read(value)?)
}

/// Reads a record already in the record's types: one read back from a file (see [`read`]), or
/// the one a run has just built (`--html`), which needs no JSON tree in between.
pub fn from_document(mut doc: Document) -> Result<FileRun, String> {
    if doc.ab.is_some() {
        return Err(
            "an A/B record (respbench ab): give it alone to compare or report, which read its \
             paired answer"
                .into(),
        );
    }
    let facts = super::facts::of_record(&doc);
    let verdicts = super::facts::verdicts(&doc);
    let problems = problems(&doc);
    let costs = super::Costs {
        runs: Some(std::mem::take(&mut doc.blocks))
            .filter(|b| !b.is_empty())
            .into_iter()
            .collect(),
        verify: doc.verify.take().into_iter().collect(),
        tests: doc
            .tests
            .iter()
            .filter(|t| t.blocks.drawn())
            .map(|t| (t.name.clone(), t.blocks.clone()))
            .collect(),
    };
    let switches = doc
        .sentinel
        .as_ref()
        .map(|s| s.switches.clone())
        .unwrap_or_default();
    let server = doc
        .servers
        .iter()
        .find_map(|s| s.identity.as_ref())
        .map(|i| format!("{} {}", i.name, i.version));
    let tests = doc
        .tests
        .into_iter()
        .zip(verdicts.into_iter().chain(std::iter::repeat(None)))
        .map(|(t, limited_by)| {
            let name = t.name.clone();
            Ok((
                name,
                Sample {
                    limited_by,
                    ..sample(t, &switches)?
                },
            ))
        })
        .collect::<Result<_, String>>()?;
    let find_max = doc.find_max.map(|f| Curve {
        slo: f.slo,
        answer_rps: f.answer_rps,
        end: f.end.clone(),
        limit: f.limit.clone(),
        no_growth_rps: f.no_growth_rps,
        points: f
            .steps
            .iter()
            // A window without a reply has no latency to draw.
            .filter_map(|s| {
                Some(CurvePoint {
                    offered_rps: s.offered_rps,
                    achieved_rps: s.achieved_rps,
                    p50_us: s.p50_us?,
                    p99_us: s.p99_us?,
                    met: s.met,
                    saturated: s.saturated,
                })
            })
            .collect(),
    });
    Ok(FileRun {
        format: Format::Respbench,
        server,
        facts,
        tests,
        find_max,
        problems,
        costs,
    })
}

/// What makes the record less than a whole run: the run's outcome (failed, interrupted) and
/// each test that did not complete (its figures are partial).
fn problems(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    // An empty outcome: a record built outside a run, which has none.
    match (doc.outcome.as_str(), &doc.error) {
        ("" | "completed", _) => {}
        // A journal whose run holds its lock (`record::journal`).
        ("running", _) => out.push("the run is still going (read from its journal)".into()),
        (o, Some(e)) => out.push(format!("the run {o}: {e}")),
        (o, None) => out.push(format!("the run was {o}")),
    }
    // A merge with shards missing (`merge --partial`) covers part of the benchmark only.
    if let Some(m) = doc.merge.as_ref().filter(|m| !m.missing_shards.is_empty()) {
        let list: Vec<String> = m.missing_shards.iter().map(u64::to_string).collect();
        let of = doc.shards.first().and_then(|s| s.count);
        out.push(format!(
            "a partial merge: shard(s) {} {}missing",
            list.join(", "),
            of.map_or(String::new(), |n| format!("of {n} "))
        ));
    }
    for t in &doc.tests {
        let o = t.outcome.as_str();
        if !o.is_empty() && o != "completed" {
            out.push(format!("test {} was {o} (partial figures)", t.name));
        }
    }
    let other = doc.find_max.is_some() || doc.blocks.drawn() || doc.verify.is_some();
    if out.is_empty() && doc.tests.is_empty() && !other {
        out.push("no test in the record".to_string());
    }
    out
}

/// The headline figures of `l` (none when it counted nothing: the record writes 0s).
fn figures(rps: f64, l: &LatencySummary) -> Sample {
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
        limited_by: None,
        sent: None,
    }
}

/// Every slot of the test's measured time, when every second has its slots (slots past the end
/// of a cut-short last second are left out: they were not measured, not empty), with `of` of
/// each slot that has it.
fn kept_slots<T>(
    t: &TestRecord,
    duration: Option<f64>,
    of: impl Fn(&crate::record::timeline::SlotRow) -> Option<T> + Copy,
) -> Vec<(f64, T)> {
    if t.timeline.is_empty() || t.timeline.iter().any(|r| r.slots.is_none()) {
        return Vec::new();
    }
    let end = duration.unwrap_or(f64::MAX);
    t.timeline
        .iter()
        .flat_map(|r| {
            let slots = r.slots.as_deref().unwrap_or_default();
            slots
                .iter()
                .enumerate()
                .filter_map(move |(k, s)| Some((r.second as f64 + k as f64 * 0.1, of(s)?)))
        })
        .filter(|(start, _)| *start + 0.1 <= end + 1e-9)
        .collect()
}

/// A test's figures and series. A histogram that is there but does not decode is a corrupt
/// record, refused by name (an empty one is a record that keeps none: no spectrum).
fn sample(t: TestRecord, switches: &[SwitchRecord]) -> Result<Sample, String> {
    let hist = |text: &str, which: &str| -> Result<Vec<(f64, f64)>, String> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        crate::record::hdr::decode(text)
            .map(|h| spectrum::points(&h, 0.001))
            .ok_or_else(|| {
                format!(
                    "test {}: histograms.{which} is not an HdrHistogram (corrupt base64 or data)",
                    t.name
                )
            })
    };
    // 0: a record without the test's duration (built outside a run); its seconds are whole.
    let duration = (t.duration_s > 0.0).then_some(t.duration_s);
    let completed = kept_slots(&t, duration, |s| Some(s.completed));
    let kept_max = kept_slots(&t, duration, |s| s.max_us);
    let (node_outages, failovers) = (node_outages(&t), failovers(&t));
    let detail = Detail {
        latency_split: t.latency_split.clone(),
        blocks: t.blocks.clone(),
        timeline: timeline_rows(&t, duration),
        spectrum_corrected: hist(&t.histograms.corrected, "corrected")?,
        spectrum_uncorrected: hist(&t.histograms.uncorrected, "uncorrected")?,
        errors: t.requests.failed,
        redirects: t
            .requests
            .redirects
            .unwrap_or_default()
            .into_iter()
            .collect(),
        servers: t.server.into_iter().map(server_series).collect(),
        lost: t
            .timeline
            .iter()
            .flat_map(|r| {
                r.lost
                    .iter()
                    .map(move |(k, n)| (r.second as f64, k.clone(), *n))
            })
            .collect(),
        outages: t.outages.clone(),
        node_outages,
        failovers,
        switches: switches
            .iter()
            .filter(|s| s.test.as_deref() == Some(t.name.as_str()))
            .map(|s| (s.offset_s, format!("{} → {}", s.from, s.to)))
            .collect(),
        verdict_reason: t.verdict.reason.clone(),
        machine: t.machine.clone(),
        p99_9: (t.latency_us.corrected.count > 0).then_some(t.latency_us.corrected.p99_9),
        slot_max: kept_max,
        slots: completed,
    };
    let mix = t
        .mix
        .iter()
        .map(|m| MixCommand {
            name: m.name.clone(),
            completed: m.completed,
            failed: m.failed,
            figures: figures(m.throughput_rps, &m.latency_us),
            p99_9: (m.latency_us.count > 0).then_some(m.latency_us.p99_9),
            sent: (m.uncorrected.as_ref()).map(|u| figures(m.throughput_rps, &u.latency_us)),
        })
        .collect();
    Ok(Sample {
        detail: Some(Box::new(detail)),
        mix,
        sent: Some(Box::new(figures(
            t.throughput_rps,
            &t.latency_us.uncorrected,
        ))),
        ..figures(t.throughput_rps, &t.latency_us.corrected)
    })
}

/// The test's seconds as the charts read them, each placed over the time it covers (the last
/// one may be cut short: `duration`).
fn timeline_rows(t: &TestRecord, duration: Option<f64>) -> Vec<SecondRow> {
    t.timeline
        .iter()
        .map(|r| SecondRow {
            second: r.second as f64,
            span: duration.map_or(1.0, |d| (d - r.second as f64).clamp(0.01, 1.0)),
            completed: r.completed,
            failed: r.failed,
            p50: r.p50_us,
            p99: r.p99_us,
            max: r.max_us,
            client_delay: r.client_delay_us.map(|d| (d.avg, d.p99)),
            reconnect_attempts: r.reconnect_attempts,
            reconnects: r.reconnects,
            moved: ["MOVED", "ASK"]
                .iter()
                .filter_map(|k| r.redirects.get(*k))
                .sum(),
            invalidations: r.invalidations,
        })
        .collect()
}

/// A watched server's series: CPU and memory per second.
fn server_series(s: ServerTestRecord) -> ServerSeries {
    ServerSeries {
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
    }
}

/// Each node's outage: its address, start and end (s), and the requests lost.
fn node_outages(t: &TestRecord) -> Vec<(String, f64, f64, u64)> {
    t.nodes
        .iter()
        .filter_map(|n| {
            let o = n.outage.as_ref()?;
            let end = o.end_s.unwrap_or(o.start_s + o.duration_s);
            Some((n.address.clone(), o.start_s, end, n.lost))
        })
        .collect()
}

/// Each node's failover: when its outage ended (s), and its address.
fn failovers(t: &TestRecord) -> Vec<(f64, String)> {
    t.nodes
        .iter()
        .filter_map(|n| Some((n.outage.as_ref()?.end_s?, n.address.clone())))
        .collect()
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
    fn a_corrupt_histogram_is_named() {
        let mut doc = minimal(SCHEMA);
        doc["tests"][0]["histograms"] =
            serde_json::json!({"corrected": "!!not base64", "uncorrected": ""});
        let e = read(doc, SCHEMA).unwrap_err();
        assert_eq!(
            e,
            "test SET: histograms.corrected is not an HdrHistogram (corrupt base64 or data)"
        );
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

    /// Records written by an earlier build (`tests/fixtures/records/`) read as compare sees
    /// them: every test, its rate and timeline, the outage's failures, the merged totals.
    #[test]
    fn fixture_records_read_with_their_figures() {
        let load = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/records")
                .join(name);
            super::super::parse(&std::fs::read_to_string(path).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        let plain = load("plain.json");
        assert_eq!(plain.server.as_deref(), Some("redis 7.0.15"));
        let names: Vec<&str> = plain.tests.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["SET", "GET"]);
        assert!(plain.problems.is_empty());
        let rows: u64 = plain.tests[0]
            .1
            .detail
            .as_ref()
            .unwrap()
            .timeline
            .iter()
            .map(|r| r.completed)
            .sum();
        assert_eq!(rows, 2000);
        assert_eq!(load("repeat.json").tests.len(), 6);
        let cluster = load("cluster.json");
        assert_eq!(
            cluster.tests[0].1.detail.as_ref().unwrap().redirects.len(),
            4
        );
        let fm = load("find-max.json").find_max.unwrap();
        assert_eq!((fm.slo.as_str(), fm.points.len()), ("p99<50ms", 16));
        assert_eq!(fm.answer_rps, Some(45312.0));
        let outage = load("outage.json");
        assert_eq!(outage.tests[0].1.detail.as_ref().unwrap().errors, 5);
        let merged = load("merged.json");
        let rps: f64 = ["shard-0.json", "shard-1.json"]
            .iter()
            .map(|f| load(f).tests[0].1.rps)
            .sum();
        assert_eq!(merged.tests[0].1.rps, rps, "a merge sums the shards' rates");
    }
}
