//! `--cluster` with the delivery modes (issue 26): sharded pub/sub with channels spread over
//! every primary, each channel's `SSUBSCRIBE` and `SPUBLISH` on the node owning its slot, every
//! message delivered exactly once to each of its subscribers, and the record's per-node counts
//! equal to what each node's `INFO commandstats` says it ran; and a stream routed to the node
//! owning its key, its group there. On Valkey 9.1 and Redis 7.0.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{Cluster, key_slot};
use crate::harness::{Client, ServerKind, TempDir};

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

fn run_json(c: &Cluster, dir: &TempDir, name: &str, args: &[&str]) -> Json {
    let json = dir.path().join(name);
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    c.bench(&all).assert_success();
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
