//! The journal (issue 22): a `--json` run killed by SIGKILL leaves `FILE.partial`, which
//! `compare`, `report` and `merge` read as a record whose outcome says `killed` and `recover`
//! turns into one; the earlier `FILE` is untouched until the new record replaces it whole. On
//! Valkey 9.1 and Redis 7.0; suite + `--repeat` and `--find-max` write through the same journal.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{Output, Running, Server, TempDir, run_respbench};

fn respbench(args: &[&str]) -> Output {
    run_respbench(
        &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        None,
    )
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// An earlier record's bytes at the `--json` path.
const EARLIER: &str = "{\"schema\":\"respbench/1\",\"tests\":[],\"note\":\"the earlier record\"}\n";

/// SIGKILLs `run` and waits for it (bounded).
fn sigkill(run: Running) -> Output {
    run.signal(libc::SIGKILL);
    let out = run.finish(Duration::from_secs(10));
    assert_eq!(out.code, None, "killed by a signal");
    out
}

/// `respbench recover JOURNAL -o OUT`, and the record it wrote.
fn recover(journal: &Path, out: &Path) -> Value {
    respbench(&["recover", path(journal), "-o", path(out)]).assert_success();
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// Waits (at most 30 s) until the journal holds `needle` after `after`, for a kill at a known
/// point.
fn wait_for_journal(journal: &Path, after: &str, needle: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let text = std::fs::read_to_string(journal).unwrap_or_default();
        if text
            .split_once(after)
            .is_some_and(|(_, rest)| rest.contains(needle))
        {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "the journal {} never held {needle:?} after {after:?}",
        journal.display()
    );
}

fn sigkill_after_5_s_keeps_4_s(server: &Server) {
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.partial");
    let html = dir.path().join("run.html");
    std::fs::write(&json, EARLIER).unwrap();
    std::fs::write(&html, "the earlier report").unwrap();
    let run = server.spawn_bench(&[
        "-t",
        "set",
        "-c",
        "4",
        "--duration",
        "10",
        "-q",
        "--json",
        path(&json),
        "--html",
        path(&html),
    ]);
    thread::sleep(Duration::from_millis(2_500));
    // While the run holds the journal's lock, it is running, not killed: recover refuses it.
    let early = respbench(&[
        "recover",
        path(&journal),
        "-o",
        path(&dir.path().join("x.json")),
    ]);
    early.assert_code(2).assert_stderr_contains("still going");
    thread::sleep(Duration::from_millis(2_500));
    sigkill(run);

    assert_eq!(
        std::fs::read_to_string(&json).unwrap(),
        EARLIER,
        "the earlier record survives a run killed before its rename"
    );
    assert_eq!(
        std::fs::read_to_string(&html).unwrap(),
        "the earlier report",
        "so does the earlier HTML report"
    );
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    // The schema, the HDR histograms and the timeline's sums, checked independently.
    crate::record::check_with_python(&dir.path().join("recovered.json"));
    assert_eq!(rec["outcome"], "killed");
    let test = &rec["tests"][0];
    assert_eq!(test["name"], "SET");
    let seconds = test["timeline"].as_array().unwrap();
    assert!(seconds.len() >= 4, "{} s of timeline", seconds.len());
    let sum: u64 = seconds
        .iter()
        .map(|s| s["completed"].as_u64().unwrap())
        .sum();
    let completed = test["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 0);
    assert_eq!(
        completed, sum,
        "totals are the sum of the recovered seconds"
    );
    // As a Ctrl-C record counts them: every command written is answered, failed or still
    // unanswered, and no more than -c 4 × -P 1 can be in flight.
    let q = &test["requests"];
    let n = |k: &str| q[k].as_u64().unwrap_or_else(|| panic!("requests.{k}: {q}"));
    assert_eq!(
        n("issued"),
        completed + n("failed") + n("unanswered"),
        "{q}"
    );
    assert!(n("unanswered") <= 4, "{q}");
    assert_eq!(
        test["throughput_rps"].as_f64().unwrap(),
        completed as f64 / seconds.len() as f64
    );

    histograms_are_the_sums_of_the_seconds(&journal, test);
    beside_the_engine_is_kept(server, test);

    // compare reads the journal itself as that record (the same throughput), and says why.
    let out = respbench(&[
        "compare",
        path(&journal),
        path(&dir.path().join("recovered.json")),
        "--format",
        "json",
    ]);
    out.assert_success()
        .assert_stderr_contains("the run was killed");
    let cmp: Value = serde_json::from_str(&out.stdout).unwrap();
    let rps = &cmp["tests"][0]["metrics"][0];
    assert_eq!(rps["metric"], "rps");
    assert_eq!(
        rps["values"][0]["median"].as_f64().unwrap(),
        test["throughput_rps"].as_f64().unwrap()
    );
    // report reads it too.
    let html = dir.path().join("r.html");
    respbench(&["report", path(&journal), "-o", path(&html)]).assert_success();
    assert!(std::fs::read_to_string(&html).unwrap().contains("SET"));
}

/// The recovered test's corrected and uncorrected histograms are, bucket for bucket, the sums of
/// the full-precision deltas its journal's seconds carry: the same count (the test's completed
/// requests) and the same percentiles, exactly.
/// What the record takes from beside the engine is in the recovered test as in a finished one:
/// each worker's CPU, the server's block from the watch's samples (one interval a second) and
/// commandstats, the latency split, the machine's figures, and the verdict drawn from them.
fn beside_the_engine_is_kept(server: &Server, test: &Value) {
    let cpu = test["client_threads_cpu_pct"]
        .as_array()
        .unwrap_or_else(|| panic!("client CPU: {test}"));
    assert!(!cpu.is_empty());
    for pct in cpu {
        let pct = pct.as_f64().unwrap();
        assert!(pct > 0.0 && pct <= 105.0, "a worker's CPU: {pct}");
    }
    let servers = test["server"].as_array().expect("the server block");
    assert_eq!(servers.len(), 1, "{servers:?}");
    let s = &servers[0];
    let address = s["address"].as_str().unwrap();
    assert!(
        address.ends_with(&format!(":{}", server.port())),
        "{address}"
    );
    let intervals = s["seconds"].as_array().unwrap().len();
    assert!(intervals >= 3, "{intervals} server intervals: {s}");
    assert!(s["cpu_pct"].as_f64().unwrap() > 0.0, "{s}");
    assert!(
        s["used_memory"]["peak"].as_u64().unwrap() > 0,
        "the samples' memory: {s}"
    );
    // The server's time per call, from the commandstats the watch read each second.
    let set = s["commands"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["command"] == "set"))
        .unwrap_or_else(|| panic!("commandstats of SET: {s}"));
    assert!(set["calls"].as_u64().unwrap() > 0, "{set}");
    assert!(
        test["latency_split"]["server_us"].as_f64().is_some(),
        "{test}"
    );
    assert!(test["machine"]["cores"].as_u64().unwrap() >= 1, "{test}");
    let v = &test["verdict"];
    assert!(v["server_cpu_pct"].as_f64().is_some(), "{v}");
    assert!(v["client_max_thread_cpu_pct"].as_f64().is_some(), "{v}");
}

fn histograms_are_the_sums_of_the_seconds(journal: &Path, test: &Value) {
    use respbench::metrics::LatencyHistogram;
    use respbench::record::hdr::add_encoded;
    let text = std::fs::read_to_string(journal).unwrap();
    let seconds: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["kind"] == "second")
        .collect();
    assert_eq!(
        seconds.len(),
        test["timeline"].as_array().unwrap().len(),
        "one journal line per recovered second"
    );
    let completed = test["requests"]["completed"].as_u64().unwrap();
    for which in ["corrected", "uncorrected"] {
        let mut summed = LatencyHistogram::new();
        for s in &seconds {
            // A second in which nothing completed (a stall on a loaded machine) has no delta.
            let Some(delta) = s["exact"][which].as_str() else {
                assert_eq!(s["completed"], 0, "each second's delta: {s}");
                continue;
            };
            add_encoded(&mut summed, delta, "journal second").unwrap();
        }
        let mut recovered = LatencyHistogram::new();
        let whole = test["histograms"][which].as_str().unwrap();
        add_encoded(&mut recovered, whole, "recovered").unwrap();
        assert_eq!(
            summed.len(),
            completed,
            "{which}: the deltas count every request"
        );
        assert_eq!(
            recovered.len(),
            completed,
            "{which}: the record's histogram too"
        );
        for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                recovered.value_at_percentile_ns(p),
                summed.value_at_percentile_ns(p),
                "{which} p{p}"
            );
        }
        assert!(test["latency_us"][which]["p99"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn a_sigkilled_run_keeps_its_seconds_and_the_earlier_record_on_valkey() {
    sigkill_after_5_s_keeps_4_s(&Server::start_valkey());
}

#[test]
fn a_sigkilled_run_keeps_its_seconds_and_the_earlier_record_on_redis() {
    sigkill_after_5_s_keeps_4_s(&Server::start());
}

#[test]
fn a_completed_run_replaces_the_record_whole_and_removes_its_journal() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    std::fs::write(&json, EARLIER).unwrap();
    std::fs::write(&html, "earlier").unwrap();
    server
        .bench(&[
            "-t",
            "set",
            "-n",
            "2000",
            "-q",
            "--json",
            path(&json),
            "--html",
            path(&html),
        ])
        .assert_success();
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rec["outcome"], "completed");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "no journal or temporary file left: {left:?}");
}

#[test]
fn a_suite_with_repetitions_keeps_its_finished_tests_on_redis() {
    let server = Server::start();
    let dir = TempDir::new();
    let journal = dir.path().join("j.partial");
    // --json - with --journal: the journal goes where it is asked to.
    let run = server.spawn_bench(&[
        "-t",
        "set,get",
        "-c",
        "2",
        "--duration",
        "2",
        "--repeat",
        "2",
        "-q",
        "--json",
        "-",
        "--journal",
        path(&journal),
    ]);
    // Killed once GET's first repetition has a full second in the journal.
    wait_for_journal(
        &journal,
        "\"kind\":\"begin\",\"name\":\"GET\"",
        "\"kind\":\"second\"",
    );
    sigkill(run);
    let rec = recover(&journal, &dir.path().join("rec.json"));
    crate::record::check_with_python(&dir.path().join("rec.json"));
    let tests = rec["tests"].as_array().unwrap();
    assert!(tests.len() >= 3, "{tests:?}");
    for (i, rep) in [(0, 1), (1, 2)] {
        assert_eq!(tests[i]["name"], "SET");
        assert_eq!(tests[i]["repetition"], rep);
        assert_eq!(
            tests[i]["outcome"], "completed",
            "a finished test is kept whole"
        );
        assert!(
            !tests[i]["histograms"]["corrected"]
                .as_str()
                .unwrap()
                .is_empty()
        );
    }
    assert_eq!(tests[2]["name"], "GET");
    assert_eq!(tests[2]["repetition"], 1);
}

#[test]
fn an_interrupted_find_max_search_keeps_its_steps_on_valkey() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let json = dir.path().join("fm.json");
    let journal = dir.path().join("fm.json.partial");
    let run = server.spawn_bench(&[
        "-t",
        "get",
        "-c",
        "4",
        "--find-max",
        "p99<1s",
        "--rps",
        "500",
        "--step-duration",
        "1.2",
        "--warmup",
        "0.1",
        "-q",
        "--json",
        path(&json),
    ]);
    wait_for_journal(&journal, "\"find_max\"", "\"achieved_rps\"");
    sigkill(run);
    assert!(!json.exists(), "no record before the search ends");
    let rec = recover(&journal, &dir.path().join("rec.json"));
    assert_eq!(rec["outcome"], "killed");
    assert_eq!(rec["find_max"]["end"], "stopped", "as after Ctrl-C");
    let steps = rec["find_max"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    assert!(!rec["tests"].as_array().unwrap().is_empty());
}

#[test]
fn merge_reads_the_journals_of_killed_shards_on_valkey() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let json = dir.path().join("s-{shard}.json");
    let runs: Vec<Running> = ["0/2", "1/2"]
        .iter()
        .map(|shard| {
            server.spawn_bench(&[
                "--shard",
                shard,
                "-t",
                "set",
                "-c",
                "2",
                "--duration",
                "10",
                "-q",
                "--json",
                path(&json),
            ])
        })
        .collect();
    let journals: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("s-{i}.json.partial")))
        .collect();
    for j in &journals {
        wait_for_journal(j, "\"kind\":\"begin\"", "\"second\":1,");
    }
    for run in runs {
        sigkill(run);
    }
    let merged = dir.path().join("merged.json");
    respbench(&[
        "merge",
        "-o",
        path(&merged),
        path(&journals[0]),
        path(&journals[1]),
    ])
    .assert_success();
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(rec["outcome"], "killed");
    assert_eq!(rec["shards"].as_array().unwrap().len(), 2);
    let recovered: u64 = journals
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let r = recover(j, &dir.path().join(format!("r{i}.json")));
            r["tests"][0]["requests"]["completed"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(
        rec["tests"][0]["requests"]["completed"].as_u64().unwrap(),
        recovered,
        "the merged total is the shards' recovered totals"
    );
}

/// A killed run whose every request gets an error reply: the recovered test counts them by their
/// first word, as a finished test does, not together as `error replies`.
fn killed_error_replies_keep_their_word(server: &Server) {
    server.client().ok(&["SET", "thatkey", "a string"]);
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.partial");
    let run = server.spawn_bench(&[
        "-e",
        "-c",
        "2",
        "--duration",
        "10",
        "-q",
        "--json",
        path(&json),
        "lpush",
        "thatkey",
        "x",
    ]);
    // Two full seconds in the journal, then the kill.
    wait_for_journal(&journal, "\"kind\":\"second\"", "\"kind\":\"second\"");
    sigkill(run);
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    let test = &rec["tests"][0];
    let failed = test["requests"]["failed"].as_u64().unwrap();
    assert!(failed > 0, "{test}");
    assert_eq!(
        test["requests"]["errors"]["WRONGTYPE"].as_u64(),
        Some(failed)
    );
    assert!(
        test["requests"]["errors"].get("error replies").is_none(),
        "{test}"
    );
}

#[test]
fn a_killed_runs_error_replies_keep_their_word_on_valkey() {
    killed_error_replies_keep_their_word(&Server::start_valkey());
}

#[test]
fn a_killed_runs_error_replies_keep_their_word_on_redis() {
    killed_error_replies_keep_their_word(&Server::start());
}

/// A killed SET:GET mix: the recovered test has each command's figures, adding up to the test's,
/// each command's histogram counting its completed requests.
fn killed_mix_keeps_its_commands(server: &Server) {
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.partial");
    let run = server.spawn_bench(&[
        "--ratio",
        "1:1",
        "-c",
        "2",
        "--duration",
        "10",
        "-q",
        "--json",
        path(&json),
    ]);
    wait_for_journal(&journal, "\"kind\":\"second\"", "\"kind\":\"second\"");
    sigkill(run);
    let rec = recover(&journal, &dir.path().join("recovered.json"));
    let test = &rec["tests"][0];
    let mix = test["mix"].as_array().expect("mix figures");
    assert_eq!(mix.len(), 2, "{test}");
    let mut sum = 0;
    for c in mix {
        let completed = c["completed"].as_u64().unwrap();
        let mut h = respbench::metrics::LatencyHistogram::new();
        respbench::record::hdr::add_encoded(&mut h, c["histogram"].as_str().unwrap(), "mix")
            .unwrap();
        assert_eq!(h.len(), completed, "{}", c["name"]);
        sum += completed;
    }
    assert!(sum > 0);
    assert_eq!(sum, test["requests"]["completed"].as_u64().unwrap());
}

#[test]
fn a_killed_mix_keeps_its_commands_on_valkey() {
    killed_mix_keeps_its_commands(&Server::start_valkey());
}

#[test]
fn a_killed_mix_keeps_its_commands_on_redis() {
    killed_mix_keeps_its_commands(&Server::start());
}
