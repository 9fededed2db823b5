//! `--cluster` against a real cluster: 3 primaries + 3 replicas of Debian's redis-server on
//! loopback ports, created with `redis-cli --cluster create` and torn down after each test.

use std::process::Command;
use std::thread;
use std::time::Duration;

use resp::Value;
use respbench::cluster::slot::key_slot;

use crate::harness::{
    Client, Output, Running, Server, ServerKind, ServerOptions, ServerTls, TempDir, TestCerts,
    free_port, wait_until,
};

mod allkeys;
mod capture;
mod delivery;
mod drift;
mod journal;
mod memtier;
mod replay;
mod storm;

/// A cluster-enabled server with its bus on port `bus`; with `certs`, it also listens with TLS
/// and its bus and replication use TLS. `node_timeout`: `cluster-node-timeout` in ms (how long
/// until a dead primary's replica is elected).
fn cluster_node(bus: u16, certs: Option<&TestCerts>, node_timeout: &str) -> Server {
    cluster_node_of(ServerKind::Redis, bus, certs, node_timeout)
}

/// [`cluster_node`] of the server `kind` (Valkey 9.1 has no TLS: `certs` only with Redis).
fn cluster_node_of(
    kind: ServerKind,
    bus: u16,
    certs: Option<&TestCerts>,
    node_timeout: &str,
) -> Server {
    let mut extra: Vec<String> = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        node_timeout,
    ]
    .map(String::from)
    .to_vec();
    extra.extend(["--cluster-port".to_string(), bus.to_string()]);
    if certs.is_some() {
        extra.extend(["--tls-cluster", "yes", "--tls-replication", "yes"].map(String::from));
    }
    Server::start_with(ServerOptions {
        tls: certs.map(ServerTls::new),
        extra,
        kind,
        ..ServerOptions::default()
    })
}

/// A running cluster; its servers are stopped (by PID) on drop.
struct Cluster {
    nodes: Vec<Server>,
}

/// One `CLUSTER SLOTS` range: first, last, primary port, replica ports.
type Range = (u16, u16, u16, Vec<u16>);

impl Cluster {
    fn start() -> Cluster {
        Cluster::start_with(None, "3000")
    }

    /// With `cluster-node-timeout 1000`: a dead primary's replica takes over within seconds.
    fn start_fast() -> Cluster {
        Cluster::start_with(None, "1000")
    }

    /// With `certs`, every node also listens with TLS and the cluster bus and replication use
    /// TLS (`--tls-cluster yes --tls-replication yes`).
    fn start_with(certs: Option<&TestCerts>, node_timeout: &str) -> Cluster {
        Cluster::start_of(ServerKind::Redis, certs, node_timeout)
    }

    /// A cluster of Valkey 9.1 nodes (created with Debian's redis-cli, as the Redis one).
    fn start_valkey() -> Cluster {
        Cluster::start_of(ServerKind::Valkey, None, "3000")
    }

    fn start_of(kind: ServerKind, certs: Option<&TestCerts>, node_timeout: &str) -> Cluster {
        let nodes: Vec<Server> = (0..6)
            .map(|_| cluster_node_of(kind, free_port(), certs, node_timeout))
            .collect();
        let mut args: Vec<String> = Vec::new();
        if let Some(certs) = certs {
            args.extend([
                "--tls".into(),
                "--cacert".into(),
                certs.ca.display().to_string(),
            ]);
        }
        args.extend(["--cluster".into(), "create".into()]);
        args.extend(nodes.iter().map(|n| {
            let port = if certs.is_some() {
                n.tls_port()
            } else {
                n.port()
            };
            format!("127.0.0.1:{port}")
        }));
        args.extend(["--cluster-replicas", "1", "--cluster-yes"].map(String::from));
        let out = Command::new("redis-cli")
            .args(&args)
            .output()
            .expect("redis-cli is installed with redis-server");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let c = Cluster { nodes };
        // Ready: every node says ok and every range lists its replica.
        let ready = wait_until(Duration::from_secs(30), || {
            c.nodes
                .iter()
                .all(|n| cluster_info(n.port()).contains("cluster_state:ok"))
                && c.ranges().iter().all(|r| r.3.len() == 1)
        });
        if !ready {
            let states: Vec<String> = c
                .nodes
                .iter()
                .map(|n| {
                    let info = cluster_info(n.port());
                    format!("{}: {}", n.port(), info.lines().next().unwrap_or_default())
                })
                .collect();
            panic!(
                "the cluster did not become ready: {:?} {states:?}",
                c.ranges()
            );
        }
        c
    }

    fn entry(&self) -> &Server {
        &self.nodes[0]
    }

    fn ranges(&self) -> Vec<Range> {
        let reply = Client::connect(self.nodes[0].port()).cmd(&["CLUSTER", "SLOTS"]);
        let Value::Array(ranges) = reply else {
            panic!("CLUSTER SLOTS: {reply:?}")
        };
        ranges
            .iter()
            .map(|r| {
                let Value::Array(f) = r else { panic!("{r:?}") };
                let int = |v: &Value| match v {
                    Value::Integer(n) => *n,
                    other => panic!("{other:?}"),
                };
                let port = |v: &Value| match v {
                    Value::Array(n) => int(&n[1]) as u16,
                    other => panic!("{other:?}"),
                };
                (
                    int(&f[0]) as u16,
                    int(&f[1]) as u16,
                    port(&f[2]),
                    f[3..].iter().map(port).collect(),
                )
            })
            .collect()
    }

    fn primaries(&self) -> Vec<u16> {
        let mut p: Vec<u16> = self.ranges().iter().map(|r| r.2).collect();
        p.sort();
        p.dedup();
        p
    }

    fn replicas(&self) -> Vec<u16> {
        self.ranges().iter().flat_map(|r| r.3.clone()).collect()
    }

    fn owner(&self, slot: u16) -> u16 {
        self.ranges()
            .iter()
            .find(|r| r.0 <= slot && slot <= r.1)
            .map(|r| r.2)
            .expect("every slot is covered")
    }

    fn node_id(port: u16) -> String {
        match Client::connect(port).cmd(&["CLUSTER", "MYID"]) {
            Value::BulkString(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// Runs respbench in cluster mode through the entry node.
    fn bench(&self, args: &[&str]) -> Output {
        let mut all = vec!["--cluster"];
        all.extend_from_slice(args);
        self.entry().bench(&all)
    }
}

/// `CLUSTER INFO` of one node.
fn cluster_info(port: u16) -> String {
    let v = Client::connect(port)
        .bulk(&["CLUSTER", "INFO"])
        .expect("CLUSTER INFO reply");
    String::from_utf8(v).expect("text")
}

/// Keys matching `pattern` on the node at `port`.
fn keys(port: u16, pattern: &str) -> Vec<String> {
    Client::connect(port)
        .strings(&["KEYS", pattern])
        .into_iter()
        .map(|k| String::from_utf8(k).unwrap())
        .collect()
}

/// The number in `<name>: <n>` on the report's redirect line.
fn redirects(out: &Output, name: &str) -> u64 {
    let line = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Cluster redirects"))
        .nth(1)
        .unwrap_or_else(|| panic!("no redirect line:\n{}", out.stdout));
    line.split(", ")
        .find_map(|part| part.trim().strip_prefix(&format!("{name}: ")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line:?}"))
}

/// The sum of INCR counters `<prefix>*` over the current primaries.
fn counter_sum(c: &Cluster, prefix: &str) -> i64 {
    c.primaries()
        .into_iter()
        .map(|port| {
            let mut client = Client::connect(port);
            keys(port, &format!("{prefix}*"))
                .iter()
                .map(|k| {
                    let v = client.bulk(&["GET", k]).expect("key exists");
                    String::from_utf8(v).unwrap().parse::<i64>().unwrap()
                })
                .sum::<i64>()
        })
        .sum()
}

#[test]
fn suite_custom_commands_and_read_from_replicas() {
    let c = Cluster::start();

    // The default suite (a few tests), full report: listing, cluster header, per-node lines.
    let out = c.bench(&[
        "-n",
        "3000",
        "-c",
        "2",
        "-r",
        "1000",
        "-t",
        "set,get,lpush,mset,fcall",
    ]);
    out.assert_success();
    out.assert_stdout_contains("Cluster has 3 primary nodes:");
    out.assert_stdout_contains("cluster mode: yes (3 primary)");
    out.assert_stdout_contains("threads: 3");
    assert_eq!(out.stdout.matches("====== ").count(), 5, "{}", out.stdout);
    assert_eq!(
        redirects(&out, "MOVED"),
        0,
        "routing is computed client-side"
    );
    for port in c.primaries() {
        assert!(
            !keys(port, "key:{*}:*").is_empty(),
            "SET reached every primary ({port})"
        );
        assert!(out.stdout.contains(&format!("127.0.0.1:{port} ")));
    }

    // -q: the listing on stdout before the line, as the reference prints it; stderr stays empty.
    let q = c.bench(&["-n", "1000", "-c", "2", "-r", "100", "-t", "get", "-q"]);
    q.assert_success();
    assert!(
        q.stdout.starts_with("Cluster has 3 primary nodes:"),
        "{}",
        q.stdout
    );
    assert!(
        q.stdout.lines().any(|l| l.starts_with("GET: ")),
        "{}",
        q.stdout
    );
    assert_eq!(q.stderr, "");

    // A custom command without a hash tag: each key goes to its own slot's node, no MOVED.
    let out = c.bench(&[
        "-n",
        "3000",
        "-c",
        "2",
        "-r",
        "100000",
        "set",
        "user:__rand_int__",
        "v",
    ]);
    out.assert_success();
    assert_eq!(redirects(&out, "MOVED"), 0);
    assert_eq!(out.completed(), 3000);
    let mut total = 0;
    for port in c.primaries() {
        let here = keys(port, "user:*");
        assert!(!here.is_empty(), "keys spread over every primary");
        for k in &here {
            // The server would have refused a key of another node's slot; check anyway.
            assert_eq!(c.owner(key_slot(k.as_bytes())), port, "{k}");
        }
        total += here.len();
    }
    assert!(total > 2000, "{total} distinct keys from 3000 random SETs");

    // With a hash tag every key lands on the node that owns the tag.
    let out = c.bench(&[
        "-n",
        "500",
        "-c",
        "2",
        "-r",
        "1000",
        "set",
        "{acct}:__rand_int__",
        "v",
    ]);
    out.assert_success();
    let owner = c.owner(key_slot(b"acct"));
    for port in c.primaries() {
        let n = keys(port, "{acct}:*").len();
        assert_eq!(n > 0, port == owner, "port {port} has {n} {{acct}} keys");
    }

    // Keys that span slots in one command are refused before anything is sent.
    let out = c.bench(&[
        "-n",
        "10",
        "-r",
        "100",
        "mset",
        "a:__rand_int__",
        "1",
        "b:__rand_int__",
        "2",
    ]);
    out.assert_code(1);
    assert!(
        out.stderr.contains("different cluster slots"),
        "{}",
        out.stderr
    );

    // --rfr yes: GET goes to replicas; SET still goes to primaries only (no MOVED from a
    // replica, which is what a write sent to a replica would get).
    let before: Vec<u64> = c
        .primaries()
        .iter()
        .map(|&p| Client::connect(p).calls("get"))
        .collect();
    let out = c.bench(&[
        "--rfr", "yes", "-n", "2000", "-c", "2", "-r", "1000", "-t", "set,get",
    ]);
    out.assert_success();
    out.assert_stdout_contains("Cluster has 3 replica nodes:");
    for section in out.stdout.split("====== ").skip(1) {
        assert!(section.contains("MOVED: 0,"), "{section}");
    }
    let replica_gets: u64 = c
        .replicas()
        .iter()
        .map(|&p| Client::connect(p).calls("get"))
        .sum();
    assert!(
        replica_gets >= 2000,
        "GETs served by replicas: {replica_gets}"
    );
    let after: Vec<u64> = c
        .primaries()
        .iter()
        .map(|&p| Client::connect(p).calls("get"))
        .collect();
    assert_eq!(before, after, "no GET reached a primary with --rfr yes");
}

/// Moves every slot of node `from` that holds one of the keys `k:0..n` to node `to`, a few keys
/// at a time so that requests meet the slot both while it migrates (ASK) and after (MOVED).
fn migrate_slots(c: &Cluster, from: u16, to: u16, n: u32) {
    migrate_key_slots(c, from, to, (0..n).map(|i| format!("k:{i:012}")));
}

/// Moves every slot of node `from` that holds one of `keys` to node `to`, as [`migrate_slots`].
fn migrate_key_slots(c: &Cluster, from: u16, to: u16, keys: impl Iterator<Item = String>) {
    let (from_id, to_id) = (Cluster::node_id(from), Cluster::node_id(to));
    let mut slots: Vec<u16> = keys
        .map(|k| key_slot(k.as_bytes()))
        .filter(|&s| c.owner(s) == from)
        .collect();
    slots.sort();
    slots.dedup();
    assert!(!slots.is_empty());
    let mut src = Client::connect(from);
    let mut dst = Client::connect(to);
    for slot in slots {
        let s = slot.to_string();
        dst.ok(&["CLUSTER", "SETSLOT", &s, "IMPORTING", &from_id]);
        src.ok(&["CLUSTER", "SETSLOT", &s, "MIGRATING", &to_id]);
        loop {
            let batch = src.strings(&["CLUSTER", "GETKEYSINSLOT", &s, "1"]);
            if batch.is_empty() {
                break;
            }
            let mut cmd: Vec<Vec<u8>> = [
                "MIGRATE",
                "127.0.0.1",
                &to.to_string(),
                "",
                "0",
                "5000",
                "KEYS",
            ]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect();
            cmd.extend(batch);
            src.ok(&cmd);
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(20));
        // The destination first, then the source and every other primary.
        Client::connect(to).ok(&["CLUSTER", "SETSLOT", &s, "NODE", &to_id]);
        for port in c.primaries() {
            if port != to {
                Client::connect(port).ok(&["CLUSTER", "SETSLOT", &s, "NODE", &to_id]);
            }
        }
    }
}

/// Starts `-n <n>` INCRs of `<prefix><0..200>` in cluster mode (4 connections per node) and
/// waits until the node at `watch` has served some of them.
fn incr_run(c: &Cluster, prefix: &str, n: u32, watch: u16) -> Running {
    let key = format!("{prefix}__rand_int__");
    let n = n.to_string();
    let run = c
        .entry()
        .spawn_bench(&["--cluster", "-c", "4", "-n", &n, "-r", "200", "incr", &key]);
    assert!(
        wait_until(Duration::from_secs(20), || Client::connect(watch)
            .calls("incr")
            > 1000),
        "the run did not start"
    );
    run
}

/// Starts an empty cluster node and introduces it to the cluster (`CLUSTER MEET`).
fn join_new_node(c: &Cluster) -> Server {
    let bus = free_port();
    let node = cluster_node(bus, None, "3000");
    let port = node.port().to_string();
    Client::connect(c.entry().port()).ok(&[
        "CLUSTER",
        "MEET",
        "127.0.0.1",
        &port,
        &bus.to_string(),
    ]);
    let id = Cluster::node_id(node.port());
    let known = wait_until(Duration::from_secs(20), || {
        let seen = Client::connect(node.port())
            .bulk(&["CLUSTER", "NODES"])
            .unwrap_or_default();
        String::from_utf8_lossy(&seen).lines().count() == c.nodes.len() + 1
            && cluster_info(node.port()).contains("cluster_state:ok")
            && c.primaries().iter().all(|&p| {
                let nodes = Client::connect(p)
                    .bulk(&["CLUSTER", "NODES"])
                    .unwrap_or_default();
                String::from_utf8_lossy(&nodes).contains(&id)
            })
    });
    assert!(known, "the new node did not join");
    node
}

#[test]
fn slot_migration_to_a_new_node_during_a_run_loses_nothing() {
    let c = Cluster::start();
    let primaries = c.primaries();
    let new_node = join_new_node(&c);
    let (from, to) = (primaries[0], new_node.port());
    let run = incr_run(&c, "k:", 400000, from);
    migrate_slots(&c, from, to, 200);
    let out = run.finish(Duration::from_secs(120));
    out.assert_success();
    let completed = out.completed();
    assert_eq!(completed, 400_000, "every INCR completed");
    assert!(redirects(&out, "MOVED") > 0, "{}", out.stdout);
    assert!(redirects(&out, "ASK") > 0, "{}", out.stdout);
    assert_eq!(
        counter_sum(&c, "k:"),
        400_000,
        "every INCR acknowledged is in the cluster exactly once"
    );
    assert!(
        keys(from, "k:*").is_empty(),
        "the migrated slots are empty on the source"
    );
    // The new node got load connections of its own, not only redirected requests.
    let line = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("127.0.0.1:{to} ")))
        .unwrap_or_else(|| {
            panic!(
                "the new node is not in the per-node summary:\n{}",
                out.stdout
            )
        });
    let served: u64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(served > 1000, "{line}");
}

#[test]
fn failover_during_a_run_goes_on() {
    let c = Cluster::start();
    let ranges = c.ranges();
    let (old_primary, replica) = (ranges[0].2, ranges[0].3[0]);
    let run = incr_run(&c, "f:", 300000, old_primary);
    Client::connect(replica).ok(&["CLUSTER", "FAILOVER"]);
    assert!(
        wait_until(Duration::from_secs(30), || c.primaries().contains(&replica)),
        "the replica was not promoted"
    );
    let out = run.finish(Duration::from_secs(120));
    out.assert_success();
    assert_eq!(out.completed(), 300_000);
    assert!(redirects(&out, "MOVED") > 0, "{}", out.stdout);
    assert_eq!(counter_sum(&c, "f:"), 300_000, "no INCR lost or doubled");
    // The promoted node served requests after the failover.
    assert!(
        out.stdout.contains(&format!("127.0.0.1:{replica} ")),
        "{}",
        out.stdout
    );
}

#[test]
fn cluster_flag_against_a_standalone_server_is_one_clear_line() {
    let server = Server::start();
    let out = server.bench(&["--cluster", "-n", "10", "-q"]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with(&format!(
            "Failed to fetch cluster configuration from 127.0.0.1:{}: ",
            server.port()
        )) && line.contains("not a cluster node"),
        "{line}"
    );
    let out = server.bench(&["--rfr", "yes", "-n", "10", "-q"]);
    out.assert_code(2);
    assert!(out.single_stderr_line().contains("--rfr needs --cluster"));
    let out = server.bench(&[
        "--cluster",
        "--dataset",
        "docs.csv",
        "-n",
        "1",
        "--",
        "set",
        "k:__field:id__",
        "v",
    ]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .contains("--dataset with --cluster is not supported yet"),
        "{}",
        out.stderr
    );
}

#[test]
fn cluster_over_tls() {
    let certs = TestCerts::new();
    let c = Cluster::start_with(Some(&certs), "3000");
    let ca = certs.ca.display().to_string();
    let entry = c.entry().tls_port().to_string();
    let out = crate::harness::run_respbench(
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &entry,
            "--tls",
            "--cacert",
            &ca,
            "--cluster",
            "-n",
            "3000",
            "-c",
            "2",
            "-r",
            "100000",
            "set",
            "tls:__rand_int__",
            "v",
        ]
        .map(String::from),
        None,
    );
    out.assert_success();
    assert_eq!(out.completed(), 3000);
    assert_eq!(redirects(&out, "MOVED"), 0);
    for port in c.primaries() {
        assert!(
            !keys(port, "tls:*").is_empty(),
            "every primary got keys over TLS"
        );
    }
    // The wrong CA is refused with one line, before anything runs.
    let other = certs.other_ca.display().to_string();
    let out = crate::harness::run_respbench(
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &entry,
            "--tls",
            "--cacert",
            &other,
            "--cluster",
            "-n",
            "10",
        ]
        .map(String::from),
        None,
    );
    out.assert_code(1);
    assert!(out.single_stderr_line().contains("TLS"), "{}", out.stderr);
}

#[test]
fn json_record_has_every_benchmark_node() {
    let c = Cluster::start();
    let dir = crate::harness::TempDir::new();
    let path = dir.path().join("run.json");
    let out = c.bench(&[
        "--json",
        path.to_str().unwrap(),
        "-t",
        "set",
        "-n",
        "3000",
        "-c",
        "2",
        "-r",
        "10000",
        "-q",
    ]);
    out.assert_success();
    crate::record::check_with_python(&path);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut primaries: Vec<String> = c
        .primaries()
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    primaries.sort();
    let listed = |v: &serde_json::Value| {
        let mut a: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        a.sort();
        a
    };
    assert_eq!(r["target"]["cluster"], true);
    assert_eq!(listed(&r["target"]["nodes"]), primaries);
    let servers = r["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 3);
    assert!(servers.iter().all(|s| s["identity"]["mode"] == "cluster"));
    let t = &r["tests"][0];
    assert_eq!(t["nodes"].as_array().unwrap().len(), 3, "per-node figures");
    let watched = t["server"].as_array().unwrap();
    assert_eq!(watched.len(), 3, "a watch per node");
    // Each node's own SET count; together they are the test's requests.
    let calls: u64 = watched
        .iter()
        .map(|s| s["commands"][0]["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, 3000);
    assert!(t["requests"]["redirects"].is_object());
}

/// A 3-primary cluster (1 s node timeout) under `-t set` load through a node that stays up;
/// returns the cluster, the primary to kill and its replica.
fn kill_setup() -> (Cluster, u16, u16) {
    let c = Cluster::start_fast();
    let entry = c.entry().port();
    let range = c
        .ranges()
        .into_iter()
        .find(|r| r.2 != entry)
        .expect("a primary other than the entry node");
    (c, range.2, range.3[0])
}

/// SIGKILLs the node listening on `port` (our own child).
fn kill_node(c: &mut Cluster, port: u16) {
    c.nodes
        .iter_mut()
        .find(|n| n.port() == port)
        .expect("the node is ours")
        .kill();
}

#[test]
fn a_primary_killed_with_e_is_replaced_by_its_replica_and_the_run_goes_on() {
    let (mut c, dead, replica) = kill_setup();
    let dir = TempDir::new();
    let path = dir.path().join("r.json");
    let path_arg = path.to_str().expect("UTF-8 path").to_string();
    let run = c.entry().spawn_bench(&[
        "--cluster",
        "-e",
        "-t",
        "set",
        "--duration",
        "8",
        "-c",
        "12",
        "--json",
        &path_arg,
    ]);
    assert!(
        wait_until(Duration::from_secs(20), || Client::connect(dead)
            .calls("set")
            > 1000),
        "the run did not start"
    );
    kill_node(&mut c, dead);
    let out = run.finish(Duration::from_secs(60));
    out.assert_success();
    assert!(out.stderr_but_machine_busy().is_empty(), "{}", out.stderr);
    let dead_addr = format!("127.0.0.1:{dead}");
    out.assert_stdout_contains("Cluster node outages (connections lost): 1");
    out.assert_stdout_contains(&format!("  {dead_addr}: from "));
    // The replica was promoted and served the dead node's slots afterwards (it served no
    // requests before: load goes to primaries).
    assert!(c.primaries().contains(&replica), "{:?}", c.ranges());
    assert!(Client::connect(replica).calls("set") > 0);
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the record")).unwrap();
    let test = &rec["tests"][0];
    let req = &test["requests"];
    let n = |k: &str| req[k].as_u64().unwrap_or_else(|| panic!("{k} in {req}"));
    assert_eq!(
        n("completed") + n("failed") + n("unanswered"),
        n("issued"),
        "{req}"
    );
    assert!(n("failed") > 0, "{req}");
    let kinds = req["errors"].as_object().unwrap();
    assert!(
        kinds.keys().any(|k| k.starts_with("connection")),
        "{kinds:?}"
    );
    let nodes = test["nodes"].as_array().unwrap();
    let node = |addr: &str| {
        nodes
            .iter()
            .find(|n| n["address"] == addr)
            .unwrap_or_else(|| panic!("{addr} in {nodes:?}"))
    };
    let d = node(&dead_addr);
    assert!(d["lost"].as_u64().unwrap() > 0, "{d}");
    assert!(d["outage"]["start_s"].as_f64().is_some(), "{d}");
    let r = node(&format!("127.0.0.1:{replica}"));
    assert_eq!(r["role"], "primary", "{r}");
    assert!(r["completed"].as_u64().unwrap() > 0, "{r}");
    assert!(r["outage"].is_null(), "{r}");
    crate::record::check_with_python(&path);
}

#[test]
fn a_primary_killed_without_e_ends_the_run_with_the_hint() {
    let (mut c, dead, _) = kill_setup();
    let run = c
        .entry()
        .spawn_bench(&["--cluster", "-t", "set", "--duration", "20", "-c", "6"]);
    assert!(
        wait_until(Duration::from_secs(20), || Client::connect(dead)
            .calls("set")
            > 1000),
        "the run did not start"
    );
    kill_node(&mut c, dead);
    let out = run.finish(Duration::from_secs(60));
    out.assert_code(1);
    out.assert_stderr_contains("use -e to count failures");
    out.assert_stdout_contains("====== SET ======");
}

/// `--fuzz --cluster`: every command's keys (and shard channels) share a hash tag and go to the
/// primary of their slot, so no reply is a redirect, and every primary holds fuzz keys
/// afterwards. (`XREAD`'s key and id lists may differ in length, which the server reads as keys
/// of other slots: a few `CROSSSLOT` replies are the generator's, not the routing's.)
#[test]
fn fuzz_routes_each_command_to_its_slot_owner() {
    let c = Cluster::start();
    let dir = crate::harness::TempDir::new();
    let json = dir.path().join("fuzz.json");
    let out = c.bench(&[
        "--fuzz",
        "-c",
        "2",
        "-n",
        "3000",
        "-r",
        "300",
        "--seed",
        "3",
        "--fuzz-loglevel",
        "error",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success()
        .assert_stdout_contains("Server: survived");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let errors = &doc["fuzz"]["errors_by_kind"];
    assert!(errors.get("MOVED").is_none(), "{errors}");
    assert!(errors["CROSSSLOT"].as_u64().unwrap_or(0) < 30, "{errors}");
    for p in c.primaries() {
        assert!(!keys(p, "{t*").is_empty(), "primary {p} holds no fuzz key");
    }
}
