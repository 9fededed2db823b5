//! The run's journal: what the `--json` record will hold, appended as it is measured, so a run
//! killed by SIGKILL, the OOM killer or a power cut loses at most its last second. Format:
//! `docs/journal.md`.
//!
//! Why JSON Lines appended and synced rather than the record rewritten: a line per second costs
//! one small write and one `fdatasync` on the main thread (never a worker's), whatever the run's
//! length, and a line cut short by a power cut mid-write is simply the last line, which the
//! reader ignores. The run holds an exclusive `flock` on the journal while it goes on, so a reader
//! tells a run still going (`running`) from one that was killed (`killed`). When the run ends the
//! record is written whole (`record::atomic`) and the journal is removed.
//!
//! Every line passes through `crate::redact` (the head as a record, test names as commands).

mod modes;
mod read;
mod server;

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::block::{Blocks, HEAD};
use super::document::{Document, TestRecord};
use crate::machine::Load;
use crate::metrics::{
    CoarseHistogram, DenseCounts, LatencyHistogram, PushCounts, SLOTS, Second, Slot,
};

pub use read::{read_file, recognise};
pub use server::ServerSeconds;

/// The journal's format name (the head line's `journal`). Format 2 (since the journal was made
/// smaller for long runs) writes the seconds' coarse histograms as HdrHistogram V2 and leaves
/// out a server's counters that did not change; the reader reads format 1 too
/// (`docs/journal.md`).
pub const FORMAT: &str = "respbench-journal/2";

/// The formats the reader reads, oldest first.
const FORMATS: [&str; 2] = ["respbench-journal/1", FORMAT];

/// One line of the journal.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line {
    /// The record's head (everything but `tests`), again whenever it changes: the last counts.
    Head { journal: String, document: Value },
    /// A test's measured phase began (boxed: a mode's block head makes it large).
    Begin(Box<BeginLine>),
    /// One second of the test under way, complete (boxed: by far the largest line).
    Second(Box<SecondLine>),
    /// A test ended: its whole record, exactly as `--json` will hold it.
    Test { record: Value },
    /// The record at `index` was dropped (a `--find-max` step that is not kept).
    Discard { index: usize },
}

/// What a test's record needs that its seconds do not say.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct BeginLine {
    name: String,
    /// Wall clock of the test's start, as the record's `started_at`.
    started_at: Option<String>,
    repetition: Option<u32>,
    commands: Vec<String>,
    target_rps: Option<u64>,
    /// A mix's commands as it names them (`--ratio`), in its order; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mix: Vec<String>,
    /// Cluster mode: each node's address and role at the test's start, by node index.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    nodes: Vec<(String, String)>,
    /// A mode's block's head, what the block needs beyond the seconds
    /// (`record::block::Block::Head`: a `--connect-storm`'s `storm` context, a `--fuzz` run's
    /// `fuzz` head: seed, modes, clients, the table, the log; a `--pubsub`/`--stream` test's
    /// `delivery` shape: mode, receivers, publishers, channels, messages, rate, payload), a
    /// field by the block's key.
    #[serde(flatten)]
    heads: Blocks<HEAD>,
}

/// One second of a test: its counts, its 100 ms slots and its latency histogram's buckets.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct SecondLine {
    second: usize,
    completed: u64,
    failed: u64,
    /// Lost without a reply, by kind (`metrics::FAILURE_KINDS`' order).
    lost: Vec<u64>,
    /// `[completed, failed, lost, reconnect_attempts, reconnects, waited_ns]` per slot.
    slots: Vec<[u64; 6]>,
    /// The second's corrected latency histogram (2 significant figures).
    latency: Coarse,
    /// The second's latencies at full precision (HDR V2 base64, uncompressed since this
    /// version: `record::hdr::encode_sparse`; older journals' compressed ones read the same):
    /// their sums over the seconds are the whole-test histograms, exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    exact: Option<ExactLine>,
    /// The second's sampled client delays (`rx_delay`, coarse as `latency`).
    #[serde(skip_serializing_if = "Coarse::is_empty")]
    client_delay: Coarse,
    /// Each worker thread's CPU from the test's start to this second's hand-over (cumulative:
    /// the last second's is the test's so far).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    threads: Vec<ThreadLine>,
    /// The machine's load from the test's start to this second (cumulative, as `threads`).
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<Load>,
    /// Each watched server's samples taken since the previous second's line, and its counters
    /// (`server::ServerLine`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    server: Vec<server::ServerLine>,
    /// `--pubsub`/`--stream`: messages published in the second (absent in other tests), and
    /// the deliveries they owe (absent in older journals).
    #[serde(skip_serializing_if = "is_zero")]
    published: u64,
    #[serde(skip_serializing_if = "is_zero")]
    owed: u64,
    /// Client-side caching invalidations received in the second (the timeline's).
    #[serde(skip_serializing_if = "is_zero")]
    invalidations: u64,
    /// What the workers' pushes gained (`[invalidations, messages, other]`) and the reconnects
    /// the server refused, handed over as `issued` (absent where it is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pushes: Option<[u64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reconnect_refusals: Option<u64>,
    /// Per slot, the workers' figures beside the requests: `[cpu_max_permille,
    /// runqueue_max_permille, cpu_workers, runqueue_workers, delay_sum_ns, delay_samples]`
    /// (`metrics::Slot`); absent when no slot has any (and in older journals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    slot_clients: Vec<[u64; 6]>,
    /// The mix's command names so far, when they grew since the `begin` line or the last
    /// second that named them (a replay learns its commands from the trace as it goes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mix: Vec<String>,
    /// Measured commands written, as the workers handed them over with the second
    /// (`metrics::Second::issued`): their sum is the recovered test's `issued`. Absent in older
    /// journals and in modes that do not count them (`issued` is then unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    issued: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A second's coarse histogram (2 significant figures) in its line: HdrHistogram V2
/// uncompressed, base64 (format 2: `hdr::encode_plain`, about an eighth of the bytes of the
/// pairs for a second whose latencies span a few milliseconds), or `[value_ns, count]` per non-empty
/// bucket (format 1; format 2 too for an empty one: `[]`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Coarse {
    Encoded(String),
    Pairs(Vec<[u64; 2]>),
}

impl Default for Coarse {
    fn default() -> Self {
        Coarse::Pairs(Vec::new())
    }
}

impl Coarse {
    fn of(h: &CoarseHistogram) -> Self {
        if h.is_empty() {
            Coarse::default()
        } else {
            Coarse::Encoded(super::hdr::encode_plain(&h.plain_v2()))
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Coarse::Encoded(t) => t.is_empty(),
            Coarse::Pairs(p) => p.is_empty(),
        }
    }

    /// Adds its counts to `h` (each recorded at its bucket's highest value: the same bucket).
    fn add_to(&self, h: &mut LatencyHistogram, what: &str) -> Result<(), String> {
        match self {
            Coarse::Encoded(t) => super::hdr::add_encoded(h, t, what),
            Coarse::Pairs(pairs) => {
                for [v, n] in pairs {
                    h.record_n(*v, *n);
                }
                Ok(())
            }
        }
    }
}

/// One worker thread's CPU so far (`metrics::ThreadCpuUsage`), nanoseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct ThreadLine {
    cpu_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    runqueue_ns: Option<u64>,
    wall_ns: u64,
}

/// What a second's line holds from beside the engine (`RunRecord` gathers it).
#[derive(Debug, Default)]
pub struct SecondContext {
    /// The machine's load since the test's start.
    pub machine: Option<Load>,
    /// Each watched server's samples since the last second's line, and its commandstats.
    pub server: Vec<ServerSeconds>,
}

/// A second's full-precision corrected and uncorrected histograms (`metrics::ExactSecond`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ExactLine {
    corrected: String,
    uncorrected: String,
    /// Error replies by first word, `[word, count]` (requests lost without a reply are in
    /// `lost`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    errors: Vec<(String, u64)>,
    /// A mix's commands' second, in the mix's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    commands: Vec<ExactCommand>,
    /// Cluster mode: each node's part of the second, by node index (the `begin` line names
    /// them), and the redirects by kind (`metrics::RedirectKind` order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    nodes: Vec<ExactNode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redirects: Option<[u64; 4]>,
}

/// One cluster node's part of a second (`metrics::NodeSecond`), its histogram uncompressed as
/// the second's own (`hdr::encode_sparse`; compressed as the record's in older journals).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct ExactNode {
    completed: u64,
    lost: u64,
    latency: String,
}

/// One mix command's second: as `metrics::CommandTally`, its histograms as the record's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ExactCommand {
    completed: u64,
    errors: u64,
    nils: u64,
    /// Values found (absent in journals of earlier builds, whose non-nil replies were hits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hits: Option<u64>,
    latency: String,
    /// From the write (absent in journals of earlier builds).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    uncorrected: String,
    /// `[tx, rx]`: bytes of its answered requests and of their replies (absent in journals of
    /// earlier builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<[u64; 2]>,
}

impl SecondLine {
    /// Second `index` as a line, with what `ctx` holds beside it but the servers (the journal
    /// writes what changed of those: `server::Written`); its parts are added up in `dense`.
    fn of(index: usize, s: &Second, ctx: &SecondContext, dense: &mut DenseCounts) -> Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Self {
            threads: s
                .client_threads
                .iter()
                .map(|t| ThreadLine {
                    cpu_ns: nanos(t.cpu),
                    runqueue_ns: t.runqueue.map(nanos),
                    wall_ns: nanos(t.wall),
                })
                .collect(),
            machine: ctx.machine,
            server: Vec::new(),
            second: index,
            completed: s.completed,
            failed: s.failed,
            published: s.published,
            owed: s.owed,
            invalidations: s.invalidations,
            pushes: s.pushes.map(|p| [p.invalidations, p.messages, p.other]),
            reconnect_refusals: s.reconnect_refusals,
            slot_clients: slot_clients(&s.slots),
            mix: Vec::new(),
            issued: s.issued,
            lost: s.lost.to_vec(),
            slots: s
                .slots
                .iter()
                .map(|x| {
                    [
                        x.completed,
                        x.failed,
                        x.lost,
                        x.reconnect_attempts,
                        x.reconnects,
                        x.waited_ns,
                    ]
                })
                .collect(),
            latency: Coarse::of(&s.latency),
            client_delay: Coarse::of(&s.client_delay),
            exact: s.exact.as_deref().map(|e| ExactLine {
                corrected: super::hdr::encode_sparse_with(&e.corrected, dense),
                uncorrected: super::hdr::encode_sparse_with(&e.uncorrected, dense),
                errors: e
                    .errors
                    .sorted()
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(w, n)| (w.to_string(), n))
                    .collect(),
                commands: e
                    .commands
                    .iter()
                    .map(|c| ExactCommand {
                        completed: c.completed,
                        errors: c.errors,
                        nils: c.nils,
                        hits: Some(c.hits),
                        latency: super::hdr::encode_sparse_with(&c.latency, dense),
                        uncorrected: super::hdr::encode_sparse_with(&c.uncorrected, dense),
                        bytes: Some([c.tx_bytes, c.rx_bytes]),
                    })
                    .collect(),
                nodes: e
                    .nodes
                    .iter()
                    .map(|n| ExactNode {
                        completed: n.completed,
                        lost: n.lost,
                        latency: super::hdr::encode_sparse_with(&n.latency, dense),
                    })
                    .collect(),
                redirects: (!e.nodes.is_empty()).then_some(e.redirects),
            }),
        }
    }

    /// The second back, as the timeline held it (the histogram's buckets recorded at their
    /// highest value land in the same buckets).
    fn to_second(&self) -> Result<Second, String> {
        let mut s = Second {
            completed: self.completed,
            failed: self.failed,
            published: self.published,
            owed: self.owed,
            invalidations: self.invalidations,
            pushes: self
                .pushes
                .map(|[invalidations, messages, other]| PushCounts {
                    invalidations,
                    messages,
                    other,
                }),
            reconnect_refusals: self.reconnect_refusals,
            issued: self.issued,
            ..Second::default()
        };
        for (a, b) in s.lost.iter_mut().zip(&self.lost) {
            *a = *b;
        }
        let none = [0; 6];
        let clients = self.slot_clients.iter().chain(std::iter::repeat(&none));
        for ((slot, x), c) in s
            .slots
            .iter_mut()
            .zip(self.slots.iter().take(SLOTS))
            .zip(clients)
        {
            let small = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
            *slot = Slot {
                completed: x[0],
                failed: x[1],
                lost: x[2],
                reconnect_attempts: x[3],
                reconnects: x[4],
                waited_ns: x[5],
                cpu_max_permille: small(c[0]),
                runqueue_max_permille: small(c[1]),
                cpu_workers: small(c[2]),
                runqueue_workers: small(c[3]),
                delay_sum_ns: c[4],
                delay_samples: c[5],
            };
        }
        let what = format!("journal second {}", self.second);
        for (line, h) in [
            (&self.latency, &mut s.latency),
            (&self.client_delay, &mut s.client_delay),
        ] {
            if !line.is_empty() {
                line.add_to(h.open_mut(), &what)?;
            }
        }
        Ok(s)
    }
}

/// The slots' figures beside the requests (`SecondLine::slot_clients`), or none when every
/// slot's are 0.
fn slot_clients(slots: &[Slot]) -> Vec<[u64; 6]> {
    let rows: Vec<[u64; 6]> = slots
        .iter()
        .map(|x| {
            [
                u64::from(x.cpu_max_permille),
                u64::from(x.runqueue_max_permille),
                u64::from(x.cpu_workers),
                u64::from(x.runqueue_workers),
                x.delay_sum_ns,
                x.delay_samples,
            ]
        })
        .collect();
    match rows.iter().all(|r| r.iter().all(|n| *n == 0)) {
        true => Vec::new(),
        false => rows,
    }
}

/// The journal being written: the open file (locked) and where it is.
pub struct Journal {
    file: File,
    path: PathBuf,
    /// The test under way has its `begin` line.
    begun: bool,
    /// What its lines said of each watched server so far.
    servers: server::Written,
    /// Where each second's parts are put in bucket order.
    dense: DenseCounts,
    /// How many of its mix's command names the journal has (a replay's grow as it goes).
    mix_named: usize,
}

impl Journal {
    /// Creates the journal at `path` and locks it for the run. A journal already there is left
    /// alone: another run's (locked), or a killed run's, whose record would be lost with it.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = match File::options().write(true).create_new(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(io::Error::other(if read::locked(path) {
                    "another run is writing it".to_string()
                } else {
                    format!(
                        "a journal of an earlier run is there (killed?): keep it with \
                         respbench recover {} -o FILE, or remove it",
                        path.display()
                    )
                }));
            }
            Err(e) => return Err(e),
        };
        // SAFETY: flock on a descriptor this `File` owns and keeps open; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(io::Error::other(format!(
                "locked by another run ({})",
                io::Error::last_os_error()
            )));
        }
        super::atomic::sync_dir(path);
        Ok(Self {
            file,
            path: path.to_path_buf(),
            begun: false,
            servers: server::Written::default(),
            dense: DenseCounts::default(),
            mix_named: 0,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and syncs it.
    fn write(&mut self, line: &Line) -> io::Result<()> {
        let mut bytes = serde_json::to_vec(line).map_err(io::Error::other)?;
        bytes.push(b'\n');
        self.file.write_all(&bytes)?;
        self.file.sync_data()
    }

    /// The record's head (redacted like a record read back): at the start and after a change.
    pub fn head(&mut self, doc: &Document) -> io::Result<()> {
        let mut v = serde_json::to_value(doc).map_err(io::Error::other)?;
        if let Some(tests) = v.get_mut("tests") {
            *tests = Value::Array(Vec::new());
        }
        crate::redact::record(&mut v);
        self.write(&Line::Head {
            journal: FORMAT.into(),
            document: v,
        })
    }

    /// A completed second of the test under way (`name` and the rest go into its `begin` line,
    /// written before its first second).
    pub fn second(&mut self, test: TestStart<'_>, index: usize, s: &Second) -> io::Result<()> {
        self.second_with(test, index, s, &SecondContext::default())
    }

    /// The same, with what the record takes from beside the engine (`ctx`).
    pub fn second_with(
        &mut self,
        test: TestStart<'_>,
        index: usize,
        s: &Second,
        ctx: &SecondContext,
    ) -> io::Result<()> {
        // A replay's commands, named as it learns them.
        let mut mix = Vec::new();
        if !self.begun {
            self.mix_named = test.mix.len();
            self.write(&Line::Begin(Box::new(BeginLine {
                name: crate::redact::command_text(test.name),
                started_at: test.started_at,
                repetition: test.repetition,
                commands: test.commands,
                target_rps: test.target_rps,
                mix: test.mix,
                nodes: test.nodes,
                heads: test.heads,
            })))?;
            self.begun = true;
            self.servers.clear();
        } else if test.mix.len() > self.mix_named {
            self.mix_named = test.mix.len();
            mix = test.mix;
        }
        let mut line = SecondLine::of(index, s, ctx, &mut self.dense);
        line.server = ctx.server.iter().map(|x| self.servers.line(x)).collect();
        line.mix = mix;
        self.write(&Line::Second(Box::new(line)))
    }

    /// A test's whole record, as the record holds it.
    pub fn test(&mut self, rec: &TestRecord) -> io::Result<()> {
        self.begun = false;
        let mut v = serde_json::json!({ "tests": [rec] });
        crate::redact::record(&mut v);
        let record = v["tests"][0].take();
        self.write(&Line::Test { record })
    }

    /// Test record `index` was dropped.
    pub fn discard(&mut self, index: usize) -> io::Result<()> {
        self.write(&Line::Discard { index })
    }

    /// The run ended and its record is written: the journal goes (the lock with it).
    pub fn remove(self) -> io::Result<()> {
        std::fs::remove_file(&self.path)?;
        super::atomic::sync_dir(&self.path);
        Ok(())
    }
}

/// What the `begin` line of a test holds.
#[derive(Debug, Default)]
pub struct TestStart<'a> {
    pub name: &'a str,
    pub started_at: Option<String>,
    pub repetition: Option<u32>,
    pub commands: Vec<String>,
    pub target_rps: Option<u64>,
    /// A mix's commands as it names them, in its order (empty otherwise).
    pub mix: Vec<String>,
    /// Cluster mode: each node's address and role (`primary`, `replica`), by node index.
    pub nodes: Vec<(String, String)>,
    /// A mode's block's head (`BeginLine::heads`).
    pub heads: Blocks<HEAD>,
}

#[cfg(test)]
pub(crate) mod mode_tests;
#[cfg(test)]
mod tests;
