//! `respbench replay TRACE` and `respbench capture`: real traffic with its own timing.
//!
//! Why a subcommand recognised only as the very first argument: as `merge`, `replay` and
//! `capture` are not Redis or Valkey commands, so `respbench replay …` cannot mean "benchmark
//! REPLAY", while after an option the word stays a custom command, as in valkey-benchmark.
//!
//! Owns: the option tables (`options`, `capture`), what is skipped or rewritten (`filter`), the
//! schedule (`schedule`: trace entries → connection, intended time, or a counted skip), the
//! replay threads (`worker`), the report and record of a replay (`output`), and capturing with
//! MONITOR (`capture`). The trace format and its reader are `crate::trace`'s. Must not: parse a
//! benchmark's options or keep a second copy of the record's shape.
//!
//! Exit codes: 0 replayed; 1 a runtime failure (connection, server, output file); 2 a usage
//! mistake or a trace that cannot be read; 130/143 after Ctrl-C/SIGTERM (with the partial
//! report).

pub mod block;
pub mod capture;
mod capture_cluster;
mod capture_node;
mod conn_fail;
mod connect;
mod filter;
mod html;
mod journal;
mod kind;
pub mod options;
mod output;
mod redirect;
mod route;
mod schedule;
mod worker;

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::{Duration, Instant, SystemTime};

use crate::metrics::{CommandResult, Outcome, Signal, TestResult};
use crate::trace::{Entry, Merge, MergeError, TraceError};

pub use options::{OPTIONS, ReplayArgs, Speed, docs, help_text};
use schedule::{Scheduler, Send, Sink};
use worker::{Chunk, Job, SlipSecond};

/// How far ahead of its intended time a command is handed to its thread: far enough that the
/// hand-over never makes it late, short enough that a slow trace is not read ahead without bound.
const LOOKAHEAD: Duration = Duration::from_millis(100);
/// Commands per hand-over, and chunks a thread may have queued (the bound on read-ahead).
const CHUNK_JOBS: usize = 256;
const CHUNK_BYTES: usize = 256 * 1024;
/// The bytes a chunk starts with room for: its commands at 64 bytes each (it grows beyond).
const CHUNK_FILL: usize = CHUNK_JOBS * 64;
const QUEUED_CHUNKS: usize = 8;

/// A failure with its exit code.
struct Fail(u8, String);

/// The subcommand's entry point: `args` are the arguments after `replay`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let argv: Vec<OsString> = std::iter::once(OsString::from("replay"))
        .chain(args.iter().cloned())
        .collect();
    let result = match options::parse(args) {
        Ok(None) => {
            print!("{}", help_text());
            return ExitCode::SUCCESS;
        }
        Ok(Some(a)) if a.dry_run => dry_run(&a),
        Ok(Some(a)) => replay(&a, &argv),
        Err(e) => Err(Fail(2, e)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Fail(code, message)) => {
            eprintln!("respbench replay: {message}");
            ExitCode::from(code)
        }
    }
}

/// The traces as opened for the first lap (`open_traces`): each is opened once, so a pipe,
/// FIFO or `<(zcat trace.gz)` is read whole by the one reader that told its format.
type Traces = Merge<BufReader<File>>;

/// Opens the traces for the first lap; a trace that cannot be opened (or is not a trace) is the
/// user's mistake (exit 2). `--loop` reads them again from the start, so it needs files: a pipe
/// or FIFO can be read only once.
fn open_traces(a: &ReplayArgs) -> Result<Traces, Fail> {
    if a.loops > 1 {
        for t in &a.traces {
            let file = t != Path::new("-") && std::fs::metadata(t).is_ok_and(|m| m.is_file());
            if !file {
                return Err(Fail(
                    2,
                    format!(
                        "--loop {} needs trace files it can read again; {} is a pipe or FIFO \
                         (read once: save it to a file first)",
                        a.loops,
                        t.display()
                    ),
                ));
            }
        }
    }
    Merge::open(&a.traces).map_err(|e| merge_error(a, &e))
}

/// Reads the traces (merged by time, `trace::Merge`; `first` is the first lap's, already open)
/// lap by lap into `sink` through `sched`; `stop` ends it early.
fn drive(
    a: &ReplayArgs,
    first: Traces,
    sched: &mut Scheduler,
    sink: &mut impl Sink,
    stop: &AtomicBool,
) -> Result<(), Fail> {
    let mut entry = Entry::empty();
    let mut first = Some(first);
    for lap in 0..a.loops {
        if lap > 0 {
            sched.next_lap();
        }
        let mut merge = match first.take() {
            Some(m) => m,
            None => Merge::open(&a.traces).map_err(|e| merge_error(a, &e))?,
        };
        loop {
            match merge.next_into(&mut entry) {
                Ok(true) => {}
                Ok(false) => break,
                // A capture killed mid-write leaves its last entry cut: every entry before it
                // is replayed (that trace's own end; the others go on), and stderr says so once.
                Err(MergeError {
                    trace,
                    error: TraceError::Truncated { line },
                }) => {
                    if lap == 0 {
                        eprintln!(
                            "respbench replay: warning: {} ends inside an entry at line {line} (cut short?): \
                             replaying the entries before it",
                            a.traces[trace].display()
                        );
                    }
                    continue;
                }
                Err(e) => return Err(merge_error(a, &e)),
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            sched.entry(&entry, sink).map_err(|e| Fail(1, e))?;
        }
    }
    Ok(())
}

/// A trace that cannot be read, named: exit 2.
fn merge_error(a: &ReplayArgs, e: &MergeError) -> Fail {
    Fail(2, trace_error(&a.traces[e.trace], &e.error))
}

/// [`drive`], through `router` under `--cluster` (each command to its keys' node; MULTI blocks
/// still open at the end are sent as they are).
fn drive_routed<S: Sink>(
    a: &ReplayArgs,
    traces: Traces,
    sched: &mut Scheduler,
    sink: &mut S,
    router: Option<&mut route::Router>,
    stop: &AtomicBool,
) -> Result<(), Fail> {
    let Some(router) = router else {
        return drive(a, traces, sched, sink, stop);
    };
    let mut routed = route::Routed {
        router: &mut *router,
        inner: &mut *sink,
    };
    drive(a, traces, sched, &mut routed, stop)?;
    router.finish(sched, sink).map_err(|e| Fail(1, e))
}

/// `--cluster`: the slot map and key specs, from the entry node.
fn router(a: &ReplayArgs) -> Result<Option<route::Router>, Fail> {
    if !a.cluster {
        return Ok(None);
    }
    let target = connect::target(&a.conn, "replay").map_err(|e| Fail(1, e))?;
    let auth = connect::auth(&a.conn);
    route::Router::new(&target, a.conn.host(), auth.as_deref())
        .map(Some)
        .map_err(|e| Fail(1, e))
}

fn trace_error(path: &Path, e: &impl std::fmt::Display) -> String {
    format!("cannot read the trace {}: {e}", path.display())
}

/// `--dry-run`: one line per entry scheduled or skipped.
struct DryRun<W: Write> {
    out: W,
    failed: Option<std::io::Error>,
    /// `--cluster`: every node's `host:port`, printed after the command it is routed to.
    nodes: Vec<String>,
}

impl<W: Write> Sink for DryRun<W> {
    fn send(&mut self, s: &Send<'_>, sched: &Scheduler) -> Result<(), String> {
        let due = match s.due_ns {
            Some(ns) => format!("{}.{:03}", ns / 1000, ns % 1000),
            None => "max".into(),
        };
        let name = sched
            .names
            .get(s.name as usize)
            .map_or("SELECT (added)", String::as_str);
        let warm = if s.measured || s.name == schedule::ADDED {
            ""
        } else {
            "\twarmup"
        };
        let node = match self.nodes.get(usize::from(s.node)) {
            Some(n) => format!("\tnode {n}"),
            None => String::new(),
        };
        if let Err(e) = writeln!(
            self.out,
            "{}\t{due}\tconn {}\tdb {}\t{name}{warm}{node}",
            s.seq, s.conn, s.db
        ) {
            self.failed.get_or_insert(e);
            return Err("stdout closed".into());
        }
        Ok(())
    }

    fn skip(&mut self, seq: u64, reason: &str) {
        if let Err(e) = writeln!(self.out, "{seq}\tskip\t{reason}") {
            self.failed.get_or_insert(e);
        }
    }
}

fn dry_run(a: &ReplayArgs) -> Result<u8, Fail> {
    let traces = open_traces(a)?;
    let mut sched = Scheduler::new(a);
    let stdout = std::io::stdout();
    let mut router = router(a)?;
    let mut sink = DryRun {
        out: BufWriter::new(stdout.lock()),
        failed: None,
        nodes: router
            .as_ref()
            .map_or(Vec::new(), |r| r.node_names().to_vec()),
    };
    let _ = writeln!(
        sink.out,
        "# seq\tintended send time (us from the start)\tconnection\tdatabase\tcommand"
    );
    let never = AtomicBool::new(false);
    let driven = drive_routed(a, traces, &mut sched, &mut sink, router.as_mut(), &never);
    if sink.failed.is_some() {
        return Ok(0);
    }
    driven?;
    let c = &sched.counts;
    let _ = writeln!(
        sink.out,
        "# {} entries, {} to send on {} connections, span {:.6} s, skipped {:?}, from scripts {}",
        c.entries,
        c.sent - router.as_ref().map_or(0, |r| r.not_sent),
        sched.connections(),
        sched.span_us as f64 / 1e6,
        c.filtered.skipped,
        c.filtered.from_scripts
    );
    let _ = sink.out.flush();
    Ok(0)
}

/// The live replay's side of the schedule: encodes each command into its thread's chunk, and
/// holds back commands due more than [`LOOKAHEAD`] from now.
struct Live {
    txs: Vec<SyncSender<Chunk>>,
    pending: Vec<Chunk>,
    start: Instant,
    stop: Arc<AtomicBool>,
    /// Raised by a thread whose failure ends the replay (without `-e`).
    failed: Arc<AtomicBool>,
    /// The latest intended send time handed over (ns from `start`): the schedule's end, which
    /// the replay lasts until at least, as a benchmark lasts its `--duration`.
    last_due_ns: u64,
    /// `--json FILE`'s journal, written as seconds complete (`journal`).
    journal: Option<journal::ReplayJournal>,
}

/// Handing a chunk to a thread that has ended: the thread's own error says why, and is shown
/// instead when it has one (`run`'s end).
const THREAD_STOPPED: &str =
    "a replay thread stopped before the trace ended (its connection failed without an error)";

impl Live {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.failed.load(Ordering::Relaxed)
    }

    fn hand_over(&mut self, w: usize) -> Result<(), String> {
        if self.pending[w].jobs.is_empty() {
            return Ok(());
        }
        let next = Chunk::with_capacity(CHUNK_JOBS, CHUNK_FILL);
        let chunk = std::mem::replace(&mut self.pending[w], next);
        self.txs[w]
            .send(chunk)
            .map_err(|_| THREAD_STOPPED.to_string())
    }

    /// `sched`: the trace's commands so far (the journal names each second's by them).
    fn hand_over_all(&mut self, sched: &Scheduler) -> Result<(), String> {
        // Also every ≤ 50 ms while the schedule waits: the journal's completed seconds.
        journal::ReplayJournal::poll(&mut self.journal, sched);
        (0..self.txs.len()).try_for_each(|w| self.hand_over(w))
    }
}

impl Sink for Live {
    /// Holds `s` back until [`LOOKAHEAD`] before its time, handing over what is ready meanwhile.
    fn wait(&mut self, s: &Send<'_>, sched: &Scheduler) -> Result<(), String> {
        if let Some(ns) = s.due_ns {
            let due = self.start + Duration::from_nanos(ns);
            loop {
                let now = Instant::now();
                if due <= now + LOOKAHEAD {
                    break;
                }
                self.hand_over_all(sched)?;
                if self.stopped() {
                    return Err("stopped".into());
                }
                std::thread::sleep((due - now - LOOKAHEAD).min(Duration::from_millis(50)));
            }
        }
        Ok(())
    }

    fn send(&mut self, s: &Send<'_>, sched: &Scheduler) -> Result<(), String> {
        self.wait(s, sched)?;
        if self.stopped() {
            return Err("stopped".into());
        }
        self.last_due_ns = self.last_due_ns.max(s.due_ns.unwrap_or(0));
        let w = s.conn as usize % self.txs.len();
        let chunk = &mut self.pending[w];
        let start = chunk.bytes.len();
        resp::encode_command(&mut chunk.bytes, s.args);
        chunk.jobs.push(Job {
            due_ns: s.due_ns,
            conn: s.conn,
            node: s.node,
            name: s.name,
            measured: s.measured,
            select: filter::selected_db(s.args),
            start: start as u32,
            end: chunk.bytes.len() as u32,
        });
        if chunk.jobs.len() >= CHUNK_JOBS || chunk.bytes.len() >= CHUNK_BYTES {
            self.hand_over(w)?;
        }
        Ok(())
    }

    fn skip(&mut self, _: u64, _: &str) {}
}

/// Ctrl-C and SIGTERM raise `stop` (the partial report follows); `terminated` tells them apart.
fn signals() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let terminated = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, terminated.clone());
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, stop.clone());
        let _ = signal_hook::flag::register(signal, stop.clone());
    }
    (stop, terminated)
}

fn replay(a: &ReplayArgs, argv: &[OsString]) -> Result<u8, Fail> {
    // A trace that cannot be opened is the user's mistake: say so before touching the server.
    // Opened once: this reader is the one the replay reads.
    let traces = open_traces(a)?;
    let out = output::Outputs::open(a)?;
    let (endpoint, feed) = journal::listen(a)?;
    let (target, auth) = checked_target(a)?;
    let mut router = router(a)?;
    // Re-reads the slot map while the replay runs (every second, and after a MOVED).
    let refresher = router.as_ref().map(route::Router::refresher);
    let (stop, terminated) = signals();
    let threads = thread_count(a);
    let wall_start = SystemTime::now();
    let start = Instant::now() + LOOKAHEAD;
    let measure_start = measure_start(a, start);
    // With a journal the threads' seconds carry their full-precision parts (`journal`).
    let journal_path = journal::path(a);
    let timeline: crate::metrics::SharedTimeline = Arc::default();
    timeline.lock().unwrap_or_else(|e| e.into_inner()).exact = journal_path.is_some();
    let tids: Vec<Arc<AtomicU64>> = (0..threads).map(|_| Arc::default()).collect();
    let failed: Arc<AtomicBool> = Arc::default();
    let policy = match a.keep_going {
        true => crate::engine::ErrorPolicy::Count,
        false => crate::engine::ErrorPolicy::Abort,
    };
    let (txs, handles) = spawn_threads(&tids, |tid| worker::Setup {
        target: target.clone(),
        cluster: router.as_ref().map(|r| Arc::clone(r.shared())),
        auth: auth.clone(),
        start,
        measure_start,
        timeline: Arc::clone(&timeline),
        stop: Arc::clone(&stop),
        failed: Arc::clone(&failed),
        timeout: a.timeout,
        policy,
        tid,
    });
    let mut sched = Scheduler::new(a);
    let started = wall_start + measure_start.saturating_duration_since(start - LOOKAHEAD);
    let journal = journal::ReplayJournal::open(
        journal_path,
        || output::head(a, argv, &sched, (wall_start, threads)),
        feed.clone(),
        (Arc::clone(&timeline), tids),
        (
            measure_start,
            Some(crate::timestamp::rfc3339_micros(started)),
        ),
    )?;
    let mut live = Live {
        pending: (0..threads).map(|_| Chunk::default()).collect(),
        txs,
        start,
        stop: Arc::clone(&stop),
        failed,
        last_due_ns: 0,
        journal,
    };
    let driven = drive_routed(a, traces, &mut sched, &mut live, router.as_mut(), &stop)
        .and_then(|()| live.hand_over_all(&sched).map_err(|e| Fail(1, e)));
    let journal = live.journal.take();
    let schedule_end = start + Duration::from_nanos(live.last_due_ns);
    drop(live);
    let (mut result, slip, connections, fatal, last, redirects) = gather(handles, &sched.names)?;
    drop(refresher);
    let cluster = router.map(|r| r.into_record(redirects));
    result.timeline = std::mem::take(&mut *timeline.lock().unwrap_or_else(|e| e.into_inner()));
    let interrupted = stop.load(Ordering::Relaxed);
    // The benchmark's rule (`engine::runner`): throughput is over the test's span. Commands still
    // unanswered (a server that stopped answering), a signal or a failure mean it lasted until
    // now; else until its last command settled, and at least until the schedule's last intended
    // send (a partition that never heals leaves no reply after it began, yet the replay went on).
    let settled = !interrupted && fatal.is_none() && result.unanswered == 0;
    let schedule_end = a.speed.due_ns(0).map(|_| schedule_end);
    result.elapsed = span_end(settled, last, schedule_end).saturating_duration_since(measure_start);
    result.started_at = Some(started);
    result.outcome = outcome(interrupted, &terminated, fatal.is_some() || driven.is_err());
    let facts = output::Facts {
        args: a,
        argv,
        sched: &sched,
        slip: &slip,
        connections,
        threads,
        wall_start,
        fatal: fatal.as_deref(),
        cluster: cluster.as_ref(),
    };
    out.finish(&result, &facts)?;
    if let Some(j) = journal {
        j.remove()?;
    }
    journal::end_live(endpoint, &result, a, &stop);
    ended(
        fatal,
        driven.err().filter(|_| !interrupted),
        &result.outcome,
    )
}

/// The replay's exit: its fatal failure, else how driving it failed (not when a signal stopped
/// it), else the code of its outcome.
fn ended(fatal: Option<String>, driving: Option<Fail>, outcome: &Outcome) -> Result<u8, Fail> {
    match (fatal, driving) {
        (Some(f), _) => Err(Fail(1, f)),
        (None, Some(f)) => Err(f),
        (None, None) => Ok(exit_code(outcome)),
    }
}

/// `AUTH`'s arguments (user and password, or the password), if any.
type Credentials = Option<Vec<Vec<u8>>>;

/// The target and its credentials, checked (connecting and authenticating once) before the trace
/// is read.
fn checked_target(a: &ReplayArgs) -> Result<(crate::engine::Target, Credentials), Fail> {
    let target = connect::target(&a.conn, "replay").map_err(|e| Fail(1, e))?;
    let auth = connect::auth(&a.conn);
    crate::engine::control::ControlConn::connect_auth(&target, auth.as_deref())
        .map_err(|e| Fail(1, e.to_string()))?;
    Ok((target, auth))
}

/// When the replay's span ends: now, unless it `settled` (every command answered, no signal, no
/// failure); then when its last command settled, and at least at the schedule's last intended
/// send (a partition that never heals leaves no reply after it began, yet the replay went on).
fn span_end(settled: bool, last: Option<Instant>, schedule_end: Option<Instant>) -> Instant {
    let now = Instant::now();
    if !settled {
        return now;
    }
    last.max(schedule_end).unwrap_or(now).min(now)
}

/// The exit code of a replay that ended `outcome` without an error: 130 or 143 when a signal
/// stopped it, as a shell reports a process killed by it.
fn exit_code(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::Interrupted(Signal::Terminate) => 143,
        Outcome::Interrupted(Signal::Interrupt) => 130,
        _ => 0,
    }
}

/// When the measured time begins, the warmup's end after `start`. `max` sends at once, not from
/// `start`: its measured time begins now (else a replay shorter than the lookahead ends before
/// `start` and measures 0 s, 0 requests per second).
fn measure_start(a: &ReplayArgs, start: Instant) -> Instant {
    a.speed
        .due_ns(a.warmup_us)
        .map_or(start - LOOKAHEAD, |ns| start + Duration::from_nanos(ns))
}

/// `--threads`, else one per core, at most 64.
fn thread_count(a: &ReplayArgs) -> usize {
    a.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64)
}

/// The replay threads, one per `tids` entry (where each publishes its kernel id), each with its
/// queue of chunks and the setup `setup` makes for it.
fn spawn_threads(
    tids: &[Arc<AtomicU64>],
    setup: impl Fn(Arc<AtomicU64>) -> worker::Setup,
) -> (
    Vec<SyncSender<Chunk>>,
    Vec<std::thread::JoinHandle<worker::Outcome>>,
) {
    let mut txs = Vec::new();
    let mut handles = Vec::new();
    for tid in tids {
        let (tx, rx) = sync_channel(QUEUED_CHUNKS);
        let setup = setup(Arc::clone(tid));
        txs.push(tx);
        handles.push(std::thread::spawn(move || worker::run(setup, rx)));
    }
    (txs, handles)
}

/// How the replay ended: stopped by a signal (which), failed, or completed.
fn outcome(interrupted: bool, terminated: &AtomicBool, failed: bool) -> Outcome {
    if interrupted {
        Outcome::Interrupted(if terminated.load(Ordering::Relaxed) {
            Signal::Terminate
        } else {
            Signal::Interrupt
        })
    } else if failed {
        Outcome::Aborted
    } else {
        Outcome::Completed
    }
}

/// What the threads measured, added up: the test's result (per-command figures by name), the
/// schedule's seconds, connections opened, the first fatal error, the last settled request.
type Gathered = (
    TestResult,
    Vec<SlipSecond>,
    u64,
    Option<String>,
    Option<Instant>,
    (u64, u64),
);

fn gather(
    handles: Vec<std::thread::JoinHandle<worker::Outcome>>,
    names: &[String],
) -> Result<Gathered, Fail> {
    let mut result = TestResult::empty("REPLAY", None, Outcome::Completed);
    result.commands = names.iter().map(|n| CommandResult::new(n)).collect();
    let mut slip: Vec<SlipSecond> = Vec::new();
    let mut connections = 0;
    let mut fatal = None;
    let mut last = None;
    let mut redirects = (0, 0);
    for h in handles {
        let o = h
            .join()
            .map_err(|_| Fail(1, "a replay thread panicked".into()))?;
        let rec = &o.recorder;
        result.add_recorded(rec);
        result.issued += o.issued;
        result.unanswered += rec.unanswered;
        result.reconnect_attempts += rec.reconnect_attempts;
        result.reconnects += rec.reconnects;
        result.reconnect_refusals += rec.reconnect_refusals;
        result.client_threads.push(o.cpu);
        last = last.max(rec.last_reply).max(rec.last_failure);
        worker::merge_slip(&mut slip, &o.slip);
        connections += o.connections;
        fatal = fatal.or(o.fatal);
        redirects = (redirects.0 + o.moved, redirects.1 + o.ask);
    }
    Ok((result, slip, connections, fatal, last, redirects))
}
