//! Reading a journal back as a record: the last head, the tests that ended, and the test under
//! way rebuilt from its seconds by the record's own builder (`record::build`), as the record that
//! Ctrl-C at its last full second would have held. The run's `outcome` says `killed` (or
//! `running`, while the run that writes it still holds its lock).
//!
//! Why line by line, adding the seconds up as they come: a journal grows by tens of kilobytes a
//! second (each second's exact histograms), so a day's run leaves gigabytes, far past the cap a
//! results file is read whole with (`record::input_file`). The reader holds one line at a time
//! (each within that cap), the finished tests' records, and of the test under way its sums and,
//! per second, what its record's timeline keeps (`record::timeline::SecondRows`, about a
//! kilobyte): its memory follows the record's size, not the journal's.

use std::io::{BufRead, BufReader, Read as _};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::modes::PartSums;
use super::{BeginLine, FORMATS, Line, SecondLine};
use crate::machine::Load;
use crate::metrics::ThreadCpuUsage;
use crate::metrics::{
    ClusterStats, CommandResult, ErrorCounts, FAILURE_KINDS, LatencyHistogram, NodeStats, Outcome,
    PushCounts, Role, Signal, TestResult,
};
use crate::record::block::{self, Blocks, Recovered, RecoveredSecond};
use crate::record::build::{self, TestExtras};
use crate::record::document::{Document, TestRecord};
use crate::record::hdr;
use crate::record::input_file;
use crate::record::timeline::SecondRows;
use crate::timestamp::{parse_time, rfc3339, rfc3339_micros};
use crate::watch::Watched;

/// `Some` when `text` is a journal (its first line is a journal head): the record it holds, as
/// the JSON value of a record (for `record::Document::read`, the one reader), or why it cannot be
/// read. `path`: the file it came from, to tell whether its run still goes on.
pub fn recognise(text: &str, path: Option<&Path>) -> Option<Result<Value, String>> {
    read_from(text.as_bytes(), path, u64::MAX)
}

/// [`recognise`] for the file at `path`, read a line at a time, each line within the input cap
/// (`record::input_file`, which a journal as a whole may exceed). `None` when it is not a
/// journal, or cannot be opened or its cap read: the caller reads it whole then, and says why.
pub fn read_file(path: &Path) -> Option<Result<Value, String>> {
    let cap = input_file::max_input().ok()?;
    let file = std::fs::File::open(path).ok()?;
    read_from(BufReader::new(file), Some(path), cap)
}

/// The journal read from `from`, its lines at most `cap` bytes each.
pub(super) fn read_from(
    from: impl BufRead,
    path: Option<&Path>,
    cap: u64,
) -> Option<Result<Value, String>> {
    let mut lines = Lines {
        from,
        line: Vec::new(),
        number: 0,
        cap,
    };
    let first = lines.next()?.ok()?;
    // Looked at before it is built: a first line that is 100 MB of other JSON costs its bytes,
    // not a tree of 50 times their size (`input_file::json_shape`).
    if input_file::json_shape(first) != Ok(input_file::JsonShape::Journal) {
        return None;
    }
    let head: Value = serde_json::from_slice(first).ok()?;
    let head_line = serde_json::from_value::<Line>(head.clone());
    let name = head.get("journal")?.as_str()?;
    if head.get("kind")?.as_str()? != "head" {
        return None;
    }
    let Some(format) = FORMATS.iter().position(|f| *f == name) else {
        return Some(Err(format!(
            "a {name} journal; this respbench reads {}",
            FORMATS.join(" and ")
        )));
    };
    let running = path.is_some_and(locked);
    let mut reader = Reader {
        format: format as u32 + 1,
        ..Reader::default()
    };
    let read = head_line
        .map_err(|e| format!("journal line 1: {e}"))
        .and_then(|line| {
            reader
                .line(line)
                .map_err(|e| format!("journal line 1: {e}"))
        })
        .and_then(|()| reader.all(&mut lines))
        .and_then(|()| reader.finish(running))
        .and_then(|d| serde_json::to_value(d).map_err(|e| e.to_string()));
    Some(read)
}

/// Whether another process holds the journal's lock (its run goes on).
pub(super) fn locked(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    // SAFETY: flock on a descriptor `f` owns and keeps open; no memory is involved. The shared
    // lock, if taken, goes with `f`.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) != 0 }
}

/// A journal's lines, one at a time in one buffer.
struct Lines<R> {
    from: R,
    line: Vec<u8>,
    /// The line's number, from 1.
    number: usize,
    cap: u64,
}

impl<R: BufRead> Lines<R> {
    /// The next line without its end, `None` after the last; an error for a line longer than
    /// the cap or one that could not be read.
    fn next(&mut self) -> Option<Result<&[u8], String>> {
        self.line.clear();
        self.number += 1;
        let n = self.number;
        let limit = self.cap.saturating_add(1);
        match (&mut self.from)
            .take(limit)
            .read_until(b'\n', &mut self.line)
        {
            Ok(0) => None,
            Ok(_) if self.line.last() == Some(&b'\n') => {
                self.line.pop();
                Some(Ok(&self.line))
            }
            Ok(_) if self.line.len() as u64 > self.cap => Some(Err(format!(
                "journal line {n}: longer than {} (set {} to read longer lines)",
                input_file::size_text(self.cap),
                input_file::MAX_INPUT_ENV
            ))),
            Ok(_) => Some(Ok(&self.line)),
            Err(e) => Some(Err(format!("journal line {n}: {e}"))),
        }
    }

    /// Whether every line left is blank (a line that does not parse is then the last one, cut
    /// short by a power cut mid-write).
    fn rest_is_blank(&mut self) -> bool {
        while let Some(line) = self.next() {
            if !line.is_ok_and(|l| l.iter().all(u8::is_ascii_whitespace)) {
                return false;
            }
        }
        true
    }
}

/// What the journal says so far.
#[derive(Default)]
struct Reader {
    /// Its format's number (`respbench-journal/N`).
    format: u32,
    doc: Option<Document>,
    tests: Vec<TestRecord>,
    open: Option<Open>,
}

impl Reader {
    /// Reads every line. A last line cut short (a power cut mid-write) is ignored; a bad line
    /// before it is an error.
    fn all(&mut self, lines: &mut Lines<impl BufRead>) -> Result<(), String> {
        loop {
            let n = lines.number + 1;
            let parsed = match lines.next() {
                None => return Ok(()),
                Some(Err(e)) => return Err(e),
                Some(Ok(raw)) if raw.iter().all(u8::is_ascii_whitespace) => continue,
                Some(Ok(raw)) => serde_json::from_slice::<Line>(raw),
            };
            match parsed {
                Ok(line) => self
                    .line(line)
                    .map_err(|e| format!("journal line {n}: {e}"))?,
                Err(_) if lines.rest_is_blank() => return Ok(()),
                Err(e) => return Err(format!("journal line {n}: {e}")),
            }
        }
    }

    fn line(&mut self, line: Line) -> Result<(), String> {
        match line {
            Line::Head { document, .. } => {
                let mut d: Document =
                    serde_json::from_value(document).map_err(|e| e.to_string())?;
                d.tests.clear();
                self.doc = Some(d);
            }
            Line::Begin(begin) => self.open = Some(Open::new(*begin)),
            Line::Second(s) => {
                if let Some(o) = self.open.as_mut() {
                    // A replay's commands, named as it learns them.
                    if !s.mix.is_empty() {
                        o.begin.mix.clone_from(&s.mix);
                    }
                    o.add(&s, self.format)?;
                }
            }
            Line::Test { record } => {
                self.open = None;
                self.tests
                    .push(serde_json::from_value(record).map_err(|e| e.to_string())?);
            }
            Line::Discard { index } => {
                if index < self.tests.len() {
                    self.tests.remove(index);
                }
            }
        }
        Ok(())
    }

    /// The record the journal holds.
    fn finish(&mut self, running: bool) -> Result<Document, String> {
        let mut doc = self.doc.take().ok_or("a journal without its head line")?;
        let mut tests = std::mem::take(&mut self.tests);
        let mut ended = None;
        if let Some(mut o) = self.open.take().filter(|o| o.lines > 0) {
            ended = o.end();
            // A storm and a fuzz run are their block in the record (no test), as their finished
            // run writes it; a block the head has already (the mode ended) is the one kept.
            match o.run_head() {
                Some((kind, head)) => {
                    let block = kind.recover(&head, &o.recovered());
                    if let Some(tree) = block.filter(|_| !doc.blocks.contains(kind.key)) {
                        doc.blocks.set_tree(kind.key, tree);
                    }
                }
                None => tests.push(partial_test(o)),
            }
        }
        // Killed between tests: the run's end is the last test's.
        let ended = ended.or_else(|| {
            let last = tests.last()?;
            let start = parse_time(last.started_at.as_deref()?)?;
            Some(rfc3339(
                start + Duration::try_from_secs_f64(last.duration_s).ok()?,
            ))
        });
        doc.tests = tests;
        doc.outcome = if running { "running" } else { "killed" }.into();
        doc.error = None;
        if let Some(end) = ended {
            doc.ended_at = end;
        }
        // A search that was killed stopped there, as one stopped by Ctrl-C says.
        if let Some(fm) = doc
            .find_max
            .as_mut()
            .filter(|f| f.end == "running" && !running)
        {
            fm.end = "stopped".into();
        }
        Ok(doc)
    }
}

/// The test under way when the journal ends, its seconds added up as they are read.
struct Open {
    begin: BeginLine,
    /// Its `second` lines so far.
    lines: usize,
    /// Each second's row and slots, as the record's timeline keeps them.
    rows: SecondRows,
    completed: u64,
    /// All failed requests, and of those the error replies (the rest were lost, by kind).
    failed: u64,
    replies_failed: u64,
    lost: [u64; FAILURE_KINDS.len()],
    reconnect_attempts: u64,
    reconnects: u64,
    /// The seconds' coarse histograms added up (what a journal without exact parts gives).
    latency: LatencyHistogram,
    client_delay: LatencyHistogram,
    /// The exact parts' sums, while every second that completed requests has them.
    exact: Option<Exact>,
    /// Error replies by first word, from the exact parts, and how many they count.
    words: ErrorCounts,
    /// A mix's commands' sums by index (named by the `begin` line's mix when the test is
    /// rebuilt), while every second that measured something has them.
    mix: Option<Vec<CommandResult>>,
    /// The most commands a second that measured something had.
    mix_needed: usize,
    /// Cluster mode: the nodes' and redirects' sums.
    cluster: Option<ClusterStats>,
    /// Commands written, when any second says.
    issued: Option<u64>,
    /// What the workers' pushes gained; the reconnects the server refused, when any second
    /// says (a journal whose workers did not hand them over leaves them unknown).
    pushes: PushCounts,
    refusals: Option<u64>,
    /// A run-wide block's mode's (`--connect-storm`'s) sums beyond a test's, and a test's
    /// block's seconds (`--pubsub`/`--stream`'s: `Recovered::rows`), kept only for a test with
    /// a block of its own.
    parts: Option<PartSums>,
    block_rows: Option<Vec<RecoveredSecond>>,
    beside: Beside,
}

/// The seconds' full-precision histograms, added up.
struct Exact {
    corrected: LatencyHistogram,
    uncorrected: LatencyHistogram,
}

impl Open {
    fn new(begin: BeginLine) -> Self {
        let cluster = (!begin.nodes.is_empty()).then(|| ClusterStats {
            nodes: begin
                .nodes
                .iter()
                .map(|(address, role)| NodeStats {
                    address: address.clone(),
                    role: Some(if role == "primary" {
                        Role::Primary
                    } else {
                        Role::Replica
                    }),
                    ..NodeStats::new()
                })
                .collect(),
            ..ClusterStats::default()
        });
        // A run-wide block's mode's parts are its own (a storm's stages), not a mix's commands
        // (`modes::PartSums`).
        let run_block = begin.heads.iter().any(|(k, _)| k.at == block::RUN);
        let mix = (!run_block).then(Vec::new);
        let parts = run_block.then(PartSums::new);
        let test_block = begin.heads.iter().any(|(k, _)| k.at == block::TEST);
        let block_rows = test_block.then(Vec::new);
        Open {
            begin,
            lines: 0,
            rows: SecondRows::default(),
            completed: 0,
            failed: 0,
            replies_failed: 0,
            lost: [0; FAILURE_KINDS.len()],
            reconnect_attempts: 0,
            reconnects: 0,
            latency: LatencyHistogram::new(),
            client_delay: LatencyHistogram::new(),
            exact: Some(Exact {
                corrected: LatencyHistogram::new(),
                uncorrected: LatencyHistogram::new(),
            }),
            words: ErrorCounts::default(),
            mix,
            mix_needed: 0,
            cluster,
            issued: None,
            pushes: PushCounts::default(),
            refusals: None,
            parts,
            block_rows,
            beside: Beside::default(),
        }
    }

    /// When the test's last full second ended (wall clock), when its start is known.
    fn end(&self) -> Option<String> {
        let start = self.begin.started_at.as_deref().and_then(parse_time)?;
        Some(rfc3339(start + Duration::from_secs(self.lines as u64)))
    }

    /// Adds one `second` line (of a journal of format `format`).
    fn add(&mut self, line: &SecondLine, format: u32) -> Result<(), String> {
        let s = line.to_second()?;
        // A count that would wrap is a corrupt journal (as `merge` refuses one): checked here,
        // where the seconds are summed, so every later sum of these is within range too.
        let sum = |total: u64, n: u64, field: &str| {
            total.checked_add(n).ok_or_else(|| {
                format!(
                    "journal second {}: {field} {n} takes the test's total past 2^64 (a corrupt \
                     journal)",
                    line.second
                )
            })
        };
        sum(s.completed, s.failed, "completed + failed")?;
        self.lines += 1;
        self.rows.set(line.second, &s);
        self.completed = sum(self.completed, s.completed, "completed")?;
        self.failed = sum(self.failed, s.failed, "failed")?;
        sum(self.completed, self.failed, "completed + failed")?;
        let lost = s.lost.iter().fold(0u64, |a, b| a.saturating_add(*b));
        self.replies_failed += s.failed - lost.min(s.failed);
        for (a, b) in self.lost.iter_mut().zip(&s.lost) {
            *a = a.saturating_add(*b);
        }
        self.reconnect_attempts = self
            .reconnect_attempts
            .saturating_add(s.reconnect_attempts());
        self.reconnects = self.reconnects.saturating_add(s.reconnects());
        s.latency.add_to(&mut self.latency);
        s.client_delay.add_to(&mut self.client_delay);
        if let Some(n) = s.issued {
            self.issued = Some(sum(self.issued.unwrap_or(0), n, "issued")?);
        }
        self.pushes.merge(&s.pushes.unwrap_or_default());
        if let Some(n) = s.reconnect_refusals {
            *self.refusals.get_or_insert(0) += n;
        }
        let what = format!("journal second {}", line.second);
        self.add_exact(line, &what)?;
        self.add_mix(line, &what)?;
        self.add_cluster(line)?;
        if let Some(parts) = self.parts.as_mut() {
            parts.add(line)?;
        }
        if let Some(rows) = self.block_rows.as_mut() {
            rows.push(RecoveredSecond {
                second: line.second as u32,
                completed: line.completed,
                published: line.published,
                owed: line.owed,
                slowest_ns: line.slots.iter().map(|x| x[5]).max().unwrap_or(0),
            });
        }
        self.beside.add(line, format);
        Ok(())
    }

    /// The second's full-precision histograms and error words. A second that completed
    /// requests without them (a journal of a respbench before them) leaves the test with the
    /// coarse ones' sum and no uncorrected histogram.
    fn add_exact(&mut self, line: &SecondLine, what: &str) -> Result<(), String> {
        let Some(e) = &line.exact else {
            if line.completed > 0 {
                self.exact = None;
            }
            return Ok(());
        };
        for (word, n) in &e.errors {
            self.words.record_kind(word, *n);
        }
        if let Some(x) = self.exact.as_mut() {
            hdr::add_encoded(&mut x.corrected, &e.corrected, what)?;
            hdr::add_encoded(&mut x.uncorrected, &e.uncorrected, what)?;
        }
        Ok(())
    }

    /// A mix's commands (`--ratio`, a replay's): their sums by index, while every second that
    /// measured something has its full-precision part. A second's commands are the first of
    /// the mix (a replay's workers know only the commands they have sent so far); a test whose
    /// seconds name more than its mix has none (`partial_test`).
    fn add_mix(&mut self, line: &SecondLine, what: &str) -> Result<(), String> {
        let Some(mix) = self.mix.as_mut() else {
            return Ok(());
        };
        let Some(e) = &line.exact else {
            if line.completed + line.failed > 0 {
                self.mix = None;
            }
            return Ok(());
        };
        if line.completed + line.failed > 0 {
            self.mix_needed = self.mix_needed.max(e.commands.len());
        }
        if mix.len() < e.commands.len() {
            mix.resize_with(e.commands.len(), || CommandResult::new(""));
        }
        for (c, e) in mix.iter_mut().zip(&e.commands) {
            c.completed += e.completed;
            c.errors += e.errors;
            c.nils += e.nils;
            c.hits = c.hits.zip(e.hits).map(|(a, b)| a + b);
            hdr::add_encoded(&mut c.latency, &e.latency, what)?;
            if !e.uncorrected.is_empty() {
                hdr::add_encoded(&mut c.uncorrected, &e.uncorrected, what)?;
            }
            // A journal of an earlier build counted no bytes: none then, rather than a part.
            c.bytes = c
                .bytes
                .zip(e.bytes)
                .map(|((tx, rx), [t, r])| (tx + t, rx + r));
        }
        Ok(())
    }

    /// The mix's commands, named as the `begin` line (or the last second that named them)
    /// names them; none when the test has no mix, a second lacked its part, or a second that
    /// measured something had more commands than the mix names.
    fn commands(&mut self) -> Vec<CommandResult> {
        let names = &self.begin.mix;
        let Some(mut mix) = self
            .mix
            .take()
            .filter(|_| !names.is_empty() && self.mix_needed <= names.len())
        else {
            return Vec::new();
        };
        mix.resize_with(names.len(), || CommandResult::new(""));
        for (c, n) in mix.iter_mut().zip(names) {
            c.name.clone_from(n);
        }
        mix
    }

    /// Cluster mode: the second's redirects and each node's part (the nodes named as the
    /// `begin` line names them).
    fn add_cluster(&mut self, line: &SecondLine) -> Result<(), String> {
        let (Some(c), Some(e)) = (self.cluster.as_mut(), &line.exact) else {
            return Ok(());
        };
        let mut second = [0; 4];
        for (k, n) in e.redirects.iter().flatten().enumerate() {
            c.redirects[k] += n;
            second[k] += n;
        }
        if second.iter().any(|&n| n > 0) {
            if c.timeline.len() <= line.second {
                c.timeline.resize(line.second + 1, [0; 4]);
            }
            c.timeline[line.second] = second;
        }
        for (i, n) in e.nodes.iter().enumerate() {
            if c.nodes.len() <= i {
                c.nodes.resize_with(i + 1, NodeStats::new);
            }
            let node = &mut c.nodes[i];
            node.completed += n.completed;
            node.lost += n.lost;
            let what = format!("journal second {} node {i}", line.second);
            hdr::add_encoded(&mut node.latency, &n.latency, &what)?;
        }
        Ok(())
    }

    /// The corrected and uncorrected histograms of the test: the exact parts' sums when every
    /// second has them, else the coarse ones' sum and no uncorrected one.
    fn histograms(&mut self) -> (LatencyHistogram, LatencyHistogram) {
        match self.exact.take() {
            Some(e) => (e.corrected, e.uncorrected),
            None => (std::mem::take(&mut self.latency), LatencyHistogram::new()),
        }
    }
}

/// The record of the test under way, from its full seconds, as an interrupted test's.
fn partial_test(mut o: Open) -> TestRecord {
    let b = &o.begin;
    let mut r = TestResult::empty(
        &b.name,
        b.target_rps,
        Outcome::Interrupted(Signal::Interrupt),
    );
    r.completed = o.completed;
    r.reconnect_attempts = o.reconnect_attempts;
    r.reconnects = o.reconnects;
    r.pushes = o.pushes;
    r.client_delay = std::mem::take(&mut o.client_delay);
    (r.latency, r.latency_uncorrected) = o.histograms();
    for (kind, n) in FAILURE_KINDS.iter().zip(o.lost) {
        if n > 0 {
            r.errors.record_kind(kind, n);
        }
    }
    // By first word when every second that had some says which, else together (a journal of
    // a respbench before them).
    if o.words.total() == o.replies_failed {
        r.errors.merge(&o.words);
    } else if o.replies_failed > 0 {
        r.errors.record_kind("error replies", o.replies_failed);
    }
    r.commands = o.commands();
    r.cluster = o.cluster.take();
    r.elapsed = Duration::from_secs(o.rows.len() as u64);
    let b = &o.begin;
    let start = b.started_at.as_deref().and_then(parse_time);
    r.started_at = start;
    // The commands written up to the last full second, and the unanswered ones as a Ctrl-C
    // there would count them: `completed + failed + unanswered = issued`. A second's count may
    // hold a few commands written just after its end, never fewer than its replies
    // (`metrics::Second`).
    let (mut issued, mut refusals) = (o.issued, o.refusals);
    if let Some(n) = issued {
        r.unanswered = n.saturating_sub(r.completed + r.errors.total());
    }
    // The test's own blocks (a delivery test's), and its requests as its finished record
    // counts them where the block says (`Block::requests`: a delivery test's deliveries owed,
    // those not delivered unanswered).
    let mut blocks = Blocks::default();
    let sums = Recovered {
        seconds: o.lines,
        completed: o.completed,
        failed: o.failed,
        issued: o.issued,
        rows: o.block_rows.take().unwrap_or_default(),
        ..Recovered::default()
    };
    for (kind, head) in b.heads.iter().filter(|(k, _)| k.at == block::TEST) {
        let Some(tree) = kind.recover(head, &sums) else {
            continue;
        };
        if let Some((owed, unanswered)) = kind.requests(&tree) {
            (issued, r.unanswered, refusals) = (Some(owed), unanswered, Some(0));
        }
        blocks.set_tree(kind.key, tree);
    }
    let threads = o.beside.threads();
    let extras = TestExtras {
        rows: Some(&o.rows),
        issued,
        repetition: b.repetition,
        // Every worker's, as a finished test has them (none for a mode whose threads are not
        // measured: its record's list is empty too).
        client_threads: Some(threads.as_slice()),
        machine: o.beside.machine,
        blocks: Some(&blocks),
        ..TestExtras::default()
    };
    // A mix's commands are its own, as a finished test names them (`RunRecord::end_test`).
    let commands = match r.commands.is_empty() {
        true => b.commands.clone(),
        false => b.mix.iter().map(|n| n.to_ascii_lowercase()).collect(),
    };
    let mut rec = build::test_record(&r, commands, &o.beside.watched, extras);
    rec.started_at = start.map(rfc3339_micros);
    // Unknown in a journal whose workers did not hand refusals over (an older one's).
    rec.requests.reconnect_refusals = refusals;
    rec
}

impl Open {
    /// The head of a mode whose block is the run's (a `--connect-storm`'s), with its kind.
    fn run_head(&self) -> Option<(&'static block::BlockKind, block::Tree)> {
        let mut heads = self.begin.heads.iter();
        let (kind, head) = heads.find(|(k, _)| k.at == block::RUN)?;
        Some((kind, head.clone()))
    }

    /// A killed run-wide block's sums (`modes::PartSums`), the watched servers' blocks from
    /// their samples.
    fn recovered(&mut self) -> Recovered {
        let server = self
            .beside
            .watched
            .iter()
            .map(|w| crate::record::server::server_record(w, &[]))
            .collect();
        let sums = self.parts.take().unwrap_or_else(PartSums::new);
        let coarse = std::mem::take(&mut self.latency);
        let total = match self.exact.take().filter(|_| sums.exact()) {
            Some(e) => e.corrected,
            None => coarse,
        };
        let (parts, part_errors) = sums.into_parts();
        let lost = FAILURE_KINDS.iter().zip(self.lost);
        Recovered {
            seconds: self.lines,
            completed: self.completed,
            failed: self.failed,
            issued: self.issued,
            errors: self.words.iter().map(|(w, n)| (w.to_string(), n)).collect(),
            lost: lost.map(|(k, n)| (*k, n)).collect(),
            total,
            parts,
            part_errors,
            server,
            rows: Vec::new(),
        }
    }
}

/// What the test's record takes from beside the engine, as its seconds left it: each worker's
/// CPU and the machine's load up to the last second (cumulative figures: the last one counts),
/// and each watched server's samples, in the order taken, and its counters as last read.
#[derive(Default)]
struct Beside {
    threads: Vec<super::ThreadLine>,
    machine: Option<Load>,
    watched: Vec<Watched>,
}

impl Beside {
    fn add(&mut self, line: &SecondLine, format: u32) {
        if !line.threads.is_empty() {
            self.threads.clone_from(&line.threads);
        }
        if line.machine.is_some() {
            self.machine = line.machine;
        }
        for server in &line.server {
            let at = match self
                .watched
                .iter()
                .position(|w| w.address == server.address)
            {
                Some(at) => at,
                None => {
                    self.watched.push(Watched {
                        address: server.address.clone(),
                        ..Watched::default()
                    });
                    self.watched.len() - 1
                }
            };
            server.add_to(&mut self.watched[at], format);
        }
    }

    /// Each worker's CPU as the last second that had it.
    fn threads(&self) -> Vec<ThreadCpuUsage> {
        self.threads
            .iter()
            .map(|t| ThreadCpuUsage {
                cpu: Duration::from_nanos(t.cpu_ns),
                runqueue: t.runqueue_ns.map(Duration::from_nanos),
                wall: Duration::from_nanos(t.wall_ns),
            })
            .collect()
    }
}
