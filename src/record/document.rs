//! The shape of the record (schema `respbench/1`), as serde types. `docs/record.schema.json` is
//! the same shape as a JSON Schema; a field added here must be added there (the integration tests
//! validate real records against it, with `additionalProperties: false`).
//!
//! Conventions: latencies in microseconds as floats (sub-µs precision), histograms in
//! nanoseconds (as recorded), times RFC 3339 UTC, byte counts as integers, CPU in percent of one
//! core. Absent figures are `null`, never 0.
//!
//! These types are also how the record is read back (`compare`, `report`, `merge`): one
//! definition, so a reader cannot drift from the writer. Reading is lenient by design: every field
//! but `tests` has a default (`#[serde(default)]`), so a record written before a field existed
//! still reads (the field takes its default: 0, empty, `null`), and unknown fields are ignored, so
//! a newer `respbench/1` record reads too. `tests/fixtures/records/` keeps records written by
//! earlier builds; `tests_fixtures.rs` reads each one and writes it back unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::LatencyHistogram;
use crate::watch::ServerIdentity;

pub use super::summary::{LatencySummary, Range, ServerTestRecord};
use super::timeline::{OutageRecord, TimelineRow};

/// The schema identifier; changes only with an incompatible change of shape.
pub const SCHEMA: &str = "respbench/1";

/// One run. Defaults are per field rather than for the whole type: `tests` alone is required,
/// so a JSON document without it is named as not a record (`missing field \`tests\``).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Document {
    #[serde(default)]
    pub schema: String,
    #[serde(default)]
    pub tool: Tool,
    /// argv with passwords redacted.
    #[serde(default)]
    pub command_line: Vec<String>,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub ended_at: String,
    /// `completed`, `interrupted` (Ctrl-C) or `failed` (a fatal error).
    #[serde(default)]
    pub outcome: String,
    /// The fatal error's message, when `outcome` is `failed`.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub client: ClientHost,
    #[serde(default)]
    pub target: TargetRecord,
    /// One per watched server (the cluster's benchmark nodes).
    #[serde(default)]
    pub servers: Vec<ServerRecord>,
    #[serde(default)]
    pub options: Options,
    pub tests: Vec<TestRecord>,
    /// Sharded or `--start-at` runs only (absent otherwise): see `record::shard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::ShardRecord>,
    /// `--sentinel` runs only: see `record::failover`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentinel: Option<super::failover::SentinelRecord>,
    /// `--check-counters` runs only: one entry per INCR test checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<super::failover::CounterRecord>,
    /// `--find-max` runs only (absent otherwise): the search's steps and answer. `tests` then
    /// holds one step's full record: the answer's (or, with no answer, the last step's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find_max: Option<FindMaxRecord>,
    /// Merged records only (`respbench merge`): one row per shard record merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<super::shard::MergedShard>,
    /// Merged records only, when a merge is partial or its shards ran apart: see
    /// `record::shard::MergeNote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<super::shard::MergeNote>,
    /// `respbench replay` records only: see `record::replay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay::ReplayRecord>,
    /// The modes' run-wide blocks (`record::block`): a `--fuzz` run's `fuzz` (`fuzz::block`), a
    /// `--connect-storm`'s `storm` (`storm::block`). Each is a field of the document, absent
    /// when the mode did not run.
    #[serde(flatten)]
    pub blocks: super::block::Blocks<{ super::block::RUN }>,
    /// `respbench memtier --data-verify` runs only (absent otherwise): see
    /// `record::shape`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<super::shape::VerifyRecord>,
    /// `respbench ab` records only (absent otherwise): see `record::ab`. `tests` is then empty:
    /// every test record is in a block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<Box<AbRecord>>,
}

impl Document {
    /// Reads a record back (the one reader, used by `compare`, `report` and `merge`): any
    /// `respbench/1` record, older or newer (see the module comment). The caller checks `schema`
    /// first, to name another schema in its own words. The record is redacted again on the way in:
    /// one written before a spelling was redacted must not show its password in a comparison, a
    /// report or a merged record either.
    pub fn read(mut value: serde_json::Value) -> Result<Self, String> {
        crate::redact::record(&mut value);
        serde_json::from_value(value).map_err(|e| format!("not a valid {SCHEMA} record: {e}"))
    }
}

/// A `--find-max` search: what it looked for, every step, and what it found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxRecord {
    /// The SLO expression as given (`p99<1ms`).
    pub slo: String,
    pub step_duration_s: f64,
    pub warmup_s: f64,
    /// The closed-loop probe's throughput the ramp started from (`null` when `--rps` gave the
    /// start).
    pub probe_rps: Option<f64>,
    /// In the order they ran.
    pub steps: Vec<FindMaxStep>,
    /// The achieved throughput of the highest offered rate that met the SLO (`null`: none did).
    pub answer_rps: Option<f64>,
    /// `converged`, `never-met`, `rate-cap`, `window-limit`, `too-noisy` (the windows disagree
    /// too much to answer: `answer_rps` is then `null`), `stopped` (Ctrl-C, the time budget or a
    /// fatal error), or `running` while the search is going.
    pub end: String,
    /// When the lowest failing step above the answer fell behind its offered rate, what held it
    /// back: `server`, `client`, `both`, `machine-busy`, `connections`, `cant-tell` or `unknown`
    /// (`slo::table::Limit::name`); `null` otherwise.
    pub limit: Option<String>,
    /// With `end` `too-noisy` or `never-met`: a rate at least twice the failing bound's (the
    /// lowest rate's, for `never-met`) at which the SLO broke by no more than there, so the load
    /// did not set the boundary (the machine's stalls did). Absent otherwise, and in records from
    /// before the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_growth_rps: Option<u64>,
    /// The boundary decided from windows at its two rates run alternately (`slo::pairs`).
    /// Absent when the search did not get there, and in records from before pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary: Option<FindMaxBoundary>,
}

/// The answer's boundary as a paired comparison: the highest rate that met the SLO (`low_rps`)
/// and the lowest above it that did not (`high_rps`), run alternately.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxBoundary {
    pub low_rps: u64,
    pub high_rps: u64,
    /// Rounds with a window at both rates.
    pub pairs: u32,
    /// How much higher the SLO's figure (over its limit; a window that fell behind counts as at
    /// least offered over achieved) was at `high_rps` than at `low_rps` in the same rounds, in
    /// percent (`null` with fewer than two pairs).
    pub change_pct: Option<f64>,
    /// Its 95% interval (`stats::from_pairs`, as `respbench ab`'s), `[lo, hi]`.
    pub interval: Option<[f64; 2]>,
}

/// One measured window of a `--find-max` search (a step is one or more windows at one rate).
/// Latencies are corrected (from intended times).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FindMaxStep {
    pub offered_rps: u64,
    pub achieved_rps: f64,
    /// `null` when the window got no reply (then it did not meet the SLO).
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    /// Error replies.
    pub errors: u64,
    /// Every SLO condition held.
    pub met: bool,
    /// The achieved rate fell below 90% of the offered one: the step did not run at its rate
    /// (so it does not count as meeting the SLO there, whatever `met` says).
    pub saturated: bool,
    /// The search's step (1-based): consecutive windows at one rate share it. Absent in
    /// records from before windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The window's number at its rate (1-based, counting earlier steps at the same rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientHost {
    pub hostname: String,
    pub cores: usize,
}

/// Where the server is, without credentials.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetRecord {
    /// `tcp` or `unix`.
    pub transport: String,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub socket: Option<String>,
    pub tls: bool,
    pub cluster: bool,
    /// Cluster mode: the benchmark nodes (`host:port`).
    pub nodes: Vec<String>,
}

/// A watched server: who it is, or why there are no figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerRecord {
    pub address: String,
    pub identity: Option<ServerIdentity>,
    pub unavailable: Option<String>,
}

/// The options that shaped the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub clients: u32,
    pub threads: usize,
    pub pipeline: u32,
    pub data_size: usize,
    /// `-n`, when the tests stop by count.
    pub requests: Option<u64>,
    /// `--duration` in seconds, when the tests stop by time.
    pub duration_s: Option<f64>,
    pub warmup_s: f64,
    pub keyspace: Option<u64>,
    pub sequential: bool,
    /// `--rps` target (`null`: closed loop).
    pub rps: Option<u64>,
    pub keepalive: bool,
    /// memtier's connection options (`record/conn.rs`); absent when none was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<super::conn::ConnectionOptions>,
    pub resp3: bool,
    pub dbnum_select: bool,
    pub continue_on_error: bool,
    pub tracking: bool,
    pub tls: bool,
    pub cluster: bool,
    pub seed: u64,
    pub precision: usize,
    pub loop_forever: bool,
    pub server_stats: bool,
    /// The workload: key pattern and range, key prefix, value sizes, mix, arrival (its fields
    /// sit beside the others in the JSON: `options.key_pattern`, `options.mix`, ...).
    #[serde(flatten)]
    pub workload: super::workload::WorkloadOptions,
}

/// One test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TestRecord {
    pub name: String,
    /// When the test began (wall clock, RFC 3339 with microseconds; `merge` aligns timelines by
    /// it). Absent only in records built outside a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// `--repeat N`: which run of the test this is (1-based); absent without `--repeat`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
    /// The commands it sends, lower case, in order (repeats once).
    pub commands: Vec<String>,
    /// `completed`, `interrupted` or `aborted`.
    pub outcome: String,
    pub requests: Requests,
    pub pushes: Pushes,
    pub duration_s: f64,
    pub throughput_rps: f64,
    pub target_rps: Option<u64>,
    pub latency_us: LatencyPair,
    pub histograms: Histograms,
    /// Cluster mode: per node that answered requests.
    pub nodes: Vec<NodeRecord>,
    /// A command mix (`--ratio`): each command's own figures, in the mix's order; absent for a
    /// test of one command or sequence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixRecord>,
    /// Per second of the measured phase (empty until the engine supplies one).
    pub timeline: Vec<TimelineRow>,
    /// Outages found in the timeline's 100 ms slots (requests lost or nothing completed).
    pub outages: Vec<OutageRecord>,
    /// Per watched server (empty without server figures).
    pub server: Vec<ServerTestRecord>,
    /// Per respbench worker thread, percent of one core (`null` until measured).
    pub client_threads_cpu_pct: Option<Vec<f64>>,
    /// Per respbench worker thread, the share of wall time it waited for a CPU (run-queue
    /// wait from `/proc/thread-self/schedstat`), percent; absent where not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_threads_runqueue_pct: Option<Vec<f64>>,
    /// How busy the machine was over the test; absent in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineRecord>,
    /// How long replies waited in the kernel before respbench read them (sampled kernel receive
    /// timestamps on TCP, `metrics::rx_delay`), µs; absent where not measured (unix sockets,
    /// TLS, no timestamps) and in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_delay_us: Option<LatencySummary>,
    /// Where the average latency went (server, client, the rest); absent without the server's
    /// commandstats and in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_split: Option<LatencySplit>,
    pub verdict: VerdictRecord,
    /// The modes' blocks of a test (`record::block`): `--memory-per-key`/`--fill`'s `memory`
    /// (`memory::block`). Each is a field of the test, absent when the mode did not run.
    #[serde(flatten)]
    pub blocks: super::block::Blocks<{ super::block::TEST }>,
    /// `--pubsub`/`--stream` tests only (absent otherwise): see `record::delivery`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<super::delivery::DeliveryRecord>,
    /// memtier's `--client-stats` only (absent otherwise): see `record::client_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_seconds: Option<Vec<super::client_seconds::ClientSecondsRecord>>,
}

/// A test's average latency split into the server's own time per call, the time replies waited
/// for respbench, and the rest. Microseconds.
///
/// Why: the measured latency alone cannot say whether a slow test is a slow server, a busy
/// client or the path between them; the server's `usec_per_call` (`INFO commandstats`, the
/// execution alone) and the client's measured delay take their parts out, and what is left is
/// network, kernel and queueing (with `-P`, a request also waits for the batch's earlier ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencySplit {
    /// The requests' average from their actual send to their reply (the uncorrected figure:
    /// the split is of what happened to a request once sent, not of a schedule's lateness).
    pub avg_us: f64,
    /// The server's own time per call: commandstats Δusec / Δcalls over the test's commands
    /// (every node in cluster mode).
    pub server_us: f64,
    /// The time replies waited in the kernel for respbench to read them; `null` where not
    /// measured (then it is inside `rest_us`).
    pub client_delay_us: Option<f64>,
    /// `avg_us − server_us − client_delay_us`, never below zero: network, kernel, queueing.
    pub rest_us: f64,
}

impl LatencySplit {
    /// The split of `avg_us` given the server's time per call and the client's delay.
    pub fn of(avg_us: f64, server_us: f64, client_delay_us: Option<f64>) -> Self {
        Self {
            avg_us,
            server_us,
            client_delay_us,
            rest_us: (avg_us - server_us - client_delay_us.unwrap_or(0.0)).max(0.0),
        }
    }

    /// A part's share of the average, percent (0 for a zero average).
    pub fn share_pct(&self, part_us: f64) -> f64 {
        if self.avg_us > 0.0 {
            part_us / self.avg_us * 100.0
        } else {
            0.0
        }
    }
}

/// The machine over one test (from its start to its end, connecting included), as the verdict
/// read it. A figure the machine does not offer is `null`, never zero; `measured` names those
/// that were read.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineRecord {
    /// `/proc/pressure/cpu` "some": share of wall time a runnable task waited for a CPU, percent.
    pub cpu_pressure_some_pct: Option<f64>,
    /// "full": share in which every non-idle task waited, percent.
    pub cpu_pressure_full_pct: Option<f64>,
    /// Steal from `/proc/stat`, percent of all CPUs' time.
    pub steal_pct: Option<f64>,
    /// Every CPU together, percent of the machine's capacity.
    pub busy_pct: Option<f64>,
    /// respbench's whole process, percent of one core.
    pub respbench_cpu_pct: Option<f64>,
    /// Other processes (not respbench, not the server), percent of one core; only when every
    /// watched server is on this machine (loopback or a unix socket).
    pub others_cpu_pct: Option<f64>,
    /// The respbench worker that waited longest for a CPU, percent of wall time.
    pub client_max_runqueue_pct: Option<f64>,
    /// The machine's cores (every online CPU): `busy_pct` is of these.
    pub cores: usize,
    /// The cores respbench may run on (its affinity or CPU quota: `taskset -c 1` gives 1), at
    /// most `cores`; absent in records of earlier builds, whose `cores` was this figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub respbench_cores: Option<usize>,
    /// Which figures were read: `cpu_pressure`, `steal`, `busy`, `respbench_cpu`, `others_cpu`,
    /// `client_runqueue`.
    pub measured: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Requests {
    /// Requests sent (`null` until the engine counts them separately from replies).
    pub issued: Option<u64>,
    pub completed: u64,
    /// Error replies.
    pub failed: u64,
    /// Error replies by first word.
    pub errors: BTreeMap<String, u64>,
    /// Cluster redirects by kind (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`).
    pub redirects: Option<BTreeMap<String, u64>>,
    /// Still unanswered when the test ended: `completed + failed + unanswered = issued`.
    pub unanswered: u64,
    /// `-e`: attempts to reopen a failed connection, those the server answered on, and those it
    /// refused (a refused connect or `ERR max number of clients reached`; added later, so a
    /// reader of older records takes its absence as unknown).
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// `None` in records written before it was counted (written back as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_refusals: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Pushes {
    pub invalidations: u64,
    pub messages: u64,
    pub other: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyPair {
    /// From each request's intended send time (coordinated omission corrected).
    pub corrected: LatencySummary,
    /// From the actual write.
    pub uncorrected: LatencySummary,
}

/// The full histograms, HdrHistogram V2 compressed + base64, values in nanoseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Histograms {
    pub unit: String,
    pub encoding: String,
    pub corrected: String,
    pub uncorrected: String,
}

impl Histograms {
    pub fn of(corrected: &LatencyHistogram, uncorrected: &LatencyHistogram) -> Self {
        Self {
            unit: "ns".into(),
            encoding: ENCODING.into(),
            corrected: super::hdr::encode(corrected),
            uncorrected: super::hdr::encode(uncorrected),
        }
    }
}

/// How the histograms are encoded.
pub const ENCODING: &str = "hdrhistogram-v2-compressed-base64";

/// One cluster node's share of a test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeRecord {
    pub address: String,
    pub role: String,
    pub completed: u64,
    pub latency_us: LatencySummary,
    /// Corrected latency, encoded as [`Histograms`].
    pub histogram: String,
    /// `-e`: measured requests lost without a reply when its connections failed.
    pub lost: u64,
    /// `-e`: when its connections failed and when its slots were served again (`null`: they
    /// never failed).
    pub outage: Option<NodeOutageRecord>,
}

/// A cluster node's outage (`metrics::NodeOutage`), in seconds from the start of the measured
/// phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeOutageRecord {
    pub start_s: f64,
    /// `null`: its slots were not served again before the test ended.
    pub end_s: Option<f64>,
    /// Up to the end of the test when `end_s` is `null`.
    pub duration_s: f64,
}

/// One command of a mix: its share of a test, timed on its own replies.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MixRecord {
    /// As the report names it (`SET`).
    pub name: String,
    pub completed: u64,
    pub failed: u64,
    /// Its completions over the test's measured time.
    pub throughput_rps: f64,
    pub latency_us: LatencySummary,
    /// Corrected latency, encoded as [`Histograms`] (empty when the record keeps none).
    pub histogram: String,
    /// Values and nils its replies held (memtier's hits and misses of a read): a reply with a
    /// value or a nil reply counts one, an array reply (an `MGET`) one per element; absent in
    /// records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misses: Option<u64>,
    /// Its latency from just before the write (memtier's per-command figure; the test's
    /// `latency_us.uncorrected` covers every command's); absent in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncorrected: Option<MixUncorrected>,
    /// Bytes of its answered requests as written and of their replies as read (memtier's
    /// KB/sec); absent in records of earlier builds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<MixBytes>,
}

/// A mix command's latency from the write: its summary, and its histogram encoded as
/// [`Histograms`] (empty when the record keeps none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixUncorrected {
    pub latency_us: LatencySummary,
    pub histogram: String,
}

/// A mix command's bytes each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixBytes {
    pub tx: u64,
    pub rx: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VerdictRecord {
    /// `server-bound`, `client-bound`, `both-near-saturation`, `machine-busy`, `neither`,
    /// `rate-limited`, `cant-tell` or `unknown` (the value's own serde names, so a renamed kind
    /// cannot silently stop matching; a kind a later build adds reads as `unknown`).
    pub kind: crate::verdict::Verdict,
    /// The advice, with the deciding figure for `machine-busy` and the missing or noisy figure
    /// for `cant-tell`.
    pub reason: String,
    /// The server figure the verdict used (busiest node, main thread where reported).
    pub server_cpu_pct: Option<f64>,
    /// The busiest node's `command_busy_pct`.
    pub server_busy_pct: Option<f64>,
    /// The busiest respbench thread.
    pub client_max_thread_cpu_pct: Option<f64>,
}

// The record's `ab` block (`respbench ab`, issue 36): every block each side ran, in the order
// they ran, each a whole record as `--json` writes it, and the paired answer per test and metric.
//
// Why whole records per block: a reader (`compare`, `report`, a person) can check any block's
// histograms, timeline, server watch and verdict, and see the interleaving in time order; the
// answer is computed from them and can be computed again.
/// An A/B run: how it was ordered, what ran, and the answer.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbRecord {
    /// The seed of the block order (and of both sides' keys and values).
    pub seed: u64,
    /// Pairs of blocks asked for.
    pub rounds: u32,
    /// The order the measured blocks ran in, one letter per block (`ABBABAAB…`).
    pub order: String,
    /// Each side's own options as given (redacted), `a` then `b`.
    pub sides: Vec<AbSide>,
    /// Every block in the order it ran, warm-up blocks first.
    pub blocks: Vec<AbBlock>,
    /// One per test and metric, in test order.
    pub verdicts: Vec<AbVerdict>,
    /// How many intervals the answer reads together (tests × metrics): each is taken at
    /// 1 − 0.05/`comparisons`, so that all hold together at 95 %. 0 in records written before
    /// (each interval at 95 % alone).
    pub comparisons: u32,
    /// What the run still cannot rule out, one sentence each (a side client-bound in its blocks,
    /// a server restarted between blocks, unequal errors).
    pub confounders: Vec<String>,
    /// The first line of the output.
    pub answer: String,
}

/// One side of the comparison.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbSide {
    /// `a` or `b`.
    pub side: String,
    /// Its own options as typed (`--a '…'`, or `-u URI` from the short form), redacted.
    pub options: String,
}

/// One block: one side's run of every test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AbBlock {
    /// `a` or `b`.
    pub side: String,
    /// The pair it belongs to, from 1; 0 for a warm-up block (not analysed).
    pub round: u32,
    /// The block's record, as `respbench --json` writes it.
    pub record: Document,
}

/// The paired answer for one test and metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AbVerdict {
    pub test: String,
    /// `rps`, `p50` or `p99` (corrected latencies, µs), or `cpu_us` (the server's CPU time per
    /// request, µs, from the server watch).
    pub metric: String,
    /// `better`, `worse`, `within_noise` or `cant_tell`: B against A.
    pub verdict: String,
    /// B's change against A in percent: the geometric mean of the pairs' ratios, minus one
    /// (`null` without two complete pairs).
    pub change_pct: Option<f64>,
    /// The interval of `change_pct` (Student's t over the pairs' log ratios), at the confidence
    /// that makes all the answer's intervals hold together at 95 % (`AbRecord::comparisons`).
    pub interval: Option<[f64; 2]>,
    /// Complete pairs the figures come from.
    pub pairs: u32,
    /// Each side's geometric mean over those pairs (rps, or µs): `b / a − 1` is `change_pct`.
    pub a: Option<f64>,
    pub b: Option<f64>,
}
