//! Reading a journal back as a record: the last head, the tests that ended, and the test under
//! way rebuilt from its seconds by the record's own builder (`record::build`), as the record that
//! Ctrl-C at its last full second would have held. The run's `outcome` says `killed` (or
//! `running`, while the run that writes it still holds its lock).

use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::modes;
use super::{BeginLine, FORMAT, Line, SecondLine};
use crate::machine::Load;
use crate::metrics::ThreadCpuUsage;
use crate::metrics::{
    ClusterStats, CommandResult, FAILURE_KINDS, LatencyHistogram, NodeStats, Outcome, Role, Signal,
    TestResult, Timeline,
};
use crate::record::build::{self, TestExtras};
use crate::record::document::{Document, TestRecord};
use crate::record::hdr;
use crate::timestamp::{parse_time, rfc3339, rfc3339_micros};
use crate::watch::Watched;

/// `Some` when `text` is a journal (its first line is a journal head): the record it holds, as
/// the JSON value of a record (for `record::Document::read`, the one reader), or why it cannot be
/// read. `path`: the file it came from, to tell whether its run still goes on.
pub fn recognise(text: &str, path: Option<&Path>) -> Option<Result<Value, String>> {
    let first = text.lines().next()?;
    let head: Value = serde_json::from_str(first).ok()?;
    let format = head.get("journal")?.as_str()?;
    if head.get("kind")?.as_str()? != "head" {
        return None;
    }
    if format != FORMAT {
        return Some(Err(format!(
            "a {format} journal; this respbench reads {FORMAT}"
        )));
    }
    let running = path.is_some_and(locked);
    Some(read(text, running).and_then(|d| serde_json::to_value(d).map_err(|e| e.to_string())))
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

/// The test under way when the journal ends.
struct Open {
    begin: BeginLine,
    seconds: Vec<SecondLine>,
}

/// When the test's last full second ended (wall clock), when its start is known.
fn end_of(o: &Open) -> Option<String> {
    let start = o.begin.started_at.as_deref().and_then(parse_time)?;
    Some(rfc3339(start + Duration::from_secs(o.seconds.len() as u64)))
}

/// The record a journal holds. A last line cut short (a power cut mid-write) is ignored; a bad
/// line before it is an error.
pub(super) fn read(text: &str, running: bool) -> Result<Document, String> {
    let mut doc: Option<Document> = None;
    let mut tests: Vec<TestRecord> = Vec::new();
    let mut open: Option<Open> = None;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for (n, raw) in lines.iter().enumerate() {
        let line: Line = match serde_json::from_str(raw) {
            Ok(l) => l,
            Err(_) if n + 1 == lines.len() => break,
            Err(e) => return Err(format!("journal line {}: {e}", n + 1)),
        };
        match line {
            Line::Head { document, .. } => {
                let mut d: Document = serde_json::from_value(document)
                    .map_err(|e| format!("journal line {}: {e}", n + 1))?;
                d.tests.clear();
                doc = Some(d);
            }
            Line::Begin(begin) => {
                open = Some(Open {
                    begin: *begin,
                    seconds: Vec::new(),
                })
            }
            Line::Second(s) => {
                if let Some(o) = open.as_mut() {
                    // A replay's commands, named as it learns them.
                    if !s.mix.is_empty() {
                        o.begin.mix.clone_from(&s.mix);
                    }
                    o.seconds.push(*s);
                }
            }
            Line::Test { record } => {
                open = None;
                tests.push(
                    serde_json::from_value(record)
                        .map_err(|e| format!("journal line {}: {e}", n + 1))?,
                );
            }
            Line::Discard { index } => {
                if index < tests.len() {
                    tests.remove(index);
                }
            }
        }
    }
    let mut doc = doc.ok_or("a journal without its head line")?;
    let mut ended = None;
    if let Some(o) = open.filter(|o| !o.seconds.is_empty()) {
        ended = end_of(&o);
        // A storm and a fuzz run are their block in the record (no test), as their finished
        // run writes it; a block the head has already (the mode ended) is the one kept.
        match (&o.begin.storm, &o.begin.fuzz) {
            (Some(ctx), _) => {
                let server = Beside::of(&o.seconds)
                    .watched
                    .iter()
                    .map(|w| build::server_record(w, &[]))
                    .collect();
                let block = modes::storm_block(&o.seconds, ctx, server)?;
                doc.storm.get_or_insert(block);
            }
            (None, Some(head)) => {
                doc.fuzz
                    .get_or_insert_with(|| modes::fuzz_block(&o.seconds, head));
            }
            (None, None) => tests.push(partial_test(&o)?),
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

/// The record of the test under way, from its full seconds, as an interrupted test's.
fn partial_test(o: &Open) -> Result<TestRecord, String> {
    let b = &o.begin;
    let mut r = TestResult::empty(
        &b.name,
        b.target_rps,
        Outcome::Interrupted(Signal::Interrupt),
    );
    let mut timeline = Timeline::default();
    for s in &o.seconds {
        *timeline.second_mut(s.second) = s.to_second();
    }
    let mut replies_failed = 0;
    let mut refusals = None;
    for s in &timeline.seconds {
        r.completed += s.completed;
        replies_failed += s.failed - s.lost.iter().sum::<u64>().min(s.failed);
        r.latency.merge(&s.latency);
        r.client_delay.merge(&s.client_delay);
        r.reconnect_attempts += s.reconnect_attempts();
        r.reconnects += s.reconnects();
        r.pushes.merge(&s.pushes.unwrap_or_default());
        if let Some(n) = s.reconnect_refusals {
            *refusals.get_or_insert(0) += n;
        }
    }
    exact_histograms(o, &mut r)?;
    for (k, kind) in FAILURE_KINDS.iter().enumerate() {
        let n: u64 = timeline.seconds.iter().map(|s| s.lost[k]).sum();
        if n > 0 {
            r.errors.record_kind(kind, n);
        }
    }
    error_replies(o, replies_failed, &mut r);
    mix_commands(o, &mut r)?;
    r.cluster = cluster(o)?;
    let secs = timeline.seconds.len() as u64;
    r.elapsed = Duration::from_secs(secs);
    let start = b.started_at.as_deref().and_then(parse_time);
    r.started_at = start;
    r.timeline = timeline;
    let mut issued = issued(&mut r);
    // A delivery test's block, and its requests as its finished record counts them: the
    // deliveries owed, those not delivered (lost, or still on their way) unanswered.
    let delivery = b
        .delivery
        .as_ref()
        .map(|head| modes::delivery_block(&o.seconds, head));
    if let Some(d) = &delivery {
        (issued, r.unanswered, refusals) = (Some(d.expected), d.lost, Some(0));
    }
    let beside = Beside::of(&o.seconds);
    let extras = TestExtras {
        timeline: Some(&r.timeline),
        issued,
        repetition: b.repetition,
        // Every worker's, as a finished test has them (none for a mode whose threads are not
        // measured: its record's list is empty too).
        client_threads: Some(beside.threads.as_slice()),
        machine: beside.machine,
        delivery: delivery.as_ref(),
        ..TestExtras::default()
    };
    // A mix's commands are its own, as a finished test names them (`RunRecord::end_test`).
    let commands = match r.commands.is_empty() {
        true => b.commands.clone(),
        false => b.mix.iter().map(|n| n.to_ascii_lowercase()).collect(),
    };
    let mut rec = build::test_record(&r, commands, &beside.watched, extras);
    rec.started_at = start.map(rfc3339_micros);
    // Unknown in a journal whose workers did not hand refusals over (an older one's).
    rec.requests.reconnect_refusals = refusals;
    Ok(rec)
}

/// The commands written up to the last full second (the seconds' sum, when any second has
/// them: older journals' and other modes' do not), and `r.unanswered` from it as a Ctrl-C there
/// would count it: `completed + failed + unanswered = issued`. A second's count may hold a few
/// commands written just after its end, never fewer than its replies (`metrics::Second`).
fn issued(r: &mut TestResult) -> Option<u64> {
    let seconds = &r.timeline.seconds;
    seconds.iter().any(|s| s.issued.is_some()).then(|| {
        let n: u64 = seconds.iter().filter_map(|s| s.issued).sum();
        r.unanswered = n.saturating_sub(r.completed + r.errors.total());
        n
    })
}

/// A mix's commands (`--ratio`), each its seconds' sums, when every second that measured
/// something has them.
fn mix_commands(o: &Open, r: &mut TestResult) -> Result<(), String> {
    let mix = &o.begin.mix;
    // A second's commands are the first of the mix by index (a replay's workers know only
    // the commands they have sent so far).
    let complete = o.seconds.iter().all(|s| {
        s.completed + s.failed == 0
            || s.exact
                .as_ref()
                .is_some_and(|e| e.commands.len() <= mix.len())
    });
    if mix.is_empty() || !complete {
        return Ok(());
    }
    r.commands = mix.iter().map(|n| CommandResult::new(n)).collect();
    for s in &o.seconds {
        let what = format!("journal second {}", s.second);
        for (c, e) in r
            .commands
            .iter_mut()
            .zip(s.exact.iter().flat_map(|e| &e.commands))
        {
            c.completed += e.completed;
            c.errors += e.errors;
            c.nils += e.nils;
            c.hits = c.hits.zip(e.hits).map(|(a, b)| a + b);
            hdr::add_encoded(&mut c.latency, &e.latency, &what)?;
            if !e.uncorrected.is_empty() {
                hdr::add_encoded(&mut c.uncorrected, &e.uncorrected, &what)?;
            }
            // A journal of an earlier build counted no bytes: none then, rather than a part.
            c.bytes = c
                .bytes
                .zip(e.bytes)
                .map(|((tx, rx), [t, r])| (tx + t, rx + r));
        }
    }
    Ok(())
}

/// Cluster mode: the redirects and each node's figures, their seconds' sums (the nodes named as
/// the `begin` line names them), when the test named its nodes and its seconds carry them.
fn cluster(o: &Open) -> Result<Option<ClusterStats>, String> {
    if o.begin.nodes.is_empty() {
        return Ok(None);
    }
    let mut c = ClusterStats {
        nodes: o
            .begin
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
    };
    for s in &o.seconds {
        let Some(e) = &s.exact else { continue };
        let mut second = [0; 4];
        for (k, n) in e.redirects.iter().flatten().enumerate() {
            c.redirects[k] += n;
            second[k] += n;
        }
        if second.iter().any(|&n| n > 0) {
            if c.timeline.len() <= s.second {
                c.timeline.resize(s.second + 1, [0; 4]);
            }
            c.timeline[s.second] = second;
        }
        for (i, n) in e.nodes.iter().enumerate() {
            if c.nodes.len() <= i {
                c.nodes.resize_with(i + 1, NodeStats::new);
            }
            let node = &mut c.nodes[i];
            node.completed += n.completed;
            node.lost += n.lost;
            let what = format!("journal second {} node {i}", s.second);
            hdr::add_encoded(&mut node.latency, &n.latency, &what)?;
        }
    }
    Ok(Some(c))
}

/// The test's error replies: by first word when every second that had some says which (its
/// `exact` figures), else together as `error replies` (a journal of a respbench before them).
fn error_replies(o: &Open, replies_failed: u64, r: &mut TestResult) {
    let by_word: u64 = o
        .seconds
        .iter()
        .filter_map(|s| s.exact.as_ref())
        .flat_map(|e| e.errors.iter().map(|(_, n)| n))
        .sum();
    if by_word == replies_failed {
        for e in o.seconds.iter().filter_map(|s| s.exact.as_ref()) {
            for (word, n) in &e.errors {
                r.errors.record_kind(word, *n);
            }
        }
    } else if replies_failed > 0 {
        r.errors.record_kind("error replies", replies_failed);
    }
}

/// The whole-test histograms from the seconds' full-precision ones, when every second that
/// completed requests has them (a journal of a respbench before them has not: its corrected
/// histogram stays the sum of the coarse ones, and there is no uncorrected one).
fn exact_histograms(o: &Open, r: &mut TestResult) -> Result<(), String> {
    if o.seconds
        .iter()
        .any(|s| s.exact.is_none() && s.completed > 0)
    {
        return Ok(());
    }
    let mut corrected = LatencyHistogram::new();
    let mut uncorrected = LatencyHistogram::new();
    for s in &o.seconds {
        if let Some(e) = &s.exact {
            let what = format!("journal second {}", s.second);
            hdr::add_encoded(&mut corrected, &e.corrected, &what)?;
            hdr::add_encoded(&mut uncorrected, &e.uncorrected, &what)?;
        }
    }
    r.latency = corrected;
    r.latency_uncorrected = uncorrected;
    Ok(())
}

/// What the test's record takes from beside the engine, as its seconds left it: each worker's
/// CPU and the machine's load up to the last second (cumulative figures: the last one counts),
/// and each watched server's samples, in the order taken.
struct Beside {
    threads: Vec<ThreadCpuUsage>,
    machine: Option<Load>,
    watched: Vec<Watched>,
}

impl Beside {
    fn of(seconds: &[SecondLine]) -> Self {
        let threads = seconds
            .iter()
            .rev()
            .find(|s| !s.threads.is_empty())
            .map(|s| {
                s.threads
                    .iter()
                    .map(|t| ThreadCpuUsage {
                        cpu: Duration::from_nanos(t.cpu_ns),
                        runqueue: t.runqueue_ns.map(Duration::from_nanos),
                        wall: Duration::from_nanos(t.wall_ns),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let machine = seconds.iter().rev().find_map(|s| s.machine);
        let mut watched: Vec<Watched> = Vec::new();
        for line in seconds.iter().flat_map(|s| &s.server) {
            let at = match watched.iter().position(|w| w.address == line.address) {
                Some(at) => at,
                None => {
                    watched.push(Watched {
                        address: line.address.clone(),
                        ..Watched::default()
                    });
                    watched.len() - 1
                }
            };
            let w = &mut watched[at];
            w.samples.extend_from_slice(&line.samples);
            if w.commandstats_before.is_none() {
                w.commandstats_before.clone_from(&line.commandstats_before);
            }
            // Cumulative: the latest read (none once a line has none: a reconnect).
            w.commandstats_after.clone_from(&line.commandstats);
            w.latencystats.clone_from(&line.latencystats);
            // A reconnect starts a new segment: the gaps are the segments after the first.
            w.gaps = w.samples.iter().map(|s| s.segment).max().unwrap_or(0);
        }
        Self {
            threads,
            machine,
            watched,
        }
    }
}
