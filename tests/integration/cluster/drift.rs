//! `--key-drift` with `--cluster`: the drift is key choice and routing is by key, so a moving hot
//! set is written on whichever primaries own its keys, with nothing lost (judged from the keys
//! the primaries hold, not from timing).

use serde_json::Value as Json;

use super::{Cluster, keys};

#[test]
fn a_drifting_hot_set_moves_across_the_cluster() {
    let c = Cluster::start();
    let out = c.bench(&[
        "-q",
        "-r",
        "1000",
        "--key-drift",
        "hot:10:0.4",
        "--duration",
        "1.9",
        "-c",
        "2",
        "--json",
        "-",
        "incr",
        "key:__rand_int__",
    ]);
    out.assert_success();
    let doc: Json = serde_json::from_str(&out.stdout).expect("the record is JSON");
    assert_eq!(
        doc["options"]["key_drift"]["kind"].as_str(),
        Some("hot_set")
    );
    let req = &doc["tests"][0]["requests"];
    assert!(req["completed"].as_u64().unwrap_or(0) > 0, "{req}");
    assert_eq!(req["failed"].as_u64(), Some(0), "{req}");
    // Every key any primary holds, as its number.
    let mut written: Vec<u64> = c
        .primaries()
        .into_iter()
        .flat_map(|port| keys(port, "key:*"))
        .map(|k| k["key:".len()..].parse().expect("a numbered key"))
        .collect();
    written.sort_unstable();
    let last_set = written.last().copied().unwrap_or(0) / 10;
    assert!(
        last_set >= 3,
        "the hot set moved at least 3 times: {written:?}"
    );
    // The sets before the last (cut by the end) were written whole, and nothing else was.
    let whole: Vec<u64> = written
        .iter()
        .copied()
        .filter(|k| k / 10 < last_set)
        .collect();
    assert_eq!(whole, (0..last_set * 10).collect::<Vec<_>>(), "{written:?}");
    let on: Vec<usize> = c
        .primaries()
        .into_iter()
        .map(|port| keys(port, "key:*").len())
        .collect();
    assert!(
        on.iter().filter(|&&n| n > 0).count() >= 2,
        "the hot keys spread over the primaries that own them: {on:?}"
    );
}
