//! A sub-second test's verdict against real servers (Valkey 9.1 and Redis 7.0): judged from its
//! 100 ms slots (each worker's CPU and run-queue wait at every slot's end, the sampled client
//! delay per slot), never "unknown", with the slots' figures in the record and the reason.

use serde_json::Value;

use crate::harness::Server;
use crate::record::bench_json;

/// The record's slots that carry respbench's own figures.
fn measured_slots(t: &Value) -> Vec<&Value> {
    t["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["slots"].as_array())
        .flatten()
        .filter(|s| s["client_cpu_pct"].is_number())
        .collect()
}

fn a_sub_second_test_is_judged_from_its_slots(start: fn() -> Server) {
    let server = start();
    let (out, r, _, _dir) = bench_json(
        &server,
        &["-c", "20", "--duration", "0.7", "-t", "ping_inline,get"],
    );
    out.assert_success();
    for t in r["tests"].as_array().unwrap() {
        let kind = t["verdict"]["kind"].as_str().unwrap();
        let reason = t["verdict"]["reason"].as_str().unwrap();
        assert_ne!(kind, "unknown", "every test is judged: {t}");
        assert!(!reason.is_empty(), "{t}");
        // The figures the verdict was drawn from are in the record.
        assert!(t["verdict"]["server_cpu_pct"].is_number(), "{t}");
        assert!(t["verdict"]["client_max_thread_cpu_pct"].is_number(), "{t}");
        if t["duration_s"].as_f64().unwrap() >= 1.0 {
            // A crawling machine stretched the test past a second: judged as a long one.
            continue;
        }
        let slots = measured_slots(t);
        assert!(
            slots.len() >= 3,
            "thousands of replies cross every slot's end, so the slots carry figures: {t}"
        );
        for s in &slots {
            let cpu = s["client_cpu_pct"].as_f64().unwrap();
            assert!((0.0..=100.5).contains(&cpu), "a share of one core: {s}");
        }
        assert!(
            reason.contains("100 ms slots"),
            "a sub-second test is judged from its slots, and says how many agreed: {reason}"
        );
        if kind != "cant-tell" {
            assert!(reason.contains(" of ") && reason.contains("busiest respbench thread"));
        }
        let name = t["name"].as_str().unwrap();
        if kind == "cant-tell" {
            out.assert_stdout_contains("limited by: can't tell: ");
        } else {
            out.assert_stdout_contains(&format!("limited by: {kind} ("));
        }
        assert!(
            out.stdout.contains(name),
            "the report names {name}: {}",
            out.stdout
        );
    }
}

#[test]
fn short_verdict_valkey_sub_second_tests_are_judged_from_their_slots() {
    a_sub_second_test_is_judged_from_its_slots(Server::start_valkey);
}

#[test]
fn short_verdict_redis_sub_second_tests_are_judged_from_their_slots() {
    a_sub_second_test_is_judged_from_its_slots(Server::start);
}
