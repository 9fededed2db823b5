//! Workload options (issue 12) against real servers: key distributions, value sizes, the
//! SET:GET ratio, and their usage errors.

use crate::harness::{Server, run_respbench};

fn key(n: u64) -> String {
    format!("key:{n:012}")
}

/// The value of counter key `n` (0 if absent).
fn counter(c: &mut crate::harness::Client, n: u64) -> u64 {
    c.bulk(&["GET", key(n).as_str()])
        .map_or(0, |v| String::from_utf8(v).unwrap().parse().unwrap())
}

#[test]
fn zipf_keys_make_the_first_key_the_hottest() {
    let server = Server::start();
    server
        .bench(&[
            "--keys",
            "zipf:1.1",
            "-r",
            "1000",
            "-n",
            "20000",
            "-c",
            "4",
            "--seed",
            "5",
            "-q",
            "INCR",
            "key:__rand_int__",
        ])
        .assert_success();
    let mut c = server.client();
    let hottest = counter(&mut c, 0);
    let others: Vec<u64> = (1..1000).map(|n| counter(&mut c, n)).collect();
    assert!(
        others.iter().all(|&n| n < hottest),
        "key 0 ({hottest}) is hotter than every other key"
    );
    // Rank 2 gets about 2^-1.1 of rank 1's share, rank 100 far less.
    assert!(
        others[0] > hottest / 3 && others[0] < hottest,
        "{}",
        others[0]
    );
    assert!(others[98] < hottest / 50, "{}", others[98]);
}

#[test]
fn sequential_and_parallel_cover_an_explicit_range_exactly() {
    for pattern in ["S:S", "P:P"] {
        let server = Server::start();
        let out = server.bench(&[
            &format!("--key-pattern={pattern}"),
            "--key-minimum=100",
            "--key-maximum=1099",
            "-n",
            "10000",
            "-c",
            "10",
            "--threads",
            "2",
            "-q",
            "SET",
            "key:__rand_int__",
            "x",
        ]);
        out.assert_success();
        assert_eq!(
            out.stderr_but_machine_busy(),
            "",
            "{pattern}: a successful run is quiet"
        );
        let mut c = server.client();
        assert_eq!(
            c.dbsize(),
            1000,
            "{pattern}: every key of 100..=1099, nothing else"
        );
        assert!(c.bulk(&["GET", key(100).as_str()]).is_some(), "{pattern}");
        assert!(c.bulk(&["GET", key(1099).as_str()]).is_some(), "{pattern}");
    }
}

#[test]
fn parallel_gives_each_connection_its_own_slice_in_order() {
    // 4 connections over 40 keys: slices of 10, each walked in order lap after lap.
    let server = Server::start();
    server
        .bench(&[
            "--keys",
            "parallel",
            "-r",
            "40",
            "-n",
            "4000",
            "-c",
            "4",
            "-q",
            "INCR",
            "key:__rand_int__",
        ])
        .assert_success();
    let mut c = server.client();
    let counts: Vec<u64> = (0..40).map(|n| counter(&mut c, n)).collect();
    let total: u64 = counts.iter().sum();
    assert_eq!(total, 4000);
    // Within a slice a connection walks in order, so its keys' counters differ by at most one.
    for slice in counts.chunks(10) {
        let (lo, hi) = (slice.iter().min().unwrap(), slice.iter().max().unwrap());
        assert!(hi - lo <= 1, "{slice:?}");
    }
}

#[test]
fn bad_workload_options_are_one_line_and_exit_2() {
    for args in [
        &["--ratio", "1"][..],
        &["--key-zipf-exp", "0"],
        &["--data-size-range", "9-3"],
        &["--data-size-range", "5-9", "--cluster"],
        &["--key-pattern", "X"],
        &["--keys", "gaussian", "-r", "10", "--key-median", "99"],
        &["-r", "10", "--key-stddev", "2"],
        &["-d", "5", "--data-size-range", "1-9"],
        &["--command", "SET \"a b"],
        &["-t", ","],
    ] {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = run_respbench(&argv, None);
        out.assert_code(2);
        let line = out.single_stderr_line();
        assert!(line.starts_with("respbench: "), "{line}");
        assert_eq!(out.stdout, "");
    }
}

/// Each key's STRLEN, for the keys `key:000000000000`.. of a keyspace of `n`.
fn strlens(c: &mut crate::harness::Client, n: u64) -> Vec<i64> {
    (0..n)
        .map(|k| c.int(&["STRLEN", key(k).as_str()]))
        .filter(|&l| l > 0)
        .collect()
}

#[test]
fn data_size_range_spreads_custom_values_over_the_range() {
    let server = Server::start_valkey();
    server
        .bench(&[
            "--data-size-range=10-90",
            "-r",
            "500",
            "-n",
            "3000",
            "-P",
            "16",
            "-q",
            "SET",
            "key:__rand_int__",
            "__data__",
        ])
        .assert_success();
    let mut c = server.client();
    let lens = strlens(&mut c, 500);
    assert!(lens.len() > 400, "most keys written: {}", lens.len());
    assert!(lens.iter().all(|l| (10..=90).contains(l)), "{lens:?}");
    let distinct: std::collections::BTreeSet<_> = lens.iter().collect();
    assert!(distinct.len() > 60, "sizes spread: {distinct:?}");
    let mean = lens.iter().sum::<i64>() as f64 / lens.len() as f64;
    assert!((mean - 50.0).abs() < 5.0, "mean size {mean}");
}

#[test]
fn data_size_list_sizes_the_default_tests_values() {
    let server = Server::start_valkey();
    let out = server.bench(&[
        "-t",
        "set",
        "--data-size-list",
        "8:3,1000:1",
        "-r",
        "400",
        "-n",
        "4000",
        "-q",
    ]);
    out.assert_success();
    assert_eq!(out.stderr_but_machine_busy(), "");
    let mut c = server.client();
    let lens = strlens(&mut c, 400);
    assert!(lens.len() > 350);
    assert!(lens.iter().all(|&l| l == 8 || l == 1000), "{lens:?}");
    // The last write to a key decides its size: about 1 in 4 are 1000 bytes.
    let big = lens.iter().filter(|&&l| l == 1000).count() as f64 / lens.len() as f64;
    assert!(
        (0.12..0.38).contains(&big),
        "share of 1000-byte values {big}"
    );
}

#[test]
fn key_prefix_replaces_key_colon_in_default_tests_and_memtier_commands() {
    let server = Server::start_valkey();
    server
        .bench(&[
            "--key-prefix=memtier-",
            "-r",
            "50",
            "-n",
            "500",
            "-t",
            "set",
            "-q",
        ])
        .assert_success();
    server
        .bench(&[
            "--key-prefix",
            "app:user:",
            "--key-maximum=9",
            "-n",
            "200",
            "--command",
            "SET __key__ __data__",
            "-q",
        ])
        .assert_success();
    let mut c = server.client();
    let mut keys: Vec<String> = c
        .strings(&["KEYS", "*"])
        .into_iter()
        .map(|k| String::from_utf8(k).unwrap())
        .collect();
    keys.sort();
    assert!(!keys.is_empty());
    assert!(
        keys.iter()
            .all(|k| k.starts_with("memtier-0000") || k.starts_with("app:user:0000")),
        "{keys:?}"
    );
    assert!(keys.iter().any(|k| k.starts_with("memtier-")), "{keys:?}");
    // --key-maximum=9: ten keys at most from the --command run.
    let app = keys.iter().filter(|k| k.starts_with("app:user:")).count();
    assert!((1..=10).contains(&app), "{keys:?}");
    let out = server.bench(&["--key-prefix", "a b", "-n", "1"]);
    out.assert_code(2);
    assert!(out.single_stderr_line().contains("--key-prefix"));
}

/// The peak resident memory (KiB) of one respbench run, from `wait4`'s usage of that child
/// alone.
pub(crate) fn peak_rss_kib(args: &[String]) -> i64 {
    use std::os::unix::process::ExitStatusExt;
    // Reaped by the wait4 below, which is what gives this child's own usage.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_respbench"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value (plain integers).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes only into the two locals, for the child this test started.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let status = std::process::ExitStatus::from_raw(status);
    assert!(status.success(), "respbench {args:?}: {status}");
    usage.ru_maxrss
}

/// A large value is held once, not once per connection (issue 19 item 7: `-d 100000000 -c 50`
/// took 5.2 GB): 20 connections with a 20 MB value peak far below the 19 × 20 MB that a copy per
/// connection adds, and the server gets the value byte for byte as the copying path (a
/// `--data-size-list` of the one size, which rewrites each batch) sends it.
#[test]
fn a_large_value_is_shared_by_the_connections_and_arrives_intact() {
    let server = Server::start();
    let run = |c: u32, key: &str| -> i64 {
        let args = [
            "-p",
            &server.port().to_string(),
            "-c",
            &c.to_string(),
            "-n",
            "40",
            "-d",
            "20000000",
            "-q",
            "--",
            "set",
            key,
            "__data__",
        ];
        peak_rss_kib(&args.map(String::from))
    };
    let (one, twenty) = (run(1, "big:1"), run(20, "big:20"));
    assert!(
        twenty - one < 100 * 1024,
        "peak RSS {one} KiB at -c 1, {twenty} KiB at -c 20: grows with -c"
    );
    server
        .bench(&[
            "-n",
            "1",
            "-c",
            "1",
            "-q",
            "--data-size-list",
            "20000000:1",
            "--",
            "set",
            "copied",
            "__data__",
        ])
        .assert_success();
    let mut c = server.client();
    let copied = c.bulk(&["GET", "copied"]).unwrap();
    assert_eq!(copied.len(), 20_000_000);
    for key in ["big:1", "big:20"] {
        assert!(
            c.bulk(&["GET", key]).unwrap() == copied,
            "{key}: not the same bytes"
        );
    }
}
