//! The fault × mode matrix (issue 33): every mode (benchmark, memtier, replay, pub/sub, stream,
//! connection storm, fuzz, fill) against a real Valkey 9.1 that fails the same ways — frozen
//! for 3 s (SIGSTOP, SIGCONT), frozen for good with `--timeout 1`, SIGKILLed and restarted on
//! its port under `-e`, and at `maxclients` — each cell a few seconds of load, run a few at a
//! time. Each cell asserts what the mode promises: it ends within its bound, its record (when
//! it writes one) reads and says the outcome, the outages and the failures by kind, and what it
//! measured is accounted: the engine's guarantees, which every mode now has (the storm's
//! outages and failures by kind in its block, the fuzzer's refusals in its errors by kind).
//!
//! With `RESPBENCH_FAULT_TABLE=FILE` the test writes the table of what each cell saw (Markdown)
//! to FILE, between its markers when FILE has them: `RESPBENCH_FAULT_TABLE=docs/faults.md`
//! regenerates the document's table.
//!
//! Partitions (healed after 3 s, never healed with `--timeout 1`) are cells too: the server
//! alone in a network namespace of the test's, every packet dropped by a `pfifo limit 0` queue
//! on both ends of the veth pair (`netns.rs`). They need root (as CI runs): without it those
//! cells say "skipped" in the table.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{Client, Running, Server, ServerKind, ServerOptions, TempDir};
use super::netns::NetnsServer;

/// The modes, in the table's order.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Benchmark,
    Memtier,
    Replay,
    PubSub,
    Stream,
    Storm,
    Fuzz,
    Fill,
}

const MODES: [Mode; 8] = [
    Mode::Benchmark,
    Mode::Memtier,
    Mode::Replay,
    Mode::PubSub,
    Mode::Stream,
    Mode::Storm,
    Mode::Fuzz,
    Mode::Fill,
];

/// The faults, in the table's order.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// SIGSTOP once the load is under way, SIGCONT 3 s later.
    Frozen3s,
    /// SIGSTOP for good, the run given `--timeout 1`.
    FrozenForGood,
    /// SIGKILL, and the server started again on its port 1 s later; the run given `-e`.
    Restarted,
    /// The server's `maxclients` below the connections the run opens; the run given `-e`.
    MaxClients,
    /// The network to the server (in a namespace of the test's: `netns.rs`) cut once the load
    /// is under way, every packet dropped, and healed 3 s later (TCP retransmits).
    PartitionHealed,
    /// The network cut for good, the run given `--timeout 1`.
    PartitionForGood,
}

const FAULTS: [Fault; 6] = [
    Fault::Frozen3s,
    Fault::FrozenForGood,
    Fault::Restarted,
    Fault::MaxClients,
    Fault::PartitionHealed,
    Fault::PartitionForGood,
];

impl Fault {
    /// Made in a network namespace (root only: without it the cell is skipped).
    fn partition(self) -> bool {
        matches!(self, Fault::PartitionHealed | Fault::PartitionForGood)
    }
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Benchmark => "benchmark (`-t set`)",
            Mode::Memtier => "memtier",
            Mode::Replay => "replay",
            Mode::PubSub => "`--pubsub`",
            Mode::Stream => "`--stream`",
            Mode::Storm => "`--connect-storm`",
            Mode::Fuzz => "`--fuzz`",
            Mode::Fill => "`--fill`",
        }
    }

    /// The run's arguments: its load (a few seconds of it), the fault's options, and its record.
    fn args(self, fault: Fault, (host, port): (&str, u16), dir: &Path, json: &Path) -> Vec<String> {
        let port = port.to_string();
        let json = json.to_str().expect("UTF-8 path").to_string();
        // Long enough to outlast a 3 s freeze (or partition) that starts a second in.
        let three = matches!(fault, Fault::Frozen3s | Fault::PartitionHealed);
        let secs = if three { "6" } else { "4" };
        let mut a: Vec<String> = match self {
            Mode::Benchmark => s(&["-p", &port, "-t", "set", "-c", "4", "--duration", secs]),
            Mode::Memtier => s(&[
                "memtier",
                "-s",
                host,
                "-p",
                &port,
                "--test-time",
                secs,
                "-c",
                "2",
                "-t",
                "2",
                "--hide-histogram",
            ]),
            Mode::Replay => s(&["replay", "-p", &port]),
            Mode::PubSub => s(&[
                "-p",
                &port,
                "--pubsub",
                "6",
                "--rps",
                "200",
                "--duration",
                secs,
            ]),
            Mode::Stream => s(&[
                "-p",
                &port,
                "--stream",
                "6",
                "--rps",
                "200",
                "--duration",
                secs,
            ]),
            Mode::Storm => s(&[
                "-p",
                &port,
                "--connect-storm",
                "-c",
                "6",
                "--duration",
                secs,
            ]),
            Mode::Fuzz => s(&[
                "-p",
                &port,
                "--fuzz",
                "-c",
                "4",
                "-n",
                "6000",
                "-r",
                "100",
                "--seed",
                "7",
                "--fuzz-exclude",
                "config|resetstat",
            ]),
            Mode::Fill => s(&[
                "-p", &port, "-t", "set", "-r", "150000", "--fill", "-c", "4",
            ]),
        };
        if self != Mode::Memtier {
            let at = usize::from(self == Mode::Replay);
            a.splice(at..at, s(&["-h", host]));
        }
        match (fault, self) {
            (Fault::Frozen3s | Fault::PartitionHealed, _) => {}
            (Fault::FrozenForGood | Fault::PartitionForGood, Mode::Memtier) => {}
            (Fault::FrozenForGood | Fault::PartitionForGood, _) => a.extend(s(&["--timeout", "1"])),
            (Fault::Restarted | Fault::MaxClients, Mode::Memtier) => {
                a.push("--reconnect-on-error".into())
            }
            (Fault::Restarted | Fault::MaxClients, _) => a.push("-e".into()),
        }
        a.extend(["--json".into(), json]);
        // The positional arguments last.
        match self {
            Mode::Replay => {
                let trace = dir.join("t.trace");
                std::fs::write(&trace, trace_text(secs.parse().unwrap())).unwrap();
                a.push(trace.to_str().unwrap().into());
            }
            Mode::Storm => a.push("PING".into()),
            _ => {}
        }
        a
    }
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::Frozen3s => "frozen 3 s",
            Fault::FrozenForGood => "frozen for good, `--timeout 1`",
            Fault::Restarted => "killed and restarted, `-e`",
            Fault::MaxClients => "`maxclients 4`, `-e`",
            Fault::PartitionHealed => "partition healed after 3 s",
            Fault::PartitionForGood => "partition for good, `--timeout 1`",
        }
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// A MONITOR trace of `secs` seconds: 8 clients (more than `maxclients 4` lets in), 200
/// `INCR`s a second.
fn trace_text(secs: u64) -> String {
    let mut text = String::new();
    for i in 0..secs * 200 {
        let us = i * 5000;
        text.push_str(&format!(
            "{}.{:06} [0 c{}] \"INCR\" \"n\"\n",
            1_700_000_000 + us / 1_000_000,
            us % 1_000_000,
            i % 8
        ));
    }
    text
}

/// What one cell saw.
#[derive(Debug, Default)]
struct Seen {
    /// Exit code; `None`: killed by a signal, or did not end within the bound.
    code: Option<i32>,
    ended: bool,
    secs: f64,
    /// The record's first test's outcome (`None`: no record, or no test in it).
    outcome: Option<String>,
    outages: usize,
    /// Failures by kind, as the record counts them.
    failures: BTreeMap<String, u64>,
    completed: u64,
    /// The record's requests add up (issued = completed + failed + unanswered); `None`: it has
    /// no test (the fuzzer's record, or none).
    accounted: Option<bool>,
    /// The last line on stderr.
    said: String,
    /// What the mode's own block says: a delivery test's lost messages and dropped receivers,
    /// the fuzzer's verdict on the server.
    note: String,
    /// A delivery test's receivers dropped.
    dropped: usize,
}

/// The most a cell may take, from the run's start to its end.
const BOUND: Duration = Duration::from_secs(60);

/// The server a cell runs against: a local one, or (partitions) one alone in a network
/// namespace of the test's, reached over a veth pair (`netns.rs`).
enum Target {
    Local(Server),
    Netns(NetnsServer),
}

impl Target {
    /// A fresh Valkey for `fault`; `None` where a partition cannot be made (not root).
    fn start(fault: Fault) -> Option<Target> {
        if fault.partition() {
            return NetnsServer::start(ServerKind::Valkey).map(Target::Netns);
        }
        let mut extra = Vec::new();
        if fault == Fault::MaxClients {
            extra = s(&["--maxclients", "4"]);
        }
        Some(Target::Local(Server::start_with(ServerOptions {
            kind: ServerKind::Valkey,
            extra,
            ..ServerOptions::default()
        })))
    }

    fn address(&self) -> (&str, u16) {
        match self {
            Target::Local(s) => ("127.0.0.1", s.port()),
            Target::Netns(n) => (n.addr(), n.port()),
        }
    }

    fn client(&self) -> Client {
        match self {
            Target::Local(s) => s.client(),
            Target::Netns(n) => Client::try_connect_to(n.addr(), n.port()).expect("connect"),
        }
    }

    /// The fault begins (a restart is over when this returns).
    fn fault_on(&mut self, fault: Fault) {
        match (self, fault) {
            (Target::Local(s), Fault::Frozen3s | Fault::FrozenForGood) => s.signal(libc::SIGSTOP),
            (Target::Local(s), Fault::Restarted) => s.kill_and_restart(Duration::from_secs(1)),
            (Target::Netns(n), _) => n.partition(),
            _ => {}
        }
    }

    /// The fault ends (a frozen server goes on, a partition heals).
    fn fault_off(&mut self) {
        match self {
            Target::Local(s) => s.signal(libc::SIGCONT),
            Target::Netns(n) => n.heal(),
        }
    }
}

/// Runs one cell: a fresh server, the mode's run, the fault while it runs; `None` when the
/// fault cannot be made here (a partition without root: the cell is skipped).
fn cell(mode: Mode, fault: Fault) -> Option<Seen> {
    let mut target = Target::start(fault)?;
    let dir = TempDir::new();
    let json = dir.path().join("r.json");
    let args = mode.args(fault, target.address(), dir.path(), &json);
    let run = Running::spawn_args(&args);
    let started = Instant::now();
    if fault != Fault::MaxClients {
        // The fault once the load is under way (connecting can take seconds on a busy machine).
        let mut c = target.client();
        let base = c.info_u64("stats", "total_commands_processed");
        let deadline = Instant::now() + Duration::from_secs(30);
        while c.info_u64("stats", "total_commands_processed") < base + 50
            && Instant::now() < deadline
        {
            thread::sleep(Duration::from_millis(20));
        }
        drop(c);
        thread::sleep(Duration::from_millis(700));
    }
    let finish = |run: Running| std::panic::catch_unwind(AssertUnwindSafe(|| run.finish(BOUND)));
    target.fault_on(fault);
    let out = match fault {
        Fault::Frozen3s | Fault::PartitionHealed => {
            thread::sleep(Duration::from_secs(3));
            target.fault_off();
            finish(run)
        }
        Fault::FrozenForGood | Fault::PartitionForGood => {
            let out = finish(run);
            target.fault_off();
            out
        }
        Fault::Restarted | Fault::MaxClients => finish(run),
    };
    Some(read(out, started, &json))
}

/// What a cell's run did: how it ended, and its record at `json`.
fn read(out: std::thread::Result<super::harness::Output>, started: Instant, json: &Path) -> Seen {
    let mut seen = Seen {
        secs: started.elapsed().as_secs_f64(),
        ..Seen::default()
    };
    let Ok(out) = out else {
        return seen;
    };
    seen.ended = true;
    seen.code = out.code;
    seen.said = out.stderr.lines().last().unwrap_or("").to_string();
    let Some(rec) = std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return seen;
    };
    let t = &rec["tests"][0];
    seen.outcome = t["outcome"]
        .as_str()
        .or(rec["outcome"].as_str())
        .map(str::to_string);
    let d = &t["delivery"];
    if d.is_object() {
        seen.dropped = d["disconnects"].as_array().map_or(0, Vec::len);
        seen.note = format!("lost {}, receivers dropped {}", d["lost"], seen.dropped);
    }
    if let Some(v) = rec["fuzz"]["verdict"].as_str() {
        seen.note = format!("server {v}");
    }
    // A storm's record has no test: its block holds the outages and the failures by kind in
    // the same shapes; the fuzzer's block its errors by kind.
    let storm = &rec["storm"];
    let outages = if storm.is_object() {
        &storm["outages"]
    } else {
        &t["outages"]
    };
    seen.outages = outages.as_array().map_or(0, Vec::len);
    let req = &t["requests"];
    let kinds = [
        &req["errors"],
        &storm["errors"],
        &rec["fuzz"]["errors_by_kind"],
    ];
    for (k, v) in kinds.iter().filter_map(|k| k.as_object()).flatten() {
        seen.failures.insert(k.clone(), v.as_u64().unwrap_or(0));
    }
    let n = |k: &str| req[k].as_u64();
    seen.completed = n("completed").unwrap_or(0);
    seen.accounted = req.is_object().then(|| {
        match (n("issued"), n("completed"), n("failed"), n("unanswered")) {
            (Some(i), Some(c), Some(f), Some(u)) => c + f + u == i,
            _ => false,
        }
    });
    seen
}

/// What a cell must show.
#[derive(Clone, Copy, Debug)]
struct Expect {
    /// The exit code.
    code: i32,
    /// The record's outcome.
    outcome: &'static str,
    /// An outage is listed.
    outage: bool,
    /// A failure of a kind starting with this is counted (`""`: none needed).
    failure: &'static str,
    /// No failure of this kind is counted (`""`: any may be): at `maxclients`, the server's
    /// `ERR max number of clients reached` is a refused connection, never an `ERR` reply.
    not: &'static str,
    /// The cell's own bound, shorter than [`BOUND`], where a mode once waited past it.
    within: Option<Duration>,
    /// Subscribers are listed as dropped (`--pubsub` at `maxclients`: those the server refused
    /// while subscribing, down from the start and trying again while the run goes on).
    dropped: bool,
}

const fn ok(outage: bool, failure: &'static str) -> Expect {
    Expect {
        code: 0,
        outcome: "completed",
        outage,
        failure,
        not: "",
        within: None,
        dropped: false,
    }
}

/// What every mode does at `maxclients` with `-e`: goes on, the refusals counted as the
/// engine counts them.
const REFUSED: Expect = Expect {
    not: "ERR",
    ..ok(false, "connection refused")
};

/// A frozen server's cell whose run read the server after its load on the control connection
/// (a storm's connection counters, a fill's memory): those reads wait `--timeout` at most, so
/// the run ends well before the control connection's own 30 s read timeout would have passed
/// (it ran 33–37 s when they waited that long; about 5 s now, 20 s is room for a loaded
/// machine).
const WITHIN: Option<Duration> = Some(Duration::from_secs(25));

/// Each cell's promise: the engine's (a benchmark's) unless the mode's own says otherwise. A
/// partition stops replies as a frozen server does, and promises what the freeze does.
fn expect(mode: Mode, fault: Fault) -> Expect {
    let fault = match fault {
        Fault::PartitionHealed => Fault::Frozen3s,
        Fault::PartitionForGood => Fault::FrozenForGood,
        f => f,
    };
    match (mode, fault) {
        // memtier has no `--timeout` (as memtier_benchmark): the test ends at `--test-time`,
        // its drain bounded, with the outage listed.
        (Mode::Memtier, Fault::FrozenForGood) => ok(true, ""),
        // A storm counts its failed connections (what it measures) as a benchmark does under
        // `-e`: a server frozen for good fails each connection at `--timeout`, to the end of
        // `--duration`, listed as an outage until the end.
        (Mode::Storm, Fault::FrozenForGood) => Expect {
            within: WITHIN,
            ..ok(true, "timeout")
        },
        // The refused connects while the server is down.
        (Mode::Storm, Fault::Restarted) => ok(true, "connection refused"),
        // The fuzzer judges the server: a 3 s freeze is inside its hang limit (5 s).
        (Mode::Fuzz, Fault::Frozen3s) => ok(false, ""),
        // A server that hangs or dies under the fuzzer is its finding: exit 1, the record
        // `failed` (its verdict `hung`, `crashed`).
        (Mode::Fuzz, Fault::FrozenForGood | Fault::Restarted) => Expect {
            code: 1,
            outcome: "failed",
            ..ok(false, "")
        },
        // The fuzzer's own error replies include `ERR`s: only the refusals are asked for.
        (Mode::Fuzz, Fault::MaxClients) => ok(false, "connection refused"),
        // Under `-e` a subscriber refused while subscribing is down, not the run's end.
        (Mode::PubSub, Fault::MaxClients) => Expect {
            dropped: true,
            ..REFUSED
        },
        (Mode::Fill, Fault::FrozenForGood) => Expect {
            code: 1,
            outcome: "aborted",
            within: WITHIN,
            ..ok(false, "")
        },
        (_, Fault::Frozen3s | Fault::PartitionHealed) => ok(true, ""),
        (_, Fault::FrozenForGood | Fault::PartitionForGood) => Expect {
            code: 1,
            outcome: "aborted",
            ..ok(false, "")
        },
        (_, Fault::Restarted) => ok(true, "connection"),
        (_, Fault::MaxClients) => REFUSED,
    }
}

/// Whether `seen` keeps `want`; the first broken promise otherwise.
fn check(seen: &Seen, want: Expect) -> Verdict {
    if !seen.ended {
        return Err(format!("did not end within {BOUND:?}"));
    }
    if seen.code != Some(want.code) {
        return Err(format!(
            "exit {:?}, not {}: {}",
            seen.code, want.code, seen.said
        ));
    }
    if seen.outcome.as_deref() != Some(want.outcome) {
        return Err(format!("outcome {:?}, not {}", seen.outcome, want.outcome));
    }
    if seen.accounted == Some(false) {
        return Err("the record's requests do not add up".into());
    }
    if want.outage && seen.outages == 0 {
        return Err("no outage listed".into());
    }
    if !want.failure.is_empty() && !seen.failures.keys().any(|k| k.starts_with(want.failure)) {
        return Err(format!("no {} failure: {:?}", want.failure, seen.failures));
    }
    if !want.not.is_empty() && seen.failures.contains_key(want.not) {
        return Err(format!(
            "{} failures counted: {:?}",
            want.not, seen.failures
        ));
    }
    if want.dropped && seen.dropped == 0 {
        return Err("no receiver listed as dropped".into());
    }
    if let Some(within) = want.within
        && seen.secs > within.as_secs_f64()
    {
        return Err(format!(
            "ended after {:.0} s, not within {within:?}",
            seen.secs
        ));
    }
    Ok(())
}

type Verdict = Result<(), String>;

/// The table's row for a cell.
fn row(mode: Mode, fault: Fault, seen: &Seen, verdict: &Verdict) -> String {
    let failures: Vec<String> = seen
        .failures
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.0} s | {} |",
        mode.name(),
        fault.name(),
        seen.code.map_or("-".into(), |c| c.to_string()),
        seen.outcome.as_deref().unwrap_or("no record"),
        seen.outages,
        if failures.is_empty() {
            "none".into()
        } else {
            failures.join(", ")
        },
        if seen.note.is_empty() { "" } else { &seen.note },
        seen.secs,
        match verdict {
            Ok(()) => "kept".to_string(),
            Err(e) => format!("**broken: {}**", e.replace('|', "/")),
        }
    )
}

/// The table's row for a cell that could not run here (a partition without root).
fn skipped(mode: Mode, fault: Fault) -> String {
    format!(
        "| {} | {} | - | - | - | - | - | - | skipped: a partition needs root |",
        mode.name(),
        fault.name()
    )
}

/// The markers around the table in a document (`docs/faults.md`).
const MARKS: (&str, &str) = ("<!-- fault-matrix -->\n", "<!-- /fault-matrix -->");

/// Writes `table` to `path`: between the markers when the file has them (so
/// `RESPBENCH_FAULT_TABLE=docs/faults.md` regenerates the document's table), else the whole file.
fn write_table(path: &Path, table: &str) {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let text = match (old.find(MARKS.0), old.find(MARKS.1)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{}{table}{}", &old[..a], MARKS.0, &old[b..])
        }
        _ => table.to_string(),
    };
    std::fs::write(path, text).expect("RESPBENCH_FAULT_TABLE is writable");
}

/// Cells run at once (each a server and a run of a few threads, mostly waiting on a fault).
const PARALLEL: usize = 6;

#[test]
fn every_mode_through_every_fault_ends_in_bounds_with_an_honest_record() {
    let cells: Vec<(Mode, Fault)> = MODES
        .iter()
        .flat_map(|&m| FAULTS.iter().map(move |&f| (m, f)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, String, Verdict)>> = Mutex::default();
    thread::scope(|sc| {
        for _ in 0..PARALLEL {
            sc.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(mode, fault)) = cells.get(k) else {
                        break;
                    };
                    let (line, verdict) = match cell(mode, fault) {
                        Some(seen) => {
                            let verdict = check(&seen, expect(mode, fault));
                            (row(mode, fault, &seen, &verdict), verdict)
                        }
                        None => (skipped(mode, fault), Ok(())),
                    };
                    results.lock().unwrap().push((k, line, verdict));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let mut table = String::from(
        "| mode | fault | exit | outcome | outages | failures by kind | the mode's own | ended after | promise |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for (_, line, _) in &results {
        table.push_str(line);
        table.push('\n');
    }
    if let Ok(path) = std::env::var("RESPBENCH_FAULT_TABLE") {
        write_table(Path::new(&path), &table);
    }
    let broken: Vec<&String> = results
        .iter()
        .filter(|r| r.2.is_err())
        .map(|r| &r.1)
        .collect();
    assert!(
        broken.is_empty(),
        "cells that broke their promise:\n{table}"
    );
}
