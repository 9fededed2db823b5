//! Going on through failures (issue 11): a Valkey server SIGKILLed and restarted, frozen for a
//! while or for good, respbench sent SIGTERM, and a scripted server for what a real one does not
//! do on demand (a reset in the middle of a reply, a close right after the last reply, garbage,
//! a reply that never ends, a server that never answers `CONFIG GET`). No timing assertions: each
//! run only has to end within a generous hard limit, and its figures must add up.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{
    Output, Server, ServerKind, ServerOptions, TempDir, spawn_respbench, wait_until,
};
use super::record::check_with_python;

/// The hard limit for any run here.
const LIMIT: Duration = Duration::from_secs(60);

pub(super) fn record(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the --json record");
    serde_json::from_str(&text).expect("JSON")
}

/// The test's request counts; asserts that every request issued is accounted once.
pub(super) fn accounted(test: &Value) -> (u64, u64, u64) {
    let req = &test["requests"];
    let n = |k: &str| req[k].as_u64().unwrap_or_else(|| panic!("{k} in {req}"));
    let (issued, completed, failed, unanswered) =
        (n("issued"), n("completed"), n("failed"), n("unanswered"));
    assert_eq!(completed + failed + unanswered, issued, "{req}");
    (completed, failed, unanswered)
}

pub(super) fn json_args<'a>(
    dir: &'a TempDir,
    name: &str,
    args: &[&'a str],
) -> (Vec<String>, std::path::PathBuf) {
    let path = dir.path().join(name);
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.push("--json".into());
    all.push(path.to_str().expect("UTF-8 path").into());
    (all, path)
}

#[test]
fn valkey_killed_and_restarted_with_e_goes_on_and_reports_the_outage() {
    let mut server = Server::start_valkey();
    let dir = TempDir::new();
    // A SET:GET mix, so the checker also sees lost requests charged to their commands.
    let (args, path) = json_args(
        &dir,
        "r.json",
        &["--ratio", "1:1", "-e", "--duration", "6", "-c", "8"],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = server.spawn_bench(&args);
    thread::sleep(Duration::from_millis(1500));
    server.kill_and_restart(Duration::from_secs(2));
    let out = run.finish(LIMIT);
    out.assert_success();
    assert!(
        out.stdout.contains("Outages (requests lost"),
        "{}",
        out.stdout
    );
    let rec = record(&path);
    let test = &rec["tests"][0];
    let (completed, failed, _) = accounted(test);
    assert!(completed > 0 && failed > 0, "{}", test["requests"]);
    let kinds = test["requests"]["errors"].as_object().unwrap();
    assert!(
        kinds.keys().any(|k| k.starts_with("connection")),
        "{kinds:?}"
    );
    assert!(test["requests"]["reconnects"].as_u64().unwrap() >= 8);
    let outages = test["outages"].as_array().unwrap();
    assert!(!outages.is_empty(), "{test}");
    let longest = outages
        .iter()
        .map(|o| o["duration_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    // The server was down 2 s (plus its start-up): a generous bound either side.
    assert!((0.5..=6.0).contains(&longest), "{outages:?}");
    // Requests completed after the restart.
    let end = outages[0]["end_s"].as_f64().unwrap() as usize;
    let after: u64 = test["timeline"].as_array().unwrap()[end..]
        .iter()
        .map(|r| r["completed"].as_u64().unwrap())
        .sum();
    assert!(after > 0, "{}", test["timeline"]);
    check_with_python(&path);
}

/// The server watch (INFO once a second on its own connection) reconnects after the restart:
/// server figures resume, and the seconds it could not answer are missing, not made up.
#[test]
fn the_server_watch_reconnects_after_a_restart_and_leaves_the_gap_empty() {
    let mut server = Server::start_valkey();
    let dir = TempDir::new();
    let (args, path) = json_args(&dir, "r.json", &["-t", "set", "-e", "--duration", "10"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = server.spawn_bench(&args);
    thread::sleep(Duration::from_millis(1500));
    server.kill_and_restart(Duration::from_secs(2));
    let out = run.finish(LIMIT);
    out.assert_success();
    out.assert_stdout_contains("the watch lost the server 1 time(s) and reconnected");
    let rec = record(&path);
    let test = &rec["tests"][0];
    let watch = &test["server"][0];
    assert_eq!(watch["watch_gaps"].as_u64(), Some(1), "{watch}");
    assert_eq!(watch["partial"], true);
    let rows = test["timeline"].as_array().unwrap();
    let with_figures: Vec<usize> = rows
        .iter()
        .filter(|r| !r["server"].as_array().unwrap().is_empty())
        .map(|r| r["second"].as_u64().unwrap() as usize)
        .collect();
    // Figures after the outage (the restarted server's), none while it was down.
    let end = test["outages"][0]["end_s"].as_f64().unwrap();
    assert!(
        with_figures.iter().any(|&s| s as f64 >= end),
        "no server figures after the restart (outage ended at {end} s): {with_figures:?}"
    );
    assert!(with_figures.len() < rows.len(), "{with_figures:?}");
    check_with_python(&path);
}

#[test]
fn without_e_a_killed_server_ends_the_run_with_a_hint_and_the_partial_report() {
    let server = Server::start_valkey();
    let run = server.spawn_bench(&["-t", "set", "--duration", "20", "-c", "4"]);
    thread::sleep(Duration::from_millis(1000));
    server.signal(libc::SIGKILL);
    let out = run.finish(LIMIT);
    out.assert_code(1);
    out.assert_stderr_contains("use -e to count failures");
    out.assert_stdout_contains("====== SET ======");
}

#[test]
fn a_server_stopped_for_3_s_with_timeout_1_counts_timeouts_and_goes_on() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let (args, path) = json_args(
        &dir,
        "r.json",
        &[
            "-t",
            "set",
            "-e",
            "--timeout",
            "1",
            "--duration",
            "7",
            "-c",
            "4",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = server.spawn_bench(&args);
    // Frozen once the test is under way (on a busy machine connecting alone can take seconds:
    // a fixed sleep froze the server before the first request), with a second of replies before.
    let mut c = server.client();
    assert!(wait_until(Duration::from_secs(30), || c.calls("set") > 0));
    thread::sleep(Duration::from_millis(1000));
    server.signal(libc::SIGSTOP);
    thread::sleep(Duration::from_secs(3));
    server.signal(libc::SIGCONT);
    let out = run.finish(LIMIT);
    out.assert_success();
    let rec = record(&path);
    let test = &rec["tests"][0];
    accounted(test);
    assert!(
        test["requests"]["errors"]["timeout"].as_u64().unwrap_or(0) >= 4,
        "{}",
        test["requests"]
    );
    // Replies again after SIGCONT: the last seconds completed requests.
    let rows = test["timeline"].as_array().unwrap();
    let tail: u64 = rows[rows.len().saturating_sub(2)..]
        .iter()
        .map(|r| r["completed"].as_u64().unwrap())
        .sum();
    assert!(tail > 0, "{rows:?}");
    assert!(!test["outages"].as_array().unwrap().is_empty());
    check_with_python(&path);
}

#[test]
fn a_server_frozen_for_good_ends_the_run_by_itself_and_it_says_why() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let (args, path) = json_args(&dir, "r.json", &["-t", "set", "--duration", "2", "-c", "4"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = server.spawn_bench(&args);
    thread::sleep(Duration::from_millis(800));
    server.signal(libc::SIGSTOP);
    let out = run.finish(LIMIT);
    server.signal(libc::SIGCONT);
    out.assert_success();
    out.assert_stdout_contains("no reply within the 5 s grace after --duration");
    out.assert_stdout_contains("no reply until the test ended");
    let rec = record(&path);
    let (_, _, unanswered) = accounted(&rec["tests"][0]);
    assert!(unanswered >= 1, "{}", rec["tests"][0]["requests"]);
}

#[test]
fn sigterm_mid_run_prints_the_partial_report_and_exits_143() {
    let server = Server::start_valkey();
    let run = server.spawn_bench(&["-t", "set", "--duration", "30", "-c", "2"]);
    thread::sleep(Duration::from_millis(1500));
    run.signal(libc::SIGTERM);
    let out = run.finish(LIMIT);
    out.assert_code(143);
    out.assert_stdout_contains("====== SET ======");
    assert!(out.completed() > 0, "{}", out.stdout);
    // The signal it was, not "Ctrl-C".
    out.assert_stdout_contains("interrupted: yes (partial results: measured until SIGTERM)");
}

#[test]
fn sigterm_while_the_server_is_frozen_counts_the_unanswered() {
    let server = Server::start_valkey();
    let run = server.spawn_bench(&["-t", "set", "--duration", "30", "-c", "3"]);
    thread::sleep(Duration::from_millis(1000));
    server.signal(libc::SIGSTOP);
    thread::sleep(Duration::from_millis(500));
    run.signal(libc::SIGTERM);
    let out = run.finish(LIMIT);
    server.signal(libc::SIGCONT);
    out.assert_code(143);
    out.assert_stdout_contains("unanswered: 3 (still waiting for a reply when interrupted");
}

// ---- a scripted server -----------------------------------------------------------------------

/// What the scripted server does with the load connections (the first connection, the control
/// one, gets its `CONFIG GET` replies unless `Silent`).
#[derive(Clone, Copy)]
enum Script {
    /// Accepts and never answers anything.
    Silent,
    /// Answers the first PING with half a bulk reply, then resets the connection (RST).
    ResetMidReply,
    /// Answers PINGs with `+PONG`; closes the connection right after the `n`-th reply.
    CloseAfter(usize),
    /// Answers PINGs with bytes that are not RESP.
    Garbage,
    /// Answers the first PING with the start of a bulk reply that never ends.
    Endless,
}

/// A scripted server on a free loopback port, serving until `limit` has passed (its threads then
/// end; the test's respbench run is bounded well within it).
fn scripted(script: Script, limit: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + limit;
    thread::spawn(move || {
        let mut first = true;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((s, _)) => {
                    let control = first;
                    first = false;
                    thread::spawn(move || serve(s, script, control, deadline));
                }
                Err(_) => thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    port
}

fn serve(mut s: TcpStream, script: Script, control: bool, deadline: Instant) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = [0u8; 4096];
    let mut replies = 0;
    while Instant::now() < deadline {
        let n = match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(_) => continue,
        };
        let text = String::from_utf8_lossy(&buf[..n]);
        if matches!(script, Script::Silent) {
            continue;
        }
        if control || text.contains("CONFIG") {
            let _ = s.write_all(b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
            continue;
        }
        let pings = text.matches("PING").count().max(1);
        match script {
            Script::Silent => {}
            Script::ResetMidReply => {
                let _ = s.write_all(b"$10\r\nhel");
                thread::sleep(Duration::from_millis(50));
                reset(&s);
                return;
            }
            Script::CloseAfter(limit) => {
                for _ in 0..pings {
                    let _ = s.write_all(b"+PONG\r\n");
                    replies += 1;
                    if replies == limit {
                        return; // dropped: closed right after the last reply's bytes
                    }
                }
            }
            Script::Garbage => {
                let _ = s.write_all(b"this is not RESP\r\n");
            }
            Script::Endless => {
                let _ = s.write_all(b"$1000000\r\nabc");
            }
        }
    }
}

/// Closes with an RST (SO_LINGER 0) rather than a FIN.
fn reset(s: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a socket we own, with a correctly sized linger value.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

fn run_scripted(script: Script, args: &[&str]) -> Output {
    let port = scripted(script, Duration::from_secs(50)).to_string();
    let mut all = vec![
        "-p",
        port.as_str(),
        "-t",
        "ping_inline",
        "--no-server-stats",
    ];
    all.extend_from_slice(args);
    spawn_respbench(&all).finish(LIMIT)
}

#[test]
fn a_reset_in_the_middle_of_a_reply_counts_connection_reset_with_e() {
    let out = run_scripted(Script::ResetMidReply, &["-e", "-n", "20", "-c", "1"]);
    out.assert_success();
    out.assert_stdout_contains("connection reset: ");
    out.assert_stdout_contains("reconnects: ");
    // Without -e: the run stops, with the hint.
    let out = run_scripted(Script::ResetMidReply, &["-n", "20", "-c", "1"]);
    out.assert_code(1);
    out.assert_stderr_contains("-e");
}

#[test]
fn a_close_right_after_the_last_reply_does_not_hang() {
    // The server closes right after the 5th reply: the 5 requests complete, nothing fails.
    let out = run_scripted(Script::CloseAfter(5), &["-n", "5", "-c", "1"]);
    out.assert_success();
    assert_eq!(out.completed(), 5, "{}", out.stdout);
    assert!(!out.stdout.contains("failed"), "{}", out.stdout);
    // More requests than it answers per connection, with -e: closed connections are reopened.
    let out = run_scripted(Script::CloseAfter(3), &["-e", "-n", "30", "-c", "1"]);
    out.assert_success();
    out.assert_stdout_contains("reconnects: ");
}

#[test]
fn garbage_ends_the_run_with_a_protocol_error() {
    let out = run_scripted(Script::Garbage, &["-e", "-n", "5", "-c", "1"]);
    out.assert_code(1);
    out.assert_stderr_contains("protocol error");
}

#[test]
fn a_reply_that_never_ends_times_out_or_ends_at_the_duration() {
    let out = run_scripted(
        Script::Endless,
        &["-e", "--timeout", "0.5", "--duration", "2", "-c", "1"],
    );
    out.assert_success();
    out.assert_stdout_contains("timeout: ");
    out.assert_stdout_contains("no request completed");
    let out = run_scripted(Script::Endless, &["--duration", "1", "-c", "1"]);
    out.assert_success();
    out.assert_stdout_contains("unanswered: 1 ");
}

#[test]
fn a_server_that_never_answers_config_get_is_given_up_on() {
    let out = run_scripted(Script::Silent, &["-n", "5"]);
    out.assert_code(1);
    out.assert_stderr_contains("CONFIG GET");
    // Not the socket's EAGAIN ("Resource temporarily unavailable").
    out.assert_stderr_contains("no reply within 10 s");
}

#[test]
fn sigterm_during_start_up_exits_143_and_says_what_it_was_doing() {
    let port = scripted(Script::Silent, Duration::from_secs(30)).to_string();
    let run = spawn_respbench(&["-p", &port, "-t", "ping_inline", "-n", "5"]);
    thread::sleep(Duration::from_millis(800));
    run.signal(libc::SIGTERM);
    let out = run.finish(LIMIT);
    out.assert_code(143);
    out.assert_stderr_contains("interrupted while starting");
}

#[test]
fn at_maxclients_with_e_the_refused_connections_are_counted_and_the_run_goes_on() {
    let server = Server::start_with(ServerOptions {
        kind: ServerKind::Valkey,
        extra: vec!["--maxclients".into(), "4".into()],
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let (args, path) = json_args(
        &dir,
        "r.json",
        &[
            "-t",
            "set",
            "-e",
            "--duration",
            "2",
            "-c",
            "8",
            "--no-server-stats",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = server.bench(&args);
    out.assert_success();
    let rec = record(&path);
    let test = &rec["tests"][0];
    let (completed, failed, _) = accounted(test);
    assert!(completed > 0 && failed > 0, "{}", test["requests"]);
    assert!(test["requests"]["reconnect_attempts"].as_u64().unwrap() > 0);
    // The server's "ERR max number of clients reached" is a refused connection.
    let refused = test["requests"]["errors"]["connection refused"].as_u64();
    assert!(refused.unwrap_or(0) > 0, "{}", test["requests"]);
    assert!(
        test["requests"]["errors"].get("ERR").is_none(),
        "{}",
        test["requests"]
    );
}

/// A server at `maxclients` refuses a reopened connection that has nothing to send yet (`--rps`
/// leaves it waiting for its send time): its `ERR max number of clients reached` is the refusal,
/// not "a reply nobody asked for". Before, every such run ended with that protocol error (exit 1);
/// without `--rps` it did in 2 of 3 runs at `-c 1000`, when the deadline left a reopened
/// connection idle.
#[test]
fn at_maxclients_a_refusal_with_nothing_in_flight_is_no_protocol_error() {
    for kind in [ServerKind::Redis, ServerKind::Valkey] {
        let server = Server::start_with(ServerOptions {
            kind,
            extra: vec!["--maxclients".into(), "2".into()],
            ..ServerOptions::default()
        });
        let dir = TempDir::new();
        let (args, path) = json_args(
            &dir,
            "r.json",
            &[
                "-t",
                "set",
                "-e",
                "--duration",
                "2",
                "--rps",
                "20",
                "-c",
                "6",
                "--no-server-stats",
            ],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = server.bench(&args);
        out.assert_success();
        assert!(!out.stderr.contains("protocol error"), "{}", out.stderr);
        let test = &record(&path)["tests"][0];
        let (completed, _, _) = accounted(test);
        assert!(completed > 0, "{kind:?}: {}", test["requests"]);
        let req = &test["requests"];
        let n = |k: &str| req[k].as_u64().unwrap_or_else(|| panic!("{k} in {req}"));
        // Every reopened connection beyond the two the server takes is refused: refusals, not
        // reconnects (before, all 46 or so attempts counted as reconnects).
        assert!(n("reconnect_refusals") > 0, "{kind:?}: {req}");
        assert!(
            n("reconnects") + n("reconnect_refusals") <= n("reconnect_attempts"),
            "{kind:?}: {req}"
        );
        out.assert_stdout_contains("refused)");
        check_with_python(&path);
    }
}

// ---- a connect that hangs at start-up ------------------------------------------------------------

/// Connections to `port` in SYN_SENT (this network namespace's IPv4 sockets): a connect that
/// waits for the server's answer.
fn syn_sent_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let remote = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2].ends_with(&remote) && f[3] == "02"
        })
        .count()
}

/// A loopback listener whose accept queue is full (backlog 0, never accepts, filled by our own
/// connects), so the kernel drops further SYNs and a connect to it hangs. Returns the listener
/// and the sockets filling it (both must live while the test runs).
fn full_listener() -> (socket2::Socket, Vec<socket2::Socket>, u16) {
    use socket2::{Domain, Protocol, Socket, Type};
    let new = || Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).expect("socket");
    let l = new();
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    l.bind(&any.into()).expect("bind");
    l.listen(0).expect("listen");
    let addr = l.local_addr().unwrap().as_socket().unwrap();
    let fill: Vec<Socket> = (0..4)
        .map(|_| {
            let s = new();
            s.set_nonblocking(true).unwrap();
            let _ = s.connect(&addr.into());
            s
        })
        .collect();
    (l, fill, addr.port())
}

/// Ctrl-C or SIGTERM while the control connection's connect hangs: the run stops there, with
/// the "interrupted while starting" line naming the connect, and exits 130 or 143. Before
/// connects were sliced, the signal was retried past and the connect ran into its 10 s timeout,
/// so the line said "timed out" instead.
#[test]
fn a_signal_during_a_hanging_connect_ends_it() {
    let (_listener, _fill, port) = full_listener();
    let port_s = port.to_string();
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let before = syn_sent_to(port);
        let run = spawn_respbench(&["-p", &port_s, "-t", "ping_inline", "-n", "5"]);
        assert!(
            wait_until(LIMIT, || syn_sent_to(port) > before),
            "respbench never tried to connect"
        );
        run.signal(signal);
        let out = run.finish(LIMIT);
        out.assert_code(code);
        out.assert_stderr_contains("interrupted while starting");
        out.assert_stderr_contains(&format!("127.0.0.1:{port}: interrupted)"));
        assert!(!out.stderr.contains("timed out"), "{}", out.stderr);
    }
}
