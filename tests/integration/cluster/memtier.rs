//! `respbench memtier --cluster-mode` with `--ratio` and `--command` (issue 34) against a real
//! 3-primary cluster: each unit goes to the node that holds its key (none redirected), a key
//! drawn for another node is sent there rather than dropped (a `P` pattern writes each key of
//! its slices once), and the requests add up to `-n` × clients as memtier's do (memtier 2.x on
//! the same cluster: `--ratio 1:10 -n 100 -c 2 -t 2` sends 40 SETs and 360 GETs, no MOVED; the
//! `--command` line below writes 400 distinct keys with 400 HSETs).

use respbench::cluster::slot::key_slot;

use super::{Cluster, keys, migrate_key_slots};
use crate::harness::{Client, Running, TempDir, run_memtier, wait_until};

/// Per primary: calls of `command`, its keys named `memtier-*`, and the calls it refused
/// (a redirect is a rejected call).
fn per_node(c: &Cluster, command: &str) -> Vec<(u16, u64, Vec<String>, u64)> {
    c.primaries()
        .into_iter()
        .map(|p| {
            let mut client = Client::connect(p);
            let calls = client.calls(command);
            let info = client.info("commandstats");
            let rejected = info
                .lines()
                .filter_map(|l| l.split("rejected_calls=").nth(1))
                .map(|n| n.split(',').next().unwrap().parse::<u64>().unwrap())
                .sum();
            (p, calls, keys(p, "memtier-*"), rejected)
        })
        .collect()
}

/// Every key on `port` hashes to a slot `port` owns.
fn keys_are_their_slots_owners(c: &Cluster, port: u16, keys: &[String]) {
    for k in keys {
        assert_eq!(c.owner(key_slot(k.as_bytes())), port, "{k} on {port}");
    }
}

/// Clients × `-n`, and what parking may add: units a worker's last batch drew for other nodes
/// are still sent (memtier sends its pooled keys too), at most a batch per node and worker.
const SENT: std::ops::RangeInclusive<u64> = 400..=440;

/// `respbench memtier --cluster-mode … -c 2 -t 2 --key-maximum 1000` through the entry node,
/// `-n 100` unless `line` gives one.
fn run(c: &Cluster, line: &[&str]) {
    let mut args = vec![
        "--cluster-mode",
        "-c",
        "2",
        "-t",
        "2",
        "--key-maximum",
        "1000",
    ];
    if !line.contains(&"-n") {
        args.extend(["-n", "100"]);
    }
    args.extend_from_slice(line);
    run_memtier(c.entry(), &args).assert_success();
}

#[test]
fn ratio_goes_to_each_keys_node_and_keeps_its_split() {
    let c = Cluster::start();
    run(&c, &["--ratio", "1:10"]);
    let sets = per_node(&c, "set");
    let gets = per_node(&c, "get");
    let (mut set_total, mut get_total) = (0, 0);
    for ((port, s, keys, rejected), (_, g, _, _)) in sets.iter().zip(&gets) {
        assert!(
            *s > 0 && *g > 0,
            "every primary gets its share: {port} {s} {g}"
        );
        assert_eq!(*rejected, 0, "nothing redirected on {port}");
        keys_are_their_slots_owners(&c, *port, keys);
        set_total += s;
        get_total += g;
    }
    let total = set_total + get_total;
    assert!(SENT.contains(&total), "{set_total} SETs + {get_total} GETs");
    // One SET in every 11 drawn, per worker (2): at most a cycle off each.
    assert!(
        total.abs_diff(11 * set_total) <= 22,
        "{set_total} SETs in {total}"
    );
    // Filling the cluster: every key of the range once, none lost to another node's turn
    // (memtier: 1,004 SETs for the 1,001 keys).
    for p in c.primaries() {
        Client::connect(p).cmd(&["FLUSHALL"]);
    }
    run(
        &c,
        &["--ratio", "1:0", "--key-pattern", "P:P", "-n", "allkeys"],
    );
    let mut all: Vec<String> = per_node(&c, "set")
        .into_iter()
        .flat_map(|(port, _, keys, rejected)| {
            assert_eq!(rejected, 0, "nothing redirected on {port}");
            keys_are_their_slots_owners(&c, port, &keys);
            keys
        })
        .collect();
    all.sort();
    let mut want: Vec<String> = (0..=1000).map(|k| format!("memtier-{k}")).collect();
    want.sort();
    assert_eq!(all, want);
}

#[test]
fn command_lines_route_by_their_key_on_valkey() {
    let c = Cluster::start_valkey();
    run(
        &c,
        &[
            "--command=HSET __key__ f __data__",
            "--command-key-pattern=P",
        ],
    );
    let mut total = 0;
    for (port, calls, keys, rejected) in per_node(&c, "hset") {
        assert_eq!(rejected, 0, "nothing redirected on {port}");
        keys_are_their_slots_owners(&c, port, &keys);
        // The clients' slices are disjoint and walked in order: no key twice.
        assert_eq!(calls, keys.len() as u64, "one HSET per key on {port}");
        total += calls;
    }
    assert!(SENT.contains(&total), "{total} HSETs");
}

/// memtier's cluster-mode table has `MOVED/sec` and `ASK/sec` after `Misses/sec` (memtier
/// 2f74d61 against a 3-primary `redis-server --cluster-enabled yes`: `Sets`/`Gets`/`Totals`
/// 0.00 without slot moves, `---` for `Waits`), and its JSON the same keys. With slots moved
/// during the run, the Totals' figures are respbench's counted redirects per second (its
/// record's), and a command row that has them is the one with requests.
#[test]
fn cluster_table_has_moved_and_ask_per_second_from_the_redirects_counted() {
    let c = Cluster::start();
    let dir = TempDir::new();
    let (json, record) = (dir.path().join("mb.json"), dir.path().join("run.json"));
    let port = c.entry().port().to_string();
    #[rustfmt::skip]
    let args = ["memtier", "--cluster-mode", "-s", "127.0.0.1", "-p", &port, "--hide-histogram",
        "-t", "1", "-c", "4", "--test-time=8", "--key-maximum=200", "--command=INCR __key__",
        &format!("--json-out-file={}", json.display()), "--json", record.to_str().unwrap()];
    let run = Running::spawn_args(&args.map(String::from));
    let primaries = c.primaries();
    let (from, to) = (primaries[0], primaries[1]);
    assert!(
        wait_until(std::time::Duration::from_secs(30), || {
            Client::connect(from).calls("incr") > 100
        }),
        "the run did not start"
    );
    migrate_key_slots(&c, from, to, (0..=200).map(|k| format!("memtier-{k}")));
    let out = run.finish(std::time::Duration::from_secs(120));
    out.assert_success();
    let head = out.stdout.lines().find(|l| l.starts_with("Type")).unwrap();
    let cols: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(
        &cols[..4],
        ["Type", "Ops/sec", "MOVED/sec", "ASK/sec"],
        "{head}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let t = &doc["tests"][0];
    let redirects = &t["requests"]["redirects"];
    let (moved, ask) = (
        redirects["MOVED"].as_u64().unwrap_or(0),
        redirects["ASK"].as_u64().unwrap_or(0),
    );
    assert!(moved > 0, "slots moved during the run: {redirects}");
    let secs = t["duration_s"].as_f64().unwrap();
    let mb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let totals = &mb["ALL STATS"]["Totals"];
    let near = |shown: &serde_json::Value, n: u64| {
        (shown.as_f64().unwrap() - n as f64 / secs).abs() < 0.01 + 1e-9 * n as f64
    };
    assert!(
        near(&totals["MOVED/sec"], moved),
        "{totals} vs {moved} in {secs} s"
    );
    assert!(
        near(&totals["ASK/sec"], ask),
        "{totals} vs {ask} in {secs} s"
    );
    // The one command row is the one with requests: its figures are the Totals'.
    let incrs = &mb["ALL STATS"]["Incrs"];
    assert_eq!(incrs["MOVED/sec"], totals["MOVED/sec"]);
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("Totals"))
        .unwrap();
    let shown: f64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((shown - moved as f64 / secs).abs() < 0.006, "{row}");
}
