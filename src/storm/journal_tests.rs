//! A killed storm's journal: what `recover` rebuilds is the block a Ctrl-C at the last full
//! second would have written (the helpers: `record/journal/mode_tests.rs`).

use std::time::Duration;

use super::block::{StormContext, StormFailure, StormRecord};
use crate::metrics::{LatencyHistogram, SecondTally};
use crate::record::block::Block;
use crate::record::journal::TestStart;
use crate::record::journal::mode_tests::{STARTED, exact_timeline, handed, journaled};

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
