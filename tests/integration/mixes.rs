//! `--ratio SET:GET` mixes against Valkey: the server sees the ratio asked for, each command is
//! timed on its own reply (in every report format and the record), and `--arrival poisson`
//! runs under `--rps`.

use crate::harness::{Server, TempDir};
use crate::record::check_with_python;

#[test]
fn ratio_1_to_9_is_what_the_server_counts() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "--ratio", "1:9", "-r", "10000", "-n", "200000", "-P", "16", "--seed", "7", "-q",
    ]);
    out.assert_success();
    assert_eq!(out.stderr, "");
    let mut c = server.client();
    let (set, get) = (c.calls("set"), c.calls("get"));
    assert_eq!(set + get, 200_000, "every request went out once");
    let ratio = set as f64 / get as f64;
    assert!(
        (ratio / (1.0 / 9.0) - 1.0).abs() < 0.02,
        "SET:GET {set}:{get} = {ratio}, asked 1:9"
    );
    // -q: one line per command, then the total.
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("SET:GET 1:9 SET: "), "{}", lines[0]);
    assert!(lines[1].starts_with("SET:GET 1:9 GET: "), "{}", lines[1]);
    assert!(lines[2].starts_with("SET:GET 1:9: "), "{}", lines[2]);
}

/// GET is denied by ACL, SET is not: with `-e` and `-P 16`, every error must land on GET and
/// every success on SET, which holds only if each reply is matched to its own command.
#[test]
fn pipelined_mix_times_each_request_on_its_own_reply() {
    let server = Server::start_valkey();
    server.client().ok(&[
        "ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all", "-get",
    ]);
    let dir = TempDir::new();
    let json = dir.path().join("mix.json");
    let out = server.bench(&[
        "--user",
        "bench",
        "-a",
        "pw",
        "--json",
        json.to_str().unwrap(),
        "--ratio",
        "1:3",
        "-r",
        "1000",
        "-n",
        "20000",
        "-P",
        "16",
        "-e",
        "--csv",
    ]);
    out.assert_success();
    let set_calls = server.client().calls("set");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    check_with_python(&json);
    let test = &record["tests"][0];
    assert_eq!(test["commands"], serde_json::json!(["set", "get"]));
    let mix = test["mix"].as_array().expect("a mix in the record");
    assert_eq!(mix[0]["name"], "SET");
    assert_eq!(mix[0]["completed"], set_calls, "every SET success is SET's");
    assert_eq!(mix[0]["failed"], 0, "no GET error counted on SET");
    assert_eq!(mix[0]["latency_us"]["count"], set_calls);
    assert_eq!(mix[1]["name"], "GET");
    assert_eq!(mix[1]["completed"], 0, "no SET success counted on GET");
    assert_eq!(mix[1]["failed"], 20_000 - set_calls);
    assert!(
        (4000..6000).contains(&set_calls),
        "about a quarter: {set_calls}"
    );
    // CSV: the header, a row per command, the total.
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(rows.len(), 4, "{}", out.stdout);
    assert!(rows[1].starts_with("\"SET:GET 1:3 SET\","), "{}", rows[1]);
    assert!(
        rows[2].starts_with("\"SET:GET 1:3 GET\",\"0.00\""),
        "{}",
        rows[2]
    );
    assert!(rows[3].starts_with("\"SET:GET 1:3\","), "{}", rows[3]);
}

#[test]
fn full_report_has_a_latency_table_per_command_and_sizes_apply_to_set() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "--ratio=1:1",
        "--data-size-range=100-200",
        "-r",
        "300",
        "-n",
        "3000",
    ]);
    out.assert_success();
    for needle in [
        "====== SET:GET 1:1 ======",
        "  SET latency summary (msec):",
        "  GET latency summary (msec):",
    ] {
        out.assert_stdout_contains(needle);
    }
    let mut c = server.client();
    let lens: Vec<i64> = (0..300)
        .map(|k| c.int(&["STRLEN", format!("key:{k:012}").as_str()]))
        .filter(|&l| l > 0)
        .collect();
    assert!(!lens.is_empty() && lens.iter().all(|l| (100..=200).contains(l)));
    assert!(lens.iter().any(|&l| l != lens[0]), "sizes vary");
}

#[test]
fn poisson_arrivals_run_under_rps_and_complete_every_request() {
    let server = Server::start();
    let out = server.bench(&[
        "--rps",
        "4000",
        "--arrival",
        "poisson",
        "-n",
        "2000",
        "-c",
        "4",
        "--seed",
        "3",
        "-t",
        "set",
        "--csv",
    ]);
    out.assert_success();
    assert_eq!(out.stderr, "");
    assert_eq!(server.client().calls("set"), 2000);
}

#[test]
fn ratio_with_a_custom_command_or_cluster_is_refused() {
    let server = Server::start();
    for args in [
        &["--ratio", "1:1", "GET", "k"][..],
        &["--ratio", "1:1", "--cluster"],
    ] {
        let out = server.bench(args);
        out.assert_code(2);
        assert!(
            out.single_stderr_line().contains("--ratio"),
            "{}",
            out.stderr
        );
    }
}
