//! A shard's counts checked against each other before they are added: a corrupt or edited
//! record must be refused, not summed into figures that describe nothing.
//!
//! Per test: the rate and duration are finite and not negative; replies (completed + failed)
//! are not more than the requests issued (`completed + failed + unanswered = issued` in every
//! record a run writes); the completed requests are not more than the latency histogram counts
//! (each completion is one sample; `test_record` checks that once the histogram is decoded);
//! no part of the test (a cluster node, a mix command, a second of the timeline) counts more
//! completions or failures than the test. Sums across shards are checked too ([`total`]): a
//! count near 2^64 must not wrap; the part counts that nothing bounds (reconnects per second,
//! 100 ms slots, joined outages) are added saturating.

use crate::record::document::{Document, TestRecord};

/// `Ok` when the counts of record `doc` (read from file `name`) agree with each other; else one
/// line naming the record, test and field.
pub fn sane(name: &str, doc: &Document) -> Result<(), String> {
    for (n, t) in doc.tests.iter().enumerate() {
        let at = |field: &str| format!("{name}: tests[{n}] ({}) {field}", t.name);
        for (field, v) in [
            ("throughput_rps", t.throughput_rps),
            ("duration_s", t.duration_s),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{} is {v} (a corrupt record)", at(field)));
            }
        }
        let r = &t.requests;
        parts_within(t)
            .map_err(|e| format!("{}: tests[{n}] ({}): {e} (a corrupt record)", name, t.name))?;
        let replies = r.completed.checked_add(r.failed);
        if let Some(issued) = r.issued
            && replies.is_none_or(|n| n > issued)
        {
            return Err(format!(
                "{}: completed {} + failed {} is more than the {issued} issued (a corrupt record)",
                at("requests"),
                r.completed,
                r.failed
            ));
        }
    }
    Ok(())
}

/// Each part of a test (a cluster node, a mix command, a second of the timeline) counts no more
/// than the whole test: so adding the shards' parts cannot overflow where their totals do not.
fn parts_within(t: &TestRecord) -> Result<(), String> {
    let r = &t.requests;
    let over = |part: String, field: &str, v: u64, total: u64| {
        (v > total).then(|| format!("{part}.{field} {v} is more than the test's {total}"))
    };
    let checks = t
        .nodes
        .iter()
        .enumerate()
        .map(|(n, x)| over(format!("nodes[{n}]"), "completed", x.completed, r.completed))
        .chain(t.mix.iter().enumerate().flat_map(|(n, m)| {
            [
                over(format!("mix[{n}]"), "completed", m.completed, r.completed),
                over(format!("mix[{n}]"), "failed", m.failed, r.failed),
            ]
        }))
        .chain(t.timeline.iter().enumerate().flat_map(|(n, row)| {
            let lost = row.lost.values().copied().max().unwrap_or(0);
            [
                over(
                    format!("timeline[{n}]"),
                    "completed",
                    row.completed,
                    r.completed,
                ),
                over(format!("timeline[{n}]"), "failed", row.failed, r.failed),
                over(format!("timeline[{n}]"), "lost", lost, r.failed),
            ]
        }));
    match checks.flatten().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The sum of `values`, or the error naming `what` when it does not fit in 64 bits.
pub fn total(mut values: impl Iterator<Item = u64>, what: &str) -> Result<u64, String> {
    values.try_fold(0u64, u64::checked_add).ok_or_else(|| {
        format!("{what}: the shards' sum does not fit in 64 bits (a corrupt record)")
    })
}

/// The histogram of `completed` requests holds `samples`: fewer samples than completions means
/// the count was made up or the histogram cut.
pub fn histogram_holds(completed: u64, samples: u64, what: &str) -> Result<(), String> {
    if completed > samples {
        return Err(format!(
            "{what}: requests.completed is {completed} but its histogram holds {samples} \
             (a corrupt record)"
        ));
    }
    Ok(())
}
