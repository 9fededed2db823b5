//! `respbench memtier`'s data and key options (`cli::MemtierData`) as the mix's request shapes
//! (`workload::shape::MemtierShape`): the key range `--data-size-pattern S` spreads sizes over,
//! the random pool `-R` takes values from (made here, once, from the run's seed).
//!
//! Part of the plan because the engine runs what it builds (the workers write the shapes);
//! memtier's line is its one user.

use std::sync::Arc;

use crate::cli::{Args, DataSizes};
use crate::engine::{LoadSpec, ScanWalk};
use crate::workload::shape::{Imported, MemtierShape, POOL_SLACK, SizeByKey, random_pool};

/// The shapes of a memtier-mode run (`import`: `--data-import`'s file as the requests use it);
/// `None` outside memtier mode.
pub(super) fn shape(
    args: &Args,
    load: &LoadSpec,
    data_size: usize,
    import: Option<Imported>,
) -> Option<Arc<MemtierShape>> {
    let d = args.workload.memtier.as_ref()?;
    let size_by_key = match (&args.workload.data_sizes, d.size_pattern_s) {
        (Some(DataSizes::Range(min, max)), true) => Some(SizeByKey {
            min: *min,
            max: *max,
            key_min: load.key_min,
            key_max: load.keyspace.unwrap_or(1).saturating_sub(1),
        }),
        _ => None,
    };
    Some(Arc::new(MemtierShape {
        key_prefix: super::workloads::key_prefix(args).to_vec(),
        expiry: d.expiry,
        data_offset: d.data_offset,
        random_pool: if d.random_data {
            random_pool(data_size + POOL_SLACK, load.seed)
        } else {
            Vec::new()
        },
        size_by_key,
        multi_key_get: d.multi_key_get,
        gets_per_cycle: args.workload.ratio.map_or(0, |r| u64::from(r.1)),
        data_size,
        import,
    }))
}

/// `--scan-incremental-iteration` as the engine's walk (`memtier/cli/scan.rs` checked the line:
/// one `--command` of the form `SCAN <cursor> …`, `-P 1`, no cluster mode).
pub(super) fn scan_walk(args: &Args) -> Option<ScanWalk> {
    let d = args.workload.memtier.as_ref()?;
    d.scan_incremental.then_some(ScanWalk {
        max_continuations: (d.scan_max_iterations > 0).then_some(d.scan_max_iterations),
    })
}
