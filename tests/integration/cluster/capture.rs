//! A cluster captured and replayed as one (issue 25): MONITOR is per node, so `capture --cluster`
//! captures every primary at once and merges them by time into one trace, and `replay` takes the
//! traces of primaries captured apart and merges them the same way. Against a Redis 7.0 and a
//! Valkey 9.1 cluster:
//!
//! - a workload of two cluster-aware application clients (keys on every primary, a MULTI block,
//!   a Lua script, a pause) is captured both ways (one after the other: a capture's own setup
//!   commands would be traffic in the other's trace); both hold the same commands, and both
//!   schedules (`--dry-run --cluster`) are the same, line for line but the times;
//! - each replay (`--cluster`) makes the primaries run exactly the trace's commands (summed
//!   `INFO commandstats`), every key on the primary that owns it, the counters right;
//! - two traces with the same client address keep their clients apart: a MULTI block in one and
//!   a command of the other's client between its MULTI and EXEC are two clients' (sent, not
//!   held as one block across slots).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use respbench::cluster::slot::key_slot;
use respbench::trace::{Entry, Reader};
use serde_json::Value as Json;

use super::{Cluster, keys};
use crate::harness::{Client, Running, TempDir, respbench, spawn_respbench, wait_until};

/// A cluster-aware application client: one connection per primary, each command sent to the
/// primary owning its key's slot (from a slot map read before the captures began: a `CLUSTER
/// SLOTS` during the workload would be traffic of its own).
struct AppClient<'a> {
    owners: &'a [u16],
    conns: BTreeMap<u16, Client>,
}

impl<'a> AppClient<'a> {
    fn new(owners: &'a [u16]) -> Self {
        Self {
            owners,
            conns: BTreeMap::new(),
        }
    }

    fn on(&mut self, key: &str) -> &mut Client {
        let port = self.owners[usize::from(key_slot(key.as_bytes()))];
        self.conns
            .entry(port)
            .or_insert_with(|| Client::connect(port))
    }
}

/// Slot → the port of its primary.
fn slot_owners(c: &Cluster) -> Vec<u16> {
    let mut owners = vec![0; 16384];
    for (first, last, port, _) in c.ranges() {
        owners[usize::from(first)..=usize::from(last)].fill(port);
    }
    owners
}

/// The workload: 30 SETs and 30 INCRs over every primary from two clients, a MULTI block, a Lua
/// script, and a pause between two halves.
fn workload(owners: &[u16]) {
    let mut a = AppClient::new(owners);
    let mut b = AppClient::new(owners);
    for i in 0..30 {
        if i == 15 {
            std::thread::sleep(Duration::from_millis(300));
        }
        let k = format!("r:{i}");
        a.on(&k).ok(&["SET", &k, "v"]);
        let n = format!("n:{}", i % 5);
        b.on(&n).cmd(&["INCR", &n]);
    }
    let t = a.on("{t}x");
    t.ok(&["MULTI"]);
    t.cmd(&["INCR", "{t}x"]);
    t.cmd(&["INCR", "{t}y"]);
    t.cmd(&["EXEC"]);
    b.on("{e}k").cmd(&[
        "EVAL",
        "return redis.call('SET', KEYS[1], ARGV[1])",
        "1",
        "{e}k",
        "lv",
    ]);
}

/// Commands of the traces by name (upper case), those run by scripts counted too: what the
/// primaries run when the traces are replayed.
fn trace_calls(paths: &[PathBuf]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in paths {
        let mut r = Reader::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut e = Entry::empty();
        while r.next_into(&mut e).unwrap() {
            let name = String::from_utf8_lossy(&e.args().unwrap()[0]).to_ascii_uppercase();
            *out.entry(name).or_default() += 1;
        }
    }
    out
}

/// `calls` of `names` summed over the primaries.
fn primaries_calls(c: &Cluster, names: &[String]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in c.primaries() {
        let mut client = Client::connect(p);
        for name in names {
            *out.entry(name.clone()).or_default() += client.calls(name);
        }
    }
    out
}

/// Empties every primary and zeroes its command counts.
fn reset(c: &Cluster) {
    for p in c.primaries() {
        let mut client = Client::connect(p);
        client.ok(&["FLUSHALL"]);
        client.ok(&["CONFIG", "RESETSTAT"]);
    }
}

/// Replays `traces` with `--cluster` and checks what the primaries ran and hold.
fn replay_and_check(c: &Cluster, traces: &[PathBuf], dir: &Path, label: &str) {
    reset(c);
    let json = dir.join(format!("{label}.json"));
    let mut args = vec![
        "replay".to_string(),
        "--cluster".into(),
        "-p".into(),
        c.entry().port().to_string(),
        "--speed".into(),
        "max".into(),
        "--json".into(),
        json.display().to_string(),
    ];
    args.extend(traces.iter().map(|t| t.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = respbench(&args);
    out.assert_success();
    let want = trace_calls(traces);
    let names: Vec<String> = want.keys().cloned().collect();
    assert_eq!(primaries_calls(c, &names), want, "{label}");
    let mut found = Vec::new();
    for p in c.primaries() {
        for k in keys(p, "r:*") {
            assert_eq!(c.owner(key_slot(k.as_bytes())), p, "{label}: {k} is on {p}");
            found.push(k);
        }
    }
    assert_eq!(found.len(), 30, "{label}: {found:?}");
    for i in 0..5 {
        let n = format!("n:{i}");
        let owner = c.owner(key_slot(n.as_bytes()));
        assert_eq!(
            Client::connect(owner).bulk(&["GET", &n]).as_deref(),
            Some(&b"6"[..]),
            "{label}: {n}"
        );
    }
    let doc: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let cl = &doc["replay"]["cluster"];
    assert_eq!(cl["multi_across_slots"], 0, "{label}: {cl}");
    assert_eq!(
        doc["tests"][0]["requests"]["failed"], 0,
        "{label}: {}",
        doc["tests"][0]
    );
}

/// Waits until each of `primaries` has a MONITOR client.
fn wait_for_monitors(primaries: &[u16]) {
    let monitors = |port: u16| {
        let list = Client::connect(port)
            .bulk(&["CLIENT", "LIST"])
            .unwrap_or_default();
        String::from_utf8_lossy(&list)
            .lines()
            .filter(|l| l.contains(" cmd=monitor"))
            .count()
    };
    assert!(
        wait_until(Duration::from_secs(20), || primaries
            .iter()
            .all(|&p| monitors(p) == 1)),
        "a MONITOR client on every primary"
    );
}

/// Runs the workload while it is captured: by one `capture --cluster` into `dir/cluster.trace`
/// (`apart` false), or by one capture per primary into `dir/PORT.trace`. The traces written.
fn captured(c: &Cluster, owners: &[u16], dir: &Path, apart: bool) -> Vec<PathBuf> {
    // Read before any capture: the test's own CLUSTER SLOTS would be traffic in the trace.
    let primaries = c.primaries();
    let capture = |port: u16, out: &Path| -> Running {
        let (port, out) = (port.to_string(), out.to_str().unwrap());
        let mut args = vec!["capture", "-p", &port, "-o", out, "--duration", "3"];
        if !apart {
            args.push("--cluster");
        }
        spawn_respbench(&args)
    };
    let runs: Vec<(PathBuf, Running)> = if apart {
        primaries
            .iter()
            .map(|&p| {
                let path = dir.join(format!("{p}.trace"));
                let run = capture(p, &path);
                (path, run)
            })
            .collect()
    } else {
        let path = dir.join("cluster.trace");
        let run = capture(c.entry().port(), &path);
        vec![(path, run)]
    };
    wait_for_monitors(&primaries);
    workload(owners);
    runs.into_iter()
        .map(|(path, run)| {
            let out = run.finish(Duration::from_secs(30));
            out.assert_success();
            if !apart {
                out.assert_stderr_contains("commands of 3 primaries in");
            }
            path
        })
        .collect()
}

/// `replay --cluster --dry-run` of `traces`, each line without its intended time (the two
/// captures ran the workload at different times): entry, connection, database, command, node.
fn schedule(c: &Cluster, traces: &[PathBuf]) -> Vec<String> {
    let entry = c.entry().port().to_string();
    let mut args = vec!["replay", "--cluster", "-p", &entry, "--dry-run"];
    args.extend(traces.iter().map(|t| t.to_str().unwrap()));
    let out = respbench(&args);
    out.assert_success();
    out.stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut f: Vec<&str> = l.split('\t').collect();
            if f.len() > 2 && f[1] != "skip" {
                f.remove(1);
            }
            f.join("\t")
        })
        .collect()
}

fn capture_every_primary_and_replay_as_one(c: Cluster) {
    let dir = TempDir::new();
    let owners = slot_owners(&c);
    let whole = captured(&c, &owners, dir.path(), false);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["cluster.trace"], "the parts are merged and removed");
    let parts = captured(&c, &owners, dir.path(), true);
    assert_eq!(parts.len(), 3);
    assert_eq!(
        trace_calls(&whole),
        trace_calls(&parts),
        "the cluster's capture holds what the captures apart hold"
    );
    // The same schedule either way: each command on its client's connection to the node that
    // owns its key, in the order the cluster ran them.
    let merged_schedule = schedule(&c, &whole);
    assert_eq!(merged_schedule, schedule(&c, &parts));
    assert!(merged_schedule.len() > 60, "{merged_schedule:?}");

    replay_and_check(&c, &whole, dir.path(), "merged");
    replay_and_check(&c, &parts, dir.path(), "apart");

    clients_of_two_traces_stay_apart(&c, dir.path());
}

/// Two traces whose clients have the same address: client 0's MULTI block on `{a}` and client
/// 1's SET of `{b}y` between its MULTI and EXEC. Taken as one client, the SET would join the
/// block, whose keys would then span two slots (skipped whole).
fn clients_of_two_traces_stay_apart(c: &Cluster, dir: &Path) {
    reset(c);
    let a = dir.join("a.txt");
    let b = dir.join("b.txt");
    let line =
        |ms: u32, cmd: &str| format!("1700000000.{:06} [0 127.0.0.1:5000] {cmd}\n", ms * 1000);
    std::fs::write(
        &a,
        [
            line(0, "\"MULTI\""),
            line(2, "\"INCR\" \"{a}x\""),
            line(4, "\"EXEC\""),
        ]
        .concat(),
    )
    .unwrap();
    std::fs::write(&b, line(3, "\"SET\" \"{b}y\" \"1\"")).unwrap();
    let json = dir.join("two.json");
    let out = respbench(&[
        "replay",
        "--cluster",
        "-p",
        &c.entry().port().to_string(),
        "--json",
        json.to_str().unwrap(),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    out.assert_success();
    out.assert_stdout_contains("4 entries of 2 traces merged by time");
    let doc: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let r = &doc["replay"];
    assert_eq!(r["clients"], 2, "{r}");
    assert_eq!(r["trace"], "a.txt, b.txt");
    assert_eq!(r["cluster"]["multi_across_slots"], 0, "{r}");
    let get = |key: &str| Client::connect(c.owner(key_slot(key.as_bytes()))).bulk(&["GET", key]);
    assert_eq!(get("{a}x").as_deref(), Some(&b"1"[..]));
    assert_eq!(get("{b}y").as_deref(), Some(&b"1"[..]));
}

#[test]
fn capture_every_primary_and_replay_as_one_on_redis() {
    capture_every_primary_and_replay_as_one(Cluster::start());
}

#[test]
fn capture_every_primary_and_replay_as_one_on_valkey() {
    capture_every_primary_and_replay_as_one(Cluster::start_valkey());
}
