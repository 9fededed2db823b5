//! The rows' figures against the record they come from: each command row is its mix entry's
//! (from the write), and Totals the aggregate of the rows, whatever the test's own totals say.

use super::*;
use crate::metrics::LatencyHistogram;
use crate::record::document::{Histograms, MixBytes, MixUncorrected};
use crate::record::hdr;

const PCTS: &[f64] = &[50.0, 99.0, 99.9];

fn hist(us: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for &v in us {
        h.record(v * 1000);
    }
    h
}

/// A mix entry whose corrected latencies (`corrected_us`) differ from those from the write
/// (`sent_us`), as the first request of a connection's do.
fn entry(name: &str, corrected_us: &[u64], sent_us: &[u64], secs: f64) -> MixRecord {
    let (c, u) = (hist(corrected_us), hist(sent_us));
    MixRecord {
        name: name.into(),
        completed: sent_us.len() as u64,
        throughput_rps: sent_us.len() as f64 / secs,
        latency_us: LatencySummary::of(&c),
        histogram: hdr::encode(&c),
        hits: Some(if name == "GET" { 2 } else { 0 }),
        misses: Some(if name == "GET" {
            sent_us.len() as u64 - 2
        } else {
            0
        }),
        uncorrected: Some(MixUncorrected {
            latency_us: LatencySummary::of(&u),
            histogram: hdr::encode(&u),
        }),
        bytes: Some(MixBytes {
            tx: 40 * sent_us.len() as u64,
            rx: 5 * sent_us.len() as u64,
        }),
        ..MixRecord::default()
    }
}

/// A test of `mix` over `secs`, whose own totals are deliberately something else (the rows,
/// not the test's totals, are what memtier's Totals adds up).
fn test(mix: Vec<MixRecord>, secs: f64) -> TestRecord {
    let other = hist(&[7, 7, 7]);
    let mut t = TestRecord {
        name: "SET:GET".into(),
        outcome: "completed".into(),
        duration_s: secs,
        throughput_rps: 1.0,
        mix,
        ..TestRecord::default()
    };
    t.latency_us.uncorrected = LatencySummary::of(&other);
    t.latency_us.corrected = LatencySummary::of(&other);
    t.histograms = Histograms::of(&other, &other);
    t
}

fn layout(arbitrary: bool) -> Layout<'static> {
    Layout {
        pcts: PCTS,
        sizes: Sizes { key: 10, value: 32 },
        arbitrary,
        cluster: false,
    }
}

fn row<'b>(b: &'b Block, name: &str) -> &'b Row {
    b.rows.iter().find(|r| r.name == name).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Totals against its rows: counts, rates, bytes and hits added; the average weighted by the
/// counts; each percentile within the rows' (a merged histogram's always is).
fn assert_totals_aggregate(b: &Block) {
    let (rows, totals) = b.rows.split_at(b.rows.len() - 1);
    let t = &totals[0];
    assert_eq!(t.name, "Totals");
    assert_eq!(t.count, rows.iter().map(|r| r.count).sum::<u64>());
    assert!(close(t.ops, rows.iter().map(|r| r.ops).sum()), "{b:#?}");
    let kb = |r: &Row| r.kb_tx + r.kb_rx;
    assert!(close(kb(t), rows.iter().map(kb).sum()));
    let hits: f64 = rows.iter().filter_map(|r| r.hits).sum();
    assert!(close(t.hits.unwrap_or(0.0), hits));
    let busy: Vec<&Row> = rows.iter().filter(|r| r.count > 0).collect();
    let weighted: f64 = busy
        .iter()
        .map(|r| r.count as f64 * r.latency.avg_ms.unwrap())
        .sum::<f64>()
        / t.count as f64;
    assert!(close(t.latency.avg_ms.unwrap(), weighted), "{b:#?}");
    for (k, (p, ms)) in t.latency.percentiles.iter().enumerate() {
        let of_rows = busy.iter().map(|r| r.latency.percentiles[k].1);
        let (lo, hi) = of_rows.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        assert!(*ms >= lo && *ms <= hi, "p{p}: {ms} not within {lo}..{hi}");
    }
}

#[test]
fn an_all_set_runs_totals_are_its_sets_row() {
    // The first SET's corrected latency includes the worker's start (2.3 ms): the Sets row
    // used it while Totals used the test's figures from the write — 1.57 ms against 0.047.
    let set = entry("SET", &[2_300, 20, 20, 21, 25], &[40, 20, 20, 21, 25], 0.01);
    let b = block("ALL STATS".into(), &test(vec![set], 0.01), layout(false));
    let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Sets", "Gets", "Waits", "Totals"]);
    let (sets, totals) = (row(&b, "Sets"), row(&b, "Totals"));
    assert_eq!(sets.count, totals.count);
    assert_eq!(sets.ops, totals.ops);
    assert_eq!(sets.latency.avg_ms, totals.latency.avg_ms);
    assert_eq!(sets.latency.percentiles, totals.latency.percentiles);
    assert_eq!(sets.latency.max_ms, totals.latency.max_ms);
    assert_eq!(sets.kb_tx + sets.kb_rx, totals.kb_tx + totals.kb_rx);
    // memtier's meaning: from the write. respbench's corrected figure rides beside it.
    assert!(sets.latency.max_ms < 0.05, "{sets:#?}");
    assert!(sets.corrected.as_ref().unwrap().max_ms > 2.0);
    assert_eq!(sets.corrected, totals.corrected);
    // Bytes as counted: 45 per request, 5 requests over 10 ms.
    assert!(close(sets.kb_tx + sets.kb_rx, 45.0 * 5.0 / 0.01 / 1024.0));
    assert_totals_aggregate(&b);
}

#[test]
fn a_ratio_runs_totals_aggregate_its_rows() {
    let set = entry("SET", &[100, 200], &[90, 190], 0.5);
    let get = entry(
        "GET",
        &[50; 20],
        &[10, 20, 30, 40, 5_000, 6, 7, 8, 9, 10],
        0.5,
    );
    let b = block(
        "ALL STATS".into(),
        &test(vec![set, get], 0.5),
        layout(false),
    );
    assert_totals_aggregate(&b);
    let gets = row(&b, "Gets");
    assert_eq!((gets.hits, gets.misses), (Some(4.0), Some(16.0)));
    assert_eq!(row(&b, "Totals").count, 12);
}

#[test]
fn a_command_run_has_a_row_per_command_and_no_sets_gets_waits() {
    let incr = entry("INCR", &[30; 4], &[30; 4], 1.0);
    let get = entry("GET", &[30; 4], &[20; 4], 1.0);
    let b = block(
        "ALL STATS".into(),
        &test(vec![incr, get], 1.0),
        layout(true),
    );
    let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Incrs", "Gets", "Totals"]);
    assert!(b.arbitrary);
    assert!(b.rows.iter().all(|r| r.hits.is_none()));
    assert_totals_aggregate(&b);
    let text = crate::memtier::text::table(&b, PCTS);
    assert!(!text.contains("Hits/sec"), "{text}");
}

#[test]
fn the_aggregate_of_runs_adds_counts_averages_rates_and_merges_latencies() {
    let runs: Vec<Block> = (1..=3u64)
        .map(|i| {
            let set = entry("SET", &[100 * i; 4], &[100 * i; 4], 0.1 * i as f64);
            let get = entry("GET", &[10 * i; 8], &[10 * i; 8], 0.1 * i as f64);
            let t = test(vec![set, get], 0.1 * i as f64);
            block(format!("RUN #{i} RESULTS"), &t, layout(false))
        })
        .collect();
    let all = aggregates(&runs);
    let titles: Vec<&str> = all.iter().map(|b| b.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "BEST RUN RESULTS",
            "WORST RUN RESULTS",
            "AGGREGATED AVERAGE RESULTS (3 runs)"
        ]
    );
    for b in &all {
        assert_totals_aggregate(b);
    }
    let avg = &all[2];
    let sets = row(avg, "Sets");
    assert_eq!(sets.count, 12, "memtier adds the runs' counts");
    let mean_ops = runs.iter().map(|b| row(b, "Sets").ops).sum::<f64>() / 3.0;
    assert!(close(sets.ops, mean_ops));
    // The merged histogram's: 4 requests each at 100, 200 and 300 µs.
    let avg = sets.latency.avg_ms.unwrap();
    assert!((avg - 0.2).abs() < 0.0002, "{sets:#?}");
    let p99 = sets.latency.percentiles[1].1;
    assert!(
        (0.2995..0.3005).contains(&p99),
        "the slowest run's, not a mean: {p99}"
    );
}

#[test]
fn a_record_of_an_earlier_build_still_gives_a_consistent_table() {
    let mut set = entry("SET", &[100, 200], &[90, 190], 1.0);
    set.uncorrected = None;
    set.bytes = None;
    let b = block("ALL STATS".into(), &test(vec![set], 1.0), layout(false));
    let sets = row(&b, "Sets");
    assert!(
        close(sets.latency.avg_ms.unwrap(), 0.15),
        "the corrected one stands in"
    );
    assert!(sets.kb_tx > 0.0, "estimated from the sizes");
    assert_totals_aggregate(&b);
}
