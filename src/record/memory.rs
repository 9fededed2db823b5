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
    /// The data type the test wrote (`string`, `hash`, `list`…; `other` when unknown); the
    /// types joined with `, ` for a test that wrote several (each in `by_type`).
    pub data_type: String,
    /// Keys added (every db), from `INFO keyspace` before and after.
    pub keys_added: i64,
    pub keys_before: u64,
    pub keys_after: u64,
    /// Key and value bytes a write carries (its arguments after the command's name; values
    /// at the mean of `--data-size-range`/`--data-size-list`, rounded; the mean over the
    /// unit's writing commands when it has several).
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
    /// A test that wrote several data types: each one's keys and share of the figures (absent
    /// for a test of one type, whose figures are the block's own, and in older records).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_type: Vec<TypeMemory>,
    /// How `by_type`'s keys were counted: the samples of the keyspace taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_sample: Option<String>,
}

/// One data type's part of a test that wrote several. Its keys are estimated from a sample of
/// the keyspace (`memory::types`); the figure's change is shared among the types in proportion
/// to their keys' `MEMORY USAGE` (the mean of the sampled ones, times the keys added), so the
/// types' figures times their keys add up to the test's change exactly. In proportion, not as
/// `MEMORY USAGE` plus an even rest, because what `MEMORY USAGE` does not see (the allocator's
/// rounding of each allocation, the key table's share) grows with a key's allocations: filled
/// alone, a 100-byte hash costs Redis 7.0 34 bytes more than its `MEMORY USAGE`, a string 18.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TypeMemory {
    pub data_type: String,
    /// Keys of this type before and after the test (estimated), and added.
    pub keys_before: u64,
    pub keys_after: u64,
    pub keys_added: i64,
    /// Key and value bytes one write of this type carries.
    pub payload_bytes_per_key: u64,
    /// Mean `MEMORY USAGE` of the sampled keys of this type after the test; `None` when the
    /// server refused it (then no figure of this type has a value).
    pub memory_usage: Option<f64>,
    pub used_memory: PerKey,
    pub used_memory_rss: PerKey,
    pub used_memory_dataset: Option<PerKey>,
}

/// A figure's share per key of one type, and its overhead over that type's payload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PerKey {
    pub bytes_per_key: Option<f64>,
    pub overhead_per_key: Option<f64>,
}

/// What one type's part starts from: its keys before and after, its payload, its keys' mean
/// `MEMORY USAGE` (from the run's samples, or a merge's blocks).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeCount {
    pub data_type: String,
    pub keys_before: u64,
    pub keys_after: u64,
    pub payload: u64,
    pub memory_usage: Option<f64>,
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
            by_type: Vec::new(),
            type_sample: None,
        }
    }

    /// Splits the block's figures among the types in `counts` (see [`TypeMemory`]); `how`
    /// says how their keys were counted.
    pub fn split_by_type(&mut self, counts: &[TypeCount], how: String) {
        let added = |c: &TypeCount| c.keys_after as i64 - c.keys_before as i64;
        // Every type's MEMORY USAGE over its keys added, where all are known.
        let usage: Option<f64> = counts
            .iter()
            .map(|c| c.memory_usage.map(|u| u * added(c).max(0) as f64))
            .sum();
        let share = |f: &MemoryFigure, c: &TypeCount| -> PerKey {
            let bytes = match (usage, c.memory_usage) {
                (Some(all), Some(u)) if all > 0.0 && added(c) > 0 => {
                    Some(u * (f.after as f64 - f.before as f64) / all)
                }
                _ => None,
            };
            PerKey {
                bytes_per_key: bytes,
                overhead_per_key: bytes.map(|b| b - c.payload as f64),
            }
        };
        self.by_type = counts
            .iter()
            .map(|c| TypeMemory {
                data_type: c.data_type.clone(),
                keys_before: c.keys_before,
                keys_after: c.keys_after,
                keys_added: added(c),
                payload_bytes_per_key: c.payload,
                memory_usage: c.memory_usage,
                used_memory: share(&self.used_memory, c),
                used_memory_rss: share(&self.used_memory_rss, c),
                used_memory_dataset: self.used_memory_dataset.as_ref().map(|d| share(d, c)),
            })
            .collect();
        self.type_sample = Some(how);
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
        let mut m = MemoryRecord::of(&before, &after, Settled::RehashDone, "string, hash", 60);
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
