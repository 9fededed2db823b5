//! `--fuzz`: valkey-benchmark's server fuzzer, drop-in, and a reducer that hands back a minimal
//! reproducer when the server crashes or hangs.
//!
//! The run: read the server's command table (`table`), build the commands that may be sent
//! (`exclude`), start the watch (`watch`: `PING` every 100 ms, fresh connects decide crash or
//! hang), start `-c` client threads (`client`) that each send their share of `-n` generated
//! commands (`generate`, `malformed`, `config`) one at a time, logging each before it goes out
//! (`log`, the one trace format); at the end, the report (`report`) and, when the server died and
//! `--fuzz-restart` says how to start it again, the reducer (`reduce`).
//!
//! Owns: the fuzz mode. Must not: touch the benchmark engine's hot path (it uses control
//! connections only), send to anything but the target.

pub mod block;
pub mod cli;
mod client;
pub mod config;
pub mod exclude;
pub mod generate;
#[cfg(test)]
mod journal_tests;
pub mod log;
pub mod malformed;
pub mod reduce;
mod report;
pub mod route;
pub mod run;
mod say;
pub mod table;
pub mod watch;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

pub use crate::trace::Payload;
pub use say::Say;

use self::cli::FuzzArgs;
use self::client::{ClientResult, Common};
use self::exclude::Exclusions;
use self::generate::{DEFAULT_KEYS, Generator, Shared};
use self::log::Log;
use self::table::Table;
use self::watch::{Health, Watch};
use crate::engine::ConnSetup;
use crate::metrics::SharedTimeline;
use crate::workload::split::even_part;
use block::FuzzRecord;

/// What the run hands the fuzzer.
pub struct FuzzRun<'a> {
    pub setup: Arc<ConnSetup>,
    pub args: &'a FuzzArgs,
    /// `-c`: client threads.
    pub clients: u32,
    /// `-n`: commands in all.
    pub requests: u64,
    /// `-r`: keys.
    pub keyspace: Option<u64>,
    pub seed: u64,
    /// `--cluster`: the slot map read at the start and every primary.
    pub routes: Option<route::Routes>,
    pub interrupted: Arc<AtomicBool>,
    /// `--json -`: stdout carries the record, the fuzzer's lines go to stderr.
    pub stdout_taken: bool,
    /// Told the commands sent so far every 100 ms, on the thread that started the run (the
    /// run's journal and live metrics).
    pub on_progress: Option<&'a dyn Fn(u64)>,
    /// The per-second timeline the clients count their commands into (each with its reply
    /// time), from the instant given (the run hands its seconds to the journal and live
    /// metrics); `None`: not counted.
    pub timeline: Option<(SharedTimeline, Instant)>,
    /// Told the record's block's head ([`head`]) once the server's table is read, before any
    /// client starts (the run's journal keeps it, so a killed run's block is rebuilt).
    pub on_start: Option<&'a dyn Fn(FuzzRecord)>,
}

/// How the fuzz run ended.
pub struct FuzzOutcome {
    pub record: FuzzRecord,
    /// The server crashed or hung (exit 1).
    pub broken: bool,
}

/// The reference's upper bound on clients.
const MAX_CLIENTS: u32 = 5000;

/// A command as the reference's log shows it: the arguments joined by spaces, each cut at 50
/// bytes; redacted (`AUTH`'s password never appears). Raw framing as escaped bytes.
pub fn describe(p: &Payload) -> String {
    match p {
        Payload::Command(args) => {
            let text = crate::redact::command(args);
            match text.len() > 200 {
                true => format!("{}...", text.chars().take(200).collect::<String>()),
                false => text,
            }
        }
        Payload::Raw(bytes) => {
            let shown: String = bytes
                .iter()
                .take(60)
                .flat_map(|&b| std::ascii::escape_default(b))
                .map(char::from)
                .collect();
            format!("(raw {} bytes) {shown}", bytes.len())
        }
    }
}

/// Runs the fuzzer; `Err` is a fatal message (exit 1).
pub fn run(mut f: FuzzRun<'_>, out: &mut dyn Write) -> Result<FuzzOutcome, String> {
    if f.clients > MAX_CLIENTS {
        return Err(format!(
            "Too many parallel clients requested ({}). Maximum is {MAX_CLIENTS}.",
            f.clients
        ));
    }
    let say = Say {
        level: f.args.loglevel,
        stderr_only: f.stdout_taken,
    };
    let setup = f.setup.clone();
    let shared = Arc::new(prepare(&setup, &f)?);
    let log_dir = log_dir(f.args, f.seed);
    let header = format!(
        "respbench --fuzz seed {} clients {} modes {}",
        f.seed,
        f.clients,
        modes(f.args).join(",")
    );
    let log = Arc::new(
        Log::create(log_dir.as_deref(), f.clients, &header)
            .map_err(|e| format!("--fuzz-log: cannot write the log: {e}"))?,
    );
    writeln!(
        out,
        "Running fuzzer with {} clients, {} commands per client ({} total commands)",
        f.clients,
        even_part(f.requests, 0, u64::from(f.clients)).len,
        f.requests
    )
    .map_err(|e| e.to_string())?;
    writeln!(
        out,
        "Fuzz seed: {} (the same streams again: --seed {})",
        f.seed, f.seed
    )
    .map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;

    let head = head(&f, &shared, &log);
    if let Some(tell) = f.on_start {
        tell(head.clone());
    }
    let (results, seconds, health) = fuzz_and_watch(&mut f, &shared, &log, say);
    let log_error = log.finish().err();
    let mut record = report::record(head, &results, seconds, health.as_ref());
    report::final_statistics(&say, &results);
    if let Some(e) = log_error {
        say.error(&format!("the fuzz log is incomplete: {e}"));
    }
    let broken = health.is_some();
    if let (true, Some(restart), Some(trace)) = (broken, &f.args.restart, log.trace_path()) {
        record.reproducer = Some(report::reduce(
            &setup,
            f.args,
            restart,
            &trace,
            say,
            f.interrupted.clone(),
            out,
        )?);
    }
    // `CONFIG RESETSTAT` (only with `--fuzz-include`) zeroes the counts mid-run: partial counts
    // read as the whole would mislead, so they are not read.
    let reset = shared
        .allowed
        .iter()
        .any(|&i| shared.table.commands[i].name == "config|resetstat");
    if reset {
        say.info("Server errorstats: not read (CONFIG RESETSTAT was fuzzed: they were reset)");
    } else if !broken && let Ok(mut c) = watch::connect(&setup, f.args.hang_timeout) {
        record.server_errorstats = report::errorstats(&mut c);
    }
    report::summary(&record, out).map_err(|e| e.to_string())?;
    Ok(FuzzOutcome { record, broken })
}

/// Starts the watches (every node: in a cluster, any primary may be the one that breaks) and the
/// clients; the clients' results, the seconds they took and the server's health when they
/// stopped (`None`: alive).
fn fuzz_and_watch(
    f: &mut FuzzRun<'_>,
    shared: &Arc<Shared>,
    log: &Arc<Log>,
    say: Say,
) -> (Vec<ClientResult>, f64, Option<Health>) {
    let setup = f.setup.clone();
    let found = Arc::new(AtomicBool::new(false));
    let routes = f.routes.take().map(Arc::new);
    let watched = match &routes {
        Some(r) => r.all(),
        None => vec![setup.clone()],
    };
    let watches: Vec<Watch> = watched
        .iter()
        .map(|s| Watch::start(s.clone(), f.args.hang_timeout, found.clone()))
        .collect();
    let common = Arc::new(Common {
        setup: setup.clone(),
        log: log.clone(),
        stop: found,
        interrupted: f.interrupted.clone(),
        sent: AtomicU64::new(0),
        level: f.args.loglevel,
        reply_timeout: f.args.hang_timeout * 2 + Duration::from_secs(1),
        say,
        routes,
        timeline: f.timeline.clone(),
    });
    let started = Instant::now();
    let results = run_clients(f, shared, &common);
    let seconds = started.elapsed().as_secs_f64();
    let mut health = watches.into_iter().filter_map(Watch::finish).next();
    if health.is_none() && !f.interrupted.load(Ordering::Relaxed) {
        // The clients are done: one last look, so a crash by the last command counts too.
        health = watched
            .iter()
            .map(|s| watch::probe(s, f.args.hang_timeout))
            .find(|h| !h.is_alive());
    }
    (results, seconds, health)
}

/// What the record's block knows before the clients start: the seed, the modes, the clients,
/// the commands the table offers, the log's directory.
fn head(f: &FuzzRun<'_>, shared: &Shared, log: &Log) -> FuzzRecord {
    FuzzRecord {
        seed: f.seed,
        modes: modes(f.args),
        clients: f.clients,
        commands_in_table: shared.allowed.len() as u64,
        log_dir: log.dir().map(|d| d.display().to_string()),
        ..FuzzRecord::default()
    }
}

/// The modes as the reference spells them.
fn modes(a: &FuzzArgs) -> Vec<String> {
    let mut m = Vec::new();
    if a.malformed {
        m.push("malformed-commands".to_owned());
    }
    if a.config {
        m.push("config-commands".to_owned());
    }
    m
}

/// `--fuzz-log`, or (with `--fuzz-restart` alone) a directory under the system's temporary
/// directory: the reducer needs the log.
fn log_dir(a: &FuzzArgs, seed: u64) -> Option<PathBuf> {
    match (&a.log_dir, &a.restart) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(_)) => {
            Some(std::env::temp_dir().join(format!("respbench-fuzz-{}-{seed}", std::process::id())))
        }
        (None, None) => None,
    }
}

/// Reads the command table (and `CONFIG GET *` for config mode) over a control connection.
fn prepare(setup: &ConnSetup, f: &FuzzRun<'_>) -> Result<Shared, String> {
    let mut c = watch::connect(setup, Duration::from_secs(30))?;
    let fetch = |c: &mut crate::engine::control::ControlConn, args: &[&[u8]]| {
        let v = c.call(args).map_err(|e| e.to_string())?;
        match crate::engine::control::error_text(&v) {
            Some(e) => Err(format!(
                "{} failed: {e} (the fuzzer reads the server's command table; it needs Redis 7 \
                 or Valkey 7 or later)",
                String::from_utf8_lossy(&args.join(&b' '))
            )),
            None => Ok(v),
        }
    };
    let docs = fetch(&mut c, &[b"COMMAND", b"DOCS"])?;
    let info = fetch(&mut c, &[b"COMMAND"])?;
    let table = Table::from_replies(&docs, &info);
    let exclusions = Exclusions::new(&f.args.exclude, &f.args.include);
    let allowed = table
        .commands
        .iter()
        .enumerate()
        .filter(|(_, c)| exclusions.allows_command(c))
        .map(|(i, _)| i)
        .collect();
    let config = match f.args.config {
        true => config::params(&fetch(&mut c, &[b"CONFIG", b"GET", b"*"])?, &exclusions),
        false => Vec::new(),
    };
    Ok(Shared {
        table,
        allowed,
        config,
        keys: f.keyspace.filter(|&k| k > 0).unwrap_or(DEFAULT_KEYS),
        cluster: f.routes.is_some(),
        malformed: f.args.malformed,
    })
}

/// Starts the clients, prints progress every second, joins them.
fn run_clients(f: &FuzzRun<'_>, shared: &Arc<Shared>, common: &Arc<Common>) -> Vec<ClientResult> {
    let mut handles = Vec::new();
    for i in 0..f.clients {
        let count = even_part(f.requests, u64::from(i), u64::from(f.clients)).len;
        let generator = Generator::new(shared.clone(), f.seed, i + 1);
        let shared_common = common.clone();
        let h = thread::Builder::new()
            .name(format!("fuzz-{}", i + 1))
            .spawn(move || client::run(i + 1, count, generator, &shared_common));
        match h {
            Ok(h) => handles.push(h),
            Err(e) => common
                .say
                .error(&format!("Failed to create thread {}: {e}", i + 1)),
        }
    }
    let progress = report::Progress::new(f.requests, common.say);
    while handles.iter().any(|h| !h.is_finished()) {
        thread::sleep(Duration::from_millis(100));
        let sent = common.sent.load(Ordering::Relaxed);
        progress.tick(sent);
        if let Some(tell) = f.on_progress {
            tell(sent);
        }
    }
    progress.done();
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect()
}

/// The health as the record names it.
pub fn verdict_name(h: Option<&Health>) -> &'static str {
    match h {
        None | Some(Health::Alive) => "survived",
        Some(Health::Crashed(_)) => "crashed",
        Some(Health::Hung(_)) => "hung",
    }
}
