//! memtier's `--json-out-file`: `configuration`, `run information`, then `ALL STATS` (one run)
//! or each run's `RUN #n RESULTS` (`--print-all-runs`) and the `--run-count` aggregates, each a
//! `Runtime` and one object per row with memtier's keys and units (milliseconds, KB/sec).
//!
//! Differences a reader may meet (docs/memtier.md): the `authenticate` value and a `uri`'s
//! password are written redacted; the Totals row carries respbench's coordinated-omission
//! corrected latency beside memtier's under `Corrected Latency (respbench)`; `Histogram log
//! format` is absent (respbench's histograms are in its own record, `--json`); KB/sec figures
//! are worked out from the request and reply sizes; keys come out sorted.

use serde_json::{Map, Value, json};

use crate::cli::memtier::{MemtierOptions, defaults};
use crate::record::TestRecord;
use crate::record::memtier_data::VerifyRecord;
use crate::redact;

use super::stats::{Block, Row};

/// The whole document.
/// `length`: the run information's length entry, `None` when no test ran (`--verify-only`);
/// `verify`: what `--data-verify` found.
pub fn document(
    opts: &MemtierOptions,
    blocks: &[Block],
    tests: &[&TestRecord],
    length: Option<(&str, u64)>,
    verify: Option<&VerifyRecord>,
) -> Value {
    let mut top = Map::new();
    top.insert("configuration".into(), configuration(opts));
    if let Some(length) = length {
        top.insert(
            "run information".into(),
            json!({
                "Threads": opts.threads,
                "Connections per thread": opts.clients,
                length.0: length.1,
                "Format version": 2,
            }),
        );
    }
    for (i, b) in blocks.iter().enumerate() {
        top.insert(b.title.clone(), block(b, tests.get(i).copied()));
    }
    if let Some(v) = verify {
        // memtier's keys, its spelling kept.
        top.insert(
            "client verifications results".into(),
            json!({
                "keys verified successfuly": v.verified,
                "keys failed": v.missing + v.mismatched,
            }),
        );
    }
    Value::Object(top)
}

fn block(b: &Block, test: Option<&TestRecord>) -> Value {
    let mut m = Map::new();
    m.insert(
        "Runtime".into(),
        json!({
            "Start time": b.start_ms,
            "Finish time": b.finish_ms,
            "Total duration": b.finish_ms - b.start_ms,
            "Time unit": "MILLISECONDS",
            "Interrupted": if b.interrupted { "true" } else { "false" },
        }),
    );
    for r in &b.rows {
        let series = match (r.name.as_str(), test) {
            ("Totals", Some(t)) => time_series(t),
            _ => Value::Object(Map::new()),
        };
        m.insert(r.name.clone(), row(r, series));
    }
    Value::Object(m)
}

fn row(r: &Row, series: Value) -> Value {
    let round = |v: f64, d: i32| (v * 10f64.powi(d)).round() / 10f64.powi(d);
    let avg = r.avg_ms.unwrap_or(0.0);
    let mut pcts = Map::new();
    for (p, ms) in &r.percentiles {
        pcts.insert(format!("p{p:.2}"), json!(round(*ms, 3)));
    }
    let mut o = json!({
        "Count": r.count,
        "Ops/sec": round(r.ops, 2),
        "Hits/sec": round(r.hits.unwrap_or(0.0), 2),
        "Misses/sec": round(r.misses.unwrap_or(0.0), 2),
        "Connection Errors/sec": 0.0,
        "Connection Errors": 0,
        "Latency": round(avg, 3),
        "Average Latency": round(avg, 3),
        "Accumulated Latency": (avg * r.count as f64).round() as u64,
        "Min Latency": round(r.min_ms, 3),
        "Max Latency": round(r.max_ms, 3),
        "KB/sec": round(r.kb_tx + r.kb_rx, 2),
        "KB/sec RX/TX": round(r.kb_tx + r.kb_rx, 2),
        "KB/sec RX": round(r.kb_rx, 2),
        "KB/sec TX": round(r.kb_tx, 2),
        "Time-Serie": series,
        "Percentile Latencies": pcts,
    });
    if let Some(c) = &r.corrected {
        let mut cm = Map::new();
        cm.insert("Average Latency".into(), json!(round(c.avg_ms, 3)));
        for (p, ms) in &c.percentiles {
            cm.insert(format!("p{p:.2}"), json!(round(*ms, 3)));
        }
        o["Corrected Latency (respbench)"] = Value::Object(cm);
    }
    o
}

/// Per second: count and latency figures from the record's timeline (ms).
fn time_series(t: &TestRecord) -> Value {
    let mut m = Map::new();
    for s in &t.timeline {
        m.insert(
            s.second.to_string(),
            json!({
                "Count": s.completed,
                "Max Latency": s.max_us / 1000.0,
                "p50.00": s.p50_us / 1000.0,
                "p99.00": s.p99_us / 1000.0,
            }),
        );
    }
    Value::Object(m)
}

/// memtier's `configuration` block, from the options as given (memtier's defaults otherwise).
fn configuration(o: &MemtierOptions) -> Value {
    let pairs = configuration_pairs(o);
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// `--show-config`: the configuration values as memtier prints them, `name = value` a line in
/// its order (the same values as the JSON's `configuration` block, secrets redacted).
pub fn show_config(o: &MemtierOptions) -> String {
    let mut out = String::new();
    for (k, v) in configuration_pairs(o) {
        let v = match v {
            Value::String(s) => s,
            Value::Null => "(null)".into(),
            other => other.to_string(),
        };
        out.push_str(&format!("{k} = {v}\n"));
    }
    out
}

/// memtier's name for the address family `-4`/`-6` chose.
fn family(o: &MemtierOptions) -> &'static str {
    let last = o.given.iter().rev().find(|(n, _)| *n == "-4" || *n == "-6");
    match last.map(|(n, _)| *n) {
        Some("-4") => "AF_INET",
        Some(_) => "AF_INET6",
        None => "Unspecified",
    }
}

/// The configuration block's entries in memtier's order.
fn configuration_pairs(o: &MemtierOptions) -> Vec<(&'static str, Value)> {
    let raw = |name: &str| o.raw(name).map(|v| v.to_string_lossy().into_owned());
    let text = |name: &str, default: &str| json!(raw(name).unwrap_or_else(|| default.into()));
    let path = |name: &str| raw(name).map_or(Value::Null, Value::String);
    let num = |name: &str, default: u64| {
        json!(
            raw(name)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(default)
        )
    };
    let either = |on: bool| if on { "true" } else { "false" };
    let flag = |name: &str| json!(either(raw(name).is_some()));
    let uri = raw("-u")
        .map(|u| redact::uri(&u).unwrap_or(u))
        .unwrap_or_default();
    let auth = if raw("-a").is_some() {
        redact::REDACTED
    } else {
        ""
    };
    let requests = match o.requests {
        crate::cli::memtier::Requests::PerClient(n) if o.test_time.is_none() => json!(n),
        crate::cli::memtier::Requests::AllKeys => json!("allkeys"),
        _ => json!(0),
    };
    let pairs: Vec<(&str, Value)> = vec![
        ("server", json!(text("-h", "localhost"))),
        ("port", json!(num("-p", 6379))),
        ("uri", json!(uri)),
        ("unix socket", json!(path("-S"))),
        ("address family", json!(family(o))),
        ("protocol", json!(text("-P", "redis"))),
        ("out_file", json!(path("-o"))),
        ("tls", json!(flag("--tls"))),
        ("cert", json!(path("--cert"))),
        ("key", json!(path("--key"))),
        ("cacert", json!(path("--cacert"))),
        ("tls_skip_verify", json!(flag("--tls-skip-verify"))),
        ("sni", json!(path("--sni"))),
        ("client_stats", json!(path("--client-stats"))),
        ("run_count", json!(o.run_count)),
        ("debug", json!(u8::from(o.debug))),
        ("requests", requests),
        ("rate_limit", json!(o.rate_limiting.unwrap_or(0))),
        ("clients", json!(o.clients)),
        ("threads", json!(o.threads)),
        ("test_time", json!(o.test_time.unwrap_or(0))),
        ("ratio", json!(text("--ratio", "1:10"))),
        ("pipeline", json!(num("--pipeline", 1))),
        ("data_size", json!(num("-d", defaults::DATA_SIZE as u64))),
        ("data_offset", json!(0)),
        ("random_data", json!("false")),
        ("data_size_range", json!(text("--data-size-range", "0:0"))),
        ("data_size_list", json!(text("--data-size-list", ""))),
        ("data_size_pattern", json!(text("--data-size-pattern", "R"))),
        ("expiry_range", json!("0:0")),
        ("data_import", json!(path("--data-import"))),
        (
            "data_verify",
            json!(either(
                raw("--data-verify").or(raw("--verify-only")).is_some()
            )),
        ),
        ("verify_only", json!(flag("--verify-only"))),
        ("generate_keys", json!(flag("--generate-keys"))),
        (
            "key_prefix",
            json!(text("--key-prefix", defaults::KEY_PREFIX)),
        ),
        ("key_minimum", json!(num("--key-minimum", 0))),
        (
            "key_maximum",
            json!(num("--key-maximum", defaults::KEY_MAXIMUM)),
        ),
        ("key_pattern", json!(text("--key-pattern", "R:R"))),
        (
            "key_stddev",
            json!(
                raw("--key-stddev")
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            ),
        ),
        (
            "key_median",
            json!(
                raw("--key-median")
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            ),
        ),
        (
            "key_zipf_exp",
            json!(
                raw("--key-zipf-exp")
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
            ),
        ),
        ("reconnect_interval", json!(num("--reconnect-interval", 0))),
        ("connection_timeout", json!(num("--connection-timeout", 0))),
        (
            "thread_conn_start_min_jitter_micros",
            json!(num("--thread-conn-start-min-jitter-micros", 0)),
        ),
        (
            "thread_conn_start_max_jitter_micros",
            json!(num("--thread-conn-start-max-jitter-micros", 0)),
        ),
        ("multi_key_get", json!(0)),
        ("authenticate", json!(auth)),
        ("select-db", json!(num("--select-db", 0))),
        ("no-expiry", json!(flag("--no-expiry"))),
        ("wait-ratio", json!(text("--wait-ratio", "0:0"))),
        ("num-slaves", json!(text("--num-slaves", "0:0"))),
        ("wait-timeout", json!(text("--wait-timeout", "0-0"))),
        (
            "print-all-runs",
            json!(if o.print_all_runs { "true" } else { "false" }),
        ),
    ];
    pairs
}
