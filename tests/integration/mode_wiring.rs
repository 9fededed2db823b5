//! Modes with their own loops go through the run's journal and live metrics (the one journal
//! writer, the one `/metrics` endpoint): `--connect-storm` scraped while it runs and SIGKILLed
//! mid-way leaves a journal that `respbench recover` turns into a record whose `storm` block has
//! its finished seconds (connection totals included), outcome `killed`; so do a `respbench replay` of a 30 s trace, a memtier-mode run and
//! a `--fuzz` run (all scraped too) killed after 2 s; a `--pubsub` test is on `/metrics` with
//! its exact totals, and a `--pubsub` or `--stream` run SIGKILLed mid-way is recovered with its
//! finished seconds (a killed fuzz run as its `fuzz` block). While they run, `/metrics` shows
//! their phase and connections (the replay's, the delivery test's: their progress ticks) and
//! the server's figures (`--fuzz`, `--find-max` windows: the server watch's samplers). On
//! Valkey 9.1 and Redis 7.0.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{
    Running, Server, ServerKind, ServerOptions, TempDir, free_port, run_respbench,
};

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The body of `GET /metrics` on a loopback port (5 s timeout), if it answered.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    Some(text.split_once("\r\n\r\n")?.1.to_string())
}

/// The completed-requests counter of every test in a scrape, added up (none: `None`).
fn completed(body: &str) -> Option<f64> {
    body.lines()
        .filter(|l| l.starts_with("respbench_requests_completed_total{"))
        .map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Scrapes (at most 30 s) until a test named `test` (any: empty) is served and the counter is
/// above `above`.
fn counter_above(port: u16, test: &str, above: f64) -> f64 {
    let until = Instant::now() + Duration::from_secs(30);
    let label = format!("test=\"{test}\"");
    let mut last = String::new();
    while Instant::now() < until {
        if let Some(body) = scrape(port) {
            if (test.is_empty() || body.contains(&label))
                && let Some(n) = completed(&body).filter(|n| *n > above)
            {
                return n;
            }
            last = body;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("the completed counter of {test} never went above {above}:\n{last}");
}

/// Scrapes (at most 30 s) until `pred` holds for a body, and returns it.
fn scrape_until(port: u16, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    let mut last = String::new();
    while Instant::now() < until {
        if let Some(body) = scrape(port) {
            if pred(&body) {
                return body;
            }
            last = body;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("/metrics never showed {what}:\n{last}");
}

/// A series' value in a scrape (`series` with its labels, if any).
fn gauge(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The measured phase with `connections` connections, all of them up: what the test's progress
/// ticks tell `/metrics` (without them a mode with its own loop showed `warmup` and 0).
fn measuring_with(port: u16, connections: f64) {
    let body = scrape_until(port, "the measured phase", |b| {
        b.contains("phase=\"measuring\"} 1")
    });
    assert_eq!(
        gauge(&body, "respbench_connections"),
        Some(connections),
        "{body}"
    );
    assert_eq!(
        gauge(&body, "respbench_connections_up"),
        Some(connections),
        "{body}"
    );
}

/// Waits (at most 30 s) until the journal holds `needle`.
fn wait_for_journal(journal: &Path, needle: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        // The line holding the needle must be whole (its newline there): a reader can see an
        // appended line before all of it has landed (a read of a regular file is not serialised
        // with a write), and a kill then leaves a torn last line that recover rightly drops — a
        // second not yet journaled (one run in four of a full suite read duration 1.0 s).
        let whole = |t: &str| t.find(needle).is_some_and(|i| t[i..].contains('\n'));
        if std::fs::read_to_string(journal).is_ok_and(|t| whole(&t)) {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("the journal {} never held {needle:?}", journal.display());
}

/// `respbench recover JOURNAL -o OUT`, and the record it wrote.
fn recover(journal: &Path, out: &Path) -> Value {
    run_respbench(
        &[
            "recover".to_string(),
            path(journal).to_string(),
            "-o".to_string(),
            path(out).to_string(),
        ],
        None,
    )
    .assert_success();
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// The recovered record's only test: named `name`, at least two seconds, totals that are the
/// sum of its seconds, and something completed.
fn assert_recovered(rec: &Value, name: &str) {
    assert_eq!(rec["outcome"], "killed", "{rec}");
    let test = &rec["tests"][0];
    assert_eq!(test["name"], name, "{test}");
    let seconds = test["timeline"].as_array().unwrap();
    assert!(seconds.len() >= 2, "{} s of timeline", seconds.len());
    let sum: u64 = seconds
        .iter()
        .map(|s| s["completed"].as_u64().unwrap())
        .sum();
    let completed = test["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 0, "{test}");
    assert_eq!(
        completed, sum,
        "totals are the sum of the recovered seconds"
    );
}

fn sigkill(run: Running) {
    run.signal(libc::SIGKILL);
    let out = run.finish(Duration::from_secs(10));
    assert_eq!(out.code, None, "killed by a signal");
}

fn storm_is_journaled_and_live(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("storm.json");
    let journal = dir.path().join("storm.json.partial");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    // Paced, so the run is long enough to scrape and kill, and bounded if the kill went astray.
    let run = server.spawn_bench(&[
        "--connect-storm",
        "-c",
        "2",
        "--rps",
        "200",
        "--duration",
        "30",
        "--metrics-listen",
        &listen,
        "--json",
        path(&json),
        "PING",
    ]);
    let first = counter_above(port, "connect storm", 0.0);
    let later = counter_above(port, "connect storm", first);
    assert!(
        later > first,
        "the connects counter moves: {first} then {later}"
    );
    // Two whole seconds journaled, then a kill mid-storm.
    wait_for_journal(&journal, "\"second\":1,");
    sigkill(run);
    assert!(!json.exists(), "no record: the run was killed before it");

    let out = dir.path().join("recovered.json");
    let rec = recover(&journal, &out);
    crate::record::check_with_python(&out);
    // A storm's block, as its finished run writes it, not a test.
    assert_eq!(rec["outcome"], "killed", "{rec}");
    assert_eq!(rec["tests"].as_array().map(Vec::len), Some(0), "{rec}");
    let storm = &rec["storm"];
    assert_eq!(
        (storm["openers"].as_u64(), storm["target_rate"].as_u64()),
        (Some(2), Some(200)),
        "{storm}"
    );
    assert_eq!(storm["interrupted"], true);
    let completed = storm["completed"].as_u64().unwrap();
    assert!(completed > 0, "{storm}");
    assert_eq!(
        storm["attempted"].as_u64(),
        Some(completed + storm["failed"].as_u64().unwrap())
    );
    assert!(storm["duration_s"].as_f64().unwrap() >= 2.0, "{storm}");
    // Each connection's total, second by second: the latency is kept.
    let total = &storm["total"];
    assert!(!total["hdr"].as_str().unwrap().is_empty(), "{total}");
    assert!(
        total["latency_us"]["p50"].as_f64().unwrap() > 0.0,
        "{total}"
    );
    assert!(
        storm["server"].as_array().is_some_and(|s| !s.is_empty()),
        "the watch's samples: {storm}"
    );
}

#[test]
fn storm_is_journaled_and_live_valkey() {
    storm_is_journaled_and_live(ServerKind::Valkey);
}

#[test]
fn storm_is_journaled_and_live_redis() {
    storm_is_journaled_and_live(ServerKind::Redis);
}

fn replay_killed_leaves_a_journal(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let trace = dir.path().join("long.trace");
    let json = dir.path().join("replay.json");
    let journal = dir.path().join("replay.json.partial");
    // 30 s of traffic at 50 commands a second on 5 clients, replayed in real time.
    let mut text = String::new();
    for i in 0..1_500u64 {
        let client = 6000 + i % 5;
        text.push_str(&format!(
            "{}.{:06} [0 127.0.0.1:{client}] \"INCR\" \"r:{client}\"\n",
            1_700_000_000 + i / 50,
            (i % 50) * 20_000
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let port = server.port().to_string();
    let metrics = free_port();
    let listen = format!("127.0.0.1:{metrics}");
    let run = Running::spawn_args(
        &[
            "replay",
            "-p",
            &port,
            "--json",
            path(&json),
            "--metrics-listen",
            &listen,
            path(&trace),
        ]
        .map(String::from),
    );
    let first = counter_above(metrics, "REPLAY", 0.0);
    // The trace's 5 clients, one connection each.
    measuring_with(metrics, 5.0);
    let later = counter_above(metrics, "REPLAY", first);
    assert!(
        later > first,
        "the replay's counter moves: {first} then {later}"
    );
    wait_for_journal(&journal, "\"second\":1,");
    sigkill(run);
    assert!(!json.exists(), "no record: the replay was killed before it");
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    assert_recovered(&rec, "REPLAY");
    assert!(
        rec["command_line"].to_string().contains("replay"),
        "{}",
        rec["command_line"]
    );
}

#[test]
fn replay_killed_leaves_a_journal_valkey() {
    replay_killed_leaves_a_journal(ServerKind::Valkey);
}

#[test]
fn replay_killed_leaves_a_journal_redis() {
    replay_killed_leaves_a_journal(ServerKind::Redis);
}

fn memtier_is_journaled_and_live(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("memtier.json");
    let journal = dir.path().join("memtier.json.partial");
    let port = free_port();
    let run = Running::spawn_args(
        &[
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &server.port().to_string(),
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=30",
            "--hide-histogram",
            &format!("--metrics-listen=127.0.0.1:{port}"),
            "--json",
            path(&json),
        ]
        .map(String::from),
    );
    let first = counter_above(port, "", 0.0);
    let later = counter_above(port, "", first);
    assert!(
        later > first,
        "the requests counter moves: {first} then {later}"
    );
    wait_for_journal(&journal, "\"second\":1,");
    sigkill(run);
    assert!(!json.exists(), "no record: the run was killed before it");
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    let name = rec["tests"][0]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!name.is_empty(), "{rec}");
    assert_recovered(&rec, &name);
}

#[test]
fn memtier_is_journaled_and_live_valkey() {
    memtier_is_journaled_and_live(ServerKind::Valkey);
}

#[test]
fn memtier_is_journaled_and_live_redis() {
    memtier_is_journaled_and_live(ServerKind::Redis);
}

/// A `--pubsub` test on `/metrics`: served while it runs, and its counter ends at the
/// deliveries its record counts (2 subscribers × 200 messages).
fn pubsub_is_live(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("pubsub.json");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        "--pubsub",
        "2",
        "-n",
        "200",
        "--rps",
        "200",
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "3",
        "--json",
        path(&json),
    ]);
    counter_above(port, "", 0.0);
    // The linger: the messages published, counted by second like the deliveries, end at their
    // total. (The deliveries' counter, which the progress ticks move, can reach it before.)
    let body = scrape_until(port, "the linger", |b| b.contains("phase=\"ended\"} 1"));
    let end = completed(&body).unwrap_or_default();
    assert!(
        body.contains("respbench_messages_published_total{test=\"PUBLISH -> SUBSCRIBE\"} 200\n"),
        "{body}"
    );
    // Ends on its own after the linger (a Ctrl-C could land before the linger, which then
    // would not end it).
    run.finish(Duration::from_secs(30)).assert_success();
    assert_eq!(end, 400.0, "the live counter ends at the deliveries");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rec["tests"][0]["delivery"]["delivered"], 400, "{rec}");
}

#[test]
fn pubsub_is_live_valkey() {
    pubsub_is_live(ServerKind::Valkey);
}

#[test]
fn pubsub_is_live_redis() {
    pubsub_is_live(ServerKind::Redis);
}

/// A `--pubsub` run (2 subscribers) or a `--stream` run (a group of 2), 200 messages a second
/// for 15 s, on `/metrics` while it runs, SIGKILLed after two journaled seconds: the journal's
/// seconds count the messages sent, and `recover` reads the deliveries of its finished seconds
/// (never more than the pacing allows by each second's end: `per_message` deliveries each) with
/// their latencies, as a test's.
fn delivery_killed_keeps_its_seconds(kind: ServerKind, (mode, name, per_message): Delivery) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("pubsub.json");
    let journal = dir.path().join("pubsub.json.partial");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        mode[0],
        mode[1],
        "-n",
        "3000",
        "--rps",
        "200",
        "--metrics-listen",
        &listen,
        "--json",
        path(&json),
    ]);
    // Deliveries show while the test runs (it runs 15 s; the kill below finds it running),
    // with its 2 receivers and 1 publisher.
    counter_above(port, name, 0.0);
    measuring_with(port, 3.0);
    wait_for_journal(&journal, "\"second\":1,");
    sigkill(run);
    assert!(!json.exists(), "no record: the run was killed before it");
    // The journal's seconds count the messages sent too: by the end of second s at most the
    // 200 (s + 1) the pacing allows (a late message goes out in a later second), and some.
    let text = std::fs::read_to_string(&journal).unwrap();
    let sent: Vec<u64> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "second")
        .map(|v| v["published"].as_u64().unwrap_or(0))
        .collect();
    let mut cumulative = 0;
    for (s, n) in sent.iter().enumerate() {
        cumulative += n;
        assert!(cumulative <= 200 * (s as u64 + 1), "{sent:?}");
    }
    assert!(sent.len() >= 2 && cumulative > 0, "{sent:?}");

    let rec = recover(&journal, &dir.path().join("recovered.json"));
    assert_recovered(&rec, name);
    let test = &rec["tests"][0];
    let mut cumulative = 0;
    for (i, s) in test["timeline"].as_array().unwrap().iter().enumerate() {
        cumulative += s["completed"].as_u64().unwrap();
        assert!(
            cumulative <= 200 * per_message * (i as u64 + 1),
            "200 messages a second, {per_message} deliveries each: {test}"
        );
    }
    assert!(
        test["latency_us"]["corrected"]["max"]
            .as_f64()
            .is_some_and(|m| m > 0.0),
        "publish -> receive latencies recovered: {test}"
    );
}

/// A delivery mode's arguments, its test's name, and the deliveries each message owes.
type Delivery = ([&'static str; 2], &'static str, u64);
const PUBSUB: Delivery = (["--pubsub", "2"], "PUBLISH -> SUBSCRIBE", 2);
const STREAM: Delivery = (["--stream", "2"], "XADD -> XREADGROUP", 1);

#[test]
fn pubsub_killed_keeps_its_seconds_valkey() {
    delivery_killed_keeps_its_seconds(ServerKind::Valkey, PUBSUB);
}

#[test]
fn pubsub_killed_keeps_its_seconds_redis() {
    delivery_killed_keeps_its_seconds(ServerKind::Redis, PUBSUB);
}

#[test]
fn stream_killed_keeps_its_seconds_valkey() {
    delivery_killed_keeps_its_seconds(ServerKind::Valkey, STREAM);
}

#[test]
fn stream_killed_keeps_its_seconds_redis() {
    delivery_killed_keeps_its_seconds(ServerKind::Redis, STREAM);
}

/// `--fuzz` with `--json` and `--metrics-listen`: the commands sent move the `fuzz` test's
/// counter, and a SIGKILL leaves a journal whose seconds `recover` reads as the record's `fuzz`
/// block (`recovered.rs` compares it with a Ctrl-C record's).
fn fuzz_is_journaled_and_live(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("fuzz.json");
    let journal = dir.path().join("fuzz.json.partial");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        "--fuzz",
        "--fuzz-loglevel",
        "error",
        "-c",
        "2",
        "-n",
        "100000000",
        "-r",
        "100",
        "--fuzz-exclude",
        "config|resetstat",
        "--metrics-listen",
        &listen,
        "--json",
        path(&json),
    ]);
    let first = counter_above(port, "fuzz", 0.0);
    // The server's figures, from a server watch of the fuzz run's own.
    scrape_until(port, "the server's figures", |b| {
        b.contains("respbench_server_connected_clients{server=")
    });
    let later = counter_above(port, "fuzz", first);
    assert!(
        later > first,
        "the commands sent move: {first} then {later}"
    );
    wait_for_journal(&journal, "\"second\":1,");
    sigkill(run);
    assert!(!json.exists(), "no record: the fuzzer was killed before it");
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    assert_eq!(rec["outcome"], "killed", "{rec}");
    assert_eq!(rec["tests"].as_array().map(Vec::len), Some(0), "{rec}");
    let f = &rec["fuzz"];
    assert!(f["seconds"].as_f64().unwrap() >= 2.0, "{f}");
    assert!(f["ok_replies"].as_u64().unwrap() > 0, "{f}");
    assert!(f["commands_sent"].as_u64().unwrap() >= f["ok_replies"].as_u64().unwrap());
}

#[test]
fn fuzz_is_journaled_and_live_valkey() {
    fuzz_is_journaled_and_live(ServerKind::Valkey);
}

#[test]
fn fuzz_is_journaled_and_live_redis() {
    fuzz_is_journaled_and_live(ServerKind::Redis);
}

/// `--find-max`: each window passes its server watch's samplers to `/metrics`, so the server's
/// figures follow the search (before, a window passed none: a search showed no server figures,
/// or stale ones of an earlier test).
fn find_max_windows_show_the_servers_figures(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let run = server.spawn_bench(&[
        "-c",
        "2",
        "--rps",
        "200",
        "--find-max",
        "p99<1s",
        "--step-duration",
        "2",
        "--metrics-listen",
        &listen,
        "ping",
    ]);
    scrape_until(port, "a window's server figures", |b| {
        b.contains("respbench_server_used_memory_bytes{server=")
    });
    run.interrupt();
    run.finish(Duration::from_secs(30)).assert_code(130);
}

#[test]
fn find_max_windows_show_the_servers_figures_valkey() {
    find_max_windows_show_the_servers_figures(ServerKind::Valkey);
}

#[test]
fn find_max_windows_show_the_servers_figures_redis() {
    find_max_windows_show_the_servers_figures(ServerKind::Redis);
}
