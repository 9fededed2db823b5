//! `--json` records and the server watch against real servers (Debian's Redis 7.0 and Valkey
//! 9.1): identity, schema and HDR checks by an independent implementation
//! (`tests/record/check_record.py`), passwords, `INFO` denied by ACL, server CPU on a busy and an
//! idle server, `--no-server-stats`, `--json -`, and the record after Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Output, Server, ServerOptions, TempDir, wait_until};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Runs the independent checker (schema, HDR decoding, timeline sums) on `record`.
#[track_caller]
pub(crate) fn check_with_python(record: &Path) {
    let out = Command::new("python3")
        .arg(repo("tests/record/check_record.py"))
        .arg(repo("docs/record.schema.json"))
        .arg(record)
        .output()
        .expect("python3 runs tests/record/check_record.py");
    assert!(
        out.status.success(),
        "check_record.py failed ({:?}); missing packages are installed by `bash scripts/test.sh`\n\
         {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The records an earlier build wrote (`tests/fixtures/records/`, read back by `compare`,
/// `report` and `merge` tests) still pass the independent checker: its rules follow the record's
/// history (a find-max answer chosen by one window, before `find_max.boundary`), so a rule change
/// that would call an earlier build's honest record wrong fails here.
#[test]
fn the_records_earlier_builds_wrote_pass_the_independent_checker() {
    let dir = repo("tests/fixtures/records");
    let mut records: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the fixtures folder")
        .map(|e| e.expect("a fixture").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    records.sort();
    assert!(records.len() >= 8, "{records:?} in {}", dir.display());
    // One checker for them all: its start (the schema library) is most of its cost.
    let out = Command::new("python3")
        .arg(repo("tests/record/check_record.py"))
        .arg(repo("docs/record.schema.json"))
        .args(&records)
        .output()
        .expect("python3 runs tests/record/check_record.py");
    assert!(
        out.status.success(),
        "check_record.py failed ({:?}):\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs respbench with `--json <tmp file>` and returns the output, the record and its text.
pub(crate) fn bench_json(server: &Server, args: &[&str]) -> (Output, Value, String, TempDir) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    // Options first: after a custom command, `--json` would be one of its arguments.
    let mut all: Vec<&str> = vec!["--json", path.to_str().expect("UTF-8 path")];
    all.extend(args);
    let out = server.bench(&all);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}\n{out:?}", path.display()));
    let record: Value = serde_json::from_str(&text).expect("the record is JSON");
    check_with_python(&path);
    (out, record, text, dir)
}

/// The number of `INFO` calls the server has answered (our own reading adds one after it).
fn info_calls(server: &Server) -> u64 {
    server.client().calls("info")
}

#[test]
fn record_against_redis_has_its_identity_and_server_figures() {
    let server = Server::start();
    let (out, r, _, _dir) = bench_json(&server, &["-t", "set,get", "-n", "3000", "-c", "4"]);
    out.assert_success();
    assert_eq!(r["schema"], "respbench/1");
    assert_eq!(r["outcome"], "completed");
    assert_eq!(r["target"]["port"], u64::from(server.port()));
    let id = &r["servers"][0]["identity"];
    assert_eq!(id["name"], "redis");
    assert!(id["version"].as_str().unwrap().starts_with("7."), "{id}");
    assert_eq!(
        id["version"], id["redis_version"],
        "Redis: redis_version only"
    );
    assert_eq!(
        id["rdb_save"], "",
        "the harness starts servers with --save ''"
    );
    assert_eq!(id["aof_enabled"], false);

    let tests = r["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SET", "GET"]);
    let set = &tests[0];
    assert_eq!(set["commands"], serde_json::json!(["set"]));
    assert_eq!(set["requests"]["completed"], 3000);
    assert_eq!(set["latency_us"]["corrected"]["count"], 3000);
    let node = &set["server"][0];
    assert_eq!(node["address"], format!("127.0.0.1:{}", server.port()));
    assert!(!node["seconds"].as_array().unwrap().is_empty(), "{node}");
    assert_eq!(node["commands"][0]["command"], "set");
    assert_eq!(node["commands"][0]["calls"], 3000, "the server's own count");
    assert!(node["usec_per_call"].as_f64().unwrap() > 0.0);
    // Redis 7 publishes its own percentiles (cumulative), shown beside respbench's.
    let lat = &node["latency_percentiles"][0];
    assert_eq!(lat["command"], "set", "{node}");
    assert!(
        lat["percentiles_usec"]["p99"].as_f64().unwrap() > 0.0,
        "{lat}"
    );
    out.assert_stdout_contains("server latency since its stats were reset: set p50=");
    assert!(set["latency_split"]["server_us"].as_f64().unwrap() > 0.0);
    // The engine's parts: what it wrote, each worker's CPU, and the seconds adding up.
    assert_eq!(set["requests"]["issued"], 3000);
    assert_eq!(set["client_threads_cpu_pct"].as_array().unwrap().len(), 1);
    assert!(
        set["verdict"]["client_max_thread_cpu_pct"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let rows = set["timeline"].as_array().unwrap();
    assert!(!rows.is_empty());
    let sum: u64 = rows.iter().map(|r| r["completed"].as_u64().unwrap()).sum();
    assert_eq!(sum, 3000);
    // The full report shows the same figures in its server block.
    out.assert_stdout_contains("\nServer:\n");
    out.assert_stdout_contains("    server time per call ");
}

#[test]
fn record_against_valkey_has_its_identity() {
    let server = Server::start_valkey();
    let (out, r, _, _dir) = bench_json(&server, &["-t", "incr", "-n", "2000", "-q"]);
    out.assert_success();
    let id = &r["servers"][0]["identity"];
    assert_eq!(id["name"], "valkey");
    assert!(id["version"].as_str().unwrap().starts_with("9.1."), "{id}");
    assert_ne!(
        id["version"], id["redis_version"],
        "Valkey: valkey_version, not redis_version"
    );
    assert_eq!(r["tests"][0]["server"][0]["commands"][0]["calls"], 2000);
    assert!(r["tests"][0]["server"][0]["main_thread_cpu_pct"].is_number());
}

#[test]
fn passwords_never_reach_the_record() {
    const PW: &str = "s3cret-pw-xyz";
    let server = Server::start_with(ServerOptions {
        password: Some(PW.into()),
        ..ServerOptions::default()
    });
    let uri = format!("redis://default:{PW}@127.0.0.1:{}", server.port());
    for args in [
        vec!["-a", PW, "-t", "ping", "-n", "100", "-q"],
        vec![&format!("-a{PW}"), "-t", "ping", "-n", "100", "-q"],
        vec!["-u", &uri, "-t", "ping", "-n", "100", "-q"],
    ] {
        let (out, r, text, _dir) = bench_json(&server, &args);
        out.assert_success();
        assert!(!text.contains(PW), "password in the record:\n{text}");
        assert!(text.contains("<redacted>"), "{text}");
        assert_eq!(r["tests"][0]["requests"]["completed"], 100);
        assert!(
            r["servers"][0]["identity"].is_object(),
            "AUTH on the watch connection too"
        );
    }
}

#[test]
fn info_denied_by_acl_costs_one_warning_and_the_run_goes_on() {
    let server = Server::start();
    server.client().ok(&[
        "ACL", "SETUSER", "bench", "on", ">benchpw", "~*", "&*", "+@all", "-info",
    ]);
    let (out, r, _, _dir) = bench_json(
        &server,
        &[
            "--user", "bench", "-a", "benchpw", "-t", "set,get", "-n", "500", "-q",
        ],
    );
    out.assert_success();
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("INFO")).collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(warnings[0].starts_with("WARNING: "), "{}", warnings[0]);
    assert!(warnings[0].contains("NOPERM"), "{}", warnings[0]);
    assert!(r["servers"][0]["identity"].is_null());
    assert!(
        r["servers"][0]["unavailable"]
            .as_str()
            .unwrap()
            .contains("NOPERM")
    );
    for t in r["tests"].as_array().unwrap() {
        assert_eq!(t["requests"]["completed"], 500);
        assert_eq!(t["server"], serde_json::json!([]), "no server figures");
    }
}

/// A server kept busy by an EVAL loop is judged server-bound (in one of three tries: CPU time is
/// what the server got, not what it wanted, and on a crowded machine a try may read "machine
/// busy" instead, which then carries its figure).
fn busy_server_is_server_bound(server: &Server) {
    // Every request keeps the server's main thread busy for a few milliseconds, and 4
    // connections keep a request always waiting: the server never idles.
    // (About 13 ms each on an idle machine: gaps between commands are a small share.)
    let script = "local i = 0 while i < 1000000 do i = i + 1 end return i";
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (out, r, _, _dir) = bench_json(
            server,
            &["-c", "4", "--duration", "2.5", "-q", "eval", script, "0"],
        );
        out.assert_success();
        let t = &r["tests"][0];
        let node = &t["server"][0];
        assert_eq!(node["commands"][0]["command"], "eval");
        let steady = node["steady_cpu_pct"].as_f64().unwrap();
        let busy = node["command_busy_pct"].as_f64().unwrap();
        let kind = t["verdict"]["kind"].as_str().unwrap();
        assert_ne!(kind, "neither", "a busy server never has headroom: {t}");
        if kind == "machine-busy" {
            let reason = t["verdict"]["reason"].as_str().unwrap();
            assert!(reason.contains('%'), "the figure is named: {reason}");
        }
        if kind == "server-bound" {
            assert!(steady >= 90.0 || busy >= 90.0, "{}", t["verdict"]);
            latency_is_mostly_server_time(server, script);
            return;
        }
        seen.push(format!(
            "CPU {steady:.1}%, in commands {busy:.1}% -> {}",
            t["verdict"]
        ));
    }
    panic!("never server-bound on a busy server (is the machine overloaded?): {seen:?}");
}

/// One connection running the EVAL loop: a request's latency is nearly all the server's
/// execution (no other request to queue behind), and the split says so in the record and the
/// report.
fn latency_is_mostly_server_time(server: &Server, script: &str) {
    let (out, r, _, _dir) = bench_json(
        server,
        &["-c", "1", "--duration", "1.5", "eval", script, "0"],
    );
    out.assert_success();
    let split = &r["tests"][0]["latency_split"];
    let avg = split["avg_us"].as_f64().unwrap();
    let server_us = split["server_us"].as_f64().unwrap();
    assert!(
        server_us > avg * 0.5,
        "most of the latency is the server's: {split}"
    );
    // The parts add up. (Here a reply every ~10 ms gives only a couple of sampled reads: the
    // client's delay may be absent, and is then inside the rest.)
    let client = split["client_delay_us"].as_f64().unwrap_or(0.0);
    let rest = split["rest_us"].as_f64().unwrap();
    assert!(
        (avg - server_us - client - rest).abs() < 1.0 || rest == 0.0,
        "{split}"
    );
    out.assert_stdout_contains("where the latency went: avg ");
}

#[test]
fn server_cpu_is_high_on_a_busy_server_and_the_test_is_server_bound() {
    busy_server_is_server_bound(&Server::start());
}

#[test]
fn verdict_a_busy_valkey_is_server_bound() {
    busy_server_is_server_bound(&Server::start_valkey());
}

/// Pins the calling thread (and so every process it starts afterwards) to `cpu`; returns the
/// mask it had, to restore.
pub(crate) fn pin_this_thread(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain bits; all-zero is the empty set. sched_{get,set}affinity read
    // and write one valid, exclusively borrowed set of the size passed; pid 0 is this thread.
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old),
            0
        );
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one),
            0
        );
        old
    }
}

/// The first CPU this thread may run on.
pub(crate) fn first_allowed_cpu() -> usize {
    // SAFETY: as in `pin_this_thread`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .expect("some CPU is allowed")
    }
}

#[test]
fn verdict_respbench_sharing_its_core_with_a_hog_is_starved_not_latency_bound() {
    let server = Server::start();
    let cpu = first_allowed_cpu();
    // A CPU hog pinned to the CPU respbench will run on, bounded in time by itself (30 s) and
    // killed by its PID below; `taskset` execs it, so the PID is the hog's.
    let mut hog = std::process::Command::new("taskset")
        .args(["-c", &cpu.to_string(), "python3", "-c"])
        .arg("import time\nend = time.time() + 30\nwhile time.time() < end: pass")
        .spawn()
        .expect("taskset and python3 run");
    let old = pin_this_thread(cpu);
    // respbench inherits this thread's single-CPU mask: it shares that CPU with the hog.
    let (out, r, _, _dir) = bench_json(&server, &["-c", "8", "-n", "60000", "-t", "set"]);
    // SAFETY: restores the mask read above on this same thread.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old);
    }
    let _ = hog.kill();
    let _ = hog.wait();
    out.assert_success();
    let t = &r["tests"][0];
    let kind = t["verdict"]["kind"].as_str().unwrap();
    assert!(
        ["machine-busy", "client-bound", "both-near-saturation"].contains(&kind),
        "{t}"
    );
    let delay = t["client_delay_us"]["avg"].as_f64().unwrap();
    assert!(delay > 0.0, "replies waited for the starved respbench: {t}");
    let wait = t["machine"]["client_max_runqueue_pct"].as_f64().unwrap();
    assert!(wait >= 10.0, "respbench waited for its CPU: {wait}% ({t})");
    assert!(
        t["machine"]["measured"]
            .as_array()
            .unwrap()
            .contains(&Value::from("client_runqueue")),
        "{t}"
    );
    if kind == "machine-busy" {
        out.assert_stdout_contains("limited by: machine-busy (the machine was busy");
    }
}

#[test]
fn verdict_every_test_of_the_default_suite_is_judged() {
    let server = Server::start_valkey();
    let (out, r, _, _dir) = bench_json(&server, &["-n", "2000"]);
    out.assert_success();
    let tests = r["tests"].as_array().unwrap();
    assert!(tests.len() > 10, "the default suite");
    for t in tests {
        let v = &t["verdict"];
        assert_ne!(v["kind"], "unknown", "{}: {v}", t["name"]);
        let reason = v["reason"].as_str().unwrap();
        assert!(!reason.is_empty(), "{}: {v}", t["name"]);
        if v["kind"] == "cant-tell" {
            assert!(reason.starts_with("can't tell: "), "names the figure: {v}");
        }
        assert!(t["machine"].is_object(), "{}: {t}", t["name"]);
    }
    let judged = out.stdout.matches("limited by: ").count();
    assert_eq!(judged, tests.len(), "{}", out.stdout);
}

#[test]
fn server_cpu_is_low_on_an_idle_server() {
    let server = Server::start();
    let (out, r, _, _dir) = bench_json(
        &server,
        &["--rps", "20", "-n", "30", "-c", "1", "-t", "ping", "-q"],
    );
    out.assert_success();
    let t = &r["tests"][0];
    let cpu = t["server"][0]["steady_cpu_pct"].as_f64().unwrap();
    assert!(cpu < 20.0, "{cpu}% at 20 requests per second");
    assert!(!t["server"][0]["seconds"].as_array().unwrap().is_empty());
    assert_ne!(t["verdict"]["kind"], "server-bound");
}

#[test]
fn no_server_stats_samples_nothing() {
    let server = Server::start();
    let before = info_calls(&server);
    let (out, r, _, _dir) = bench_json(&server, &["--no-server-stats", "-t", "set", "-n", "500"]);
    out.assert_success();
    // Only the identity at the start (our own reading adds one).
    assert_eq!(info_calls(&server) - before, 2);
    assert_eq!(r["options"]["server_stats"], false);
    assert_eq!(r["tests"][0]["server"], serde_json::json!([]));
    assert!(!out.stdout.contains("\nServer:\n"), "{}", out.stdout);

    let before = info_calls(&server);
    server
        .bench(&["-t", "set", "-n", "500", "-q"])
        .assert_success();
    // Identity, commandstats before and after, a first and a last sample at least.
    assert!(info_calls(&server) - before >= 6);
}

#[test]
fn json_to_stdout_moves_the_report_to_stderr_and_quiet_stays_the_same() {
    let server = Server::start();
    let out = server.bench(&["--json", "-", "-t", "set,get", "-n", "500", "-q"]);
    out.assert_success();
    let r: Value = serde_json::from_str(&out.stdout).expect("stdout is the record alone");
    assert_eq!(r["tests"].as_array().unwrap().len(), 2);
    assert!(out.stderr.starts_with("SET: "), "{}", out.stderr);

    // With a file, -q's stdout has exactly the reference's lines.
    let (out, _, _, _dir) = bench_json(&server, &["-t", "set,get", "-n", "500", "-q"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("SET: ") && lines[1].starts_with("GET: "));
    assert_eq!(lines[2], "");
    let (out, _, _, _dir) = bench_json(&server, &["-t", "set", "-n", "500", "--csv"]);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    assert_eq!(out.stderr, "");
}

#[test]
fn an_unwritable_json_path_stops_before_any_connection() {
    let server = Server::start();
    let mut c = server.client();
    let before = c.info_u64("stats", "total_connections_received");
    let out = server.bench(&[
        "--json",
        "/nonexistent-dir/run.json",
        "-t",
        "set",
        "-n",
        "10",
    ]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("respbench: cannot write the --json file /nonexistent-dir/run.json: "),
        "{line}"
    );
    assert_eq!(c.info_u64("stats", "total_connections_received"), before);
}

#[test]
fn ctrl_c_keeps_what_was_measured() {
    let server = Server::start();
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let running = server.spawn_bench(&[
        "--duration",
        "60",
        "-t",
        "set",
        "-q",
        "--json",
        path.to_str().unwrap(),
    ]);
    let mut c = server.client();
    assert!(
        wait_until(Duration::from_secs(20), || c.calls("set") > 1000),
        "the run did not start"
    );
    running.interrupt();
    running.finish(Duration::from_secs(20)).assert_code(130);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["outcome"], "interrupted");
    assert_eq!(r["tests"][0]["outcome"], "interrupted");
    assert!(r["tests"][0]["requests"]["completed"].as_u64().unwrap() > 0);
    check_with_python(&path);
}

#[test]
fn the_timeline_has_a_row_per_second_and_counts_errors_where_they_happened() {
    let server = Server::start();
    let mut c = server.client();
    c.ok(&["SET", "astring", "x"]);
    let (out, r, _, _dir) = bench_json(
        &server,
        &[
            "--duration",
            "2",
            "-c",
            "2",
            "--threads",
            "2",
            "--rps",
            "400",
            "-e",
            "-q",
            "lpush",
            "astring",
            "y",
        ],
    );
    out.assert_success();
    let t = &r["tests"][0];
    let rows = t["timeline"].as_array().unwrap();
    assert!(rows.len() >= 2, "two seconds measured: {rows:?}");
    let failed: u64 = rows.iter().map(|r| r["failed"].as_u64().unwrap()).sum();
    assert_eq!(failed, t["requests"]["failed"].as_u64().unwrap());
    assert!(failed > 500, "every LPUSH on a string fails: {failed}");
    assert_eq!(t["requests"]["completed"], 0);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["second"], i as u64);
    }
    // Both workers' CPU, and what was written covers what was answered.
    assert_eq!(t["client_threads_cpu_pct"].as_array().unwrap().len(), 2);
    assert!(t["requests"]["issued"].as_u64().unwrap() >= failed);
}
