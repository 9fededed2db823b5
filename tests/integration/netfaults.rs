//! Real network faults (issue 19, item 6): a partition (packets vanish: no RST, no FIN) made with
//! a `pfifo limit 0` queue on a veth pair to a server in the test's own network namespace
//! (`netns.rs`), and delays and stalls through the test harness's fault proxy (`faultproxy.rs`).
//! Every run is bounded (`--duration`, `--timeout`, a hard limit on the process); the only timing
//! assertions are lower bounds a correct build always meets (a stall of 2 s is an outage of at
//! least 1.8 s; 10 ms added each way makes a round trip at least 20 ms).

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::failures::{accounted, json_args, record};
use super::faultproxy::FaultProxy;
use super::harness::{Server, ServerKind, TempDir, spawn_respbench};
use super::netns::NetnsServer;
use super::record::check_with_python;

/// The hard limit for any run here.
const LIMIT: Duration = Duration::from_secs(60);

/// `tests[0]` of the record at `path`, after the independent checker has seen the record.
fn first_test(path: &std::path::Path) -> Value {
    check_with_python(path);
    record(path)["tests"][0].clone()
}

fn errors(test: &Value, kind: &str) -> u64 {
    test["requests"]["errors"][kind].as_u64().unwrap_or(0)
}

/// The longest outage in the record's test, in seconds.
fn longest_outage(test: &Value) -> f64 {
    test["outages"]
        .as_array()
        .expect("outages")
        .iter()
        .map(|o| o["duration_s"].as_f64().expect("duration_s"))
        .fold(0.0, f64::max)
}

/// Runs respbench against the namespaced server with `args`, cutting the network `cut_at` into
/// the run for `cut_for` (for good when `None`); returns its output's record test.
fn partitioned_run(
    server: &NetnsServer,
    args: &[&str],
    cut_at: Duration,
    cut_for: Option<Duration>,
) -> (super::harness::Output, Value) {
    let dir = TempDir::new();
    let port = server.port().to_string();
    let mut all = vec!["-h", server.addr(), "-p", &port, "--no-server-stats"];
    all.extend_from_slice(args);
    let (all, path) = json_args(&dir, "r.json", &all);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let run = spawn_respbench(&all);
    thread::sleep(cut_at);
    server.partition();
    if let Some(d) = cut_for {
        thread::sleep(d);
        server.heal();
    }
    let out = run.finish(LIMIT);
    let test = first_test(&path);
    (out, test)
}

/// A 2 s partition under `--timeout 0.5 -e`: the requests in flight fail as `timeout`, the
/// reconnects made during it time out too (their SYNs vanish: attempts, neither reconnects nor
/// refusals), the run goes on and comes back after it, and the outage spans the partition.
#[test]
fn a_partition_fails_requests_as_timeouts_and_the_outage_spans_it() {
    for kind in [ServerKind::Valkey, ServerKind::Redis] {
        let Some(server) = NetnsServer::start(kind) else {
            return;
        };
        let (out, test) = partitioned_run(
            &server,
            &[
                "-t",
                "set",
                "-e",
                "--timeout",
                "0.5",
                "--duration",
                "6",
                "-c",
                "4",
            ],
            Duration::from_millis(1500),
            Some(Duration::from_secs(2)),
        );
        out.assert_success();
        let req = &test["requests"];
        let (completed, _, unanswered) = accounted(&test);
        assert!(completed > 0, "{kind:?}: {req}");
        assert_eq!(unanswered, 0, "{kind:?}: {req}");
        // Each of the 4 connections had a request in flight when the network went.
        assert!(errors(&test, "timeout") >= 4, "{kind:?}: {req}");
        for other in [
            "connection reset",
            "connection closed",
            "connection refused",
        ] {
            assert_eq!(errors(&test, other), 0, "{kind:?}: no RST, no FIN: {req}");
        }
        let n = |k: &str| req[k].as_u64().unwrap_or_else(|| panic!("{k} in {req}"));
        assert!(
            n("reconnects") >= 4,
            "{kind:?}: back after the partition: {req}"
        );
        assert!(
            n("reconnect_attempts") > n("reconnects") + n("reconnect_refusals"),
            "{kind:?}: connects during the partition time out: {req}"
        );
        let longest = longest_outage(&test);
        assert!(
            longest >= 1.8,
            "{kind:?}: outage {longest} s: {}",
            test["outages"]
        );
        out.assert_stdout_contains("Outages");
    }
}

/// A connect into a partition hangs until the connect timeout, then fails with the reference's
/// words: it does not hang, and it is not mistaken for a refusal.
#[test]
fn a_connect_into_a_partition_times_out() {
    let Some(server) = NetnsServer::start(ServerKind::Valkey) else {
        return;
    };
    server.partition();
    let port = server.port().to_string();
    let out =
        spawn_respbench(&["-h", server.addr(), "-p", &port, "-t", "set", "-n", "10"]).finish(LIMIT);
    out.assert_code(1);
    out.assert_stderr_contains(&format!(
        "Could not connect to server at {}:{port}",
        server.addr()
    ));
    out.assert_stderr_contains("timed out");
}

/// Where the kernel has `netem` (the CI kernels do not): 10 ms added to each end of the veth
/// pair shows in the latency as through the fault proxy.
#[test]
fn a_netem_delay_shows_in_the_latency_where_the_kernel_has_it() {
    let Some(server) = NetnsServer::start(ServerKind::Redis) else {
        return;
    };
    if let Err(e) = server.delay_each_way(Duration::from_millis(10)) {
        eprintln!("SKIPPED: no netem in this kernel ({e})");
        return;
    }
    let dir = TempDir::new();
    let port = server.port().to_string();
    let (args, path) = json_args(
        &dir,
        "r.json",
        &[
            "-h",
            server.addr(),
            "-p",
            &port,
            "-t",
            "set",
            "-n",
            "40",
            "-c",
            "1",
            "--no-server-stats",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_respbench(&args).finish(LIMIT).assert_success();
    let test = first_test(&path);
    let p50_ms = test["latency_us"]["corrected"]["p50"].as_f64().unwrap() / 1000.0;
    assert!(p50_ms >= 20.0, "p50 {p50_ms} ms with 10 ms each way");
}

/// 10 ms added each way by the fault proxy: every round trip takes at least 20 ms, so the
/// reported p50 (and minimum) is at least that (measured by hand: 0.05 ms → 20.5 ms at `-c 1`).
#[test]
fn a_delay_each_way_shows_in_the_latency() {
    for kind in [ServerKind::Redis, ServerKind::Valkey] {
        let server = Server::start_with(super::harness::ServerOptions {
            kind,
            ..Default::default()
        });
        let upstream: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
        let proxy = FaultProxy::start(upstream, Duration::from_millis(10));
        let dir = TempDir::new();
        let port = proxy.port().to_string();
        let (args, path) = json_args(
            &dir,
            "r.json",
            &[
                "-p",
                &port,
                "-t",
                "set",
                "-n",
                "40",
                "-c",
                "1",
                "--no-server-stats",
            ],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = spawn_respbench(&args).finish(LIMIT);
        out.assert_success();
        let test = first_test(&path);
        let (completed, _, _) = accounted(&test);
        assert_eq!(completed, 40);
        let lat = &test["latency_us"]["corrected"];
        for p in ["min", "p50"] {
            let ms = lat[p].as_f64().unwrap() / 1000.0;
            assert!(ms >= 20.0, "{kind:?}: {p} {ms} ms with 10 ms each way");
        }
    }
}

/// A stall with `--timeout 0.5 -e` (the proxy holds every byte for 2 s, the server's TCP peer
/// stays alive): the requests held fail as `timeout`, the connections reopened meanwhile are held
/// too, and once the bytes flow again the run completes requests again; every request is
/// accounted once, the late replies to closed connections included.
#[test]
fn a_stall_through_the_proxy_fails_requests_as_timeouts() {
    let server = Server::start_valkey();
    let upstream: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let proxy = FaultProxy::start(upstream, Duration::ZERO);
    let dir = TempDir::new();
    let port = proxy.port().to_string();
    let (args, path) = json_args(
        &dir,
        "r.json",
        &[
            "-p",
            &port,
            "-t",
            "set",
            "-e",
            "--timeout",
            "0.5",
            "--duration",
            "4",
            "-c",
            "2",
            "--no-server-stats",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = spawn_respbench(&args);
    thread::sleep(Duration::from_millis(1000));
    proxy.hold();
    thread::sleep(Duration::from_secs(2));
    proxy.release();
    let out = run.finish(LIMIT);
    out.assert_success();
    let test = first_test(&path);
    accounted(&test);
    assert!(errors(&test, "timeout") >= 2, "{}", test["requests"]);
    let seconds = test["timeline"].as_array().expect("timeline");
    let last = seconds.last().expect("a second");
    assert!(
        last["completed"].as_u64().unwrap() > 0,
        "completing again after the stall: {last}"
    );
    assert!(longest_outage(&test) >= 1.8, "{}", test["outages"]);
}

/// A partition that never heals: with `--timeout` every request after it fails, and the test's
/// throughput is over the test (`--duration 3`), not up to the last reply (it said "54,606 rps
/// over 2.01 s" of a longer test).
#[test]
fn a_partition_that_never_heals_is_measured_over_the_whole_test() {
    let Some(server) = NetnsServer::start(ServerKind::Valkey) else {
        return;
    };
    let (out, test) = partitioned_run(
        &server,
        &[
            "-t",
            "set",
            "-e",
            "--timeout",
            "0.5",
            "--duration",
            "3",
            "-c",
            "2",
        ],
        Duration::from_millis(1200),
        None,
    );
    out.assert_success();
    let (completed, _, _) = accounted(&test);
    let duration = test["duration_s"].as_f64().expect("duration_s");
    assert!(duration >= 3.0, "measured over {duration} s of a 3 s test");
    let rps = test["throughput_rps"].as_f64().expect("throughput_rps");
    assert!(
        rps <= completed as f64 / 3.0 + 1.0,
        "{rps} rps for {completed} in 3 s"
    );
    assert!(errors(&test, "timeout") >= 2, "{}", test["requests"]);
}

/// Without `--timeout`, a 2 s partition loses nothing (TCP retransmits after it heals) but no
/// reply comes for 2 s: that stretch is an outage (before, the report showed a 2.48 s maximum
/// latency and no outage at all).
#[test]
fn a_partition_without_timeout_shows_as_an_outage() {
    let Some(server) = NetnsServer::start(ServerKind::Redis) else {
        return;
    };
    let (out, test) = partitioned_run(
        &server,
        &["-t", "set", "--duration", "6", "-c", "2"],
        Duration::from_millis(1500),
        Some(Duration::from_secs(2)),
    );
    out.assert_success();
    let (completed, failed, unanswered) = accounted(&test);
    assert!(
        completed > 0 && failed == 0 && unanswered == 0,
        "{}",
        test["requests"]
    );
    let max_ms = test["latency_us"]["corrected"]["max"].as_f64().unwrap() / 1000.0;
    assert!(max_ms >= 2000.0, "max {max_ms} ms across a 2 s partition");
    let longest = longest_outage(&test);
    assert!(longest >= 1.8, "outage {longest} s: {}", test["outages"]);
    out.assert_stdout_contains("no reply in it (requests waited, none lost)");
}

/// A stall (the proxy holds every byte for 2 s, then lets them through): nothing is lost, and
/// the 2 s without a reply is an outage (the same rule as the partition's, without root).
#[test]
fn a_stall_through_the_proxy_is_an_outage_without_timeout() {
    let server = Server::start_valkey();
    let upstream: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let proxy = FaultProxy::start(upstream, Duration::ZERO);
    let dir = TempDir::new();
    let port = proxy.port().to_string();
    let (args, path) = json_args(
        &dir,
        "r.json",
        &[
            "-p",
            &port,
            "-t",
            "set",
            "--duration",
            "4",
            "-c",
            "2",
            "--no-server-stats",
        ],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = spawn_respbench(&args);
    thread::sleep(Duration::from_millis(1000));
    proxy.hold();
    thread::sleep(Duration::from_secs(2));
    proxy.release();
    let out = run.finish(LIMIT);
    out.assert_success();
    let test = first_test(&path);
    let (completed, failed, unanswered) = accounted(&test);
    assert!(
        completed > 0 && failed == 0 && unanswered == 0,
        "{}",
        test["requests"]
    );
    let longest = longest_outage(&test);
    assert!(longest >= 1.8, "outage {longest} s: {}", test["outages"]);
}
