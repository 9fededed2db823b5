//! One test across shards: counts summed, histograms added (summaries recomputed from the sum),
//! cluster nodes matched by address, timelines aligned by wall-clock second.
//!
//! Per-second rows hold summaries, not histograms, so a merged second's `p50_us`/`p99_us`/`max_us`
//! are the **largest over the shards** for that second (an upper bound; the whole test's figures
//! are exact). The per-second failure counters add up; slots and outages: see `failures`. Server figures describe the server, which all shards watched at once: the merge
//! keeps the first shard's (lowest index), rather than adding the same CPU N times.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::metrics::LatencyHistogram;
use crate::record::document::{ENCODING, LatencySummary};
use crate::record::hdr;
use crate::timestamp::parse_time;

use super::check::Input;
use super::failures;
use super::hist::add_encoded;

/// Test `t` of every input (already checked to be the same test) as one test.
pub fn merge_test(inputs: &[Input], t: usize) -> Result<Value, String> {
    let tests: Vec<&Value> = inputs.iter().map(|i| &i.doc["tests"][t]).collect();
    let first = tests[0];
    let mut corrected = LatencyHistogram::new();
    let mut uncorrected = LatencyHistogram::new();
    for (i, test) in inputs.iter().zip(&tests) {
        let what = |k: &str| format!("{}: tests[{t}].histograms.{k}", i.name);
        let h = &test["histograms"];
        if h["encoding"] != ENCODING {
            return Err(format!(
                "{}: encoding {} is not {ENCODING}",
                what("encoding"),
                h["encoding"]
            ));
        }
        add_encoded(&mut corrected, str_of(&h["corrected"]), &what("corrected"))?;
        add_encoded(
            &mut uncorrected,
            str_of(&h["uncorrected"]),
            &what("uncorrected"),
        )?;
    }
    let mut out = first.clone();
    let o = out.as_object_mut().ok_or("a test is not an object")?;
    let starts: Vec<Option<SystemTime>> = tests
        .iter()
        .map(|t| t["started_at"].as_str().and_then(parse_time))
        .collect();
    if let Some(s) = tests
        .iter()
        .filter_map(|t| t["started_at"].as_str())
        .min_by_key(|s| parse_time(s))
    {
        o.insert("started_at".into(), s.into());
    }
    o.insert(
        "outcome".into(),
        worst(&tests, "outcome", &["completed", "interrupted", "aborted"]),
    );
    o.insert("requests".into(), requests(&tests));
    o.insert(
        "pushes".into(),
        sum_fields(&tests, "pushes", &["invalidations", "messages", "other"]),
    );
    o.insert(
        "duration_s".into(),
        max_f64(tests.iter().map(|t| &t["duration_s"])),
    );
    o.insert(
        "throughput_rps".into(),
        sum_f64(tests.iter().map(|t| &t["throughput_rps"])),
    );
    o.insert(
        "target_rps".into(),
        sum_u64_or_null(tests.iter().map(|t| &t["target_rps"])),
    );
    o.insert(
        "latency_us".into(),
        json!({"corrected": LatencySummary::of(&corrected), "uncorrected": LatencySummary::of(&uncorrected)}),
    );
    o.insert(
        "histograms".into(),
        json!({"unit": "ns", "encoding": ENCODING,
               "corrected": hdr::encode(&corrected), "uncorrected": hdr::encode(&uncorrected)}),
    );
    let mut merged_nodes = nodes(inputs, &tests, t)?;
    failures::node_outages(&mut merged_nodes, &tests, &starts);
    o.insert("nodes".into(), merged_nodes);
    if first.get("mix").is_some() {
        o.insert("mix".into(), mix(inputs, &tests, t)?);
    }
    o.insert("timeline".into(), timeline(&tests, &starts));
    o.insert("outages".into(), failures::outages(&tests, &starts));
    let threads: Vec<Value> = tests
        .iter()
        .filter_map(|t| t["client_threads_cpu_pct"].as_array())
        .flatten()
        .cloned()
        .collect();
    o.insert(
        "client_threads_cpu_pct".into(),
        if threads.is_empty() {
            Value::Null
        } else {
            threads.into()
        },
    );
    o.insert("verdict".into(), verdict(&tests));
    Ok(out)
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The worst of a field's values, by `order` (later is worse).
pub fn worst(items: &[&Value], field: &str, order: &[&str]) -> Value {
    items
        .iter()
        .filter_map(|t| t[field].as_str())
        .max_by_key(|s| order.iter().position(|o| o == s).unwrap_or(0))
        .unwrap_or(order[0])
        .into()
}

fn max_f64<'a>(vs: impl Iterator<Item = &'a Value>) -> Value {
    vs.filter_map(Value::as_f64)
        .reduce(f64::max)
        .map_or(Value::Null, Value::from)
}

fn sum_f64<'a>(vs: impl Iterator<Item = &'a Value>) -> Value {
    vs.filter_map(Value::as_f64).sum::<f64>().into()
}

/// The sum, or `null` when every value is `null`.
pub fn sum_u64_or_null<'a>(vs: impl Iterator<Item = &'a Value>) -> Value {
    let known: Vec<u64> = vs.filter_map(Value::as_u64).collect();
    if known.is_empty() {
        Value::Null
    } else {
        known.iter().sum::<u64>().into()
    }
}

fn sum_fields(tests: &[&Value], obj: &str, fields: &[&str]) -> Value {
    let mut m = Map::new();
    for f in fields {
        let n: u64 = tests.iter().filter_map(|t| t[obj][*f].as_u64()).sum();
        m.insert((*f).into(), n.into());
    }
    m.into()
}

/// Counts summed; error kinds summed by name; redirects summed where recorded.
fn requests(tests: &[&Value]) -> Value {
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for t in tests {
        for (k, v) in t["requests"]["errors"].as_object().into_iter().flatten() {
            *errors.entry(k.clone()).or_default() += v.as_u64().unwrap_or(0);
        }
    }
    let redirects = if tests.iter().all(|t| t["requests"]["redirects"].is_null()) {
        Value::Null
    } else {
        let r: Vec<&Value> = tests.iter().map(|t| &t["requests"]).collect();
        sum_fields(
            &r,
            "redirects",
            &["MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"],
        )
    };
    let issued = if tests.iter().all(|t| t["requests"]["issued"].is_u64()) {
        sum_u64_or_null(tests.iter().map(|t| &t["requests"]["issued"]))
    } else {
        Value::Null
    };
    json!({
        "issued": issued,
        "completed": tests.iter().filter_map(|t| t["requests"]["completed"].as_u64()).sum::<u64>(),
        "failed": tests.iter().filter_map(|t| t["requests"]["failed"].as_u64()).sum::<u64>(),
        "errors": errors,
        "redirects": redirects,
        "unanswered": sum_field(tests, "unanswered"),
        "reconnect_attempts": sum_field(tests, "reconnect_attempts"),
        "reconnects": sum_field(tests, "reconnects"),
    })
}

/// A `requests` count summed over the inputs (records before issue 11 lack it: 0).
fn sum_field(tests: &[&Value], name: &str) -> u64 {
    tests
        .iter()
        .filter_map(|t| t["requests"][name].as_u64())
        .sum()
}

/// Cluster nodes by address: completed summed, histograms added, summaries recomputed.
fn nodes(inputs: &[Input], tests: &[&Value], t: usize) -> Result<Value, String> {
    let mut by_addr: Vec<(String, Value, u64, LatencyHistogram)> = Vec::new();
    for (i, test) in inputs.iter().zip(tests) {
        for (n, node) in test["nodes"].as_array().into_iter().flatten().enumerate() {
            let addr = str_of(&node["address"]).to_string();
            let pos = match by_addr.iter().position(|(a, ..)| *a == addr) {
                Some(p) => p,
                None => {
                    by_addr.push((addr, node["role"].clone(), 0, LatencyHistogram::new()));
                    by_addr.len() - 1
                }
            };
            let entry = &mut by_addr[pos];
            entry.2 += node["completed"].as_u64().unwrap_or(0);
            let what = format!("{}: tests[{t}].nodes[{n}].histogram", i.name);
            add_encoded(&mut entry.3, str_of(&node["histogram"]), &what)?;
        }
    }
    Ok(by_addr
        .into_iter()
        .map(|(address, role, completed, h)| {
            json!({"address": address, "role": role, "completed": completed,
                   "latency_us": LatencySummary::of(&h), "histogram": hdr::encode(&h)})
        })
        .collect())
}

/// A command mix's commands by name: counts and rates summed, histograms added, summaries
/// recomputed (the shards ran the same mix, so the names and their order agree).
fn mix(inputs: &[Input], tests: &[&Value], t: usize) -> Result<Value, String> {
    let mut by_name: Vec<(String, u64, u64, f64, LatencyHistogram)> = Vec::new();
    for (i, test) in inputs.iter().zip(tests) {
        for (n, m) in test["mix"].as_array().into_iter().flatten().enumerate() {
            let name = str_of(&m["name"]).to_string();
            let pos = match by_name.iter().position(|e| e.0 == name) {
                Some(p) => p,
                None => {
                    by_name.push((name, 0, 0, 0.0, LatencyHistogram::new()));
                    by_name.len() - 1
                }
            };
            let e = &mut by_name[pos];
            e.1 += m["completed"].as_u64().unwrap_or(0);
            e.2 += m["failed"].as_u64().unwrap_or(0);
            e.3 += m["throughput_rps"].as_f64().unwrap_or(0.0);
            let what = format!("{}: tests[{t}].mix[{n}].histogram", i.name);
            add_encoded(&mut e.4, str_of(&m["histogram"]), &what)?;
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(name, completed, failed, rps, h)| {
            json!({"name": name, "completed": completed, "failed": failed,
                   "throughput_rps": rps, "latency_us": LatencySummary::of(&h),
                   "histogram": hdr::encode(&h)})
        })
        .collect())
}

/// Rows aligned by wall-clock second: a shard whose test began `d` seconds after the earliest
/// shard's has its row `s` added to merged row `s + round(d)`.
fn timeline(tests: &[&Value], starts: &[Option<SystemTime>]) -> Value {
    let base = starts.iter().flatten().min().copied();
    let mut rows: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    for (test, start) in tests.iter().zip(starts) {
        let shift = match (base, start) {
            (Some(b), Some(s)) => s
                .duration_since(b)
                .map_or(0, |d| d.as_secs_f64().round() as u64),
            _ => 0,
        };
        for row in test["timeline"].as_array().into_iter().flatten() {
            let second = row["second"].as_u64().unwrap_or(0) + shift;
            let m = rows.entry(second).or_insert_with(|| {
                let mut m = Map::new();
                m.insert("second".into(), second.into());
                for k in ["completed", "failed"] {
                    m.insert(k.into(), 0u64.into());
                }
                for k in ["p50_us", "p99_us", "max_us"] {
                    m.insert(k.into(), 0.0.into());
                }
                // The first shard's server figures (see the module comment).
                m.insert("server".into(), row["server"].clone());
                m
            });
            for k in ["completed", "failed", "reconnect_attempts", "reconnects"] {
                let n =
                    m.get(k).and_then(Value::as_u64).unwrap_or(0) + row[k].as_u64().unwrap_or(0);
                m.insert(k.into(), n.into());
            }
            failures::add_lost(m, row);
            failures::add_slots(m, row);
            for k in ["p50_us", "p99_us", "max_us"] {
                let v = m[k]
                    .as_f64()
                    .unwrap_or(0.0)
                    .max(row[k].as_f64().unwrap_or(0.0));
                m.insert(k.into(), v.into());
            }
        }
    }
    rows.into_values()
        .map(|mut m| {
            failures::finish_row(&mut m);
            Value::Object(m)
        })
        .collect()
}

/// The shards' verdict when they agree; `unknown` when they do not, with the busiest figures.
fn verdict(tests: &[&Value]) -> Value {
    let mut v = tests[0]["verdict"].clone();
    if tests.iter().any(|t| t["verdict"]["kind"] != v["kind"]) {
        v["kind"] = "unknown".into();
        v["reason"] = "the shards' verdicts differ: see each shard's record".into();
    }
    for k in ["server_cpu_pct", "client_max_thread_cpu_pct"] {
        v[k] = max_f64(tests.iter().map(|t| &t["verdict"][k]));
    }
    v
}
