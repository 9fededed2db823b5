//! Merging records made by the record's own code (a `RunRecord` per shard, as a run makes them).

use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::metrics::{LatencyHistogram, Outcome, TestResult};
use crate::plan::RunPlan;
use crate::record::document::LatencySummary;
use crate::record::{RunRecord, TestExtras};
use crate::workload::Template;
use crate::workload::template::parse_custom_command;

fn template(line: &[&str]) -> Template {
    let args: Vec<Vec<u8>> = line.iter().map(|a| a.as_bytes().to_vec()).collect();
    let items = parse_custom_command(&args, None, 3, &mut Default::default()).unwrap();
    Template::encode(&items, false)
}

/// The record a shard run with `argv` opens (the shard writes it: `--json` is among `argv`).
fn shard_run(argv: &[&str]) -> RunRecord {
    let args = match crate::cli::parse(argv.iter().map(Into::into)).unwrap() {
        crate::cli::Invocation::Run(a) => a,
        other => panic!("{other:?}"),
    };
    let plan = RunPlan::new(&args, None).unwrap();
    RunRecord::open(&plan, &["respbench".into()]).unwrap()
}

/// A shard's record of one test (`title`), its latencies `samples`.
fn shard_record(argv: &[&str], title: &str, samples: &[u64]) -> Value {
    // Shards write their records (`--json`): a record that goes nowhere keeps no histograms.
    let mut rec = shard_run(&[argv, &["--json", "-"]].concat());
    let watch = rec.begin_test();
    let mut r = TestResult::empty(title, None, Outcome::Completed);
    for &v in samples {
        r.latency.record(v);
        r.latency_uncorrected.record(v / 2);
        r.completed += 1;
    }
    r.errors.record(b"ERR x");
    r.elapsed = Duration::from_secs(2);
    rec.end_test(
        watch,
        &template(&["set", "k", "v"]),
        &r,
        TestExtras::default(),
    );
    serde_json::to_value(rec.document()).unwrap()
}

fn inputs(docs: Vec<Value>) -> Vec<Input> {
    docs.into_iter()
        .enumerate()
        .map(|(i, doc)| Input {
            name: format!("out-{i}.json"),
            doc: Document::read(doc).unwrap(),
        })
        .collect()
}

/// The merged record as it is written (JSON).
fn merged(inputs: Vec<Input>) -> Result<Value, String> {
    merge(inputs, How::default()).map(|d| serde_json::to_value(d).unwrap())
}

fn samples(shard: u64) -> Vec<u64> {
    (0..500 + shard * 37)
        .map(|i| 20_000 + (i * 7919 + shard * 104_729) % 3_000_000)
        .collect()
}

#[test]
fn shards_merge_into_the_whole_run() {
    let docs: Vec<Value> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            shard_record(
                &["--shard", &shard, "-n", "1000", "--rps", "100"],
                "SET",
                &samples(i),
            )
        })
        .collect();
    // Given out of order: the merge orders by shard index.
    let merged = merged(inputs(vec![
        docs[2].clone(),
        docs[0].clone(),
        docs[1].clone(),
    ]))
    .unwrap();
    let mut together = LatencyHistogram::new();
    for i in 0..3 {
        for v in samples(i) {
            together.record(v);
        }
    }
    let t = &merged["tests"][0];
    assert_eq!(t["requests"]["completed"], together.len());
    assert_eq!(t["requests"]["failed"], 3);
    assert_eq!(t["requests"]["errors"], json!({"ERR": 3}));
    assert_eq!(
        t["latency_us"]["corrected"],
        serde_json::to_value(LatencySummary::of(&together)).unwrap()
    );
    assert_eq!(
        t["histograms"]["corrected"],
        crate::record::hdr::encode(&together)
    );
    assert_eq!(merged["options"]["requests"], 1000);
    assert_eq!(merged["options"]["rps"], 100);
    assert!(merged.get("shard").is_none());
    let rows = merged["shards"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["index"], 0);
    assert_eq!(rows[1]["file"], "out-2.json");
    assert_eq!(rows[2]["source"], "flag");
    assert_eq!(rows[1]["tests"][0]["completed"], samples(1).len());
}

#[test]
fn different_benchmarks_are_refused_with_one_line() {
    let a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let cases = [
        (
            shard_record(&["--shard", "1/2"], "GET", &samples(1)),
            "tests [SET] vs [GET]",
        ),
        (
            shard_record(&["--shard", "1/2", "-c", "7"], "SET", &samples(1)),
            "options.clients is 50 vs 7",
        ),
        (
            shard_record(&["--shard", "0/2"], "SET", &samples(1)),
            "are both shard 0",
        ),
        (
            shard_record(&["--shard", "1/3"], "SET", &samples(1)),
            "shard.count is 2 vs 3",
        ),
    ];
    for (b, needle) in cases {
        let e = merged(inputs(vec![a.clone(), b])).unwrap_err();
        assert!(e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
    }
    let mut other = a.clone();
    other["schema"] = "respbench/2".into();
    let e = merged(inputs(vec![a.clone(), other.clone()])).unwrap_err();
    assert!(e.starts_with("out-1.json: schema \"respbench/2\""), "{e}");
    // Read from a file, the schema is named before the shape is read.
    other["tests"] = "not a list".into();
    let e = Input::read("b.json".into(), other).err().unwrap();
    assert!(e.starts_with("b.json: schema \"respbench/2\""), "{e}");
    // The seed and the parts of -n differ between shards and are not differences.
    let b = shard_record(&["--shard", "1/2", "--seed", "5"], "SET", &samples(1));
    assert!(merged(inputs(vec![a, b])).is_ok());
}

#[test]
fn timelines_align_by_wall_clock_second() {
    let mut a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let mut b = shard_record(&["--shard", "1/2"], "SET", &samples(1));
    let row = |second: u64, completed: u64, p99: f64| {
        json!({"second": second, "completed": completed, "failed": 0, "p50_us": 1.0,
               "p99_us": p99, "max_us": p99, "server": [], "lost": {},
               "reconnect_attempts": 0, "reconnects": 0})
    };
    a["tests"][0]["started_at"] = "2026-01-01T00:00:00.100000Z".into();
    a["tests"][0]["timeline"] = json!([row(0, 10, 5.0), row(1, 20, 6.0)]);
    // Began 1.2 s later: its second 0 is the merged second 1.
    b["tests"][0]["started_at"] = "2026-01-01T00:00:01.300000Z".into();
    b["tests"][0]["timeline"] = json!([row(0, 1, 9.0), row(1, 2, 1.0)]);
    let m = merged(inputs(vec![a, b])).unwrap();
    let t = &m["tests"][0];
    assert_eq!(t["started_at"], "2026-01-01T00:00:00.100000Z");
    assert_eq!(
        t["timeline"],
        json!([row(0, 10, 5.0), row(1, 21, 9.0), row(2, 2, 1.0)])
    );
}

#[test]
fn the_client_delay_adds_up_by_its_samples_per_second_and_over_the_test() {
    let mut a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let mut b = shard_record(&["--shard", "1/2"], "SET", &samples(1));
    let row = |delay: Value| {
        json!({"second": 0, "completed": 10, "failed": 0, "p50_us": 1.0, "p99_us": 2.0,
               "max_us": 2.0, "server": [], "lost": {}, "reconnect_attempts": 0,
               "reconnects": 0, "client_delay_us": delay})
    };
    let start = "2026-01-01T00:00:00.000000Z";
    a["tests"][0]["started_at"] = start.into();
    b["tests"][0]["started_at"] = start.into();
    a["tests"][0]["timeline"] = json!([row(
        json!({"avg": 10.0, "p50": 8.0, "p99": 40.0, "samples": 30})
    )]);
    b["tests"][0]["timeline"] = json!([row(
        json!({"avg": 50.0, "p50": 30.0, "p99": 20.0, "samples": 10})
    )]);
    a["tests"][0]["client_delay_us"] = json!({"count": 30, "avg": 10.0, "min": 1.0, "max": 90.0});
    b["tests"][0]["client_delay_us"] = json!({"count": 10, "avg": 50.0, "min": 2.0, "max": 70.0});
    let m = merged(inputs(vec![a, b])).unwrap();
    let t = &m["tests"][0];
    assert_eq!(
        t["timeline"][0]["client_delay_us"],
        json!({"avg": 20.0, "p50": 30.0, "p99": 40.0, "samples": 40})
    );
    let whole = &t["client_delay_us"];
    assert_eq!((&whole["count"], &whole["avg"]), (&json!(40), &json!(20.0)));
    assert_eq!((&whole["min"], &whole["max"]), (&json!(1.0), &json!(90.0)));
}

/// A shard's record of a SET test (as a run makes it) whose timeline is one second longer than a
/// test that keeps every second's slots: second 1 loses `lost` requests to resets in slots
/// `from..to` (nothing completes there) and reconnects in slot `to`; every other slot completes
/// 10 requests (the other seconds are quiet: no slots in the record).
fn failing_shard(index: u64, from: usize, to: usize, lost: u64) -> Value {
    shard_of(
        index,
        from,
        to,
        lost,
        crate::record::timeline::SLOTS_KEPT_UP_TO_S + 1,
    )
}

/// [`failing_shard`] over `seconds` seconds (at most `SLOTS_KEPT_UP_TO_S`: every second keeps
/// its slots).
fn shard_of(index: u64, from: usize, to: usize, lost: u64, seconds: usize) -> Value {
    let mut rec = shard_run(&["--shard", &format!("{index}/2"), "-e", "--json", "-"]);
    let watch = rec.begin_test();
    let mut r = TestResult::empty("SET", None, Outcome::Completed);
    let reset = crate::metrics::FAILURE_KINDS
        .iter()
        .position(|k| *k == "connection reset")
        .unwrap();
    for sec in 0..seconds {
        let s = r.timeline.second_mut(sec);
        for (i, slot) in s.slots.iter_mut().enumerate() {
            if sec == 1 && (from..to).contains(&i) {
                continue;
            }
            slot.completed = 10;
        }
        if sec == 1 {
            s.slots[from].failed = lost;
            s.slots[from].lost = lost;
            s.slots[to].reconnect_attempts = 2;
            s.slots[to].reconnects = 1;
            s.failed = lost;
            s.lost[reset] = lost;
        }
        s.completed = s.slots.iter().map(|x| x.completed).sum();
        for _ in 0..s.completed {
            s.latency.record(50_000);
            r.latency.record(50_000);
            r.latency_uncorrected.record(50_000);
        }
        r.completed += s.completed;
    }
    for _ in 0..lost {
        r.errors.record(b"connection reset");
    }
    r.elapsed = Duration::from_secs(seconds as u64);
    let timeline = r.timeline.clone();
    let extras = TestExtras {
        timeline: Some(&timeline),
        ..TestExtras::default()
    };
    rec.end_test(watch, &template(&["set", "k", "v"]), &r, extras);
    serde_json::to_value(rec.document()).unwrap()
}

#[test]
fn failure_counters_add_up_and_outages_are_the_union() {
    let mut a = failing_shard(0, 2, 5, 7);
    let mut b = failing_shard(1, 4, 8, 3);
    // The record's own outages: 1.2-1.5 s and 1.4-1.8 s.
    assert_eq!(
        a["tests"][0]["outages"][0]["start_s"], 1.2,
        "{}",
        a["tests"][0]
    );
    assert_eq!(b["tests"][0]["outages"][0]["end_s"], 1.8);
    a["tests"][0]["started_at"] = "2026-01-01T00:00:00.000000Z".into();
    b["tests"][0]["started_at"] = "2026-01-01T00:00:00.000000Z".into();
    let m = merged(inputs(vec![a.clone(), b.clone()])).unwrap();
    let t = &m["tests"][0];
    let row = &t["timeline"][1];
    assert_eq!(row["lost"], json!({"connection reset": 10}));
    assert_eq!(row["failed"], 10);
    assert_eq!(row["reconnect_attempts"], 4);
    assert_eq!(row["reconnects"], 2);
    let slots = row["slots"].as_array().unwrap();
    assert_eq!(slots.len(), 10);
    assert_eq!(slots[2]["lost"], 7);
    assert_eq!(slots[4]["lost"], 3);
    assert_eq!(slots[4]["completed"], 0, "both shards down in slot 4");
    assert_eq!(slots[3]["completed"], 10, "shard 1 still up in slot 3");
    assert_eq!(slots[5]["reconnect_attempts"], 2);
    let sum: u64 = slots.iter().map(|s| s["completed"].as_u64().unwrap()).sum();
    assert_eq!(sum, row["completed"].as_u64().unwrap());
    assert!(t["timeline"][0].get("slots").is_none(), "a quiet second");
    // Overlapping outages joined: 1.2 to 1.8 s, counts added.
    assert_eq!(
        t["outages"],
        json!([{"start_s": 1.2, "end_s": 1.8, "duration_s": 0.6, "failed": 10, "lost": 10,
                "reconnect_attempts": 4, "reconnects": 2, "until_end": false}])
    );
    // Shard 1 began 0.5 s later: its outage (1.9-2.3 s on the merged clock) no longer
    // overlaps shard 0's, so both are listed; and its second 1 lands in the merged second 2
    // (rounded), where shard 0 had a quiet second: no slots that would not add up.
    b["tests"][0]["started_at"] = "2026-01-01T00:00:00.500000Z".into();
    let m = merged(inputs(vec![a, b])).unwrap();
    let t = &m["tests"][0];
    let outages = t["outages"].as_array().unwrap();
    assert_eq!(outages.len(), 2, "{outages:?}");
    assert_eq!(outages[1]["start_s"], 1.9);
    assert_eq!(outages[1]["lost"], 3);
    assert!(
        t["timeline"][2].get("slots").is_none(),
        "{}",
        t["timeline"][2]
    );
    assert_eq!(t["timeline"][2]["lost"], json!({"connection reset": 3}));
}

#[test]
fn a_short_tests_slots_merge_only_when_the_shards_line_up_to_the_tenth() {
    let start = |v: &mut Value, at: &str| v["tests"][0]["started_at"] = at.into();
    let (mut a, mut b) = (shard_of(0, 2, 5, 7, 3), shard_of(1, 4, 8, 3, 3));
    start(&mut a, "2026-01-01T00:00:00.000000Z");
    start(&mut b, "2026-01-01T00:00:01.000000Z");
    let m = merged(inputs(vec![a.clone(), b.clone()])).unwrap();
    let rows = m["tests"][0]["timeline"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 4, "shard 1 a whole second later");
    for row in &rows {
        let slots = row["slots"].as_array().expect("every second's slots");
        let sum: u64 = slots.iter().map(|s| s["completed"].as_u64().unwrap()).sum();
        assert_eq!(sum, row["completed"].as_u64().unwrap(), "{row}");
    }
    // Shard 0's second 1 (slots 2..5 lost) and shard 1's second 0 land in merged second 1.
    assert_eq!(rows[1]["slots"][2]["completed"], 10);
    assert_eq!(rows[1]["slots"][2]["lost"], 7);
    // Half a second later: shard 1's slots would land half a second off, so the seconds it
    // touches keep none; second 0 is shard 0's alone and keeps its own.
    start(&mut b, "2026-01-01T00:00:00.500000Z");
    let m = merged(inputs(vec![a, b])).unwrap();
    let rows = m["tests"][0]["timeline"].as_array().unwrap();
    assert!(rows[0].get("slots").is_some(), "{}", rows[0]);
    assert!(
        rows[1..].iter().all(|r| r.get("slots").is_none()),
        "{rows:?}"
    );
}

#[test]
fn arguments() {
    let p = |a: &[&str]| parse_args(a.iter().map(Into::into));
    assert_eq!(p(&["--help"]), Ok(Request::Help));
    assert_eq!(
        p(&["-o", "all.json", "a.json", "b.json"]),
        Ok(Request::Merge {
            out: "all.json".into(),
            inputs: vec!["a.json".into(), "b.json".into()],
            how: How::default(),
        })
    );
    assert_eq!(
        p(&["--partial", "-o", "all.json", "a.json", "--strict"]),
        Ok(Request::Merge {
            out: "all.json".into(),
            inputs: vec!["a.json".into()],
            how: How {
                partial: true,
                strict: true
            },
        })
    );
    assert!(p(&["a.json"]).unwrap_err().contains("-o FILE is required"));
    assert!(p(&["-o", "x"]).unwrap_err().contains("no records"));
    assert!(p(&["-o"]).unwrap_err().contains("-o needs"));
    assert!(
        p(&["--frobnicate"])
            .unwrap_err()
            .contains("unknown option --frobnicate")
    );
}

#[test]
fn help_is_the_golden_text() {
    assert_eq!(super::help_text(), include_str!("help.golden"));
}

/// `a` and `b` are the same JSON, floats within one unit in the last place.
fn same_json(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(x), keys(y), "{at}");
            for (k, v) in x {
                same_json(v, &y[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (n, (v, w)) in x.iter().zip(y).enumerate() {
                same_json(v, w, &format!("{at}[{n}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= x.abs() * f64::EPSILON, "{at}: {x} vs {y}");
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// The fixture shards (`tests/fixtures/records/`, written by an earlier build) merge into the
/// merged record that build's `respbench merge` wrote from them: the same fields, the same
/// layout, the same values. Floats may differ in the last place only where the earlier merge
/// misread a shard's float (serde_json without `float_roundtrip`); this one copies them exactly.
#[test]
fn fixture_shards_merge_into_the_fixture_merged_record() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let shards = ["shard-1.json", "shard-0.json"].map(|f| {
        // The names the shards were given to merge (the merged record keeps them).
        let name = format!("/work/wt-records/tests/fixtures/records/{f}");
        Input::read(name, serde_json::from_str(&read(f)).unwrap()).unwrap()
    });
    let doc = merge(shards.into(), How::default()).unwrap();
    assert_eq!(summary(&doc).len(), 1);
    assert!(summary(&doc)[0].starts_with("SET: 1000 requests from 2 shards, "));
    let value = serde_json::to_value(&doc).unwrap();
    let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
    let old = read("merged.json");
    // The layout: every line but a float's last digits.
    assert_eq!(text.lines().count(), old.lines().count());
    same_json(&value, &serde_json::from_str(&old).unwrap(), "merged");
    // A shard's figure copied bit for bit (the earlier merge wrote ...897).
    assert_eq!(
        value["shards"][1]["tests"][0]["throughput_rps"],
        31289.739925313894
    );
}

/// Every fixture record (`tests/fixtures/records/`) reads through merge's reader, and none merges
/// with itself: a whole run (no shard block) or an earlier merge given twice would count its
/// requests twice, and a shard given twice is the same shard twice. Each is refused in one line.
#[test]
fn every_fixture_record_reads_through_merges_reader() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let name = path.display().to_string();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let one = Input::read(name.clone(), value.clone()).unwrap();
        let completed: Vec<u64> = one.doc.tests.iter().map(|t| t.requests.completed).collect();
        assert!(completed.iter().all(|n| *n > 0), "{name}");
        let (merged_before, sharded) = (!one.doc.shards.is_empty(), one.doc.shard.is_some());
        let two = Input::read(name.clone(), value).unwrap();
        let e = merge(vec![one, two], How::default()).unwrap_err();
        let why = if merged_before {
            "is already a merged record (of 2 shards)"
        } else if sharded {
            "are both shard"
        } else {
            "is a whole run (no shard block), not a shard"
        };
        assert!(e.contains(why) && !e.contains('\n'), "{name}: {e}");
        seen += 1;
    }
    assert!(seen >= 8, "{seen} fixtures");
}

/// Issue 19 item 2: what is not one sharded benchmark is refused in one line naming the input.
#[test]
fn what_is_not_one_sharded_benchmark_is_refused() {
    let a = shard_record(&["--shard", "0/2", "-n", "2000"], "SET", &samples(0));
    let b = shard_record(&["--shard", "1/2", "-n", "2000"], "SET", &samples(1));
    let refused = |docs: Vec<Value>, needle: &str| {
        let e = merged(inputs(docs)).unwrap_err();
        assert!(e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
    };
    // An earlier merge picked up again (`merge -o all.json *.json` run twice).
    let all = merged(inputs(vec![a.clone(), b.clone()])).unwrap();
    refused(
        vec![a.clone(), b.clone(), all.clone()],
        "out-2.json is already a merged record (of 2 shards)",
    );
    refused(vec![all], "out-0.json is already a merged record");
    // A whole run given twice.
    let whole = shard_record(&["-n", "2000"], "SET", &samples(0));
    refused(
        vec![whole.clone(), whole.clone()],
        "out-0.json is a whole run (no shard block), not a shard",
    );
    assert!(
        merged(inputs(vec![whole])).is_ok(),
        "one whole run merges as itself"
    );
    // Another server.
    let other = shard_record(
        &["--shard", "1/2", "-n", "2000", "-p", "7000"],
        "SET",
        &samples(1),
    );
    refused(
        vec![a.clone(), other],
        "different benchmarks: target 127.0.0.1:6379 vs 127.0.0.1:7000",
    );
    // A part of -n that is not the shard's.
    let mut edited = b.clone();
    edited["options"]["requests"] = 999.into();
    refused(
        vec![a.clone(), edited],
        "out-1.json: options.requests is 999, but shard 1 of 2 of 2000 is 1000",
    );
    // Both --start-at-only records (shard 0 of 1) of two runs.
    let soon = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let timed = shard_record(&["--start-at", &soon.to_string()], "SET", &samples(0));
    let timed_shard = timed["shard"].clone();
    assert_eq!(timed_shard["source"], "none", "{timed_shard}");
    refused(vec![timed.clone(), timed], "are both shard 0");
}

#[test]
fn counts_that_do_not_add_up_are_refused() {
    let a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let b = shard_record(&["--shard", "1/2"], "SET", &samples(1));
    let refused = |b: Value, needle: &str| {
        let e = merged(inputs(vec![a.clone(), b])).unwrap_err();
        assert!(e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
    };
    let n = samples(1).len() as u64;
    let mut x = b.clone();
    x["tests"][0]["requests"]["completed"] = (n * 100).into();
    x["tests"][0]["requests"]["issued"] = (n * 100 + 1).into();
    refused(
        x,
        &format!(
            "requests.completed is {} but its histogram holds {n}",
            n * 100
        ),
    );
    let mut x = b.clone();
    x["tests"][0]["requests"]["issued"] = 3.into();
    refused(x, "is more than the 3 issued");
    let mut x = b.clone();
    x["tests"][0]["throughput_rps"] = (-200.0).into();
    refused(x, "throughput_rps is -200 (a corrupt record)");
    // A count of 2^64 - 1 must not wrap when added.
    let (mut x, mut y) = (a.clone(), b.clone());
    for d in [&mut x, &mut y] {
        d["tests"][0]["requests"]["unanswered"] = u64::MAX.into();
        d["tests"][0]["requests"]["issued"] = Value::Null;
    }
    let e = merged(inputs(vec![x, y])).unwrap_err();
    assert!(
        e.contains("requests.unanswered: the shards' sum does not fit"),
        "{e}"
    );
    // A negative count is not a count.
    let mut x = b.clone();
    x["tests"][0]["requests"]["failed"] = (-5).into();
    assert!(Document::read(x).is_err());
}

#[test]
fn a_missing_shard_is_refused_unless_partial() {
    let docs: Vec<Value> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            shard_record(&["--shard", &shard, "-n", "3000"], "SET", &samples(i))
        })
        .collect();
    let two = || inputs(vec![docs[0].clone(), docs[2].clone()]);
    let e = merge(two(), How::default()).unwrap_err();
    assert!(
        e.starts_with("shard(s) 1 of 3 missing: give every shard's record, or --partial"),
        "{e}"
    );
    let doc = merge(
        two(),
        How {
            partial: true,
            strict: false,
        },
    )
    .unwrap();
    let note = doc.merge.as_ref().unwrap();
    assert_eq!(note.missing_shards, [1]);
    assert_eq!(doc.options.requests, Some(3000), "the whole benchmark's -n");
    // compare reads it as partial, which fails --fail-if-worse.
    let text = serde_json::to_string(&doc).unwrap();
    let run = crate::compare::input::parse(&text).unwrap();
    assert_eq!(run.problems, ["a partial merge: shard(s) 1 of 3 missing"]);
}

#[test]
fn shards_that_ran_apart_are_merged_over_their_union_or_refused_with_strict() {
    let mut a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let mut b = shard_record(&["--shard", "1/2"], "SET", &samples(1));
    // Each ran 2 s (shard_record's elapsed); b began 5 s after a.
    a["tests"][0]["started_at"] = "2026-01-01T00:00:00.000000Z".into();
    b["tests"][0]["started_at"] = "2026-01-01T00:00:05.000000Z".into();
    let m = merged(inputs(vec![a.clone(), b.clone()])).unwrap();
    let t = &m["tests"][0];
    let completed = (samples(0).len() + samples(1).len()) as f64;
    assert_eq!(t["duration_s"], 7.0);
    assert_eq!(t["throughput_rps"], completed / 7.0);
    assert_eq!(m["merge"]["apart"], json!(["SET"]));
    let doc = merge(inputs(vec![a.clone(), b.clone()]), How::default()).unwrap();
    assert!(
        summary(&doc)[0].contains("the shards did not run together"),
        "{:?}",
        summary(&doc)
    );
    let strict = How {
        partial: false,
        strict: true,
    };
    let e = merge(inputs(vec![a.clone(), b.clone()]), strict).unwrap_err();
    assert!(
        e.contains("did not run together") && e.contains("--strict"),
        "{e}"
    );
    // Started together: rates summed, no note.
    b["tests"][0]["started_at"] = "2026-01-01T00:00:00.004000Z".into();
    let m = merged(inputs(vec![a.clone(), b.clone()])).unwrap();
    let sum = a["tests"][0]["throughput_rps"].as_f64().unwrap()
        + b["tests"][0]["throughput_rps"].as_f64().unwrap();
    assert_eq!(m["tests"][0]["throughput_rps"], sum);
    assert!(m.get("merge").is_none());
}

#[test]
fn a_shard_that_did_not_finish_is_named_as_such() {
    let a = shard_record(&["--shard", "0/2"], "SET", &samples(0));
    let mut b = shard_record(&["--shard", "1/2"], "SET", &samples(1));
    b["tests"] = json!([]);
    b["outcome"] = "interrupted".into();
    let e = merged(inputs(vec![a, b])).unwrap_err();
    assert_eq!(
        e,
        "out-1.json was interrupted after 0 of 1 tests: a shard that did not finish cannot be merged"
    );
}

/// A part of a test counting more than the test (a second, a mix command, a node) is corrupt:
/// refused before its counts are added, so no sum of parts can wrap.
#[test]
fn a_part_above_its_test_is_refused() {
    let a = failing_shard(0, 2, 5, 7);
    let mut b = failing_shard(1, 4, 8, 3);
    b["tests"][0]["timeline"][1]["completed"] = u64::MAX.into();
    let e = merged(inputs(vec![a, b])).unwrap_err();
    assert!(
        e.starts_with("out-1.json: tests[0] (SET): timeline[1].completed 18446744073709551615 is more than the test's"),
        "{e}"
    );
}
