//! `respbench memtier ARGS…` and respbench started as `memtier_benchmark` (issue 23): memtier's
//! command line (`cli/`, its table) run by respbench's own run, and memtier's output written from
//! respbench's record (`record::Document`): the tables (`text.rs`) and `--json-out-file`
//! (`json.rs`) from the rows worked out in `stats.rs`. respbench's `--json`/`--html` record,
//! server watch and verdicts are the same as any run's.
//!
//! Owns (issue 32: the mode in one folder): its option table (`cli/`), driving one memtier
//! invocation, its progress line (`progress.rs`) and writing its outputs. The registry
//! (`crate::modes`) installs its line for `redact` and its page for the manual. What the engine
//! runs for it stays below it, named for what it is (`workload::shape`, `workload::import`,
//! `plan::shape`, `plan::import`, `record::shape`). Must not: measure anything itself.

mod breakdown;
pub mod cli;
mod client_stats;
mod debug;
mod hdr_files;
#[cfg(test)]
mod import_tests;
mod json;
mod monitor;
mod progress;
mod stats;
mod text;

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::memtier::cli::{MemtierOptions, Requests};
use crate::plan::RunPlan;
use crate::record::{Document, TestRecord, atomic};
use crate::run::{Failure, run_for_document};

pub use monitor::resolve as resolve_monitor_input;
pub use stats::{Block, Row, aggregates};

/// Whether respbench was started as memtier_benchmark: its program name (a symlink), or the
/// `memtier` subcommand. Returns the arguments memtier's parser gets.
pub fn invoked_as_memtier(argv: &[std::ffi::OsString]) -> Option<Vec<std::ffi::OsString>> {
    let program = argv.first()?;
    let name = Path::new(program).file_name()?;
    if name == "memtier_benchmark" {
        return Some(argv[1..].to_vec());
    }
    (argv.get(1).is_some_and(|a| a == "memtier")).then(|| argv[2..].to_vec())
}

/// Runs the plan made from a memtier command line and writes memtier's outputs (also for an
/// interrupted or failed run, from what was measured).
pub fn run(
    plan: &RunPlan,
    opts: &MemtierOptions,
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
) -> Result<(), Failure> {
    check_outputs(opts)?;
    if opts.show_config {
        // As memtier: the frame on stderr, the values on stdout.
        eprintln!("============== Configuration values: ==============");
        print!("{}", json::show_config(opts));
        let _ = io::stdout().flush();
        eprintln!("===================================================");
    }
    if opts.debug {
        eprint!("{}", debug::lines(plan));
    }
    eprintln!(
        "Writing results to {}",
        opts.out_file
            .as_deref()
            .map_or("stdout".into(), |p| p.display().to_string())
    );
    let test = !plan.verify.is_some_and(|v| v.only);
    if test {
        eprintln!("[RUN #1] Preparing benchmark client...");
        eprintln!("[RUN #1] Launching threads now...");
    }
    let (result, doc) = run_for_document(
        plan,
        interrupted.clone(),
        terminated.clone(),
        Some(progress::line),
    );
    if test {
        // Ends the progress line (written after carriage returns).
        eprintln!();
    }
    if interrupted.load(Ordering::Relaxed)
        && !terminated.load(Ordering::Relaxed)
        && let Some(t) = doc.tests.last()
    {
        // memtier's line for Ctrl-C (scripts and its suite look for it); said once the
        // workers have stopped, with the measured test's length.
        eprintln!(
            "[RUN #{}] Interrupted by user (Ctrl+C) after {:.1} secs, stopping threads...",
            doc.tests.len(),
            t.duration_s
        );
    }
    if !doc.tests.is_empty() || doc.verify.is_some() {
        write_outputs(&doc, opts).map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Failure::BrokenPipe,
            _ => Failure::Fatal(format!("cannot write memtier output: {e}")),
        })?;
    }
    result
}

/// The outputs can be written when the run ends (exit 1 before anything connects, as for
/// `--json`): `--json-out-file`, `--out-file`, and the directories of `--hdr-file-prefix`'s and
/// `--client-stats`' files (their first run's). Checked without touching an earlier file: every
/// output is written whole at the end by the one atomic writer (`record::atomic`), so a run
/// killed before it leaves the earlier file as it was, and `compare` can still read it.
fn check_outputs(opts: &MemtierOptions) -> Result<(), Failure> {
    let files = [&opts.json_out_file, &opts.out_file].into_iter().flatten();
    let hdr = opts.hdr_file_prefix.as_deref().map(hdr_files::first_path);
    let csv = opts
        .client_stats
        .as_deref()
        .map(|p| client_stats::path(p, 1, &Default::default()));
    for p in files.cloned().chain(hdr).chain(csv) {
        atomic::check_writable(&p)
            .map_err(|e| Failure::Fatal(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(())
}

/// How long the test was, as memtier's header and `run information` say it.
fn length(opts: &MemtierOptions, doc: &Document) -> (String, &'static str, u64) {
    match (opts.test_time, opts.requests) {
        (Some(s), _) => (format!("{s:<10}Seconds"), "Seconds", s),
        (None, Requests::PerClient(n)) => (
            format!("{n:<10}Requests per client"),
            "Requests per client",
            n,
        ),
        (None, Requests::AllKeys) => {
            let n = doc.options.requests.unwrap_or(0);
            (format!("{n:<10}Requests in all (allkeys)"), "Requests", n)
        }
    }
}

/// Blocks of the run: `ALL STATS` for one run; each run's and the aggregates for `--run-count`.
fn blocks<'d>(doc: &'d Document, opts: &MemtierOptions) -> (Vec<Block>, Vec<&'d TestRecord>) {
    let w = &doc.options.workload;
    let layout = stats::Layout {
        pcts: &opts.print_percentiles,
        sizes: stats::Sizes {
            // memtier's keys are unpadded: the range's mean digit count.
            key: w.key_prefix.len() + mean_digits(w.key_minimum, w.key_maximum.unwrap_or(0)),
            value: doc.options.data_size,
        },
        arbitrary: opts.raw("--command").is_some(),
    };
    let tests: Vec<&TestRecord> = doc.tests.iter().collect();
    if tests.len() == 1 {
        return (
            vec![stats::block("ALL STATS".into(), tests[0], layout)],
            tests,
        );
    }
    let runs: Vec<Block> = tests
        .iter()
        .enumerate()
        .map(|(i, t)| stats::block(format!("RUN #{} RESULTS", i + 1), t, layout))
        .collect();
    let mut out = if opts.print_all_runs {
        runs.clone()
    } else {
        Vec::new()
    };
    let shown = out.len();
    out.extend(aggregates(&runs));
    (out, tests.into_iter().take(shown).collect())
}

/// When a test started, in seconds since the epoch (0 when the record lacks it).
fn blocks_start_s(t: &TestRecord) -> f64 {
    t.started_at
        .as_deref()
        .and_then(crate::timestamp::parse_time)
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

fn write_outputs(doc: &Document, opts: &MemtierOptions) -> io::Result<()> {
    let doc = &*breakdown::for_output(doc, opts.command_stats_by_line);
    // `--verify-only` runs no test: only the verification's lines, as memtier.
    let ran = !doc.tests.is_empty();
    let (blocks, tests) = match ran {
        true => blocks(doc, opts),
        false => (Vec::new(), Vec::new()),
    };
    let (line, key, n) = length(opts, doc);
    let mut out = match ran {
        true => text::header(opts.threads, opts.clients, &line),
        false => String::new(),
    };
    for b in &blocks {
        out.push_str(&text::table(b, &opts.print_percentiles));
        out.push_str("\n\n");
    }
    if !opts.hide_histogram
        && let Some(t) = doc.tests.last()
    {
        out.push_str(&text::distribution(t));
    }
    if let Some(v) = &doc.verify {
        out.push_str(&text::verification(v));
    }
    match &opts.out_file {
        Some(p) => atomic::write(p, out.as_bytes()).map_err(|e| atomic::naming(p, e))?,
        None => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(out.as_bytes())?;
            stdout.flush()?;
        }
    }
    if let Some(prefix) = &opts.hdr_file_prefix {
        for (i, t) in doc.tests.iter().enumerate() {
            let start = blocks_start_s(t);
            for note in hdr_files::write(prefix, i + 1, t, start)? {
                eprintln!("{note}");
            }
        }
    }
    if let Some(prefix) = &opts.client_stats {
        for (i, t) in doc.tests.iter().enumerate() {
            eprintln!("[RUN {}] Writing client stats files...", i + 1);
            client_stats::write(prefix, i + 1, t)?;
        }
    }
    if let Some(p) = &opts.json_out_file {
        let length = ran.then_some((key, n));
        let doc = json::document(opts, &blocks, &tests, length, doc.verify.as_ref());
        let mut text = serde_json::to_vec_pretty(&doc).map_err(io::Error::other)?;
        text.push(b'\n');
        atomic::write(p, &text).map_err(|e| atomic::naming(p, e))?;
        eprintln!("Json file {} created...", p.display());
    }
    Ok(())
}

/// The mean number of decimal digits of the numbers `min..=max`, rounded (KB/sec's key size).
fn mean_digits(min: u64, max: u64) -> usize {
    let (min, max) = (min.min(max), max.max(min));
    let mut sum = 0u128;
    let mut lo = min;
    for d in 1..=20u32 {
        let top = 10u128.pow(d).saturating_sub(1).min(u128::from(u64::MAX)) as u64;
        if lo > max {
            break;
        }
        if lo <= top {
            let hi = top.min(max);
            sum += u128::from(hi - lo + 1) * u128::from(d);
            lo = hi.saturating_add(1);
            if hi == u64::MAX {
                break;
            }
        }
    }
    let n = u128::from(max - min) + 1;
    ((sum + n / 2) / n) as usize
}

#[cfg(test)]
mod key_size_tests {
    #[test]
    fn mean_digits_of_a_key_range() {
        assert_eq!(super::mean_digits(0, 9), 1);
        assert_eq!(super::mean_digits(0, 10_000_000), 7);
        assert_eq!(super::mean_digits(0, 99), 2);
        assert_eq!(super::mean_digits(5, 5), 1);
        assert_eq!(super::mean_digits(100, 149), 3);
    }
}
