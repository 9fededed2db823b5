//! memtier's `--statsd-host` against Redis 7.0 and Valkey 9.1: a UDP socket the test binds on
//! loopback is the StatsD daemon (Debian 12 has none to install) and a TCP listener Graphite.
//! The judge: the sum of the `requests` counters received is the record's completed requests
//! and the server's commandstats; memtier's gauge and timing names arrive each second; each run
//! of `--run-count` is annotated at its start and end.

use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::harness::{Server, TempDir, run_respbench};

/// Reads whatever arrives on `socket` (datagrams) until `stop`.
fn collect_udp(socket: UdpSocket, stop: Arc<AtomicBool>) -> JoinHandle<Vec<String>> {
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    std::thread::spawn(move || {
        let (mut out, mut buf) = (Vec::new(), [0u8; 2048]);
        while !stop.load(Ordering::Relaxed) {
            if let Ok(n) = socket.recv(&mut buf) {
                out.push(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
        }
        out
    })
}

/// Reads every HTTP request `listener` accepts until `stop`.
fn collect_http(listener: TcpListener, stop: Arc<AtomicBool>) -> JoinHandle<Vec<String>> {
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut text = String::new();
                    let _ = s.read_to_string(&mut text);
                    out.push(text);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        out
    })
}

#[test]
fn statsd_counters_add_up_to_the_records_totals_and_each_run_is_annotated() {
    for server in [Server::start(), Server::start_valkey()] {
        let daemon = UdpSocket::bind("127.0.0.1:0").unwrap();
        let graphite = TcpListener::bind("127.0.0.1:0").unwrap();
        let (statsd_port, graphite_port) = (
            daemon.local_addr().unwrap().port().to_string(),
            graphite.local_addr().unwrap().port().to_string(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let udp = collect_udp(daemon, stop.clone());
        let http = collect_http(graphite, stop.clone());
        let dir = TempDir::new();
        let record = dir.path().join("run.json");
        let port = server.port().to_string();
        #[rustfmt::skip]
        let args = ["memtier", "-s", "127.0.0.1", "-p", &port, "--hide-histogram", "-c", "2",
            "-t", "2", "--test-time=2", "--run-count=2", "--ratio=1:1", "--key-maximum=99",
            "--statsd-host=127.0.0.1", &format!("--statsd-port={statsd_port}"),
            &format!("--graphite-port={graphite_port}"), "--statsd-run-label=ci run",
            "--json", record.to_str().unwrap()];
        let out = run_respbench(&args.map(String::from), None);
        out.assert_success();
        // Loopback datagrams are queued by the time the process has ended.
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        let (lines, posts) = (udp.join().unwrap(), http.join().unwrap());

        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        let completed: u64 = (r["tests"].as_array().unwrap().iter())
            .map(|t| t["requests"]["completed"].as_u64().unwrap())
            .sum();
        let counted: u64 = (lines.iter())
            .filter_map(|l| l.strip_prefix("memtier.ci_run.requests:"))
            .map(|v| v.strip_suffix("|c").unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(counted, completed, "{lines:?}");
        let issued: u64 = (r["tests"].as_array().unwrap().iter())
            .map(|t| t["requests"]["issued"].as_u64().unwrap())
            .sum();
        let mut c = server.client();
        let calls = c.calls("set") + c.calls("get");
        assert!(
            (completed..=issued).contains(&calls),
            "{calls} not in {completed}..={issued}"
        );
        for name in [
            "ops_sec:",
            "ops_sec_avg:",
            "connections:",
            "progress_pct:",
            "latency_p50:",
            "latency_p99:",
            "latency_p99_9:",
        ] {
            let name = format!("memtier.ci_run.{name}");
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&name) && l.ends_with("|g")),
                "no gauge {name}: {lines:?}"
            );
        }
        for name in ["latency_ms:", "latency_avg_ms:"] {
            let name = format!("memtier.ci_run.{name}");
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&name) && l.ends_with("|ms")),
                "no timing {name}: {lines:?}"
            );
        }
        assert!(
            lines.iter().all(|l| l.starts_with("memtier.ci_run.")),
            "{lines:?}"
        );
        // Each run's end sets the throughput gauges back to 0.
        let zeroed = lines
            .iter()
            .filter(|l| *l == "memtier.ci_run.ops_sec:0|g")
            .count();
        assert!(zeroed >= 2, "{lines:?}");

        let events: Vec<serde_json::Value> = (posts.iter())
            .map(|p| {
                assert!(p.starts_with("POST /events/ HTTP/1.1\r\n"), "{p}");
                serde_json::from_str(p.split("\r\n\r\n").nth(1).unwrap()).unwrap()
            })
            .collect();
        let seen: Vec<(String, String)> = (events.iter())
            .map(|e| {
                (
                    e["what"].as_str().unwrap().into(),
                    e["data"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want = |w: &str, d: &str| (w.to_string(), d.to_string());
        assert_eq!(
            seen,
            [
                want("Benchmark Started", "threads=2 connections=2 run=1"),
                want("Benchmark Completed", "run=1"),
                want("Benchmark Started", "threads=2 connections=2 run=2"),
                want("Benchmark Completed", "run=2"),
            ]
        );
        assert!(
            events
                .iter()
                .all(|e| e["tags"].as_str().unwrap().ends_with(",run:ci_run"))
        );
    }
}
