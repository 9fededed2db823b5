//! Reading results files into one model, whatever tool wrote them.
//!
//! Owns: recognising a file by its content (never its name), and the [`Input`] model the compare
//! table and the HTML report read. Must not: compare, print or decide exit codes; a file that
//! cannot be read becomes one [`InputError`] line naming it.
//!
//! Recognised: a respbench record (`"schema": "respbench/1"`), memtier_benchmark's
//! `--json-out-file` (an object with `"ALL STATS"`), and the `--csv` output of valkey-benchmark,
//! redis-benchmark and respbench (a first line starting `"test","rps"`, or redis-benchmark's
//! older `"TEST","rps"` lines without a header). Latencies are kept in
//! microseconds, whatever the file's unit.

mod csv;
pub mod facts;
mod peer_json;
pub mod peer_view;
mod respbench;
pub mod spectrum;

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::record::block::{Blocks, RUN, TEST};
use crate::record::shape::VerifyRecord;

/// A file that cannot be used: printed as `respbench: <message>`, exit code 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which tool wrote a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// respbench's `--json` record.
    Respbench,
    /// `--csv` of valkey-benchmark, redis-benchmark or respbench.
    BenchmarkCsv,
    /// memtier_benchmark `--json-out-file`.
    Memtier,
}

/// One side of a comparison: one file, or several files that are repetitions of the same run.
#[derive(Clone, Debug)]
pub struct Input {
    /// How the side is named in tables and charts.
    pub label: String,
    pub files: Vec<String>,
    /// The format of the first file (a side may mix formats; the figures are the same kind).
    pub format: Format,
    /// The server that was measured, where the file says (`valkey 9.1.2`).
    pub server: Option<String>,
    /// The circumstances of the figures (`facts`), where the files say; a fact whose value
    /// differs between the side's own files shows every value (`50 | 100`).
    pub facts: Vec<facts::Fact>,
    /// In first-seen order; each with one sample per repetition.
    pub tests: Vec<Test>,
    /// A `--find-max` search (the first file's that has one): the latency-vs-throughput curve.
    pub find_max: Option<Curve>,
    /// Why some figures are not a whole run's (`b.json: the run failed: …`, `b.json: test SET
    /// was aborted …`), from respbench records' outcomes: `compare` warns and its gate fails,
    /// the report shows them beside the run.
    pub problems: Vec<String>,
    /// Connection storm and memory per key figures (respbench records only).
    pub costs: Costs,
}

/// A `--find-max` search's steps, for the latency-vs-throughput chart (respbench records only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curve {
    /// The SLO expression as given.
    pub slo: String,
    pub answer_rps: Option<f64>,
    /// How the search ended (`converged`, `window-limit`, `stopped`, ...), as the record says: the
    /// answer's caveat.
    pub end: String,
    /// What held back the failing step above the answer, when it fell behind.
    pub limit: Option<String>,
    /// With `too-noisy`: the rate, at least twice the failing one, at which the SLO broke by no
    /// more (the machine's stalls, not the load, set the boundary).
    pub no_growth_rps: Option<u64>,
    /// In the order the steps ran.
    pub points: Vec<CurvePoint>,
}

/// One step: what it achieved and its corrected latencies (µs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CurvePoint {
    pub offered_rps: u64,
    pub achieved_rps: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub met: bool,
    /// Fell below 90% of its offered rate (so it did not count as meeting the SLO).
    pub saturated: bool,
}

/// One test of one side.
#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    /// One per repetition (a file, or a repeated entry of a respbench record).
    pub samples: Vec<Sample>,
}

/// One repetition of one test: the headline figures, latencies in microseconds. `None` where
/// the file does not have the figure (memtier without histogram has no p95).
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// What limited the repetition (a respbench record's `verdict.kind`: `client-bound`, …).
    pub limited_by: Option<String>,
    pub rps: f64,
    pub avg: Option<f64>,
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    /// What the HTML report charts; only files that carry it (respbench records, memtier's
    /// per-second series).
    pub detail: Option<Box<Detail>>,
    /// A command mix (respbench `--ratio`/`--command`): each command's own figures, in the
    /// mix's order; empty for a test of one command and for files that do not say.
    pub mix: Vec<MixCommand>,
    /// A respbench record's same requests timed from the write (memtier's meaning; the
    /// figures above are corrected): what a comparison with memtier's file lines up
    /// (`peer_view`). `None` for other files.
    pub sent: Option<Box<Sample>>,
}

/// One command of a mix within one repetition of a test: timed on its own replies, so its
/// latencies are its own while the test's are every command's together.
#[derive(Clone, Debug, Default)]
pub struct MixCommand {
    /// As the report names it (`GET`).
    pub name: String,
    pub completed: u64,
    /// Error replies.
    pub failed: u64,
    /// Its rps and latencies (µs), as a test's (without `detail` or `mix`): so the compare
    /// table can treat a command as a test.
    pub figures: Sample,
    /// p99.9 (µs), which the HTML report's per-command table shows.
    pub p99_9: Option<f64>,
    /// Its figures from the write (see [`Sample::sent`]); absent in records of earlier builds.
    pub sent: Option<Sample>,
}

/// The series behind the HTML report's charts.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    /// Per second of the measured phase.
    pub timeline: Vec<SecondRow>,
    /// `(quantile, latency µs)` points from the corrected histogram, ascending.
    pub spectrum_corrected: Vec<(f64, f64)>,
    pub spectrum_uncorrected: Vec<(f64, f64)>,
    /// Error replies over the test.
    pub errors: u64,
    /// Cluster redirects by kind over the test.
    pub redirects: Vec<(String, u64)>,
    /// Per watched server.
    pub servers: Vec<ServerSeries>,
    /// Requests lost without a reply, by kind (`connection reset`, `timeout`, ...), per second:
    /// `(second, kind, count)`, only where non-zero. They are in `SecondRow::failed` too, but
    /// the report draws them apart from error replies (they are not replies).
    pub lost: Vec<(f64, String, u64)>,
    /// The record's outages (respbench records only), as the text report lists them.
    pub outages: Vec<crate::record::timeline::OutageRecord>,
    /// Cluster nodes whose connections failed (`-e`): `(address, from s, to s, requests lost)`,
    /// `to` being the end of the test when its slots were not served again.
    pub node_outages: Vec<(String, f64, f64, u64)>,
    /// Cluster failovers: `(seconds from the start, node)` when a node's slots were served
    /// again after its connections failed (another node took them over).
    pub failovers: Vec<(f64, String)>,
    /// Sentinel switches during the test: `(seconds from its start, "from → to")`.
    pub switches: Vec<(f64, String)>,
    /// The record's verdict reason (`limited by` in words), empty when the file has none.
    pub verdict_reason: String,
    /// The machine's load over the test (a respbench record's `machine`), which the verdict
    /// was judged on.
    pub machine: Option<crate::record::document::MachineRecord>,
    /// p99.9 (µs) over the test, where the file has it.
    pub p99_9: Option<f64>,
    /// `(start seconds, completed)` per 100 ms slot, when the record has every second's slots
    /// (a short test): its throughput is drawn at 0.1 s. Empty otherwise.
    pub slots: Vec<(f64, u64)>,
    /// `(start seconds, max µs)` per 100 ms slot that completed something, with `slots`: a
    /// short test's latency at 0.1 s (records of earlier builds have none).
    pub slot_max: Vec<(f64, f64)>,
    /// Where the average latency went (a respbench record's `latency_split`).
    pub latency_split: Option<crate::record::document::LatencySplit>,
    /// A `--pubsub`/`--stream` test's delivery block (a respbench record's `delivery`).
    pub delivery: Option<crate::record::delivery::DeliveryRecord>,
}

/// One second of a test's timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SecondRow {
    pub second: f64,
    /// How much of the second the row covers (1, but less for a test's last, cut-short
    /// second): rates are counts over it, so a test does not seem to collapse at its end.
    pub span: f64,
    pub completed: u64,
    pub failed: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    /// The client's delay sampled in that second (avg, p99, µs): replies waiting in the kernel
    /// for respbench; `None` where not measured.
    pub client_delay: Option<(f64, f64)>,
    /// `-e`: attempts to reopen a failed connection in that second, and those that connected.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// Cluster mode: MOVED and ASK redirects in that second.
    pub moved: u64,
    /// Client-side caching invalidations received in that second (`--enable-tracking`).
    pub invalidations: u64,
}

/// One server's figures per interval during a test.
#[derive(Clone, Debug, Default)]
pub struct ServerSeries {
    pub address: String,
    /// `(t seconds, cpu % of one core, used_memory bytes, used_memory_rss bytes)`.
    pub points: Vec<ServerPoint>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerPoint {
    pub t: f64,
    pub cpu_pct: f64,
    pub main_thread_cpu_pct: Option<f64>,
    pub used_memory: u64,
    pub used_memory_rss: u64,
}

/// What one file holds: its tests in order, repeated names being repetitions.
#[derive(Clone, Debug)]
pub struct FileRun {
    pub format: Format,
    pub server: Option<String>,
    /// See [`Input::facts`] (respbench records only).
    pub facts: Vec<facts::Fact>,
    pub tests: Vec<(String, Sample)>,
    /// A `--find-max` search, when the file is a respbench record of one.
    pub find_max: Option<Curve>,
    /// A respbench record's run or tests that did not complete (see [`Input::problems`]).
    pub problems: Vec<String>,
    /// See [`Input::costs`].
    pub costs: Costs,
}

impl FileRun {
    /// A file that holds its tests' figures and nothing else (`--csv`, memtier's JSON): no
    /// server, facts, search, outcome or costs.
    fn of_tests(format: Format, tests: Vec<(String, Sample)>) -> FileRun {
        FileRun {
            format,
            server: None,
            facts: Vec::new(),
            tests,
            find_max: None,
            problems: Vec::new(),
            costs: Default::default(),
        }
    }
}

/// Reads and recognises one file.
pub fn load_file(path: &Path) -> Result<FileRun, InputError> {
    let shown = path.display();
    // A run's journal (killed or still going) reads as the record it holds, line by line: a
    // long run's journal may be larger than the cap a file is read whole with.
    if let Some(record) = crate::record::journal::read_file(path) {
        return record
            .and_then(|r| checked(from_json(r)?))
            .map_err(|e| InputError(format!("{shown}: {e}")));
    }
    let bytes =
        crate::record::input_file::read(path).map_err(|e| InputError(e.message().into()))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError(format!(
            "{shown}: an empty file (a run that was killed before writing its record?)"
        )));
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| InputError(format!("{shown}: not a results file (not UTF-8 text)")))?;
    parse_at(text, Some(path)).map_err(|e| InputError(format!("{shown}: {e}")))
}

/// Recognises `text` by its content and reads it; figures that cannot be (a negative rate or
/// latency) are refused, as NaN and infinity are by the readers.
pub fn parse(text: &str) -> Result<FileRun, String> {
    parse_at(text, None)
}

/// [`parse`], for the file at `path` when there is one (a journal's run may still be going).
fn parse_at(text: &str, path: Option<&Path>) -> Result<FileRun, String> {
    // A run's journal (killed or still going) reads as the record it holds.
    let run = match crate::record::journal::recognise(text, path) {
        Some(record) => from_json(record?)?,
        None => recognise(text)?,
    };
    checked(run)
}

/// `run`, when none of its figures is negative.
fn checked(run: FileRun) -> Result<FileRun, String> {
    for (name, sample) in &run.tests {
        not_negative(sample).map_err(|e| format!("test {name}: {e}"))?;
        for m in &sample.mix {
            not_negative(&m.figures).map_err(|e| format!("test {name} / {}: {e}", m.name))?;
        }
    }
    Ok(run)
}

/// `Ok` when no figure of `s` is negative (a rate or a latency below zero describes nothing,
/// and would read as "-200% better").
fn not_negative(s: &Sample) -> Result<(), String> {
    let figures = [
        ("rps", Some(s.rps)),
        ("avg", s.avg),
        ("min", s.min),
        ("p50", s.p50),
        ("p95", s.p95),
        ("p99", s.p99),
        ("max", s.max),
    ];
    for (what, v) in figures {
        if let Some(v) = v.filter(|v| *v < 0.0 || !v.is_finite()) {
            return Err(format!("{what} is {v}, not a figure a run can have"));
        }
    }
    Ok(())
}

/// Recognises `text` by its content and reads it.
fn recognise(text: &str) -> Result<FileRun, String> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        // Its shape first, without building it: JSON that is not a results file is refused for
        // the cost of its bytes (`record::input_file::json_shape`).
        let shape = crate::record::input_file::json_shape(trimmed.as_bytes())
            .map_err(|e| format!("not valid JSON ({e}); expected a respbench --json record or memtier_benchmark --json-out-file output"))?;
        if shape == crate::record::input_file::JsonShape::Other {
            return Err(NEITHER.into());
        }
        let value: serde_json::Value = serde_json::from_str(trimmed)
            .map_err(|e| format!("not valid JSON ({e}); expected a respbench --json record or memtier_benchmark --json-out-file output"))?;
        return from_json(value);
    }
    if trimmed.starts_with("\"test\",\"rps\"") {
        return csv::read(trimmed);
    }
    if csv::looks_headerless(trimmed) {
        return csv::read_headerless(trimmed);
    }
    Err("not a results file: expected a respbench --json record, valkey-benchmark/redis-benchmark --csv output (header \"test\",\"rps\",...) or memtier_benchmark --json-out-file output".into())
}

/// A respbench record already in the record's own types (the one a run has just built, for
/// `--html`): read as the same record from a file would be, without a JSON tree in between.
pub fn from_document(doc: crate::record::Document) -> Result<FileRun, String> {
    respbench::from_document(doc)
}

/// Reads a JSON document: a respbench record or memtier output.
pub fn from_json(value: serde_json::Value) -> Result<FileRun, String> {
    if let Some(schema) = value.get("schema").and_then(|s| s.as_str()) {
        let schema = schema.to_string();
        return respbench::read(value, &schema);
    }
    if peer_json::results(&value).is_some() {
        return peer_json::read(&value);
    }
    Err(NEITHER.into())
}

/// Why a JSON file is refused when it is neither kind of results file.
const NEITHER: &str = "a JSON file that is neither a respbench record (\"schema\": \"respbench/1\") nor memtier_benchmark --json-out-file output (\"ALL STATS\")";

/// Reads a side: one or more files whose same-named tests are repetitions of each other.
pub fn load_side(paths: &[String]) -> Result<Input, InputError> {
    let runs = paths
        .iter()
        .map(|p| load_file(Path::new(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let label = paths.first().map(|p| label_of(p)).unwrap_or_default();
    input_of(label, paths.to_vec(), runs).ok_or_else(|| InputError("an empty list of files".into()))
}

/// One side from the runs of its files (`None` without any): same-named tests are
/// repetitions, in the order they come.
pub fn input_of(label: String, files: Vec<String>, runs: Vec<FileRun>) -> Option<Input> {
    let first = runs.first()?;
    let mut input = Input {
        label,
        files,
        format: first.format,
        server: first.server.clone(),
        facts: first.facts.clone(),
        tests: Vec::new(),
        find_max: None,
        problems: Vec::new(),
        costs: Default::default(),
    };
    // Each name's place in `input.tests`: a lookup per row, so a file of many tests reads in
    // linear time (a search of the list per row was quadratic: 64k rows took minutes).
    let mut index: HashMap<String, usize> = HashMap::new();
    for (k, run) in runs.into_iter().enumerate() {
        let file = input.files.get(k).cloned().unwrap_or_default();
        input
            .problems
            .extend(run.problems.iter().map(|p| format!("{file}: {p}")));
        if input.find_max.is_none() {
            input.find_max = run.find_max;
        }
        input.costs.absorb(run.costs);
        for (name, value) in &run.facts {
            match input.facts.iter_mut().find(|f| f.0 == *name) {
                Some(f) if !f.1.split(" | ").any(|v| v == value) => {
                    f.1 = format!("{} | {value}", f.1)
                }
                Some(_) => {}
                None => input.facts.push((name, value.clone())),
            }
        }
        for (name, sample) in run.tests {
            match index.get(&name) {
                Some(&i) => input.tests[i].samples.push(sample),
                None => {
                    index.insert(name.clone(), input.tests.len());
                    input.tests.push(Test {
                        name,
                        samples: vec![sample],
                    });
                }
            }
        }
    }
    Some(input)
}

/// A file's name without directory and extension: what people name their runs by.
fn label_of(path: &str) -> String {
    let p = Path::new(path);
    p.file_stem()
        .or(p.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// Makes labels unique (`run`, `run#2`) so columns and chart legends can be told apart.
pub fn dedup_labels(inputs: &mut [Input]) {
    for i in 1..inputs.len() {
        let taken = |l: &str, inputs: &[Input]| inputs[..i].iter().any(|x| x.label == l);
        if taken(&inputs[i].label, inputs) {
            let base = inputs[i].label.clone();
            let mut k = 2;
            while taken(&format!("{base}#{k}"), inputs) {
                k += 1;
            }
            inputs[i].label = format!("{base}#{k}");
        }
    }
}

/// A side's storm and memory figures.
#[derive(Clone, Debug, Default)]
pub struct Costs {
    /// Each file's run-wide mode blocks (a connection storm's, …: drawn by their kind,
    /// `costs::block_tables`), in file order: a side given as comma-separated runs
    /// (`a1.json,a2.json`) has one per run (such modes refuse `--repeat`).
    pub runs: Vec<Blocks<RUN>>,
    /// Each test's mode blocks that draw a table (memory per key's), by test name, in record
    /// order (the first file's that has them).
    pub tests: Vec<(String, Blocks<TEST>)>,
    /// A `respbench replay` record's block (the HTML report's replay section).
    pub replay: Option<crate::record::replay::ReplayRecord>,
    /// Each file's memtier `--data-verify`/`--verify-only` result, in file order.
    pub verify: Vec<VerifyRecord>,
}

impl Costs {
    /// Adds a later file's figures: its run-wide blocks (a storm) as another run, a test's
    /// blocks (memory) and replay where the side has none yet.
    pub fn absorb(&mut self, other: Costs) {
        self.runs.extend(other.runs);
        self.verify.extend(other.verify);
        if self.replay.is_none() {
            self.replay = other.replay;
        }
        for (name, b) in other.tests {
            if !self.tests.iter().any(|(n, _)| *n == name) {
                self.tests.push((name, b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_content_is_refused_with_what_was_expected() {
        let e = parse("hello\n").unwrap_err();
        assert!(e.contains("expected a respbench --json record"), "{e}");
        let e = parse("{\"a\": 1}").unwrap_err();
        assert!(e.contains("neither a respbench record"), "{e}");
        let e = parse("{\"schema\": ").unwrap_err();
        assert!(e.starts_with("not valid JSON"), "{e}");
    }

    #[test]
    fn negative_figures_are_refused() {
        let e = parse("\"test\",\"rps\",\"p99_latency_ms\"\n\"SET\",\"-200\",\"1\"\n").unwrap_err();
        assert_eq!(e, "test SET: rps is -200, not a figure a run can have");
        let e = parse("\"test\",\"rps\",\"p99_latency_ms\"\n\"SET\",\"200\",\"-1\"\n").unwrap_err();
        assert_eq!(e, "test SET: p99 is -1000, not a figure a run can have");
        let doc = serde_json::json!({"schema": "respbench/1", "tests": [{"name": "GET",
            "throughput_rps": 10.0, "latency_us": {"corrected": {"count": 1, "max": -3.0}}}]});
        let e = parse(&doc.to_string()).unwrap_err();
        assert_eq!(e, "test GET: max is -3, not a figure a run can have");
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let e = load_file(Path::new("/nonexistent/run.json")).unwrap_err();
        assert!(
            e.0.starts_with("cannot read /nonexistent/run.json: "),
            "{e}"
        );
    }

    #[test]
    fn labels_are_made_unique() {
        let side = |l: &str| crate::compare::fixtures::input(l, Format::Respbench, vec![]);
        let mut v = vec![side("run"), side("run"), side("x"), side("run")];
        dedup_labels(&mut v);
        let labels: Vec<_> = v.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["run", "run#2", "x", "run#3"]);
    }
}
