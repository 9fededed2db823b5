//! The test record's `memory` block (`--memory-per-key`, `--fill`): what the test's writes cost
//! the server per key, from `INFO memory` and `INFO keyspace` before and after (the "after" read
//! once the server finished rehashing, and the record says how it was read), with the allocator
//! and version beside the figures, since they decide them (Valkey's builds often use libc malloc,
//! Redis's jemalloc).

use serde::{Deserialize, Serialize};

use crate::memory::{Settled, Snapshot};

/// Memory per key of one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryRecord {
    /// The data type the test wrote (`string`, `hash`, `list`…; `other` when unknown).
    pub data_type: String,
    /// Keys added (every db), from `INFO keyspace` before and after.
    pub keys_added: i64,
    pub keys_before: u64,
    pub keys_after: u64,
    /// Key and value bytes one written unit carries (the command's arguments after its name).
    pub payload_bytes_per_key: u64,
    /// `used_memory` before, after, and its change per key added; the overhead is that figure
    /// less the payload.
    pub used_memory: MemoryFigure,
    pub used_memory_rss: MemoryFigure,
    /// `used_memory_dataset`, where the server gives it.
    pub used_memory_dataset: Option<MemoryFigure>,
    /// `mem_allocator` and the server's name and version, beside the figures they decide.
    pub allocator: String,
    pub server_version: String,
    /// How the "after" figures were read: after rehashing finished, once steady, or anyway.
    pub read: String,
    /// A merged record's block (`respbench merge`): how the shards' readings of the one server
    /// became this one (which shard's "before" and "after" it holds); absent in a shard's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged: Option<String>,
}

/// One memory figure before and after, per key added, and its overhead over the payload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryFigure {
    pub before: u64,
    pub after: u64,
    /// (after − before) ÷ keys added; `None` when no key was added.
    pub bytes_per_key: Option<f64>,
    /// `bytes_per_key` − payload bytes per key.
    pub overhead_per_key: Option<f64>,
}

impl MemoryFigure {
    /// The figure between two readings, per key of the `keys` added (`payload` bytes each).
    pub fn of(before: u64, after: u64, keys: i64, payload: u64) -> Self {
        let per = (keys > 0).then(|| (after as f64 - before as f64) / keys as f64);
        Self {
            before,
            after,
            bytes_per_key: per,
            overhead_per_key: per.map(|p| p - payload as f64),
        }
    }
}

impl MemoryRecord {
    /// The block for a test that wrote `data_type` with `payload` bytes per unit.
    pub fn of(
        before: &Snapshot,
        after: &Snapshot,
        settled: Settled,
        data_type: &str,
        payload: u64,
    ) -> Self {
        let keys = after.total_keys() as i64 - before.total_keys() as i64;
        Self {
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
        }
    }
}

#[cfg(test)]
mod tests {
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
        let m = MemoryRecord::of(&before, &after, Settled::Steady, "string", 116);
        assert_eq!(m.keys_added, 1000);
        assert_eq!(m.used_memory.bytes_per_key, Some(150.0));
        assert_eq!(m.used_memory.overhead_per_key, Some(34.0));
        assert_eq!(m.used_memory_rss.bytes_per_key, Some(200.0));
        assert_eq!(m.used_memory_dataset.unwrap().bytes_per_key, Some(120.0));
        assert_eq!(m.allocator, "jemalloc-5.3.0");
        let none = MemoryRecord::of(&before, &before, Settled::RehashDone, "string", 116);
        assert_eq!(none.used_memory.bytes_per_key, None);
    }
}
