//! `--cluster --sequential`: every key of the range is written exactly once per lap, across the
//! nodes, whatever `-n` is (issue 19 item 7).

use super::{Cluster, keys};
use resp::Value;

use crate::harness::Client;

/// Every primary's keys matching `key:*`, all together, sorted.
fn all_keys(c: &Cluster) -> Vec<String> {
    let mut all: Vec<String> = c
        .primaries()
        .into_iter()
        .flat_map(|p| keys(p, "key:*"))
        .collect();
    all.sort();
    all
}

/// DBSIZE summed over the primaries.
fn dbsize(c: &Cluster) -> i64 {
    c.primaries()
        .into_iter()
        .map(|p| match Client::connect(p).cmd(&["DBSIZE"]) {
            Value::Integer(n) => n,
            other => panic!("DBSIZE: {other:?}"),
        })
        .sum()
}

#[test]
fn sequential_writes_every_key_of_the_range_once() {
    let c = Cluster::start();
    let want: Vec<String> = (0..1000).map(|k| format!("key:{k:012}")).collect();
    for (n, threads) in [("1000", "1"), ("3000", "2")] {
        for p in c.primaries() {
            Client::connect(p).cmd(&["FLUSHALL"]);
        }
        let out = c.bench(&[
            "--sequential",
            "-r",
            "1000",
            "-n",
            n,
            "-c",
            "3",
            "-P",
            "7",
            "--threads",
            threads,
            "--",
            "set",
            "key:__rand_int__",
            "x",
        ]);
        out.assert_success();
        assert_eq!(out.completed(), n.parse::<u64>().unwrap(), "{}", out.stdout);
        assert_eq!(dbsize(&c), 1000, "-n {n}");
        assert_eq!(all_keys(&c), want, "-n {n}");
    }
    // Counted per key: -n 2500 is two laps and a half (keys below 500 three times).
    for p in c.primaries() {
        Client::connect(p).cmd(&["FLUSHALL"]);
    }
    let out = c.bench(&[
        "--sequential",
        "-r",
        "1000",
        "-n",
        "2500",
        "-c",
        "2",
        "--",
        "incr",
        "key:__rand_int__",
    ]);
    out.assert_success();
    for p in c.primaries() {
        let mut client = Client::connect(p);
        for k in keys(p, "key:*") {
            let v = client.bulk(&["GET", &k]).expect("key exists");
            let v: u64 = String::from_utf8(v).unwrap().parse().unwrap();
            let num: u64 = k["key:".len()..].parse().unwrap();
            assert_eq!(v, 2 + u64::from(num < 500), "{k}");
        }
    }
    assert_eq!(dbsize(&c), 1000);
}
