//! How runs start and end: rate limiting, --duration, Ctrl-C, idle and loop modes, and the live
//! progress line (which must stay off when stderr is not a terminal).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{Server, wait_until};

/// The seconds of `  N requests completed in S seconds`.
fn reported_seconds(stdout: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once(" requests completed in ")?;
            rest.strip_suffix(" seconds")?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no 'requests completed in' line:\n{stdout}"))
}

#[test]
fn rps_limits_the_request_rate() {
    let server = Server::start();
    let out = server.bench(&["--rps", "200", "-n", "200", "-c", "5", "-t", "set"]);
    out.assert_success().assert_no_progress_line();
    assert_eq!(out.completed(), 200);
    out.assert_stdout_contains("\nRPS Summary:\n  target RPS: 200.00\n");
    // 200 requests at 200/s take about 1 s; generous bounds only.
    let secs = reported_seconds(&out.stdout);
    assert!(secs >= 0.6, "200 requests at --rps 200 took only {secs} s");
    assert!(
        out.elapsed >= Duration::from_millis(600),
        "{:?}",
        out.elapsed
    );
    let rps = out.throughput();
    assert!(
        rps < 400.0,
        "throughput {rps} is far above the 200/s target"
    );
    assert_eq!(server.client().calls("set"), 200);
}

#[test]
fn duration_ends_the_test_after_the_given_time() {
    let server = Server::start();
    let out = server.bench(&["--duration", "1", "-t", "ping_mbulk", "-q"]);
    out.assert_success().assert_no_progress_line();
    assert!(
        out.elapsed >= Duration::from_millis(900),
        "ended early: {:?}",
        out.elapsed
    );
    assert!(
        out.elapsed < Duration::from_secs(30),
        "took {:?}",
        out.elapsed
    );
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert!(lines[0].starts_with("PING_MBULK: "), "{}", lines[0]);
    assert!(server.client().calls("ping") > 0);
}

#[test]
fn ctrl_c_prints_a_partial_report_and_exits_130() {
    let server = Server::start();
    let mut c = server.client();
    let running = server.spawn_bench(&["--duration", "30", "-t", "set"]);
    let started = wait_until(Duration::from_secs(20), || c.calls("set") >= 1);
    assert!(started, "respbench never sent a SET");
    running.interrupt();
    let out = running.finish(Duration::from_secs(20));
    out.assert_code(130).assert_no_progress_line();
    out.assert_stdout_contains("====== SET ======");
    out.assert_stdout_contains("interrupted: yes (partial results: measured until Ctrl-C)");
    out.assert_stdout_contains("Summary:");
    assert!(
        out.completed() > 0,
        "the SETs measured before Ctrl-C are reported"
    );
    assert!(
        out.elapsed < Duration::from_secs(25),
        "stopped long after Ctrl-C"
    );
}

#[test]
fn idle_mode_holds_connections_until_ctrl_c() {
    let server = Server::start();
    let mut c = server.client();
    let pings = c.calls("ping");
    let running = server.spawn_bench(&["-I", "-c", "5"]);
    let up = wait_until(Duration::from_secs(20), || {
        c.info_u64("clients", "connected_clients") >= 6
    });
    assert!(up, "5 idle connections (plus ours) never showed up");
    running.interrupt();
    let out = running.finish(Duration::from_secs(20));
    out.assert_code(130).assert_no_progress_line();
    out.assert_stdout_contains("Creating 5 idle connections");
    assert_eq!(
        c.calls("set") + c.calls("get"),
        0,
        "idle sends no benchmark command"
    );
    assert_eq!(c.calls("ping"), pings, "idle sends no benchmark command");
    let closed = wait_until(Duration::from_secs(10), || {
        c.info_u64("clients", "connected_clients") == 1
    });
    assert!(closed, "idle connections still open after exit");
}

#[test]
fn loop_mode_repeats_until_ctrl_c() {
    let server = Server::start();
    let mut c = server.client();
    let running = server.spawn_bench(&["-l", "-n", "200", "-t", "set", "-q"]);
    let looped = wait_until(Duration::from_secs(30), || c.calls("set") >= 1000);
    assert!(looped, "-l did not repeat the test");
    running.interrupt();
    let out = running.finish(Duration::from_secs(20));
    out.assert_code(130);
    let passes = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("SET: "))
        .count();
    assert!(passes >= 5, "at least 5 passes reported:\n{}", out.stdout);
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let server = Server::start();
    // Long enough for several 250 ms progress ticks, in each stop mode and output format.
    for args in [
        &["--duration", "0.8", "-t", "set"][..],
        &["--rps", "2000", "-n", "1500", "-t", "get", "-q"][..],
        &["--warmup", "0.5", "-n", "1000", "-t", "incr"][..],
    ] {
        let out = server.bench(args);
        out.assert_success().assert_no_progress_line();
        assert!(out.stderr.is_empty(), "stderr: {:?}", out.stderr);
        out.assert_stdout_contains(" requests per second");
    }
}

#[test]
fn closing_stdout_early_is_not_an_error() {
    // `respbench ... | head -1`: the reader goes away after the first line.
    let server = Server::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_respbench"))
        .args(["-p", &server.port().to_string(), "-n", "2000", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn respbench");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout pipe"))
        .read_line(&mut first)
        .expect("read the first line");
    // The reader (and so the pipe) is dropped here.
    assert!(first.starts_with("PING_INLINE: "), "{first:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("respbench kept running after stdout closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0), "{status}");
    let fcalls = server.client().calls("fcall");
    assert_eq!(
        fcalls, 0,
        "the run stopped at the closed pipe instead of running every test"
    );
}
