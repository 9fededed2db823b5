//! `--fill` and `--memory-per-key` (issue 26 item 2) against Valkey 9.1 and Redis 7.0: the fill
//! writes every key of the range exactly once, and the bytes per key it reports agree within 10%
//! with a hand calculation from `MEMORY USAGE` on sampled keys.

use serde_json::Value as Json;

use super::harness::{Server, ServerKind, ServerOptions};

const KEYS: u64 = 30_000;

fn fill_and_check(kind: ServerKind) {
    let server = Server::start_with(ServerOptions {
        kind,
        ..ServerOptions::default()
    });
    let range = KEYS.to_string();
    let out = server.bench(&[
        "-t", "set", "-r", &range, "-d", "100", "-c", "8", "--fill", "--json", "-", "-q",
    ]);
    out.assert_success();
    let mut c = server.client();
    // Every key of the range written exactly once.
    assert_eq!(c.dbsize(), KEYS as i64);
    assert_eq!(c.calls("set"), KEYS);
    let doc: Json = serde_json::from_str(&out.stdout).expect("the record is JSON");
    let dir = super::harness::TempDir::new();
    let path = dir.path().join("fill.json");
    std::fs::write(&path, &out.stdout).expect("a temporary file");
    super::record::check_with_python(&path);
    let m = &doc["tests"][0]["memory"];
    assert_eq!(m["data_type"], "string", "{m}");
    assert_eq!(m["keys_added"].as_i64(), Some(KEYS as i64), "{m}");
    assert_eq!(m["payload_bytes_per_key"].as_u64(), Some(16 + 100), "{m}");
    let expected_allocator = match kind {
        ServerKind::Valkey => "libc",
        ServerKind::Redis => "jemalloc",
    };
    assert!(
        m["allocator"]
            .as_str()
            .unwrap_or("")
            .starts_with(expected_allocator),
        "{m}"
    );
    assert!(m["read"].as_str().unwrap_or("").starts_with("after"), "{m}");
    let per_key = m["used_memory"]["bytes_per_key"]
        .as_f64()
        .expect("bytes per key");
    let overhead = m["used_memory"]["overhead_per_key"]
        .as_f64()
        .expect("overhead");
    assert!((per_key - 116.0 - overhead).abs() < 1e-6, "{m}");
    assert!(
        m["used_memory_dataset"]["bytes_per_key"].as_f64().is_some(),
        "{m}"
    );

    // By hand: MEMORY USAGE of sampled keys (key, value and entry), plus the key table's share:
    // one 8-byte pointer per bucket, the table a power of two at least as large as the keys.
    let sampled: Vec<u64> = (0..KEYS)
        .step_by(600)
        .map(|k| {
            let key = format!("key:{k:012}");
            c.int(&["MEMORY", "USAGE", key.as_str()]) as u64
        })
        .collect();
    let usage = sampled.iter().sum::<u64>() as f64 / sampled.len() as f64;
    let table = 8.0 * KEYS.next_power_of_two() as f64 / KEYS as f64;
    let by_hand = usage + table;
    let off = (per_key - by_hand).abs() / by_hand;
    assert!(
        off < 0.10,
        "bytes per key {per_key:.1} vs by hand {by_hand:.1} (MEMORY USAGE {usage:.1} + table \
         {table:.1}): {:.1}% apart",
        off * 100.0
    );
    // The text report (stderr with --json -) shows the figure with allocator and version.
    assert!(
        out.stderr.contains("Memory per key (string;"),
        "{}",
        out.stderr
    );
}

#[test]
fn fill_writes_each_key_once_and_bytes_per_key_match_memory_usage_valkey() {
    fill_and_check(ServerKind::Valkey);
}

#[test]
fn fill_writes_each_key_once_and_bytes_per_key_match_memory_usage_redis() {
    fill_and_check(ServerKind::Redis);
}

#[test]
fn fill_refuses_what_it_cannot_honour() {
    let out = super::harness::respbench(&["-t", "set", "--fill"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--fill needs -r"), "{}", out.stderr);
    let out = super::harness::respbench(&["-t", "set", "-r", "10", "--fill", "--rps", "100"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("--fill cannot be combined with --rps"),
        "{}",
        out.stderr
    );
}

#[test]
fn compare_shows_redis_and_valkey_memory_beside_the_speed_table() {
    let dir = super::harness::TempDir::new();
    let mut files = Vec::new();
    for (kind, name) in [
        (ServerKind::Valkey, "valkey.json"),
        (ServerKind::Redis, "redis.json"),
    ] {
        let server = Server::start_with(ServerOptions {
            kind,
            ..ServerOptions::default()
        });
        let path = dir.path().join(name);
        let path = path.to_str().expect("UTF-8 path").to_string();
        server
            .bench(&[
                "-t", "set", "-r", "2000", "-d", "50", "--fill", "--json", &path, "-q",
            ])
            .assert_success();
        files.push(path);
    }
    let out = super::harness::respbench(&["compare", &files[0], &files[1]]);
    out.assert_success();
    let text = &out.stdout;
    let speed = text.find("SET").expect("the speed table");
    let memory = text.find("Memory per key").expect("the memory table");
    assert!(memory > speed, "{text}");
    assert!(text.contains("libc") && text.contains("jemalloc"), "{text}");
    assert!(
        text.contains("valkey 9.1") && text.contains("redis 7.0"),
        "{text}"
    );
    let html = dir.path().join("r.html");
    let html = html.to_str().expect("UTF-8 path");
    super::harness::respbench(&["report", &files[0], &files[1], "-o", html]).assert_success();
    let page = std::fs::read_to_string(html).expect("the report");
    assert!(
        page.contains("id=\"memory-per-key\""),
        "the HTML report has the table"
    );
}

/// A fill in two shards, one after the other, on one server: `merge` keeps memory per key as
/// one fill from the first shard's "before" (no key) to the second's "after" (every key), not a
/// sum, and says so.
#[test]
fn merged_fill_shards_of_one_server_keep_memory_per_key_as_one_fill() {
    for kind in [ServerKind::Valkey, ServerKind::Redis] {
        let server = Server::start_with(ServerOptions {
            kind,
            ..ServerOptions::default()
        });
        let dir = super::harness::TempDir::new();
        let json = dir.path().join("fill-{shard}.json");
        let json = json.to_str().expect("UTF-8 path");
        for shard in ["0/2", "1/2"] {
            server
                .bench(&[
                    "--shard", shard, "-t", "set", "-r", "4000", "-d", "100", "--fill", "--json",
                    json, "-q",
                ])
                .assert_success();
        }
        let all = dir.path().join("all.json");
        let all = all.to_str().expect("UTF-8 path");
        let shards: Vec<String> = (0..2)
            .map(|i| {
                dir.path()
                    .join(format!("fill-{i}.json"))
                    .display()
                    .to_string()
            })
            .collect();
        super::harness::respbench(&["merge", "-o", all, &shards[0], &shards[1]]).assert_success();
        super::record::check_with_python(std::path::Path::new(all));
        let read = |p: &str| -> Json {
            serde_json::from_str(&std::fs::read_to_string(p).expect("a record")).expect("JSON")
        };
        let m = &read(all)["tests"][0]["memory"];
        assert_eq!(
            (m["keys_before"].as_u64(), m["keys_after"].as_u64()),
            (Some(0), Some(4000)),
            "{m}"
        );
        assert_eq!(m["keys_added"].as_i64(), Some(4000), "{m}");
        let first = read(&shards[0]);
        let second = read(&shards[1]);
        let fm = &first["tests"][0]["memory"];
        let sm = &second["tests"][0]["memory"];
        assert_eq!(m["used_memory"]["before"], fm["used_memory"]["before"]);
        assert_eq!(m["used_memory"]["after"], sm["used_memory"]["after"]);
        let per_key = m["used_memory"]["bytes_per_key"].as_f64().unwrap();
        let want = (sm["used_memory"]["after"].as_f64().unwrap()
            - fm["used_memory"]["before"].as_f64().unwrap())
            / 4000.0;
        assert!((per_key - want).abs() < 1e-9, "{m}");
        assert!(
            m["merged"].as_str().unwrap_or("").contains("not a sum"),
            "{m}"
        );
    }
}
