//! `--ratio SET:GET` mixes against Valkey: the server sees the ratio asked for, each command is
//! timed on its own reply (in every report format and the record), and `--arrival poisson`
//! runs under `--rps`.

use crate::harness::{Server, TempDir, run_respbench};
use crate::record::check_with_python;

#[test]
fn ratio_1_to_9_is_what_the_server_counts() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "--ratio", "1:9", "-r", "10000", "-n", "200000", "-P", "16", "--seed", "7", "-q",
    ]);
    out.assert_success();
    assert_eq!(out.stderr_but_machine_busy(), "");
    let mut c = server.client();
    let (set, get) = (c.calls("set"), c.calls("get"));
    assert_eq!(set + get, 200_000, "every request went out once");
    let ratio = set as f64 / get as f64;
    assert!(
        (ratio / (1.0 / 9.0) - 1.0).abs() < 0.02,
        "SET:GET {set}:{get} = {ratio}, asked 1:9"
    );
    // -q: one line per command, then the total.
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("SET:GET 1:9 SET: "), "{}", lines[0]);
    assert!(lines[1].starts_with("SET:GET 1:9 GET: "), "{}", lines[1]);
    assert!(lines[2].starts_with("SET:GET 1:9: "), "{}", lines[2]);
}

/// GET is denied by ACL, SET is not: with `-e` and `-P 16`, every error must land on GET and
/// every success on SET, which holds only if each reply is matched to its own command.
#[test]
fn pipelined_mix_times_each_request_on_its_own_reply() {
    let server = Server::start_valkey();
    server.client().ok(&[
        "ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all", "-get",
    ]);
    let dir = TempDir::new();
    let json = dir.path().join("mix.json");
    let html = dir.path().join("mix.html");
    let out = server.bench(&[
        "--html",
        html.to_str().unwrap(),
        "--user",
        "bench",
        "-a",
        "pw",
        "--json",
        json.to_str().unwrap(),
        "--ratio",
        "1:3",
        "-r",
        "1000",
        "-n",
        "20000",
        "-P",
        "16",
        "-e",
        "--csv",
    ]);
    out.assert_success();
    let set_calls = server.client().calls("set");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    check_with_python(&json);
    // The record says what workload it measured.
    let options = &record["options"];
    assert_eq!(
        options["mix"],
        serde_json::json!([
            {"name": "SET", "command": null, "weight": 1, "key_pattern": null},
            {"name": "GET", "command": null, "weight": 3, "key_pattern": null}
        ])
    );
    assert_eq!(
        options["key_pattern"],
        serde_json::json!({"name": "uniform"})
    );
    assert_eq!(
        (&options["key_minimum"], &options["key_maximum"]),
        (&0.into(), &999.into())
    );
    assert_eq!(options["key_prefix"], "key:");
    assert_eq!(options["arrival"], "uniform");
    let test = &record["tests"][0];
    assert_eq!(test["commands"], serde_json::json!(["set", "get"]));
    let mix = test["mix"].as_array().expect("a mix in the record");
    assert_eq!(mix[0]["name"], "SET");
    assert_eq!(mix[0]["completed"], set_calls, "every SET success is SET's");
    assert_eq!(mix[0]["failed"], 0, "no GET error counted on SET");
    assert_eq!(mix[0]["latency_us"]["count"], set_calls);
    assert_eq!(mix[1]["name"], "GET");
    assert_eq!(mix[1]["completed"], 0, "no SET success counted on GET");
    assert_eq!(mix[1]["failed"], 20_000 - set_calls);
    assert!(
        (4000..6000).contains(&set_calls),
        "about a quarter: {set_calls}"
    );
    // CSV: the header, a row per command, the total.
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(rows.len(), 4, "{}", out.stdout);
    assert!(rows[1].starts_with("\"SET:GET 1:3 SET\","), "{}", rows[1]);
    assert!(
        rows[2].starts_with("\"SET:GET 1:3 GET\",\"0.00\""),
        "{}",
        rows[2]
    );
    assert!(rows[3].starts_with("\"SET:GET 1:3\","), "{}", rows[3]);
    // The HTML report: a row per command in the test's section, with its request count.
    let page = std::fs::read_to_string(&html).unwrap();
    let set_row = "<td data-command=\"SET\">SET</td>";
    assert!(page.contains(set_row), "no SET row in the page");
    let get_row = "<td data-command=\"GET\">GET</td>";
    let at = page.find(get_row).expect("a GET row");
    let requests = format!("<td>{}</td>", 20_000 - set_calls);
    assert!(
        page[at..]
            .split("</tr>")
            .next()
            .unwrap()
            .contains(&requests),
        "GET's requests are its errors: {}",
        &page[at..at + 200]
    );
    // compare: each command's rows when both records ran the same mix.
    let out = run_respbench(
        &[
            "compare".to_string(),
            json.display().to_string(),
            json.display().to_string(),
        ],
        None,
    );
    out.assert_success();
    for needle in [
        "SET:GET 1:3\n",
        "SET:GET 1:3 / SET\n",
        "SET:GET 1:3 / GET\n",
    ] {
        out.assert_stdout_contains(needle);
    }
}

#[test]
fn full_report_has_a_latency_table_per_command_and_sizes_apply_to_set() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "--ratio=1:1",
        "--data-size-range=100-200",
        "-r",
        "300",
        "-n",
        "3000",
    ]);
    out.assert_success();
    for needle in [
        "====== SET:GET 1:1 ======",
        "  SET latency summary (msec):",
        "  GET latency summary (msec):",
    ] {
        out.assert_stdout_contains(needle);
    }
    let mut c = server.client();
    let lens: Vec<i64> = (0..300)
        .map(|k| c.int(&["STRLEN", format!("key:{k:012}").as_str()]))
        .filter(|&l| l > 0)
        .collect();
    assert!(!lens.is_empty() && lens.iter().all(|l| (100..=200).contains(l)));
    assert!(lens.iter().any(|&l| l != lens[0]), "sizes vary");
}

#[test]
fn poisson_arrivals_run_under_rps_and_complete_every_request() {
    let server = Server::start();
    let out = server.bench(&[
        "--rps",
        "4000",
        "--arrival",
        "poisson",
        "-n",
        "2000",
        "-c",
        "4",
        "--seed",
        "3",
        "-t",
        "set",
        "--csv",
    ]);
    out.assert_success();
    assert_eq!(out.stderr_but_machine_busy(), "");
    assert_eq!(server.client().calls("set"), 2000);
}

#[test]
fn ratio_with_a_custom_command_is_refused() {
    // (`--ratio` with `--cluster` runs since issue 34: each command goes to its key's node;
    // tests/integration/cluster/memtier.rs.)
    let server = Server::start();
    let out = server.bench(&["--ratio", "1:1", "GET", "k"]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("--ratio"),
        "{}",
        out.stderr
    );
}

#[test]
fn merged_shards_add_up_each_command_of_the_mix() {
    let server = Server::start();
    let dir = TempDir::new();
    let json = dir.path().join("mix-{shard}.json");
    for i in 0..2 {
        server
            .bench(&[
                "--shard",
                &format!("{i}/2"),
                "--ratio",
                "1:4",
                "-r",
                "100",
                "-n",
                "5000",
                "-q",
                "--json",
                json.to_str().unwrap(),
            ])
            .assert_success();
    }
    let files: Vec<String> = (0..2)
        .map(|i| {
            dir.path()
                .join(format!("mix-{i}.json"))
                .display()
                .to_string()
        })
        .collect();
    let all = dir.path().join("all.json");
    let mut args = vec!["merge".to_string(), "-o".into(), all.display().to_string()];
    args.extend(files.iter().cloned());
    crate::harness::run_respbench(&args, None).assert_success();
    check_with_python(&all);
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&all).unwrap()).unwrap();
    let test = &merged["tests"][0];
    let mix = test["mix"].as_array().unwrap();
    let set = mix[0]["completed"].as_u64().unwrap();
    let get = mix[1]["completed"].as_u64().unwrap();
    assert_eq!(set + get, 5000);
    assert_eq!(set, server.client().calls("set"));
}

#[test]
fn memtier_command_mix_with_weights_and_its_own_key_pattern() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "--command=HSET h:__key__ f __data__",
        "--command-ratio=2",
        "--command",
        "GET __key__",
        "--command-ratio",
        "3",
        "--command-key-pattern=Z",
        "-r",
        "1000",
        "-n",
        "50000",
        "-P",
        "8",
        "--seed",
        "1",
        "-q",
    ]);
    out.assert_success();
    assert_eq!(out.stderr_but_machine_busy(), "");
    let mut c = server.client();
    let (hset, get) = (c.calls("hset"), c.calls("get"));
    assert_eq!(hset + get, 50_000);
    let share = hset as f64 / 50_000.0;
    assert!(
        (share - 0.4).abs() < 0.01,
        "HSET share {share}, asked 2 of 5"
    );
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        lines[0].starts_with("HSET:GET 2:3 HSET: "),
        "{}",
        out.stdout
    );
    assert!(lines[1].starts_with("HSET:GET 2:3 GET: "), "{}", out.stdout);
    assert!(lines[2].starts_with("HSET:GET 2:3: "), "{}", out.stdout);
    // HSET draws uniformly (the run's pattern): most of the 1000 hashes exist.
    assert!(c.dbsize() > 900, "{}", c.dbsize());
}

#[test]
fn key_pattern_pair_gives_set_and_get_their_own_patterns() {
    // SET walks the keys in order, GET draws Zipf (hot low ranks): GETs mostly hit the keys
    // SET wrote first, where uniform GETs over 1000 keys would mostly miss.
    let server = Server::start_valkey();
    server
        .bench(&[
            "--key-pattern=S:Z",
            "--ratio=1:1",
            "--key-maximum=999",
            "-n",
            "400",
            "-c",
            "4",
            "--seed",
            "2",
            "-q",
        ])
        .assert_success();
    let mut c = server.client();
    let sets = c.calls("set");
    assert_eq!(
        c.dbsize() as u64,
        sets,
        "sequential SETs write distinct keys"
    );
    for k in 0..sets {
        assert!(
            c.bulk(&["GET", format!("key:{k:012}").as_str()]).is_some(),
            "key {k} of the first {sets}"
        );
    }
    let hits = c.info_u64("stats", "keyspace_hits") - sets; // our own GETs above hit
    let misses = c.info_u64("stats", "keyspace_misses");
    let share = hits as f64 / (hits + misses) as f64;
    assert!(
        share > 0.4,
        "GET hit share {share} ({hits} hits, {misses} misses)"
    );
}

#[test]
fn command_quotes_as_memtier_does() {
    // memtier's rule: 'set "a b" x' is three arguments, the key has a space; escapes in "..."
    let server = Server::start();
    let out = server.bench(&[
        "--command",
        r#"SET "a b" 'x y'"#,
        "--command",
        r#"SET "tab\tkey" "\x41\"""#,
        "-n",
        "20",
        "-c",
        "1",
        "-q",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "a b"]), Some(b"x y".to_vec()));
    assert_eq!(c.bulk(&["GET", "tab\tkey"]), Some(b"A\"".to_vec()));
    assert_eq!(c.dbsize(), 2);
}
