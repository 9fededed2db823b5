//! `respbench memtier …` (and respbench started as `memtier_benchmark`) against Redis 7.0 and
//! Valkey 9.1, with the server's own counters as the judge: request counts (`-n` per client ×
//! `-c` per thread × `-t`), `allkeys` over `P:P`, the ratio, `--run-count`, `--command`'s key
//! range, hits and misses, and the Azure guide's line verbatim over TLS. The output is read as
//! the memtier fixtures are (same keys, same header).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::harness::{
    Output, Server, ServerOptions, ServerTls, TempDir, TestCerts, respbench, run_respbench,
};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// `respbench memtier -s 127.0.0.1 -p PORT args…`.
fn memtier(port: u16, args: &[&str]) -> Output {
    let mut all: Vec<String> = ["memtier", "-s", "127.0.0.1", "-p", &port.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    run_respbench(&all, None)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("json-out-file written");
    serde_json::from_str(&text).expect("json-out-file parses")
}

fn both() -> [Server; 2] {
    [Server::start(), Server::start_valkey()]
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn requests_are_per_client_per_thread_and_the_ratio_splits_as_memtiers() {
    for server in both() {
        let out = memtier(
            server.port(),
            &[
                "-n",
                "250",
                "-c",
                "2",
                "-t",
                "3",
                "--ratio=1:10",
                "--key-maximum=500",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        let (sets, gets) = (c.calls("set"), c.calls("get"));
        assert_eq!(sets + gets, 250 * 2 * 3, "{}", out.stdout);
        // memtier's order: one SET then ten GETs, each connection its own cycle (250 = 22
        // cycles of 11 and 8 more, the first of them a SET: 23 per connection, 138 for the six;
        // memtier_benchmark 2.x sends 138 for this line too).
        assert_eq!(sets, 138, "sets of 1500 at 1:10");
        assert!(out.stdout.contains("ALL STATS"), "{}", out.stdout);
    }
}

#[test]
fn allkeys_with_p_p_writes_every_key_of_the_range_exactly_once() {
    for server in both() {
        let out = memtier(
            server.port(),
            &[
                "--requests=allkeys",
                "--key-pattern=P:P",
                "--ratio=1:0",
                "--key-minimum=1",
                "--key-maximum=3000",
                "-c",
                "3",
                "-t",
                "2",
                "--hide-histogram",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        assert_eq!(c.dbsize(), 3000);
        assert_eq!(c.calls("set"), 3000, "each key once");
        assert!(c.bulk(&["GET", "memtier-1"]).is_some());
        assert!(c.bulk(&["GET", "memtier-3000"]).is_some());
        assert!(c.bulk(&["GET", "memtier-0"]).is_none());
    }
}

#[test]
fn run_count_three_gives_three_runs_and_the_aggregates() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let json = dir.path().join("runs.json");
    let out = memtier(
        server.port(),
        &[
            "-n",
            "200",
            "-c",
            "2",
            "-t",
            "1",
            "--ratio=1:4",
            "--key-maximum=100",
            "--run-count=3",
            "--print-all-runs",
            "--hide-histogram",
            "--json-out-file",
            path(&json),
            "--hdr-file-prefix",
            &format!("{}/hdr", path(dir.path())),
        ],
    );
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set") + c.calls("get"), 3 * 200 * 2);
    let doc = read_json(&json);
    let fixture = read_json(&Path::new(FIXTURES).join("memtier/memtier-run-count-3.json"));
    let keys = |v: &Value| {
        v.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        keys(&doc),
        keys(&fixture),
        "same blocks as memtier's --run-count 3"
    );
    let counts: u64 = (1..=3)
        .map(|i| {
            doc[format!("RUN #{i} RESULTS")]["Totals"]["Count"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(counts, 3 * 200 * 2);
    // --hdr-file-prefix: each run's files, with memtier's names; the counts are the run's.
    let prefix = dir.path().join("hdr");
    for i in 1..=3 {
        let full = std::fs::read_to_string(format!("{}_FULL_RUN_{i}.txt", path(&prefix))).unwrap();
        let count = doc[format!("RUN #{i} RESULTS")]["Totals"]["Count"]
            .as_u64()
            .unwrap();
        assert!(
            full.contains(&format!("Total count    = {count:>12}]")),
            "{full}"
        );
        for f in ["FULL_RUN", "SET_command_run", "GET_command_run"] {
            let f = format!("{}_{f}_{i}.hgrm", path(&prefix));
            assert!(
                std::fs::read_to_string(&f).unwrap().contains("HISTF"),
                "{f}"
            );
        }
    }
    for title in [
        "RUN #3 RESULTS",
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (3 runs)",
    ] {
        assert!(out.stdout.contains(title), "{title}: {}", out.stdout);
    }
}

#[test]
fn command_with_key_hits_only_the_range_asked() {
    for server in both() {
        let out = memtier(
            server.port(),
            &[
                "--command=SET __key__ __data__",
                "--key-minimum=100",
                "--key-maximum=149",
                "--key-prefix=mt:",
                "-n",
                "300",
                "-c",
                "1",
                "-t",
                "2",
                "--hide-histogram",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        assert_eq!(c.calls("set"), 600);
        let keys = c.strings(&["KEYS", "*"]);
        assert!(!keys.is_empty() && keys.len() <= 50, "{} keys", keys.len());
        for k in keys {
            let k = String::from_utf8(k).unwrap();
            let n: u64 = k
                .strip_prefix("mt:")
                .expect("prefix")
                .parse()
                .expect("number");
            assert!((100..=149).contains(&n), "{k}");
        }
    }
}

#[test]
fn hits_and_misses_are_counted_from_the_replies() {
    for server in both() {
        let dir = TempDir::new();
        let json = dir.path().join("hits.json");
        let mut c = server.client();
        for k in 1..=10 {
            c.ok(&["SET", &format!("memtier-{k}"), "v"]);
        }
        // Keys 1..=20: half exist. The server's keyspace_hits/misses judge our counts.
        let out = memtier(
            server.port(),
            &[
                "--ratio=0:1",
                "--key-minimum=1",
                "--key-maximum=20",
                "-n",
                "400",
                "-c",
                "1",
                "-t",
                "1",
                "--json-out-file",
                path(&json),
                "--hide-histogram",
            ],
        );
        out.assert_success();
        let hits = c.info_u64("stats", "keyspace_hits") as f64;
        let misses = c.info_u64("stats", "keyspace_misses") as f64;
        assert_eq!(hits + misses, 400.0);
        let doc = read_json(&json);
        let gets = &doc["ALL STATS"]["Gets"];
        let (h, m) = (
            gets["Hits/sec"].as_f64().unwrap(),
            gets["Misses/sec"].as_f64().unwrap(),
        );
        assert!(h > 0.0 && m > 0.0, "{gets}");
        // Rates over the same duration: their ratio is the counts' ratio (2-decimal rounding).
        let ours = h / (h + m);
        assert!(
            (ours - hits / 400.0).abs() < 0.01,
            "ours {ours}, server {}",
            hits / 400.0
        );
    }
}

#[test]
fn the_azure_line_runs_verbatim_against_a_local_tls_server() {
    let certs = TestCerts::new();
    let server = Server::start_with(ServerOptions {
        tls: Some(ServerTls::new(&certs)),
        password: Some("azurekey".into()),
        ..Default::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("test_results.json");
    let line = format!(
        "memtier -h 127.0.0.1 -p {} -a azurekey --hide-histogram --pipeline=10 -c 50 -t 6 -d 1024 \
         --key-maximum=1000 --key-pattern=P:P --ratio=0:1 --distinct-client-seed --randomize \
         --test-time=1 --json-out-file={} --tls --tls-skip-verify",
        server.tls_port(),
        path(&json)
    );
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    let out = run_respbench(&args, None);
    out.assert_success();
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        !text.contains("azurekey"),
        "the password leaked into the JSON"
    );
    assert!(!out.stdout.contains("azurekey") && !out.stderr.contains("azurekey"));
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["configuration"]["authenticate"], "<redacted>");
    assert_eq!(doc["configuration"]["tls"], "true");
    let count = doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    let served = server.client().calls("get");
    // Replies that were in flight at the end are served but not counted: at most one
    // pipeline per connection.
    assert!(
        count > 0 && count <= served && served - count <= 300 * 10,
        "{count} vs {served}"
    );
    assert_eq!(doc["ALL STATS"]["Sets"]["Count"], 0);
    // Nothing was ever written: every GET missed.
    assert_eq!(doc["ALL STATS"]["Gets"]["Hits/sec"], 0.0);
}

#[test]
fn the_output_has_the_fixtures_keys_and_columns() {
    let server = Server::start();
    let dir = TempDir::new();
    let json = dir.path().join("out.json");
    let out = memtier(
        server.port(),
        &[
            "-t",
            "1",
            "-c",
            "5",
            "--ratio",
            "1:10",
            "--test-time",
            "1",
            "-d",
            "64",
            "--key-maximum",
            "1000",
            "--hide-histogram",
            "--json-out-file",
            path(&json),
        ],
    );
    out.assert_success();
    let fixture = read_json(&Path::new(FIXTURES).join("memtier-ratio-1-10.json"));
    let ours = read_json(&json);
    let keys = |v: &Value| {
        v.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(keys(&ours), keys(&fixture));
    assert_eq!(
        keys(&ours["configuration"]),
        keys(&fixture["configuration"])
    );
    assert_eq!(
        keys(&ours["run information"]),
        keys(&fixture["run information"])
    );
    assert_eq!(keys(&ours["ALL STATS"]), keys(&fixture["ALL STATS"]));
    for row in ["Sets", "Gets", "Waits", "Totals"] {
        let mut want = keys(&fixture["ALL STATS"][row]);
        want.extend([]);
        let mut got = keys(&ours["ALL STATS"][row]);
        got.remove("Corrected Latency (respbench)");
        assert_eq!(got, want, "{row}");
        assert_eq!(
            keys(&ours["ALL STATS"][row]["Percentile Latencies"]),
            keys(&fixture["ALL STATS"][row]["Percentile Latencies"]),
            "p50.00, p99.00, p99.90 and the Histogram log format"
        );
        assert_eq!(
            keys(&ours["ALL STATS"][row]["Percentile Latencies"]["Histogram log format"]),
            keys(&fixture["ALL STATS"][row]["Percentile Latencies"]["Histogram log format"]),
        );
    }
    let fixture_text =
        std::fs::read_to_string(Path::new(FIXTURES).join("memtier-ratio-1-10.txt")).unwrap();
    let header = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("Type "))
            .map(str::to_string)
    };
    assert_eq!(header(&out.stdout), header(&fixture_text));
    for line in [
        "1         Threads",
        "5         Connections per thread",
        "1         Seconds",
    ] {
        assert!(out.stdout.contains(line), "{line}");
    }
    // respbench compare reads it with the reader it reads memtier's own files with.
    respbench(&[
        "compare",
        path(&json),
        &format!("{FIXTURES}/memtier-ratio-1-10.json"),
    ])
    .assert_success();
}

#[test]
fn memcache_protocols_are_refused_and_argv0_selects_memtier() {
    let out = respbench(&["memtier", "--protocol=memcache_binary"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("--protocol") && out.stderr.contains("memcache"),
        "{}",
        out.stderr
    );
    let dir = TempDir::new();
    let link = dir.path().join("memtier_benchmark");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_respbench"), &link).unwrap();
    let out = std::process::Command::new(&link)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--json-out-file=FILE"));
    let out = std::process::Command::new(&link)
        .args(["-P", "memcache_text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn respbench_record_and_corrected_latency_ride_along_under_rate_limiting() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let (json, rec) = (dir.path().join("m.json"), dir.path().join("rec.json"));
    let out = memtier(
        server.port(),
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--rate-limiting",
            "200",
            "--ratio=1:1",
            "--key-maximum=50",
            "--hide-histogram",
            "--json-out-file",
            path(&json),
            "--json",
            path(&rec),
            "-a",
            "nopw-needed",
        ],
    );
    // The server has no password: AUTH fails, in one line, and no secret is shown.
    out.assert_code(1);
    assert!(!out.stderr.contains("nopw-needed"), "{}", out.stderr);
    let out = memtier(
        server.port(),
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--rate-limiting",
            "200",
            "--ratio=1:1",
            "--key-maximum=50",
            "--hide-histogram",
            "--json-out-file",
            path(&json),
            "--json",
            path(&rec),
        ],
    );
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set") + c.calls("get"), 200);
    let doc = read_json(&json);
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"], 200);
    let corrected = &totals["Corrected Latency (respbench)"];
    assert!(
        corrected["Average Latency"].as_f64().unwrap() > 0.0,
        "{totals}"
    );
    assert!(corrected["p99.00"].is_number(), "{totals}");
    // respbench's record of the same run: the mix with hits and misses, the command line.
    let record = read_json(&rec);
    assert_eq!(record["schema"], "respbench/1");
    let mix = &record["tests"][0]["mix"];
    let gets = mix
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "GET")
        .unwrap();
    assert_eq!(
        gets["hits"].as_u64().unwrap() + gets["misses"].as_u64().unwrap(),
        gets["completed"].as_u64().unwrap()
    );
    assert_eq!(record["command_line"][1], "memtier");
    assert!(record["tests"][0]["verdict"]["kind"].is_string());
    respbench(&["compare", path(&rec), path(&json)]).assert_success();
}

#[test]
fn monitor_input_sends_the_captured_commands() {
    for server in both() {
        let dir = TempDir::new();
        let capture = dir.path().join("monitor.txt");
        std::fs::write(
            &capture,
            "OK\n1732500000.000001 [0 127.0.0.1:5000] \"SET\" \"captured\" \"a b\"\n\
             1732500000.000002 [0 127.0.0.1:5000] \"INCR\" \"hits\"\n",
        )
        .unwrap();
        let input = format!("--monitor-input={}", path(&capture));
        let out = memtier(
            server.port(),
            &[
                &input,
                "--command=__monitor_line2__",
                "-n",
                "40",
                "-c",
                "1",
                "-t",
                "2",
            ],
        );
        out.assert_success();
        let mut c = server.client();
        assert_eq!(c.bulk(&["GET", "hits"]), Some(b"80".to_vec()));
        let out = memtier(
            server.port(),
            &[
                &input,
                "--command=__monitor_line@__",
                "-n",
                "50",
                "-c",
                "1",
                "-t",
                "1",
            ],
        );
        out.assert_success();
        assert_eq!(c.calls("set") + c.calls("incr"), 80 + 50);
        assert_eq!(c.bulk(&["GET", "captured"]), Some(b"a b".to_vec()));
        let out = memtier(server.port(), &[&input, "--command=__monitor_line9__"]);
        out.assert_code(2);
    }
}
