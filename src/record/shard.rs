//! The record's `shard` block: which part of a sharded benchmark this record holds, where that
//! came from, and when its measured run actually began against the agreed `--start-at`.
//!
//! `respbench merge` reads these blocks to check that its inputs are parts of one benchmark and to
//! align their timelines; the block is absent from records of runs that were neither sharded nor
//! given `--start-at`, so those records keep exactly their earlier shape.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::plan::RunPlan;
use crate::timestamp::{rfc3339, rfc3339_micros};

/// One shard's place and start.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardRecord {
    /// This shard, from 0.
    pub index: u64,
    /// Shards in the whole benchmark.
    pub count: u64,
    /// `flag` (`--shard`), `slurm`, `openmpi`, `kubernetes`, or `none` (not sharded, only
    /// `--start-at`).
    pub source: String,
    /// `-n` of the whole benchmark (this record's `options.requests` is this shard's part).
    pub requests_total: Option<u64>,
    /// `--rps` of the whole benchmark.
    pub rps_total: Option<u64>,
    /// `--start-at` as an instant, if given.
    pub start_at: Option<String>,
    /// When the measured run began: after the `--start-at` wait, before the first test.
    pub started_at: Option<String>,
    /// `started_at - start_at` in seconds (how late this shard began; clock skew between
    /// machines is not in it, see docs/many-machines.md, "Starting together").
    pub start_offset_s: Option<f64>,
}

impl ShardRecord {
    /// The block for `plan`'s run, or `None` when the run is neither sharded nor timed.
    pub fn of(plan: &RunPlan) -> Option<Self> {
        if plan.shard.is_none() && plan.start_at.is_none() {
            return None;
        }
        let (index, count, source) = plan.shard.map_or((0, 1, "none"), |s| {
            (s.shard.index, s.shard.count, s.shard.source.id())
        });
        Some(Self {
            index,
            count,
            source: source.into(),
            requests_total: plan.shard.and_then(|s| s.requests_total),
            rps_total: plan.shard.and_then(|s| s.rps_total),
            start_at: plan.start_at.map(rfc3339),
            started_at: None,
            start_offset_s: None,
        })
    }

    /// Notes the measured run's actual start (`late`: how far after `--start-at`).
    pub fn started(&mut self, at: SystemTime, late: Option<f64>) {
        self.started_at = Some(rfc3339_micros(at));
        self.start_offset_s = late;
    }
}

/// A merged record's row for one of the shard records it merged (`shards[]`): where the shard
/// ran, when it started, what each of its tests did. The place fields are the shard's `shard`
/// block's (`null` when the shard record had none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedShard {
    /// The record's path as given to `respbench merge`.
    pub file: String,
    pub index: Option<u64>,
    pub count: Option<u64>,
    pub source: Option<String>,
    pub start_at: Option<String>,
    pub started_at: Option<String>,
    pub start_offset_s: Option<f64>,
    pub host: String,
    pub outcome: String,
    pub tests: Vec<MergedShardTest>,
}

/// One test of a shard in [`MergedShard`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedShardTest {
    pub name: String,
    pub completed: u64,
    pub failed: u64,
    pub duration_s: f64,
    pub throughput_rps: f64,
    pub started_at: Option<String>,
}

/// A merged record's facts beyond its `shards` rows (`merge`; absent when there is nothing to
/// say): what the merge does not cover, and where its rate is not the sum of the shards' rates.
/// Readers treat a record with missing shards as partial (`compare --fail-if-worse` fails on it).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MergeNote {
    /// Shard indices the merge lacked (`merge --partial`): its counts and rates cover the
    /// shards given only, while `options.requests`/`rps` are the whole benchmark's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<u64>,
    /// Tests whose shards did not run together (see `merge::together`): their `duration_s` is
    /// from the first shard's start to the last one's end, and their `throughput_rps` the
    /// completed requests over it, not the sum of the shards' rates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apart: Vec<String>,
}

impl MergeNote {
    /// Nothing to note: the record is not given the block.
    pub fn is_empty(&self) -> bool {
        self.missing_shards.is_empty() && self.apart.is_empty()
    }
}
