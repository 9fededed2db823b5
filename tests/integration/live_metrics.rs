//! `--metrics-listen` for real: Debian's Prometheus (`/usr/bin/prometheus`, installed by
//! `scripts/test.sh`; run here with the test's own configuration, data directory and free
//! loopback port, never the packaged service) scrapes a run against Valkey 9.1, and its query API
//! must agree with the run's record: `rate()` of the completed counter with the throughput, the
//! final counter with the total; every query of the shipped Grafana dashboard must return data.
//! Against Redis 7.0, the endpoint is read directly while the run goes on and during
//! `--metrics-linger`: connections up, the shard's labels, the exact totals at the end, and a
//! test name that holds a password shown redacted; `promtool` lints the text and checks the
//! shipped scrape configuration. A server frozen mid-run (SIGSTOP) shows as an outage while it
//! lasts, counted once when the test ends (Valkey 9.1 and Redis 7.0). Bad `--metrics-listen`
//! values are usage errors found before the run.
//!
//! Without Prometheus the test that needs it is skipped with a note, unless
//! `RESPBENCH_REQUIRE_PROMETHEUS=1` (set by `scripts/test.sh`, so CI never skips it).

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::harness::{Server, ServerKind, ServerOptions, TempDir, die_with_parent, free_port};

const PROMETHEUS: &str = "/usr/bin/prometheus";
/// Prometheus's own checker, from the same package.
const PROMTOOL: &str = "/usr/bin/promtool";

/// `promtool ARGS` with `stdin`: whether it passed, and what it said. `None` (skipped, with a
/// note) without Prometheus, unless it is required.
fn promtool(args: &[&str], stdin: &str) -> Option<(bool, String)> {
    if !Path::new(PROMTOOL).exists() {
        assert!(
            std::env::var_os("RESPBENCH_REQUIRE_PROMETHEUS").is_none(),
            "no {PROMTOOL}, and RESPBENCH_REQUIRE_PROMETHEUS is set"
        );
        eprintln!("skipped the promtool check: no {PROMTOOL} (scripts/test.sh installs it)");
        return None;
    }
    let mut child = Command::new(PROMTOOL)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), text))
}

/// `GET path` on a loopback port: (status, body). Bounded by a 5 s timeout.
fn http_get(port: u16, path: &str, accept: Option<&str>) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{accept}\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A Prometheus of the test's own, killed (by its handle) on drop.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    /// Scrapes `127.0.0.1:target` every second, storing in `dir`. Waits until it is ready.
    fn start(dir: &Path, target: u16) -> Prometheus {
        let config = dir.join("prometheus.yml");
        fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
                 scrape_configs:\n  - job_name: respbench\n    static_configs:\n\
                 \x20     - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let mut cmd = Command::new(PROMETHEUS);
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut cmd);
        let child = cmd.spawn().expect("start prometheus");
        let p = Prometheus { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while http_get(port, "/-/ready", None).map(|r| r.0) != Some(200) {
            assert!(Instant::now() < deadline, "prometheus not ready after 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Prometheus hands new targets to its scrapers about 5 s after it starts: until it has
        // tried the target once (down: nothing listens yet), a run would not be scraped.
        while !p.target_tried() {
            assert!(
                Instant::now() < deadline,
                "prometheus never scraped its target"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    fn target_tried(&self) -> bool {
        let Some((200, body)) = http_get(self.port, "/api/v1/targets", None) else {
            return false;
        };
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        v["data"]["activeTargets"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["health"] != "unknown"))
    }

    fn api(&self, path: &str) -> Value {
        let (status, body) = http_get(self.port, path, None).expect("prometheus answers");
        assert_eq!(status, 200, "{path}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{path}: {body}");
        v["data"]["result"].clone()
    }

    /// An instant query at `time` (Unix seconds): its result vector.
    fn query(&self, q: &str, time: f64) -> Vec<Value> {
        let path = format!("/api/v1/query?query={}&time={time:.3}", url_encode(q));
        self.api(&path).as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn value(sample: &Value) -> f64 {
    sample["value"][1].as_str().unwrap().parse().unwrap()
}

fn prometheus_available() -> bool {
    if Path::new(PROMETHEUS).exists() {
        return true;
    }
    assert!(
        std::env::var_os("RESPBENCH_REQUIRE_PROMETHEUS").is_none(),
        "no {PROMETHEUS}, and RESPBENCH_REQUIRE_PROMETHEUS is set"
    );
    eprintln!("skipped: no {PROMETHEUS} (scripts/test.sh installs it)");
    false
}

/// The shipped dashboard, checked for what an import needs, with every query's expression.
fn dashboard_queries() -> Vec<String> {
    let path = repo("deploy/grafana/respbench-dashboard.json");
    let d: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        d["__inputs"][0]["pluginId"], "prometheus",
        "import asks for a Prometheus"
    );
    assert!(d["title"].is_string() && d["uid"].is_string() && d["schemaVersion"].is_u64());
    let vars = d["templating"]["list"].as_array().expect("templating.list");
    assert!(vars.iter().any(|v| v["name"] == "job"), "the $job variable");
    let panels = d["panels"].as_array().expect("panels");
    assert!(panels.len() >= 8, "{} panels", panels.len());
    let mut ids = std::collections::BTreeSet::new();
    let mut exprs = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a panel title");
        assert!(
            ids.insert(p["id"].as_u64().expect("a panel id")),
            "{title}: id twice"
        );
        for k in ["h", "w", "x", "y"] {
            assert!(p["gridPos"][k].is_u64(), "{title}: gridPos.{k}");
        }
        assert!(p["gridPos"]["x"].as_u64().unwrap() + p["gridPos"]["w"].as_u64().unwrap() <= 24);
        assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{title}");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no query");
        for t in targets {
            let e = t["expr"].as_str().expect("expr");
            assert!(e.contains("respbench_"), "{title}: {e}");
            exprs.push(e.to_string());
        }
    }
    exprs
}

/// A dashboard expression with Grafana's variables filled in as a Grafana would.
fn grafana_to_promql(e: &str) -> String {
    e.replace("$__rate_interval", "4s")
        .replace("$__range", "30s")
        .replace("$job", ".*")
}

#[test]
fn prometheus_scrapes_a_valkey_run_and_agrees_with_its_record() {
    if !prometheus_available() {
        return;
    }
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let metrics = free_port();
    let prom = Prometheus::start(dir.path(), metrics);
    let json = dir.path().join("run.json");
    let listen = format!("127.0.0.1:{metrics}");
    // Paced, so the throughput is steady whatever else the machine does: a rate over a few
    // seconds and the whole test's throughput are then comparable.
    let out = server.bench(&[
        "-t",
        "set",
        "-c",
        "4",
        "--rps",
        "2000",
        "--duration",
        "12",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "3",
    ]);
    out.assert_success();
    let record: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let test = &record["tests"][0];
    let completed = test["requests"]["completed"].as_u64().unwrap();
    let throughput = test["throughput_rps"].as_f64().unwrap();
    let duration = test["duration_s"].as_f64().unwrap();
    let started = respbench::timestamp::parse_time(test["started_at"].as_str().unwrap())
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let now = unix_now();

    // The total: the last scrape (during the linger) holds the record's count exactly.
    let total = prom.query("respbench_requests_completed_total{test=\"SET\"}", now);
    assert_eq!(total.len(), 1, "{total:?}");
    assert_eq!(value(&total[0]) as u64, completed);
    let count = prom.query("respbench_request_latency_seconds_count{test=\"SET\"}", now);
    assert_eq!(value(&count[0]) as u64, completed);
    let ended = prom.query("respbench_phase{phase=\"ended\"} == 1", now);
    assert_eq!(ended.len(), 1, "the linger shows the run ended: {ended:?}");

    // rate() over seconds 1 to 11 of the measured phase against the record's own throughput in
    // those seconds (its timeline): the same span, so a machine busy with other tests, which
    // makes the paced rate uneven, moves both alike. The window is long (10 s) because the
    // counter moves with the progress ticks, which a loaded machine delays by up to a second:
    // over a 5 s window that alone read 14% high once.
    let rate = prom.query(
        "rate(respbench_requests_completed_total{test=\"SET\"}[10s])",
        started + 11.0,
    );
    assert_eq!(rate.len(), 1, "{rate:?}");
    let rate = value(&rate[0]);
    let seconds = test["timeline"].as_array().expect("the record's timeline");
    let own: u64 = seconds[1..11]
        .iter()
        .map(|s| s["completed"].as_u64().unwrap())
        .sum();
    let own = own as f64 / 10.0;
    assert!(
        (rate - own).abs() <= 0.1 * own,
        "rate() {rate:.0}/s against the record's {own:.0}/s in the same seconds \
         ({throughput:.0}/s over the whole test)"
    );

    // Every query of the shipped dashboard returns data in the middle of the run.
    let mid = started + duration - 1.0;
    for e in dashboard_queries() {
        let q = grafana_to_promql(&e);
        let result = prom.query(&q, mid);
        assert!(!result.is_empty(), "the dashboard's query has no data: {q}");
    }
}

/// `GET /metrics` until `pred` holds for a body, at most `within`.
fn scrape_until(port: u16, within: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some((200, body)) = http_get(port, "/metrics", None)
            && pred(&body)
        {
            return Some(body);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn the_endpoint_follows_a_redis_run_redacts_its_name_and_ends_at_the_totals() {
    const MARK: &str = "LiveMetricsSecret42";
    let server = Server::start_with(ServerOptions {
        password: Some(MARK.into()),
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        "-a",
        MARK,
        "-c",
        "3",
        "--duration",
        "2",
        "--rps",
        "2000",
        // One shard of four: every series says which.
        "--shard",
        "1/4",
        "--json",
        json.to_str().unwrap(),
        "--metrics-listen",
        &listen,
        // Longer than the wait below: a Ctrl-C ends it.
        "--metrics-linger",
        "60",
        "--",
        "AUTH",
        "default",
        MARK,
    ]);
    let shard = "shard=\"1\",shards=\"4\"";
    let name = format!("{shard},test=\"AUTH default <redacted>\"");
    let measuring = scrape_until(port, Duration::from_secs(10), |b| {
        b.contains("phase=\"measuring\"} 1") && b.contains("respbench_requests_per_second{")
    })
    .expect("the endpoint shows the measured phase");
    let up = format!("respbench_connections_up{{{shard}}}");
    assert_eq!(sample(&measuring, &up), Some(3.0), "{measuring}");
    assert!(measuring.contains(&format!("respbench_current_test{{{name}}} 1")));
    // OpenMetrics when asked for, as Prometheus does.
    let (status, om) = http_get(
        port,
        "/metrics",
        Some("application/openmetrics-text;version=1.0.0"),
    )
    .unwrap();
    assert_eq!(status, 200);
    assert!(om.ends_with("# EOF\n") && om.contains("# TYPE respbench_requests_completed counter"));
    assert_eq!(http_get(port, "/", None).map(|r| r.0), Some(404));
    let last = scrape_until(port, Duration::from_secs(10), |b| {
        b.contains("phase=\"ended\"} 1")
    })
    .expect("the linger shows the run ended");
    // The run's work is done (its record written): a Ctrl-C in the linger ends it, exit 0.
    assert!(json.exists(), "the record is written before the linger");
    run.interrupt();
    let out = run.finish(Duration::from_secs(20));
    out.assert_success();
    let record: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let completed = record["tests"][0]["requests"]["completed"]
        .as_f64()
        .unwrap();
    assert!(completed > 0.0);
    let series = format!("respbench_requests_completed_total{{{name}}}");
    assert_eq!(sample(&last, &series), Some(completed), "{last}");
    for body in [&measuring, &om, &last] {
        assert!(!body.contains(MARK), "the password in /metrics:\n{body}");
    }
    // Prometheus's linter has nothing to say about names, types, units or labels.
    if let Some((ok, said)) = promtool(&["check", "metrics"], &measuring) {
        assert!(
            ok && said.trim().is_empty(),
            "promtool check metrics:\n{said}"
        );
    }
}

/// A server frozen mid-run (SIGSTOP, then SIGCONT): `/metrics` shows the outage while it
/// lasts, not only when the test ends (`respbench_outage_active` 1, `respbench_outages_total`
/// 1), and the test's end counts it once, as the record lists it.
fn an_outage_is_served_while_it_lasts(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        "-t",
        "get",
        "-c",
        "4",
        "--duration",
        "12",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--metrics-listen",
        &listen,
        // Longer than the waits below: a Ctrl-C ends it.
        "--metrics-linger",
        "60",
    ]);
    let total = "respbench_outages_total{test=\"GET\"}";
    let active = "respbench_outage_active";
    // A second of the measured phase was handed over, with replies and no outage.
    let served = scrape_until(port, Duration::from_secs(20), |b| {
        b.contains("respbench_requests_per_second{")
            && sample(b, "respbench_requests_per_second{test=\"GET\"}") > Some(0.0)
    })
    .expect("a second with replies was handed over");
    assert_eq!(sample(&served, total), Some(0.0), "{served}");
    assert_eq!(sample(&served, active), Some(0.0), "{served}");
    server.signal(libc::SIGSTOP);
    let during = scrape_until(port, Duration::from_secs(20), |b| {
        sample(b, active) == Some(1.0)
    });
    server.signal(libc::SIGCONT);
    let during = during.expect("the outage is served while the server is frozen");
    assert_eq!(sample(&during, total), Some(1.0), "{during}");
    assert!(during.contains("phase=\"measuring\"} 1"), "{during}");
    let last = scrape_until(port, Duration::from_secs(40), |b| {
        b.contains("phase=\"ended\"} 1")
    })
    .expect("the linger shows the run ended");
    run.interrupt();
    run.finish(Duration::from_secs(20)).assert_success();
    let record: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let outages = record["tests"][0]["outages"].as_array().unwrap().len();
    assert_eq!(outages, 1, "{}", record["tests"][0]["outages"]);
    // The record's count, the one found while it ran: counted once.
    assert_eq!(sample(&last, total), Some(1.0), "{last}");
    assert_eq!(sample(&last, active), Some(0.0), "{last}");
}

#[test]
fn an_outage_is_served_while_it_lasts_valkey() {
    an_outage_is_served_while_it_lasts(ServerKind::Valkey);
}

#[test]
fn an_outage_is_served_while_it_lasts_redis() {
    an_outage_is_served_while_it_lasts(ServerKind::Redis);
}

#[test]
fn the_shipped_scrape_configuration_is_valid() {
    let config = repo("deploy/prometheus/prometheus.yml");
    if let Some((ok, said)) = promtool(&["check", "config", config.to_str().unwrap()], "") {
        assert!(ok && said.contains("SUCCESS"), "{said}");
    }
    // The Kubernetes job names the annotations the Indexed Job sets.
    let pods = fs::read_to_string(repo("deploy/prometheus/kubernetes-pods.yml")).unwrap();
    let job = fs::read_to_string(repo("deploy/k8s/indexed-job.yaml")).unwrap();
    for annotation in ["scrape", "port", "path"] {
        let meta = format!("__meta_kubernetes_pod_annotation_prometheus_io_{annotation}");
        assert!(pods.contains(&meta), "{meta}");
        assert!(
            job.contains(&format!("prometheus.io/{annotation}:")),
            "{annotation}"
        );
    }
    assert!(job.contains("\"--metrics-listen\"\n            - \"0.0.0.0:9100\""));
}

#[test]
fn a_bad_metrics_address_is_a_usage_error_before_the_run() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let json = dir.path().join("earlier.json");
    fs::write(&json, "{\"an\": \"earlier record\"}").unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = format!("127.0.0.1:{}", taken.local_addr().unwrap().port());
    for (addr, needle) in [
        (taken.as_str(), "cannot listen there"),
        ("localhost", "expected an address and port"),
        ("127.0.0.1:99999", "expected an address and port"),
    ] {
        let out = server.bench(&[
            "-n",
            "100",
            "--json",
            json.to_str().unwrap(),
            "--metrics-listen",
            addr,
        ]);
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(
            line.contains("--metrics-listen") && line.contains(needle),
            "{line}"
        );
        assert!(out.stdout.is_empty(), "no load ran: {}", out.stdout);
    }
    // The record of an earlier run is left as it was.
    assert_eq!(
        fs::read_to_string(&json).unwrap(),
        "{\"an\": \"earlier record\"}"
    );
    let linger_alone = server.bench(&["-n", "10", "--metrics-linger", "5"]);
    linger_alone.assert_code(2);
    assert!(
        linger_alone
            .single_stderr_line()
            .contains("needs --metrics-listen")
    );
}
