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
/// further and the one after, each take a large share of the increments of their interval.
///
/// A key is drawn when its request is sent, so an interval in which a busy machine kept the
/// process off the CPU sends few of its requests or none: its key can't tell, and is not judged.
/// What each interval sent is read from the record's 100 ms slots (its second 0 begins where
/// the drift counts from: no warmup); with 2 connections of one request each, all but at most 2
/// of the replies completed in an interval were sent in it. A run that measured fewer than two
/// intervals, one of them after the first move, is run again (at most three times).
#[test]
fn a_drifting_zipf_moves_its_hottest_key() {
    for attempt in 1..=3 {
        let server = Server::start();
        let (r, _) = run(
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
        let slots: Vec<u64> = r["tests"][0]["timeline"]
            .as_array()
            .expect("a timeline")
            .iter()
            .flat_map(|s| s["slots"].as_array().expect("a short test's slots").iter())
            .map(|x| u(&x["completed"]))
            .collect();
        let sent_in = |n: usize| -> u64 {
            let sum: u64 = slots.iter().skip(5 * n).take(5).sum();
            sum.saturating_sub(2)
        };
        let mut c = server.client();
        let mut get = |k: u64| -> i64 {
            c.bulk(&["GET", &format!("key:{k:012}")])
                .map_or(0, |v| String::from_utf8_lossy(&v).parse().expect("a count"))
        };
        let cold = get(50);
        let mut judged = Vec::new();
        for (n, k) in [0u64, 100, 200].into_iter().enumerate() {
            // 30 draws give the centre 25 on average (5/6 of them), 10 or fewer about once in
            // 10^8 runs.
            if sent_in(n) < 30 {
                continue;
            }
            let hits = get(k);
            assert!(
                hits > 10 * cold.max(1),
                "key {k}: {hits} increments of {} sent in its interval, key 50: {cold}",
                sent_in(n)
            );
            judged.push(k);
        }
        if judged.len() >= 2 && judged.iter().any(|&k| k > 0) {
            return;
        }
        eprintln!("attempt {attempt}: only the keys {judged:?} had requests enough to judge");
    }
    panic!("three runs each left fewer than two intervals with requests enough to judge");
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

/// The most threads `--pubsub 2000` may run on (issue 33): subscribers share a few event
/// loops, not a thread each.
const MAX_THREADS: u64 = 16;

/// The `Threads:` line of `/proc/<pid>/status`; `None` once the process has exited (a zombie
/// until the harness reaps it).
fn threads_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    if status
        .lines()
        .any(|l| l.starts_with("State:") && l.contains('Z'))
    {
        return None;
    }
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
}

/// 2,000 subscribers (twice the old cap of a thread each) on at most [`MAX_THREADS`] threads,
/// sampled all through the run, and every message delivered once to every one of them.
fn two_thousand_subscribers_on_a_few_threads(server: &Server) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let args = [
        "--pubsub",
        "2000",
        "--channels",
        "4",
        "-n",
        "200",
        "--rps",
        "100",
        "-q",
        "--json",
        path.to_str().expect("UTF-8 path"),
    ];
    let run = server.spawn_bench(&args);
    let pid = run.pid();
    let mut most = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while let Some(n) = threads_of(pid) {
        most = most.max(n);
        if std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = run.finish(std::time::Duration::from_secs(120));
    out.assert_success();
    assert!(most > 0, "the process's threads were never read");
    assert!(most <= MAX_THREADS, "{most} threads for 2,000 subscribers");
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let d = &r["tests"][0]["delivery"];
    assert_eq!(u(&d["receivers"]), 2000, "{d}");
    assert_eq!(u(&d["published"]), 200, "{d}");
    // 200 messages round 4 channels, each channel's 500 subscribers: 500 deliveries each.
    assert_eq!(u(&d["expected"]), 100_000, "{d}");
    assert_eq!(u(&d["delivered"]), 100_000, "{d}");
    assert_eq!((u(&d["lost"]), u(&d["duplicates"])), (0, 0), "{d}");
    assert_eq!(u(&d["fanout"]), 100_000, "{d}");
    assert!(d["disconnects"].as_array().unwrap().is_empty(), "{d}");
}

#[test]
fn two_thousand_subscribers_run_on_a_few_threads_on_redis() {
    two_thousand_subscribers_on_a_few_threads(&Server::start());
}

#[test]
fn two_thousand_subscribers_run_on_a_few_threads_on_valkey() {
    two_thousand_subscribers_on_a_few_threads(&Server::start_valkey());
}

/// 1,500 consumers of one group (past the old cap of 1,000, a thread each) on at most
/// [`MAX_THREADS`] threads, sampled all through the run: every entry delivered to one of them
/// once and acknowledged, nothing pending at the end.
fn many_consumers_on_a_few_threads(server: &Server, extra: &[&str]) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let mut args = vec![
        "--stream",
        "1500",
        "-n",
        "3000",
        "--rps",
        "1000",
        "-q",
        "--json",
        path.to_str().expect("UTF-8 path"),
    ];
    args.extend(extra);
    let run = server.spawn_bench(&args);
    let pid = run.pid();
    let mut most = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while let Some(n) = threads_of(pid) {
        most = most.max(n);
        if std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = run.finish(std::time::Duration::from_secs(120));
    out.assert_success();
    assert!(most > 0, "the process's threads were never read");
    assert!(most <= MAX_THREADS, "{most} threads for 1,500 consumers");
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let d = &r["tests"][0]["delivery"];
    assert_eq!(u(&d["receivers"]), 1500, "{d}");
    assert_eq!(
        (u(&d["published"]), u(&d["delivered"]), u(&d["acked"])),
        (3000, 3000, 3000),
        "{d}"
    );
    assert_eq!((u(&d["lost"]), u(&d["duplicates"])), (0, 0), "{d}");
    assert!(d["disconnects"].as_array().unwrap().is_empty(), "{d}");
    let mut c = server.client();
    let pending = c.cmd(&["XPENDING", "respbench:stream", "respbench"]);
    assert!(
        format!("{pending:?}").starts_with("Array([Integer(0)"),
        "{pending:?}"
    );
}

#[test]
fn many_stream_consumers_run_on_a_few_threads_on_redis_and_valkey() {
    many_consumers_on_a_few_threads(&Server::start(), &[]);
    many_consumers_on_a_few_threads(&Server::start_valkey(), &["-3"]);
}

/// The server SIGKILLed 1.5 s into a 6 s `--pubsub -e` run and restarted on its port 2 s later:
/// the run goes on to its end, the publishes that failed are counted by kind, the outage is
/// listed with them, every subscriber reconnects and subscribes again, and messages published
/// after the restart are delivered.
fn a_restarted_server_is_an_outage_and_pubsub_goes_on(mut server: Server) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let args = [
        "--pubsub",
        "20",
        "-e",
        "--rps",
        "500",
        "--duration",
        "6",
        "--json",
        path.to_str().expect("UTF-8 path"),
    ];
    let run = server.spawn_bench(&args);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    server.kill_and_restart(std::time::Duration::from_secs(2));
    let out = run.finish(std::time::Duration::from_secs(60));
    out.assert_success();
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let test = &r["tests"][0];
    let d = &test["delivery"];
    assert_eq!(test["outcome"], "completed", "{test}");
    // Every message was either acknowledged or failed: none left unsent.
    assert_eq!(u(&d["published"]) + u(&d["publish_errors"]), 3000, "{d}");
    assert!(u(&d["publish_errors"]) > 0, "{d}");
    let kinds = test["requests"]["errors"].as_object().expect("errors");
    assert!(
        kinds.keys().any(|k| k.starts_with("connection")),
        "{kinds:?}"
    );
    let outages = test["outages"].as_array().expect("outages");
    assert!(!outages.is_empty(), "{test}");
    assert!(u(&outages[0]["failed"]) > 0, "{outages:?}");
    // Each subscriber's connection failed and it subscribed again.
    let disconnects = d["disconnects"].as_array().unwrap();
    let mut back: Vec<u64> = disconnects
        .iter()
        .filter(|x| x["reconnected_at_s"].is_number())
        .map(|x| u(&x["receiver"]))
        .collect();
    back.sort_unstable();
    back.dedup();
    assert_eq!(back.len(), 20, "{disconnects:?}");
    // Delivered after the restart: the run went on to its end.
    let end = outages[0]["end_s"].as_f64().unwrap() as usize;
    let rows = d["seconds"].as_array().unwrap();
    let after: u64 = rows.iter().skip(end + 1).map(|s| u(&s["delivered"])).sum();
    assert!(after > 0, "{d}");
    assert!(
        rows.len() >= 5,
        "the rows reach the end of the 6 s run: {d}"
    );
}

#[test]
fn a_pubsub_run_goes_on_through_a_redis_restart() {
    a_restarted_server_is_an_outage_and_pubsub_goes_on(Server::start());
}

#[test]
fn a_pubsub_run_goes_on_through_a_valkey_restart() {
    a_restarted_server_is_an_outage_and_pubsub_goes_on(Server::start_valkey());
}

/// `CLIENT KILL TYPE pubsub` 1.5 s into a `--pubsub 10 -e` run: every subscriber is listed as
/// closed by the server, each subscribes again, and the run goes on to its end.
fn killed_subscribers_are_listed_and_come_back(server: &Server) {
    let dir = TempDir::new();
    let path = dir.path().join("run.json");
    let args = [
        "--pubsub",
        "10",
        "-e",
        "--rps",
        "200",
        "--duration",
        "4",
        "--json",
        path.to_str().expect("UTF-8 path"),
    ];
    let run = server.spawn_bench(&args);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = server.client().cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    let out = run.finish(std::time::Duration::from_secs(60));
    out.assert_success();
    check_with_python(&path);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let d = &r["tests"][0]["delivery"];
    let disconnects = d["disconnects"].as_array().unwrap();
    let mut dropped: Vec<u64> = disconnects
        .iter()
        .filter(|x| x["by_server"] == true && x["reconnected_at_s"].is_number())
        .map(|x| u(&x["receiver"]))
        .collect();
    dropped.sort_unstable();
    dropped.dedup();
    assert_eq!(dropped, (0..10).collect::<Vec<u64>>(), "{killed:?} {d}");
    assert_eq!(u(&d["published"]), 800, "{d}");
    assert_eq!(u(&d["lost"]) + u(&d["delivered"]), u(&d["expected"]), "{d}");
    assert!(u(&d["delivered"]) > 0, "{d}");
}

#[test]
fn subscribers_killed_by_the_server_are_listed_and_come_back_on_redis_and_valkey() {
    killed_subscribers_are_listed_and_come_back(&Server::start());
    killed_subscribers_are_listed_and_come_back(&Server::start_valkey());
}
