//! `respbench ab` against real servers (Redis 7.0 and Valkey 9.1) with CPU hogs on both cores
//! (issue 36): the same server on both sides (A/A) never reads better or worse on throughput,
//! and a side whose every call costs twice the server's time (a Lua loop of 10,000 against
//! 5,000 steps) reads worse with a 95 % interval that excludes zero. Blocks are short and the
//! order seeded; the record holds both sides' blocks in the order they ran and the verdicts.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Output, Running, Server, TempDir};
use crate::machine_busy::Hog;
use crate::record::check_with_python;

/// One A/B test at a time: each brings its own hogs, and another test's hogs and blocks would be
/// a third load on top of the one asked for.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `respbench ab ARGS --json FILE` under hogs pinned to CPUs 0 and 1; the output and record.
fn ab_under_hogs(args: &[String]) -> (Output, Value, TempDir) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new();
    let path = dir.path().join("ab.json");
    let _hogs = [Hog::lasting(0, 90), Hog::lasting(1, 90)];
    let mut all = vec![
        "ab".to_string(),
        "--json".into(),
        path.display().to_string(),
    ];
    all.extend(args.iter().cloned());
    let out = Running::spawn_args(&all).finish(Duration::from_secs(90));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}\n{out:?}", path.display()));
    check_with_python(&path);
    (
        out,
        serde_json::from_str(&text).expect("the record is JSON"),
        dir,
    )
}

fn verdict<'v>(rec: &'v Value, test: &str, metric: &str) -> &'v Value {
    rec["ab"]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["test"] == test && v["metric"] == metric)
        .unwrap_or_else(|| panic!("no {test} {metric} verdict in {}", rec["ab"]["verdicts"]))
}

/// The blocks alternate as the order says, warm-up first, each a whole record of its side.
fn check_blocks(rec: &Value, rounds: usize) {
    let ab = &rec["ab"];
    let blocks = ab["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2 + 2 * rounds, "{ab}");
    let order: String = blocks[2..]
        .iter()
        .map(|b| b["side"].as_str().unwrap().to_uppercase())
        .collect();
    assert_eq!(ab["order"], order);
    for (r, pair) in order.as_bytes().chunks(2).enumerate() {
        assert_ne!(
            pair[0],
            pair[1],
            "round {} ran one side twice: {order}",
            r + 1
        );
        assert_eq!(blocks[2 + 2 * r]["round"], r + 1);
    }
    let ab_count = order.as_bytes().chunks(2).filter(|p| p[0] == b'A').count();
    assert!(
        ab_count.abs_diff(rounds - ab_count) <= 1,
        "unbalanced: {order}"
    );
    for b in blocks {
        assert_eq!(b["record"]["schema"], "respbench/1");
        assert!(
            b["record"]["tests"][0]["histograms"].is_object(),
            "{}",
            b["record"]["tests"][0]
        );
    }
    assert_eq!(rec["tests"].as_array().unwrap().len(), 0);
}

fn same_server_on_both_sides_is_never_better_or_worse(start: fn() -> Server) {
    let server = start();
    let p = server.port().to_string();
    let args: Vec<String> = [
        "-h",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "get,set",
        "--duration",
        "0.5",
        "-c",
        "4",
        "--rounds",
        "8",
        "--seed",
        "11",
        "--a",
        "",
        "--b",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (out, rec, _dir) = ab_under_hogs(&args);
    out.assert_success();
    check_blocks(&rec, 8);
    for test in ["GET", "SET"] {
        let v = verdict(&rec, test, "rps");
        assert!(
            matches!(v["verdict"].as_str(), Some("within_noise" | "cant_tell")),
            "A/A read a difference: {v}\n{}",
            out.stderr
        );
        assert_eq!(v["pairs"], 8);
    }
    let answer = rec["ab"]["answer"].as_str().unwrap();
    assert!(out.stdout.starts_with(answer), "{}", out.stdout);
}

fn twice_the_server_time_is_worse_with_an_interval_excluding_zero(start: fn() -> Server) {
    let server = start();
    let p = server.port().to_string();
    let lua = |steps: u32| {
        format!("-- EVAL \"local i = 0 while i < {steps} do i = i + 1 end return i\" 0")
    };
    let (a, b) = (lua(5_000), lua(10_000));
    let args: Vec<String> = [
        "-h",
        "127.0.0.1",
        "-p",
        &p,
        "--duration",
        "0.5",
        "-c",
        "2",
        "--rounds",
        "10",
        "--seed",
        "5",
        "--a",
        &a,
        "--b",
        &b,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (out, rec, _dir) = ab_under_hogs(&args);
    out.assert_success();
    check_blocks(&rec, 10);
    // Different commands on the two sides: the test is labelled by the word they share.
    let v = verdict(&rec, "EVAL", "rps");
    assert_eq!(v["verdict"], "worse", "{v}\n{}", out.stderr);
    let hi = v["interval"][1].as_f64().unwrap();
    assert!(hi < 0.0, "the interval reaches zero: {v}");
    // The server's CPU per request, which the machine's load moves far less.
    let cpu = verdict(&rec, "EVAL", "cpu_us");
    assert_eq!(cpu["verdict"], "worse", "{cpu}");
    assert!(out.stdout.starts_with("B is "), "{}", out.stdout);
    assert!(out.stdout.contains("slower on"), "{}", out.stdout);
}

#[test]
fn redis_same_server_on_both_sides_is_never_better_or_worse() {
    same_server_on_both_sides_is_never_better_or_worse(Server::start);
}

#[test]
fn valkey_same_server_on_both_sides_is_never_better_or_worse() {
    same_server_on_both_sides_is_never_better_or_worse(Server::start_valkey);
}

#[test]
fn redis_twice_the_server_time_is_worse() {
    twice_the_server_time_is_worse_with_an_interval_excluding_zero(Server::start);
}

#[test]
fn valkey_twice_the_server_time_is_worse() {
    twice_the_server_time_is_worse_with_an_interval_excluding_zero(Server::start_valkey);
}
