//! One test across shards: counts summed, histograms added (summaries recomputed from the sum),
//! cluster nodes matched by address, timelines aligned by wall-clock second. (Production code:
//! "test" is a benchmark test, `record::TestRecord`.)
//!
//! Per-second rows hold summaries, not histograms, so a merged second's `p50_us`/`p99_us`/`max_us`
//! are the **largest over the shards** for that second (an upper bound; the whole test's figures
//! are exact); the client delay's rule is `delay`'s. The per-second failure counters add up;
//! slots and outages: see `failures`. Server figures describe the server, which all shards
//! watched at once: the merge keeps the first shard's (lowest index), rather than adding the
//! same CPU N times.

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::metrics::LatencyHistogram;
use crate::record::block::{self, Blocks, Tree};
use crate::record::document::{
    ENCODING, Histograms, LatencyPair, LatencySummary, MixBytes, MixRecord, MixUncorrected,
    NodeRecord, Pushes, Requests, TestRecord, VerdictRecord,
};
use crate::record::hdr;
use crate::record::timeline::TimelineRow;
use crate::timestamp::parse_time;
use crate::verdict::Verdict;

use super::check::Input;
use super::counts;
use super::delay;
use super::failures;
use super::hist::add_encoded;
use super::together::{self, Spans};

/// The cluster redirect kinds a merged test counts (all four, once any shard counted some).
const REDIRECTS: [&str; 4] = ["MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"];

/// Test `t` of every input (already checked to be the same test) as one test, and how the
/// shards' runs of it lay in time (`Apart`: its rate is over the union of their spans; refused
/// with `strict`).
pub fn merge_test(inputs: &[Input], t: usize, strict: bool) -> Result<(TestRecord, Spans), String> {
    let tests: Vec<&TestRecord> = inputs.iter().map(|i| &i.doc.tests[t]).collect();
    let first = tests[0];
    let (corrected, uncorrected) = histograms(inputs, &tests, t)?;
    let starts: Vec<Option<SystemTime>> = tests
        .iter()
        .map(|t| t.started_at.as_deref().and_then(parse_time))
        .collect();
    let what = |field: &str| format!("tests[{t}] ({}) {field}", first.name);
    let requests = requests(&tests, &format!("tests[{t}] ({})", first.name))?;
    let longest = tests.iter().map(|t| t.duration_s).fold(0.0, f64::max);
    let spans = together::spans(&tests, &starts);
    let (duration_s, throughput_rps) = match spans {
        Spans::Together => (longest, tests.iter().map(|t| t.throughput_rps).sum()),
        Spans::Apart { union_s } if strict => {
            return Err(format!(
                "tests[{t}] ({}): the shards did not run together (their longest run is {longest:.2} s, \
                 from the first start to the last end is {union_s:.2} s); --strict refuses to add their rates",
                first.name
            ));
        }
        Spans::Apart { union_s } => (union_s, requests.completed as f64 / union_s),
    };
    let mut nodes = nodes(inputs, &tests, t)?;
    failures::node_outages(&mut nodes, &tests, &starts);
    let threads: Vec<f64> = tests
        .iter()
        .filter_map(|t| t.client_threads_cpu_pct.as_deref())
        .flatten()
        .copied()
        .collect();
    let merged = TestRecord {
        started_at: tests
            .iter()
            .filter_map(|t| t.started_at.as_deref())
            .min_by_key(|s| parse_time(s))
            .map(str::to_string)
            .or_else(|| first.started_at.clone()),
        outcome: worst(
            tests.iter().map(|t| t.outcome.as_str()),
            &["completed", "interrupted", "aborted"],
        ),
        requests,
        pushes: pushes(&tests, &what)?,
        duration_s,
        throughput_rps,
        target_rps: sum_or_none(tests.iter().map(|t| t.target_rps)),
        latency_us: LatencyPair {
            corrected: LatencySummary::of(&corrected),
            uncorrected: LatencySummary::of(&uncorrected),
        },
        histograms: Histograms::of(&corrected, &uncorrected),
        nodes,
        mix: if first.mix.is_empty() {
            Vec::new()
        } else {
            mix(inputs, &tests, t)?
        },
        timeline: timeline(&tests, &starts),
        outages: failures::outages(&tests, &starts),
        client_threads_cpu_pct: (!threads.is_empty()).then_some(threads),
        verdict: verdict(&tests),
        // Each shard's machine and latency split are its own (shards may run on different
        // machines, and a split's parts are not additive): they stay in the shards' records.
        machine: None,
        client_threads_runqueue_pct: None,
        // The client delay adds up by its samples (`delay`).
        client_delay_us: delay::whole(tests.iter().map(|t| t.client_delay_us.as_ref())),
        latency_split: None,
        // Each mode's block by its kind (memory per key's: one server read by every shard, the
        // earliest reading to the latest, `memory/merge.rs`; a delivery test's: counts added,
        // seconds aligned, `delivery/merge.rs`).
        blocks: blocks(inputs, &tests, &what)?,
        // Every field is named (no `..first.clone()`): a field added to `TestRecord` later does
        // not compile here until someone decides how shards combine it, rather than silently
        // being the first shard's. These are the same on every shard (checked by `check`), or
        // describe the one server all shards watched (the first shard's, as the doc above says).
        name: first.name.clone(),
        repetition: first.repetition,
        commands: first.commands.clone(),
        server: first.server.clone(),
        // memtier's per-connection seconds stay in each shard's record: shards number their
        // threads and connections from 0 alike, so a merged list would name them twice.
        client_seconds: None,
    };
    Ok((merged, spans))
}

/// The shards' histograms of test `t` added up (corrected, uncorrected), each checked to hold the
/// shard's completed requests.
fn histograms(
    inputs: &[Input],
    tests: &[&TestRecord],
    t: usize,
) -> Result<(LatencyHistogram, LatencyHistogram), String> {
    let mut corrected = LatencyHistogram::new();
    let mut uncorrected = LatencyHistogram::new();
    for (i, test) in inputs.iter().zip(tests) {
        let what = |k: &str| format!("{}: tests[{t}].histograms.{k}", i.name);
        let h = &test.histograms;
        if h.encoding != ENCODING {
            return Err(format!(
                "{}: encoding {:?} is not {ENCODING}",
                what("encoding"),
                h.encoding
            ));
        }
        let before = corrected.len();
        add_encoded(&mut corrected, &h.corrected, &what("corrected"))?;
        let at = format!("{}: tests[{t}] ({})", i.name, test.name);
        counts::histogram_holds(test.requests.completed, corrected.len() - before, &at)?;
        add_encoded(&mut uncorrected, &h.uncorrected, &what("uncorrected"))?;
    }
    Ok((corrected, uncorrected))
}

/// The shards' pushes added up.
fn pushes(tests: &[&TestRecord], what: &dyn Fn(&str) -> String) -> Result<Pushes, String> {
    Ok(Pushes {
        invalidations: counts::total(
            tests.iter().map(|t| t.pushes.invalidations),
            &what("pushes.invalidations"),
        )?,
        messages: counts::total(
            tests.iter().map(|t| t.pushes.messages),
            &what("pushes.messages"),
        )?,
        other: counts::total(tests.iter().map(|t| t.pushes.other), &what("pushes.other"))?,
    })
}

/// The worst of the values given, by `order` (later is worse; an empty value, from a record
/// without the field, is left out; `order[0]` when none is left).
pub fn worst<'a>(values: impl Iterator<Item = &'a str>, order: &[&str]) -> String {
    values
        .filter(|s| !s.is_empty())
        .max_by_key(|s| order.iter().position(|o| o == s).unwrap_or(0))
        .unwrap_or(order[0])
        .to_string()
}

/// The sum, or `None` when every value is `None`.
pub fn sum_or_none(vs: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    vs.flatten().reduce(|a, b| a + b)
}

/// Counts summed (refused if a sum overflows: `what` names the test); error kinds summed by
/// name; redirects summed where recorded.
fn requests(tests: &[&TestRecord], what: &str) -> Result<Requests, String> {
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for t in tests {
        for (k, v) in &t.requests.errors {
            let n = errors.entry(k.clone()).or_default();
            *n = n.checked_add(*v).ok_or_else(|| {
                format!("{what} requests.errors.{k}: the shards' sum does not fit in 64 bits (a corrupt record)")
            })?;
        }
    }
    let redirects = tests
        .iter()
        .any(|t| t.requests.redirects.is_some())
        .then(|| {
            REDIRECTS
                .iter()
                .map(|k| {
                    let n = tests
                        .iter()
                        .filter_map(|t| t.requests.redirects.as_ref()?.get(*k))
                        .sum();
                    ((*k).to_string(), n)
                })
                .collect()
        });
    let sum = |f: fn(&Requests) -> u64, field: &str| {
        counts::total(
            tests.iter().map(|t| f(&t.requests)),
            &format!("{what} requests.{field}"),
        )
    };
    // Only when every shard counted them.
    let issued = match tests
        .iter()
        .map(|t| t.requests.issued)
        .collect::<Option<Vec<u64>>>()
    {
        Some(v) => Some(counts::total(
            v.into_iter(),
            &format!("{what} requests.issued"),
        )?),
        None => None,
    };
    Ok(Requests {
        issued,
        completed: sum(|r| r.completed, "completed")?,
        failed: sum(|r| r.failed, "failed")?,
        errors,
        redirects,
        unanswered: sum(|r| r.unanswered, "unanswered")?,
        reconnect_attempts: sum(|r| r.reconnect_attempts, "reconnect_attempts")?,
        reconnects: sum(|r| r.reconnects, "reconnects")?,
        // Only when every shard counted them.
        reconnect_refusals: match tests
            .iter()
            .map(|t| t.requests.reconnect_refusals)
            .collect::<Option<Vec<u64>>>()
        {
            Some(v) => Some(counts::total(
                v.into_iter(),
                &format!("{what} requests.reconnect_refusals"),
            )?),
            None => None,
        },
    })
}

/// Cluster nodes by address: completed summed, histograms added, summaries recomputed (`lost`
/// and `outage`: [`failures::node_outages`]).
fn nodes(inputs: &[Input], tests: &[&TestRecord], t: usize) -> Result<Vec<NodeRecord>, String> {
    let mut by_addr: Vec<(NodeRecord, LatencyHistogram)> = Vec::new();
    for (i, test) in inputs.iter().zip(tests) {
        for (n, node) in test.nodes.iter().enumerate() {
            let pos = match by_addr.iter().position(|(a, _)| a.address == node.address) {
                Some(p) => p,
                None => {
                    let first = NodeRecord {
                        address: node.address.clone(),
                        role: node.role.clone(),
                        ..NodeRecord::default()
                    };
                    by_addr.push((first, LatencyHistogram::new()));
                    by_addr.len() - 1
                }
            };
            let (into, h) = &mut by_addr[pos];
            into.completed += node.completed;
            let what = format!("{}: tests[{t}].nodes[{n}].histogram", i.name);
            add_encoded(h, &node.histogram, &what)?;
        }
    }
    Ok(by_addr
        .into_iter()
        .map(|(node, h)| NodeRecord {
            latency_us: LatencySummary::of(&h),
            histogram: hdr::encode(&h),
            ..node
        })
        .collect())
}

/// A command mix's commands by name: counts and rates summed, histograms added, summaries
/// recomputed (the shards ran the same mix, so the names and their order agree).
/// The uncorrected histogram and the bytes are kept only when every shard has them (records of
/// earlier builds lack them: a part would pass for the whole).
fn mix(inputs: &[Input], tests: &[&TestRecord], t: usize) -> Result<Vec<MixRecord>, String> {
    type Sums = (MixRecord, LatencyHistogram, Option<LatencyHistogram>);
    let mut by_name: Vec<Sums> = Vec::new();
    for (i, test) in inputs.iter().zip(tests) {
        for (n, m) in test.mix.iter().enumerate() {
            let pos = match by_name.iter().position(|(e, ..)| e.name == m.name) {
                Some(p) => p,
                None => {
                    let first = MixRecord {
                        name: m.name.clone(),
                        bytes: Some(MixBytes::default()),
                        ..MixRecord::default()
                    };
                    let u = Some(LatencyHistogram::new());
                    by_name.push((first, LatencyHistogram::new(), u));
                    by_name.len() - 1
                }
            };
            let (e, h, u) = &mut by_name[pos];
            e.completed += m.completed;
            e.failed += m.failed;
            e.throughput_rps += m.throughput_rps;
            e.hits = add_opt(e.hits, m.hits);
            e.misses = add_opt(e.misses, m.misses);
            e.bytes = e.bytes.zip(m.bytes).map(|(a, b)| MixBytes {
                tx: a.tx.saturating_add(b.tx),
                rx: a.rx.saturating_add(b.rx),
            });
            let what = format!("{}: tests[{t}].mix[{n}].histogram", i.name);
            add_encoded(h, &m.histogram, &what)?;
            match (u.as_mut(), &m.uncorrected) {
                (Some(u), Some(mu)) if !mu.histogram.is_empty() => {
                    let what = format!("{}: tests[{t}].mix[{n}].uncorrected.histogram", i.name);
                    add_encoded(u, &mu.histogram, &what)?;
                }
                _ => *u = None,
            }
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(m, h, u)| MixRecord {
            latency_us: LatencySummary::of(&h),
            histogram: hdr::encode(&h),
            uncorrected: u.map(|u| MixUncorrected {
                latency_us: LatencySummary::of(&u),
                histogram: hdr::encode(&u),
            }),
            ..m
        })
        .collect())
}

/// A count the shards may lack (records of earlier builds): summed where any has it.
fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

/// Rows aligned by wall-clock second: a shard whose test began `d` seconds after the earliest
/// shard's has its row `s` added to merged row `s + round(d)`.
fn timeline(tests: &[&TestRecord], starts: &[Option<SystemTime>]) -> Vec<TimelineRow> {
    let base = starts.iter().flatten().min().copied();
    // Each merged row, and whether a quiet shard spoiled its slots (`failures::add_slots`).
    let mut rows: BTreeMap<usize, (TimelineRow, bool)> = BTreeMap::new();
    for (test, start) in tests.iter().zip(starts) {
        // Rows move by whole seconds; slots only line up when the start offset is whole to the
        // tenth: otherwise a slot would land up to half a second off, so the rows it touches
        // keep none (exact or absent, never misplaced).
        let (shift, aligned) = match (base, start) {
            (Some(b), Some(s)) => s.duration_since(b).map_or((0, true), |d| {
                let tenths = (d.as_secs_f64() * 10.0).round() as u64;
                (d.as_secs_f64().round() as usize, tenths.is_multiple_of(10))
            }),
            _ => (0, true),
        };
        for row in &test.timeline {
            let second = row.second + shift;
            let (m, unplaced) = rows.entry(second).or_insert_with(|| {
                let m = TimelineRow {
                    second,
                    // The first shard's server figures (see the module comment).
                    server: row.server.clone(),
                    ..TimelineRow::default()
                };
                (m, false)
            });
            m.completed += row.completed;
            m.failed += row.failed;
            // Not bounded by the test's own counts (`counts` checks completions): saturating.
            m.reconnect_attempts = m.reconnect_attempts.saturating_add(row.reconnect_attempts);
            m.reconnects = m.reconnects.saturating_add(row.reconnects);
            m.invalidations = m.invalidations.saturating_add(row.invalidations);
            for (k, n) in &row.lost {
                *m.lost.entry(k.clone()).or_default() += n;
            }
            for (k, n) in &row.redirects {
                let sum = m.redirects.entry(k.clone()).or_default();
                *sum = sum.saturating_add(*n);
            }
            if aligned {
                failures::add_slots(m, unplaced, row);
            } else {
                *unplaced = true;
            }
            m.p50_us = m.p50_us.max(row.p50_us);
            m.p99_us = m.p99_us.max(row.p99_us);
            m.max_us = m.max_us.max(row.max_us);
            delay::add_row(&mut m.client_delay_us, row.client_delay_us.as_ref());
        }
    }
    rows.into_values()
        .map(|(mut m, unplaced)| {
            if unplaced {
                m.slots = None;
            }
            m
        })
        .collect()
}

/// The shards' verdict when they agree; `unknown` when they do not, with the busiest figures.
fn verdict(tests: &[&TestRecord]) -> VerdictRecord {
    let mut v = tests[0].verdict.clone();
    if tests.iter().any(|t| t.verdict.kind != v.kind) {
        v.kind = Verdict::Unknown;
        v.reason = "the shards' verdicts differ: see each shard's record".into();
    }
    let max = |f: fn(&VerdictRecord) -> Option<f64>| {
        tests.iter().filter_map(|t| f(&t.verdict)).reduce(f64::max)
    };
    v.server_cpu_pct = max(|v| v.server_cpu_pct);
    v.client_max_thread_cpu_pct = max(|v| v.client_max_thread_cpu_pct);
    v
}

/// The modes' blocks of test `tests` (one per shard, in input order), each added up by its
/// kind (`record::block::Block::merge`); an error names the test and the block (`what`).
fn blocks(
    inputs: &[Input],
    tests: &[&TestRecord],
    what: &dyn Fn(&str) -> String,
) -> Result<Blocks<{ block::TEST }>, String> {
    let mut out = Blocks::default();
    for kind in block::kinds().iter().filter(|k| k.at == block::TEST) {
        let parts: Vec<(&str, Option<&Tree>)> = inputs
            .iter()
            .zip(tests)
            .map(|(i, t)| (i.name.as_str(), t.blocks.tree(kind.key)))
            .collect();
        let merged = kind
            .merge(&parts)
            .map_err(|e| format!("{}: {e}", what(kind.key)))?;
        if let Some(tree) = merged {
            out.set_tree(kind.key, tree);
        }
    }
    Ok(out)
}
