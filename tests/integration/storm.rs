//! `--connect-storm` (issue 26 item 1) against Valkey 9.1 and Redis 7.0: every stage the options
//! imply is timed, the stages add up to each connection's total (measured on its own), TLS
//! handshakes are told full from resumed, a server at `maxclients` is counted as refusing in
//! the stage where it said so, and the password never shows.

use serde_json::Value as Json;

use super::harness::{Server, ServerKind, ServerOptions, ServerTls, TestCerts};

const PASSWORD: &str = "storm-secret-pw";

/// The record on stdout (`--json -`), checked against docs/record.schema.json.
fn record(stdout: &str) -> Json {
    let dir = super::harness::TempDir::new();
    let path = dir.path().join("storm.json");
    std::fs::write(&path, stdout).expect("a temporary file");
    super::record::check_with_python(&path);
    serde_json::from_str(stdout).expect("the record is JSON")
}

fn u(v: &Json) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The storm block's stage names in order, and checks that hold for every finished storm: the
/// stages' exact sums add up to the total's, and each stage counts every finished connection.
#[track_caller]
fn stages_add_up(storm: &Json) -> Vec<String> {
    let completed = u(&storm["completed"]);
    let stages = storm["stages"].as_array().expect("stages");
    let sum: u64 = stages.iter().map(|s| u(&s["sum_ns"])).sum();
    assert_eq!(sum, u(&storm["total"]["sum_ns"]), "stages add up: {storm}");
    assert!(u(&storm["total"]["sum_ns"]) > 0);
    assert_eq!(u(&storm["total"]["latency_us"]["count"]), completed);
    for s in stages {
        if !s["name"].as_str().unwrap_or("").starts_with("tls_") {
            assert_eq!(u(&s["latency_us"]["count"]), completed, "{s}");
        }
        assert!(!s["hdr"].as_str().unwrap_or("").is_empty(), "{s}");
    }
    stages
        .iter()
        .map(|s| s["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn storm_with_every_setup_stage(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        password: Some(PASSWORD.into()),
        kind,
        ..ServerOptions::default()
    });
    let received_before = server
        .client()
        .info_u64("stats", "total_connections_received");
    let out = server.bench(&[
        "-a",
        PASSWORD,
        "-3",
        "--dbnum",
        "2",
        "--connect-storm",
        "-c",
        "3",
        "-n",
        "150",
        "--json",
        "-",
        "PING",
    ]);
    out.assert_success();
    assert!(!out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD));
    let doc = record(&out.stdout);
    let storm = &doc["storm"];
    assert_eq!(u(&storm["attempted"]), 150, "{storm}");
    assert_eq!(u(&storm["completed"]), 150, "{storm}");
    assert_eq!(u(&storm["failed"]), 0);
    assert_eq!(
        stages_add_up(storm),
        ["connect", "hello_auth", "select", "command"],
        "the stages -a -3 --dbnum imply, in order"
    );
    assert!(storm["connects_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    // The server saw every connection (and the run's control and watch connections).
    let received = server
        .client()
        .info_u64("stats", "total_connections_received")
        - received_before;
    assert!(received >= 150, "{received}");
    assert!(u(&storm["connections_received"]) >= 150, "{storm}");
    assert_eq!(storm["server"].as_array().map(Vec::len), Some(1), "{storm}");
    // The human report (on stderr with --json -) names the stages and the rate.
    assert!(out.stderr.contains("CONNECT STORM"), "{}", out.stderr);
    assert!(out.stderr.contains("hello_auth"), "{}", out.stderr);
    assert!(out.stderr.contains("connects/s"), "{}", out.stderr);
}

#[test]
fn storm_times_every_stage_and_they_add_up_valkey() {
    storm_with_every_setup_stage(ServerKind::Valkey);
}

#[test]
fn storm_times_every_stage_and_they_add_up_redis() {
    storm_with_every_setup_stage(ServerKind::Redis);
}

#[test]
fn tls_storm_tells_resumed_handshakes_from_full_ones() {
    let certs = TestCerts::new();
    let server = Server::start_with(ServerOptions {
        tls: Some(ServerTls::new(&certs)),
        ..ServerOptions::default()
    });
    let ca = certs.ca.to_str().expect("UTF-8 path");
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        ca,
        "--tls-resume",
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "40",
        "--json",
        "-",
        "PING",
    ]);
    out.assert_success();
    let storm = &record(&out.stdout)["storm"];
    assert_eq!(u(&storm["completed"]), 40, "{storm}");
    let names = stages_add_up(storm);
    assert!(names.contains(&"tls_resumed".to_string()), "{storm}");
    let count = |name: &str| {
        storm["stages"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .map(|s| u(&s["latency_us"]["count"]))
            .unwrap_or(0)
    };
    // Every connection did exactly one handshake; sessions resume from the tickets earlier
    // connections got (the run's control connection's too, so even the first may resume).
    assert_eq!(count("tls_full") + count("tls_resumed"), 40);
    assert!(count("tls_resumed") >= 20, "most resume: {storm}");

    // Without --tls-resume every handshake is full.
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        ca,
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "10",
        "--json",
        "-",
    ]);
    out.assert_success();
    let storm = &record(&out.stdout)["storm"];
    assert_eq!(stages_add_up(storm), ["connect", "tls_full"], "{storm}");
}

fn storm_at_maxclients(kind: ServerKind) {
    // Two clients at most: the test's own connection and respbench's control connection take
    // both, so every storm connection is refused (the server accepts, says so and closes).
    let server = Server::start_with(ServerOptions {
        extra: vec!["--maxclients".into(), "2".into()],
        kind,
        ..ServerOptions::default()
    });
    let mut held = server.client();
    let rejected_before = held.info_u64("stats", "rejected_connections");
    let out = server.bench(&[
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "20",
        "--no-server-stats",
        "--json",
        "-",
        "PING",
    ]);
    // Every connection refused: the record says by stage and kind, and the run exits 1 (a
    // storm in which nothing completed, as a benchmark that could not connect).
    out.assert_code(1);
    // (With `--json -` the report is on stderr too.)
    assert!(
        out.stderr
            .lines()
            .last()
            .is_some_and(|l| l.contains("none of the 20 connections completed")),
        "{}",
        out.stderr
    );
    let storm = &record(&out.stdout)["storm"];
    assert_eq!(u(&storm["attempted"]), 20, "{storm}");
    assert_eq!(u(&storm["completed"]), 0, "{storm}");
    assert_eq!(u(&storm["failed"]), 20, "{storm}");
    let failures = storm["failures"].as_array().expect("failures");
    let mut maxclients = 0;
    for f in failures {
        // The refusal shows where the first reply is read: the command's stage.
        assert_eq!(f["stage"], "command", "{f}");
        assert_eq!(f["side"], "server", "{f}");
        let kind = f["kind"].as_str().unwrap_or("");
        assert!(["maxclients", "reset", "closed"].contains(&kind), "{f}");
        if kind == "maxclients" {
            maxclients += u(&f["count"]);
            assert!(
                f["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("max number of clients")
            );
        }
    }
    assert!(maxclients > 0, "{storm}");
    assert!(
        storm["client_limits"].as_array().is_none_or(Vec::is_empty),
        "{storm}"
    );
    let rejected = held.info_u64("stats", "rejected_connections") - rejected_before;
    assert!(
        rejected >= 20,
        "the server counted its refusals: {rejected}"
    );
}

#[test]
fn storm_at_maxclients_counts_refusals_by_stage_valkey() {
    storm_at_maxclients(ServerKind::Valkey);
}

#[test]
fn storm_at_maxclients_counts_refusals_by_stage_redis() {
    storm_at_maxclients(ServerKind::Redis);
}

#[test]
fn storm_refuses_options_it_cannot_honour() {
    let out = super::harness::respbench(&["--connect-storm", "-t", "set"]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("--connect-storm cannot be combined with -t"),
        "{}",
        out.stderr
    );
}

#[test]
fn storm_shards_merge_into_one_storm_and_compare_shows_it() {
    let server = Server::start_valkey();
    let dir = super::harness::TempDir::new();
    let mut files = Vec::new();
    for shard in ["0/2", "1/2"] {
        let path = dir.path().join(format!("s{}.json", &shard[..1]));
        let path = path.to_str().expect("UTF-8 path").to_string();
        server
            .bench(&[
                "--connect-storm",
                "-c",
                "2",
                "-n",
                "60",
                "--shard",
                shard,
                "--json",
                &path,
                "PING",
            ])
            .assert_success();
        files.push(path);
    }
    let merged = dir.path().join("merged.json");
    let merged = merged.to_str().expect("UTF-8 path");
    super::harness::respbench(&["merge", &files[0], &files[1], "-o", merged]).assert_success();
    let doc: Json =
        serde_json::from_str(&std::fs::read_to_string(merged).expect("merged")).expect("JSON");
    let storm = &doc["storm"];
    assert_eq!(
        u(&storm["attempted"]),
        60,
        "each shard ran its part: {storm}"
    );
    assert_eq!(u(&storm["completed"]), 60, "{storm}");
    stages_add_up(storm);
    let out = super::harness::respbench(&["compare", &files[0], merged]);
    out.assert_success();
    assert!(out.stdout.contains("Connection storm"), "{}", out.stdout);
    // Storms only: their table, not an empty speed table and advice about repetitions.
    assert!(
        !out.stdout.contains("no test in common") && !out.stdout.contains("--repeat"),
        "{}",
        out.stdout
    );
    // The run's own --html report has the storm's table too.
    let html = dir.path().join("storm.html");
    let html = html.to_str().expect("UTF-8 path");
    server
        .bench(&["--connect-storm", "-c", "1", "-n", "5", "--html", html])
        .assert_success();
    let page = std::fs::read_to_string(html).expect("the HTML report");
    assert!(
        page.contains("id=\"connection-storm\""),
        "the storm's table"
    );
}

/// A storm refused at `maxclients` beside one that completed: `compare` (text and Markdown) and
/// the HTML report (`respbench report`) show, besides the speed table, the failures by stage
/// and kind with the server's first message, and the server's side: connections received,
/// `connected_clients` after, the watch's `rejected_connections` and CPU.
#[test]
fn compare_and_report_show_a_storms_failures_and_the_servers_side() {
    let dir = super::harness::TempDir::new();
    let path = |name: &str| {
        dir.path()
            .join(name)
            .to_str()
            .expect("UTF-8 path")
            .to_string()
    };
    let (good, refused) = (path("good.json"), path("refused.json"));
    let server = Server::start_valkey();
    server
        .bench(&[
            "--connect-storm",
            "-c",
            "2",
            "-n",
            "30",
            "--json",
            &good,
            "PING",
        ])
        .assert_success();
    // Three clients at most: the test's, respbench's control connection and its server watch.
    let full = Server::start_with(ServerOptions {
        extra: vec!["--maxclients".into(), "3".into()],
        kind: ServerKind::Valkey,
        ..ServerOptions::default()
    });
    let _held = full.client();
    let out = full.bench(&[
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "20",
        "--json",
        &refused,
        "PING",
    ]);
    out.assert_code(1);
    // The run's own text report breaks the failures down and gives the server's side.
    for words in [
        "failures by stage and kind:",
        "maxclients",
        "rejected_connections",
    ] {
        assert!(out.stdout.contains(words), "{words}: {}", out.stdout);
    }
    let doc: Json = serde_json::from_str(&std::fs::read_to_string(&refused).expect("the record"))
        .expect("JSON");
    let rejected = u(&doc["storm"]["server"][0]["rejected_connections"]);
    assert!(rejected >= 20, "{}", doc["storm"]);

    let out = super::harness::respbench(&[
        "compare", &good, &refused, "--label", "good", "--label", "full",
    ]);
    out.assert_success();
    let text = &out.stdout;
    let row = |title: &str, side: &str| -> Vec<String> {
        let table = &text[text
            .find(title)
            .unwrap_or_else(|| panic!("no {title}: {text}"))..];
        let table = &table[..table[1..].find("\n\n").map_or(table.len(), |e| e + 1)];
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(side))
            .unwrap_or_else(|| panic!("no {side} row in {title}: {text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let failures = row("Storm failures", "full");
    assert_eq!(
        failures[1..4],
        ["command", "maxclients", "server"],
        "{text}"
    );
    assert!(text.contains("max number of clients reached"), "{text}");
    // The server's side: what INFO said before and after, and the watch.
    let good_row = row("Storm server side", "good");
    assert!(
        good_row[1].parse::<u64>().expect("connections received") >= 30,
        "{text}"
    );
    assert_eq!(good_row[3], "0", "no rejection: {text}");
    assert!(good_row[5].parse::<f64>().is_ok(), "server CPU: {text}");
    let full_row = row("Storm server side", "full");
    assert_eq!(full_row[3], rejected.to_string(), "{text}");
    assert!(
        !text.contains("Storm client-side limits"),
        "no client limit met: {text}"
    );

    let out = super::harness::respbench(&["compare", &good, &refused, "--format", "markdown"]);
    out.assert_success();
    for words in ["Storm failures", "maxclients", "Storm server side"] {
        assert!(out.stdout.contains(words), "{words}: {}", out.stdout);
    }
    let html = path("storms.html");
    super::harness::respbench(&["report", &good, &refused, "-o", &html]).assert_success();
    let page = std::fs::read_to_string(&html).expect("the HTML report");
    for id in ["connection-storm", "storm-failures", "storm-server-side"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("<td>maxclients</td>"), "the failure's kind");
}

/// A storm that runs out of ephemeral ports: in a network namespace of the test's own (root
/// only; skipped otherwise) with six local ports and no reuse of ports in `TIME_WAIT`, every
/// closed connection holds its port, so the seventh connect fails with `EADDRNOTAVAIL`. That is
/// the client's limit, reported apart from the server's refusals with the figure that ran out.
#[test]
fn running_out_of_local_ports_is_a_client_limit_with_its_figure() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: a network namespace needs root (tests run as root in CI)");
        return;
    }
    let dir = super::harness::TempDir::new();
    let pidfile = dir.path().join("server.pid");
    let script = format!(
        "set -e; ip link set lo up; \
         echo '40000 40005' > /proc/sys/net/ipv4/ip_local_port_range; \
         echo 0 > /proc/sys/net/ipv4/tcp_tw_reuse; \
         redis-server --port 6379 --bind 127.0.0.1 --save '' --daemonize yes --pidfile {pid} \
           --logfile /dev/null; \
         trap 'kill $(cat {pid})' EXIT; \
         for i in $(seq 50); do [ -s {pid} ] && break; sleep 0.1; done; sleep 0.2; \
         {bin} -h 127.0.0.1 -p 6379 --connect-storm -c 1 -n 20 --no-server-stats --json - PING",
        pid = pidfile.display(),
        bin = env!("CARGO_BIN_EXE_respbench"),
    );
    let out = std::process::Command::new("timeout")
        .args(["30", "unshare", "-n", "sh", "-c", &script])
        .output()
        .expect("timeout and unshare run");
    if !out.status.success() && out.stdout.is_empty() {
        eprintln!(
            "SKIPPED: cannot make a network namespace here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let storm = &record(&String::from_utf8_lossy(&out.stdout))["storm"];
    assert_eq!(u(&storm["attempted"]), 20, "{storm}");
    let failed = u(&storm["failed"]);
    assert!(failed >= 14, "at most six ports: {storm}");
    let limits = storm["client_limits"].as_array().expect("client limits");
    assert_eq!(limits.len(), 1, "{storm}");
    assert_eq!(limits[0]["kind"], "local_ports");
    assert_eq!(u(&limits[0]["failures"]), failed);
    let figure = limits[0]["figure"].as_str().unwrap_or("");
    assert!(figure.contains("40000-40005 (6 ports)"), "{figure}");
    assert!(figure.contains("TIME_WAIT"), "{figure}");
    for f in storm["failures"].as_array().expect("failures") {
        assert_eq!(f["side"], "client", "none of it is the server's: {f}");
        assert_eq!(f["stage"], "connect", "{f}");
    }
    // compare and the HTML report name the limit with the figure that ran out.
    let json = dir.path().join("ports.json");
    std::fs::write(&json, &out.stdout).expect("a temporary file");
    let json = json.to_str().expect("UTF-8 path");
    let cmp = super::harness::respbench(&["compare", json, json]);
    cmp.assert_success();
    let line = cmp
        .stdout
        .lines()
        .find(|l| l.contains("local_ports") && l.contains("TIME_WAIT"))
        .unwrap_or_else(|| panic!("no client limit row: {}", cmp.stdout));
    assert!(line.contains("40000-40005 (6 ports)"), "{line}");
    assert!(
        cmp.stdout.contains("Storm client-side limits"),
        "{}",
        cmp.stdout
    );
    let html = dir.path().join("ports.html");
    let html = html.to_str().expect("UTF-8 path");
    super::harness::respbench(&["report", json, "-o", html]).assert_success();
    let page = std::fs::read_to_string(html).expect("the HTML report");
    assert!(
        page.contains("id=\"storm-client-side-limits\""),
        "the limits' table"
    );
}

/// A storm in which no connection completes (here: a command the server refuses) is a failed
/// run, exit 1 with one line naming why, after the report that breaks the failures down; the
/// record is still written.
#[test]
fn a_storm_in_which_nothing_completes_exits_1() {
    let server = Server::start_valkey();
    let dir = super::harness::TempDir::new();
    let json = dir.path().join("s.json");
    let out = server.bench(&[
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "20",
        "--json",
        json.to_str().unwrap(),
        "GET",
    ]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.contains("none of the 20 connections completed") && line.contains("wrong number"),
        "{line}"
    );
    let storm = &record(&std::fs::read_to_string(&json).unwrap())["storm"];
    assert_eq!(
        (u(&storm["completed"]), u(&storm["failed"])),
        (0, 20),
        "{storm}"
    );
}
