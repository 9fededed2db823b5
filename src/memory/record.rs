//! A test's `memory` block (`block.rs`, the shape every reader of records shares) made
//! from the server's readings before and after the test.

use super::block::{MemoryFigure, MemoryRecord};
use super::{Settled, Snapshot};

/// The block for a test that wrote `data_type` with `payload` bytes per unit, from the readings
/// before and after it.
pub fn block(
    before: &Snapshot,
    after: &Snapshot,
    settled: Settled,
    data_type: &str,
    payload: u64,
) -> MemoryRecord {
    let keys = after.total_keys() as i64 - before.total_keys() as i64;
    MemoryRecord {
        data_type: data_type.into(),
        keys_added: keys,
        keys_before: before.total_keys(),
        keys_after: after.total_keys(),
        payload_bytes_per_key: payload,
        used_memory: MemoryFigure::of(before.used_memory, after.used_memory, keys, payload),
        used_memory_rss: MemoryFigure::of(
            before.used_memory_rss,
            after.used_memory_rss,
            keys,
            payload,
        ),
        used_memory_dataset: match (before.used_memory_dataset, after.used_memory_dataset) {
            (Some(b), Some(a)) => Some(MemoryFigure::of(b, a, keys, payload)),
            _ => None,
        },
        allocator: after.allocator.clone(),
        server_version: after.version.clone(),
        read: settled.name().into(),
        merged: None,
        by_type: Vec::new(),
        type_sample: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::TypeCount;
    use super::*;

    #[test]
    fn bytes_per_key_and_overhead_come_from_the_deltas() {
        let before = Snapshot {
            used_memory: 1_000_000,
            used_memory_rss: 5_000_000,
            used_memory_dataset: Some(100_000),
            ..Snapshot::default()
        };
        let mut after = Snapshot {
            used_memory: 1_000_000 + 150 * 1000,
            used_memory_rss: 5_000_000 + 200 * 1000,
            used_memory_dataset: Some(100_000 + 120 * 1000),
            allocator: "jemalloc-5.3.0".into(),
            version: "redis 7.0.15".into(),
            ..Snapshot::default()
        };
        after.keys.insert(0, 1000);
        let m = block(&before, &after, Settled::Steady, "string", 116);
        assert_eq!(m.keys_added, 1000);
        assert_eq!(m.used_memory.bytes_per_key, Some(150.0));
        assert_eq!(m.used_memory.overhead_per_key, Some(34.0));
        assert_eq!(m.used_memory_rss.bytes_per_key, Some(200.0));
        assert_eq!(m.used_memory_dataset.unwrap().bytes_per_key, Some(120.0));
        assert_eq!(m.allocator, "jemalloc-5.3.0");
        let none = block(&before, &before, Settled::RehashDone, "string", 116);
        assert_eq!(none.used_memory.bytes_per_key, None);
    }

    #[test]
    fn types_share_the_change_in_proportion_to_their_memory_usage() {
        let before = Snapshot {
            used_memory: 1_000_000,
            ..Snapshot::default()
        };
        let mut after = Snapshot {
            // 600 strings of MEMORY USAGE 100 and 400 hashes of 200, and a tenth more.
            used_memory: 1_000_000 + (600 * 100 + 400 * 200) * 11 / 10,
            ..Snapshot::default()
        };
        after.keys.insert(0, 1000);
        let mut m = block(&before, &after, Settled::RehashDone, "string, hash", 60);
        let count = |t: &str, n, payload, usage| TypeCount {
            data_type: t.into(),
            keys_before: 0,
            keys_after: n,
            payload,
            memory_usage: usage,
        };
        m.split_by_type(
            &[
                count("string", 600, 50, Some(100.0)),
                count("hash", 400, 75, Some(200.0)),
            ],
            "a census".into(),
        );
        let per = |i: usize| m.by_type[i].used_memory.bytes_per_key.unwrap();
        assert!((per(0) - 110.0).abs() < 1e-9 && (per(1) - 220.0).abs() < 1e-9);
        assert!((m.by_type[1].used_memory.overhead_per_key.unwrap() - 145.0).abs() < 1e-9);
        assert_eq!(m.by_type[0].keys_added, 600);
        // Their keys times their figures are the whole change.
        let total = 600.0 * per(0) + 400.0 * per(1);
        assert!((total - (after.used_memory - before.used_memory) as f64).abs() < 1e-6);
        // Without MEMORY USAGE for one type, no type gets a figure (the rest is unknown).
        m.split_by_type(
            &[
                count("string", 600, 50, Some(100.0)),
                count("hash", 400, 75, None),
            ],
            "refused".into(),
        );
        assert!(
            m.by_type
                .iter()
                .all(|t| t.used_memory.bytes_per_key.is_none())
        );
        assert_eq!(m.by_type[1].keys_added, 400);
    }
}
