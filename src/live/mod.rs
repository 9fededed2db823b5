//! Live metrics: `--metrics-listen ADDR:PORT` serves the run's figures on `/metrics` in the
//! Prometheus text format or OpenMetrics while it runs (and `--metrics-linger` after), so a
//! long run can be watched in Prometheus and Grafana (`deploy/grafana/`, docs/live-metrics.md).
//!
//! Owns: the HTTP endpoint (one thread, one poll loop: `http.rs`), the figures it shows (`state.rs`) and their
//! text (`text.rs`). Must not: touch the hot path (it is fed from the seconds the engine hands
//! over and from progress ticks, both on the main thread), or show a secret (a test's name goes
//! through `redact::command_text`, as every other output's).
//!
//! Why bind before anything else: a port that is taken or an address that is not the machine's
//! is a usage error (exit 2) found before the record is opened and before any load starts.

mod http;
mod state;
mod statsd;
mod text;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use state::State;
pub use state::{BUCKETS, KINDS, Phase, Tick};
pub use statsd::{RunShape, Statsd};
pub use text::Format;

use crate::metrics::{Second, TestResult};
use crate::watch::SampleFeed;

use http::POLL;

/// The running endpoint; [`Endpoint::finish`] stops it.
pub struct Endpoint {
    feed: Feed,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Where it listens (the port the system chose for port 0).
    pub addr: SocketAddr,
}

/// The run's side: what it tells the endpoint as the run goes (cheap to clone).
#[derive(Clone, Debug)]
pub struct Feed {
    state: Arc<Mutex<State>>,
}

/// The labels every series carries: the shard's place in a sharded run.
pub fn shard_labels(shard: Option<(u64, u64)>) -> String {
    match shard {
        Some((index, count)) => format!("shard=\"{index}\",shards=\"{count}\""),
        None => String::new(),
    }
}

impl Endpoint {
    /// Listens on `addr` and serves `/metrics` from a thread of its own. The error is one line
    /// naming the address.
    pub fn listen(addr: SocketAddr, common_labels: String) -> Result<Endpoint, String> {
        let server = http::Server::bind(addr)
            .map_err(|e| format!("--metrics-listen {addr}: cannot listen there: {e}"))?;
        let bound = server
            .local_addr()
            .map_err(|e| format!("--metrics-listen {addr}: {e}"))?;
        let feed = Feed {
            state: Arc::new(Mutex::new(State::new(common_labels))),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (feed, stop) = (feed.clone(), stop.clone());
            std::thread::Builder::new()
                .name("respbench-metrics".into())
                .spawn(move || server.serve(&stop, &|r| answer(&feed, r)))
                .map_err(|e| format!("--metrics-listen {addr}: cannot start its thread: {e}"))?
        };
        Ok(Endpoint {
            feed,
            stop,
            thread: Some(thread),
            addr: bound,
        })
    }

    pub fn feed(&self) -> Feed {
        self.feed.clone()
    }

    /// The run is over: the figures say so, stay served for `linger` (a scraper's last look;
    /// `quit` ends the wait early, a second Ctrl-C), then the endpoint closes (within
    /// `http::POLL`, whatever its clients do).
    pub fn finish(mut self, linger: Duration, quit: &dyn Fn() -> bool) {
        self.feed.lock().phase = Phase::Ended;
        let until = Instant::now() + linger;
        while Instant::now() < until && !quit() {
            std::thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The answer to a read-only request: the figures on `/metrics`, `OK` on `/-/healthy`, 404
/// elsewhere.
fn answer(feed: &Feed, request: &http::Request) -> http::Reply {
    match request.path {
        "/metrics" => {
            let format = Format::negotiate(request.accept);
            let body = {
                let mut st = feed.lock();
                st.refresh_servers();
                text::render(&st, format)
            };
            http::Reply {
                status: 200,
                content_type: format.content_type(),
                body,
            }
        }
        "/-/healthy" => http::plain(200, "OK\n"),
        _ => http::plain(404, "respbench serves /metrics and /-/healthy only\n"),
    }
}

impl Feed {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A test begins: `title` as the run names it (redacted again here: a label is an output
    /// like any other), and the server watch's samplers for it.
    pub fn test_started(&self, title: &str, servers: Vec<SampleFeed>) {
        let name = crate::redact::command_text(title);
        self.lock().test_started(&name, servers);
    }

    /// A progress tick (every 250 ms).
    pub fn progress(&self, tick: &Tick) {
        self.lock().progress(tick);
    }

    /// A complete second of the measured phase (`Observer::second`).
    pub fn second(&self, second: &Second) {
        self.lock().second(second);
    }

    /// The test ended: its counters become the result's totals.
    pub fn test_ended(&self, result: &TestResult) {
        self.lock().test_ended(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_metrics_refuses_other_paths_and_a_taken_port_is_one_line() {
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let endpoint = Endpoint::listen(any, shard_labels(Some((2, 3)))).unwrap();
        let addr = endpoint.addr;
        let feed = endpoint.feed();
        feed.test_started("GET", Vec::new());
        feed.progress(&Tick {
            completed: 42,
            connections: 8,
            down: 2,
            ..Tick::default()
        });
        let page = get(addr, "/metrics");
        assert!(
            page.starts_with("HTTP/1.0 200") || page.starts_with("HTTP/1.1 200"),
            "{page}"
        );
        assert!(page.contains("text/plain; version=0.0.4"), "{page}");
        assert!(
            page.contains(
                "respbench_requests_completed_total{shard=\"2\",shards=\"3\",test=\"GET\"} 42\n"
            ),
            "{page}"
        );
        assert!(page.contains("respbench_connections_up{shard=\"2\",shards=\"3\"} 6\n"));
        assert!(get(addr, "/").contains(" 404 "));

        let taken = Endpoint::listen(addr, String::new())
            .err()
            .expect("the port is taken");
        assert!(
            taken.starts_with(&format!("--metrics-listen {addr}: cannot listen there"))
                && !taken.contains('\n'),
            "{taken}"
        );
        endpoint.finish(Duration::ZERO, &|| false);
        // Closed after the run: the port refuses, or (tests run in parallel) another test's
        // listener has taken it since, which does not serve this run's figures.
        if let Ok(mut s) = std::net::TcpStream::connect(addr) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = write!(s, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            assert!(
                !out.contains("shard=\"2\",shards=\"3\""),
                "still served: {out}"
            );
        }
    }
}
