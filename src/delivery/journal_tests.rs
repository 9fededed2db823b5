//! A killed delivery test's journal: what `recover` rebuilds is the block a Ctrl-C at the last
//! full second would have written, and the test's counts as a finished delivery test's (the
//! helpers: `record/journal/mode_tests.rs`).

use super::block::{DeliveryRecord, DeliverySecond};
use crate::metrics::{LatencyHistogram, Second};
use crate::record::block::Blocks;
use crate::record::journal::TestStart;
use crate::record::journal::mode_tests::{STARTED, journaled};

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
    let test = || {
        let mut heads = Blocks::default();
        heads.put(&shape);
        TestStart {
            name: "PUBLISH -> SUBSCRIBE",
            started_at: Some(STARTED.into()),
            commands: vec!["publish".into()],
            heads,
            ..TestStart::default()
        }
    };
    let doc = journaled("delivery", test, &seconds);
    let t = &doc.tests[0];
    let d: DeliveryRecord = t.blocks.block().expect("the delivery block");
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
