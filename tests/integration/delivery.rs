//! Issue 26 items 3 and 4 against real servers (Valkey 9.1 and Debian's Redis 7.0): `--pubsub`
//! delivers every message exactly once to every subscriber at the asked rate (channels, patterns,
//! sharded channels; RESP2 and RESP3), a slow subscriber falls behind and is dropped by the
//! server's output buffer limit (set small on the test's own server) and the record says so,
//! `--stream` delivers and acknowledges every entry once, and `--key-drift` moves the hot keys
//! (judged from the keys the server holds, not from timing).

use serde_json::Value;

use crate::harness::{Server, TempDir, respbench};
use crate::record::check_with_python;

/// Runs respbench with `--json` and returns the record (checked against the schema) and stdout.
fn run(server: &Server, args: &[&str]) -> (Value, String) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let mut all = vec!["--json", path.to_str().expect("UTF-8 path")];
    all.extend(args);
    let out = server.bench(&all);
    out.assert_success();
    let text = std::fs::read_to_string(&path).expect("the record");
    check_with_python(&path);
    (serde_json::from_str(&text).expect("JSON"), out.stdout)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// 10 subscribers, 300 messages at 200/s: every message to every subscriber once, the server
/// counted 10 receivers per publish, and no second published faster than asked.
fn ten_subscribers_get_every_message_once(server: &Server, extra: &[&str], command: &str) {
    let mut args = vec!["--pubsub", "10", "-n", "300", "--rps", "200", "-d", "64"];
    args.extend(extra);
    let (r, stdout) = run(server, &args);
    let d = &r["tests"][0]["delivery"];
    assert_eq!(u(&d["published"]), 300, "{d}");
    assert_eq!(u(&d["expected"]), 3000, "{d}");
    assert_eq!(u(&d["delivered"]), 3000, "{d}");
    assert_eq!((u(&d["lost"]), u(&d["duplicates"])), (0, 0), "{d}");
    assert_eq!(
        u(&d["fanout"]),
        3000,
        "the server counted 10 receivers per message: {d}"
    );
    let rows = d["seconds"].as_array().expect("rows");
    let published: u64 = rows.iter().map(|s| u(&s["published"])).sum();
    assert_eq!(published, 300);
    // Paced: the k-th message is not sent before k/200 s, so by the end of second s at most
    // 200 (s + 1) have been sent (counted by send time).
    let mut sent = 0;
    for (s, row) in rows.iter().enumerate() {
        sent += u(&row["published"]);
        assert!(
            sent <= 200 * (s as u64 + 1),
            "ahead of the rate by second {s}: {d}"
        );
    }
    assert!(
        rows.len() >= 2,
        "300 messages at 200/s span two seconds: {d}"
    );
    let test = &r["tests"][0];
    assert_eq!(u(&test["requests"]["completed"]), 3000);
    assert!(stdout.contains("lost 0, duplicates 0"), "{stdout}");
    // The header counts the test's own connections (10 subscribers, 1 publisher), not `-c`.
    assert!(stdout.contains("\n  11 parallel clients\n"), "{stdout}");
    assert_eq!(
        server.client().calls(command),
        300,
        "{command} calls on the server"
    );
}

#[test]
fn pubsub_delivers_every_message_exactly_once_on_redis_resp2() {
    let server = Server::start();
    ten_subscribers_get_every_message_once(&server, &[], "publish");
}

#[test]
fn pubsub_delivers_every_message_exactly_once_on_valkey_resp3_patterns() {
    let server = Server::start_valkey();
    ten_subscribers_get_every_message_once(&server, &["-3", "--psubscribe"], "publish");
}

#[test]
fn sharded_pubsub_delivers_every_message_exactly_once_on_valkey_and_redis() {
    for server in [Server::start_valkey(), Server::start()] {
        ten_subscribers_get_every_message_once(&server, &["--sharded"], "spublish");
    }
}

/// One subscriber reads a 4 kB message every 20 ms while 4 kB messages arrive far faster: it
/// falls behind, its output buffer on the server grows past the 1 MB hard limit set on this
/// server, and the server drops it; the fast one gets everything.
fn slow_subscriber_is_dropped(server: &Server) {
    let mut c = server.client();
    c.ok(&[
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "pubsub 1mb 512kb 1",
    ]);
    let (r, stdout) = run(
        server,
        &[
            "--pubsub",
            "2",
            "--slow-subscribers",
            "1:20",
            "-n",
            "6000",
            "--rps",
            "3000",
            "-d",
            "4000",
        ],
    );
    let d = &r["tests"][0]["delivery"];
    let drops = d["disconnects"].as_array().expect("disconnects");
    let drop = drops
        .iter()
        .find(|x| u(&x["receiver"]) == 0)
        .unwrap_or_else(|| panic!("the slow subscriber was not dropped: {d}"));
    assert_eq!(drop["by_server"], true, "{drop}");
    assert!(
        drops.iter().all(|x| u(&x["receiver"]) == 0),
        "only the slow one: {d}"
    );
    assert!(u(&d["lost"]) > 0, "{d}");
    // Rising lag before the drop: some second ended with the slow one behind.
    let rows = d["seconds"].as_array().expect("rows");
    let behind = rows.iter().map(|s| u(&s["behind"])).max().unwrap_or(0);
    assert!(behind > 0, "{d}");
    assert!(stdout.contains("closed by the server"), "{stdout}");
    // The fast subscriber got every message: delivered covers at least its 6000.
    assert!(u(&d["delivered"]) >= 6000, "{d}");
    assert!(u(&d["expected"]) == 12000, "{d}");
    lost_messages_are_not_no_errors_in_the_html(&r);
}

/// The HTML report of a run that lost messages shows its delivery table, and does not say
/// "No errors: … no lost requests" under its charts.
fn lost_messages_are_not_no_errors_in_the_html(record: &Value) {
    let dir = TempDir::new();
    let json = dir.path().join("lossy.json");
    std::fs::write(&json, record.to_string()).unwrap();
    let page = dir.path().join("lossy.html");
    let out = respbench(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h3>Delivery</h3>"), "the delivery table");
    assert!(
        !html.contains("class=\"note no-errors\""),
        "a run that lost messages is not \"no errors\""
    );
}

#[test]
fn a_slow_subscriber_falls_behind_and_redis_drops_it() {
    slow_subscriber_is_dropped(&Server::start());
}

#[test]
fn a_slow_subscriber_falls_behind_and_valkey_drops_it_by_its_buffer_limit() {
    let server = Server::start_valkey();
    slow_subscriber_is_dropped(&server);
    let stat = server
        .client()
        .info_u64("stats", "client_output_buffer_limit_disconnections");
    assert!(stat >= 1, "valkey counted the disconnection");
}

/// A consumer group of 3 reads 400 entries from 2 producers: each delivered and acknowledged
/// once, nothing pending at the end, the group's figures sampled every second.
fn stream_entries_are_delivered_and_acked_once(server: &Server, extra: &[&str]) {
    let mut args = vec![
        "--stream",
        "3",
        "--publishers",
        "2",
        "-n",
        "400",
        "--rps",
        "400",
    ];
    args.extend(extra);
    let (r, stdout) = run(server, &args);
    let d = &r["tests"][0]["delivery"];
    assert_eq!(
        (u(&d["published"]), u(&d["delivered"]), u(&d["acked"])),
        (400, 400, 400),
        "{d}"
    );
    assert_eq!((u(&d["lost"]), u(&d["duplicates"])), (0, 0), "{d}");
    let rows = d["seconds"].as_array().expect("rows");
    assert!(
        !rows.is_empty() && rows.iter().all(|s| s["pending"].is_u64()),
        "{d}"
    );
    assert!(stdout.contains("acknowledged 400 (XACK)"), "{stdout}");
    let mut c = server.client();
    assert_eq!(c.int(&["XLEN", "respbench:stream"]), 400);
    let pending = c.cmd(&["XPENDING", "respbench:stream", "respbench"]);
    assert!(
        format!("{pending:?}").starts_with("Array([Integer(0)"),
        "{pending:?}"
    );
}

#[test]
fn a_stream_group_gets_every_entry_once_on_redis_and_valkey() {
    stream_entries_are_delivered_and_acked_once(&Server::start(), &[]);
    stream_entries_are_delivered_and_acked_once(&Server::start_valkey(), &["-3"]);
}

/// Keys `key:000000000000`.. that hold a value, as numbers.
fn keys_written(server: &Server) -> Vec<u64> {
    let mut c = server.client();
    let mut keys: Vec<u64> = c
        .strings(&["KEYS", "key:*"])
        .iter()
        .map(|k| {
            String::from_utf8_lossy(&k[4..])
                .parse()
                .expect("a numbered key")
        })
        .collect();
    keys.sort_unstable();
    keys
}

/// A hot set of 10 keys replaced every 0.4 s over 2 s: the keys written are whole consecutive
/// sets of 10 from the range's start, at least five of them (intervals 0..=4 all occur within
/// the 2 s the test lasts at least), but for the last, which the end may cut.
fn hot_set_moves(server: &Server) {
    let (r, _) = run(
        server,
        &[
            "-q",
            "-r",
            "1000",
            "--key-drift",
            "hot:10:0.4",
            "--duration",
            "2",
            "-c",
            "2",
            "incr",
            "key:__rand_int__",
        ],
    );
    let drift = &r["options"]["key_drift"];
    assert_eq!(
        (drift["kind"].as_str(), u(&drift["keys"])),
        (Some("hot_set"), 10)
    );
    let keys = keys_written(server);
    // The set the test's end cut into (interval 5 begins at 2 s, as the last requests go) may
    // be partial; every set before it is whole, and nothing outside the sets was written.
    let last = keys.last().copied().unwrap_or(0) / 10;
    assert!(last >= 4, "{} keys: {keys:?}", keys.len());
    let whole: Vec<u64> = keys.iter().copied().filter(|k| k / 10 < last).collect();
    assert_eq!(
        whole,
        (0..last * 10).collect::<Vec<_>>(),
        "whole consecutive sets"
    );
}

#[test]
fn a_drifting_hot_set_moves_on_valkey_and_redis() {
    hot_set_moves(&Server::start_valkey());
    hot_set_moves(&Server::start());
}

/// A steep Zipf whose centre moves 100 keys every 0.5 s: its hottest key, then the key 100
/// further and the one after, each take a large share of the increments.
#[test]
fn a_drifting_zipf_moves_its_hottest_key() {
    let server = Server::start();
    run(
        &server,
        &[
            "-q",
            "-r",
            "1000",
            "--keys",
            "zipf:3",
            "--key-drift",
            "100:0.5",
            "--duration",
            "1.6",
            "-c",
            "2",
            "incr",
            "key:__rand_int__",
        ],
    );
    let mut c = server.client();
    let mut get = |k: u64| -> i64 {
        c.bulk(&["GET", &format!("key:{k:012}")])
            .map_or(0, |v| String::from_utf8_lossy(&v).parse().expect("a count"))
    };
    let hot: Vec<i64> = [0, 100, 200].iter().map(|&k| get(k)).collect();
    let cold = get(50);
    for (k, n) in [0, 100, 200].iter().zip(&hot) {
        assert!(
            *n > 10 * cold.max(1),
            "key {k}: {n} increments, key 50: {cold}"
        );
    }
}

#[test]
fn a_payload_too_small_for_the_stamp_is_one_line() {
    let out = respbench(&["--pubsub", "2", "-d", "16"]);
    out.assert_code(2);
    let line = out.single_stderr_line();
    assert!(
        line.contains("-d 16") && line.contains("32 bytes"),
        "{line}"
    );
}

/// Two shards of one `--pubsub` benchmark, each on its own channel names: `merge` adds their
/// counts and histograms exactly.
#[test]
fn merging_two_pubsub_shards_adds_their_counts_and_histograms() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let mut records = Vec::new();
    for shard in ["0/2", "1/2"] {
        let path = dir.path().join(format!("s{}.json", &shard[..1]));
        let p = path.to_str().expect("UTF-8 path").to_string();
        let args = [
            "--json", &p, "--shard", shard, "--pubsub", "3", "-n", "200", "-q",
        ];
        server.bench(&args).assert_success();
        records.push(p);
    }
    let merged = dir.path().join("merged.json");
    let out = respbench(&[
        "merge",
        &records[0],
        &records[1],
        "-o",
        merged.to_str().expect("UTF-8 path"),
    ]);
    out.assert_success();
    check_with_python(&merged);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let d = &m["tests"][0]["delivery"];
    // Each shard published its 100 messages to its own 3 subscribers.
    assert_eq!((u(&d["receivers"]), u(&d["published"])), (6, 200), "{d}");
    assert_eq!(
        (u(&d["expected"]), u(&d["delivered"]), u(&d["lost"])),
        (600, 600, 0),
        "{d}"
    );
    assert_eq!(u(&m["tests"][0]["requests"]["completed"]), 600);
    assert_eq!(u(&m["tests"][0]["latency_us"]["corrected"]["count"]), 600);
}
