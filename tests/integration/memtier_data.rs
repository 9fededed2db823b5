//! `respbench memtier`'s data and key options against Redis 7.0 and Valkey 9.1, the server as
//! the judge: keys `memtier-N` unpadded, `--expiry-range` (TTLs in the range), `--multi-key-get`
//! (MGETs in commandstats, the ratio's GETs made of their keys), `--data-size-pattern S` (each
//! key's STRLEN), `-R` (values differ between keys), `--data-offset` (SETRANGE/GETRANGE).

use std::collections::BTreeSet;

use super::harness::{Output, Server, TempDir, respbench, run_respbench};

/// `respbench memtier -s 127.0.0.1 -p PORT -c 1 -t 1 --hide-histogram args…`.
fn memtier(server: &Server, args: &[&str]) -> Output {
    let port = server.port().to_string();
    let mut all = vec![
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "1",
        "-t",
        "1",
    ];
    all.push("--hide-histogram");
    all.extend_from_slice(args);
    let out = run_respbench(&all.iter().map(|s| s.to_string()).collect::<Vec<_>>(), None);
    out.assert_success();
    out
}

fn both() -> [Server; 2] {
    [Server::start(), Server::start_valkey()]
}

#[test]
fn expiry_range_gives_every_key_a_ttl_in_the_range() {
    for server in both() {
        let dir = TempDir::new();
        let json = dir.path().join("run.json");
        let started = std::time::Instant::now();
        memtier(
            &server,
            &[
                "--ratio=1:0",
                "-n",
                "300",
                "--key-maximum=49",
                "--expiry-range=100-200",
                "--json",
                json.to_str().unwrap(),
            ],
        );
        let mut c = server.client();
        assert_eq!(
            c.calls("setex"),
            300,
            "memtier's SET with an expiry is SETEX"
        );
        let keys = c.strings(&["KEYS", "memtier-*"]);
        assert!(keys.len() > 40, "{} keys", keys.len());
        let mut ttls = Vec::new();
        for k in &keys {
            let ttl = c.int(&[b"TTL".as_slice(), k]);
            // The seconds drawn were 100..=200, counting down since the SETEX: the whole
            // seconds since the run started (many on a loaded machine) lower the bound.
            let since = started.elapsed().as_secs() as i64 + 1;
            assert!(
                (100 - since..=200).contains(&ttl),
                "TTL {ttl}, {since} s after"
            );
            ttls.push(ttl);
        }
        // The record says what ran, and passes the schema and the independent checker.
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let m = &record["options"]["memtier"];
        assert_eq!(
            m["expiry_range"],
            serde_json::json!({"min": 100, "max": 200}),
            "{m}"
        );
        assert_eq!(m["random_data"].as_bool(), Some(false), "{m}");
        assert_eq!(m["data_size_pattern"].as_str(), Some("R"), "{m}");
        super::record::check_with_python(&json);
        ttls.sort();
        assert!(
            ttls[0] < ttls[ttls.len() - 1],
            "drawn, not one value: {ttls:?}"
        );
    }
}

#[test]
fn multi_key_get_sends_mgets_that_make_up_the_ratios_gets() {
    for server in both() {
        let out = memtier(
            &server,
            &[
                "--ratio=1:10",
                "--multi-key-get=4",
                "-n",
                "44",
                "--key-maximum=99",
            ],
        );
        let mut c = server.client();
        // 1:10 with 4 keys per MGET: SET, MGET×4, MGET×4, MGET×2 per cycle; 44 = 11 cycles.
        assert_eq!(c.calls("set"), 11, "{}", out.stdout);
        assert_eq!(c.calls("mget"), 33);
        assert_eq!(c.calls("get"), 0);
        let looked_up =
            c.info_u64("stats", "keyspace_hits") + c.info_u64("stats", "keyspace_misses");
        assert_eq!(looked_up, 110, "ten keys per cycle");
        let key = c.strings(&["KEYS", "*"]).pop().expect("a key");
        let key = String::from_utf8(key).unwrap();
        let n = key.strip_prefix("memtier-").expect("memtier's prefix");
        assert!(n == "0" || !n.starts_with('0'), "{key}: not zero-padded");
    }
}

#[test]
fn size_pattern_s_spreads_the_sizes_over_the_key_range() {
    for server in both() {
        memtier(
            &server,
            &[
                "--ratio=1:0",
                "--requests=allkeys",
                "--key-pattern=P:P",
                "--key-minimum=0",
                "--key-maximum=100",
                "--data-size-range=10-110",
                "--data-size-pattern=S",
            ],
        );
        let mut c = server.client();
        let lens: Vec<i64> = (0..=100)
            .map(|k| c.int(&["STRLEN", &format!("memtier-{k}")]))
            .collect();
        // memtier's formula in floating point, rounded down: key k holds 10 + ⌊100 × k/100⌋
        // bytes (key 58: 0.58 × 100 is 57.99…, so 67).
        let expect: Vec<i64> = (0..=100)
            .map(|k| 10 + (100.0 * (k as f64 / 100.0)) as i64)
            .collect();
        assert_eq!(lens, expect);
        assert_eq!((lens[0], lens[50], lens[100]), (10, 60, 110));
    }
}

#[test]
fn random_data_differs_between_keys_and_fixed_data_does_not() {
    for server in both() {
        let mut c = server.client();
        for (random, prefix) in [(true, "r-"), (false, "f-")] {
            let mut args = vec![
                "--ratio=1:0",
                "--requests=allkeys",
                "--key-pattern=P:P",
                "--key-maximum=29",
                "-d",
                "64",
            ];
            let p = format!("--key-prefix={prefix}");
            args.push(&p);
            if random {
                args.push("-R");
            }
            memtier(&server, &args);
            let values: std::collections::BTreeSet<Vec<u8>> = (0..30)
                .map(|k| c.bulk(&["GET", &format!("{prefix}{k}")]).expect("written"))
                .collect();
            assert!(values.iter().all(|v| v.len() == 64));
            if random {
                assert_eq!(values.len(), 30, "-R: every key's value differs");
                assert!(values.iter().flatten().any(|b| !b.is_ascii_alphanumeric()));
            } else {
                assert_eq!(values.len(), 1, "without -R one payload");
            }
        }
    }
}

#[test]
fn data_offset_writes_with_setrange_and_reads_with_getrange() {
    for server in both() {
        memtier(
            &server,
            &[
                "--ratio=1:1",
                "-n",
                "40",
                "--key-maximum=4",
                "-d",
                "8",
                "--data-offset=10",
            ],
        );
        let mut c = server.client();
        assert_eq!(c.calls("setrange"), 20);
        assert_eq!(c.calls("getrange"), 20);
        assert_eq!(c.calls("set") + c.calls("get"), 0);
        for k in c.strings(&["KEYS", "memtier-*"]) {
            assert_eq!(
                c.int(&[b"STRLEN".as_slice(), &k]),
                18,
                "offset 10 + 8 bytes"
            );
        }
    }
}

#[test]
fn data_options_that_cannot_apply_are_one_line() {
    let server = Server::start_valkey();
    let port = server.port().to_string();
    for (args, says) in [
        (
            vec!["--data-size-pattern=S"],
            "--data-size-pattern S spreads --data-size-range",
        ),
        (vec!["--expiry-range=9-3"], "--expiry-range"),
        (vec!["--data-size-pattern=Q"], "--data-size-pattern"),
    ] {
        let mut all = vec!["memtier", "-s", "127.0.0.1", "-p", &port];
        all.extend(args);
        let out = run_respbench(&all.iter().map(|s| s.to_string()).collect::<Vec<_>>(), None);
        out.assert_code(2).assert_stderr_contains(says);
        assert_eq!(out.stderr.trim_end().lines().count(), 1, "{}", out.stderr);
    }
}

#[test]
fn compare_lines_up_the_json_out_file_and_the_record_of_one_run() {
    for server in both() {
        let dir = TempDir::new();
        let (mt, ours) = (dir.path().join("m.json"), dir.path().join("r.json"));
        memtier(
            &server,
            &[
                "--ratio=1:10",
                "-n",
                "1500",
                "--key-maximum=50",
                "--json-out-file",
                mt.to_str().unwrap(),
                "--json",
                ours.to_str().unwrap(),
            ],
        );
        let out = respbench(&[
            "compare",
            mt.to_str().unwrap(),
            ours.to_str().unwrap(),
            "--format",
            "csv",
        ]);
        out.assert_success();
        // "test","metric","unit","m","r","r change_pct",…: one row per figure both files have.
        let rows: Vec<Vec<String>> = (out.stdout.lines().skip(1))
            .map(|l| {
                l.split(',')
                    .map(|f| f.trim_matches('"').to_string())
                    .collect()
            })
            .filter(|r: &Vec<String>| !r[3].is_empty() && !r[4].is_empty())
            .collect();
        let tests: BTreeSet<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            tests,
            BTreeSet::from(["SET", "GET", "TOTALS"]),
            "{}",
            out.stdout
        );
        for r in &rows {
            let change: f64 = r[5].parse().unwrap();
            match (r[0].as_str(), r[1].as_str()) {
                // The same run's rates: one figure written twice.
                (_, "rps") => assert!(change.abs() < 0.01, "{r:?}"),
                // Each command's latencies and the totals': the same histogram (from the
                // write, memtier's meaning, on both sides), written in ms by one and µs by the
                // other (rounding only).
                ("SET" | "GET" | "TOTALS", "p50" | "p99" | "max" | "avg") => {
                    // Printed in ms to 3 decimals: a thousandth of a ms of rounding allowed.
                    let (a, b): (f64, f64) = (r[3].parse().unwrap(), r[4].parse().unwrap());
                    assert!((a - b).abs() <= 0.001 + 0.03 * a, "{r:?}");
                }
                _ => {}
            }
        }
    }
}

#[test]
fn command_stats_breakdown_groups_lines_by_command_unless_line() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let rows = |stdout: &str, name: &str| {
        (stdout.lines())
            .filter(|l| l.split_whitespace().next() == Some(name))
            .count()
    };
    let lines = [
        "--command=SET foo:__key__ __data__",
        "--command=SET bar:__key__ __data__",
        "--command=GET foo:__key__",
        "--command=GET bar:__key__",
    ];
    let json = dir.path().join("by-command.json");
    let mut args = lines.to_vec();
    args.extend(["-n", "400", "--key-maximum=20", "--json-out-file"]);
    args.push(json.to_str().unwrap());
    let out = memtier(&server, &args);
    // memtier's default: one row per command name, the lines' counts added.
    assert_eq!(
        (rows(&out.stdout, "Sets"), rows(&out.stdout, "Gets")),
        (1, 1),
        "{}",
        out.stdout
    );
    assert_eq!(rows(&out.stdout, "Set#2s"), 0, "{}", out.stdout);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let count = |row: &str| doc["ALL STATS"][row]["Count"].as_u64().unwrap();
    let mut c = server.client();
    assert_eq!(count("Sets"), c.calls("set"), "both SET lines in one row");
    assert_eq!(count("Sets") + count("Gets"), 400);
    let mut by_line = lines.to_vec();
    by_line.extend([
        "-n",
        "400",
        "--key-maximum=20",
        "--command-stats-breakdown=line",
    ]);
    let json = dir.path().join("by-line.json");
    by_line.extend(["--json-out-file", json.to_str().unwrap()]);
    let out = memtier(&server, &by_line);
    // memtier's table prints each line's row under the command's name; the JSON keys differ.
    assert_eq!(
        (rows(&out.stdout, "Sets"), rows(&out.stdout, "Gets")),
        (2, 2),
        "{}",
        out.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for row in ["Sets", "Set#2s", "Gets", "Get#2s"] {
        assert!(
            doc["ALL STATS"][row]["Count"].as_u64().unwrap() > 0,
            "{row}"
        );
    }
}

/// A large value is held once in memtier mode too, as in benchmark mode (issue 34: `-d 20000000`
/// with 100 connections took 3.6 GB, a copy per connection): 10 memtier connections peak within
/// twice what benchmark mode's 10 connections do with the same value, and below the 9 × 5 MB a
/// copy per connection adds to one connection's run; every value arrives whole, with `-R` too
/// (values from the random pool, shared as well).
///
/// 5 MB, not issue 34's 20 MB: a copy per connection shows at any size, and memtier mode fills
/// its value byte by byte (about 0.15 µs a byte in this debug build: 3 s of CPU for each of the
/// three memtier runs at 20 MB, when this was among the suite's costliest tests, 78 s quiet and
/// 263 s under two CPU hogs). The bound below scales with the value: 25 MiB is the
/// same share (0.58) of the 9 copies' 45 MB as the 100 MiB was of 180 MB, against about 0.5 MB
/// measured from `-c 1` to `-c 10` (5 MB with `-R`, its random pool).
#[test]
fn a_large_value_is_held_once_in_memtier_mode() {
    const VALUE_BYTES: &str = "5000000";
    // Less than 9 copies of the value (45 MB) add, by the share the 20 MB test used.
    const COPIES_KIB: i64 = 25 * 1024;
    let server = Server::start_valkey();
    let port = server.port().to_string();
    let memtier_peak = |c: &str, random: bool| -> i64 {
        let mut args = vec![
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-c",
            c,
            "-t",
            "1",
            "-n",
            "1",
            "--ratio",
            "1:1",
            "-d",
            VALUE_BYTES,
            "--key-maximum",
            "9",
        ];
        if random {
            args.push("-R");
        }
        crate::workloads::peak_rss_kib(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    let bench_args = [
        "-p",
        &port,
        "-c",
        "10",
        "-n",
        "10",
        "-d",
        VALUE_BYTES,
        "-q",
        "--",
        "set",
        "bench",
        "__data__",
    ];
    let bench = crate::workloads::peak_rss_kib(&bench_args.map(String::from));
    let (one, ten) = (memtier_peak("1", false), memtier_peak("10", false));
    assert!(
        ten <= 2 * bench,
        "memtier mode peaked at {ten} KiB, benchmark mode at {bench} KiB (10 connections)"
    );
    assert!(
        ten - one < COPIES_KIB,
        "memtier mode's peak RSS: {one} KiB at -c 1, {ten} KiB at -c 10: grows with -c"
    );
    let random = memtier_peak("10", true);
    assert!(random - one < COPIES_KIB, "-R: {random} KiB at -c 10");
    let mut c = server.client();
    let mut whole = 0;
    for k in 0..10 {
        if let Some(v) = c.bulk(&["GET", &format!("memtier-{k}")]) {
            assert_eq!(v.len().to_string(), VALUE_BYTES, "memtier-{k}");
            whole += 1;
        }
    }
    assert!(whole > 0, "no value was written");
}
