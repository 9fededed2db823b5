//! Records written by earlier builds (`tests/fixtures/records/`, see its README) still read
//! through the one reader ([`Document::read`]) and write back unchanged: the types are the
//! record's one definition, so a field renamed, retyped or made required fails here before a
//! user's archive of records stops reading.

use std::path::PathBuf;

use super::document::{Document, SCHEMA};
use crate::verdict::Verdict;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records")
}

/// The fixture's text and the document read from it.
fn read(name: &str) -> (String, Document) {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    let doc = Document::read(serde_json::from_str(&text).unwrap())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(doc.schema, SCHEMA, "{name}");
    (text, doc)
}

/// Every fixture in the directory (so a new one is covered without a new test).
fn all() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    names
}

#[test]
fn every_fixture_writes_back_byte_for_byte() {
    for name in all() {
        let (text, doc) = read(&name);
        // `respbench merge` writes through `serde_json::Value`, whose keys are sorted; a run
        // writes the document in its declared order.
        let mut again = if doc.shards.is_empty() {
            serde_json::to_string_pretty(&doc).unwrap()
        } else {
            serde_json::to_string_pretty(&serde_json::to_value(&doc).unwrap()).unwrap()
        };
        again.push('\n');
        if again != text {
            let line = again
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{name}: read then written differs from line {}: {:?} vs {:?}",
                line + 1,
                again.lines().nth(line),
                text.lines().nth(line)
            );
        }
    }
}

#[test]
fn a_plain_run_reads_with_its_totals() {
    let (_, doc) = read("plain.json");
    assert_eq!(doc.outcome, "completed");
    let names: Vec<&str> = doc.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["SET", "GET"]);
    for t in &doc.tests {
        assert_eq!(t.requests.completed, 2000);
        assert_eq!(t.requests.issued, Some(2000));
        assert_eq!(t.latency_us.corrected.count, 2000);
        assert_eq!(t.outcome, "completed");
        assert!(!t.histograms.corrected.is_empty());
    }
    assert_eq!(doc.options.requests, Some(2000));
    assert_eq!(doc.options.workload.key_prefix, "key:");
    assert_eq!(doc.servers[0].identity.as_ref().unwrap().name, "redis");
}

#[test]
fn a_repeat_run_keeps_each_repetition() {
    let (_, doc) = read("repeat.json");
    let reps: Vec<(&str, Option<u32>)> = doc
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.repetition))
        .collect();
    assert_eq!(
        reps,
        [
            ("SET", Some(1)),
            ("SET", Some(2)),
            ("SET", Some(3)),
            ("GET", Some(1)),
            ("GET", Some(2)),
            ("GET", Some(3))
        ]
    );
    assert!(doc.tests.iter().all(|t| t.requests.completed == 1000));
}

#[test]
fn a_cluster_run_reads_its_nodes_and_redirects() {
    let (_, doc) = read("cluster.json");
    assert!(doc.target.cluster && doc.options.cluster);
    assert_eq!(doc.target.nodes.len(), 3);
    for t in &doc.tests {
        assert_eq!(t.requests.completed, 2000);
        assert_eq!(t.nodes.len(), 3);
        assert_eq!(t.nodes.iter().map(|n| n.completed).sum::<u64>(), 2000);
        assert!(t.nodes.iter().all(|n| n.role == "primary"));
        let r = t.requests.redirects.as_ref().unwrap();
        assert_eq!(
            r.keys().collect::<Vec<_>>(),
            ["ASK", "CLUSTERDOWN", "MOVED", "TRYAGAIN"]
        );
    }
}

#[test]
fn a_find_max_run_reads_its_search() {
    let (_, doc) = read("find-max.json");
    let f = doc.find_max.as_ref().unwrap();
    assert_eq!(f.slo, "p99<50ms");
    assert_eq!(f.steps.len(), 16);
    assert_eq!(f.steps[0].offered_rps, 9505);
    assert_eq!(f.end, "converged");
    assert_eq!(f.answer_rps, Some(45312.0));
    assert_eq!(doc.tests.len(), 1, "the answer step's record");
}

#[test]
fn an_outage_reads_with_its_lost_requests() {
    let (_, doc) = read("outage.json");
    let t = &doc.tests[0];
    assert_eq!(t.outages.len(), 1);
    let o = &t.outages[0];
    assert_eq!((o.failed, o.lost, o.reconnects), (5, 5, 10));
    assert_eq!(t.requests.failed, 5);
    assert!(doc.options.continue_on_error);
    let lost: u64 = t.timeline.iter().flat_map(|r| r.lost.values()).sum();
    assert_eq!(lost, 5);
    assert!(t.timeline.iter().any(|r| r.slots.is_some()));
    assert_eq!(t.verdict.kind, Verdict::RateLimited);
}

#[test]
fn a_merged_record_reads_its_shards() {
    let (_, doc) = read("merged.json");
    assert!(doc.shard.is_none());
    assert_eq!(doc.shards.len(), 2);
    assert_eq!(doc.shards[1].index, Some(1));
    assert_eq!(doc.shards[0].tests[0].completed, 500);
    assert_eq!(doc.tests[0].requests.completed, 1000);
    assert_eq!(doc.tests[0].latency_us.corrected.count, 1000);
    assert_eq!(doc.options.requests, Some(1000));
    let (_, s1) = read("shard-1.json");
    let s = s1.shard.unwrap();
    assert_eq!((s.index, s.count, s.source.as_str()), (1, 2, "flag"));
    assert_eq!(s.requests_total, Some(1000));
}

#[test]
fn a_record_without_later_fields_reads_with_their_defaults() {
    let text = std::fs::read_to_string(dir().join("plain.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Fields that came with later issues (outages, reconnects, workload options, ...), gone.
    let t = v["tests"][0].as_object_mut().unwrap();
    for k in ["started_at", "outages", "pushes", "verdict", "timeline"] {
        t.remove(k);
    }
    let r = t["requests"].as_object_mut().unwrap();
    for k in ["unanswered", "reconnect_attempts", "reconnects", "issued"] {
        r.remove(k);
    }
    let o = v["options"].as_object_mut().unwrap();
    for k in ["key_pattern", "arrival", "mix", "key_prefix"] {
        o.remove(k);
    }
    v["a_future_field"] = true.into();
    let doc = Document::read(v).unwrap();
    let t = &doc.tests[0];
    assert!(t.outages.is_empty() && t.timeline.is_empty());
    assert_eq!((t.requests.unanswered, t.requests.issued), (0, None));
    assert_eq!(t.requests.completed, 2000, "the fields it has are read");
    assert_eq!(t.verdict.kind, Verdict::Unknown);
    // The workload's defaults are valkey-benchmark's.
    assert_eq!(doc.options.workload.key_prefix, "key:");
    assert_eq!(doc.options.workload.arrival, "uniform");
    assert_eq!(doc.options.workload.key_pattern.name, "uniform");
    let e = Document::read(serde_json::json!({"schema": SCHEMA})).unwrap_err();
    assert!(e.contains("missing field `tests`"), "{e}");
}
