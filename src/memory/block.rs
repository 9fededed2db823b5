//! The test record's `memory` block (`--memory-per-key`, `--fill`): what the test's writes cost
//! the server per key, from `INFO memory` and `INFO keyspace` before and after (the "after" read
//! once the server finished rehashing, and the record says how it was read), with the allocator
//! and version beside the figures, since they decide them (Valkey's builds often use libc malloc,
//! Redis's jemalloc). The block's shape, read by every reader of records; `memory::record` makes
//! it from the server's readings.

use serde::{Deserialize, Serialize};

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
