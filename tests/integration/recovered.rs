//! A killed run recovered by `respbench recover` is the record a Ctrl-C at its last full second
//! would have written (issue 22), in every mode that writes one: each mode runs twice on the
//! same server, once stopped by Ctrl-C and once SIGKILLed, both after two journaled seconds, and
//! the recovered record has every field the Ctrl-C record has (the same shape, save what
//! `docs/journal.md` lists as a killed run's differences), the mode's block where the Ctrl-C
//! record has it (`fuzz`, `storm`, a test's `delivery`), and its figures as exactly (the
//! seconds' full-precision parts). A journal that cannot be written (a file size limit) is
//! gone when the run ends. On Valkey 9.1 and Redis 7.0.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{Running, Server, ServerKind, ServerOptions, TempDir, run_respbench};

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// Waits (at most 30 s) until the journal holds two full seconds of the test under way: the
/// line of second 1 whole (its newline there). A reader can see the start of an appended line
/// before all of it has landed, and a kill then can leave that line torn, which recover rightly
/// drops: one second recovered, not two (as `mode_wiring::wait_for_journal`).
fn two_seconds_journaled(journal: &Path) {
    let until = Instant::now() + Duration::from_secs(30);
    let whole = |t: &str| {
        t.find("\"second\":1,")
            .is_some_and(|i| t[i..].contains('\n'))
    };
    while Instant::now() < until {
        if std::fs::read_to_string(journal).is_ok_and(|t| whole(&t)) {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("the journal {} never held two seconds", journal.display());
}

/// How a mode is started: `respbench` with `args`, and `--json FILE` added (`replay`: before
/// its trace, the last argument).
type Start<'a> = &'a dyn Fn(&[&str]) -> Running;

/// The mode's record after a Ctrl-C, and after a SIGKILL recovered; and the killed run's
/// journal's text.
fn both(dir: &Path, start: Start<'_>) -> (Value, Value, String) {
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let json = dir.join("ctrl-c.json");
    let run = start(&["--json", path(&json)]);
    two_seconds_journaled(&dir.join("ctrl-c.json.partial"));
    run.interrupt();
    let out = run.finish(Duration::from_secs(60));
    assert!(out.code.is_some(), "{}", out.stderr);
    let ctrl_c = read(&json);
    assert_eq!(ctrl_c["outcome"], "interrupted", "{ctrl_c}");

    let json = dir.join("killed.json");
    let journal = dir.join("killed.json.partial");
    let run = start(&["--json", path(&json)]);
    two_seconds_journaled(&journal);
    run.signal(libc::SIGKILL);
    assert_eq!(run.finish(Duration::from_secs(10)).code, None, "killed");
    let text = std::fs::read_to_string(&journal).unwrap();
    let out = dir.join("recovered.json");
    run_respbench(
        &["recover", path(&journal), "-o", path(&out)].map(String::from),
        None,
    )
    .assert_success();
    crate::record::check_with_python(&out);
    let recovered = read(&out);
    assert_eq!(recovered["outcome"], "killed", "{recovered}");
    (ctrl_c, recovered, text)
}

/// Every path to a value that is not null (`.tests[].requests.issued`), arrays' elements
/// together; under the `data` paths (maps whose keys are data, as error words), the map only.
fn shape(v: &Value, at: &str, data: &[&str], out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) if !data.iter().any(|d| at.ends_with(d)) => {
            for (k, x) in m.iter().filter(|(_, x)| !x.is_null()) {
                let p = format!("{at}.{k}");
                out.insert(p.clone());
                shape(x, &p, data, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                shape(x, &format!("{at}[]"), data, out);
            }
        }
        _ => {}
    }
}

/// Maps keyed by data, not by field name.
const DATA: &[&str] = &[
    ".errors",
    ".errors_by_kind",
    ".lost",
    ".redirects",
    ".server_errorstats",
    ".skipped",
    ".routed",
    ".crossslot",
];

/// Fields a Ctrl-C record may have and a recovered one not, because a killed run never
/// reaches the point that measures them (`docs/journal.md`), or that vary between two runs of
/// the same mode; and fields any one run may lack (a slot without a sample, a second without a
/// server interval).
const EITHER: &[&str] = &[
    // Between any two runs: what a second, a slot or the machine happened to measure.
    ".client_delay_us",
    ".client_cpu_pct",
    ".client_runqueue_pct",
    ".max_us",
    ".timeline[].server[]",
    ".outages[]",
    ".latency_split",
    ".machine.others_cpu_pct",
    ".latency_percentiles",
    ".verdict",
    ".error",
];

/// The paths of `ctrl_c` that `recovered` lacks, and those it has more, outside `allowed`
/// (prefixes, or parts of a path) and [`EITHER`]: none.
fn assert_same_shape(ctrl_c: &Value, recovered: &Value, allowed: &[&str]) {
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    shape(ctrl_c, "", DATA, &mut a);
    shape(recovered, "", DATA, &mut b);
    let ok = |p: &&String| {
        !allowed
            .iter()
            .chain(EITHER)
            .any(|x| p.starts_with(x) || p.contains(x))
    };
    let missing: Vec<&String> = a.difference(&b).filter(ok).collect();
    let more: Vec<&String> = b.difference(&a).filter(ok).collect();
    assert!(
        missing.is_empty() && more.is_empty(),
        "the recovered record differs from the Ctrl-C one in its fields:\n\
         missing {missing:#?}\nmore {more:#?}"
    );
}

/// Each second line of the journal that counted something carries its full-precision part.
fn every_second_is_exact(journal: &str) {
    for line in journal.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        if v["kind"] == "second" && v["completed"].as_u64().unwrap_or(0) > 0 {
            assert!(v["exact"]["corrected"].is_string(), "{line}");
        }
    }
}

fn server(kind: ServerKind) -> Server {
    Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    })
}

fn fuzz_is_recovered_as_its_block(kind: ServerKind) {
    let server = server(kind);
    let dir = TempDir::new();
    let start = |json: &[&str]| {
        let mut args = vec![
            "--fuzz",
            "--fuzz-loglevel",
            "error",
            "-c",
            "2",
            "-n",
            "100000000",
            "-r",
            "100",
            "--seed",
            "42",
            "--fuzz-exclude",
            "config|resetstat|shutdown|debug|flushall|flushdb",
        ];
        args.extend_from_slice(json);
        server.spawn_bench(&args)
    };
    let (ctrl_c, rec, _) = both(dir.path(), &start);
    for r in [&ctrl_c, &rec] {
        assert_eq!(r["tests"].as_array().map(Vec::len), Some(0), "no test: {r}");
        assert_eq!(r["fuzz"]["seed"], 42, "{r}");
    }
    // The server's errorstats are read when the fuzzer ends.
    assert_same_shape(&ctrl_c, &rec, &[".fuzz.server_errorstats"]);
    let f = &rec["fuzz"];
    let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("fuzz.{k}: {f}"));
    let errors: u64 = f["errors_by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(n("commands_sent") > 0 && errors > 0, "{f}");
    assert!(n("ok_replies") + errors <= n("commands_sent"), "{f}");
    assert_eq!(
        (
            f["clients"].clone(),
            f["commands_in_table"].clone(),
            f["verdict"].clone()
        ),
        (
            ctrl_c["fuzz"]["clients"].clone(),
            ctrl_c["fuzz"]["commands_in_table"].clone(),
            "survived".into()
        )
    );
    assert!(f["seconds"].as_f64().unwrap() >= 2.0, "{f}");
    assert_ne!(
        rec["ended_at"], rec["started_at"],
        "it ends at its last second"
    );
}

#[test]
fn a_killed_fuzz_run_is_recovered_as_its_block_on_valkey() {
    fuzz_is_recovered_as_its_block(ServerKind::Valkey);
}

#[test]
fn a_killed_fuzz_run_is_recovered_as_its_block_on_redis() {
    fuzz_is_recovered_as_its_block(ServerKind::Redis);
}

fn delivery_is_recovered_with_its_block(kind: ServerKind, mode: [&str; 2], owed: u64) {
    let server = server(kind);
    let dir = TempDir::new();
    let start = |json: &[&str]| {
        let mut args = vec![mode[0], mode[1], "-n", "3000", "--rps", "200"];
        args.extend_from_slice(json);
        server.spawn_bench(&args)
    };
    let (ctrl_c, rec, journal) = both(dir.path(), &start);
    // Only the run's end and the server monitor know these (`docs/journal.md`).
    let monitor = [
        ".tests[].delivery.fanout",
        ".tests[].delivery.acked",
        ".tests[].delivery.buffer_limit_disconnections",
        ".tests[].delivery.seconds[].output_buffer_bytes",
        ".tests[].delivery.seconds[].pending",
        ".tests[].delivery.seconds[].server_lag",
    ];
    assert_same_shape(&ctrl_c, &rec, &monitor);
    every_second_is_exact(&journal);
    let t = &rec["tests"][0];
    let d = &t["delivery"];
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
    assert_eq!(n(d, "expected"), owed * n(d, "published"), "{d}");
    assert_eq!(n(d, "lost"), n(d, "expected") - n(d, "delivered"), "{d}");
    let q = &t["requests"];
    assert_eq!(
        (n(q, "issued"), n(q, "completed"), n(q, "unanswered")),
        (n(d, "expected"), n(d, "delivered"), n(d, "lost")),
        "{q}"
    );
    assert_eq!(d["mode"], ctrl_c["tests"][0]["delivery"]["mode"]);
    assert_eq!(n(d, "receivers"), 2);
    // The publish → receive latencies at full precision: 3 significant figures, as Ctrl-C's.
    let mut h = respbench::metrics::LatencyHistogram::new();
    let hist = t["histograms"]["corrected"].as_str().unwrap();
    respbench::record::hdr::add_encoded(&mut h, hist, "recovered").unwrap();
    assert_eq!(h.len(), n(q, "completed"));
    assert_eq!(t["histograms"]["uncorrected"], t["histograms"]["corrected"]);
}

#[test]
fn a_killed_pubsub_test_keeps_its_delivery_block_on_valkey() {
    delivery_is_recovered_with_its_block(ServerKind::Valkey, ["--pubsub", "2"], 2);
}

#[test]
fn a_killed_pubsub_test_keeps_its_delivery_block_on_redis() {
    delivery_is_recovered_with_its_block(ServerKind::Redis, ["--pubsub", "2"], 2);
}

#[test]
fn a_killed_stream_test_keeps_its_delivery_block_on_valkey() {
    delivery_is_recovered_with_its_block(ServerKind::Valkey, ["--stream", "2"], 1);
}

#[test]
fn a_killed_stream_test_keeps_its_delivery_block_on_redis() {
    delivery_is_recovered_with_its_block(ServerKind::Redis, ["--stream", "2"], 1);
}

fn replay_is_recovered_field_for_field(kind: ServerKind) {
    let server = server(kind);
    let dir = TempDir::new();
    let trace = dir.path().join("long.trace");
    // 30 s of a SET/GET/INCR mix at 90 commands a second on 3 clients, in real time.
    let mut text = String::new();
    for i in 0..2_700u64 {
        let client = 6000 + i % 3;
        let command = ["\"SET\" \"k\" \"v\"", "\"GET\" \"k\"", "\"INCR\" \"n\""][(i % 3) as usize];
        text.push_str(&format!(
            "{}.{:06} [0 127.0.0.1:{client}] {command}\n",
            1_700_000_000 + i / 90,
            (i % 90) * 11_000
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let port = server.port().to_string();
    let start = |json: &[&str]| {
        let mut args = vec!["replay", "-p", &port, "--threads", "2"];
        args.extend_from_slice(json);
        args.push(path(&trace));
        Running::spawn_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    let (ctrl_c, rec, journal) = both(dir.path(), &start);
    // The replay block (the schedule and its slip) is the final record's only.
    assert_same_shape(&ctrl_c, &rec, &[".replay"]);
    every_second_is_exact(&journal);
    let t = &rec["tests"][0];
    let mix: Vec<&str> = t["mix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(mix, ["SET", "GET", "INCR"], "{t}");
    let sum: u64 = t["mix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["completed"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, t["requests"]["completed"].as_u64().unwrap());
    assert_eq!(
        t["client_threads_cpu_pct"].as_array().map(Vec::len),
        Some(2),
        "each replay thread's CPU: {t}"
    );
    assert!(!t["histograms"]["uncorrected"].as_str().unwrap().is_empty());
}

#[test]
fn a_killed_replay_is_recovered_field_for_field_on_valkey() {
    replay_is_recovered_field_for_field(ServerKind::Valkey);
}

#[test]
fn a_killed_replay_is_recovered_field_for_field_on_redis() {
    replay_is_recovered_field_for_field(ServerKind::Redis);
}

/// The body of `GET /metrics` on a loopback port (5 s timeout), if it answered.
fn scrape(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    Some(text.split_once("\r\n\r\n")?.1.to_string())
}

/// `replay --json - --journal PATH`: the journal goes where it is asked to (and is removed when
/// the record is written); `--metrics-linger` keeps `/metrics` up after the replay.
fn replay_journals_with_json_to_stdout(kind: ServerKind) {
    let server = server(kind);
    let dir = TempDir::new();
    let trace = dir.path().join("t.trace");
    let mut text = String::new();
    for i in 0..300u64 {
        text.push_str(&format!(
            "{}.{:06} [0 127.0.0.1:6001] \"INCR\" \"c\"\n",
            1_700_000_000 + i / 100,
            (i % 100) * 10_000
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let journal = dir.path().join("replay.partial");
    let metrics = crate::harness::free_port();
    let listen = format!("127.0.0.1:{metrics}");
    let port = server.port().to_string();
    let args = [
        "replay",
        "-p",
        &port,
        "--json",
        "-",
        "--journal",
        path(&journal),
        "--metrics-listen",
        &listen,
        "--metrics-linger",
        "20",
        path(&trace),
    ];
    let run = Running::spawn_args(&args.map(String::from));
    two_seconds_journaled(&journal);
    // The replay ends after its 3 s trace; its figures are still served while it lingers.
    let until = Instant::now() + Duration::from_secs(30);
    while journal.exists() && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(!journal.exists(), "removed once the record is written");
    let body = scrape(metrics).expect("served while it lingers");
    assert!(body.contains("test=\"REPLAY\""), "{body}");
    run.interrupt();
    let out = run.finish(Duration::from_secs(30));
    let rec: Value = serde_json::from_str(&out.stdout).expect("the record on stdout");
    assert_eq!(rec["tests"][0]["requests"]["completed"], 300, "{rec}");
    let bad = run_respbench(
        &["replay", "--metrics-linger", "3", path(&trace)].map(String::from),
        None,
    );
    bad.assert_code(2)
        .assert_stderr_contains("--metrics-linger needs --metrics-listen");
}

#[test]
fn replay_journals_with_json_to_stdout_on_valkey() {
    replay_journals_with_json_to_stdout(ServerKind::Valkey);
}

#[test]
fn replay_journals_with_json_to_stdout_on_redis() {
    replay_journals_with_json_to_stdout(ServerKind::Redis);
}

fn storm_is_recovered_with_its_stages(kind: ServerKind) {
    let server = server(kind);
    let dir = TempDir::new();
    let start = |json: &[&str]| {
        let mut args = vec![
            "--connect-storm",
            "-c",
            "2",
            "--rps",
            "200",
            "--duration",
            "30",
        ];
        args.extend_from_slice(json);
        args.push("PING");
        server.spawn_bench(&args)
    };
    let (ctrl_c, rec, journal) = both(dir.path(), &start);
    // Read from the server and the client's machine when the storm ends, and each failure's
    // first message (`docs/journal.md`).
    let at_the_end = [
        ".storm.connections_received",
        ".storm.connected_clients_after",
        ".storm.client_limits",
        ".storm.failures[].message",
    ];
    assert_same_shape(&ctrl_c, &rec, &at_the_end);
    every_second_is_exact(&journal);
    let s = &rec["storm"];
    let names = |r: &Value| -> Vec<String> {
        r["storm"]["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&rec), names(&ctrl_c), "{s}");
    assert!(names(&rec).contains(&"connect".to_string()));
    let completed = s["completed"].as_u64().unwrap();
    for stage in s["stages"].as_array().unwrap() {
        assert_eq!(
            stage["latency_us"]["count"].as_u64(),
            Some(completed),
            "{stage}"
        );
    }
}

#[test]
fn a_killed_storm_keeps_its_stages_on_valkey() {
    storm_is_recovered_with_its_stages(ServerKind::Valkey);
}

#[test]
fn a_killed_storm_keeps_its_stages_on_redis() {
    storm_is_recovered_with_its_stages(ServerKind::Redis);
}

/// A plain benchmark test with client-side caching: the recovered test has the pushes, the
/// refused reconnects (0, not unknown), the invalidations by second and each slot's client
/// figures, as the Ctrl-C record.
fn benchmark_keeps_what_it_counts_beside_the_replies(kind: ServerKind) {
    let server = server(kind);
    let dir = TempDir::new();
    let start = |json: &[&str]| {
        let mut args = vec![
            "-3",
            "--enable-tracking",
            "-c",
            "2",
            "-r",
            "50",
            "--duration",
            "30",
            "-q",
        ];
        args.extend_from_slice(json);
        // Each client reads keys (tracked) and writes others (invalidating what is tracked).
        args.extend_from_slice(&[
            "--",
            "GET",
            "k:__rand_int__",
            ";",
            "SET",
            "k:__rand_int__",
            "v",
        ]);
        server.spawn_bench(&args)
    };
    let (ctrl_c, rec, _) = both(dir.path(), &start);
    assert_same_shape(&ctrl_c, &rec, &[]);
    let t = &rec["tests"][0];
    assert_eq!(t["requests"]["reconnect_refusals"], 0, "known: {t}");
    assert!(
        t["pushes"]["invalidations"].as_u64().unwrap() > 0,
        "the SETs invalidate what the clients track: {t}"
    );
    let per_second: u64 = t["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["invalidations"].as_u64().unwrap_or(0))
        .sum();
    assert!(per_second > 0, "{t}");
    let slots_with_cpu = t["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["slots"].as_array().cloned().unwrap_or_default())
        .filter(|slot| slot["client_cpu_pct"].is_number())
        .count();
    assert!(slots_with_cpu > 0, "each slot's client CPU: {t}");
}

#[test]
fn a_killed_benchmark_keeps_its_pushes_and_slots_on_valkey() {
    benchmark_keeps_what_it_counts_beside_the_replies(ServerKind::Valkey);
}

#[test]
fn a_killed_benchmark_keeps_its_pushes_and_slots_on_redis() {
    benchmark_keeps_what_it_counts_beside_the_replies(ServerKind::Redis);
}

/// A journal whose writes fail (a file size limit of a few kB, its signal ignored, so a write
/// past it fails as on a full disk): the run warns once, goes on, writes its record, and leaves
/// no journal that would stop the next run with the same `--journal`.
#[test]
fn a_journal_that_cannot_be_written_is_gone_when_the_run_ends() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let journal = dir.path().join("run.partial");
    let port = server.port().to_string();
    let args = [
        "-p",
        &port,
        "-t",
        "set",
        "-c",
        "2",
        "--duration",
        "3",
        "-q",
        "--json",
        "-",
        "--journal",
        path(&journal),
    ];
    let limited = |args: &[&str]| {
        // `trap '' XFSZ` is inherited through exec: the write fails with EFBIG instead.
        let script = "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"";
        let out = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_respbench"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr,
        )
    };
    let (code, stdout, stderr) = limited(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("cannot be written") && stderr.contains(path(&journal)),
        "{stderr}"
    );
    let rec: Value = serde_json::from_str(&stdout).expect("the record on stdout");
    assert_eq!(rec["outcome"], "completed");
    assert!(!journal.exists(), "no truncated journal left behind");
    let (code, _, stderr) = limited(&args);
    assert_eq!(
        code,
        Some(0),
        "the next run with the same --journal starts: {stderr}"
    );
}
