//! `respbench merge -o ALL.json SHARD.json…`: one exact record from the records of a sharded run.
//!
//! Why a subcommand recognised only as the very first argument: valkey-benchmark reads the first
//! non-option argument as the start of a custom command, and respbench keeps that; no Redis or
//! Valkey command is named `MERGE`, so `respbench merge …` cannot mean "benchmark MERGE", while
//! `respbench -p 7000 merge` (after an option) still would, exactly as in the reference.
//!
//! Owns: reading shard records (through the record's own types, `record::Document`), refusing
//! mismatched ones (`check`), adding them (`test_record`, `failures`, `hist`), writing the merged
//! record, which has the same `respbench/1` shape as any record plus a
//! `shards` array (one row per input) so `compare` and `report` read it like any other. Must not:
//! touch the network.
//!
//! Exit codes: 0 merged; 2 a usage mistake or inputs that cannot be read or are not shards of
//! one benchmark (a missing file or a directory, unreadable JSON, another schema, different tests
//! or options), as `compare` and `report`; 1 the output that cannot be written.

mod check;
mod counts;
mod delay;
mod failures;
mod hist;
mod test_record;
mod together;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;

use crate::cli::flag::{self, Action, Flag, help_block};
use crate::record::block::{self, Blocks, Tree};
use crate::record::document::{ClientHost, Document, ServerRecord};
use crate::record::input_file;
use crate::record::shard::{MergeNote, MergedShard, MergedShardTest};
use crate::timestamp::parse_time;

use together::Spans;

pub use check::Input;

/// `respbench merge --help`: the description, then the option table's.
pub fn help_text() -> String {
    format!(
        "{HELP_HEAD}{}{HELP_TAIL}",
        help_block(OPTIONS.iter().map(|f| &f.doc), 1, 13)
    )
}

const HELP_HEAD: &str = "\
Usage: respbench merge -o <output.json> <shard.json>...

Merges the --json records of a sharded run (respbench --shard I/N, or shards
started by Slurm, Open MPI or a Kubernetes Indexed Job) into one record:
 - histograms added, so every percentile is the one a single process recording
   every request would report;
 - request, error and push counts summed; throughput summed and duration the
   longest shard's when the shards ran together (else both over the time from
   the first start to the last end, and the output says so);
 - per-second timelines aligned by wall-clock second (per-second percentiles
   are the largest over the shards; lost requests, reconnects and 100 ms slots
   added);
 - outages: the union of the shards' outages on one clock (overlaps joined);
 - a \"shards\" array keeps each shard's host, start offset, counts and rate.
Refused in one line (exit 2): records of different benchmarks (other tests,
target or options except the shard's own -n/--rps part and seed), the same
shard twice, a whole run or an earlier merge among the inputs, counts that do
not add up, and a missing shard (unless --partial).

Options:
";

const HELP_TAIL: &str = "
\"merge\" is a subcommand only as the very first argument; anywhere else it is
a command to benchmark, as in valkey-benchmark.
";

/// `merge`'s options as given.
#[derive(Debug, Default)]
pub struct MergeArgs {
    /// `-o`: where the merged record goes (`-` for stdout).
    pub out: Option<PathBuf>,
    pub how: How,
}

/// What a merge may accept beyond a complete set of shards that ran together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct How {
    /// `--partial`: merge with shards missing (the record says which; else refused).
    pub partial: bool,
    /// `--strict`: refuse shards that did not run together (else merged over their union).
    pub strict: bool,
}

type F = Flag<MergeArgs>;

/// `merge`'s options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["-o", "--output"],
        flag::Value::File("the merged record's file"),
        "-o, --output <file>",
        "Write the merged record here (- for stdout)",
        |a, _, v| {
            a.out = Some(PathBuf::from(v));
            Ok(())
        },
    ),
    F::switch(
        &["--partial"],
        "--partial",
        "Merge even with shards missing; the record names them\n\
         (without it, a missing shard is refused)",
        |a, _, _| {
            a.how.partial = true;
            Ok(())
        },
    ),
    F::switch(
        &["--strict"],
        "--strict",
        "Refuse shards that did not run together (without it,\n\
         their rate is over the union of their spans)",
        |a, _, _| {
            a.how.strict = true;
            Ok(())
        },
    ),
    F::new(
        &["--help", "-h"],
        flag::Value::None,
        "--help",
        "Print this help and exit",
        Action::Help,
    ),
];

/// What `merge` was asked to do.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Help,
    Merge {
        out: PathBuf,
        inputs: Vec<PathBuf>,
        how: How,
    },
}

/// A failure with its exit code.
struct Fail(u8, String);

/// The subcommand's entry point: `args` are the arguments after `merge`.
pub fn main(args: impl Iterator<Item = OsString>) -> ExitCode {
    match parse_args(args).map_err(|e| Fail(2, e)).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail(code, message)) => {
            eprintln!("respbench merge: {message}");
            ExitCode::from(code)
        }
    }
}

/// The arguments after `merge`: `-oFILE` and `-o FILE` (not lexopt's bundles: a shard file may
/// be named `-`, stdin being no record), options looked up in [`OPTIONS`].
fn parse_args(args: impl Iterator<Item = OsString>) -> Result<Request, String> {
    let mut st = MergeArgs::default();
    let mut inputs = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let flag = a.to_str().and_then(|s| flag::find(&[OPTIONS], s));
        match (flag, a.to_str()) {
            (Some((_, f)), _) if matches!(f.action, Action::Help) => return Ok(Request::Help),
            (Some((name, f)), _) => {
                if let Action::Set(set) = f.action {
                    let v = if matches!(f.doc.value, flag::Value::None) {
                        OsString::new()
                    } else {
                        args.next().ok_or("-o needs a file name (- for stdout)")?
                    };
                    set(&mut st, name, &v).map_err(|e| e.0)?;
                }
            }
            (None, Some(s)) if s.starts_with("-o") && s.len() > 2 => {
                st.out = Some(PathBuf::from(&s[2..]))
            }
            (None, Some(s)) if s.starts_with('-') && s != "-" => {
                return Err(format!("unknown option {s} (see respbench merge --help)"));
            }
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    let out = st
        .out
        .ok_or("-o FILE is required (- for stdout; see respbench merge --help)")?;
    if inputs.is_empty() {
        return Err("no records to merge: give the shards' --json files".to_string());
    }
    let named: Vec<(&str, &std::path::Path)> = inputs
        .iter()
        .map(|p| ("a shard record", p.as_path()))
        .collect();
    crate::cli::check_outputs(&[("-o", &out)], &named).map_err(|e| e.0)?;
    Ok(Request::Merge {
        out,
        inputs,
        how: st.how,
    })
}

fn run(req: Request) -> Result<(), Fail> {
    let (out, paths, how) = match req {
        Request::Help => {
            print!("{}", help_text());
            return Ok(());
        }
        Request::Merge { out, inputs, how } => (out, inputs, how),
    };
    let mut inputs = Vec::with_capacity(paths.len());
    for p in &paths {
        let name = p.display().to_string();
        // A run's journal (killed or still going) reads as the record it holds, line by line
        // (a long run's journal may be larger than the size cap).
        let doc: Value = match crate::record::journal::read_file(p) {
            Some(record) => record.map_err(|e| Fail(2, format!("{name}: {e}")))?,
            None => {
                // A missing or unreadable input is the command line's problem (exit 2), as in
                // compare and report; so is one over the size cap.
                let text = input_file::read(p).map_err(|e| Fail(2, e.message().to_string()))?;
                // Its shape first, without building it (`input_file::json_shape`).
                match input_file::json_shape(&text) {
                    Ok(input_file::JsonShape::Record) => {}
                    Ok(_) => {
                        return Err(Fail(
                            2,
                            format!("{name} is not a respbench record (no \"schema\")"),
                        ));
                    }
                    Err(e) => return Err(Fail(2, format!("{name} is not a JSON record: {e}"))),
                }
                serde_json::from_slice(&text)
                    .map_err(|e| Fail(2, format!("{name} is not a JSON record: {e}")))?
            }
        };
        inputs.push(Input::read(name, doc).map_err(|e| Fail(2, e))?);
    }
    let merged = merge(inputs, how).map_err(|e| Fail(2, e))?;
    let note = merged.merge.clone().unwrap_or_default();
    if !note.missing_shards.is_empty() {
        eprintln!(
            "respbench merge: warning: a partial merge: shard(s) {} missing; the totals cover the shards given",
            list(&note.missing_shards)
        );
    }
    // Through `Value`, whose keys are sorted: the merged record's layout since merge began.
    let value = serde_json::to_value(&merged).map_err(|e| Fail(1, e.to_string()))?;
    let mut text = serde_json::to_vec_pretty(&value).map_err(|e| Fail(1, e.to_string()))?;
    text.push(b'\n');
    let written = if crate::cli::is_stdout(&out) {
        let mut o = std::io::stdout().lock();
        o.write_all(&text).and_then(|()| o.flush())
    } else {
        // Replaced whole, as a run's record: an earlier merged record stays until then.
        crate::record::atomic::write(&out, &text)
    };
    written.map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    for line in summary(&merged) {
        eprintln!("{line}");
    }
    Ok(())
}

/// `0, 2, 3`.
fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// Merges shard records (ordered here by shard index) into one record. Shards missing from a
/// complete set are refused unless `how.partial`; shards that ran apart are merged over the
/// union of their spans unless `how.strict` (see `together`).
pub fn merge(mut inputs: Vec<Input>, how: How) -> Result<Document, String> {
    check::compatible(&inputs)?;
    let missing = check::missing_shards(&inputs);
    if !missing.is_empty() && !how.partial {
        let count = inputs[0].doc.shard.as_ref().map_or(0, |s| s.count);
        return Err(format!(
            "shard(s) {} of {count} missing: give every shard's record, or --partial to merge \
             the {} given (the record then says it is partial)",
            list(&missing),
            inputs.len()
        ));
    }
    inputs.sort_by_key(|i| i.doc.shard.as_ref().map_or(u64::MAX, |s| s.index));
    let mut note = MergeNote {
        missing_shards: missing,
        apart: Vec::new(),
    };
    let mut tests = Vec::with_capacity(inputs[0].doc.tests.len());
    for t in 0..inputs[0].doc.tests.len() {
        let (test, spans) = test_record::merge_test(&inputs, t, how.strict)?;
        if spans != Spans::Together {
            note.apart.push(test.name.clone());
        }
        tests.push(test);
    }
    let docs: Vec<&Document> = inputs.iter().map(|i| &i.doc).collect();
    let mut out = head(inputs[0].doc.clone());
    // A record without the time (an empty string) is left out.
    let time = |f: fn(&Document) -> &str| docs.iter().map(move |d| f(d)).filter(|s| !s.is_empty());
    if let Some(s) = time(|d| &d.started_at).min_by_key(|s| parse_time(s)) {
        out.started_at = s.to_string();
    }
    if let Some(s) = time(|d| &d.ended_at).max_by_key(|s| parse_time(s)) {
        out.ended_at = s.to_string();
    }
    out.outcome = test_record::worst(
        docs.iter().map(|d| d.outcome.as_str()),
        &["completed", "interrupted", "running", "killed", "failed"],
    );
    let errors: Vec<String> = inputs
        .iter()
        .filter_map(|i| Some(format!("{}: {}", i.name, i.doc.error.as_deref()?)))
        .collect();
    out.error = (!errors.is_empty()).then(|| errors.join("; "));
    out.client = client(&docs);
    out.servers = servers(&docs);
    // The whole benchmark's, as the shard blocks say (with shards missing, not the sum).
    let shard = docs[0].shard.as_ref();
    out.options.requests = shard
        .and_then(|s| s.requests_total)
        .or_else(|| test_record::sum_or_none(docs.iter().map(|d| d.options.requests)));
    out.options.rps = shard
        .and_then(|s| s.rps_total)
        .or_else(|| test_record::sum_or_none(docs.iter().map(|d| d.options.rps)));
    out.tests = tests;
    out.blocks = blocks(&inputs)?;
    out.shards = shard_rows(&inputs);
    out.merge = (!note.is_empty()).then_some(note);
    Ok(out)
}

/// The merged record's head from the first shard's (`first`): what is the same on every shard
/// kept, what is added up or joined left empty for `merge`.
fn head(first: Document) -> Document {
    // Every field of the head is named (no `clone()` of the first shard's whole head): a field
    // added to `Document` later does not compile here until someone decides how shards combine
    // it (a count summed, a list joined, or the same on every shard), rather than silently being
    // the first shard's.
    let Document {
        schema,
        tool,
        command_line,
        started_at,
        ended_at,
        outcome: _,
        error: _,
        client: _,
        target,
        servers: _,
        options,
        tests: _,
        shard: _,
        sentinel,
        counters,
        find_max,
        shards: _,
        merge: _,
        blocks: _,
        // memtier's --data-verify reads one server's keys back; memtier mode has no shards.
        verify: _,
        // An A/B record is refused by `check::compatible`.
        ab: _,
    } = first;
    Document {
        schema,
        tool,
        command_line,
        started_at,
        ended_at,
        outcome: String::new(),
        error: None,
        client: ClientHost::default(),
        target,
        servers: Vec::new(),
        options,
        tests: Vec::new(),
        shard: None,
        sentinel,
        counters,
        find_max,
        shards: Vec::new(),
        merge: None,
        // Added up from every shard's below (`blocks`: replays sharded by client, their sends
        // added, `replay::block::merged`).
        blocks: Blocks::default(),
        verify: None,
        ab: None,
    }
}

/// The modes' run-wide blocks (a connection storm's), each added up from every shard's by its
/// kind (`record::block::Block::merge`).
fn blocks(inputs: &[Input]) -> Result<Blocks<{ block::RUN }>, String> {
    let mut out = Blocks::default();
    for kind in block::kinds().iter().filter(|k| k.at == block::RUN) {
        let parts: Vec<(&str, Option<&Tree>)> = inputs
            .iter()
            .map(|i| (i.name.as_str(), i.doc.blocks.tree(kind.key)))
            .collect();
        if let Some(tree) = kind.merge(&parts)? {
            out.set_tree(kind.key, tree);
        }
    }
    Ok(out)
}

/// The shards' hosts (distinct, in shard order, comma-separated) and their cores summed.
fn client(docs: &[&Document]) -> ClientHost {
    let mut hosts: Vec<&str> = Vec::new();
    for d in docs {
        let h = d.client.hostname.as_str();
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    let cores: usize = docs.iter().map(|d| d.client.cores).sum();
    ClientHost {
        hostname: hosts.join(","),
        cores: cores.max(1),
    }
}

/// Every server any shard watched, once (by address; the first shard's description).
fn servers(docs: &[&Document]) -> Vec<ServerRecord> {
    let mut out: Vec<ServerRecord> = Vec::new();
    for s in docs.iter().flat_map(|d| &d.servers) {
        if !out.iter().any(|o| o.address == s.address) {
            out.push(s.clone());
        }
    }
    out
}

/// One row per input: where it ran, when it started, what it did per test.
fn shard_rows(inputs: &[Input]) -> Vec<MergedShard> {
    inputs
        .iter()
        .map(|i| {
            let d = &i.doc;
            let s = d.shard.as_ref();
            MergedShard {
                file: i.name.clone(),
                index: s.map(|s| s.index),
                count: s.map(|s| s.count),
                source: s.map(|s| s.source.clone()),
                start_at: s.and_then(|s| s.start_at.clone()),
                started_at: s.and_then(|s| s.started_at.clone()),
                start_offset_s: s.and_then(|s| s.start_offset_s),
                host: d.client.hostname.clone(),
                outcome: d.outcome.clone(),
                tests: d
                    .tests
                    .iter()
                    .map(|t| MergedShardTest {
                        name: t.name.clone(),
                        completed: t.requests.completed,
                        failed: t.requests.failed,
                        duration_s: t.duration_s,
                        throughput_rps: t.throughput_rps,
                        started_at: t.started_at.clone(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// One stderr line per merged test: what a user wants to see before opening the file (and
/// whether its rate is over the union of shards that ran apart).
fn summary(doc: &Document) -> Vec<String> {
    let n = doc.shards.len();
    let apart = doc.merge.as_ref().map_or(&[][..], |m| &m.apart[..]);
    doc.tests
        .iter()
        .map(|t| {
            let l = &t.latency_us.corrected;
            let over = if apart.contains(&t.name) {
                format!(
                    " (the shards did not run together: over the {:.2} s from the first start to the last end)",
                    t.duration_s
                )
            } else {
                String::new()
            };
            format!(
                "{}: {} requests from {n} shards, {:.2} requests per second{over}, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                t.name,
                t.requests.completed,
                t.throughput_rps,
                l.p50 / 1000.0,
                l.p99 / 1000.0,
                l.max / 1000.0,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
