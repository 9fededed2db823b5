//! What a fuzz run prints and records: the reference's progress line and final statistics (at
//! `--fuzz-loglevel info`), then respbench's summary — commands per second, error replies by
//! kind, the server's `INFO errorstats`, the verdict, each client's last command when the server
//! broke, and the reducer's reproducer.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::block::{FuzzRecord, LastSent, ReproducerRecord};
use super::cli::{FuzzArgs, FuzzLogLevel};
use super::client::ClientResult;
use super::log::client_name;
use super::reduce::{Reducer, read_log};
use super::watch::Health;
use super::{Say, verdict_name};
use crate::engine::ConnSetup;
use crate::engine::control::ControlConn;
use crate::trace::Writer;

/// The reproducer's file name in the log directory.
pub const REPRO_FILE: &str = "repro.trace";

/// The reference's `Progress: n/N commands (x%), r rps` line, once a second, on a terminal.
pub struct Progress {
    total: u64,
    started: Instant,
    last: std::cell::Cell<u64>,
    on: bool,
}

impl Progress {
    pub fn new(total: u64, say: Say) -> Progress {
        Progress {
            total,
            started: Instant::now(),
            last: std::cell::Cell::new(0),
            on: say.level >= FuzzLogLevel::Info && !say.stderr_only && io::stdout().is_terminal(),
        }
    }

    pub fn tick(&self, sent: u64) {
        let secs = self.started.elapsed().as_secs();
        if !self.on || secs == self.last.get() {
            return;
        }
        self.last.set(secs);
        let rate = sent as f64 / self.started.elapsed().as_secs_f64();
        let pct = sent as f64 * 100.0 / self.total.max(1) as f64;
        print!(
            "\rProgress: {sent}/{} commands ({pct:.1}%), {rate:.1} rps",
            self.total
        );
        let _ = io::stdout().flush();
    }

    pub fn done(&self) {
        if self.on && self.last.get() > 0 {
            println!();
        }
    }
}

/// The record's block: its head (`super::head`) and the clients' results.
pub fn record(
    head: FuzzRecord,
    results: &[ClientResult],
    seconds: f64,
    health: Option<&Health>,
) -> FuzzRecord {
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for r in results {
        for (k, n) in &r.errors {
            *errors.entry(k.clone()).or_default() += n;
        }
    }
    let sent: u64 = results.iter().map(|r| r.sent).sum();
    let last_sent = match health {
        Some(_) => results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                r.last.as_ref().map(|(seq, command)| LastSent {
                    client: client_name(i as u32 + 1),
                    seq: *seq,
                    command: command.clone(),
                })
            })
            .collect(),
        None => Vec::new(),
    };
    FuzzRecord {
        commands_sent: sent,
        seconds,
        commands_per_sec: match seconds > 0.0 {
            true => sent as f64 / seconds,
            false => 0.0,
        },
        ok_replies: results.iter().map(|r| r.ok).sum(),
        errors_by_kind: errors,
        server_errorstats: BTreeMap::new(),
        verdict: verdict_name(health).to_owned(),
        reason: match health {
            Some(Health::Crashed(r) | Health::Hung(r)) => Some(r.clone()),
            _ => None,
        },
        last_sent,
        ..head
    }
}

/// The reference's closing lines (info level).
pub fn final_statistics(say: &Say, results: &[ClientResult]) {
    let sent: u64 = results.iter().map(|r| r.sent).sum();
    let ok: u64 = results.iter().map(|r| r.ok).sum();
    let errors: u64 = results.iter().flat_map(|r| r.errors.values()).sum();
    let failed = results.iter().filter(|r| r.failed.is_some()).count();
    say.info(&format!(
        "All client threads completed. {} succeeded, {failed} failed.",
        results.len() - failed
    ));
    say.info("=== FINAL STATISTICS ===");
    say.info(&format!("Total commands sent: {sent}"));
    say.info(&format!("Success replies: {ok}"));
    say.info(&format!("Error replies: {errors}"));
    say.info(&format!(
        "Success rate: {:.2}%",
        match sent {
            0 => 0.0,
            n => ok as f64 * 100.0 / n as f64,
        }
    ));
}

/// `INFO errorstats` as `errorstat_KIND` → count.
pub fn errorstats(c: &mut ControlConn) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(v) = c.call(&[b"INFO".as_slice(), b"errorstats"]) else {
        return out;
    };
    let text = match &v {
        resp::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        resp::Value::VerbatimString { text, .. } => String::from_utf8_lossy(text).into_owned(),
        _ => return out,
    };
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if let Some(n) = rest
            .strip_prefix("count=")
            .and_then(|n| n.trim().parse().ok())
        {
            out.insert(name.to_owned(), n);
        }
    }
    out
}

/// Runs the reducer on the log and writes the reproducer next to it.
pub fn reduce(
    setup: &Arc<ConnSetup>,
    args: &FuzzArgs,
    restart: &str,
    trace: &Path,
    say: Say,
    interrupted: Arc<std::sync::atomic::AtomicBool>,
    out: &mut dyn Write,
) -> Result<ReproducerRecord, String> {
    let log = read_log(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let _ = writeln!(
        out,
        "Reducing the log ({} entries) with --fuzz-restart: at most {} replays, {} s",
        log.len(),
        args.reduce_attempts,
        args.reduce_time.as_secs()
    );
    let _ = out.flush();
    let mut r = Reducer::new(
        setup.clone(),
        restart.to_owned(),
        args.hang_timeout,
        say,
        interrupted,
    );
    r.max_attempts = args.reduce_attempts;
    r.max_time = args.reduce_time;
    let reduced = r.reduce(log)?;
    let mut rec = ReproducerRecord {
        path: None,
        entries: reduced.entries.len() as u64,
        from_entries: reduced.from as u64,
        attempts: reduced.attempts,
        seconds: reduced.elapsed.as_secs_f64(),
        bounded: reduced.bounded,
    };
    if reduced.entries.is_empty() {
        return Ok(rec);
    }
    let path = trace.with_file_name(REPRO_FILE);
    // Whole or not at all (`record::atomic`): a reproducer of an earlier run in that directory
    // stays until this one replaces it.
    let write = || -> io::Result<()> {
        let mut w = Writer::new(Vec::new())?;
        w.comment(
            "respbench --fuzz reproducer: replay in this order, each client on its own connection",
        )?;
        for e in &reduced.entries {
            w.write(e)?;
        }
        crate::record::atomic::write(&path, w.get_mut())
    };
    write().map_err(|e| format!("{}: {e}", path.display()))?;
    rec.path = Some(path.display().to_string());
    let _ = writeln!(
        out,
        "Reproducer ({} of {} entries):",
        reduced.entries.len(),
        reduced.from
    );
    for e in &reduced.entries {
        let _ = writeln!(
            out,
            "  #{} {}: {}",
            e.seq,
            e.client,
            super::describe(&e.payload)
        );
    }
    Ok(rec)
}

/// respbench's summary after the reference's lines.
pub fn summary(r: &FuzzRecord, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Fuzzed {} commands from {} of the server's commands in {:.2} s ({:.0} commands/s)",
        r.commands_sent, r.commands_in_table, r.seconds, r.commands_per_sec
    )?;
    let kinds: Vec<String> = r
        .errors_by_kind
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if !kinds.is_empty() {
        writeln!(out, "Error replies by kind: {}", kinds.join(", "))?;
    }
    if !r.server_errorstats.is_empty() {
        let stats: Vec<String> = r
            .server_errorstats
            .iter()
            .map(|(k, n)| format!("{}={n}", k.trim_start_matches("errorstat_")))
            .collect();
        writeln!(out, "Server errorstats: {}", stats.join(", "))?;
    }
    match &r.reason {
        None => writeln!(out, "Server: survived (it answers PING)")?,
        Some(reason) => {
            writeln!(out, "Server: {} ({reason})", r.verdict.to_uppercase())?;
            for l in &r.last_sent {
                writeln!(
                    out,
                    "  last sent by {} (#{}): {}",
                    l.client, l.seq, l.command
                )?;
            }
        }
    }
    if let Some(d) = &r.log_dir {
        writeln!(out, "Fuzz log: {d}")?;
    }
    if let Some(p) = &r.reproducer {
        match &p.path {
            Some(path) => writeln!(
                out,
                "Reproducer: {path} ({} of {} entries, {} replays, {:.1} s{})",
                p.entries,
                p.from_entries,
                p.attempts,
                p.seconds,
                if p.bounded {
                    ", bound reached: maybe not minimal"
                } else {
                    ""
                }
            )?,
            None => writeln!(
                out,
                "Reproducer: none (replaying the whole log did not break the server again)"
            )?,
        }
    }
    out.flush()
}
