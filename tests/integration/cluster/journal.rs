//! Issue 22 in cluster mode: a `--cluster --json` run killed by SIGKILL is recovered with what a
//! Ctrl-C record of a cluster test holds: every node's figures (adding up to the test's), the
//! redirects, and a server block per benchmark node from the watch's samples.

use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Cluster;
use crate::harness::{TempDir, run_respbench};

#[test]
fn a_killed_cluster_run_recovers_its_nodes_and_server_blocks() {
    let c = Cluster::start();
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.partial");
    let out = dir.path().join("recovered.json");
    let run = c.entry().spawn_bench(&[
        "--cluster",
        "-t",
        "set",
        "-c",
        "2",
        "--duration",
        "20",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Killed once the journal holds three seconds (bounded wait: a busy machine takes a while
    // to form the cluster's connections, so the bound is generous and the wait is checked).
    let until = Instant::now() + Duration::from_secs(90);
    let mut seconds = 0;
    while Instant::now() < until && seconds < 3 {
        // Whole lines only: a line seen before all of it has landed may be torn by the kill,
        // and recover drops a torn last line.
        let text = std::fs::read_to_string(&journal).unwrap_or_default();
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        seconds = whole.matches("\"kind\":\"second\"").count();
        thread::sleep(Duration::from_millis(50));
    }
    assert!(
        seconds >= 3,
        "the journal held {seconds} seconds after 90 s"
    );
    run.signal(libc::SIGKILL);
    let killed = run.finish(Duration::from_secs(10));
    assert_eq!(killed.code, None, "killed by a signal");
    let args: Vec<String> = [
        "recover",
        journal.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    run_respbench(&args, None).assert_success();
    crate::record::check_with_python(&out);
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let test = &rec["tests"][0];
    assert_eq!(test["outcome"], "interrupted", "{test}");
    let completed = test["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 0);
    let nodes = test["nodes"].as_array().expect("per-node figures");
    let primaries: Vec<&Value> = nodes.iter().filter(|n| n["role"] == "primary").collect();
    assert_eq!(primaries.len(), 3, "{nodes:?}");
    let sum: u64 = nodes.iter().map(|n| n["completed"].as_u64().unwrap()).sum();
    assert_eq!(
        sum, completed,
        "the nodes' requests add up to the test's: {nodes:?}"
    );
    for n in &primaries {
        assert!(n["completed"].as_u64().unwrap() > 0, "{n}");
        assert!(n["latency_us"]["p50"].as_f64().unwrap() > 0.0, "{n}");
        assert!(!n["histogram"].as_str().unwrap().is_empty(), "{n}");
    }
    assert!(
        test["requests"]["redirects"]["MOVED"].as_u64().is_some(),
        "{}",
        test["requests"]
    );
    let servers = test["server"].as_array().expect("server blocks");
    assert_eq!(servers.len(), 3, "one per benchmark node: {servers:?}");
    for s in servers {
        assert!(s["seconds"].as_array().unwrap().len() >= 2, "{s}");
    }
    assert!(
        !test["client_threads_cpu_pct"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}
