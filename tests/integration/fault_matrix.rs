//! The fault × mode matrix (issue 33): every mode (benchmark, memtier, replay, pub/sub, stream,
//! connection storm, fuzz, fill) against a real Valkey 9.1 that fails the same ways — frozen
//! for 3 s (SIGSTOP, SIGCONT), frozen for good with `--timeout 1`, SIGKILLed and restarted on
//! its port under `-e`, and at `maxclients` — each cell a few seconds of load, run a few at a
//! time. Each cell asserts what the mode promises: it ends within its bound, its record (when
//! it writes one) reads and says the outcome, the outages and the failures by kind, and what it
//! measured is accounted. A mode that lacks a guarantee has the cell's gap written here, so the
//! table says it rather than a test that hides it.
//!
//! With `RESPBENCH_FAULT_TABLE=FILE` the test writes the table of what each cell saw (Markdown)
//! to FILE, between its markers when FILE has them: `RESPBENCH_FAULT_TABLE=docs/faults.md`
//! regenerates the document's table.
//!
//! Partitions (healed, never healed) are not cells here: the network-namespace tests
//! (`netns.rs`, `netfaults.rs`) cover the benchmark engine and replay through a partition, and
//! need root.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::harness::{Running, Server, ServerKind, ServerOptions, TempDir};

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
}

const FAULTS: [Fault; 4] = [
    Fault::Frozen3s,
    Fault::FrozenForGood,
    Fault::Restarted,
    Fault::MaxClients,
];

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
    fn args(self, fault: Fault, port: u16, dir: &Path, json: &Path) -> Vec<String> {
        let port = port.to_string();
        let json = json.to_str().expect("UTF-8 path").to_string();
        // Long enough to outlast a 3 s freeze that starts a second in.
        let secs = if fault == Fault::Frozen3s { "6" } else { "4" };
        let mut a: Vec<String> = match self {
            Mode::Benchmark => s(&["-p", &port, "-t", "set", "-c", "4", "--duration", secs]),
            Mode::Memtier => s(&[
                "memtier",
                "-s",
                "127.0.0.1",
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
        match (fault, self) {
            (Fault::Frozen3s, _) => {}
            (Fault::FrozenForGood, Mode::Memtier) => {}
            (Fault::FrozenForGood, _) => a.extend(s(&["--timeout", "1"])),
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
}

/// The most a cell may take, from the run's start to its end.
const BOUND: Duration = Duration::from_secs(60);

/// Runs one cell: a fresh server, the mode's run, the fault while it runs.
fn cell(mode: Mode, fault: Fault) -> Seen {
    let mut extra = Vec::new();
    if fault == Fault::MaxClients {
        extra = s(&["--maxclients", "4"]);
    }
    let mut server = Server::start_with(ServerOptions {
        kind: ServerKind::Valkey,
        extra,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("r.json");
    let args = mode.args(fault, server.port(), dir.path(), &json);
    let run = Running::spawn_args(&args);
    let started = Instant::now();
    if fault != Fault::MaxClients {
        // The fault once the load is under way (connecting can take seconds on a busy machine).
        let mut c = server.client();
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
    let out = match fault {
        Fault::Frozen3s => {
            server.signal(libc::SIGSTOP);
            thread::sleep(Duration::from_secs(3));
            server.signal(libc::SIGCONT);
            finish(run)
        }
        Fault::FrozenForGood => {
            server.signal(libc::SIGSTOP);
            let out = finish(run);
            server.signal(libc::SIGCONT);
            out
        }
        Fault::Restarted => {
            server.kill_and_restart(Duration::from_secs(1));
            finish(run)
        }
        Fault::MaxClients => finish(run),
    };
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
    let Some(rec) = std::fs::read_to_string(&json)
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
        seen.note = format!(
            "lost {}, receivers dropped {}",
            d["lost"],
            d["disconnects"].as_array().map_or(0, Vec::len)
        );
    }
    if let Some(v) = rec["fuzz"]["verdict"].as_str() {
        seen.note = format!("server {v}");
    }
    seen.outages = t["outages"].as_array().map_or(0, Vec::len);
    let req = &t["requests"];
    if let Some(kinds) = req["errors"].as_object() {
        for (k, v) in kinds {
            seen.failures.insert(k.clone(), v.as_u64().unwrap_or(0));
        }
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
    /// The mode lacks the guarantee: only the bound is asserted, and the table says what is
    /// missing.
    gap: Option<&'static str>,
}

const fn ok(outage: bool, failure: &'static str) -> Expect {
    Expect {
        code: 0,
        outcome: "completed",
        outage,
        failure,
        gap: None,
    }
}

const fn gap(what: &'static str) -> Expect {
    Expect {
        gap: Some(what),
        ..ok(false, "")
    }
}

/// Each cell's promise: the engine's (a benchmark's) unless the mode's own says otherwise.
fn expect(mode: Mode, fault: Fault) -> Expect {
    match (mode, fault) {
        // memtier has no `--timeout` (as memtier_benchmark): the test ends at `--test-time`,
        // its drain bounded, with the outage listed.
        (Mode::Memtier, Fault::FrozenForGood) => ok(true, ""),
        (Mode::Replay, Fault::MaxClients) => gap(
            "the server's `ERR max number of clients reached` is counted as `ERR` and \
             `connection reset`, not `connection refused`",
        ),
        (Mode::PubSub, Fault::MaxClients) => gap(
            "a subscriber refused while subscribing ends the run before it starts (exit 1, \
             one line naming the reset, not maxclients), even under `-e`",
        ),
        (Mode::Storm, Fault::Frozen3s | Fault::Restarted) => {
            gap("no outage listed: a storm's seconds are not read by the outage rule")
        }
        (Mode::Storm, Fault::FrozenForGood) => {
            gap("runs about 35 s for `--duration 4`, outcome completed, exit 0, no outage")
        }
        (Mode::Storm, Fault::MaxClients) => {
            gap("refused connects are in the storm's stages, not the failures by kind")
        }
        // The fuzzer judges the server: a 3 s freeze is inside its hang limit (5 s).
        (Mode::Fuzz, Fault::Frozen3s) => ok(false, ""),
        // A server that hangs or dies under the fuzzer is its finding: exit 1, the record
        // `failed` (its verdict `hung`, `crashed`).
        (Mode::Fuzz, Fault::FrozenForGood | Fault::Restarted) => Expect {
            code: 1,
            outcome: "failed",
            ..ok(false, "")
        },
        (Mode::Fuzz, Fault::MaxClients) => {
            gap("refused connections are not counted; the verdict is `survived`")
        }
        (_, Fault::Frozen3s) => ok(true, ""),
        (_, Fault::FrozenForGood) => Expect {
            code: 1,
            outcome: "aborted",
            ..ok(false, "")
        },
        (_, Fault::Restarted) => ok(true, "connection"),
        (_, Fault::MaxClients) => ok(false, "connection refused"),
    }
}

/// Whether `seen` keeps `want` (with the gap the mode is known to have); the first broken
/// promise otherwise.
fn check(seen: &Seen, want: Expect) -> Result<Option<&'static str>, String> {
    if !seen.ended {
        return Err(format!("did not end within {BOUND:?}"));
    }
    if let Some(what) = want.gap {
        return Ok(Some(what));
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
    Ok(None)
}

type Verdict = Result<Option<&'static str>, String>;

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
            Ok(None) => "kept".to_string(),
            Ok(Some(gap)) => format!("gap: {gap}"),
            Err(e) => format!("**broken: {}**", e.replace('|', "/")),
        }
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

/// Cells run at once (each a server and a run of a few threads).
const PARALLEL: usize = 4;

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
                    let seen = cell(mode, fault);
                    let verdict = check(&seen, expect(mode, fault));
                    let line = row(mode, fault, &seen, &verdict);
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
