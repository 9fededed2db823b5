//! memtier's `--client-stats` against Redis 7.0 and Valkey 9.1 (issue 23): one CSV file per
//! connection and run with memtier's header, whose per-second requests add up to the server's own
//! `cmdstat_set`/`cmdstat_get` calls.

use super::harness::{Server, TempDir, run_respbench};

const HEADER: &str = "Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
                      SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET \
                      Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT \
                      Average Latency";

/// Sums of one file's rows.
#[derive(Default)]
struct Sums {
    sets: u64,
    gets: u64,
    /// GET misses + hits.
    answered: u64,
    /// Bytes written and read: `[SET, GET]` each.
    tx: [u64; 2],
    rx: [u64; 2],
}

fn sums(text: &str) -> Sums {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Per-Second Benchmark Data"));
    assert_eq!(lines.next(), Some(HEADER));
    let mut s = Sums::default();
    let mut last_second = None;
    for line in lines.take_while(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 15, "{line}");
        let n = |i: usize| f[i].parse::<u64>().unwrap_or_else(|_| panic!("{line}"));
        let second = n(0);
        assert!(last_second < Some(second), "seconds in order: {text}");
        last_second = Some(second);
        s.sets += n(1);
        s.gets += n(6);
        s.answered += n(11) + n(12);
        // Total Bytes, TX, RX per kind: memtier's Total is TX + RX.
        for (k, at) in [(0, 3), (1, 8)] {
            assert_eq!(n(at), n(at + 1) + n(at + 2), "{line}");
            s.tx[k] += n(at + 1);
            s.rx[k] += n(at + 2);
        }
    }
    s
}

#[test]
fn client_stats_writes_one_file_per_connection_adding_up_to_commandstats() {
    for server in [Server::start(), Server::start_valkey()] {
        let dir = TempDir::new();
        let prefix = dir.path().join("cs");
        let json_dir = TempDir::new();
        let json = json_dir.path().join("out.json");
        let record = json_dir.path().join("record.json");
        let mut c = server.client();
        let (sets_before, gets_before) = (c.calls("set"), c.calls("get"));
        let port = server.port().to_string();
        let args = [
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "2",
            "-c",
            "2",
            "-n",
            "300",
            "--ratio=1:3",
            "--key-maximum=500",
            "--hide-histogram",
            "--run-count",
            "2",
            "--client-stats",
            prefix.to_str().unwrap(),
            "--json-out-file",
            json.to_str().unwrap(),
            "--json",
            record.to_str().unwrap(),
        ];
        run_respbench(&args.map(String::from), None).assert_success();
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(
            config["configuration"]["client_stats"],
            prefix.to_str().unwrap()
        );
        let sets = c.calls("set") - sets_before;
        let gets = c.calls("get") - gets_before;
        // 2 runs × 2 threads × 2 connections × 300 requests, one SET to three GETs.
        assert_eq!((sets, gets), (600, 1800));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "cs-1-0-0.csv",
                "cs-1-0-1.csv",
                "cs-1-1-0.csv",
                "cs-1-1-1.csv",
                "cs-2-0-0.csv",
                "cs-2-0-1.csv",
                "cs-2-1-0.csv",
                "cs-2-1-1.csv",
            ]
        );
        let (mut all_sets, mut all_gets) = (0, 0);
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        for run in 1..=2 {
            let (mut tx, mut rx) = ([0; 2], [0; 2]);
            for name in names
                .iter()
                .filter(|n| n.starts_with(&format!("cs-{run}-")))
            {
                let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
                let s = sums(&text);
                assert!(s.sets + s.gets > 0, "{name} counted nothing: {text}");
                assert_eq!(s.answered, s.gets, "{name}: misses + hits = GET requests");
                all_sets += s.sets;
                all_gets += s.gets;
                for k in 0..2 {
                    tx[k] += s.tx[k];
                    rx[k] += s.rx[k];
                }
            }
            // The connections' bytes add up to the run's per command (the record's, which the
            // KB/sec columns are made of).
            for (k, command) in ["SET", "GET"].iter().enumerate() {
                let mix = record["tests"][run - 1]["mix"].as_array().unwrap();
                let m = mix.iter().find(|m| m["name"] == *command).unwrap();
                assert_eq!(
                    m["bytes"]["tx"].as_u64(),
                    Some(tx[k]),
                    "run {run} {command}"
                );
                assert_eq!(
                    m["bytes"]["rx"].as_u64(),
                    Some(rx[k]),
                    "run {run} {command}"
                );
            }
        }
        assert_eq!((all_sets, all_gets), (sets, gets));
    }
}

#[test]
fn client_stats_in_a_missing_directory_fails_before_connecting() {
    let server = Server::start();
    let dir = TempDir::new();
    let prefix = dir.path().join("missing").join("cs");
    let port = server.port().to_string();
    let sets_before = server.client().calls("set");
    let args = [
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "10",
        "--hide-histogram",
        "--client-stats",
        prefix.to_str().unwrap(),
    ];
    let out = run_respbench(&args.map(String::from), None);
    out.assert_code(1);
    assert!(out.stderr.contains("cannot write"), "{}", out.stderr);
    assert_eq!(
        server.client().calls("set"),
        sets_before,
        "nothing was sent"
    );
}
