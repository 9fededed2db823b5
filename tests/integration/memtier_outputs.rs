//! memtier mode's own output files (`--json-out-file`, `--out-file`, `--hdr-file-prefix`) are
//! written whole at the end by the one atomic writer (`record::atomic`), never opened with
//! truncation when the run starts: a run SIGKILLed mid-way leaves an earlier file at each path
//! byte for byte (the `--json-out-file` that `compare` reads), and a run that ends replaces each
//! whole, leaving no temporary file. An output that cannot be written is found before the run.
//! On Valkey 9.1 and Redis 7.0.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::harness::{
    Running, Server, ServerKind, ServerOptions, TempDir, run_respbench, wait_until,
};

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// `memtier -s 127.0.0.1 -p PORT` with the three outputs under `dir`, then `extra`.
fn args(port: u16, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = [
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-t",
        "1",
        "-c",
        "2",
        "--hide-histogram",
        "--json-out-file",
        path(&dir.join("mt.json")),
        "--out-file",
        path(&dir.join("mt.txt")),
        "--hdr-file-prefix",
        path(&dir.join("hdr")),
    ]
    .map(String::from)
    .to_vec();
    all.extend(extra.iter().map(|s| s.to_string()));
    all
}

/// The files under `dir` (name, bytes), sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    v.sort();
    v
}

fn earlier_outputs_survive_a_kill_and_are_replaced_whole(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    // An earlier run's outputs (the JSON one as `compare` would read it).
    let earlier: [(&str, &[u8]); 3] = [
        ("hdr_FULL_RUN_1.txt", b"an earlier distribution\n"),
        (
            "mt.json",
            b"{\"ALL STATS\": {\"Totals\": {\"Ops/sec\": 12345.67}}}\n",
        ),
        ("mt.txt", b"an earlier memtier report\n"),
    ];
    for (name, bytes) in earlier {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let before = files(dir.path());

    let run = Running::spawn_args(&args(server.port(), dir.path(), &["--test-time=30"]));
    let mut c = server.client();
    assert!(
        wait_until(Duration::from_secs(20), || c.calls("get") > 100),
        "the run did not get going"
    );
    assert_eq!(
        files(dir.path()),
        before,
        "mid-run, the earlier outputs are as they were"
    );
    run.signal(libc::SIGKILL);
    let out = run.finish(Duration::from_secs(10));
    assert_eq!(out.code, None, "killed by a signal");
    assert_eq!(
        files(dir.path()),
        before,
        "a killed run leaves them byte for byte"
    );

    // A run that ends replaces each whole.
    run_respbench(&args(server.port(), dir.path(), &["--test-time=1"]), None).assert_success();
    let after = files(dir.path());
    let names: Vec<&str> = after.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "no temporary file left: {names:?}"
    );
    let bytes = |name: &str| {
        &after
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} in {names:?}"))
            .1
    };
    let json: Value = serde_json::from_slice(bytes("mt.json")).expect("the new JSON whole");
    assert!(
        json["ALL STATS"]["Totals"]["Ops/sec"]
            .as_f64()
            .is_some_and(|r| r > 0.0 && r != 12345.67),
        "{json}"
    );
    assert!(String::from_utf8_lossy(bytes("mt.txt")).contains("ALL STATS"));
    assert!(String::from_utf8_lossy(bytes("hdr_FULL_RUN_1.txt")).contains("Value"));
    assert!(names.contains(&"hdr_FULL_RUN_1.hgrm"), "{names:?}");
}

#[test]
fn earlier_outputs_survive_a_kill_and_are_replaced_whole_valkey() {
    earlier_outputs_survive_a_kill_and_are_replaced_whole(ServerKind::Valkey);
}

#[test]
fn earlier_outputs_survive_a_kill_and_are_replaced_whole_redis() {
    earlier_outputs_survive_a_kill_and_are_replaced_whole(ServerKind::Redis);
}

#[test]
fn an_output_that_cannot_be_written_is_found_before_the_run() {
    let server = Server::start_valkey();
    let dir = TempDir::new();
    let missing = dir.path().join("no-such-dir").join("hdr");
    let mut a = args(server.port(), dir.path(), &["-n", "100"]);
    let i = a.iter().position(|x| x == "--hdr-file-prefix").unwrap();
    a[i + 1] = path(&missing).to_string();
    let out = run_respbench(&a, None);
    out.assert_code(1);
    assert!(
        out.stderr.contains("cannot write") && out.stderr.contains("no-such-dir"),
        "{}",
        out.stderr
    );
    assert_eq!(server.client().calls("get"), 0, "nothing ran");
}
