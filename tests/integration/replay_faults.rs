//! `respbench replay` with the benchmark's guarantees (issue 33), against Valkey 9.1 and Redis
//! 7.0: a trace read once from a pipe or a FIFO is sent whole (the servers' `INFO commandstats`
//! count every entry); an entry in a database the target lacks is counted as the `SELECT`'s
//! error and never run in another database; a long gap in the trace is named, and `--max-gap`
//! shortens it; a server frozen for good (SIGSTOP) with `--timeout` ends the replay in bounds
//! with its unanswered commands failed and an outage listed, as a benchmark run does.

use std::io::Write;
use std::process::Command;
use std::thread;
use std::time::Duration;

use crate::failures::{accounted, record};
use crate::harness::{Running, Server, TempDir, respbench, run_respbench};
use crate::record::check_with_python;

/// `n` MONITOR lines `INCR n`, 1 ms apart, on client `c1`: about 50 bytes each, so a few
/// thousand are well past the 64 KiB a reader buffers.
fn incr_trace(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{}.{:06} [0 c1] \"INCR\" \"n\"\n",
                1_700_000_000 + i / 1000,
                (i % 1000) * 1000
            )
        })
        .collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The trace on standard input (`-`), on Valkey: every entry is sent.
#[test]
fn a_trace_on_a_pipe_is_sent_whole() {
    let server = Server::start_valkey();
    let text = incr_trace(4000);
    assert!(text.len() > 128 << 10);
    let port = server.port().to_string();
    let out = run_respbench(
        &s(&["replay", "-p", &port, "--speed", "max", "-q", "-"]),
        Some(text.as_bytes()),
    );
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("incr"), 4000);
    assert_eq!(c.bulk(&["GET", "n"]).as_deref(), Some(&b"4000"[..]));
    // A pipe can be read once: `--loop` needs a file.
    let out = run_respbench(
        &s(&["replay", "-p", &port, "--loop", "2", "-"]),
        Some(text.as_bytes()),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.single_stderr_line()
            .contains("--loop 2 needs trace files")
    );
}

/// The trace in a FIFO (as `<(zcat trace.gz)` gives), on Redis: every entry is sent.
#[test]
fn a_trace_in_a_fifo_is_sent_whole() {
    let server = Server::start();
    let dir = TempDir::new();
    let fifo = dir.path().join("t.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let text = incr_trace(2500);
    let writer = {
        let fifo = fifo.clone();
        thread::spawn(move || {
            // Blocks until the replay opens the FIFO; a replay that opened it twice would find
            // the first 64 KiB gone.
            let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        })
    };
    let port = server.port().to_string();
    let out = respbench(&[
        "replay",
        "-p",
        &port,
        "--speed",
        "max",
        "-q",
        fifo.to_str().unwrap(),
    ]);
    writer.join().unwrap();
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("incr"), 2500);
}

/// Clients in database 20 of a 16-database server (one by its entries' database, one by its own
/// `SELECT`): with `-e` each of their commands is counted as the `SELECT`'s `ERR` and nothing of
/// theirs runs in database 0; without `-e` the replay stops at the error (exit 1, one line).
fn missing_database(server: Server) {
    let dir = TempDir::new();
    let trace = dir.path().join("db.trace");
    std::fs::write(
        &trace,
        "1700000000.000000 [0 a] \"SET\" \"a0\" \"1\"\n\
         1700000000.010000 [20 a] \"SET\" \"a20\" \"1\"\n\
         1700000000.020000 [20 a] \"INCR\" \"n20\"\n\
         1700000000.030000 [0 b] \"SELECT\" \"20\"\n\
         1700000000.040000 [20 b] \"SET\" \"b20\" \"1\"\n\
         1700000000.050000 [0 a] \"SET\" \"a1\" \"1\"\n",
    )
    .unwrap();
    let json = dir.path().join("db.json");
    let port = server.port().to_string();
    let out = respbench(&[
        "replay",
        "-p",
        &port,
        "-e",
        "--speed",
        "10",
        "-q",
        "--json",
        json.to_str().unwrap(),
        trace.to_str().unwrap(),
    ]);
    out.assert_success();
    check_with_python(&json);
    let rec = record(&json);
    let t = &rec["tests"][0];
    let (completed, failed, unanswered) = accounted(t);
    assert_eq!(
        (completed, failed, unanswered),
        (2, 4, 0),
        "{}",
        t["requests"]
    );
    assert_eq!(t["requests"]["errors"]["ERR"], 4, "{}", t["requests"]);
    let mut c = server.client();
    assert_eq!(
        c.dbsize(),
        2,
        "only a's database-0 keys: nothing ran elsewhere"
    );
    assert_eq!(c.bulk(&["GET", "a1"]).as_deref(), Some(&b"1"[..]));
    let out = respbench(&["replay", "-p", &port, "-q", trace.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let line = out.single_stderr_line();
    assert!(line.contains("ERR") && line.contains("-e"), "{line}");
    assert_eq!(c.dbsize(), 2, "{out:?}");
}

#[test]
fn an_entry_in_a_missing_database_is_its_error_on_valkey() {
    missing_database(Server::start_valkey());
}

#[test]
fn an_entry_in_a_missing_database_is_its_error_on_redis() {
    missing_database(Server::start());
}

/// A gap of 10^9 s is named on stderr (where, how long); `--max-gap` shortens it so the replay
/// ends at once; `--gap-warn` sets the bound.
#[test]
fn a_long_gap_is_named_and_max_gap_shortens_it() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let trace = dir.path().join("gap.trace");
    std::fs::write(
        &trace,
        "700000000.000000 [0 c1] \"SET\" \"x\" \"1\"\n\
         700000000.500000 [0 c1] \"SET\" \"y\" \"1\"\n\
         1700000000.500000 [0 c1] \"SET\" \"z\" \"1\"\n",
    )
    .unwrap();
    let t = trace.to_str().unwrap();
    let out = respbench(&["replay", "--dry-run", t]);
    out.assert_success();
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a gap of 1000000000 s in the trace before entry 3 (1000000000.5 s into it)"),
        "{}",
        out.stderr
    );
    let port = server.port().to_string();
    let run = Running::spawn_args(&s(&[
        "replay",
        "-p",
        &port,
        "-q",
        "--max-gap",
        "0.2",
        "--gap-warn",
        "0.3",
        t,
    ]));
    let out = run.finish(Duration::from_secs(30));
    out.assert_success();
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "the 0.5 s gap and the long one: {}",
        out.stderr
    );
    assert!(lines[0].contains("before entry 2") && lines[0].contains("shortened to 0.2 s"));
    assert!(lines[1].contains("before entry 3"));
    assert_eq!(server.client().dbsize(), 3);
}

/// A replay whose server freezes for good (SIGSTOP) with `--timeout 1` ends by itself, its
/// unanswered commands failed as timeouts and an outage listed; with `-e` it goes on to the
/// trace's end (its connections reopened and failing again), without it ends at the first
/// timeout with the benchmark's hint. Throughput is over the replay's span, not up to the
/// freeze.
fn frozen_for_good(server: Server, keep_going: bool) {
    let dir = TempDir::new();
    let trace = dir.path().join("f.trace");
    // 4 clients, 400 commands a second for 3 s.
    let mut text = String::new();
    for i in 0..1200 {
        let us = i * 2500;
        text.push_str(&format!(
            "{}.{:06} [0 c{}] \"INCR\" \"n\"\n",
            1_700_000_000 + us / 1_000_000,
            us % 1_000_000,
            i % 4
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let json = dir.path().join("f.json");
    let port = server.port().to_string();
    let mut args = s(&["replay", "-p", &port, "--timeout", "1", "--json"]);
    args.push(json.to_str().unwrap().into());
    if keep_going {
        args.push("-e".into());
    }
    args.push(trace.to_str().unwrap().into());
    let run = Running::spawn_args(&args);
    thread::sleep(Duration::from_millis(900));
    server.signal(libc::SIGSTOP);
    let out = run.finish(Duration::from_secs(30));
    server.signal(libc::SIGCONT);
    let rec = record(&json);
    check_with_python(&json);
    let t = &rec["tests"][0];
    let (completed, failed, unanswered) = accounted(t);
    assert!(completed > 0, "{}", t["requests"]);
    let timeouts = t["requests"]["errors"]["timeout"].as_u64().unwrap_or(0);
    let outages = t["outages"].as_array().unwrap();
    assert!(!outages.is_empty(), "{t}");
    let duration = t["duration_s"].as_f64().unwrap();
    let rps = t["throughput_rps"].as_f64().unwrap();
    assert!(
        (rps * duration - completed as f64).abs() <= 1.0,
        "{rps} × {duration}"
    );
    if keep_going {
        out.assert_success();
        assert_eq!(t["outcome"], "completed");
        // The replay went on past the freeze to the trace's end (3 s).
        assert!(duration >= 2.9, "{duration}");
        assert!(t["requests"]["reconnect_attempts"].as_u64().unwrap() > 0);
        // Every command settled: answered before the freeze, or failed after it.
        assert!(timeouts > 0, "{}", t["requests"]);
        assert_eq!(
            (failed + completed, unanswered),
            (1200, 0),
            "{}",
            t["requests"]
        );
    } else {
        assert_eq!(out.code, Some(1), "{out:?}");
        assert_eq!(t["outcome"], "aborted");
        // As a benchmark run without -e: what was in flight is unanswered, not failed.
        assert!(unanswered > 0, "{}", t["requests"]);
        let line = out.single_stderr_line();
        assert!(
            line.contains("no reply from") && line.contains("-e"),
            "{line}"
        );
    }
}

#[test]
fn a_replay_whose_valkey_freezes_for_good_ends_with_an_outage() {
    frozen_for_good(Server::start_valkey(), true);
}

#[test]
fn a_replay_whose_redis_freezes_for_good_ends_with_an_outage() {
    frozen_for_good(Server::start(), true);
}

#[test]
fn without_e_a_frozen_valkey_ends_the_replay_at_the_first_timeout() {
    frozen_for_good(Server::start_valkey(), false);
}

#[test]
fn without_e_a_frozen_redis_ends_the_replay_at_the_first_timeout() {
    frozen_for_good(Server::start(), false);
}

/// Ctrl-C while the server is frozen (no `--timeout`): the partial report and record are
/// written (exit 130, outcome `interrupted`), the commands in flight counted as unanswered and
/// the stall listed as an outage, as a benchmark run interrupted there has them.
#[test]
fn ctrl_c_while_the_server_is_frozen_keeps_what_was_measured() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let trace = dir.path().join("c.trace");
    let mut text = String::new();
    for i in 0..4000 {
        let us = i * 2500;
        text.push_str(&format!(
            "{}.{:06} [0 c{}] \"INCR\" \"n\"\n",
            1_700_000_000 + us / 1_000_000,
            us % 1_000_000,
            i % 4
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let json = dir.path().join("c.json");
    let port = server.port().to_string();
    let run = Running::spawn_args(&s(&[
        "replay",
        "-p",
        &port,
        "--json",
        json.to_str().unwrap(),
        trace.to_str().unwrap(),
    ]));
    thread::sleep(Duration::from_millis(900));
    server.signal(libc::SIGSTOP);
    thread::sleep(Duration::from_millis(1600));
    run.interrupt();
    let out = run.finish(Duration::from_secs(30));
    server.signal(libc::SIGCONT);
    out.assert_code(130);
    out.assert_stdout_contains("====== REPLAY ======");
    let rec = record(&json);
    let t = &rec["tests"][0];
    assert_eq!(t["outcome"], "interrupted");
    let (completed, _, unanswered) = accounted(t);
    assert!(completed > 0 && unanswered > 0, "{}", t["requests"]);
    assert!(!t["outages"].as_array().unwrap().is_empty(), "{t}");
}
