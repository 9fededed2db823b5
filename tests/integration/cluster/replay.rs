//! `replay --cluster` (issue 25) against a Redis 7.0 and a Valkey 9.1 cluster: every command
//! goes to the primary owning its keys' slot, so every key lands on its owner and the primaries'
//! `INFO commandstats` summed equal the trace's counts; a command whose keys span slots and a
//! MULTI/EXEC block whose keys do are skipped and counted with their reason; an `-ASK` (a slot
//! being migrated) is followed to the importing node and counted; a slot moved during the replay
//! is learned (its later commands go to the new owner, none redirected).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use respbench::cluster::slot::key_slot;
use serde_json::Value as Json;

use super::{Cluster, keys};
use crate::harness::{Client, TempDir, respbench, spawn_respbench, wait_until};

/// The trace, in MONITOR's text: three clients, 60 SET+GET pairs over every slot, an MSET in
/// one slot and one across slots, a MULTI block in one slot and one across slots, an EVAL, a
/// PING, and a SET of `askme` (whose slot the test puts in migration).
fn trace_text() -> String {
    let mut lines: Vec<(u32, String)> = Vec::new();
    for i in 0..60u32 {
        lines.push((i % 3, format!("\"SET\" \"r:{i}\" \"v\"")));
        lines.push((i % 3, format!("\"GET\" \"r:{i}\"")));
    }
    for (c, l) in [
        (0, "\"MSET\" \"{u}a\" \"1\" \"{u}b\" \"2\""),
        (0, "\"MSET\" \"a\" \"1\" \"b\" \"2\""),
        (1, "\"MULTI\""),
        (1, "\"INCR\" \"{c}x\""),
        (1, "\"INCR\" \"{c}x\""),
        (1, "\"EXEC\""),
        (2, "\"MULTI\""),
        (2, "\"SET\" \"a\" \"1\""),
        (2, "\"SET\" \"b\" \"2\""),
        (2, "\"EXEC\""),
        (
            0,
            "\"EVAL\" \"return redis.call('SET', KEYS[1], ARGV[1])\" \"1\" \"{e}k\" \"v\"",
        ),
        (0, "\"PING\""),
        (1, "\"SET\" \"askme\" \"v\""),
    ] {
        lines.push((c, l.to_string()));
    }
    let mut t = String::new();
    for (n, (client, cmd)) in lines.iter().enumerate() {
        let at = 1_700_000_000.0 + n as f64 * 0.001;
        let _ = writeln!(t, "{at:.6} [0 127.0.0.1:{}] {cmd}", 5000 + client);
    }
    t
}

/// `calls` of each command summed over the primaries, names upper case.
fn summed_calls(c: &Cluster) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in c.primaries() {
        let mut client = Client::connect(p);
        for name in ["SET", "GET", "MSET", "INCR", "MULTI", "EXEC", "EVAL"] {
            *out.entry(name.to_string()).or_default() += client.calls(name);
        }
    }
    out
}

fn node_id(port: u16) -> String {
    Cluster::node_id(port)
}

fn replay_routes_by_slot(c: Cluster) {
    let dir = TempDir::new();
    let trace = dir.path().join("c.trace");
    std::fs::write(&trace, trace_text()).unwrap();
    let trace = trace.to_str().unwrap();
    let port = c.entry().port().to_string();

    // The schedule alone: what routing skips, and why.
    let dry = respbench(&["replay", "--cluster", "-p", &port, "--dry-run", trace]);
    assert!(dry.code == Some(0), "{dry:?}");
    let skips = |why: &str| {
        dry.stdout
            .lines()
            .filter(|l| l.split('\t').nth(2) == Some(why))
            .count()
    };
    assert_eq!(skips("CROSSSLOT"), 1, "{}", dry.stdout);
    assert_eq!(skips("MULTI/EXEC across slots"), 4, "{}", dry.stdout);
    // Each scheduled command names the node it goes to: its key's owner.
    for i in [0, 17, 59] {
        let owner = c.owner(key_slot(format!("r:{i}").as_bytes()));
        let seq = 2 * i + 1;
        let line = dry
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{seq}\t")))
            .unwrap_or_else(|| panic!("entry {seq}: {}", dry.stdout));
        assert!(
            line.ends_with(&format!("\tnode 127.0.0.1:{owner}")),
            "{line}"
        );
    }

    // `askme`'s slot being migrated, its key not yet moved: its owner answers -ASK.
    let slot = key_slot(b"askme");
    let src = c.owner(slot);
    let dst = *c.primaries().iter().find(|&&p| p != src).unwrap();
    Client::connect(dst).ok(&[
        "CLUSTER",
        "SETSLOT",
        &slot.to_string(),
        "IMPORTING",
        &node_id(src),
    ]);
    Client::connect(src).ok(&[
        "CLUSTER",
        "SETSLOT",
        &slot.to_string(),
        "MIGRATING",
        &node_id(dst),
    ]);

    let json = dir.path().join("r.json");
    let out = respbench(&[
        "replay",
        "--cluster",
        "-p",
        &port,
        "--speed",
        "max",
        trace,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.code == Some(0), "replay: {out:?}");
    out.assert_stdout_contains("cluster: 128 commands to 3 primaries");
    out.assert_stdout_contains("CROSSSLOT MSET 1, MULTI/EXEC across slots 1 (4 commands)");

    // Every key on the primary that owns its slot, and all of them there.
    let mut found = Vec::new();
    for p in c.primaries() {
        for k in keys(p, "r:*") {
            assert_eq!(c.owner(key_slot(k.as_bytes())), p, "{k} is on {p}");
            found.push(k);
        }
    }
    found.sort();
    let mut want: Vec<String> = (0..60).map(|i| format!("r:{i}")).collect();
    want.sort();
    assert_eq!(found, want);
    let moved_in = Client::connect(dst).cmd(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]);
    assert_eq!(
        moved_in,
        resp::Value::Integer(1),
        "askme went to the importing node"
    );

    // The primaries ran exactly the trace's commands (the script's SET and askme's included).
    let calls = summed_calls(&c);
    let want: BTreeMap<String, u64> = [
        ("SET", 62),
        ("GET", 60),
        ("MSET", 1),
        ("INCR", 2),
        ("MULTI", 1),
        ("EXEC", 1),
        ("EVAL", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(calls, want);

    let doc: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let r = &doc["replay"];
    assert_eq!(r["entries"], 133, "{r}");
    assert_eq!(r["sent"], 128, "{r}");
    let cl = &r["cluster"];
    assert_eq!(cl["crossslot"]["MSET"], 1, "{cl}");
    assert_eq!(cl["multi_across_slots"], 1, "{cl}");
    assert_eq!(cl["multi_commands_skipped"], 4, "{cl}");
    assert_eq!(cl["ask"], 1, "{cl}");
    let routed: u64 = cl["routed"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(routed, 128, "{cl}");
    assert_eq!(doc["target"]["cluster"], true);
    assert_eq!(
        doc["tests"][0]["requests"]["failed"], 0,
        "{}",
        doc["tests"][0]
    );
}

#[test]
fn replay_routes_by_slot_on_redis() {
    replay_routes_by_slot(Cluster::start());
}

#[test]
fn replay_routes_by_slot_on_valkey() {
    replay_routes_by_slot(Cluster::start_valkey());
}

/// A slot that moves while the trace is replayed: its later commands go to the new owner
/// directly, not each through a `-MOVED` on a side connection. The trace: one `INCR` of `{m}k`,
/// then ten more after a 3 s pause; the test moves the key's slot to another primary once the
/// first has run (the router read the slot map before it). The replay's slot map is read again
/// (every second, and at a MOVED), so the ten are routed to the new owner: none redirected.
fn a_moved_slot_is_learned(c: Cluster) {
    let dir = TempDir::new();
    let trace = dir.path().join("m.trace");
    let mut text = String::from("1700000000.000000 [0 127.0.0.1:5000] \"INCR\" \"{m}k\"\n");
    for i in 0..10 {
        let _ = writeln!(
            text,
            "1700000003.{:06} [0 127.0.0.1:5000] \"INCR\" \"{{m}}k\"",
            i * 1000
        );
    }
    std::fs::write(&trace, text).unwrap();
    let json = dir.path().join("m.json");
    let slot = key_slot(b"{m}k");
    let src = c.owner(slot);
    let dst = *c.primaries().iter().find(|&&p| p != src).unwrap();
    let run = spawn_respbench(&[
        "replay",
        "--cluster",
        "-p",
        &c.entry().port().to_string(),
        trace.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        wait_until(Duration::from_secs(20), || {
            Client::connect(src).bulk(&["GET", "{m}k"]).as_deref() == Some(b"1")
        }),
        "the first INCR ran on the slot's owner"
    );
    // The slot moves, with its key, as `valkey-cli --cluster reshard` moves it.
    let slot_s = slot.to_string();
    Client::connect(dst).ok(&["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &node_id(src)]);
    Client::connect(src).ok(&["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &node_id(dst)]);
    let dst_s = dst.to_string();
    Client::connect(src).ok(&[
        "MIGRATE",
        "127.0.0.1",
        &dst_s,
        "",
        "0",
        "5000",
        "KEYS",
        "{m}k",
    ]);
    for p in std::iter::once(dst).chain(c.primaries().into_iter().filter(|&p| p != dst)) {
        Client::connect(p).ok(&["CLUSTER", "SETSLOT", &slot_s, "NODE", &node_id(dst)]);
    }
    assert_eq!(c.owner(slot), dst);
    run.finish(Duration::from_secs(60)).assert_success();

    assert_eq!(
        Client::connect(dst).bulk(&["GET", "{m}k"]).as_deref(),
        Some(&b"11"[..]),
        "every INCR ran, the ten on the new owner"
    );
    let doc: Json = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let cl = &doc["replay"]["cluster"];
    assert_eq!(
        cl["moved"], 0,
        "the later commands were routed by the new map: {cl}"
    );
    assert_eq!(cl["routed"][format!("127.0.0.1:{dst}")], 10, "{cl}");
    assert_eq!(cl["routed"][format!("127.0.0.1:{src}")], 1, "{cl}");
}

#[test]
fn a_moved_slot_is_learned_on_redis() {
    a_moved_slot_is_learned(Cluster::start());
}

#[test]
fn a_moved_slot_is_learned_on_valkey() {
    a_moved_slot_is_learned(Cluster::start_valkey());
}
