//! Sharded runs against a real server (issue 13): shards from `--shard` and from each
//! scheduler's environment, exact parts of `-n`, disjoint `--sequential` slices, `--start-at`,
//! and `respbench merge` on the records (schema-checked by `tests/record/check_record.py`). The
//! Slurm run itself is `tests/slurm/sharded_run.sh` (it needs a Slurm cluster; `scripts/test.sh`
//! starts one).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::harness::{Output, Server, StdinSetup, TempDir, run_respbench, run_respbench_with};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

#[track_caller]
fn check_with_python(records: &[PathBuf]) {
    let out = Command::new("python3")
        .arg(repo("tests/record/check_record.py"))
        .arg(repo("docs/record.schema.json"))
        .args(records)
        .output()
        .expect("python3 runs tests/record/check_record.py");
    assert!(
        out.status.success(),
        "check_record.py: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn merge(args: &[&str]) -> Output {
    let mut all = vec!["merge"];
    all.extend(args);
    run_respbench(&strings(&all), None)
}

fn port_args(server: &Server) -> Vec<String> {
    strings(&["-h", "127.0.0.1", "-p", &server.port().to_string()])
}

#[test]
fn shards_split_n_exactly_cover_the_keyspace_and_merge() {
    let server = Server::start();
    let dir = TempDir::new();
    let json = dir.path().join("out-{shard}.json");
    let json = json.to_str().expect("UTF-8");
    for i in 0..3 {
        let shard = format!("{i}/3");
        let out = server.bench(&[
            "--shard",
            &shard,
            "-n",
            "3001",
            "-r",
            "300",
            "--sequential",
            "-t",
            "set",
            "-q",
            "--json",
            json,
        ]);
        out.assert_success();
        out.assert_stderr_contains(&format!("shard {i}/3 (from --shard): "));
    }
    let mut c = server.client();
    assert_eq!(c.calls("set"), 3001, "the parts add up to -n");
    assert_eq!(c.dbsize(), 300, "disjoint slices cover the keyspace");
    let files: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("out-{i}.json")))
        .collect();
    let all = dir.path().join("all.json");
    let mut args = vec!["-o", all.to_str().expect("UTF-8")];
    args.extend(files.iter().map(|f| f.to_str().expect("UTF-8")));
    merge(&args).assert_success();
    let merged = read(&all);
    let shards: Vec<Value> = files.iter().map(|f| read(f)).collect();
    let completed = |d: &Value| d["tests"][0]["requests"]["completed"].as_u64().unwrap();
    assert_eq!(completed(&merged), 3001);
    assert_eq!(shards.iter().map(completed).sum::<u64>(), 3001);
    assert_eq!(
        shards
            .iter()
            .map(|s| s["options"]["requests"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1001, 1000, 1000]
    );
    assert_eq!(merged["options"]["requests"], 3001);
    assert_eq!(merged["shards"].as_array().unwrap().len(), 3);
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["shard"]["index"], i);
        assert_eq!(s["shard"]["source"], "flag");
        assert_eq!(s["shard"]["requests_total"], 3001);
    }
    // The client delay adds up by its samples (absent only when no shard measured it).
    let delay_count = |d: &Value| d["tests"][0]["client_delay_us"]["count"].as_u64();
    let counts: Vec<u64> = shards.iter().filter_map(delay_count).collect();
    if counts.is_empty() {
        assert!(merged["tests"][0].get("client_delay_us").is_none());
    } else {
        assert_eq!(delay_count(&merged), Some(counts.iter().sum::<u64>()));
    }
    let mut all_files = files.clone();
    all_files.push(all);
    check_with_python(&all_files);
}

/// Runs a 1-request SET with `env` and returns the record's `shard` block (or the failure).
fn shard_from_env(server: &Server, env: &[(&str, &str)], extra: &[&str]) -> Result<Value, Output> {
    let dir = TempDir::new();
    let path = dir.path().join("r.json");
    let mut args = port_args(server);
    args.extend(strings(&[
        "-n", "8", "-c", "1", "-t", "set", "-q", "--json",
    ]));
    args.push(path.to_str().expect("UTF-8").to_string());
    args.extend(strings(extra));
    let out = run_respbench_with(&args, StdinSetup::Null, env);
    if out.code != Some(0) {
        return Err(out);
    }
    Ok(read(&path)["shard"].clone())
}

#[test]
fn each_schedulers_environment_names_the_shard() {
    let server = Server::start();
    let s = shard_from_env(
        &server,
        &[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")],
        &[],
    )
    .unwrap();
    assert_eq!(
        (s["index"].as_u64(), s["count"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(s["source"], "slurm");
    let env = [("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2")];
    assert_eq!(
        shard_from_env(&server, &env, &[]).unwrap()["source"],
        "openmpi"
    );
    let env = [("JOB_COMPLETION_INDEX", "3")];
    let s = shard_from_env(&server, &env, &["--shards", "5"]).unwrap();
    assert_eq!(
        (s["index"].as_u64(), s["source"].as_str()),
        (Some(3), Some("kubernetes"))
    );
    // --shard wins over the environment.
    let env = [("SLURM_PROCID", "2"), ("SLURM_NTASKS", "4")];
    assert_eq!(
        shard_from_env(&server, &env, &["--shard", "0/4"]).unwrap()["source"],
        "flag"
    );
    // Kubernetes gives no count: without --shards it is a usage error, in one line.
    let out = shard_from_env(&server, &[("JOB_COMPLETION_INDEX", "3")], &[]).unwrap_err();
    out.assert_code(2);
    assert!(out.single_stderr_line().contains("--shards N"), "{out:?}");
    // Not sharded: no block at all.
    assert_eq!(shard_from_env(&server, &[], &[]).unwrap(), Value::Null);
}

#[test]
fn bad_shards_and_mismatched_merges_get_one_line_and_exit_2() {
    for bad in ["3/2", "0/0", "1/x"] {
        let out = run_respbench(&strings(&["--shard", bad, "-n", "10"]), None);
        out.assert_code(2);
        assert!(out.single_stderr_line().contains("--shard"), "{out:?}");
    }
    let out = run_respbench(&strings(&["--shard", "0/4", "-n", "3"]), None);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("-n 3 over 4 shards"),
        "{out:?}"
    );
    for bad in ["yesterday", "1000000000", "2999-01-01T00:00:00Z"] {
        let out = run_respbench(&strings(&["--start-at", bad, "-n", "10"]), None);
        out.assert_code(2);
        assert!(out.single_stderr_line().contains("--start-at"), "{out:?}");
    }

    let server = Server::start();
    let dir = TempDir::new();
    let record = |name: &str, test: &str, shard: &str| {
        let path = dir.path().join(name);
        server
            .bench(&[
                "--shard",
                shard,
                "-n",
                "20",
                "-t",
                test,
                "-q",
                "--json",
                path.to_str().unwrap(),
            ])
            .assert_success();
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (
        record("a.json", "set", "0/2"),
        record("b.json", "get", "1/2"),
    );
    let out = merge(&["-o", "-", &a, &b]);
    out.assert_code(2);
    let line = out.single_stderr_line();
    assert!(
        line.contains("different benchmarks: tests [SET] vs [GET]"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
    let out = merge(&["-o", "-", &a, &a]);
    out.assert_code(2);
    assert!(out.single_stderr_line().contains("both shard 0"), "{out:?}");
    // Issue 19 item 2: a second `merge -o all.json *.json` picks up the first one's output.
    let c = record("c.json", "set", "1/2");
    let all = dir.path().join("all.json");
    let all = all.to_str().unwrap();
    merge(&["-o", all, &a, &c]).assert_success();
    let out = merge(&["-o", "-", &a, &c, all]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .contains("all.json is already a merged record (of 2 shards)"),
        "{out:?}"
    );
    // A missing shard: refused unless --partial, and then a partial record that fails the gate.
    let out = merge(&["-o", "-", &a]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("shard(s) 1 of 2 missing"),
        "{out:?}"
    );
    let part = dir.path().join("part.json");
    let part = part.to_str().unwrap();
    let out = merge(&["--partial", "-o", part, &a]);
    out.assert_success();
    assert!(
        out.stderr.contains("a partial merge: shard(s) 1 missing"),
        "{out:?}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(part).unwrap()).unwrap();
    assert_eq!(doc["merge"]["missing_shards"], serde_json::json!([1]));
    let gate = run_respbench(
        &strings(&[
            "compare",
            all,
            part,
            "--metrics",
            "rps",
            "--fail-if-worse",
            "1000",
        ]),
        None,
    );
    gate.assert_code(1);
    assert!(gate.stderr.contains("not a whole run"), "{gate:?}");
    // A missing input or a directory: exit 2, as compare and report (one rule).
    for input in ["/nonexistent/x.json", dir.path().to_str().unwrap()] {
        let out = merge(&["-o", "-", input]);
        out.assert_code(2);
        assert!(out.single_stderr_line().contains("cannot read"), "{out:?}");
    }
    // -o naming a shard would overwrite it.
    let before = std::fs::read(&a).unwrap();
    let out = merge(&["-o", &a, &a, &b]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("is a shard record"),
        "{out:?}"
    );
    assert_eq!(std::fs::read(&a).unwrap(), before, "the shard is untouched");
    let out = merge(&[&a]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line().contains("-o FILE is required"),
        "{out:?}"
    );
}

fn parse_time(text: &str) -> SystemTime {
    // The record's times are `…SS.ffffffZ`: seconds since the epoch from the civil date via
    // `date`, kept independent of respbench's own parser.
    let out = Command::new("date")
        .args(["-u", "-d", text, "+%s.%N"])
        .output()
        .expect("date");
    let secs: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("date +%s.%N");
    UNIX_EPOCH + Duration::from_secs_f64(secs)
}

#[test]
fn shards_launched_two_seconds_apart_start_together() {
    let server = Server::start();
    let dir = TempDir::new();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let start_at = (now + 5).to_string();
    let path = |i: usize| dir.path().join(format!("s{i}.json"));
    let spawn = |i: usize| {
        let shard = format!("{i}/2");
        server.spawn_bench(&[
            "--shard",
            &shard,
            "--start-at",
            &start_at,
            "-n",
            "200",
            "-t",
            "ping_inline",
            "-q",
            "--json",
            path(i).to_str().unwrap(),
        ])
    };
    let first = spawn(0);
    std::thread::sleep(Duration::from_secs(2));
    let second = spawn(1);
    first.finish(Duration::from_secs(60)).assert_success();
    second.finish(Duration::from_secs(60)).assert_success();
    let starts: Vec<SystemTime> = (0..2)
        .map(|i| {
            let s = read(&path(i))["shard"].clone();
            assert!(s["start_offset_s"].as_f64().unwrap() >= 0.0);
            parse_time(s["started_at"].as_str().unwrap())
        })
        .collect();
    let gap = match starts[1].duration_since(starts[0]) {
        Ok(d) => d,
        Err(e) => e.duration(),
    };
    // Launched 2 s apart; a generous bound, far below the launch gap.
    assert!(gap < Duration::from_millis(1000), "start gap {gap:?}");
}
