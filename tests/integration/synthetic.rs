//! respbench records for the `compare` and `report` tests, made by the library's own record code
//! (`record::build::test_record`, the per-second `Timeline`, HDR encoding) from synthetic,
//! deterministic measurements: the writer's real shape without a server run, and figures whose
//! comparisons have known answers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use respbench::metrics::{Outcome, TestResult};
use respbench::record::build::{self, TestExtras};
use respbench::record::document::{
    ClientHost, Document, Options, SCHEMA, ServerRecord, ServerTestRecord, TargetRecord, Tool,
};
use respbench::record::{TestRecord, Timeline};
use respbench::watch::{ServerIdentity, ServerInterval};

/// Seconds of timeline per test.
const SECONDS: usize = 5;
/// Requests per second at speed 1.
const BASE_RPS: u64 = 2_000;

/// A fixed linear congruential generator: the same records on every machine.
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One test measured at `speed` (throughput × speed, latency ÷ speed).
pub fn test(name: &str, speed: f64, seed: u64) -> TestRecord {
    let mut rng = Lcg(seed ^ name.len() as u64);
    let mut r = TestResult::empty(name, None, Outcome::Completed);
    let mut timeline = Timeline::default();
    let per_second = (BASE_RPS as f64 * speed).round() as u64;
    for sec in 0..SECONDS {
        let s = timeline.second_mut(sec);
        for _ in 0..per_second {
            // A body around 200 µs with an exponential tail; latency falls as speed rises.
            let us = (150.0 + 100.0 * rng.unit() - 60.0 * (1.0 - rng.unit()).ln()) / speed;
            let ns = (us * 1000.0) as u64;
            s.latency.record(ns);
            s.completed += 1;
            r.latency.record(ns);
            r.latency_uncorrected.record(ns * 9 / 10);
            r.completed += 1;
        }
        if sec == 2 {
            s.failed += 1;
            r.errors.record(b"ERR synthetic");
        }
    }
    r.elapsed = Duration::from_secs(SECONDS as u64);
    timeline
        .check_totals(&r)
        .expect("synthetic timeline adds up");
    let extras = TestExtras {
        timeline: Some(&timeline),
        ..TestExtras::default()
    };
    let mut rec = build::test_record(&r, vec![name.to_lowercase()], &[], extras);
    rec.server.push(server_figures(&mut rng));
    rec
}

fn server_figures(rng: &mut Lcg) -> ServerTestRecord {
    let seconds: Vec<ServerInterval> = (0..SECONDS)
        .map(|t| ServerInterval {
            t: t as f64,
            secs: 1.0,
            cpu_pct: 60.0 + 20.0 * rng.unit(),
            main_thread_cpu_pct: Some(55.0 + 10.0 * rng.unit()),
            used_memory: 2_000_000 + t as u64 * 100_000,
            used_memory_rss: 8_000_000 + t as u64 * 120_000,
            ..ServerInterval::default()
        })
        .collect();
    ServerTestRecord {
        address: "127.0.0.1:6379".into(),
        cpu_pct: Some(70.0),
        main_thread_cpu_pct: Some(60.0),
        peak_second_cpu_pct: Some(80.0),
        steady_cpu_pct: Some(70.0),
        command_busy_pct: Some(65.0),
        used_memory: None,
        used_memory_rss: None,
        connected_clients_peak: Some(50),
        counters: Default::default(),
        fork_seen: false,
        partial: false,
        watch_gaps: 0,
        seconds,
        commands: Vec::new(),
        usec_per_call: None,
        latency_percentiles: Vec::new(),
    }
}

/// A run of `tests` against `server` (`redis`/`valkey`), each test repeated once per entry of
/// `speeds` (several entries: a record with repetitions, as `--repeat` writes them).
pub fn document(server: &str, tests: &[&str], speeds: &[f64], seed: u64) -> Document {
    let mut records = Vec::new();
    for name in tests {
        for (k, &speed) in speeds.iter().enumerate() {
            records.push(test(name, speed, seed + k as u64 * 7919));
        }
    }
    Document {
        schema: SCHEMA.into(),
        tool: Tool {
            name: "respbench".into(),
            version: "0.1.0".into(),
        },
        command_line: vec!["respbench".into(), "--json".into(), "run.json".into()],
        started_at: "2026-11-23T10:00:00Z".into(),
        shard: None,
        find_max: None,
        sentinel: None,
        counters: Vec::new(),
        shards: Vec::new(),
        merge: None,
        ended_at: "2026-11-23T10:01:00Z".into(),
        outcome: "completed".into(),
        error: None,
        blocks: Default::default(),
        verify: None,
        ab: None,
        client: ClientHost {
            hostname: "test".into(),
            cores: 2,
        },
        target: TargetRecord {
            transport: "tcp".into(),
            host: Some("127.0.0.1".into()),
            port: Some(6379),
            socket: None,
            tls: false,
            cluster: false,
            nodes: Vec::new(),
        },
        servers: vec![ServerRecord {
            address: "127.0.0.1:6379".into(),
            identity: Some(ServerIdentity {
                name: server.into(),
                version: if server == "valkey" {
                    "9.1.2"
                } else {
                    "7.0.15"
                }
                .into(),
                ..ServerIdentity::default()
            }),
            unavailable: None,
        }],
        options: Options {
            clients: 50,
            threads: 1,
            pipeline: 1,
            data_size: 3,
            requests: None,
            duration_s: Some(SECONDS as f64),
            warmup_s: 0.0,
            keyspace: None,
            sequential: false,
            rps: None,
            keepalive: true,
            connections: None,
            resp3: false,
            dbnum_select: false,
            continue_on_error: false,
            tracking: false,
            tls: false,
            cluster: false,
            seed: 1,
            precision: 3,
            loop_forever: false,
            server_stats: true,
            workload: Default::default(),
        },
        tests: records,
    }
}

/// Writes `doc` as `dir/name` (pretty JSON, as `--json` does) and returns the path.
pub fn write(dir: &Path, name: &str, doc: &Document) -> PathBuf {
    let path = dir.join(name);
    let text = serde_json::to_vec_pretty(doc).expect("serialisable");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}
