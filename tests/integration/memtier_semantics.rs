//! memtier's semantics that its users' lines rely on, against Redis 7.0 and Valkey 9.1 with the
//! server's own counters as the judge (each beside the real memtier_benchmark's behaviour, run
//! side by side with the same lines while writing them: `bench/memtier-suite.sh`):
//! each connection sends its `--command`s in order (a MULTI … EXEC line stays one transaction
//! per connection), `P:P` gives each client its own slice of the range (every key written),
//! error replies are counted per command and the run goes on (exit 0), and a SCAN walk's first
//! and continuation SCANs are two rows; with `--reconnect-on-error`, the JSON's Totals count the
//! connection errors.

use serde_json::Value;

use std::time::Duration;

use super::harness::{Server, TempDir, run_memtier as memtier, spawn_respbench, wait_until};

fn both() -> [Server; 2] {
    [Server::start(), Server::start_valkey()]
}

fn json(dir: &TempDir) -> (String, impl Fn() -> Value) {
    let path = dir.path().join("out.json");
    let arg = format!("--json-out-file={}", path.display());
    (arg, move || {
        let text = std::fs::read_to_string(&path).expect("json-out-file written");
        serde_json::from_str(&text).expect("json-out-file parses")
    })
}

#[test]
fn each_connection_sends_its_commands_in_order_so_multi_exec_stays_a_transaction() {
    for server in both() {
        let out = memtier(
            &server,
            &[
                "--command=MULTI",
                "--command=HSETNX __key__ field value",
                "--command=EXEC",
                "-c",
                "2",
                "-t",
                "2",
                "-n",
                "30",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        // 30 requests per connection: 10 transactions each, 4 connections.
        assert_eq!(
            (c.calls("multi"), c.calls("hsetnx"), c.calls("exec")),
            (40, 40, 40),
            "{}",
            out.stderr
        );
        assert_eq!(
            c.info_u64("stats", "total_error_replies"),
            0,
            "no nested MULTI, no EXEC without MULTI"
        );
    }
}

#[test]
fn p_p_gives_each_client_its_slice_so_every_key_of_the_range_is_written() {
    for server in both() {
        // The line: 200 clients × 50 requests over 10,000 keys.
        let out = memtier(
            &server,
            &[
                "-n",
                "50",
                "-c",
                "50",
                "-t",
                "4",
                "--key-minimum=1",
                "--key-maximum=10000",
                "--key-pattern=P:P",
                "--ratio=1:0",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        assert_eq!(c.calls("set"), 10_000);
        assert_eq!(c.dbsize(), 10_000, "each client wrote its own 50 keys");
    }
}

#[test]
fn error_replies_are_counted_per_command_and_the_run_goes_on() {
    for server in both() {
        let dir = TempDir::new();
        let (arg, read) = json(&dir);
        let out = memtier(
            &server,
            &[
                "--command=NOSUCHCOMMAND __key__",
                "--command=SET __key__ v",
                "-c",
                "2",
                "-t",
                "1",
                "-n",
                "20",
                &arg,
            ],
        );
        // memtier finishes with exit 0 and counts the error replies as its command's requests.
        out.assert_success();
        let doc = read();
        let count = |row: &str| doc["ALL STATS"][row]["Count"].as_u64().unwrap();
        assert_eq!(count("Nosuchcommands"), 20, "{}", out.stdout);
        assert_eq!(count("Sets"), 20);
        assert_eq!(count("Totals"), 40);
        let mut c = server.client();
        assert_eq!(c.calls("set"), 20);
        assert_eq!(c.info_u64("stats", "total_error_replies"), 20);
    }
}

#[test]
fn a_scan_walks_first_and_continuation_scans_are_two_rows() {
    for server in both() {
        let mut c = server.client();
        for i in 0..200 {
            c.ok(&["SET", &format!("k:{i}"), "v"]);
        }
        let dir = TempDir::new();
        let (arg, read) = json(&dir);
        let out = memtier(
            &server,
            &[
                "--command=SCAN 0 COUNT 1",
                "--scan-incremental-iteration",
                "--scan-incremental-max-iterations=3",
                "--pipeline=1",
                "-c",
                "1",
                "-t",
                "1",
                "-n",
                "40",
                &arg,
            ],
        );
        out.assert_success();
        // memtier's row names and keys: `SCAN 0`/`SCAN <cursor>`, `Scan 0s`/`Scan <cursor>s`.
        assert!(out.stdout.contains("Scan 0s"), "{}", out.stdout);
        assert!(out.stdout.contains("Scan <cursor>s"), "{}", out.stdout);
        let doc = read();
        let count = |row: &str| doc["ALL STATS"][row]["Count"].as_u64().unwrap();
        // 200 keys at COUNT 1 never end a walk within 3 continuations: 10 cycles of 1 + 3.
        assert_eq!((count("Scan 0s"), count("Scan <cursor>s")), (10, 30));
        assert_eq!(c.calls("scan"), 40);
    }
}

#[test]
fn unused_pattern_parameters_and_scan_refusals_follow_memtiers_rules() {
    let server = Server::start();
    // memtier accepts an exponent no pattern uses.
    memtier(
        &server,
        &[
            "--key-pattern=R:R",
            "--key-zipf-exp=1",
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
        ],
    )
    .assert_success();
    // Its refusals say `error`, as memtier's (its suite looks for the word).
    let out = memtier(&server, &["--scan-incremental-iteration", "-n", "5"]);
    out.assert_code(2);
    assert!(out.stderr.contains("error:"), "{}", out.stderr);
}

#[test]
fn connection_errors_are_counted_in_the_totals_with_reconnect_on_error() {
    for server in both() {
        let dir = TempDir::new();
        let path = dir.path().join("out.json");
        let port = server.port().to_string();
        let json = format!("--json-out-file={}", path.display());
        let running = spawn_respbench(&[
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--reconnect-on-error",
            "-c",
            "1",
            "-t",
            "1",
            "--test-time=4",
            "--ratio=1:0",
            "--hide-histogram",
            &json,
        ]);
        let mut c = server.client();
        let mut killed = 0;
        for _ in 0..3 {
            let received = c.info_u64("stats", "total_connections_received");
            // The load connection is up (a new one since the last kill) and sending.
            let sets = c.calls("set");
            assert!(
                wait_until(Duration::from_secs(10), || c.calls("set") > sets),
                "the run is not sending"
            );
            killed += c.int(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
            assert!(
                wait_until(Duration::from_secs(10), || {
                    c.info_u64("stats", "total_connections_received") > received
                }),
                "no reconnect"
            );
        }
        let out = running.finish(Duration::from_secs(30));
        out.assert_success();
        let text = std::fs::read_to_string(&path).expect("json-out-file written");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let totals = &doc["ALL STATS"]["Totals"];
        // Each kill closed the load connection (a kill may also close the run's idle control
        // connection, which is not a load connection's error).
        let errors = totals["Connection Errors"].as_i64().unwrap();
        assert!(
            (3..=killed).contains(&errors),
            "{errors} of {killed}: {}",
            out.stderr
        );
    }
}
