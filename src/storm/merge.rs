//! Merging the `storm` blocks of sharded connection storms: counts, exact stage sums and
//! failures are added, each stage's histogram (and the total's) is added bucket by bucket
//! (`record::hdr::add_encoded`), so the merged percentiles are those of all the shards' connections; connects per
//! second are over the longest shard's span (shards run together).

use std::collections::BTreeMap;

use super::block::{ClientLimitRecord, StageRecord, StormFailure, StormRecord};
use crate::metrics::LatencyHistogram;
use crate::record::document::LatencySummary;
use crate::record::hdr;

/// The merged block of every shard's (by file name, `None`: that shard did not storm): `None`
/// when no shard stormed; an error when only some did.
pub fn merge(shards: &[(&str, Option<&StormRecord>)]) -> Result<Option<StormRecord>, String> {
    let storms: Vec<(&str, &StormRecord)> = shards
        .iter()
        .filter_map(|(name, s)| Some((*name, (*s)?)))
        .collect();
    if storms.is_empty() {
        return Ok(None);
    }
    if storms.len() != shards.len() {
        return Err("some records are connection storms and some are not: merge one kind".into());
    }
    let first = storms[0].1;
    let mut out = StormRecord {
        openers: storms.iter().map(|(_, s)| s.openers).sum(),
        target_rate: storms.iter().map(|(_, s)| s.target_rate).sum(),
        tls_resume: first.tls_resume,
        command: first.command.clone(),
        duration_s: storms.iter().map(|(_, s)| s.duration_s).fold(0.0, f64::max),
        attempted: storms.iter().map(|(_, s)| s.attempted).sum(),
        completed: storms.iter().map(|(_, s)| s.completed).sum(),
        failed: storms.iter().map(|(_, s)| s.failed).sum(),
        interrupted: storms.iter().any(|(_, s)| s.interrupted),
        connections_received: storms.iter().map(|(_, s)| s.connections_received).sum(),
        connected_clients_after: storms
            .iter()
            .filter_map(|(_, s)| s.connected_clients_after)
            .max(),
        server: first.server.clone(),
        ..StormRecord::default()
    };
    out.connects_per_s = if out.duration_s > 0.0 {
        out.completed as f64 / out.duration_s
    } else {
        0.0
    };
    out.total = add_stages("total", storms.iter().map(|(n, s)| (*n, &s.total)))?;
    let mut names: Vec<&str> = Vec::new();
    for (_, s) in &storms {
        for st in &s.stages {
            if !names.contains(&st.name.as_str()) {
                names.push(&st.name);
            }
        }
    }
    for name in names {
        let parts = storms
            .iter()
            .filter_map(|(n, s)| Some((*n, s.stages.iter().find(|st| st.name == name)?)));
        out.stages.push(add_stages(name, parts)?);
    }
    let mut failures: BTreeMap<(String, String), StormFailure> = BTreeMap::new();
    let mut limits: BTreeMap<String, ClientLimitRecord> = BTreeMap::new();
    for (_, s) in &storms {
        for f in &s.failures {
            let e = failures
                .entry((f.stage.clone(), f.kind.clone()))
                .or_insert_with(|| StormFailure {
                    count: 0,
                    ..f.clone()
                });
            e.count += f.count;
        }
        for (kind, n) in &s.errors {
            *out.errors.entry(kind.clone()).or_default() += n;
        }
        for l in &s.client_limits {
            let e = limits
                .entry(l.kind.clone())
                .or_insert_with(|| ClientLimitRecord {
                    failures: 0,
                    ..l.clone()
                });
            e.failures += l.failures;
        }
    }
    out.failures = failures.into_values().collect();
    out.client_limits = limits.into_values().collect();
    Ok(Some(out))
}

/// One stage added over the shards: exact sums added, histograms added bucket by bucket.
fn add_stages<'a>(
    name: &str,
    parts: impl Iterator<Item = (&'a str, &'a StageRecord)>,
) -> Result<StageRecord, String> {
    let mut h = LatencyHistogram::new();
    let mut sum_ns = 0u64;
    for (file, st) in parts {
        sum_ns = sum_ns.saturating_add(st.sum_ns);
        if st.latency_us.count > 0 {
            hdr::add_encoded(&mut h, &st.hdr, &format!("{file}: storm stage {name}"))?;
        }
    }
    Ok(StageRecord {
        name: name.into(),
        sum_ns,
        latency_us: LatencySummary::of(&h),
        hdr: hdr::encode(&h),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(samples: &[u64], failures: u64) -> StormRecord {
        let mut h = LatencyHistogram::new();
        for &s in samples {
            h.record(s);
        }
        let stage = |n: &str| StageRecord {
            name: n.into(),
            sum_ns: samples.iter().sum(),
            latency_us: LatencySummary::of(&h),
            hdr: hdr::encode(&h),
        };
        StormRecord {
            openers: 2,
            duration_s: 1.0,
            attempted: samples.len() as u64 + failures,
            completed: samples.len() as u64,
            failed: failures,
            total: stage("total"),
            stages: vec![stage("connect")],
            failures: vec![StormFailure {
                stage: "command".into(),
                kind: "maxclients".into(),
                side: "server".into(),
                count: failures,
                message: None,
            }],
            ..StormRecord::default()
        }
    }

    #[test]
    fn shards_add_counts_and_histograms_exactly() {
        let a = [1_000, 2_000, 3_000, 50_000];
        let b = [4_000, 5_000, 900_000];
        let (sa, sb) = (shard(&a, 1), shard(&b, 2));
        let merged = merge(&[("a", Some(&sa)), ("b", Some(&sb))])
            .unwrap()
            .unwrap();
        let mut whole = LatencyHistogram::new();
        for s in a.iter().chain(&b) {
            whole.record(*s);
        }
        assert_eq!(merged.completed, 7);
        assert_eq!(merged.attempted, 10);
        assert_eq!(merged.openers, 4);
        assert_eq!(merged.failures[0].count, 3);
        assert_eq!(merged.total.sum_ns, a.iter().chain(&b).sum::<u64>());
        assert_eq!(merged.total.latency_us, LatencySummary::of(&whole));
        assert_eq!(merged.total.hdr, hdr::encode(&whole));
        assert_eq!(merged.stages[0].latency_us, LatencySummary::of(&whole));
        assert_eq!(merged.connects_per_s, 7.0);
        // A storm and a test record do not merge.
        let sa = shard(&a, 0);
        assert!(merge(&[("a", Some(&sa)), ("c", None)]).is_err());
    }
}
