//! memtier's real-time metrics (`--statsd-host`, issue 23): StatsD lines over UDP once a second
//! and Graphite annotations over HTTP when each run starts and ends, with memtier's names,
//! types and formats (memtier's `statsd.cpp` and `docs/REALTIME_METRICS.md`), so a dashboard
//! built for memtier shows respbench's runs.
//!
//! Every name is `PREFIX.LABEL.METRIC` (`memtier.default.ops_sec`), one line per datagram:
//! - gauges, each second: `ops_sec` (the second's completed requests), `ops_sec_avg` (since the
//!   run started), `connections`, `progress_pct` (`%.6f`), `latency_pN` for each
//!   `--print-percentiles` value (`latency_p99_9`; the second's latency in ms, `%.6f`);
//! - timings (`|ms`, `%.3f`), each second: `latency_ms` (the second's mean latency) and
//!   `latency_avg_ms` (the run's so far);
//! - respbench's counters (`|c`; memtier sends none): `requests` (completed) and `errors`
//!   (error replies), each second, and when the run ends what the handed seconds missed (a reply
//!   that landed in a second after it was handed over), so their sums are the record's totals.
//!
//! - `bytes_sec` (the bytes since the last second sent, as of the last progress tick) and
//!   `bytes_sec_avg`: requests with their replies, as memtier's KB/sec.
//!
//! After each run `ops_sec`, `ops_sec_avg` and `progress_pct` are set to 0, as memtier does.
//! memtier's `connection_errors` is not sent (respbench counts failed connections in
//! `errors`' lost requests, not here).
//!
//! Latencies are the handed seconds' (`Observer::second`, on the main thread: nothing is added
//! to the workers' path), from the intended send time: memtier's send-to-reply figure unless
//! `--rate-limiting` paces the run. Nothing goes anywhere but the host given: StatsD's port and,
//! for the annotations, Graphite's (`--graphite-port`) on the same address. Names pass through
//! `redact::scrub` with the run's secrets.

use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use crate::cli::StatsdArgs;
use crate::metrics::{Second, TestResult};

/// How long a Graphite annotation may take to connect and be written (memtier's 2 s).
const GRAPHITE_TIMEOUT: Duration = Duration::from_secs(2);

/// The run's StatsD sink.
#[derive(Debug)]
pub struct Statsd {
    socket: UdpSocket,
    /// `PREFIX.LABEL.`, redacted.
    names: String,
    label: String,
    host: String,
    graphite: SocketAddr,
    percentiles: Vec<f64>,
    /// What the run is (the annotations' data, `progress_pct`).
    shape: RunShape,
    /// The test under way.
    test: TestSums,
    /// The connections up at the last progress tick.
    connections: u64,
    line: String,
}

/// The run's size, for the annotations and `progress_pct`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunShape {
    pub threads: u64,
    /// Connections per thread, as memtier counts them.
    pub clients: u64,
    /// Requests in all (`-n`), or the seconds (`--test-time`).
    pub requests: Option<u64>,
    pub secs: Option<f64>,
}

/// One test's running sums.
#[derive(Clone, Copy, Debug, Default)]
struct TestSums {
    run: u32,
    seconds: u64,
    completed: u64,
    errors: u64,
    latency_ns: f64,
    /// The run's bytes at the last progress tick, and at the last second sent.
    bytes: u64,
    bytes_sent: u64,
}

impl Statsd {
    /// Resolves the host and opens the socket; the error is one line naming the option.
    /// `secrets`: the run's, hidden in the names.
    pub fn open(args: &StatsdArgs, shape: RunShape, secrets: &[Vec<u8>]) -> Result<Self, String> {
        let addr = (args.host.as_str(), args.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("--statsd-host {}: cannot resolve it", args.host))?;
        let local: SocketAddr = if addr.is_ipv4() {
            "0.0.0.0:0".parse().unwrap_or(addr)
        } else {
            "[::]:0".parse().unwrap_or(addr)
        };
        let socket = UdpSocket::bind(local)
            .and_then(|s| s.connect(addr).map(|()| s))
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| format!("--statsd-host {}: cannot send there: {e}", args.host))?;
        let scrub = |s: &str| crate::redact::scrub(s, secrets);
        let (prefix, label) = (scrub(&args.prefix), scrub(&args.label));
        let names = match prefix.is_empty() {
            true => format!("{label}."),
            false => format!("{prefix}.{label}."),
        };
        eprintln!(
            "statsd: initialized, sending metrics to {}:{} with prefix '{prefix}' run_label \
             '{label}'",
            args.host, args.port
        );
        Ok(Self {
            socket,
            names,
            label,
            host: args.host.clone(),
            graphite: SocketAddr::new(addr.ip(), args.graphite_port),
            percentiles: args.percentiles.clone(),
            shape,
            test: TestSums::default(),
            connections: 0,
            line: String::new(),
        })
    }

    /// A run (`run`, from 1) starts: memtier's "Benchmark Started" annotation.
    pub fn test_started(&mut self, run: u32) {
        self.test = TestSums {
            run,
            ..TestSums::default()
        };
        let s = self.shape;
        let data = format!("threads={} connections={} run={run}", s.threads, s.clients);
        self.annotate("Benchmark Started", &data, "memtier,start");
    }

    /// The connections up now (a progress tick).
    pub fn connections(&mut self, n: u64) {
        self.connections = n;
    }

    /// The run's bytes so far, requests with their replies (a progress tick).
    pub fn bytes(&mut self, n: u64) {
        self.test.bytes = n;
    }

    /// A complete second of the run.
    pub fn second(&mut self, s: &Second) {
        let errors = s.failed.saturating_sub(s.lost.iter().sum());
        let latency = s.latency.histogram();
        let t = &mut self.test;
        t.seconds += 1;
        t.completed += s.completed;
        t.errors += errors;
        t.latency_ns += latency.mean_ns() * latency.len() as f64;
        let t = self.test;
        self.counter("requests", s.completed);
        if errors > 0 {
            self.counter("errors", errors);
        }
        self.gauge_int("ops_sec", s.completed);
        self.gauge_int("ops_sec_avg", t.completed / t.seconds.max(1));
        // Bytes as of the last progress tick (the engine counts them live, not per second).
        self.gauge_int("bytes_sec", t.bytes.saturating_sub(t.bytes_sent));
        self.gauge_int("bytes_sec_avg", t.bytes / t.seconds.max(1));
        self.test.bytes_sent = t.bytes;
        let mean = |ns: f64, n: u64| if n > 0 { ns / n as f64 / 1e6 } else { 0.0 };
        self.timing("latency_ms", latency.mean_ns() / 1e6);
        self.timing("latency_avg_ms", mean(t.latency_ns, t.completed));
        self.gauge_int("connections", self.connections);
        self.gauge("progress_pct", self.progress());
        if !latency.is_empty() {
            for i in 0..self.percentiles.len() {
                let p = self.percentiles[i];
                let ms = latency.value_at_percentile_ns(p) as f64 / 1e6;
                let name = format!("latency_p{}", p.to_string().replace('.', "_"));
                self.gauge(&name, ms);
            }
        }
    }

    /// The run ended: what the handed seconds missed, the "Benchmark Completed" annotation,
    /// and the throughput gauges back to 0.
    pub fn test_ended(&mut self, r: &TestResult) {
        let t = self.test;
        self.counter("requests", r.completed.saturating_sub(t.completed));
        let errors = r.errors.total().saturating_sub(t.errors);
        if errors > 0 {
            self.counter("errors", errors);
        }
        self.test.completed = r.completed;
        self.annotate(
            "Benchmark Completed",
            &format!("run={}", t.run),
            "memtier,end",
        );
        for name in ["ops_sec", "ops_sec_avg", "progress_pct"] {
            self.gauge_int(name, 0);
        }
    }

    /// How far the run is, percent (requests or seconds).
    fn progress(&self) -> f64 {
        match (self.shape.requests, self.shape.secs) {
            (Some(n), _) if n > 0 => self.test.completed as f64 * 100.0 / n as f64,
            (_, Some(secs)) if secs > 0.0 => self.test.seconds as f64 * 100.0 / secs,
            _ => 0.0,
        }
    }

    fn counter(&mut self, name: &str, n: u64) {
        self.send(name, format_args!("{n}"), "c");
    }

    fn gauge_int(&mut self, name: &str, n: u64) {
        self.send(name, format_args!("{n}"), "g");
    }

    fn gauge(&mut self, name: &str, v: f64) {
        self.send(name, format_args!("{v:.6}"), "g");
    }

    fn timing(&mut self, name: &str, ms: f64) {
        self.send(name, format_args!("{ms:.3}"), "ms");
    }

    /// One `NAME:VALUE|TYPE` datagram, fire and forget (a full socket buffer or an absent
    /// daemon loses the line, as memtier's).
    fn send(&mut self, name: &str, value: std::fmt::Arguments<'_>, kind: &str) {
        use std::fmt::Write as _;
        self.line.clear();
        let _ = write!(self.line, "{}{name}:{value}|{kind}", self.names);
        let _ = self.socket.send(self.line.as_bytes());
    }

    /// memtier's annotation: a JSON event POSTed to Graphite's `/events/` on the StatsD host,
    /// the reply not read; a Graphite that is not there costs at most [`GRAPHITE_TIMEOUT`].
    fn annotate(&self, what: &str, data: &str, tags: &str) {
        let body = serde_json::json!({
            "what": what,
            "tags": format!("{tags},run:{}", self.label),
            "data": data,
        })
        .to_string();
        let request = format!(
            "POST /events/ HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.host,
            self.graphite.port(),
            body.len()
        );
        if let Ok(mut s) = TcpStream::connect_timeout(&self.graphite, GRAPHITE_TIMEOUT) {
            let _ = s.set_write_timeout(Some(GRAPHITE_TIMEOUT));
            let _ = s.write_all(request.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests;
