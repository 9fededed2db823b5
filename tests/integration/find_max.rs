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
pub(crate) fn eval_usec_per_call(c: &mut Client) -> f64 {
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

pub(crate) fn busy_script(n: u64) -> String {
    format!("for i=1,{n} do end")
}

/// Finds a loop length whose `EVAL` takes about 400 µs of server time, and that time.
pub(crate) fn calibrate(c: &mut Client) -> (u64, f64) {
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

/// The table's rows: the lines between the header and the answer.
fn table_rows(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("step "))
        .skip(1)
        .take_while(|l| !l.starts_with("max throughput") && !l.starts_with("too noisy"))
        .collect()
}

pub(crate) fn bench_json(
    server: &Server,
    args: &[&str],
) -> (crate::harness::Output, Value, TempDir) {
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
    let fm = &r["find_max"];
    if too_noisy(&out.stdout, fm) {
        return;
    }
    assert!(
        out.stdout.contains("max throughput with p99 < 200 ms"),
        "{}",
        out.stdout
    );
    assert_eq!(fm["slo"], "p99<200ms");
    let steps = fm["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 40, "{fm}");
    // One row printed per window, between the header and the answer.
    assert_eq!(table_rows(&out.stdout).len(), steps.len(), "{}", out.stdout);
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
        out.stdout.contains("so far") || out.stdout.contains("no rate met"),
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
    let fm = &r["find_max"];
    let steps = fm["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 40, "{fm}");
    if !too_noisy(&out.stdout, fm) {
        assert!(
            out.stdout.contains("max throughput with p99 < 200 ms"),
            "{}",
            out.stdout
        );
        assert!(fm["answer_rps"].as_f64().is_some_and(|a| a > 0.0), "{fm}");
    }
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

/// A scripted server of known capacity: every reply takes the next slot of one shared schedule
/// of `capacity` slots per second (a single-threaded server with a fixed service time), so it
/// never serves more than `capacity` requests per second, whatever the client or the machine,
/// and below that a request waits at most about one slot. After `stall_after` replies it stalls
/// once for `stall` (a noise burst: the schedule moves on without it). It answers the control
/// connection's `CONFIG GET` and anything else with what a server would, and stops serving
/// after `limit`.
struct Capped {
    port: u16,
}

impl Capped {
    fn start(capacity: f64, stall_after: u64, stall: Duration, limit: Duration) -> Self {
        use std::net::TcpListener;
        use std::sync::{Arc, Mutex};
        use std::thread;
        use std::time::Instant;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let deadline = Instant::now() + limit;
        // (the next free slot, replies so far)
        let schedule = Arc::new(Mutex::new((Instant::now(), 0u64)));
        let slot = Duration::from_secs_f64(1.0 / capacity);
        thread::spawn(move || {
            while Instant::now() < deadline {
                match listener.accept() {
                    Ok((s, _)) => {
                        let schedule = Arc::clone(&schedule);
                        thread::spawn(move || {
                            serve_capped(s, &schedule, slot, (stall_after, stall), deadline)
                        });
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self { port }
    }
}

/// One connection of [`Capped`]: waits for each PING's slot, answers.
fn serve_capped(
    s: std::net::TcpStream,
    schedule: &std::sync::Mutex<(std::time::Instant, u64)>,
    slot: Duration,
    (stall_after, stall): (u64, Duration),
    deadline: std::time::Instant,
) {
    use std::time::Instant;
    let wait = || {
        let at = {
            let mut sch = schedule.lock().unwrap();
            let now = Instant::now();
            let mut at = sch.0.max(now);
            sch.1 += 1;
            if sch.1 == stall_after {
                at += stall;
            }
            sch.0 = at + slot;
            at
        };
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        }
    };
    serve_pings(s, wait, deadline);
}

/// One connection of a scripted server: reads whole commands (RESP arrays), calls `wait` before
/// answering each PING, answers the control connection's `CONFIG GET` and `INFO` as a server
/// would and anything else `+OK`, until `deadline`.
fn serve_pings(mut s: std::net::TcpStream, mut wait: impl FnMut(), deadline: std::time::Instant) {
    use std::io::{Read, Write};
    use std::time::Instant;
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(_) => continue,
        }
        while let Some((name, used)) = next_command(&pending) {
            pending.drain(..used);
            let reply: &[u8] = match name.as_str() {
                "PING" => {
                    wait();
                    b"+PONG\r\n"
                }
                "CONFIG" => b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n",
                "INFO" => b"$0\r\n\r\n",
                _ => b"+OK\r\n",
            };
            if s.write_all(reply).is_err() {
                return;
            }
        }
    }
}

/// The first complete RESP command in `b`: its name (upper case) and its length in bytes.
fn next_command(b: &[u8]) -> Option<(String, usize)> {
    fn line(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
        let end = b[at..].windows(2).position(|w| w == b"\r\n")? + at;
        Some((&b[at..end], end + 2))
    }
    let num = |s: &[u8]| std::str::from_utf8(s).ok()?.parse::<usize>().ok();
    let (head, mut at) = line(b, 0)?;
    let count = num(head.strip_prefix(b"*")?)?;
    let mut name = String::new();
    for i in 0..count {
        let (len, start) = line(b, at)?;
        let len = num(len.strip_prefix(b"$")?)?;
        if b.len() < start + len + 2 {
            return None;
        }
        if i == 0 {
            name = String::from_utf8_lossy(&b[start..start + len]).to_uppercase();
        }
        at = start + len + 2;
    }
    Some((name, at))
}

/// Each window's row and record agree on its step and window number, and every rate the search
/// left has at least two windows.
fn check_windows(stdout: &str, fm: &Value) {
    let steps = fm["steps"].as_array().unwrap();
    let rows = table_rows(stdout);
    assert_eq!(rows.len(), steps.len(), "{stdout}");
    let mut per_rate = std::collections::BTreeMap::<u64, u64>::new();
    for (s, row) in steps.iter().zip(&rows) {
        let rate = s["offered_rps"].as_u64().unwrap();
        let n = per_rate.entry(rate).or_default();
        *n += 1;
        assert_eq!(s["window"].as_u64(), Some(*n), "{s}");
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[0], s["step"].as_u64().unwrap().to_string(), "{row}");
        assert_eq!(cols[1], n.to_string(), "{row}");
    }
    let last = steps.last().and_then(|s| s["offered_rps"].as_u64());
    assert!(
        per_rate.iter().all(|(&r, &n)| n >= 2 || Some(r) == last),
        "{per_rate:?}"
    );
}

/// A search on a machine too noisy to answer says so, and answers nothing (this machine is
/// shared: that is a legitimate outcome, not a failure, and nothing more can be checked then).
fn too_noisy(stdout: &str, fm: &Value) -> bool {
    if fm["end"] != "too-noisy" {
        return false;
    }
    assert!(fm["answer_rps"].is_null(), "{fm}");
    let line = stdout.lines().rfind(|l| !l.is_empty()).unwrap();
    assert!(line.starts_with("too noisy to answer"), "{line}");
    eprintln!("the machine was too noisy for this search:\n{stdout}");
    true
}

/// The search against a server whose capacity is known exactly (1,000 req/s, see [`Capped`]),
/// with one noise burst (a 300 ms stall) somewhere in the search: the answer is that capacity,
/// within what the scripted server guarantees (never more than 1,000 req/s; below that, waits of
/// about a slot, so p99 < 100 ms holds until the queue grows), and the table and record show the
/// windows behind it.
#[test]
fn find_max_answers_the_capacity_of_a_scripted_server_with_its_windows() {
    let server = Capped::start(
        1_000.0,
        4_000,
        Duration::from_millis(300),
        Duration::from_secs(170),
    );
    let dir = TempDir::new();
    let path = dir.path().join("fm.json");
    let port = server.port.to_string();
    let out = respbench(&[
        "-p",
        &port,
        "--json",
        path.to_str().unwrap(),
        "-c",
        "8",
        "--rps",
        "250",
        "--find-max",
        "p99<100ms",
        "--step-duration",
        "0.5",
        "--warmup",
        "0.2",
        "ping",
    ]);
    out.assert_success();
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let fm = &r["find_max"];
    // Every rate has at least two windows; the record numbers them as the table does.
    check_windows(&out.stdout, fm);
    if too_noisy(&out.stdout, fm) {
        return;
    }
    assert_eq!(fm["end"], "converged", "{}", out.stdout);
    let answer = fm["answer_rps"].as_f64().unwrap();
    // Never above the capacity (the schedule's guarantee, 10% for the window's edges); at
    // least half of it unless the machine is so busy that the server got half its slots.
    assert!(
        (500.0..=1_100.0).contains(&answer),
        "answered {answer} req/s for a capacity of 1,000\n{}",
        out.stdout
    );
    // The answer line carries the evidence: the met bound's windows and the broken one's.
    let line = out.stdout.lines().rfind(|l| !l.is_empty()).unwrap();
    assert!(
        line.starts_with("max throughput with p99 < 100 ms:"),
        "{line}"
    );
    assert!(line.contains("req/s offered met it in "), "{line}");
    assert!(line.contains(" windows; "), "{line}");
    // The boundary was decided from its two rates run alternately: at least three rounds, their
    // paired interval in the record and the answer.
    let b = &fm["boundary"];
    assert!(b["pairs"].as_u64().is_some_and(|p| p >= 3), "{fm}");
    let (low, high) = (
        b["low_rps"].as_u64().unwrap(),
        b["high_rps"].as_u64().unwrap(),
    );
    assert!(low < high && high as f64 <= low as f64 * 1.06, "{b}");
    assert!(
        b["interval"].as_array().is_some_and(|i| i.len() == 2),
        "{b}"
    );
    assert!(line.contains("run alternately in "), "{line}");
}

/// A scripted server whose latency is set by "stalls", not by its load: while it sees more than
/// `threshold` requests per second (counted over the last 250 ms: long enough that a client's
/// catch-up after a stall on a busy machine does not read as a higher rate), every reply waits `delay`;
/// below, none does. Above the threshold the SLO breaks by as much at any rate, the way a shared
/// machine's stalls break a tight SLO. It stops serving after `limit`.
struct Stalled {
    port: u16,
}

impl Stalled {
    fn start(threshold: u64, delay: Duration, limit: Duration) -> Self {
        use std::net::TcpListener;
        use std::sync::{Arc, Mutex};
        use std::thread;
        use std::time::Instant;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let deadline = Instant::now() + limit;
        // (this 250 ms bucket's start, requests in it, requests in the one before)
        let rate = Arc::new(Mutex::new((Instant::now(), 0u64, 0u64)));
        thread::spawn(move || {
            while Instant::now() < deadline {
                match listener.accept() {
                    Ok((s, _)) => {
                        let rate = Arc::clone(&rate);
                        thread::spawn(move || {
                            let stalled = || {
                                let mut r = rate.lock().unwrap();
                                let now = Instant::now();
                                if now - r.0 >= Duration::from_millis(250) {
                                    let gap = now - r.0 < Duration::from_millis(500);
                                    *r = (now, 0, if gap { r.1 } else { 0 });
                                }
                                r.1 += 1;
                                r.2 * 4 > threshold
                            };
                            let wait = || {
                                if stalled() {
                                    thread::sleep(delay);
                                }
                            };
                            serve_pings(s, wait, deadline)
                        });
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self { port }
    }
}

/// The search against a server whose SLO breaks above 150 req/s by as much at any rate (40 ms
/// replies against p99 < 30 ms): a clean-looking boundary that the load did not set. The search
/// measures twice the failing rate, finds the SLO broken by no more there, and says "too noisy"
/// with both rates, in the answer and the record, instead of answering about 150 req/s.
///
/// The rates are low so that the premise holds under CPU hogs: at twice the failing rate
/// (about 300 req/s, a dozen requests in flight) respbench keeps up even on a starved core. At
/// 600 req/s and 1,200 it did not (a debug build beside a hog on a machine at load 15): twice
/// the failing rate fell behind, which the search rightly reads as the load's (that rate could
/// not be carried), and it answered 526 req/s: the test's premise, not the search, was wrong.
/// Whatever the machine, the search may answer only with that evidence in its record.
#[test]
fn find_max_says_too_noisy_when_the_boundary_is_not_the_loads() {
    let server = Stalled::start(150, Duration::from_millis(40), Duration::from_secs(170));
    let dir = TempDir::new();
    let path = dir.path().join("fm.json");
    let port = server.port.to_string();
    let out = respbench(&[
        "-p",
        &port,
        "--json",
        path.to_str().unwrap(),
        "-c",
        "40",
        "--rps",
        "50",
        "--find-max",
        "p99<30ms",
        "--step-duration",
        "0.5",
        "--warmup",
        "0.2",
        "ping",
    ]);
    out.assert_success();
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let fm = &r["find_max"];
    check_windows(&out.stdout, fm);
    if fm["end"] == "converged" {
        // Only when the failing bound, or a rate at least twice it, fell behind in most of its
        // windows (a machine too busy for the client to keep up): that is load, and the search
        // rightly answers; nothing more can be checked here.
        let upper = fm["boundary"]["high_rps"]
            .as_u64()
            .expect("a converged boundary");
        let steps = fm["steps"].as_array().unwrap();
        let behind = |rate: u64| {
            let at: Vec<&Value> = steps
                .iter()
                .filter(|s| s["offered_rps"].as_u64() == Some(rate))
                .collect();
            at.iter().filter(|s| s["saturated"] == true).count() * 2 > at.len()
        };
        let mut rates: Vec<u64> = steps
            .iter()
            .filter_map(|s| s["offered_rps"].as_u64())
            .collect();
        rates.dedup();
        assert!(
            behind(upper) || rates.iter().any(|&r| r >= 2 * upper && behind(r)),
            "answered without the load's evidence:\n{}",
            out.stdout
        );
        eprintln!(
            "a rate at or above the failing one fell behind:\n{}",
            out.stdout
        );
        return;
    }
    // Never an answer: without the load check this search converges at about 600 req/s.
    assert_eq!(fm["end"], "too-noisy", "{}", out.stdout);
    assert!(fm["answer_rps"].is_null(), "{fm}");
    let line = out.stdout.lines().rfind(|l| !l.is_empty()).unwrap();
    let Some(flat) = fm["no_growth_rps"].as_u64() else {
        // The windows below the threshold disagreed first (a busy machine): also too noisy.
        assert!(line.contains("windows disagreed"), "{line}");
        eprintln!(
            "too noisy by disagreeing windows before the load check:\n{}",
            out.stdout
        );
        return;
    };
    assert!(
        line.contains("the boundary is set by this machine's stalls, not by the load"),
        "{line}"
    );
    // The rate it names broke the SLO, at least twice a rate that broke it (on a quiet machine
    // about 300 and 150 req/s; a busy one breaks it lower).
    let steps = fm["steps"].as_array().unwrap();
    let broke = |rate: u64| {
        steps
            .iter()
            .any(|s| s["offered_rps"].as_u64() == Some(rate) && s["met"] == false)
    };
    assert!(broke(flat), "{fm}");
    assert!(
        steps.iter().any(|s| {
            let r = s["offered_rps"].as_u64().unwrap();
            r * 2 <= flat && s["met"] == false
        }),
        "{fm}"
    );
}
