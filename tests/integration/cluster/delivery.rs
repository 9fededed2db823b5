//! `--cluster` with the delivery modes (issue 26): sharded pub/sub with channels spread over
//! every primary, each channel's `SSUBSCRIBE` and `SPUBLISH` on the node owning its slot, every
//! message delivered exactly once to each of its subscribers, and the record's per-node counts
//! equal to what each node's `INFO commandstats` says it ran; and a stream routed to the node
//! owning its key, its group there; a channel whose slot is moved mid-run followed by its
//! publisher (`MOVED`) and its subscribers (`sunsubscribe`, then `SSUBSCRIBE` on the new node).
//! On Valkey 9.1 and Redis 7.0.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::{Cluster, key_slot};
use crate::harness::{Client, ServerKind, TempDir, wait_until};
use crate::record::check_with_python;

/// `cmdstat_<command>`'s calls on the node at `port` (0 when it never ran).
fn calls(port: u16, command: &str) -> u64 {
    let info = Client::connect(port)
        .bulk(&["INFO", "commandstats"])
        .expect("INFO commandstats");
    let info = String::from_utf8(info).unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// Runs respbench in cluster mode with `--json`; the record, checked against the schema.
fn run_json(c: &Cluster, dir: &TempDir, name: &str, args: &[&str]) -> Json {
    let json = dir.path().join(name);
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    c.bench(&all).assert_success();
    // The record's per-node block and redirect counts are in the schema.
    check_with_python(&json);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The port of a record's `host:port`.
fn port(node: &Json) -> u16 {
    let name = node["node"].as_str().unwrap();
    name.rsplit(':').next().unwrap().parse().unwrap()
}

fn delivery_in_a_cluster(kind: ServerKind) {
    let c = Cluster::start_of(kind, None, "3000");
    let dir = TempDir::new();
    // 12 channels, 2 subscribers each, 100 messages each: the channels' slots are spread over
    // all three primaries (checked below, so the test cannot pass on one node).
    let channels = 12u32;
    let mut owners: BTreeMap<u16, u64> = BTreeMap::new();
    for k in 0..channels {
        let slot = key_slot(format!("respbench:{k}:ch").as_bytes());
        *owners.entry(c.owner(slot)).or_default() += 1;
    }
    assert_eq!(
        owners.len(),
        3,
        "the channels cover every primary: {owners:?}"
    );
    let rec = run_json(
        &c,
        &dir,
        "pubsub.json",
        &[
            "--pubsub",
            "24",
            "--sharded",
            "--channels",
            "12",
            "--publishers",
            "2",
            "-n",
            "1200",
            "--rps",
            "1200",
        ],
    );
    let d = &rec["tests"][0]["delivery"];
    assert_eq!(d["subscribe"], "sharded", "{d}");
    assert_eq!(d["published"], 1200, "{d}");
    assert_eq!(d["expected"], 2400, "{d}");
    assert_eq!(
        d["delivered"], 2400,
        "every message once to each of its 2 subscribers: {d}"
    );
    assert_eq!(
        (d["lost"].as_u64(), d["duplicates"].as_u64()),
        (Some(0), Some(0)),
        "{d}"
    );
    assert_eq!(
        d["fanout"], 2400,
        "the nodes counted 2 receivers per message: {d}"
    );
    assert_eq!(d["moved"], 0, "no slot moved: {d}");
    let nodes = d["nodes"].as_array().expect("per-node figures");
    assert_eq!(nodes.len(), 3, "{d}");
    for n in nodes {
        let p = port(n);
        let owned = owners[&p];
        assert_eq!(n["channels"].as_u64(), Some(owned), "{n}");
        assert_eq!(n["receivers"].as_u64(), Some(owned * 2), "{n}");
        assert_eq!(n["published"].as_u64(), Some(owned * 100), "{n}");
        assert_eq!(n["delivered"].as_u64(), Some(owned * 200), "{n}");
        // The node's own count: every SPUBLISH went to the node owning its channel.
        assert_eq!(calls(p, "spublish"), owned * 100, "SPUBLISH calls on {p}");
        assert_eq!(calls(p, "ssubscribe"), owned * 2, "SSUBSCRIBE calls on {p}");
    }
    let completed = rec["tests"][0]["requests"]["completed"].as_u64();
    assert_eq!(
        completed,
        Some(2400),
        "the test's completions are the deliveries"
    );

    // The stream goes to the node owning its key, with its group.
    let home = c.owner(key_slot(b"respbench:stream"));
    let rec = run_json(
        &c,
        &dir,
        "stream.json",
        &["--stream", "2", "-n", "300", "--rps", "600"],
    );
    let d = &rec["tests"][0]["delivery"];
    assert_eq!(
        (d["delivered"].as_u64(), d["acked"].as_u64()),
        (Some(300), Some(300)),
        "{d}"
    );
    let nodes = d["nodes"].as_array().expect("per-node figures");
    assert_eq!(nodes.len(), 1, "{d}");
    assert_eq!(port(&nodes[0]), home, "{d}");
    assert_eq!(nodes[0]["published"].as_u64(), Some(300), "{d}");
    let xlen = Client::connect(home).cmd(&["XLEN", "respbench:stream"]);
    assert_eq!(xlen, resp::Value::Integer(300), "the stream is on its node");
}

#[test]
fn sharded_pubsub_and_streams_route_by_slot_valkey() {
    delivery_in_a_cluster(ServerKind::Valkey);
}

#[test]
fn sharded_pubsub_and_streams_route_by_slot_redis() {
    delivery_in_a_cluster(ServerKind::Redis);
}

/// The slot of `respbench:0:ch` moved (empty, so by `CLUSTER SETSLOT … NODE` on every primary,
/// the new owner first with its epoch bumped) while 2 subscribers listen and 1000 messages go
/// out at 200/s: the publisher follows `MOVED`, both subscribers subscribe again on the new
/// node, and messages are delivered there after the move; nothing is delivered twice.
fn a_moved_channel_is_followed(kind: ServerKind) {
    let c = Cluster::start_of(kind, None, "3000");
    let dir = TempDir::new();
    let json = dir.path().join("moved.json");
    let slot = key_slot(b"respbench:0:ch");
    let source = c.owner(slot);
    let primaries = c.primaries();
    let target = *primaries.iter().find(|&&p| p != source).unwrap();
    let run = c.entry().spawn_bench(&[
        "--cluster",
        "--pubsub",
        "2",
        "--sharded",
        "-n",
        "1000",
        "--rps",
        "200",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        wait_until(Duration::from_secs(30), || calls(source, "spublish") >= 100),
        "the run publishes on the channel's node"
    );
    let target_id = Cluster::node_id(target);
    let slot_text = slot.to_string();
    let setslot = |port: u16| {
        let reply =
            Client::connect(port).cmd(&["CLUSTER", "SETSLOT", &slot_text, "NODE", &target_id]);
        assert_eq!(
            reply,
            resp::Value::SimpleString(b"OK".to_vec()),
            "SETSLOT on {port}"
        );
    };
    setslot(target);
    Client::connect(target).cmd(&["CLUSTER", "BUMPEPOCH"]);
    setslot(source);
    for &p in primaries.iter().filter(|&&p| p != source && p != target) {
        setslot(p);
    }
    run.finish(Duration::from_secs(60)).assert_success();
    check_with_python(&json);
    let rec: Json = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let d = &rec["tests"][0]["delivery"];
    let at_source = calls(source, "spublish");
    let at_target = calls(target, "spublish");
    assert_eq!(d["published"], 1000, "{d}");
    assert_eq!(
        at_source + at_target,
        1000,
        "each message acknowledged once, by one node"
    );
    assert!(
        at_target > 0,
        "messages after the move went to the new owner"
    );
    assert!(
        d["moved"].as_u64().unwrap() >= 1,
        "the publisher followed MOVED: {d}"
    );
    assert_eq!(
        d["resubscribed"], 2,
        "both subscribers followed the channel: {d}"
    );
    assert_eq!(
        (d["duplicates"].as_u64(), d["foreign"].as_u64()),
        (Some(0), Some(0)),
        "{d}"
    );
    let (delivered, lost) = (
        d["delivered"].as_u64().unwrap(),
        d["lost"].as_u64().unwrap(),
    );
    assert_eq!(delivered + lost, 2000, "{d}");
    assert!(
        delivered > 2 * at_source,
        "deliveries from the new node after the move: {delivered} delivered, {at_source} \
         published before it: {d}"
    );
    assert!(d["disconnects"].as_array().unwrap().is_empty(), "{d}");
    // Per node, deliveries follow the subscribers: some on the new node, all of them in sum.
    let nodes = d["nodes"].as_array().unwrap();
    let on = |p: u16| nodes.iter().find(|n| port(n) == p).map(|n| &n["delivered"]);
    assert!(
        on(target).and_then(Json::as_u64).is_some_and(|n| n > 0),
        "{d}"
    );
    let sum: u64 = nodes.iter().map(|n| n["delivered"].as_u64().unwrap()).sum();
    assert_eq!(sum, delivered, "{d}");
    let published: u64 = nodes.iter().map(|n| n["published"].as_u64().unwrap()).sum();
    assert_eq!(published, 1000, "{d}");
}

#[test]
fn a_moved_channel_is_followed_valkey() {
    a_moved_channel_is_followed(ServerKind::Valkey);
}

#[test]
fn a_moved_channel_is_followed_redis() {
    a_moved_channel_is_followed(ServerKind::Redis);
}
