//! `respbench compare`: the peer tools' files (fixtures in `tests/fixtures/`, real output, see
//! its README), respbench records with and without repetitions, every output format, the
//! `--fail-if-worse` exit codes and bad input.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Output, Server, StdinSetup, TempDir, run_respbench, run_respbench_with};
use crate::synthetic;
use respbench::verdict::Verdict;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn respbench(args: &[&str]) -> Output {
    run_respbench(
        &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        None,
    )
}

fn compare(args: &[&str]) -> Output {
    let mut all = vec!["compare"];
    all.extend_from_slice(args);
    respbench(&all)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// redis-benchmark 7.0 against valkey-benchmark's suite: SET rps 59171.60 → 38910.51.
fn csv_pair() -> (String, String) {
    (
        fixture("redis-benchmark-7.0.csv"),
        fixture("valkey-benchmark-suite.csv"),
    )
}

#[test]
fn csv_files_in_text_with_missing_tests_listed() {
    let (a, b) = csv_pair();
    let out = compare(&[&a, &b]);
    out.assert_success();
    let set_rps = out
        .stdout
        .lines()
        .skip_while(|l| *l != "SET")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(
        set_rps.contains("59171.60")
            && set_rps.contains("38910.51")
            && set_rps.contains("-34.24% worse"),
        "{}",
        out.stdout
    );
    // The answer first: one run each, so no verdict, and it says so.
    assert!(
        out.stdout.starts_with(
            "valkey-benchmark-suite vs redis-benchmark-7.0: SET -34.2% throughput, p99 +189.6% (can't tell: one run each); "
        ),
        "{}",
        out.stdout
    );
    out.assert_stdout_contains("  p99 ms")
        .assert_stdout_contains("+189.60% worse? (can't tell: one run each)")
        .assert_stdout_contains("Test \"XADD\" is missing from: redis-benchmark-7.0.");
    assert!(!out.stdout.contains('\x1b'), "no colour on a pipe");
}

#[test]
fn csv_files_in_markdown_csv_json_and_html() {
    let (a, b) = csv_pair();
    let md = compare(&[
        &a, &b, "--format", "markdown", "--label", "redis", "--label", "valkey",
    ]);
    md.assert_success()
        .assert_stdout_contains(
            "| test | metric | redis | valkey | valkey vs redis |\n|---|---|---:|---:|---|\n",
        )
        .assert_stdout_contains(
            "| SET | rps | 59171.60 | 38910.51 | -34.24% worse? (can't tell: one run each) |",
        )
        .assert_stdout_contains(
            "| GET | p50 ms | 0.455 | 0.463 | +1.76% worse? (can't tell: one run each) |",
        )
        .assert_stdout_contains("- Test \"PING_INLINE\" is missing from: redis.");

    let csv = compare(&[
        &a, &b, "--format", "csv", "--label", "redis", "--label", "valkey",
    ]);
    csv.assert_success();
    let mut lines = csv.stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        r#""test","metric","unit","redis","valkey","valkey change_pct","valkey ci_low_pct","valkey ci_high_pct","valkey verdict","valkey direction","valkey evidence""#
    );
    assert_eq!(
        lines.next().unwrap(),
        r#""SET","rps","rps","59171.60","38910.51","-34.24","","","cant-tell","worse","""#
    );
    csv.assert_stdout_contains(
        r#""LPUSH","p99","ms","2.239","1.727","-22.87","","","cant-tell","better","""#,
    )
    .assert_stdout_contains(r#""XADD","rps","rps","","48426.15","","","","","","""#);

    let json = compare(&[&a, &b, "--format", "json"]);
    json.assert_success();
    let doc: Value = serde_json::from_str(&json.stdout).expect("valid JSON");
    assert_eq!(doc["schema"], "respbench-compare/2");
    assert!(
        doc["headline"][0]
            .as_str()
            .unwrap()
            .starts_with("valkey-benchmark-suite vs redis-benchmark-7.0: SET "),
        "{}",
        doc["headline"]
    );
    assert_eq!(doc["tests"][0]["name"], "SET");
    let rps = &doc["tests"][0]["metrics"][0];
    assert_eq!(rps["metric"], "rps");
    assert_eq!(rps["values"][0]["median"], 59171.60);
    let pct = rps["changes"][0]["pct"].as_f64().unwrap();
    assert!(
        (pct - (38910.51 / 59171.60 - 1.0) * 100.0).abs() < 1e-9,
        "{pct}"
    );
    assert_eq!(rps["changes"][0]["verdict"], "cant-tell");
    assert_eq!(rps["changes"][0]["direction"], "worse");
    assert_eq!(rps["changes"][0]["ci"], Value::Null);
    let xadd = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "XADD")
        .unwrap();
    assert_eq!(xadd["missing_from"][0], "redis-benchmark-7.0");

    let html = compare(&[&a, &b, "--format", "html"]);
    html.assert_success()
        .assert_stdout_contains("<!DOCTYPE html>")
        .assert_stdout_contains("id=\"comparison\"")
        .assert_stdout_contains("<td class=\"noise\">-34.24% worse? (can");
}

#[test]
fn memtier_runs_compare_by_kind() {
    let out = compare(&[
        &fixture("memtier-ratio-1-10.json"),
        &fixture("memtier-ratio-1-1-histogram.json"),
        "--format",
        "csv",
    ]);
    out.assert_success();
    let tests: Vec<&str> = out
        .stdout
        .lines()
        .skip(1)
        .filter(|l| l.contains(",\"rps\","))
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(tests, ["\"SET\"", "\"GET\"", "\"TOTALS\""]);
    out.assert_stdout_contains(
        r#""SET","rps","rps","3984.19","26020.52","553.09","","","cant-tell","better","""#,
    )
    .assert_stdout_contains(
        r#""SET","p50","ms","0.103","0.087","-15.53","","","cant-tell","better","""#,
    );
}

#[test]
fn fail_if_worse_exit_codes() {
    let (a, b) = csv_pair();
    // Worst rps change: SET -34.24%.
    let out = compare(&[&a, &b, "--metrics", "rps", "--fail-if-worse", "30"]);
    out.assert_code(1);
    assert!(
        out.stderr.starts_with(
            "respbench: 1 figure(s) worse than redis-benchmark-7.0 by more than 30%:\n"
        ),
        "{}",
        out.stderr
    );
    // One run each: no interval, so the gate fails safe on the figure alone.
    out.assert_stderr_contains(
        "  SET rps valkey-benchmark-suite: -34.24% worse? (can't tell: one run each)\n",
    );
    assert!(out.stdout.contains("SET"), "the table is still written");
    compare(&[&a, &b, "--metrics", "rps", "--fail-if-worse", "35"]).assert_success();
    // The other way round every common figure got better, but the base's other tests are
    // missing from the other side: the gate cannot vouch for them.
    compare(&[&b, &a, "--metrics", "rps", "--fail-if-worse", "0"])
        .assert_code(1)
        .assert_stderr_contains("the base's tests missing from a side: PING_INLINE");
    // Latency: SET p99 +189.60%.
    compare(&[&a, &b, "--metrics", "p99", "--fail-if-worse", "150"])
        .assert_code(1)
        .assert_stderr_contains("SET p99");
    compare(&[&a, &b, "--metrics", "p99", "--fail-if-worse", "200"]).assert_success();
}

/// Five repetitions per side as files, each side's rps chosen so the answers are known.
fn repetition_files(dir: &Path, name: &str, speeds: &[f64]) -> String {
    let files: Vec<PathBuf> = speeds
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            synthetic::write(
                dir,
                &format!("{name}{k}.json"),
                &synthetic::document("valkey", &["SET", "GET"], &[s], k as u64),
            )
        })
        .collect();
    files
        .iter()
        .map(|p| path(p).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

const BASE: [f64; 5] = [1.00, 1.02, 0.98, 1.01, 0.99];
const FASTER: [f64; 5] = [1.10, 1.11, 1.09, 1.12, 1.08];
const SAME: [f64; 5] = [1.005, 0.97, 1.03, 0.995, 1.015];

#[test]
fn repetitions_get_medians_spread_and_a_noise_verdict() {
    let dir = TempDir::new();
    let base = repetition_files(dir.path(), "base", &BASE);
    let faster = repetition_files(dir.path(), "fast", &FASTER);
    let same = repetition_files(dir.path(), "same", &SAME);
    let out = compare(&[
        &base,
        &faster,
        &same,
        "--metrics",
        "rps",
        "--label",
        "base",
        "--label",
        "fast",
        "--label",
        "same",
    ]);
    out.assert_success();
    let rps = out
        .stdout
        .lines()
        .skip_while(|l| *l != "SET")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    // rps about 2000 (2040 and 1960 among them), 2200 (every repetition above), 2010
    // (overlapping): each shown as its repetitions' geometric mean, the figure the change is the
    // ratio of, with no ± beside it (the spread is not an error bar of the figure).
    assert!(!rps.contains('±'), "{}", out.stdout);
    assert!(
        rps.contains("1999.80") && rps.contains("2199.82"),
        "{}",
        out.stdout
    );
    assert!(
        rps.contains("+10.00% better [+7.6%, +12.5%] (n=5+5)"),
        "{}",
        out.stdout
    );
    assert!(
        rps.contains("~ +0.29% [-2.6%, +3.2%] (n=5+5)"),
        "{}",
        out.stdout
    );
    // The answer comes first.
    assert_eq!(
        out.stdout.lines().take(2).collect::<Vec<_>>(),
        [
            "fast vs base: SET +10.0% [+7.6%, +12.5%] throughput; GET +10.0% [+7.6%, +12.5%] throughput",
            "same vs base: SET, GET within the noise"
        ],
        "{}",
        out.stdout
    );
    out.assert_stdout_contains("(within the noise)");
    // Noise never fails the gate; a real slowdown does.
    compare(&[&base, &same, "--metrics", "rps", "--fail-if-worse", "0"]).assert_success();
    compare(&[&faster, &base, "--metrics", "rps", "--fail-if-worse", "5"]).assert_code(1);
    // Three against three: a 10% change with ±2% spreads is a finding.
    let three = |s: &str| s.split(',').take(3).collect::<Vec<_>>().join(",");
    compare(&[&three(&base), &three(&faster), "--metrics", "rps"])
        .assert_success()
        .assert_stdout_contains("% better [+")
        .assert_stdout_contains("(n=3+3)");
    // One wild repetition: too noisy to tell, with the reason, and the gate does not trip on it.
    let wild = repetition_files(dir.path(), "wild", &[1.0, 0.15, 1.05]);
    let out = compare(&[
        &three(&base),
        &wild,
        "--metrics",
        "rps",
        "--label",
        "base",
        "--label",
        "wild",
    ]);
    out.assert_success()
        .assert_stdout_contains("wild vs base: SET, GET throughput (wild ±85%) too noisy to tell")
        .assert_stdout_contains("too noisy to tell (wild's repetitions spread ±85.0%)");
    compare(&[
        &three(&base),
        &wild,
        "--metrics",
        "rps",
        "--fail-if-worse",
        "0",
    ])
    .assert_success();
}

#[test]
fn a_record_with_repetitions_counts_them() {
    let dir = TempDir::new();
    let a = synthetic::write(
        dir.path(),
        "a.json",
        &synthetic::document("redis", &["SET"], &BASE, 1),
    );
    let b = synthetic::write(
        dir.path(),
        "b.json",
        &synthetic::document("valkey", &["SET"], &FASTER, 2),
    );
    let out = compare(&[path(&a), path(&b), "--metrics", "rps", "--format", "json"]);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let change = &doc["tests"][0]["metrics"][0]["changes"][0];
    assert_eq!(change["verdict"], "better");
    assert_eq!(change["evidence"], "repetitions");
    assert_eq!(change["n"], serde_json::json!([5, 5]));
    let ci = change["ci"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    let pct = change["pct"].as_f64().unwrap();
    assert!(0.0 < lo && lo < pct && pct < hi, "{change}");
    assert_eq!(
        doc["headline"][0].as_str().unwrap(),
        format!(
            "valkey 9.1.2 vs redis 7.0.15: SET {} throughput",
            change["text"]
                .as_str()
                .unwrap()
                .split(" better ")
                .collect::<Vec<_>>()
                .join(" ")
                .split(" (n=")
                .next()
                .unwrap()
                .replace("+10.00%", "+10.0%")
        ),
    );
    assert_eq!(
        doc["differences"][0],
        "version: redis 7.0.15 (a), valkey 9.1.2 (b)"
    );
    assert_eq!(
        doc["tests"][0]["metrics"][0]["values"][0]["samples"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn respbench_records_compare_with_csv_files() {
    let dir = TempDir::new();
    let run = synthetic::write(
        dir.path(),
        "run.json",
        &synthetic::document("valkey", &["SET", "GET"], &[1.0], 3),
    );
    let out = compare(&[
        path(&run),
        &fixture("redis-benchmark-7.0.csv"),
        "--format",
        "csv",
        "--metrics",
        "rps",
    ]);
    out.assert_success().assert_stdout_contains(
        r#""SET","rps","rps","2000.00","59171.60","2858.58","","","cant-tell","better","""#,
    );
}

#[test]
fn bad_inputs_are_one_line_and_exit_2() {
    let dir = TempDir::new();
    let good = fixture("redis-benchmark-7.0.csv");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        path(&p).to_string()
    };
    let truncated = write(
        "truncated.json",
        "{\"schema\": \"respbench/1\", \"tests\": [",
    );
    let unknown = write("unknown.json", "{\"hello\": 1}");
    let future = write(
        "future.json",
        "{\"schema\": \"respbench/2\", \"tests\": []}",
    );
    let text = write("notes.txt", "SET was fast\n");
    let badcsv = write("bad.csv", "\"test\",\"rps\"\n\"SET\",\"lots\"\n");
    let empty = write("empty.json", "");
    let missing = dir.path().join("missing.json");
    for (file, want) in [
        (path(&missing).to_string(), "missing.json: No such file"),
        (truncated.clone(), "truncated.json: not valid JSON"),
        (
            unknown.clone(),
            "unknown.json: a JSON file that is neither a respbench record",
        ),
        (
            future.clone(),
            "future.json: a respbench/2 record; this respbench reads respbench/1",
        ),
        (
            text.clone(),
            "notes.txt: not a results file: expected a respbench --json record",
        ),
        (
            badcsv.clone(),
            "bad.csv: CSV line 2: \"lots\" is not a number",
        ),
        (empty.clone(), "empty.json: an empty file"),
    ] {
        let out = compare(&[&good, &file]);
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(
            line.starts_with("respbench: ") && line.contains(want),
            "{line}"
        );
        assert!(out.stdout.is_empty());
    }
    compare(&[&good]).assert_code(2).single_stderr_line();
    compare(&[&good, &good, "--format", "pdf"])
        .assert_code(2)
        .single_stderr_line();
    respbench(&["report", &good])
        .assert_code(2)
        .assert_stderr_contains("needs -o FILE");
}

/// Issue 19 item 3: an endless input (`/dev/zero`) stops at the size cap in compare, report and
/// merge alike: one line naming the cap and how to raise it, exit 2, never unbounded memory.
/// The default cap (256 MiB) is read once; the others set a small one through the environment.
#[test]
fn an_endless_input_stops_at_the_size_cap_in_every_subcommand() {
    let good = fixture("redis-benchmark-7.0.csv");
    let out = compare(&[&good, "/dev/zero"]);
    out.assert_code(2);
    assert_eq!(
        out.single_stderr_line(),
        "respbench: /dev/zero: larger than 256 MiB (not a results file? set RESPBENCH_MAX_INPUT_SIZE to read larger inputs)"
    );
    let small = [("RESPBENCH_MAX_INPUT_SIZE", "1M")];
    let run = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        run_respbench_with(&args, StdinSetup::Null, &small)
    };
    for args in [
        vec!["report", "/dev/zero", "-o", "-"],
        vec!["merge", "-o", "-", "/dev/zero"],
        vec!["compare", "/dev/zero", &good],
    ] {
        let out = run(&args);
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(
            line.contains("/dev/zero: larger than 1 MiB"),
            "{args:?}: {line}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = run_respbench_with(
        &["compare".to_string(), good.clone(), good.clone()],
        StdinSetup::Null,
        &[("RESPBENCH_MAX_INPUT_SIZE", "lots")],
    );
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .contains("RESPBENCH_MAX_INPUT_SIZE=\"lots\": expected a size in bytes"),
        "{out:?}"
    );
}

/// `--fail-if-worse` on a metric an input does not have is an input problem, not a pass.
#[test]
fn fail_if_worse_on_a_missing_metric_is_exit_2() {
    let dir = TempDir::new();
    let p = dir.path().join("rps-only.csv");
    std::fs::write(&p, "\"test\",\"rps\"\n\"SET\",\"1000\"\n").unwrap();
    let good = fixture("redis-benchmark-7.0.csv");
    let out = compare(&[
        &good,
        path(&p),
        "--metrics",
        "rps,p99",
        "--fail-if-worse",
        "5",
    ]);
    out.assert_code(2);
    let line = out.single_stderr_line();
    assert!(
        line.contains("--fail-if-worse checks p99, which") && line.contains("rps-only.csv"),
        "{line}"
    );
}

#[test]
fn subcommands_have_their_own_help_and_only_come_first() {
    compare(&["--help"])
        .assert_success()
        .assert_stdout_contains("Usage: respbench compare [OPTIONS] BASE OTHER");
    respbench(&["report", "--help"])
        .assert_success()
        .assert_stdout_contains("Usage: respbench report RUN [RUN ...] -o FILE");
    // After an option, `compare` is a custom command sent to the server, as in valkey-benchmark.
    let server = Server::start();
    server
        .bench(&["-n", "10", "-q", "compare", "x"])
        .assert_code(1)
        .assert_stderr_contains("ERR unknown command");
}

/// The two commands of the README: a run against each server with `--json`, then `compare`.
/// Needs `--json` wired into the run (issue 9).
#[test]
fn redis_against_valkey_in_two_commands() {
    let dir = TempDir::new();
    let redis = Server::start();
    let valkey = Server::start_valkey();
    let r = dir.path().join("redis.json");
    let v = dir.path().join("valkey.json");
    redis
        .bench(&["-n", "2000", "-t", "set,get", "-q", "--json", path(&r)])
        .assert_success();
    valkey
        .bench(&["-n", "2000", "-t", "set,get", "-q", "--json", path(&v)])
        .assert_success();
    compare(&[path(&r), path(&v)])
        .assert_success()
        .assert_stdout_contains("redis")
        .assert_stdout_contains("valkey vs redis");
}

#[test]
fn repeat_prints_each_run_and_a_median_and_the_record_keeps_every_repetition() {
    let server = Server::start();
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    let out = server.bench(&[
        "--repeat",
        "3",
        "--json",
        path(&json),
        "--html",
        path(&html),
        "-t",
        "set",
        "-n",
        "2000",
        "-q",
    ]);
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert!(
        lines[..3]
            .iter()
            .all(|l| l.starts_with("SET: ") && l.contains(" requests per second, p50="))
    );
    assert!(
        lines[3].starts_with("SET: median of 3 runs: "),
        "{}",
        lines[3]
    );
    assert_eq!(server.client().calls("set"), 6000, "three runs of -n 2000");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reps: Vec<u64> = record["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["name"], "SET");
            t["repetition"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(reps, [1, 2, 3]);
    crate::record::check_with_python(&json);
    // The HTML report of the run, written at its end.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("<svg"),
        "{}",
        &page[..200.min(page.len())]
    );
    // compare reads the repetitions as such; the same record against itself is an exact A/A:
    // every change is zero and its interval spans zero, so nothing is better or worse (within
    // the noise, too noisy to tell on a busy machine's spread, or can't tell when the record
    // judged the repetitions machine-busy).
    let c = compare(&[path(&json), path(&json)]);
    c.assert_success();
    assert!(c.stdout.starts_with("run#2 vs run: SET "), "{}", c.stdout);
    let rows: Vec<&str> = c
        .stdout
        .lines()
        .filter(|l| l.contains(" ms ") || l.starts_with("  rps"))
        .collect();
    assert_eq!(rows.len(), 7, "{}", c.stdout);
    assert!(rows.iter().all(|l| l.contains("+0.00% [")), "{}", c.stdout);
    assert!(
        rows.iter()
            .all(|l| !l.contains("better") && !l.contains("worse")),
        "{}",
        c.stdout
    );
    // CSV keeps one row per run and nothing else.
    let out = server.bench(&["--repeat", "2", "-t", "get", "-n", "500", "--csv"]);
    out.assert_success();
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    assert!(
        out.stdout
            .lines()
            .skip(1)
            .all(|l| l.starts_with("\"GET\","))
    );
}

#[test]
fn repeat_and_html_mistakes_are_caught_before_the_run() {
    let server = Server::start();
    let out = server.bench(&["--repeat", "0", "-t", "set", "-n", "10"]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("--repeat"),
        "{}",
        out.stderr
    );
    let out = server.bench(&["--html", "/nonexistent/dir/r.html", "-t", "set", "-n", "10"]);
    out.assert_code(1);
    assert!(
        out.single_stderr_line()
            .starts_with("respbench: --html /nonexistent/dir/r.html: cannot write it"),
        "{}",
        out.stderr
    );
    assert_eq!(server.client().calls("set"), 0, "nothing was sent");
}

#[test]
fn output_goes_to_the_file_given_with_o() {
    let (a, b) = csv_pair();
    let dir = TempDir::new();
    let file = dir.path().join("cmp.md");
    let out = compare(&[
        &a,
        &b,
        "--format",
        "md",
        "--no-color",
        "-o",
        file.to_str().unwrap(),
    ]);
    out.assert_success();
    assert_eq!(out.stdout, "", "the table goes to the file, not stdout");
    let text = std::fs::read_to_string(&file).expect("compare -o writes its file");
    assert!(text.contains("| SET"), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour codes in a file");

    // Without --format, -o's extension says which: `-o cmp.html` is a page, not the text table.
    let written = |name: &str, extra: &[&str]| {
        let file = dir.path().join(name);
        let mut args = vec![a.as_str(), b.as_str(), "-o", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        compare(&args).assert_success();
        std::fs::read_to_string(&file).unwrap()
    };
    assert!(written("cmp.html", &[]).starts_with("<!DOCTYPE html>"));
    assert!(written("cmp.md", &[]).contains("|---|---|"));
    assert!(written("cmp.csv", &[]).starts_with("\"test\",\"metric\",\"unit\","));
    let json: Value = serde_json::from_str(&written("cmp.json", &[])).expect("JSON");
    assert_eq!(json["schema"], "respbench-compare/2");
    assert!(written("cmp.txt", &[]).contains("test / metric"));
    assert!(
        written("cmp2.html", &["--format", "text"]).contains("test / metric"),
        "--format wins over the extension"
    );
}

/// Sides whose every repetition the record judged `kind` (`machine-busy`, `client-bound`):
/// three repetitions of SET and GET at `speeds`.
fn judged(dir: &Path, name: &str, server: &str, speeds: &[f64], kind: Verdict) -> String {
    let mut doc = synthetic::document(server, &["SET", "GET"], speeds, 5);
    for t in &mut doc.tests {
        t.verdict.kind = kind;
        t.verdict.reason = "synthetic".into();
    }
    path(&synthetic::write(dir, name, &doc)).to_string()
}

/// A difference measured while the machine was busy compares the load of two moments, not two
/// servers: no better or worse anywhere, the effect still shown, and `--fail-if-worse` neither
/// passes nor fails (exit 3, the rows on stderr).
#[test]
fn a_side_busy_in_most_repetitions_is_cant_tell_and_the_gate_says_so() {
    let dir = TempDir::new();
    let d = dir.path();
    let fast = [1.3, 1.32, 1.28];
    let slow = [1.0, 1.01, 0.99];
    let quiet_a = judged(d, "qa.json", "redis", &slow, Verdict::Neither);
    let quiet_b = judged(d, "qb.json", "valkey", &fast, Verdict::ServerBound);
    let busy_a = judged(d, "ba.json", "redis", &slow, Verdict::MachineBusy);
    let busy_b = judged(d, "bb.json", "valkey", &fast, Verdict::MachineBusy);
    let labels = ["--label", "a", "--label", "b", "--metrics", "rps,p99"];
    let run = |x: &str, y: &str, extra: &[&str]| {
        let mut args = vec![x, y];
        args.extend_from_slice(&labels);
        args.extend_from_slice(extra);
        compare(&args)
    };
    // Quiet: a finding, and the gate passes (b is faster) or fails (the other way round).
    let out = run(&quiet_a, &quiet_b, &[]);
    out.assert_success().assert_stdout_contains("% better [+");
    run(&quiet_a, &quiet_b, &["--fail-if-worse", "5"]).assert_success();
    run(&quiet_b, &quiet_a, &["--fail-if-worse", "5"]).assert_code(1);

    // The same figures on a busy machine.
    let out = run(&busy_a, &busy_b, &[]);
    out.assert_success();
    assert!(
        out.stdout.starts_with(
            "valkey 9.1.2 vs redis 7.0.15: SET, GET can't tell: the machine was busy for a and b\n"
        ),
        "{}",
        out.stdout
    );
    out.assert_stdout_contains("warning: a: on a busy machine in most repetitions of SET (3 of 3)");
    let rows: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("  ")).collect();
    assert!(
        rows.iter()
            .filter(|l| l.starts_with("  rps") || l.starts_with("  p99"))
            .count()
            == 4
            && rows
                .iter()
                .filter(|l| l.starts_with("  rps") || l.starts_with("  p99"))
                .all(
                    |l| l.contains("can't tell: the machine was busy for a and b (n=3+3)")
                        && l.contains("% [")
                        && !l.contains("better")
                        && !l.contains("worse")
                ),
        "{}",
        out.stdout
    );
    // One busy side is enough, and client-bound counts as well.
    let out = run(
        &quiet_a,
        &judged(d, "cb.json", "valkey", &fast, Verdict::ClientBound),
        &[],
    );
    out.assert_stdout_contains("SET, GET can't tell: b was client-bound");

    // The gate: neither a failure nor a silent pass, either way round.
    for (x, y) in [(&busy_a, &busy_b), (&busy_b, &busy_a)] {
        let out = run(x, y, &["--fail-if-worse", "5"]);
        out.assert_code(3)
            .assert_stderr_contains("--fail-if-worse cannot tell for 4 figure(s)")
            .assert_stderr_contains("  SET rps b: ");
    }

    // JSON, CSV and HTML say the same.
    let doc: Value =
        serde_json::from_str(&run(&busy_a, &busy_b, &["--format", "json"]).stdout).unwrap();
    let c = &doc["tests"][0]["metrics"][0]["changes"][0];
    assert_eq!(c["verdict"], "unattributable", "{c}");
    assert_eq!(c["limited_by"]["base"], "machine-busy");
    assert!(
        c["ci"][0].as_f64().unwrap() > 0.0,
        "the interval is kept: {c}"
    );
    run(&busy_a, &busy_b, &["--format", "csv"])
        .assert_stdout_contains("\"unattributable\",\"better\",\"repetitions\"");
    let html = run(&busy_a, &busy_b, &["--format", "html"]);
    html.assert_stdout_contains("<td class=\"unattributable\">+")
        .assert_stdout_contains("data-verdict=\"unattributable\"");
    assert!(!html.stdout.contains("class=\"better\""));
}

/// Redis against Valkey and Redis against itself, three repetitions each, on real servers. Only
/// what is certain is asserted: the answer's shape, an interval on every change, and what
/// differs besides the numbers (the servers, and a `-c` chosen to differ); whether a change is
/// a finding is a statistical claim, left to the simulation in `stats`.
#[test]
fn a_b_and_a_a_at_three_repetitions_against_real_servers() {
    let dir = TempDir::new();
    let run = |server: &Server, name: &str, extra: &[&str]| {
        let json = dir.path().join(name);
        let mut args = vec![
            "--repeat", "3", "-t", "set,get", "-n", "3000", "-q", "--json",
        ];
        args.push(path(&json));
        args.extend_from_slice(extra);
        server.bench(&args).assert_success();
        json
    };
    let redis = Server::start();
    let valkey = Server::start_valkey();
    let r1 = run(&redis, "redis.json", &[]);
    let r2 = run(&redis, "redis-again.json", &[]);
    let v = run(&valkey, "valkey.json", &["-c", "20"]);

    let out = compare(&[path(&r1), path(&v), "--metrics", "rps,p99"]);
    out.assert_success();
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("valkey 9.1") && first.contains(" vs redis 7.") && first.contains("SET"),
        "{}",
        out.stdout
    );
    out.assert_stdout_contains("Besides the numbers, the sides differ in")
        .assert_stdout_contains("  version: redis 7.")
        .assert_stdout_contains("  -c: 50 (redis), 20 (valkey)");
    let changes: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("  rps ") || l.starts_with("  p99 ms "))
        .collect();
    assert_eq!(changes.len(), 4, "{}", out.stdout);
    assert!(
        changes
            .iter()
            // No `±` beside a figure (a too-noisy verdict still names the spread in words).
            .all(|l| !l.replace("spread ±", "").contains("±")
                && l.contains(" [")
                && l.contains("%] ")),
        "every change has an interval: {}",
        out.stdout
    );

    // The same server twice: nothing differs besides the numbers, and the answer names the runs.
    let out = compare(&[path(&r1), path(&r2), "--format", "json"]);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        doc["headline"][0]
            .as_str()
            .unwrap()
            .starts_with("redis-again vs redis: "),
        "{}",
        doc["headline"]
    );
    assert_eq!(doc["differences"], serde_json::json!([]), "{}", out.stdout);
    for t in doc["tests"].as_array().unwrap() {
        for m in t["metrics"].as_array().unwrap() {
            let c = &m["changes"][0];
            assert_eq!(c["n"], serde_json::json!([3, 3]), "{c}");
            assert_eq!(c["evidence"], "repetitions", "{c}");
        }
    }
}

/// One rule for outputs (docs/messages.md, "Output files"): `-o -` is stdout, an output naming an
/// input is refused and leaves it untouched, a directory as input is exit 2.
#[test]
fn outputs_follow_one_rule_in_compare_and_report() {
    let dir = TempDir::new();
    let (a, b) = csv_pair();
    let copy = dir.path().join("base.csv");
    std::fs::copy(&a, &copy).unwrap();
    let copy = path(&copy).to_string();
    let before = std::fs::read(&copy).unwrap();
    let spelled = format!("{}/./base.csv", path(dir.path()));
    for out in [
        compare(&[&copy, &b, "-o", &spelled]),
        respbench(&["report", &copy, &b, "-o", &copy]),
    ] {
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(line.contains("is an input"), "{line}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        before,
        "the input is untouched"
    );

    // `-o -` is stdout (it used to be a file named `-`).
    let out = compare(&[&copy, &b, "--format", "csv", "-o", "-"]);
    out.assert_success();
    assert!(out.stdout.contains("SET"), "{}", out.stdout);

    let out = compare(&[&copy, path(dir.path())]);
    out.assert_code(2);
    out.single_stderr_line();
}
