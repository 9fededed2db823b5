//! What a run does to the server: keys, values, databases, command and connection counts.

use crate::harness::{Server, ServerOptions};
use std::collections::BTreeSet;

/// `key:` + 12 zero-padded digits, as `__rand_int__` expands.
fn key12(prefix: &str, n: u64) -> String {
    format!("{prefix}{n:012}")
}

/// The 12-digit number after `prefix`, if `s` is exactly that.
fn num12(s: &[u8], prefix: &str) -> Option<u64> {
    let rest = std::str::from_utf8(s).ok()?.strip_prefix(prefix)?;
    (rest.len() == 12 && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}

#[test]
fn sequential_keyspace_creates_every_key_exactly_once() {
    let server = Server::start();
    server
        .bench(&["-r", "100", "--sequential", "-n", "100", "-t", "set", "-q"])
        .assert_success();
    let mut c = server.client();
    assert_eq!(
        c.dbsize(),
        100,
        "100 sequential SETs over -r 100 make 100 keys"
    );
    let mut exists = vec!["EXISTS".to_string()];
    exists.extend((0..100).map(|n| key12("key:", n)));
    assert_eq!(
        c.int(&exists),
        100,
        "key:000000000000 .. key:000000000099 all exist"
    );
}

#[test]
fn sequential_rand_int_draws_once_per_occurrence() {
    // Spec §3.2: every __rand_int__ occurrence takes its own counter step, so the key gets the
    // even numbers and the value the next (odd) one; 300 commands wrap around once.
    let server = Server::start();
    server
        .bench(&[
            "-r",
            "300",
            "--sequential",
            "-n",
            "300",
            "-q",
            "SET",
            "key__rand_int__",
            "val__rand_int__",
        ])
        .assert_success();
    let mut c = server.client();
    let keys = c.strings(&["KEYS", "*"]);
    assert_eq!(keys.len(), 150, "150 distinct keys");
    for key in keys {
        let n = num12(&key, "key")
            .unwrap_or_else(|| panic!("unexpected key {}", String::from_utf8_lossy(&key)));
        assert_eq!(n % 2, 0, "key numbers are even: {n}");
        assert!(n < 300);
        let got = c.bulk(&[b"GET".as_slice(), key.as_slice()]).expect("value");
        assert_eq!(
            num12(&got, "val"),
            Some(n + 1),
            "key{n:012} holds the next (odd) number, got {}",
            String::from_utf8_lossy(&got)
        );
    }
}

#[test]
fn rand_1st_is_shared_within_a_sequence_and_rand_int_is_not() {
    let server = Server::start();
    let mut c = server.client();

    // Same token twice in one unit: both SADDs hit the same set.
    server
        .bench(&[
            "-r",
            "1000000",
            "-n",
            "400",
            "-q",
            "--",
            "SADD",
            "s:__rand_1st__",
            "a",
            ";",
            "SADD",
            "s:__rand_1st__",
            "b",
        ])
        .assert_success();
    let sets = c.strings(&["KEYS", "s:*"]);
    assert!(
        (150..=200).contains(&sets.len()),
        "200 units over a 1e6 keyspace give ~200 sets, got {}",
        sets.len()
    );
    for key in &sets {
        assert!(
            num12(key, "s:").is_some(),
            "placeholder replaced in {key:?}"
        );
        let members: BTreeSet<Vec<u8>> = c
            .strings(&[b"SMEMBERS".as_slice(), key.as_slice()])
            .into_iter()
            .collect();
        let expected: BTreeSet<Vec<u8>> = [b"a".to_vec(), b"b".to_vec()].into();
        assert_eq!(
            members,
            expected,
            "{} has both members",
            String::from_utf8_lossy(key)
        );
    }

    // __rand_int__ draws per occurrence: the two SADDs (almost always) hit different sets.
    server
        .bench(&[
            "-r",
            "1000000",
            "-n",
            "400",
            "-q",
            "--",
            "SADD",
            "t:__rand_int__",
            "a",
            ";",
            "SADD",
            "t:__rand_int__",
            "b",
        ])
        .assert_success();
    let sets = c.strings(&["KEYS", "t:*"]);
    assert!(sets.len() > 300, "~400 distinct sets, got {}", sets.len());
    let pairs = sets
        .iter()
        .filter(|k| c.int(&[b"SCARD".as_slice(), k.as_slice()]) == 2)
        .count();
    assert!(
        pairs < 20,
        "{pairs} sets got both members: __rand_int__ was shared"
    );
}

#[test]
fn stdin_argument_is_sent_byte_exact() {
    let server = Server::start();
    let payload: Vec<u8> =
        b"\x00head\r\nmiddle\xff\xfe __rand_int__ __rand_1st__ __data__\r\n\x00tail\n".to_vec();
    server
        .bench_stdin(
            &["-n", "1", "-c", "1", "-q", "-x", "set", "stdinkey"],
            &payload,
        )
        .assert_success();
    // With -r, placeholders inside the stdin argument must still not be touched.
    server
        .bench_stdin(
            &[
                "-r",
                "1000",
                "-n",
                "1",
                "-c",
                "1",
                "-q",
                "-x",
                "set",
                "stdinkey2",
            ],
            &payload,
        )
        .assert_success();
    let mut c = server.client();
    assert_eq!(
        c.bulk(&["GET", "stdinkey"]).as_deref(),
        Some(payload.as_slice())
    );
    assert_eq!(
        c.bulk(&["GET", "stdinkey2"]).as_deref(),
        Some(payload.as_slice())
    );
    assert_eq!(c.dbsize(), 2);
}

#[test]
fn dbnum_selects_the_database() {
    let server = Server::start();
    server
        .bench(&["--dbnum", "3", "-t", "set", "-n", "100", "-r", "1000", "-q"])
        .assert_success();
    let mut c = server.client();
    assert_eq!(c.dbsize(), 0, "db 0 stays empty");
    c.ok(&["SELECT", "3"]);
    let keys = c.dbsize();
    assert!((50..=100).contains(&keys), "db 3 got the SETs: {keys} keys");
}

#[test]
fn unix_socket_reaches_the_server() {
    let server = Server::start_with(ServerOptions {
        unix_socket: true,
        ..Default::default()
    });
    let sock = server
        .unix_socket()
        .to_str()
        .expect("utf-8 path")
        .to_string();
    // -s overrides -h/-p; give a port nobody listens on to prove the socket is what is used.
    let dead_port = crate::harness::free_port().to_string();
    let out = crate::harness::run_respbench(
        &[
            "-p", &dead_port, "-s", &sock, "-t", "set,get", "-n", "200", "-q",
        ]
        .map(String::from),
        None,
    );
    out.assert_success();
    assert!(out.stdout.starts_with("SET: "), "{}", out.stdout);
    assert!(out.stdout.contains("\nGET: "), "{}", out.stdout);
    let mut c = server.client();
    assert_eq!(
        c.int(&["EXISTS", "key:__rand_int__"]),
        1,
        "SET without -r uses the literal key"
    );
    assert_eq!(c.calls("set"), 200);
    assert_eq!(c.calls("get"), 200);

    // Reconnecting (-k 0) over the socket too.
    let before = c.info_u64("stats", "total_connections_received");
    crate::harness::run_respbench(
        &[
            "-s", &sock, "-k", "0", "-c", "2", "-n", "50", "-t", "set", "-q",
        ]
        .map(String::from),
        None,
    )
    .assert_success();
    let after = c.info_u64("stats", "total_connections_received");
    assert!(after - before >= 50, "{} new connections", after - before);
    assert_eq!(c.calls("set"), 250);
}

#[test]
fn keepalive_0_reconnects_for_every_batch() {
    let server = Server::start();
    let mut c = server.client();
    let before = c.info_u64("stats", "total_connections_received");
    let out = server.bench(&["-n", "200", "-c", "2", "-k", "0", "-t", "set"]);
    out.assert_success();
    out.assert_stdout_contains("\n  keep alive: 0\n");
    out.assert_stderr_contains("WARNING: -k 0");
    assert_eq!(out.completed(), 200);
    let after = c.info_u64("stats", "total_connections_received");
    assert!(
        after - before >= 200,
        "-k 0 with 200 one-request batches: only {} new connections",
        after - before
    );
    assert_eq!(c.calls("set"), 200);

    let before = after;
    server
        .bench(&["-n", "200", "-c", "2", "-k", "1", "-t", "set", "-q"])
        .assert_success();
    let after = c.info_u64("stats", "total_connections_received");
    assert!(
        after - before <= 10,
        "-k 1 keeps its 2 connections (plus a control one): {} new connections",
        after - before
    );
}

#[test]
fn pipelining_sends_exactly_n_commands() {
    let server = Server::start();
    let mut c = server.client();
    server
        .bench(&["-P", "16", "-n", "1600", "-t", "set", "-r", "100000", "-q"])
        .assert_success();
    assert_eq!(c.calls("set"), 1600);

    // A final partial batch: 1001 is not a multiple of 10 (nor of 50 clients).
    c.ok(&["CONFIG", "RESETSTAT"]);
    let out = server.bench(&["-n", "1001", "-P", "10", "-t", "set"]);
    out.assert_success();
    assert_eq!(c.calls("set"), 1001, "no overshoot past -n");
    assert_eq!(out.completed(), 1001);

    // Fewer requests than clients.
    c.ok(&["CONFIG", "RESETSTAT"]);
    server
        .bench(&["-n", "7", "-c", "50", "-t", "set", "-q"])
        .assert_success();
    assert_eq!(c.calls("set"), 7);
}

#[test]
fn threads_share_the_request_count_exactly() {
    let server = Server::start();
    let out = server.bench(&[
        "--threads",
        "2",
        "-c",
        "4",
        "-n",
        "4000",
        "-t",
        "incr",
        "-r",
        "1",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(
        c.bulk(&["GET", "counter:000000000000"]).as_deref(),
        Some(&b"4000"[..])
    );
    assert_eq!(c.dbsize(), 1);
    assert_eq!(out.completed(), 4000);
}

#[test]
fn resp3_sends_hello_3_on_every_connection() {
    let server = Server::start();
    let out = server.bench(&[
        "-3",
        "-c",
        "5",
        "-n",
        "500",
        "-t",
        "get,lrange_100,mget",
        "-q",
    ]);
    out.assert_success();
    for title in [
        "GET",
        "LPUSH (needed to benchmark LRANGE)",
        "LRANGE_100 (first 100 elements)",
        "MGET (10 keys)",
    ] {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{title}: "))),
            "no {title} line:\n{}",
            out.stdout
        );
    }
    let mut c = server.client();
    let hellos = c.calls("hello");
    assert!(
        hellos >= 5,
        "HELLO 3 on each of the 5 connections, got {hellos} calls"
    );
    assert_eq!(c.calls("get"), 500);
    assert_eq!(c.calls("mget"), 500);
}

#[test]
fn warmup_requests_are_sent_but_not_reported() {
    let server = Server::start();
    let out = server.bench(&["--warmup", "0.3", "-n", "500", "-t", "set"]);
    out.assert_success();
    assert_eq!(
        out.completed(),
        500,
        "the report counts measured requests only"
    );
    let mut c = server.client();
    let sets = c.calls("set");
    assert!(sets > 500, "warmup SETs reach the server too: {sets} calls");
}

#[test]
fn sequence_repeat_counts_commands() {
    let server = Server::start();
    let out = server.bench(&["-n", "400", "--", "3", "incr", "a", ";", "incr", "b"]);
    out.assert_success();
    out.assert_stdout_contains("====== 3 incr a ; incr b ======");
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "a"]).as_deref(), Some(&b"300"[..]));
    assert_eq!(c.bulk(&["GET", "b"]).as_deref(), Some(&b"100"[..]));
    assert_eq!(c.calls("incr"), 400);
}

#[test]
fn data_size_sets_the_value_length() {
    let server = Server::start();
    server
        .bench(&["-t", "set", "-d", "100", "-n", "10", "-q"])
        .assert_success();
    server
        .bench(&["-d", "7", "-n", "10", "-q", "set", "custom", "x__data__y"])
        .assert_success();
    let mut c = server.client();
    let v = c.bulk(&["GET", "key:__rand_int__"]).expect("SET ran");
    assert_eq!(v.len(), 100);
    let v = c.bulk(&["GET", "custom"]).expect("custom SET ran");
    assert_eq!(
        v.len(),
        9,
        "__data__ became 7 bytes: {}",
        String::from_utf8_lossy(&v)
    );
    assert!(v.starts_with(b"x") && v.ends_with(b"y"));
    assert!(!v.windows(8).any(|w| w == b"__data__"));
}

#[test]
fn keepalive_0_resends_auth_and_select_on_every_new_connection() {
    let server = Server::start_with(ServerOptions {
        password: Some("pw".into()),
        ..Default::default()
    });
    let out = server.bench(&[
        "-a", "pw", "--dbnum", "5", "-k", "0", "-c", "2", "-n", "100", "-r", "1000000", "-t",
        "set", "-q",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(
        c.calls("set"),
        100,
        "every batch on a fresh connection was accepted"
    );
    assert!(
        c.calls("auth") >= 100,
        "AUTH on every connection: {}",
        c.calls("auth")
    );
    assert!(
        c.calls("select") >= 100,
        "SELECT on every connection: {}",
        c.calls("select")
    );
    assert_eq!(c.dbsize(), 0, "nothing landed in db 0");
    c.ok(&["SELECT", "5"]);
    assert!(c.dbsize() >= 90, "the SETs landed in db 5: {}", c.dbsize());
}

#[test]
fn large_pipelined_batches_are_written_completely() {
    // 200 x 50 kB per batch: far more than a socket buffer, so writes are partial.
    let server = Server::start();
    server
        .bench(&[
            "-P", "200", "-d", "50000", "-n", "2000", "-c", "2", "-t", "set,get", "-q",
        ])
        .assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set"), 2000);
    assert_eq!(c.calls("get"), 2000);
    assert_eq!(c.int(&["STRLEN", "key:__rand_int__"]), 50000);
}

/// Regression: -n used to be split per worker in commands, and each worker rounded its share up
/// to whole units, so 3 threads sent 102 units (408 commands) instead of 100.
#[test]
fn sequence_repeat_counts_commands_across_threads() {
    // Same as `sequence_repeat_counts_commands`, split over 3 worker threads: -n is a total, so
    // 400 commands are 100 units whatever the thread count (one thread gives a=300, b=100).
    let server = Server::start();
    let out = server.bench(&[
        "--threads",
        "3",
        "-c",
        "3",
        "-n",
        "400",
        "--",
        "3",
        "incr",
        "a",
        ";",
        "incr",
        "b",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "a"]).as_deref(), Some(&b"300"[..]));
    assert_eq!(c.bulk(&["GET", "b"]).as_deref(), Some(&b"100"[..]));
    assert_eq!(out.completed(), 400);
}

/// Every member of `items` is `prefix` + 12 digits below `keyspace`.
#[track_caller]
fn all_placeholders(items: &[Vec<u8>], prefix: &str, keyspace: u64) {
    assert!(!items.is_empty(), "nothing under {prefix}");
    for item in items {
        let n = num12(item, prefix).unwrap_or_else(|| {
            panic!(
                "{:?} is not {prefix}<12 digits>",
                String::from_utf8_lossy(item)
            )
        });
        assert!(n < keyspace, "{n} outside -r {keyspace}");
    }
}

#[test]
fn suite_tests_write_the_reference_keys() {
    let server = Server::start();
    server
        .bench(&[
            "-t",
            "set,incr,lpush,sadd,hset,zadd,mset,xadd,function_load",
            "-n",
            "100",
            "-r",
            "1000",
            "--num-functions",
            "5",
            "-d",
            "8",
            "-q",
        ])
        .assert_success();
    let mut c = server.client();
    all_placeholders(&c.strings(&["KEYS", "key:*"]), "key:", 1000);
    let counters = c.strings(&["KEYS", "counter:*"]);
    all_placeholders(&counters, "counter:", 1000);
    let incrs: i64 = counters
        .iter()
        .map(|k| {
            let v = c.bulk(&[b"GET".as_slice(), k.as_slice()]).expect("counter");
            String::from_utf8_lossy(&v).parse::<i64>().expect("integer")
        })
        .sum();
    assert_eq!(incrs, 100, "the INCRs add up to -n");
    assert_eq!(c.int(&["LLEN", "mylist"]), 100);
    let value = c.bulk(&["LINDEX", "mylist", "0"]).expect("list item");
    assert_eq!(value.len(), 8, "-d 8 payload");
    all_placeholders(&c.strings(&["SMEMBERS", "myset"]), "element:", 1000);
    all_placeholders(&c.strings(&["HKEYS", "myhash"]), "element:", 1000);
    let zmembers = c.strings(&["ZRANGE", "myzset", "0", "-1"]);
    all_placeholders(&zmembers, "element:", 1000);
    // With -r the score is __rand_int__ too: an integer below 1000.
    for m in &zmembers {
        let score = c
            .bulk(&[b"ZSCORE".as_slice(), b"myzset", m.as_slice()])
            .expect("score");
        let score: u64 = String::from_utf8_lossy(&score)
            .parse()
            .expect("integer score");
        assert!(score < 1000);
    }
    assert_eq!(c.int(&["XLEN", "mystream"]), 100);
    // FUNCTION LOAD replaced the library "benchlib" with foo1..foo5.
    let listing = c.ok(&["FUNCTION", "LIST", "LIBRARYNAME", "benchlib"]);
    let mut names = Vec::new();
    collect_function_names(&listing, &mut names);
    names.sort();
    assert_eq!(names, ["foo1", "foo2", "foo3", "foo4", "foo5"]);
}

/// The values following each `name` key anywhere inside a FUNCTION LIST reply.
fn collect_function_names(v: &resp::Value, out: &mut Vec<String>) {
    if let resp::Value::Array(items) = v {
        for pair in items.windows(2) {
            if pair[0].as_str() == Some("name")
                && let Some(name) = pair[1].as_str()
            {
                out.push(name.to_string());
            }
        }
        for item in items {
            collect_function_names(item, out);
        }
    }
}
