//! `--find-max` against a real Valkey whose capacity is known: every request is an `EVAL` of a
//! busy loop calibrated (by the server's own `usec_per_call`) to a fraction of a millisecond, so
//! the server serves at most about 1 / service time requests per second whatever the client
//! does. Also a `--ratio` mix searched like any workload, bad SLOs and refused combinations (one
//! line, exit 2), and Ctrl-C mid-search.

use std::time::Duration;

use serde_json::Value;

use crate::harness::{Client, Server, TempDir, respbench, wait_until};
use crate::record::check_with_python;

/// `usec_per_call` of `cmdstat_eval` (after `CONFIG RESETSTAT` and some calls).
fn eval_usec_per_call(c: &mut Client) -> f64 {
    let info = c.info("commandstats");
    let line = info
        .lines()
        .find(|l| l.starts_with("cmdstat_eval:"))
        .unwrap_or_else(|| panic!("no cmdstat_eval in\n{info}"));
    line.split(',')
        .find_map(|f| f.strip_prefix("usec_per_call="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no usec_per_call in {line}"))
}

fn busy_script(n: u64) -> String {
    format!("for i=1,{n} do end")
}

/// Finds a loop length whose `EVAL` takes about 400 µs of server time, and that time.
fn calibrate(c: &mut Client) -> (u64, f64) {
    let mut n: u64 = 20_000;
    let mut usec = 0.0;
    for _ in 0..4 {
        c.ok(&["CONFIG", "RESETSTAT"]);
        for _ in 0..20 {
            c.cmd(&["EVAL", busy_script(n).as_str(), "0"]);
        }
        usec = eval_usec_per_call(c);
        if (250.0..=700.0).contains(&usec) {
            break;
        }
        n = ((n as f64) * 400.0 / usec.max(1.0)).clamp(1_000.0, 50_000_000.0) as u64;
    }
    assert!(
        usec > 50.0,
        "calibration did not reach a measurable service time: {usec} µs"
    );
    (n, usec)
}

fn bench_json(server: &Server, args: &[&str]) -> (crate::harness::Output, Value, TempDir) {
    let dir = TempDir::new();
    let path = dir.path().join("fm.json");
    let mut all = vec!["--json", path.to_str().expect("UTF-8 path")];
    all.extend(args);
    let out = server.bench(&all);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}\n{out:?}", path.display()));
    check_with_python(&path);
    (out, serde_json::from_str(&text).expect("JSON"), dir)
}

#[test]
fn find_max_finds_the_capacity_of_a_server_with_a_known_service_time() {
    let server = Server::start_valkey();
    let mut c = server.client();
    let (n, usec) = calibrate(&mut c);
    let capacity = 1e6 / usec;
    let script = busy_script(n);
    // The service time during the search too: on a machine busy with other tests the server
    // gets less of a core, its calls take longer (usec_per_call is wall time), and its real
    // capacity is lower than the quiet calibration's.
    c.ok(&["CONFIG", "RESETSTAT"]);
    // p99 < 200 ms: far above the service time, so what stops the ramp is the server's capacity
    // (steps above it fall behind, or their queue breaks the SLO), not this machine's noise.
    let html_dir = TempDir::new();
    let html = html_dir.path().join("fm.html");
    let (out, r, _dir) = bench_json(
        &server,
        &[
            "--html",
            html.to_str().unwrap(),
            "-c",
            "16",
            "--find-max",
            "p99<200ms",
            "--step-duration",
            "0.5",
            "--warmup",
            "0.25",
            "eval",
            &script,
            "0",
        ],
    );
    out.assert_success();
    assert_eq!(
        out.stderr, "",
        "a successful search writes nothing to stderr"
    );
    assert!(
        out.stdout.contains("max throughput with p99 < 200 ms"),
        "{}",
        out.stdout
    );
    let fm = &r["find_max"];
    assert_eq!(fm["slo"], "p99<200ms");
    let steps = fm["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 16, "{fm}");
    // One row printed per step.
    let rows = out
        .stdout
        .lines()
        .filter(|l| l.ends_with("met") || l.contains("broken") || l.contains("behind"))
        .count();
    assert_eq!(rows, steps.len(), "{}", out.stdout);
    let answer = fm["answer_rps"]
        .as_f64()
        .unwrap_or_else(|| panic!("no answer: {fm}"));
    let usec_during = eval_usec_per_call(&mut c);
    let capacity_during = 1e6 / usec_during.max(usec);
    assert!(
        answer >= 0.3 * capacity_during && answer <= 1.5 * capacity,
        "found {answer} req/s for a capacity of {capacity:.0} ({usec} µs per call; \
         {usec_during} µs during the search)\n{}",
        out.stdout
    );
    // The kept test record is the answer's step.
    let tests = r["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1);
    assert!(tests[0]["target_rps"].as_u64().is_some());
    // The HTML report draws the latency-vs-throughput curve from the steps.
    let page = std::fs::read_to_string(&html).expect("the --html report");
    assert!(
        page.contains("data-chart=\"find-max\""),
        "no curve in the report"
    );
}

#[test]
fn find_max_refuses_what_it_cannot_answer_with_one_line() {
    for (args, needle) in [
        (&["--find-max", "p98<1ms"][..], "unknown metric \"p98\""),
        (&["--find-max", "p99<1"], "needs a unit"),
        (&["--find-max", "p99<"], "no limit"),
        (
            &["--find-max", "p99<1ms"],
            "searches one test, and this run has",
        ),
        (&["--find-max", "p99<1ms", "-t", "get", "--csv"], "--csv"),
        (
            &["--find-max", "p99<1ms", "-t", "get", "--repeat", "2"],
            "--repeat",
        ),
        (&["--step-duration", "1", "-t", "get"], "needs --find-max"),
    ] {
        // Port 1: nothing listens; the refusal comes before any connection.
        let mut all = vec!["-p", "1"];
        all.extend(args);
        let out = respbench(&all);
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(line.contains(needle), "{args:?}: {line}");
        assert_eq!(out.stdout, "");
    }
}

#[test]
fn ctrl_c_mid_search_prints_and_records_the_steps_so_far() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let path = dir.path().join("fm.json");
    let run = server.spawn_bench(&[
        "--json",
        path.to_str().unwrap(),
        "-c",
        "4",
        "--rps",
        "500",
        "--find-max",
        "p99<1s",
        "--step-duration",
        "0.5",
        "--warmup",
        "0.1",
        "ping",
    ]);
    // The first step (500 rps for 0.6 s) has ended once the server has seen ~300 PINGs and the
    // second has started; then stop it.
    let mut c = server.client();
    assert!(
        wait_until(Duration::from_secs(20), || c.calls("ping") > 400),
        "the search did not get going"
    );
    run.interrupt();
    let out = run.finish(Duration::from_secs(20));
    out.assert_code(130);
    assert!(
        out.stdout.contains("so far") || out.stdout.contains("no step met"),
        "{}",
        out.stdout
    );
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["outcome"], "interrupted");
    assert_eq!(r["find_max"]["end"], "stopped");
    assert!(!r["find_max"]["steps"].as_array().unwrap().is_empty());
}

/// The search runs a `--ratio` mix like any workload: every step sends both commands, and the
/// kept step's record has each command's figures. No capacity is asserted (a plain Valkey's is
/// this machine's); the SLO is generous so that some step meets it.
#[test]
fn find_max_searches_a_ratio_mix() {
    let server = Server::start_valkey();
    let (out, r, _dir) = bench_json(
        &server,
        &[
            "-c",
            "4",
            "-r",
            "1000",
            "--ratio",
            "1:4",
            "--find-max",
            "p99<200ms",
            "--step-duration",
            "0.3",
            "--warmup",
            "0.1",
        ],
    );
    out.assert_success();
    assert_eq!(out.stderr, "");
    assert!(
        out.stdout.contains("max throughput with p99 < 200 ms"),
        "{}",
        out.stdout
    );
    let fm = &r["find_max"];
    let steps = fm["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 16, "{fm}");
    assert!(fm["answer_rps"].as_f64().is_some_and(|a| a > 0.0), "{fm}");
    assert!(steps.iter().all(|s| s["offered_rps"].as_u64().unwrap() > 0));
    assert_eq!(r["options"]["mix"][1]["weight"], 4);
    // The kept step's record: the mix's test with each command's figures.
    let test = &r["tests"][0];
    assert_eq!(test["name"], "SET:GET 1:4");
    let mix = test["mix"].as_array().expect("each command's figures");
    let names: Vec<&str> = mix.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SET", "GET"]);
    assert!(mix.iter().all(|m| m["completed"].as_u64().unwrap() > 0));
    let mut c = server.client();
    assert!(c.calls("set") > 0 && c.calls("get") > c.calls("set"));
}
