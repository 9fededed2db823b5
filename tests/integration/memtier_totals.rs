//! memtier's results table checked the way its numbers relate (issue 23: "every number agrees
//! with the server's counters"), against Redis 7.0 and Valkey 9.1: in the text table and in
//! `--json-out-file`, `Totals` is the aggregate of the rows above it (ops/sec and KB/sec
//! summed, counts summed, the average weighted by the counts, each percentile within the
//! rows'); the text and the JSON say the same; each row's count is the server's commandstats,
//! Hits/sec and Misses/sec its keyspace_hits/misses, KB/sec the bytes written and read
//! (respbench's record, the server's net input, and the exact RESP sizes where the test knows
//! them); the HDR files and the JSON's `Histogram log format` hold the rows' requests. For
//! `--ratio 1:0`, `0:1`, `1:10`, a `--command` run, `--run-count 3` and `--multi-key-get`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::harness::{Output, Server, TempDir, run_respbench};

/// One run's outputs.
struct Run {
    out: Output,
    json: Value,
    record: Value,
    dir: TempDir,
}

/// `respbench memtier -s 127.0.0.1 -p PORT args…` with every output asked for, after the
/// server's statistics were reset (its counters are then this run's).
fn run(server: &Server, args: &[&str]) -> Run {
    server.client().ok(&["CONFIG", "RESETSTAT"]);
    let dir = TempDir::new();
    let (json, record) = (dir.path().join("out.json"), dir.path().join("rec.json"));
    let port = server.port().to_string();
    let mut all: Vec<String> = [
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--hide-histogram",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    for (flag, p) in [
        ("--json-out-file", json.clone()),
        ("--json", record.clone()),
        ("--hdr-file-prefix", dir.path().join("hdr")),
    ] {
        all.push(flag.to_string());
        all.push(p.to_str().unwrap().to_string());
    }
    let out = run_respbench(&all, None);
    out.assert_success();
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    Run {
        json: read(&json),
        record: read(&record),
        out,
        dir,
    }
}

/// A text table's rows: name, then each column's value by its header (`None` for `---`).
type Table = Vec<(String, BTreeMap<String, Option<f64>>)>;

/// The table titled `title` on stdout.
fn table(stdout: &str, title: &str) -> Table {
    let mut lines = stdout.lines().skip_while(|l| *l != title).skip(2);
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("no {title}:\n{stdout}"));
    // Columns are right-aligned names of one or two words: two spaces or more part them.
    let columns: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .skip(1)
        .collect();
    lines
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cells = l.split_whitespace();
            let name = cells.next().unwrap().to_string();
            let values = columns
                .iter()
                .zip(cells)
                .map(|(c, v)| (c.to_string(), v.parse().ok()))
                .collect();
            (name, values)
        })
        .collect()
}

fn near(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance + 1e-9
}

/// Totals against its rows, in the text table (`digits`: 2 for rates, 5 for ms) and the JSON
/// block (2 and 3), and the text against the JSON.
fn check_block(stdout: &str, title: &str, block: &Value) {
    let text = table(stdout, title);
    let names: Vec<&str> = text.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.last(), Some(&"Totals"), "{title}: {names:?}");
    let (rows, totals) = text.split_at(text.len() - 1);
    let totals = &totals[0].1;
    let n = rows.len() as f64;
    let json = |name: &str, key: &str| block[name][key].as_f64().unwrap();
    let count = |name: &str| block[name]["Count"].as_u64().unwrap();
    let all: u64 = names[..rows.len()].iter().map(|r| count(r)).sum();
    assert_eq!(count("Totals"), all, "{title}: Totals Count is the rows'");
    for (column, key) in [("Ops/sec", "Ops/sec"), ("KB/sec", "KB/sec")] {
        let sum: f64 = rows.iter().filter_map(|(_, v)| v[column]).sum();
        let total = totals[column].unwrap_or(0.0);
        assert!(
            near(total, sum, 0.01 * n),
            "{title} {column}: {total} vs {sum}"
        );
        let sum: f64 = names[..rows.len()].iter().map(|r| json(r, key)).sum();
        assert!(
            near(json("Totals", key), sum, 0.01 * n),
            "{title} JSON {key}"
        );
    }
    for column in ["Hits/sec", "Misses/sec"] {
        if totals.contains_key(column) {
            let sum: f64 = rows.iter().filter_map(|(_, v)| v[column]).sum();
            assert!(
                near(totals[column].unwrap(), sum, 0.01 * n),
                "{title} {column}"
            );
        }
    }
    // The average weighted by the counts, each percentile within the busy rows'.
    let busy: Vec<&(String, BTreeMap<String, Option<f64>>)> =
        rows.iter().filter(|(name, _)| count(name) > 0).collect();
    let weighted = busy
        .iter()
        .map(|(name, v)| count(name) as f64 * v["Avg. Latency"].unwrap())
        .sum::<f64>()
        / all.max(1) as f64;
    if all > 0 {
        let avg = totals["Avg. Latency"].unwrap();
        assert!(
            near(avg, weighted, 1e-5),
            "{title}: avg {avg} vs {weighted}"
        );
        let avg = json("Totals", "Average Latency");
        assert!(
            near(avg, weighted, 0.0011),
            "{title}: JSON avg {avg} vs {weighted}"
        );
    }
    for column in ["p50 Latency", "p99 Latency", "p99.9 Latency"] {
        let of_rows = busy.iter().map(|(_, v)| v[column].unwrap());
        let (lo, hi) = of_rows.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if let Some(t) = totals[column].filter(|_| all > 0) {
            assert!(
                t >= lo - 1e-5 && t <= hi + 1e-5,
                "{title} {column}: {t} not in {lo}..{hi}"
            );
        }
    }
    // The text and the JSON say the same.
    for (name, v) in &text {
        let row = &block[name.as_str()];
        let pcts = &row["Percentile Latencies"];
        for (column, value, digits) in [
            ("Ops/sec", row["Ops/sec"].as_f64(), 0.005),
            ("Hits/sec", row["Hits/sec"].as_f64(), 0.005),
            ("Misses/sec", row["Misses/sec"].as_f64(), 0.005),
            ("Avg. Latency", row["Average Latency"].as_f64(), 0.0005),
            ("p50 Latency", pcts["p50.00"].as_f64(), 0.0005),
            ("p99 Latency", pcts["p99.00"].as_f64(), 0.0005),
            ("p99.9 Latency", pcts["p99.90"].as_f64(), 0.0005),
            ("KB/sec", row["KB/sec"].as_f64(), 0.005),
        ] {
            if let Some(Some(t)) = v.get(column) {
                let j = value.unwrap();
                assert!(
                    near(*t, j, digits),
                    "{title} {name} {column}: text {t}, JSON {j}"
                );
            }
        }
        check_histogram_log(&format!("{title} {name}"), row);
    }
}

/// The row's `Histogram log format` (µs, as memtier's) holds its requests and its percentiles.
fn check_histogram_log(what: &str, row: &Value) {
    let pcts = &row["Percentile Latencies"];
    let encoded = pcts["Histogram log format"]["Compressed Histogram"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {row}"));
    let h = respbench::record::hdr::decode(encoded).expect("decodes");
    assert_eq!(h.len(), row["Count"].as_u64().unwrap(), "{what}");
    if h.is_empty() {
        return;
    }
    for (p, key) in [(50.0, "p50.00"), (99.0, "p99.00"), (99.9, "p99.90")] {
        let ms = h.value_at_percentile(p) as f64 / 1000.0;
        let j = pcts[key].as_f64().unwrap();
        // µs buckets against the row's ns ones: one bucket of 3 significant figures apart.
        assert!(near(ms, j, j * 0.002 + 0.0015), "{what} {key}: {ms} vs {j}");
    }
}

/// The HDR files of run `n`: the whole run holds the Totals row's requests, each command's
/// file its row's, and their means are the rows' averages.
fn check_hdr_files(dir: &Path, n: usize, block: &Value, commands: &[(&str, &str)]) {
    let file = |name: &str| {
        let p = dir.join(format!("hdr_{name}.txt"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let field = |text: &str, key: &str| -> f64 {
        let at = text.find(key).unwrap_or_else(|| panic!("{key}:\n{text}")) + key.len();
        text[at..]
            .trim_start_matches([' ', '='])
            .split([',', ']'])
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let mut files = vec![(format!("FULL_RUN_{n}"), "Totals")];
    files.extend((commands.iter()).map(|(cmd, row)| (format!("{cmd}_command_run_{n}"), *row)));
    for (name, row) in files {
        let text = file(&name);
        let count = block[row]["Count"].as_u64().unwrap();
        assert_eq!(field(&text, "Total count") as u64, count, "{name}");
        let mean = field(&text, "#[Mean");
        let avg = block[row]["Average Latency"].as_f64().unwrap();
        assert!(near(mean, avg, 0.0025), "{name}: mean {mean}, row {avg}");
    }
}

/// The record's mix entry named `name`.
fn mix<'r>(record: &'r Value, test: usize, name: &str) -> &'r Value {
    record["tests"][test]["mix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", record["tests"][test]["mix"]))
}

/// Each row's KB/sec TX and RX are its mix entry's bytes over the test's duration, and the
/// server read at least what was written, and little more (the run's own control traffic).
fn check_bytes(r: &Run, server: &Server, rows: &[(&str, &str)]) {
    let secs = r.record["tests"][0]["duration_s"].as_f64().unwrap();
    let block = &r.json["ALL STATS"];
    let mut tx = 0;
    for (command, row) in rows {
        let bytes = &mix(&r.record, 0, command)["bytes"];
        let (t, x) = (bytes["tx"].as_u64().unwrap(), bytes["rx"].as_u64().unwrap());
        tx += t;
        for (key, b) in [("KB/sec TX", t), ("KB/sec RX", x)] {
            let want = b as f64 / secs / 1024.0;
            let got = block[*row][key].as_f64().unwrap();
            assert!(near(got, want, 0.0051), "{row} {key}: {got} vs {want}");
        }
    }
    let input = server.client().info_u64("stats", "total_net_input_bytes");
    assert!(
        input >= tx && input - tx < 16 * 1024,
        "the server read {input} bytes, respbench wrote {tx} in requests"
    );
}

/// `$<len>\r\n<bytes>\r\n`'s length.
fn bulk(len: usize) -> u64 {
    (1 + len.to_string().len() + 2 + len + 2) as u64
}

#[test]
fn an_all_set_run_totals_are_its_sets_and_its_bytes_are_the_requests() {
    for server in [Server::start(), Server::start_valkey()] {
        let r = run(
            &server,
            &[
                "--requests=allkeys",
                "--key-pattern=P:P",
                "--ratio=1:0",
                "--key-minimum=1",
                "--key-maximum=2000",
                "-d",
                "32",
                "-c",
                "2",
                "-t",
                "2",
            ],
        );
        let block = &r.json["ALL STATS"];
        check_block(&r.out.stdout, "ALL STATS", block);
        let text = table(&r.out.stdout, "ALL STATS");
        let (sets, totals) = (&text[0], &text[3]);
        assert_eq!(sets.0, "Sets");
        for column in [
            "Ops/sec",
            "Avg. Latency",
            "p50 Latency",
            "p99 Latency",
            "KB/sec",
        ] {
            assert_eq!(sets.1[column], totals.1[column], "{column}: Totals is Sets");
        }
        for key in [
            "Count",
            "Ops/sec",
            "Average Latency",
            "KB/sec",
            "Percentile Latencies",
        ] {
            assert_eq!(block["Sets"][key], block["Totals"][key], "JSON {key}");
        }
        let mut c = server.client();
        assert_eq!(block["Sets"]["Count"].as_u64().unwrap(), c.calls("set"));
        // Every key once: the exact RESP bytes of `SET memtier-N <32 bytes>` and `+OK`.
        let tx: u64 = (1..=2000)
            .map(|k| 4 + bulk(3) + bulk(format!("memtier-{k}").len()) + bulk(32))
            .sum();
        let bytes = &mix(&r.record, 0, "SET")["bytes"];
        assert_eq!(bytes["tx"].as_u64(), Some(tx));
        assert_eq!(bytes["rx"].as_u64(), Some(5 * 2000));
        check_bytes(&r, &server, &[("SET", "Sets")]);
        check_hdr_files(r.dir.path(), 1, block, &[("SET", "Sets")]);
    }
}

#[test]
fn an_all_get_runs_hits_and_misses_are_the_servers_and_its_bytes_the_replies() {
    for server in [Server::start(), Server::start_valkey()] {
        let mut c = server.client();
        // Keys memtier-10..=99, one name length; 30 of the 90 exist, value 5 bytes.
        for k in 10..40 {
            c.ok(&["SET", &format!("memtier-{k}"), "value"]);
        }
        let r = run(
            &server,
            &[
                "--ratio=0:1",
                "--key-minimum=10",
                "--key-maximum=99",
                "-n",
                "300",
                "-c",
                "2",
                "-t",
                "1",
            ],
        );
        let block = &r.json["ALL STATS"];
        check_block(&r.out.stdout, "ALL STATS", block);
        let (hits, misses) = (
            c.info_u64("stats", "keyspace_hits"),
            c.info_u64("stats", "keyspace_misses"),
        );
        assert_eq!(hits + misses, 600);
        assert_eq!(c.calls("get"), block["Gets"]["Count"].as_u64().unwrap());
        let get = mix(&r.record, 0, "GET");
        assert_eq!(
            (get["hits"].as_u64(), get["misses"].as_u64()),
            (Some(hits), Some(misses))
        );
        // The JSON's rates are those counts over one duration.
        let rate = |key: &str| block["Gets"][key].as_f64().unwrap();
        let per_op = 600.0 / rate("Ops/sec");
        assert_eq!((rate("Hits/sec") * per_op).round() as u64, hits);
        assert_eq!((rate("Misses/sec") * per_op).round() as u64, misses);
        assert_eq!(block["Totals"]["Hits/sec"], block["Gets"]["Hits/sec"]);
        // `GET memtier-NN` is 30 bytes; a hit's reply `$5\r\nvalue\r\n`, a miss's `$-1\r\n`.
        let bytes = &get["bytes"];
        assert_eq!(bytes["tx"].as_u64(), Some(600 * 30));
        assert_eq!(bytes["rx"].as_u64(), Some(hits * bulk(5) + misses * 5));
        check_bytes(&r, &server, &[("GET", "Gets")]);
        check_hdr_files(r.dir.path(), 1, block, &[("GET", "Gets")]);
    }
}

#[test]
fn a_ratio_runs_totals_aggregate_its_rows_and_agree_with_the_server() {
    for server in [Server::start(), Server::start_valkey()] {
        let r = run(
            &server,
            &[
                "--ratio=1:10",
                "--key-maximum=200",
                "-n",
                "400",
                "-c",
                "2",
                "-t",
                "2",
                "--pipeline=4",
            ],
        );
        let block = &r.json["ALL STATS"];
        check_block(&r.out.stdout, "ALL STATS", block);
        let mut c = server.client();
        assert_eq!(block["Sets"]["Count"].as_u64().unwrap(), c.calls("set"));
        assert_eq!(block["Gets"]["Count"].as_u64().unwrap(), c.calls("get"));
        assert_eq!(block["Totals"]["Count"].as_u64(), Some(1600));
        let get = mix(&r.record, 0, "GET");
        assert_eq!(
            get["hits"].as_u64(),
            Some(c.info_u64("stats", "keyspace_hits"))
        );
        assert_eq!(
            get["misses"].as_u64(),
            Some(c.info_u64("stats", "keyspace_misses"))
        );
        check_bytes(&r, &server, &[("SET", "Sets"), ("GET", "Gets")]);
        check_hdr_files(r.dir.path(), 1, block, &[("SET", "Sets"), ("GET", "Gets")]);
    }
}

#[test]
fn a_command_runs_rows_are_its_commands_and_totals_their_aggregate() {
    for server in [Server::start(), Server::start_valkey()] {
        let r = run(
            &server,
            &[
                "--command=INCR __key__",
                "--command=GET __key__",
                "--key-prefix=ctr:",
                "--key-maximum=50",
                "-n",
                "200",
                "-c",
                "2",
                "-t",
                "1",
            ],
        );
        let block = &r.json["ALL STATS"];
        let text = table(&r.out.stdout, "ALL STATS");
        let names: Vec<&str> = text.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["Incrs", "Gets", "Totals"],
            "memtier's --command table"
        );
        assert!(!text[0].1.contains_key("Hits/sec"), "{}", r.out.stdout);
        check_block(&r.out.stdout, "ALL STATS", block);
        let mut c = server.client();
        assert_eq!(block["Incrs"]["Count"].as_u64().unwrap(), c.calls("incr"));
        assert_eq!(block["Gets"]["Count"].as_u64().unwrap(), c.calls("get"));
        assert_eq!(block["Totals"]["Count"].as_u64(), Some(400));
        check_bytes(&r, &server, &[("INCR", "Incrs"), ("GET", "Gets")]);
        check_hdr_files(
            r.dir.path(),
            1,
            block,
            &[("INCR", "Incrs"), ("GET", "Gets")],
        );
    }
}

#[test]
fn run_count_blocks_are_each_consistent_and_the_aggregate_adds_the_runs() {
    for server in [Server::start(), Server::start_valkey()] {
        let r = run(
            &server,
            &[
                "--ratio=1:4",
                "--key-maximum=100",
                "-n",
                "250",
                "-c",
                "2",
                "-t",
                "1",
                "--run-count=3",
                "--print-all-runs",
            ],
        );
        let titles = [
            "RUN #1 RESULTS",
            "RUN #2 RESULTS",
            "RUN #3 RESULTS",
            "BEST RUN RESULTS",
            "WORST RUN RESULTS",
            "AGGREGATED AVERAGE RESULTS (3 runs)",
        ];
        for title in titles {
            check_block(&r.out.stdout, title, &r.json[title]);
        }
        let mut c = server.client();
        let aggregate = &r.json[titles[5]];
        for (row, command) in [("Sets", "set"), ("Gets", "get")] {
            let runs: Vec<u64> = (0..3)
                .map(|i| r.json[titles[i]][row]["Count"].as_u64().unwrap())
                .collect();
            assert_eq!(runs.iter().sum::<u64>(), c.calls(command), "{row}");
            assert_eq!(aggregate[row]["Count"].as_u64(), Some(runs.iter().sum()));
            let mean: f64 = (0..3)
                .map(|i| r.json[titles[i]][row]["Ops/sec"].as_f64().unwrap())
                .sum::<f64>()
                / 3.0;
            let got = aggregate[row]["Ops/sec"].as_f64().unwrap();
            assert!(
                near(got, mean, 0.01),
                "{row}: aggregate ops {got} vs mean {mean}"
            );
        }
        assert_eq!(aggregate["Totals"]["Count"].as_u64(), Some(3 * 500));
        let hits: u64 = (0..3)
            .map(|i| mix(&r.record, i, "GET")["hits"].as_u64().unwrap())
            .sum();
        assert_eq!(hits, c.info_u64("stats", "keyspace_hits"));
        for (i, title) in titles[..3].iter().enumerate() {
            let block = &r.json[*title];
            check_hdr_files(
                r.dir.path(),
                i + 1,
                block,
                &[("SET", "Sets"), ("GET", "Gets")],
            );
            let get = mix(&r.record, i, "GET");
            let hits = get["hits"].as_u64().unwrap() as f64;
            let per_op = block["Gets"]["Count"].as_f64().unwrap()
                / block["Gets"]["Ops/sec"].as_f64().unwrap();
            let got = block["Gets"]["Hits/sec"].as_f64().unwrap() * per_op;
            assert!(near(got, hits, 0.5), "{title}: hits {got} vs {hits}");
        }
    }
}

#[test]
fn multi_key_get_hits_and_misses_are_the_keys_found_and_not() {
    for server in [Server::start(), Server::start_valkey()] {
        let mut c = server.client();
        // Keys memtier-1..=40, the first 20 present.
        for k in 1..=20 {
            c.ok(&["SET", &format!("memtier-{k}"), "v"]);
        }
        let r = run(
            &server,
            &[
                "--ratio=0:8",
                "--multi-key-get=4",
                "--key-minimum=1",
                "--key-maximum=40",
                "-n",
                "100",
                "-c",
                "2",
                "-t",
                "1",
            ],
        );
        let block = &r.json["ALL STATS"];
        check_block(&r.out.stdout, "ALL STATS", block);
        // An MGET is one request of the Gets row, and four keys looked up.
        assert_eq!(c.calls("mget"), 200);
        assert_eq!(block["Gets"]["Count"].as_u64(), Some(200));
        let (hits, misses) = (
            c.info_u64("stats", "keyspace_hits"),
            c.info_u64("stats", "keyspace_misses"),
        );
        assert_eq!(hits + misses, 800);
        let get = mix(&r.record, 0, "GET");
        assert_eq!(
            (get["hits"].as_u64(), get["misses"].as_u64()),
            (Some(hits), Some(misses))
        );
        let rate = |key: &str| block["Gets"][key].as_f64().unwrap();
        let per_op = 200.0 / rate("Ops/sec");
        assert_eq!((rate("Hits/sec") * per_op).round() as u64, hits);
        assert_eq!((rate("Misses/sec") * per_op).round() as u64, misses);
    }
}
