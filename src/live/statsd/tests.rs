use std::io::Read;
use std::net::TcpListener;

use super::*;

/// A StatsD "daemon" and a Graphite of the test's own on loopback, and a sink sending to them.
fn sink(percentiles: &[f64], secrets: &[Vec<u8>]) -> (Statsd, UdpSocket, TcpListener) {
    let daemon = UdpSocket::bind("127.0.0.1:0").unwrap();
    daemon
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let graphite = TcpListener::bind("127.0.0.1:0").unwrap();
    let args = StatsdArgs {
        host: "127.0.0.1".into(),
        port: daemon.local_addr().unwrap().port(),
        prefix: "memtier".into(),
        label: "hunter2".into(),
        graphite_port: graphite.local_addr().unwrap().port(),
        percentiles: percentiles.to_vec(),
    };
    let shape = RunShape {
        threads: 2,
        clients: 3,
        requests: Some(1000),
        secs: None,
    };
    (
        Statsd::open(&args, shape, secrets).unwrap(),
        daemon,
        graphite,
    )
}

fn lines(daemon: &UdpSocket, n: usize) -> Vec<String> {
    let mut buf = [0u8; 1024];
    (0..n)
        .map(|_| {
            let len = daemon.recv(&mut buf).unwrap();
            String::from_utf8(buf[..len].to_vec()).unwrap()
        })
        .collect()
}

fn posted(graphite: &TcpListener) -> String {
    let (mut s, _) = graphite.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn second(completed: u64, latency_ns: u64, failed: u64) -> Second {
    let mut s = Second::default();
    s.latency.record_n(latency_ns, completed);
    s.completed = completed;
    s.failed = failed;
    s
}

#[test]
fn memtiers_names_types_and_formats_and_counters_that_add_up() {
    let (mut sink, daemon, graphite) = sink(&[50.0, 99.9], &[b"hunter2".to_vec()]);
    sink.test_started(1);
    let started = posted(&graphite);
    assert!(
        started.starts_with("POST /events/ HTTP/1.1\r\n"),
        "{started}"
    );
    let body = started.split("\r\n\r\n").nth(1).unwrap();
    let event: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(event["what"], "Benchmark Started");
    assert_eq!(event["data"], "threads=2 connections=3 run=1");
    assert_eq!(
        event["tags"], "memtier,start,run:<redacted>",
        "the label is redacted"
    );
    sink.connections(6);
    sink.bytes(4096);
    let first = second(100, 2_000_000, 0);
    sink.second(&first);
    let got = lines(&daemon, 11);
    let n = "memtier.<redacted>.";
    let ms = |ns: f64| ns / 1e6;
    let mean = ms(first.latency.histogram().mean_ns());
    let at = |p: f64| ms(first.latency.histogram().value_at_percentile_ns(p) as f64);
    assert!((mean - 2.0).abs() < 0.05, "{mean}");
    assert_eq!(
        got,
        [
            format!("{n}requests:100|c"),
            format!("{n}ops_sec:100|g"),
            format!("{n}ops_sec_avg:100|g"),
            format!("{n}bytes_sec:4096|g"),
            format!("{n}bytes_sec_avg:4096|g"),
            format!("{n}latency_ms:{mean:.3}|ms"),
            format!("{n}latency_avg_ms:{mean:.3}|ms"),
            format!("{n}connections:6|g"),
            format!("{n}progress_pct:10.000000|g"),
            format!("{n}latency_p50:{:.6}|g", at(50.0)),
            format!("{n}latency_p99_9:{:.6}|g", at(99.9)),
        ]
    );
    // A second with error replies: their counter too.
    sink.bytes(6144);
    let next = second(300, 4_000_000, 5);
    sink.second(&next);
    let got = lines(&daemon, 12);
    assert_eq!(got[0], format!("{n}requests:300|c"));
    assert_eq!(got[1], format!("{n}errors:5|c"));
    assert_eq!(got[3], format!("{n}ops_sec_avg:200|g"));
    // The bytes since the last second, and the run's per second.
    assert_eq!(
        got[4..6],
        [
            format!("{n}bytes_sec:2048|g"),
            format!("{n}bytes_sec_avg:3072|g")
        ]
    );
    let avg = (first.latency.histogram().mean_ns() * 100.0
        + next.latency.histogram().mean_ns() * 300.0)
        / 400.0
        / 1e6;
    assert_eq!(got[7], format!("{n}latency_avg_ms:{avg:.3}|ms"));
    // The run ends with 450 completed and 7 errors: the counters get what the seconds missed.
    let mut r = TestResult::empty("SET", None, crate::metrics::Outcome::Completed);
    r.completed = 450;
    for _ in 0..7 {
        r.errors.record(b"ERR wrong");
    }
    sink.test_ended(&r);
    let got = lines(&daemon, 5);
    assert_eq!(
        got,
        [
            format!("{n}requests:50|c"),
            format!("{n}errors:2|c"),
            format!("{n}ops_sec:0|g"),
            format!("{n}ops_sec_avg:0|g"),
            format!("{n}progress_pct:0|g"),
        ]
    );
    let ended = posted(&graphite);
    assert!(
        ended.contains("\"what\":\"Benchmark Completed\""),
        "{ended}"
    );
    assert!(ended.contains("\"data\":\"run=1\""), "{ended}");
}
