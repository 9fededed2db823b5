//! `--connect-storm --cluster`: every connection fetches the topology (`CLUSTER SLOTS`), as a
//! cluster client does after a reconnect, and that stage is timed on its own (issue 26 item 1).

use serde_json::Value as Json;

use super::Cluster;

#[test]
fn a_cluster_storm_times_the_topology_fetch() {
    let c = Cluster::start();
    let out = c.bench(&[
        "--connect-storm",
        "-c",
        "2",
        "-n",
        "30",
        "--json",
        "-",
        "PING",
    ]);
    out.assert_success();
    let doc: Json = serde_json::from_str(&out.stdout).expect("the record is JSON");
    let storm = &doc["storm"];
    assert_eq!(storm["completed"].as_u64(), Some(30), "{storm}");
    let names: Vec<&str> = storm["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .map(|s| s["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["connect", "cluster_slots", "command"], "{storm}");
    let sum: u64 = storm["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .map(|s| s["sum_ns"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        Some(sum),
        storm["total"]["sum_ns"].as_u64(),
        "stages add up"
    );
}
