//! `respbench replay --speed max` measures the time its commands took. It sends at once, without
//! waiting for the scheduler's start (100 ms ahead): a short trace used to end before that start
//! and was reported as 0 seconds and 0 requests per second. Valkey 9.1 and Redis 7.0.

use crate::harness::{Server, TempDir, respbench};

fn replay_at_max_speed_has_a_duration_and_a_throughput(server: Server) {
    let dir = TempDir::new();
    let trace = dir.path().join("short.trace");
    // 300 INCRs from 3 clients over 0.3 s of trace time: at `max`, well under 100 ms on loopback.
    let mut text = String::new();
    for i in 0..300u64 {
        let client = 7000 + i % 3;
        text.push_str(&format!(
            "1700000000.{:06} [0 127.0.0.1:{client}] \"INCR\" \"m:{client}\"\n",
            i * 1000
        ));
    }
    std::fs::write(&trace, text).unwrap();
    let json = dir.path().join("max.json");
    let out = respbench(&[
        "replay",
        "-p",
        &server.port().to_string(),
        "--speed",
        "max",
        trace.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let t = &doc["tests"][0];
    assert_eq!(t["requests"]["completed"], 300, "{}", t["requests"]);
    let duration = t["duration_s"].as_f64().unwrap();
    let rps = t["throughput_rps"].as_f64().unwrap();
    assert!(duration > 0.0, "duration_s {duration}");
    assert!(rps > 0.0, "throughput_rps {rps}");
    // The throughput is the completions over the measured time, as for every test.
    assert!(
        (rps * duration - 300.0).abs() < 3.0,
        "{rps} requests/s over {duration} s is not the 300 completed"
    );
    assert!(
        !out.stdout.contains("0.00 requests per second"),
        "{}",
        out.stdout
    );
    let c = server.client().bulk(&["GET", "m:7000"]);
    assert_eq!(
        c.as_deref(),
        Some(&b"100"[..]),
        "every INCR of client 7000 ran"
    );
}

#[test]
fn replay_at_max_speed_measures_its_time_on_valkey() {
    replay_at_max_speed_has_a_duration_and_a_throughput(Server::start_valkey());
}

#[test]
fn replay_at_max_speed_measures_its_time_on_redis() {
    replay_at_max_speed_has_a_duration_and_a_throughput(Server::start());
}
