//! A merged test's `memory` block (`--fill`, `--memory-per-key` run in shards).
//!
//! The rule, and why: shards of one benchmark write one target (`check` refuses different
//! ones), so each shard's "before" and "after" are readings of the *same* server taken at
//! different moments, each one seeing the other shards' keys arrive. Adding them would count the
//! server N times; keeping one shard's would charge its keys with the others' memory. The merged
//! block is instead the one fill all shards made together: "before" is the earliest reading (the
//! shard that saw the fewest keys before it wrote), "after" the latest (the shard that saw the
//! most keys after it wrote, which had waited for the rehash too), and bytes per key are
//! recomputed between those two readings. Each reading is kept whole (its memory figures with its
//! key count), never a figure of one shard beside a count of another. The block says which
//! shards' readings it holds in `merged`.

use super::block::{MemoryFigure, MemoryRecord, TypeCount};

/// The merged block of the shards' (one per shard, by file name, in input order; `None`: that
/// shard's test has none); `None` when no shard measured memory, an error when only some did.
pub(super) fn merge(
    shards: &[(&str, Option<&MemoryRecord>)],
) -> Result<Option<MemoryRecord>, String> {
    let blocks: Vec<(usize, &MemoryRecord)> = shards
        .iter()
        .enumerate()
        .filter_map(|(i, (_, m))| Some((i, (*m)?)))
        .collect();
    if blocks.is_empty() {
        return Ok(None);
    }
    if blocks.len() != shards.len() {
        return Err("some shards measured memory per key and some did not".into());
    }
    // The earliest reading first (fewest keys), the latest last (most keys); ties: input order.
    let (b, before) = blocks
        .iter()
        .min_by_key(|(i, m)| (m.keys_before, *i))
        .copied()
        .unwrap_or(blocks[0]);
    let (a, after) = blocks
        .iter()
        .max_by_key(|(i, m)| (m.keys_after, std::cmp::Reverse(*i)))
        .copied()
        .unwrap_or(blocks[0]);
    let keys = after.keys_after as i64 - before.keys_before as i64;
    let payload = after.payload_bytes_per_key;
    let figure = |f: fn(&MemoryRecord) -> &MemoryFigure| {
        MemoryFigure::of(f(before).before, f(after).after, keys, payload)
    };
    let mut merged = MemoryRecord {
        data_type: after.data_type.clone(),
        keys_added: keys,
        keys_before: before.keys_before,
        keys_after: after.keys_after,
        payload_bytes_per_key: payload,
        used_memory: figure(|m| &m.used_memory),
        used_memory_rss: figure(|m| &m.used_memory_rss),
        used_memory_dataset: match (&before.used_memory_dataset, &after.used_memory_dataset) {
            (Some(x), Some(y)) => Some(MemoryFigure::of(x.before, y.after, keys, payload)),
            _ => None,
        },
        allocator: after.allocator.clone(),
        server_version: after.server_version.clone(),
        read: after.read.clone(),
        merged: Some(format!(
            "one server written by {} shards: before as read by input {} (fewest keys), after \
             as read by input {} (most keys); not a sum",
            shards.len(),
            b + 1,
            a + 1
        )),
        by_type: Vec::new(),
        type_sample: None,
    };
    // Several types: each type's keys between the same two readings, split again.
    if !after.by_type.is_empty() {
        let counts: Vec<TypeCount> = after
            .by_type
            .iter()
            .map(|t| TypeCount {
                data_type: t.data_type.clone(),
                keys_before: before
                    .by_type
                    .iter()
                    .find(|x| x.data_type == t.data_type)
                    .map_or(0, |x| x.keys_before),
                keys_after: t.keys_after,
                payload: t.payload_bytes_per_key,
                memory_usage: t.memory_usage,
            })
            .collect();
        let how = format!(
            "keys per type before as sampled by input {}, after by input {}",
            b + 1,
            a + 1
        );
        merged.split_by_type(&counts, how);
    }
    Ok(Some(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shards' tests' blocks merged as `merge::test_record` hands them over (the error named
    /// by `what`).
    fn merge_of(
        shards: &[&Option<MemoryRecord>],
        what: &dyn Fn(&str) -> String,
    ) -> Result<Option<MemoryRecord>, String> {
        let parts: Vec<(&str, Option<&MemoryRecord>)> =
            shards.iter().map(|m| ("", m.as_ref())).collect();
        merge(&parts).map_err(|e| format!("{}: {e}", what("memory")))
    }

    fn shard(
        keys_before: u64,
        keys_after: u64,
        mem_before: u64,
        mem_after: u64,
    ) -> Option<MemoryRecord> {
        let fig = |b, a| MemoryFigure {
            before: b,
            after: a,
            ..MemoryFigure::default()
        };
        Some(MemoryRecord {
            data_type: "string".into(),
            keys_added: keys_after as i64 - keys_before as i64,
            keys_before,
            keys_after,
            payload_bytes_per_key: 100,
            used_memory: fig(mem_before, mem_after),
            used_memory_rss: fig(mem_before * 2, mem_after * 2),
            used_memory_dataset: None,
            read: "rehash done".into(),
            ..MemoryRecord::default()
        })
    }

    #[test]
    fn shards_of_one_server_merge_as_one_fill_from_the_earliest_to_the_latest_reading() {
        // Two shards of 1000 keys each on one server: shard 2 started second (saw 300 of shard
        // 1's keys) and ended last (saw all 2000).
        let (s1, s2) = (
            shard(0, 1_700, 1_000_000, 1_280_000),
            shard(300, 2_000, 1_050_000, 1_330_000),
        );
        let what = |f: &str| f.to_string();
        let m = merge_of(&[&s1, &s2], &what).unwrap().unwrap();
        assert_eq!(
            (m.keys_before, m.keys_after, m.keys_added),
            (0, 2_000, 2_000)
        );
        assert_eq!(
            (m.used_memory.before, m.used_memory.after),
            (1_000_000, 1_330_000)
        );
        assert_eq!(m.used_memory.bytes_per_key, Some(165.0));
        assert_eq!(m.used_memory.overhead_per_key, Some(65.0));
        assert_eq!(m.used_memory_rss.bytes_per_key, Some(330.0));
        let note = m.merged.unwrap();
        assert!(
            note.contains("2 shards") && note.contains("input 1") && note.contains("input 2"),
            "{note}"
        );
        // Not a sum of the shards' deltas (which would count 3400 keys).
        assert_ne!(m.keys_added, s1.unwrap().keys_added + 1_700);
    }

    #[test]
    fn a_fill_of_several_types_is_split_again_between_the_merged_readings() {
        use super::super::block::TypeMemory;
        let typed = |t: Option<MemoryRecord>, before: [u64; 2], after: [u64; 2]| {
            let mut t = t;
            let m = t.as_mut().unwrap();
            m.by_type = ["string", "hash"]
                .iter()
                .zip(before.iter().zip(after))
                .map(|(kind, (&b, a))| TypeMemory {
                    data_type: (*kind).into(),
                    keys_before: b,
                    keys_after: a,
                    payload_bytes_per_key: 100,
                    memory_usage: Some(if *kind == "string" { 100.0 } else { 200.0 }),
                    ..TypeMemory::default()
                })
                .collect();
            t
        };
        let s1 = typed(shard(0, 1_700, 1_000_000, 1_280_000), [0, 0], [850, 850]);
        let s2 = typed(
            shard(300, 2_000, 1_050_000, 1_330_000),
            [150, 150],
            [1000, 1000],
        );
        let m = merge_of(&[&s1, &s2], &|f: &str| f.to_string())
            .unwrap()
            .unwrap();
        let keys: Vec<i64> = m.by_type.iter().map(|t| t.keys_added).collect();
        assert_eq!(
            keys,
            [1000, 1000],
            "from input 1's before to input 2's after"
        );
        // 330000 bytes shared 1:2 by MEMORY USAGE: 110 and 220 bytes a key.
        let per: Vec<f64> = m
            .by_type
            .iter()
            .map(|t| t.used_memory.bytes_per_key.unwrap())
            .collect();
        assert!(
            (per[0] - 110.0).abs() < 1e-9 && (per[1] - 220.0).abs() < 1e-9,
            "{per:?}"
        );
        assert!(m.type_sample.unwrap().contains("input 1"));
    }

    #[test]
    fn memory_on_some_shards_only_is_refused_and_none_is_none() {
        let what = |f: &str| format!("tests[0].{f}");
        let with = shard(0, 10, 1, 2);
        let without = None;
        let e = merge_of(&[&with, &without], &what).unwrap_err();
        assert!(e.starts_with("tests[0].memory: some shards"), "{e}");
        assert_eq!(merge_of(&[&without, &without], &what).unwrap(), None);
    }
}
