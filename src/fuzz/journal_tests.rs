//! A killed fuzz run's journal: what `recover` rebuilds is the block a Ctrl-C at the last full
//! second would have written (the helpers: `record/journal/mode_tests.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::block::FuzzRecord;
use crate::metrics::SecondTally;
use crate::record::block::Block;
use crate::record::document::Document;
use crate::record::journal::mode_tests::{STARTED, dir, exact_timeline, handed, head, journaled};
use crate::record::journal::{Journal, TestStart, recognise};

#[test]
fn a_killed_fuzz_run_is_its_block_with_the_commands_sent_and_the_errors_by_kind() {
    let (timeline, start) = exact_timeline();
    let at = |ms: u64| start + Duration::from_millis(ms);
    // Two clients. Second 0: 6 written, 3 answered, an ERR and a WRONGTYPE reply, one still
    // out; second 1: 3 written, a reply, a timeout and a lost connection; second 2: 1 written,
    // not answered yet.
    let mut a = SecondTally::direct(start, timeline.clone());
    let mut b = SecondTally::direct(start, timeline.clone());
    for (t, ms) in [(&mut a, 10), (&mut b, 20)] {
        t.written(at(ms), 3);
        t.success_exact(at(ms + 1), 40_000);
    }
    a.success_exact(at(300), 50_000);
    a.error_word(at(400), "ERR");
    b.error_word(at(500), "WRONGTYPE");
    b.written(at(1_100), 3);
    b.success_exact(at(1_200), 60_000);
    b.lost(at(1_300), 0, 1);
    b.lost(at(1_400), 2, 1);
    a.written(at(2_100), 1);
    a.flush();
    b.flush();
    let seconds = handed(&timeline);
    let head = FuzzRecord {
        seed: 7,
        modes: vec!["malformed-commands".into()],
        clients: 2,
        commands_in_table: 230,
        log_dir: Some("/tmp/fuzzlog".into()),
        ..FuzzRecord::default()
    };
    let test = || TestStart {
        name: "fuzz",
        started_at: Some(STARTED.into()),
        heads: fuzz_head(&head),
        ..TestStart::default()
    };
    let doc = journaled("fuzz", test, &seconds);
    assert!(doc.tests.is_empty(), "no test, as a Ctrl-C record: {doc:?}");
    let errors: BTreeMap<String, u64> = [("ERR", 1), ("WRONGTYPE", 1), ("timeout", 1)]
        .into_iter()
        .chain([("disconnected", 1)])
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    let want = FuzzRecord {
        commands_sent: 10,
        seconds: 3.0,
        commands_per_sec: 10.0 / 3.0,
        ok_replies: 4,
        errors_by_kind: errors,
        verdict: "survived".into(),
        ..head.clone()
    };
    assert_eq!(doc.blocks.block::<FuzzRecord>(), Some(want));
    assert_eq!(doc.ended_at, "2026-01-02T03:04:08.000Z");
    assert_eq!(doc.outcome, "killed");
}

#[test]
fn a_fuzz_block_the_head_has_already_is_the_one_kept() {
    let (timeline, start) = exact_timeline();
    let mut a = SecondTally::direct(start, timeline.clone());
    a.written(start, 1);
    a.success_exact(start + Duration::from_millis(5), 1_000);
    a.flush();
    let seconds = handed(&timeline);
    let d = dir("fuzz-head");
    let path = d.join("j.partial");
    let mut j = Journal::create(&path).unwrap();
    let finished = FuzzRecord {
        verdict: "crashed".into(),
        commands_sent: 99,
        ..FuzzRecord::default()
    };
    j.head(&head()).unwrap();
    let test = TestStart {
        name: "fuzz",
        heads: fuzz_head(&FuzzRecord::default()),
        ..TestStart::default()
    };
    j.second(test, 0, &seconds[0]).unwrap();
    // The fuzzer ended: the run's head gains its block (`RunRecord::set_block`).
    let mut ended = head();
    ended.blocks.put(&finished);
    j.head(&ended).unwrap();
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = Document::read(recognise(&text, Some(&path)).unwrap().unwrap()).unwrap();
    assert_eq!(doc.blocks.block::<FuzzRecord>(), Some(finished));
    assert!(doc.tests.is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

/// A `begin` line's heads with the fuzzer's.
fn fuzz_head(head: &FuzzRecord) -> crate::record::block::Blocks<{ crate::record::block::HEAD }> {
    let mut heads = crate::record::block::Blocks::default();
    heads.set(FuzzRecord::KEY, head);
    heads
}
