//! The journals of the modes with a block of their own (`modes.rs`): what `recover` rebuilds
//! is the block a Ctrl-C at the last full second would have written, from the seconds the
//! modes' own tallies hand over (`metrics::SecondTally::direct`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;
use crate::fuzz::block::FuzzRecord;
use crate::metrics::{SecondTally, SharedTimeline};
use crate::record::block::Block;
use crate::record::delivery::DeliverySecond;
use crate::storm::block::{StormContext, StormFailure, StormRecord};

/// A fresh directory for one test's journal.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("respbench-modes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const STARTED: &str = "2026-01-02T03:04:05.000006Z";

/// A record's head as a run writes it.
fn head() -> Document {
    Document {
        schema: crate::record::document::SCHEMA.into(),
        outcome: "completed".into(),
        command_line: vec!["respbench".into()],
        ..Document::default()
    }
}

/// A timeline that keeps full-precision seconds (a journal is written), and its start.
fn exact_timeline() -> (SharedTimeline, Instant) {
    let timeline = SharedTimeline::default();
    timeline.lock().unwrap().exact = true;
    (timeline, Instant::now())
}

/// The timeline's seconds as the hand-over gives them (`engine::seconds`: the full-precision
/// part moved out).
fn handed(timeline: &SharedTimeline) -> Vec<Second> {
    let mut t = timeline.lock().unwrap();
    t.seconds
        .iter_mut()
        .map(|s| Second {
            exact: s.exact.take(),
            ..s.clone()
        })
        .collect()
}

/// A journal with a head and `seconds` of a test started by `test`, read back as a record.
fn journaled(name: &str, test: impl Fn() -> TestStart<'static>, seconds: &[Second]) -> Document {
    let d = dir(name);
    let path = d.join("run.json.partial");
    let mut j = Journal::create(&path).unwrap();
    j.head(&head()).unwrap();
    for (i, s) in seconds.iter().enumerate() {
        j.second(test(), i, s).unwrap();
    }
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = Document::read(recognise(&text, Some(&path)).unwrap().unwrap()).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
    doc
}

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

#[test]
fn a_killed_storm_keeps_its_stages_and_its_failures_by_stage_and_kind() {
    let (timeline, start) = exact_timeline();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut opener = SecondTally::direct(start, timeline.clone());
    // Connections that finished: connect, hello_auth and the command each took their part.
    let mut stage_hists = [LatencyHistogram::new(), LatencyHistogram::new()];
    let mut total = LatencyHistogram::new();
    for k in 0..50u64 {
        let (connect, hello) = (30_000 + 1_000 * k, 20_000 + 7 * k);
        opener.success_exact(at(20 * k), connect + hello);
        // By `storm::Stage` order: connect is 0, hello_auth 3.
        opener.stage(0, connect);
        opener.stage(3, hello);
        stage_hists[0].record(connect);
        stage_hists[1].record(hello);
        total.record(connect + hello);
    }
    opener.error_word(at(1_500), "connect refused");
    opener.error_word(at(1_600), "connect refused");
    opener.error_word(at(1_700), "hello_auth maxclients");
    opener.flush();
    let seconds = handed(&timeline);
    let ctx = StormContext {
        openers: 1,
        target_rate: Some(50),
        command: Some("ping".into()),
        ..StormContext::default()
    };
    let test = || {
        let mut heads = crate::record::block::Blocks::default();
        heads.set(StormRecord::KEY, &ctx);
        TestStart {
            name: crate::storm::run::TEST_NAME,
            started_at: Some(STARTED.into()),
            heads,
            ..TestStart::default()
        }
    };
    let doc = journaled("storm", test, &seconds);
    let storm: StormRecord = doc.blocks.block().expect("the storm block");
    assert_eq!(
        (storm.completed, storm.failed, storm.attempted),
        (50, 3, 53)
    );
    let names: Vec<&str> = storm.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["connect", "hello_auth"]);
    for (got, want) in storm.stages.iter().zip(&stage_hists) {
        assert_eq!(
            got.latency_us,
            crate::record::document::LatencySummary::of(want)
        );
    }
    assert_eq!(
        storm.total.latency_us,
        crate::record::document::LatencySummary::of(&total),
        "the totals at full precision"
    );
    let failure = |stage: &str, kind: &str, side: &str, count| StormFailure {
        stage: stage.into(),
        kind: kind.into(),
        side: side.into(),
        count,
        message: None,
    };
    assert_eq!(
        storm.failures,
        [
            failure("connect", "refused", "server", 2),
            failure("hello_auth", "maxclients", "server", 1)
        ]
    );
}

#[test]
fn a_killed_delivery_test_has_its_block_and_counts_owed_deliveries_as_issued() {
    // Two seconds of a --pubsub 2 test: 100 and 50 messages published (two deliveries each),
    // 180 and 110 delivered with their latencies at full precision, one duplicate.
    let mut seconds = Vec::new();
    let mut latency = LatencyHistogram::new();
    for (i, (published, delivered)) in [(100u64, 180u64), (50, 110)].into_iter().enumerate() {
        let mut s = Second {
            published,
            owed: 2 * published,
            completed: delivered,
            ..Second::default()
        };
        let mut part = crate::metrics::ExactSecond::default();
        for k in 0..delivered {
            let ns = 100_000 + 37 * k + 1_000_000 * i as u64;
            s.latency.record(ns);
            s.slots[(k % 10) as usize].completed += 1;
            s.slots[(k % 10) as usize].waited_ns = ns;
            part.corrected.record_bounded(ns);
            latency.record(ns);
        }
        part.uncorrected.clone_from(&part.corrected);
        s.exact = Some(Box::new(part));
        s.pushes = Some(crate::metrics::PushCounts {
            messages: delivered + u64::from(i == 1),
            ..Default::default()
        });
        seconds.push(s);
    }
    let shape = DeliveryRecord {
        mode: "pubsub".into(),
        receivers: 2,
        publishers: 1,
        channels: Some(1),
        subscribe: Some("channel".into()),
        messages: 3_000,
        rate: Some(100),
        payload_bytes: 64,
        ..DeliveryRecord::default()
    };
    let test = || TestStart {
        name: "PUBLISH -> SUBSCRIBE",
        started_at: Some(STARTED.into()),
        commands: vec!["publish".into()],
        delivery: Some(shape.clone()),
        ..TestStart::default()
    };
    let doc = journaled("delivery", test, &seconds);
    let t = &doc.tests[0];
    let d = t.delivery.as_ref().expect("the delivery block");
    assert_eq!(
        (d.published, d.expected, d.delivered, d.lost),
        (150, 300, 290, 10)
    );
    assert_eq!(
        (d.mode.as_str(), d.receivers, d.rate),
        ("pubsub", 2, Some(100))
    );
    assert_eq!(
        d.seconds[1],
        DeliverySecond {
            second: 1,
            published: 50,
            delivered: 110,
            max_latency_us: Some(
                seconds[1].slots.iter().map(|s| s.waited_ns).max().unwrap() as f64 / 1000.0
            ),
            ..DeliverySecond::default()
        }
    );
    let q = &t.requests;
    assert_eq!(
        (q.issued, q.completed, q.unanswered, q.reconnect_refusals),
        (Some(300), 290, 10, Some(0)),
        "as a finished delivery test counts them"
    );
    assert_eq!(t.pushes.messages, 291);
    assert_eq!(t.target_rps, None);
    let summary = crate::record::document::LatencySummary::of(&latency);
    assert_eq!(
        t.latency_us.corrected, summary,
        "exact, not 2 significant figures"
    );
    assert_eq!(t.latency_us.uncorrected, summary);
}

#[test]
fn a_replays_commands_named_as_it_learns_them_keep_their_figures() {
    let d = dir("names");
    let path = d.join("j.partial");
    let mut j = Journal::create(&path).unwrap();
    j.head(&head()).unwrap();
    let mut names: Vec<String> = vec!["SET".into()];
    for i in 0..3usize {
        if i == 1 {
            names.push("GET".into());
        }
        let mut s = Second {
            completed: 10 * names.len() as u64,
            ..Second::default()
        };
        let mut part = crate::metrics::ExactSecond::default();
        for _ in &names {
            let mut c = crate::metrics::ExactCommand {
                completed: 10,
                ..Default::default()
            };
            for k in 0..10 {
                c.latency.record(1_000 + k);
                part.corrected.record(1_000 + k);
                part.uncorrected.record(900 + k);
                s.latency.record(1_000 + k);
            }
            part.commands.push(c);
        }
        s.exact = Some(Box::new(part));
        let test = TestStart {
            name: "REPLAY",
            commands: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
            mix: names.clone(),
            ..TestStart::default()
        };
        j.second(test, i, &s).unwrap();
    }
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches("\"GET\"").count(),
        1,
        "the names once they grew, not every second: {text}"
    );
    let doc = Document::read(recognise(&text, Some(&path)).unwrap().unwrap()).unwrap();
    let t = &doc.tests[0];
    let mix: Vec<(&str, u64)> = t
        .mix
        .iter()
        .map(|m| (m.name.as_str(), m.completed))
        .collect();
    assert_eq!(mix, [("SET", 30), ("GET", 20)]);
    assert_eq!(t.commands, ["set", "get"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A `begin` line's heads with the fuzzer's.
fn fuzz_head(head: &FuzzRecord) -> crate::record::block::Blocks<{ crate::record::block::HEAD }> {
    let mut heads = crate::record::block::Blocks::default();
    heads.set(FuzzRecord::KEY, head);
    heads
}
