//! memtier's `--json-out-file`: `configuration`, `run information`, then `ALL STATS` (one run)
//! or each run's `RUN #n RESULTS` (`--print-all-runs`) and the `--run-count` aggregates, each a
//! `Runtime` and one object per row with memtier's keys and units (milliseconds, KB/sec).
//!
//! Differences a reader may meet (docs/memtier.md): the `authenticate` value and a `uri`'s
//! password are written redacted; each row with requests carries respbench's
//! coordinated-omission corrected latency beside memtier's under `Corrected Latency
//! (respbench)`; keys come out sorted.

use serde_json::{Map, Value, json};

use crate::memtier::cli::{MemtierOptions, defaults};
use crate::record::TestRecord;
use crate::record::shape::VerifyRecord;
use crate::redact;

use super::hdr_files::micros;
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
        let mut v = block(b, tests.get(i).copied());
        active_clients(opts, &mut v);
        top.insert(b.title.clone(), v);
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

/// An option given as a whole number (`None`: not given).
fn number(opts: &MemtierOptions, name: &str) -> Option<u64> {
    (opts.raw(name)).and_then(|v| v.to_string_lossy().parse().ok())
}

/// A staircase ramp's `Active Clients`: per second of the Totals' `Time-Serie`, the clients
/// per thread the ramp had reached by then and their total, worked out from the ramp's values
/// as memtier works them out (start + steps done × step, at most `--clients`).
fn active_clients(opts: &MemtierOptions, block: &mut Value) {
    let given = |name: &str| number(opts, name);
    let (Some(start), Some(step), Some(every)) = (
        given("--clients-start"),
        given("--clients-step"),
        given("--step-duration"),
    ) else {
        return;
    };
    let seconds: Vec<u64> = match block["Totals"]["Time-Serie"].as_object() {
        Some(ts) => ts.keys().filter_map(|k| k.parse().ok()).collect(),
        None => return,
    };
    let max = u64::from(opts.clients);
    let mut m = Map::new();
    for s in seconds {
        let per_thread = (start + s / every.max(1) * step).min(max);
        m.insert(
            s.to_string(),
            json!({
                "Clients per thread": per_thread,
                "Total clients": per_thread * u64::from(opts.threads),
            }),
        );
    }
    block["Active Clients"] = Value::Object(m);
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
        let mut v = row(r, series);
        if let ("Totals", Some(t)) = (r.name.as_str(), test) {
            // memtier counts connection errors in Totals only (0 in each command's row): with
            // `--reconnect-on-error`, each failure is followed by one reopen attempt.
            let errors = t.requests.reconnect_attempts;
            v["Connection Errors"] = json!(errors);
            v["Connection Errors/sec"] = json!(errors as f64 / t.duration_s.max(f64::MIN_POSITIVE));
        }
        m.insert(r.name.clone(), v);
    }
    Value::Object(m)
}

fn row(r: &Row, series: Value) -> Value {
    let round = |v: f64, d: i32| (v * 10f64.powi(d)).round() / 10f64.powi(d);
    let l = &r.latency;
    let avg = l.avg_ms.unwrap_or(0.0);
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
        "Min Latency": round(l.min_ms, 3),
        "Max Latency": round(l.max_ms, 3),
        "KB/sec": round(r.kb_tx + r.kb_rx, 2),
        "KB/sec RX/TX": round(r.kb_tx + r.kb_rx, 2),
        "KB/sec RX": round(r.kb_rx, 2),
        "KB/sec TX": round(r.kb_tx, 2),
        "Time-Serie": series,
        "Percentile Latencies": percentiles(&l.percentiles, None),
    });
    // memtier's histogram of the row, in µs (its unit), as `hdr_string_write` encodes it.
    let us = l.hist.as_ref().map(micros).unwrap_or_default();
    o["Percentile Latencies"]["Histogram log format"] =
        json!({ "Compressed Histogram": crate::record::hdr::encode(&us) });
    if let Some(c) = &r.corrected {
        let avg = json!(round(c.avg_ms.unwrap_or(0.0), 3));
        o["Corrected Latency (respbench)"] = percentiles(&c.percentiles, Some(avg));
    }
    o
}

/// `p50.00`-style keys (memtier's) in ms, after `Average Latency` when given.
fn percentiles(pcts: &[(f64, f64)], avg: Option<Value>) -> Value {
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    let mut m = Map::new();
    if let Some(avg) = avg {
        m.insert("Average Latency".into(), avg);
    }
    for (p, ms) in pcts {
        m.insert(format!("p{p:.2}"), json!(round(*ms)));
    }
    Value::Object(m)
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
    let mut m: Map<String, Value> = (pairs.into_iter())
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // A staircase ramp's three values, as numbers, only when a ramp was asked (as memtier).
    let given = |name: &str| number(o, name);
    if let Some(start) = given("--clients-start") {
        m.insert("clients_start".into(), json!(start));
        for (key, flag) in [
            ("clients_step", "--clients-step"),
            ("step_duration", "--step-duration"),
        ] {
            m.insert(key.into(), json!(given(flag).unwrap_or(0)));
        }
    }
    Value::Object(m)
}

/// `--show-config`: the configuration values as memtier's `config_print` writes them, `name =
/// value` a line in its order: the same values as the JSON's `configuration` block (secrets
/// redacted), in its text forms (`yes`/`no`, ranges `a-b`, `%f` numbers, `(null)`), with
/// `json-out-file` and without `key_zipf_exp`, as memtier's text has them.
pub fn show_config(o: &MemtierOptions) -> String {
    let pairs = configuration_pairs(o);
    let json_out = o
        .json_out_file
        .as_ref()
        .map_or(Value::Null, |p| Value::String(p.display().to_string()));
    let mut out = String::new();
    for name in SHOW_CONFIG_ORDER {
        let v = match *name {
            "json-out-file" => &json_out,
            _ => match pairs.iter().find(|(k, _)| k == name) {
                Some((_, v)) => v,
                None => continue,
            },
        };
        let text = match v {
            Value::String(s) if s == "true" => "yes".to_string(),
            Value::String(s) if s == "false" => "no".to_string(),
            Value::String(s) if RANGES.contains(name) => s.replace(':', "-"),
            Value::String(s) => s.clone(),
            Value::Null => "(null)".into(),
            Value::Number(n) if n.is_f64() => format!("{:.6}", n.as_f64().unwrap_or(0.0)),
            other => other.to_string(),
        };
        out.push_str(&format!("{name} = {text}\n"));
    }
    out
}

/// `config_print`'s lines, in its order.
const SHOW_CONFIG_ORDER: &[&str] = &[
    "server",
    "port",
    "uri",
    "unix socket",
    "address family",
    "protocol",
    "tls",
    "cert",
    "key",
    "cacert",
    "tls_skip_verify",
    "sni",
    "out_file",
    "client_stats",
    "run_count",
    "debug",
    "requests",
    "rate_limit",
    "clients",
    "threads",
    "test_time",
    "ratio",
    "pipeline",
    "data_size",
    "data_offset",
    "random_data",
    "data_size_range",
    "data_size_list",
    "data_size_pattern",
    "expiry_range",
    "data_import",
    "data_verify",
    "verify_only",
    "generate_keys",
    "key_prefix",
    "key_minimum",
    "key_maximum",
    "key_pattern",
    "key_stddev",
    "key_median",
    "reconnect_interval",
    "connection_timeout",
    "thread_conn_start_min_jitter_micros",
    "thread_conn_start_max_jitter_micros",
    "multi_key_get",
    "authenticate",
    "select-db",
    "no-expiry",
    "wait-ratio",
    "num-slaves",
    "wait-timeout",
    "json-out-file",
    "print-all-runs",
];

/// The ranges memtier's text writes `min-max` (its JSON `min:max`).
const RANGES: &[&str] = &["data_size_range", "expiry_range", "num-slaves"];

/// memtier's name for the address family `-4`/`-6` chose.
fn family(o: &MemtierOptions) -> &'static str {
    let last = o.given.iter().rev().find(|(n, _)| *n == "-4" || *n == "-6");
    match last.map(|(n, _)| *n) {
        Some("-4") => "AF_INET",
        Some(_) => "AF_INET6",
        None => "Unspecified",
    }
}

/// The options as given, read by their spelling with memtier's default where absent (the JSON
/// writes what memtier would have used).
struct Given<'a>(&'a MemtierOptions);

impl Given<'_> {
    fn raw(&self, name: &str) -> Option<String> {
        self.0.raw(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn text(&self, name: &str, default: &str) -> Value {
        json!(self.raw(name).unwrap_or_else(|| default.into()))
    }

    fn path(&self, name: &str) -> Value {
        self.raw(name).map_or(Value::Null, Value::String)
    }

    fn num(&self, name: &str, default: u64) -> Value {
        json!(
            self.raw(name)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(default)
        )
    }

    fn float(&self, name: &str) -> Value {
        json!(
            self.raw(name)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        )
    }

    /// A range given `min-max`, which memtier's JSON writes `min:max`.
    fn range(&self, name: &str) -> Value {
        json!(
            self.raw(name)
                .map_or("0:0".into(), |v| v.replacen('-', ":", 1))
        )
    }

    fn flag(&self, name: &str) -> Value {
        either(self.raw(name).is_some())
    }
}

/// memtier's words for a switch.
fn either(on: bool) -> Value {
    json!(if on { "true" } else { "false" })
}

/// The configuration block's entries in memtier's order.
fn configuration_pairs(o: &MemtierOptions) -> Vec<(&'static str, Value)> {
    let g = Given(o);
    let mut pairs = connection_pairs(&g);
    pairs.extend(load_pairs(&g));
    pairs.extend(data_pairs(&g));
    pairs.extend(key_pairs(&g));
    pairs.extend(connection_timing_pairs(&g));
    pairs
}

/// Where memtier connects and how (the server, TLS, the output files).
fn connection_pairs(g: &Given) -> Vec<(&'static str, Value)> {
    let uri = g
        .raw("-u")
        .map(|u| redact::uri(&u).unwrap_or(u))
        .unwrap_or_default();
    vec![
        ("server", g.text("-h", "localhost")),
        ("port", g.num("-p", 6379)),
        ("uri", json!(uri)),
        ("unix socket", g.path("-S")),
        ("address family", json!(family(g.0))),
        ("protocol", g.text("-P", "redis")),
        ("out_file", g.path("-o")),
        ("tls", g.flag("--tls")),
        ("cert", g.path("--cert")),
        ("key", g.path("--key")),
        ("cacert", g.path("--cacert")),
        ("tls_skip_verify", g.flag("--tls-skip-verify")),
        ("sni", g.path("--sni")),
        ("client_stats", g.path("--client-stats")),
    ]
}

/// How much load: runs, requests, rate, clients and threads, the ratio and the pipeline.
fn load_pairs(g: &Given) -> Vec<(&'static str, Value)> {
    let o = g.0;
    let requests = match o.requests {
        crate::memtier::cli::Requests::PerClient(n) if o.test_time.is_none() => json!(n),
        crate::memtier::cli::Requests::AllKeys => json!("allkeys"),
        _ => json!(0),
    };
    vec![
        ("run_count", json!(o.run_count)),
        ("debug", json!(u8::from(o.debug))),
        ("requests", requests),
        ("rate_limit", json!(o.rate_limiting.unwrap_or(0))),
        ("clients", json!(o.clients)),
        ("threads", json!(o.threads)),
        ("test_time", json!(o.test_time.unwrap_or(0))),
        ("ratio", g.text("--ratio", "1:10")),
        ("pipeline", g.num("--pipeline", 1)),
    ]
}

/// The values: sizes, their pattern, expiry, import and verify. memtier's default of 32-byte
/// values holds only without sizes given otherwise or an import.
fn data_pairs(g: &Given) -> Vec<(&'static str, Value)> {
    let sized = ["--data-size-range", "--data-size-list", "--data-import"]
        .iter()
        .any(|n| g.raw(n).is_some());
    let data_size = if sized { 0 } else { defaults::DATA_SIZE as u64 };
    let verify = g.raw("--data-verify").or(g.raw("--verify-only")).is_some();
    vec![
        ("data_size", g.num("-d", data_size)),
        ("data_offset", g.num("--data-offset", 0)),
        ("random_data", g.flag("-R")),
        ("data_size_range", g.range("--data-size-range")),
        ("data_size_list", g.text("--data-size-list", "")),
        ("data_size_pattern", g.text("--data-size-pattern", "R")),
        ("expiry_range", g.range("--expiry-range")),
        ("data_import", g.path("--data-import")),
        ("data_verify", either(verify)),
        ("verify_only", g.flag("--verify-only")),
        ("generate_keys", g.flag("--generate-keys")),
    ]
}

/// The keys: prefix, range and pattern. memtier's defaults of the prefix and range hold only for
/// generated keys (an import's keys are the file's).
fn key_pairs(g: &Given) -> Vec<(&'static str, Value)> {
    let imported = g.raw("--data-import").is_some() && g.raw("--generate-keys").is_none();
    let (key_prefix, key_maximum) = match imported {
        true => (g.path("--key-prefix"), g.num("--key-maximum", 0)),
        false => (
            g.text("--key-prefix", defaults::KEY_PREFIX),
            g.num("--key-maximum", defaults::KEY_MAXIMUM),
        ),
    };
    vec![
        ("key_prefix", key_prefix),
        ("key_minimum", g.num("--key-minimum", 0)),
        ("key_maximum", key_maximum),
        ("key_pattern", g.text("--key-pattern", "R:R")),
        ("key_stddev", g.float("--key-stddev")),
        ("key_median", g.float("--key-median")),
        ("key_zipf_exp", g.float("--key-zipf-exp")),
    ]
}

/// Reconnecting, start jitter, multi-key gets, authentication (redacted), the db, `WAIT` and the
/// last switches.
fn connection_timing_pairs(g: &Given) -> Vec<(&'static str, Value)> {
    let auth = if g.raw("-a").is_some() {
        redact::REDACTED
    } else {
        ""
    };
    vec![
        ("reconnect_interval", g.num("--reconnect-interval", 0)),
        ("connection_timeout", g.num("--connection-timeout", 0)),
        (
            "thread_conn_start_min_jitter_micros",
            g.num("--thread-conn-start-min-jitter-micros", 0),
        ),
        (
            "thread_conn_start_max_jitter_micros",
            g.num("--thread-conn-start-max-jitter-micros", 0),
        ),
        ("multi_key_get", g.num("--multi-key-get", 0)),
        ("authenticate", json!(auth)),
        ("select-db", g.num("--select-db", 0)),
        ("no-expiry", g.flag("--no-expiry")),
        ("wait-ratio", g.text("--wait-ratio", "0:0")),
        ("num-slaves", g.range("--num-slaves")),
        ("wait-timeout", g.text("--wait-timeout", "0-0")),
        ("print-all-runs", either(g.0.print_all_runs)),
    ]
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::memtier::cli::{MemtierInvocation, parse};

    fn config(argv: &[&str]) -> String {
        let Ok(MemtierInvocation::Run(_, opts)) = parse(argv.iter().map(OsString::from), None)
        else {
            panic!("parse {argv:?}")
        };
        show_config(&opts)
    }

    fn line<'t>(text: &'t str, name: &str) -> &'t str {
        let head = format!("{name} = ");
        text.lines()
            .find_map(|l| l.strip_prefix(head.as_str()))
            .unwrap_or_else(|| panic!("no {name}:\n{text}"))
    }

    #[test]
    fn an_import_without_generated_keys_has_no_key_defaults_as_memtier() {
        let text = config(&["--data-import=dump.csv"]);
        assert_eq!(line(&text, "key_prefix"), "(null)");
        assert_eq!(line(&text, "key_maximum"), "0");
        assert_eq!(line(&text, "data_size"), "0");
        // Generated keys take the defaults; given values stand.
        let text = config(&["--data-import=dump.csv", "--generate-keys"]);
        assert_eq!(line(&text, "key_prefix"), "memtier-");
        assert_eq!(line(&text, "key_maximum"), "10000000");
        let text = config(&[
            "--data-import=dump.csv",
            "--generate-keys",
            "--key-maximum=50",
        ]);
        assert_eq!(line(&text, "key_maximum"), "50");
        let text = config(&["--data-size-range=4-8"]);
        assert_eq!(
            line(&text, "data_size"),
            "0",
            "memtier: 32 only without sizes given"
        );
        let plain = config(&[]);
        assert_eq!(line(&plain, "key_prefix"), "memtier-");
        assert_eq!(line(&plain, "data_size"), "32");
    }

    #[test]
    fn show_config_has_memtiers_text_forms_and_order() {
        let argv = [
            "--expiry-range=5-10",
            "--json-out-file=out.json",
            "--tls",
            "-R",
        ];
        let text = config(&argv);
        let names: Vec<&str> = text
            .lines()
            .map(|l| l.split(" = ").next().unwrap())
            .collect();
        assert_eq!(names, SHOW_CONFIG_ORDER);
        assert_eq!(line(&text, "tls"), "yes");
        assert_eq!(line(&text, "random_data"), "yes");
        assert_eq!(line(&config(&[]), "random_data"), "no");
        assert_eq!(line(&text, "expiry_range"), "5-10");
        assert_eq!(line(&text, "key_stddev"), "0.000000");
        assert_eq!(line(&text, "json-out-file"), "out.json");
        assert_eq!(line(&text, "unix socket"), "(null)");
        // The JSON's configuration: the same values, memtier's JSON forms.
        let Ok(MemtierInvocation::Run(_, opts)) = parse(argv.iter().map(OsString::from), None)
        else {
            panic!("parse")
        };
        let c = configuration(&opts);
        assert_eq!(
            (c["expiry_range"].as_str(), c["random_data"].as_str()),
            (Some("5:10"), Some("true"))
        );
    }
}
