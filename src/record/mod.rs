//! Every run becomes data: the `--json` record (schema `respbench/1`, `docs/record.schema.json`),
//! and the run-wide [`RunRecord`] that collects it and the server watch's figures.
//!
//! Owns: the document's shape (`document`), building it from the run's results (`build`), the
//! per-second timeline type the engine fills (`timeline`), HDR text encoding (`hdr`), the client
//! host's facts (`host`); the command line comes redacted from `crate::redact`. Must not: measure
//! requests, decide exit codes, or print the human report.
//!
//! The run calls, in order: [`RunRecord::open`] (before any connection: a `--json` path that
//! cannot be written is exit 1 at once), [`RunRecord::watch_servers`] once the server is known,
//! [`RunRecord::begin_test`]/[`RunRecord::end_test`] around each test, and [`RunRecord::finish`]
//! whatever way the run ends (Ctrl-C and fatal errors included), so what was measured is kept.

/// The `ab` block's types (`respbench ab`), which live in `document.rs` beside `Document`: each
/// block of an A/B record is a whole record, so the two types hold each other.
pub mod ab {
    pub use super::document::{AbBlock, AbRecord, AbSide, AbVerdict};
}
pub mod atomic;
pub mod block;
pub mod build;
pub mod client_seconds;
pub mod conn;
pub mod delivery;

pub mod document;
pub mod failover;
pub mod hdr;
pub mod host;
pub mod input_file;
pub mod journal;
pub mod replay;
pub mod server;
pub mod shape;
pub mod shard;
pub mod summary;
pub mod timeline;
pub mod workload;

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use crate::cli::Endpoint;
use crate::engine::Stop;
use crate::metrics::TestResult;
use crate::plan::RunPlan;
use crate::timestamp::{rfc3339, rfc3339_micros};
use crate::watch::{ServerWatch, TestWatch, WatchTarget};
use crate::workload::Template;

pub use build::TestExtras;
pub use document::{Document, FindMaxBoundary, FindMaxRecord, FindMaxStep, TestRecord};
pub use timeline::{Second, Timeline};

/// Where the document goes.
enum Sink {
    None,
    Stdout,
    /// Checked when the run starts, replaced whole when it ends (`atomic`): an earlier record
    /// there stays until then.
    File(PathBuf),
}

/// The run's record while the run goes on: the document so far, where it goes (`--json`), and
/// the server watch whose figures go into it. (Not `metrics::Recorder`, a worker's histograms.)
pub struct RunRecord {
    sink: Sink,
    doc: Document,
    watch: Option<ServerWatch>,
    server_stats: bool,
    /// When the current test began (wall clock), for its `started_at`.
    test_started: Option<SystemTime>,
    /// The machine's counters at the test's start (its load goes into the verdict).
    machine_started: Option<crate::machine::Snapshot>,
    /// Whether the document goes anywhere (`--json` or `--html`). Without either, only the
    /// latest test's record is kept (for the report's server block and verdict) and its
    /// histograms are not encoded: a plain run, or `-l` forever, pays for neither.
    keeps: bool,
    /// The run's journal (`journal`), while it can be written.
    journal: Option<journal::Journal>,
    /// A journal whose write failed: written no more, and removed with the journal's usual
    /// end (once the record is written), so no truncated `.partial` stops the next run.
    failed_journal: Option<journal::Journal>,
    /// A caller writes its own report from the document (memtier mode): the run's human report
    /// goes nowhere.
    report_silenced: bool,
    /// The test's server samplers as they go, and how many samples of each the journal has, so
    /// a killed test keeps its server figures (`journal::SecondContext`).
    feeds: Vec<(crate::watch::SampleFeed, usize)>,
}

impl RunRecord {
    /// Starts the record of `plan`'s run with the process's `argv`. Creates the `--json` file now,
    /// so a path that cannot be written stops the run before it starts (the message names it).
    pub fn open(plan: &RunPlan, argv: &[OsString]) -> Result<Self, String> {
        let sink = match plan.json.as_deref() {
            None => Sink::None,
            Some(p) if p == Path::new("-") => Sink::Stdout,
            Some(p) => {
                atomic::check_writable(p)
                    .map_err(|e| format!("cannot write the --json file {}: {e}", p.display()))?;
                Sink::File(p.to_path_buf())
            }
        };
        let journal = match &plan.journal {
            Some(p) => Some(
                journal::Journal::create(p)
                    .map_err(|e| format!("cannot write the journal {}: {e}", p.display()))?,
            ),
            None => None,
        };
        let now = rfc3339(SystemTime::now());
        let doc = Document {
            schema: document::SCHEMA.into(),
            tool: document::Tool {
                name: "respbench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            command_line: crate::redact::command_line(argv),
            started_at: now.clone(),
            ended_at: now,
            outcome: "completed".into(),
            error: None,
            client: document::ClientHost {
                hostname: host::hostname(),
                cores: host::cores(),
            },
            target: target_record(plan),
            servers: Vec::new(),
            options: options(plan),
            tests: Vec::new(),
            shard: shard::ShardRecord::of(plan),
            find_max: None,
            sentinel: None,
            counters: Vec::new(),
            shards: Vec::new(),
            merge: None,
            replay: None,
            blocks: Default::default(),
            verify: None,
            ab: None,
        };
        let mut rec = Self {
            keeps: !matches!(sink, Sink::None) || plan.html.is_some() || journal.is_some(),
            sink,
            doc,
            watch: None,
            server_stats: plan.server_stats,
            test_started: None,
            machine_started: None,
            journal,
            failed_journal: None,
            report_silenced: false,
            feeds: Vec::new(),
        };
        rec.journal_head();
        Ok(rec)
    }

    /// Ends a mode whose block is the run's (`B::AT` is [`block::RUN`]: a connection storm's):
    /// stops its samplers and sets the record's block, which `block` makes from the watch's
    /// server figures (the mode knows its result). The journal's head gains the block: a run
    /// killed before its record is written still has it (`recover`).
    pub fn end_block<B: block::Block>(
        &mut self,
        watch: Option<TestWatch>,
        block: impl FnOnce(Vec<document::ServerTestRecord>) -> B,
    ) -> B {
        let watched = watch.map(TestWatch::end).unwrap_or_default();
        let server = watched
            .iter()
            .map(|w| server::server_record(w, &[]))
            .collect();
        let block = block(server);
        self.doc.blocks.put(&block);
        self.journal_head();
        block
    }

    /// Writes the record's head to the journal again (it changed).
    fn journal_head(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            let written = j.head(&self.doc);
            self.journaled(written);
        }
    }

    /// A journal that cannot be written any more (a full disk) is written no more, with one
    /// warning: the run and its final record go on without it. It stays until the record is
    /// written (what it holds so far still reads, if the run is killed before), then goes as a
    /// journal does (`finish`): a run that ends leaves no `.partial` behind.
    fn journaled(&mut self, written: io::Result<()>) {
        if let Err(e) = written
            && let Some(j) = self.journal.take()
        {
            eprintln!(
                "respbench: warning: the journal {} cannot be written ({e}); the run goes on \
                 without it, and it is removed when the run's record is written",
                j.path().display()
            );
            self.failed_journal = Some(j);
        }
    }

    /// Whether a journal is being written (its seconds then carry full-precision histograms).
    pub fn journaling(&self) -> bool {
        self.journal.is_some()
    }

    /// Second `index` of the test under way is complete (`engine::seconds`): to the journal.
    pub fn second(
        &mut self,
        test: journal::TestStart<'_>,
        index: usize,
        second: &crate::metrics::Second,
    ) {
        if let Some(j) = self.journal.as_mut() {
            let test = journal::TestStart {
                started_at: self.test_started.map(rfc3339_micros),
                ..test
            };
            // What the record takes from beside the engine, so far: the machine's load since the
            // test began and the server samples not journaled yet.
            let ctx = journal::SecondContext {
                machine: self.machine_started.map(|m| m.load_since()),
                server: self
                    .feeds
                    .iter_mut()
                    .map(|(feed, kept)| {
                        let samples = feed.samples_from(*kept);
                        *kept += samples.len();
                        let stats = feed.commandstats();
                        journal::ServerSeconds {
                            address: feed.address.clone(),
                            samples,
                            commandstats_before: stats.before,
                            commandstats: stats.latest,
                            latencystats: stats.latencystats,
                        }
                    })
                    .collect(),
            };
            let written = j.second_with(test, index, second, &ctx);
            self.journaled(written);
        }
    }

    /// Keeps every test with its histograms and writes no human report: the caller (memtier
    /// mode) builds its own output from [`RunRecord::into_document`].
    pub fn keep_for_caller(&mut self) {
        self.keeps = true;
        self.report_silenced = true;
    }

    /// Whether the human report is silenced ([`RunRecord::keep_for_caller`]).
    pub fn report_silenced(&self) -> bool {
        self.report_silenced
    }

    /// The document as the run left it.
    pub fn into_document(self) -> Document {
        self.doc
    }

    /// `--json -`: the document owns stdout, so the human report goes to stderr.
    pub fn owns_stdout(&self) -> bool {
        matches!(self.sink, Sink::Stdout)
    }

    /// Identifies the servers (`targets`: the server, or the cluster's benchmark nodes) and
    /// returns the warnings to print (one line per server that refuses `INFO`).
    pub fn watch_servers(&mut self, targets: Vec<WatchTarget>) -> Vec<String> {
        self.doc.target.nodes = if self.doc.target.cluster {
            targets.iter().map(|t| t.address.clone()).collect()
        } else {
            Vec::new()
        };
        let (watch, warnings) = ServerWatch::new(targets, self.server_stats);
        self.doc.servers = watch
            .servers
            .iter()
            .map(|s| document::ServerRecord {
                address: s.target.address.clone(),
                identity: s.identity.clone(),
                unavailable: s.unavailable.clone(),
            })
            .collect();
        self.watch = Some(watch);
        self.journal_head();
        warnings
    }

    /// Starts the server samplers for a test (none with `--no-server-stats`), aligned to now.
    pub fn begin_test(&mut self) -> Option<TestWatch> {
        self.begin_test_at(Instant::now())
    }

    /// Same, with samples aligned to `start` (the measured phase's start, when the caller knows
    /// it), so server second *k* lines up with timeline second *k*; stamps the test's wall-clock
    /// start for the record.
    pub fn begin_test_at(&mut self, start: Instant) -> Option<TestWatch> {
        self.test_started = Some(SystemTime::now());
        self.machine_started = Some(crate::machine::Snapshot::take());
        let watch = self.watch.as_ref().map(|w| w.begin_test(start));
        self.feeds = match (&watch, &self.journal) {
            (Some(w), Some(_)) => w.feeds().into_iter().map(|f| (f, 0)).collect(),
            _ => Vec::new(),
        };
        for (feed, _) in &self.feeds {
            feed.follow_commandstats();
        }
        watch
    }

    /// Notes when the measured run began (after any `--start-at` wait; `late`: seconds after the
    /// agreed time) in the record's `shard` block, when there is one.
    pub fn started(&mut self, at: SystemTime, late: Option<f64>) {
        if let Some(s) = self.doc.shard.as_mut() {
            s.started(at, late);
            self.journal_head();
        }
    }

    /// Ends a test: stops its samplers and adds its record.
    pub fn end_test(
        &mut self,
        watch: Option<TestWatch>,
        template: &Template,
        result: &TestResult,
        extras: TestExtras,
    ) -> &TestRecord {
        let watched = watch.map(TestWatch::end).unwrap_or_default();
        // A mix's commands are its own (the template is only its first).
        let commands = if result.commands.is_empty() {
            build::command_names(template)
        } else {
            result
                .commands
                .iter()
                .map(|c| c.name.to_ascii_lowercase())
                .collect()
        };
        let extras = TestExtras {
            skip_histograms: !self.keeps,
            machine: extras
                .machine
                .or_else(|| self.machine_started.take().map(|m| m.load_since())),
            ..extras
        };
        let mut rec = build::test_record(result, commands, &watched, extras);
        if !self.keeps {
            self.doc.tests.clear();
        }
        // The wall-clock start lets `merge` align shards' timelines by second.
        rec.started_at = self.test_started.take().map(rfc3339_micros);
        if let Some(j) = self.journal.as_mut() {
            let written = j.test(&rec);
            self.journaled(written);
        }
        self.doc.tests.push(rec);
        self.doc.tests.last().unwrap_or_else(|| unreachable!())
    }

    /// Ends the record (`outcome`: `completed`, `interrupted` or `failed`, with the fatal
    /// error's message) and writes it where `--json` said (nothing to write without `--json`);
    /// once it is written, the journal goes.
    pub fn finish(&mut self, outcome: &'static str, error: Option<String>) -> io::Result<()> {
        self.write_record(outcome, error)?;
        match self.journal.take().or(self.failed_journal.take()) {
            Some(j) => j.remove(),
            None => Ok(()),
        }
    }

    /// The record, written whole.
    fn write_record(&mut self, outcome: &'static str, error: Option<String>) -> io::Result<()> {
        self.doc.ended_at = rfc3339(SystemTime::now());
        self.doc.outcome = outcome.into();
        self.doc.error = error;
        let mut text = serde_json::to_vec_pretty(&self.doc).map_err(io::Error::other)?;
        text.push(b'\n');
        match &mut self.sink {
            Sink::None => Ok(()),
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(&text)?;
                out.flush()
            }
            Sink::File(path) => atomic::write(path, &text),
        }
    }

    /// Whether the record keeps every test (it goes to `--json` or `--html`).
    pub fn keeps_tests(&self) -> bool {
        self.keeps
    }

    /// Drops test `index` (a `--find-max` step whose record is not kept); out of range does
    /// nothing.
    pub fn discard_test(&mut self, index: usize) {
        if index < self.doc.tests.len() {
            self.doc.tests.remove(index);
            if let Some(j) = self.journal.as_mut() {
                let written = j.discard(index);
                self.journaled(written);
            }
        }
    }

    /// Sets the `--find-max` block (replaced after every step, so an interrupted search keeps
    /// the steps it measured).
    pub fn set_find_max(&mut self, find_max: document::FindMaxRecord) {
        self.doc.find_max = Some(find_max);
        self.journal_head();
    }

    /// `--sentinel`: the primary's discovery and switches; the record's target becomes the
    /// primary found at the start.
    pub fn set_sentinel(&mut self, s: failover::SentinelRecord, host: String, port: u16) {
        self.doc.target.host = Some(host);
        self.doc.target.port = Some(port);
        self.doc.sentinel = Some(s);
        self.journal_head();
    }

    /// A mode's run-wide block (a `--fuzz` run's), into the journal's head too: a run killed
    /// before its record is written keeps the whole block.
    pub fn set_block<B: block::Block>(&mut self, b: &B) {
        self.doc.blocks.put(b);
        self.journal_head();
    }

    /// `--check-counters`: one INCR test's lost-writes figures.
    pub fn add_counters(&mut self, c: failover::CounterRecord) {
        self.doc.counters.push(c);
        self.journal_head();
    }

    /// memtier's `--data-verify`: what reading the keys back found.
    pub fn set_verify(&mut self, v: shape::VerifyRecord) {
        self.doc.verify = Some(v);
        self.journal_head();
    }

    /// The document so far.
    pub fn document(&self) -> &Document {
        &self.doc
    }
}

fn target_record(plan: &RunPlan) -> document::TargetRecord {
    let (transport, host, port, socket) = match &plan.endpoint {
        Endpoint::Tcp { host, port } => ("tcp", Some(host.clone()), Some(*port), None),
        Endpoint::Unix(p) => ("unix", None, None, Some(p.display().to_string())),
    };
    document::TargetRecord {
        transport: transport.into(),
        host,
        port,
        socket,
        tls: plan.tls.is_some(),
        cluster: plan.cluster,
        nodes: Vec::new(),
    }
}

fn options(plan: &RunPlan) -> document::Options {
    let load = &plan.load;
    let (requests, duration_s) = match load.stop {
        Stop::Requests(n) => (Some(n), None),
        Stop::After(d) => (None, Some(d.as_secs_f64())),
    };
    document::Options {
        clients: load.clients,
        threads: load.workers,
        pipeline: load.pipeline,
        data_size: plan.data_size,
        requests,
        duration_s,
        warmup_s: load.warmup.as_secs_f64(),
        keyspace: load.keyspace,
        sequential: load.sequential,
        rps: load.rps,
        keepalive: load.keepalive,
        connections: conn::of(plan),
        resp3: plan.prefix.commands.contains(&"HELLO 3"),
        dbnum_select: plan.prefix.commands.contains(&"SELECT"),
        continue_on_error: load.on_error == crate::engine::ErrorPolicy::Count,
        tracking: plan.tracking,
        tls: plan.tls.is_some(),
        cluster: plan.cluster,
        seed: load.seed,
        precision: plan.precision,
        loop_forever: plan.loop_forever,
        server_stats: plan.server_stats,
        workload: workload::of(plan),
    }
}

#[cfg(test)]
mod tests_fixtures;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Outcome, TestResult};
    use crate::workload::template::parse_custom_command;

    /// A recorder for `argv`, after two tests ("SET", then "GET") have ended.
    fn after_two_tests(argv: &[&str]) -> Document {
        let args = match crate::cli::parse(argv.iter().map(Into::into)).unwrap() {
            crate::cli::Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        let plan = RunPlan::new(&args, None).unwrap();
        let mut rec = RunRecord::open(&plan, &["respbench".into()]).unwrap();
        let line: Vec<Vec<u8>> = vec![b"set".to_vec(), b"k".to_vec(), b"v".to_vec()];
        let items = parse_custom_command(&line, None, 3, &mut Default::default()).unwrap();
        let template = Template::encode(&items, false);
        for title in ["SET", "GET"] {
            let watch = rec.begin_test();
            let mut r = TestResult::empty(title, None, Outcome::Completed);
            r.latency.record(1_000);
            r.latency_uncorrected.record(1_000);
            r.completed = 1;
            rec.end_test(watch, &template, &r, TestExtras::default());
        }
        rec.document().clone()
    }

    #[test]
    fn a_record_that_goes_nowhere_keeps_only_the_latest_test_without_histograms() {
        let doc = after_two_tests(&["-n", "1"]);
        assert_eq!(
            doc.tests.len(),
            1,
            "a plain (or -l) run must not pile up records"
        );
        assert_eq!(doc.tests[0].name, "GET");
        assert!(doc.tests[0].histograms.corrected.is_empty());
    }

    #[test]
    fn a_journal_that_could_not_be_written_goes_when_the_record_is_written() {
        let dir = std::env::temp_dir().join(format!("respbench-jfail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let journal = dir.join("run.partial");
        let _ = std::fs::remove_file(&journal);
        let j = journal.to_str().unwrap();
        let argv = ["-n", "1", "--json", "-", "--journal", j];
        let args = match crate::cli::parse(argv.iter().map(Into::into)).unwrap() {
            crate::cli::Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        let plan = RunPlan::new(&args, None).unwrap();
        let mut rec = RunRecord::open(&plan, &["respbench".into()]).unwrap();
        assert!(journal.exists());
        // A write that failed (a full disk): the run goes on without the journal.
        rec.journaled(Err(io::Error::other("No space left on device")));
        assert!(!rec.journaling());
        assert!(
            journal.exists(),
            "what it holds so far still reads until the record is there"
        );
        rec.sink = Sink::None;
        rec.finish("completed", None).unwrap();
        assert!(
            !journal.exists(),
            "no truncated journal left to stop the next run with the same path"
        );
        RunRecord::open(&plan, &["respbench".into()]).expect("the next run starts");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_written_record_keeps_every_test_with_its_histograms() {
        let doc = after_two_tests(&["-n", "1", "--json", "-"]);
        assert_eq!(doc.tests.len(), 2);
        assert!(doc.tests.iter().all(|t| !t.histograms.corrected.is_empty()));
    }
}
