//! `respbench capture --max-backlog` (issue 25): a capture that cannot keep up makes the server
//! buffer MONITOR output for it without limit, so it stops past its bound, exit 1, with one line
//! saying so, and the trace written so far is kept and readable. Valkey 9.1 and Redis 7.0.
//!
//! Made deterministic by stopping the capture process (SIGSTOP, then waiting until every thread
//! is stopped: it reads nothing, as a capture starved of CPU or blocked on a slow disk reads
//! nothing) while the test sends a burst of 30 MB of MONITOR output, checking that the server
//! holds it for the capture (`CLIENT LIST`'s `omem`), then letting the capture go on (SIGCONT)
//! after more than its time between backlog checks: its first step is a check, which sees the
//! bound passed.

use std::path::Path;
use std::time::Duration;

use respbench::trace::{Entry, Reader, TraceError};

use crate::harness::{Client, Server, TempDir, spawn_respbench, wait_until};

/// The `SET` keys of the trace at `path`, read up to its end or a cut last entry.
fn trace_keys(path: &Path) -> Vec<String> {
    let Ok(mut r) = Reader::open(path) else {
        return Vec::new();
    };
    let mut e = Entry::empty();
    let mut keys = Vec::new();
    loop {
        match r.next_into(&mut e) {
            Ok(true) => keys.push(String::from_utf8_lossy(&e.args().unwrap()[1]).into_owned()),
            Ok(false) | Err(TraceError::Truncated { .. }) => return keys,
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
}

/// The `CLIENT LIST` line of the server's MONITOR client.
fn monitor_line(admin: &mut Client) -> Option<String> {
    let list = admin.bulk(&["CLIENT", "LIST"]).unwrap_or_default();
    String::from_utf8_lossy(&list)
        .lines()
        .find(|l| l.contains(" cmd=monitor"))
        .map(str::to_string)
}

/// Whether every thread of process `pid` is stopped (`T` in `/proc/PID/task/*/stat`).
fn stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        std::fs::read_to_string(t.path().join("stat")).is_ok_and(|stat| {
            // `PID (COMM) STATE …`: the state follows the last `)`.
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
        })
    })
}

fn omem(line: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix("omem="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn a_capture_that_falls_behind_stops_at_its_bound(server: Server) {
    let dir = TempDir::new();
    let trace = dir.path().join("b.trace");
    let port = server.port().to_string();
    let cap = spawn_respbench(&[
        "capture",
        "-p",
        &port,
        "-o",
        trace.to_str().unwrap(),
        "--max-backlog",
        "1",
        "--duration",
        "120",
    ]);
    let mut admin = server.client();
    assert!(
        wait_until(Duration::from_secs(10), || monitor_line(&mut admin)
            .is_some()),
        "the capture's MONITOR connection appears"
    );
    // What the capture reads while it keeps up is on disk (it flushes when traffic pauses).
    let markers: Vec<String> = (0..5).map(|i| format!("marker:{i}")).collect();
    for m in &markers {
        admin.ok(&["SET", m, "1"]);
    }
    assert!(
        wait_until(Duration::from_secs(10), || trace_keys(&trace).len() == 5),
        "the markers reach the trace: {:?}",
        trace_keys(&trace)
    );

    cap.signal(libc::SIGSTOP);
    // Stopped means every thread of it (a stop signal reaches a thread running on another core
    // a moment later).
    assert!(
        wait_until(Duration::from_secs(10), || stopped(cap.pid())),
        "the capture is stopped"
    );
    let value = "x".repeat(10_000);
    for i in 0..3_000 {
        admin.ok(&["SET", &format!("burst:{i}"), &value]);
    }
    // The server holds what the stopped capture did not read (the sockets hold the rest).
    assert!(
        wait_until(Duration::from_secs(10), || {
            monitor_line(&mut admin).is_some_and(|l| omem(&l) > 2 << 20)
        }),
        "the server buffers MONITOR output for the stopped capture: {:?}",
        monitor_line(&mut admin)
    );
    // Held stopped for longer than the capture's 250 ms between backlog checks: its next step
    // on waking is a check (else it would first read on until the check was due).
    std::thread::sleep(Duration::from_secs(1));
    cap.signal(libc::SIGCONT);
    let out = cap.finish(Duration::from_secs(30));
    out.assert_code(1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "the MONITOR notice and one line: {}",
        out.stderr
    );
    let last = lines[1];
    assert!(
        last.starts_with("respbench capture: stopped: the server holds ")
            && last.contains("(over --max-backlog 1 MiB)"),
        "{last}"
    );
    // The trace kept: the markers, then at most the burst's first command or two (one read on
    // waking, one more if the stop came between a backlog request and its reply, which then
    // tells of the buffer before the burst).
    let keys = trace_keys(&trace);
    assert_eq!(keys[..5], markers[..], "{keys:?}");
    let burst = &keys[5..];
    assert!(
        burst.len() <= 2
            && burst
                .iter()
                .enumerate()
                .all(|(i, k)| *k == format!("burst:{i}")),
        "{keys:?}"
    );
    assert!(
        last.ends_with(&format!(
            "{} commands were written to {}",
            keys.len(),
            trace.display()
        )),
        "{last}"
    );
    // The server let go of the buffer with the capture's connection.
    assert!(
        wait_until(Duration::from_secs(10), || monitor_line(&mut admin)
            .is_none()),
        "the MONITOR connection is closed"
    );
}

#[test]
fn a_capture_past_max_backlog_stops_and_keeps_its_trace_on_valkey() {
    a_capture_that_falls_behind_stops_at_its_bound(Server::start_valkey());
}

#[test]
fn a_capture_past_max_backlog_stops_and_keeps_its_trace_on_redis() {
    a_capture_that_falls_behind_stops_at_its_bound(Server::start());
}
