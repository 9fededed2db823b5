//! The record's `options.workload.memtier`: `respbench memtier`'s data options as they ran
//! (`workload::shape::MemtierShape`), so a record says whether its SETs were `SETEX`,
//! `SETRANGE` or plain and its GETs `MGET`s without anyone parsing `command_line`. Absent
//! outside memtier mode and in records of earlier builds. Also the record's `verify` block:
//! what `--data-verify` found reading the keys back.
//!
//! In the record's own types (not a mode's block) because what it records is the engine's
//! request shapes and the read-back (`run/verify.rs`, the registry's verify-only mode); memtier's
//! line is their one user.

use serde::{Deserialize, Serialize};

use crate::engine::ScanWalk;
use crate::workload::shape::MemtierShape;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemtierDataRecord {
    /// `-R`: values were slices of a random pool.
    pub random_data: bool,
    /// `--data-size-pattern`: `R` (sizes drawn) or `S` (sizes spread over the key range).
    pub data_size_pattern: String,
    /// `--data-offset`: SETRANGE/GETRANGE at this offset (0: SET/GET).
    pub data_offset: u64,
    /// `--expiry-range` in seconds (`SETEX`); `null` without it.
    pub expiry_range: Option<ExpiryRangeRecord>,
    /// `--multi-key-get`: keys per `MGET` at most (0: plain GETs).
    pub multi_key_get: u32,
    /// `--scan-incremental-iteration`: the `SCAN` followed each reply's cursor; `null` without
    /// it (and in records of earlier builds).
    pub scan_incremental: Option<ScanIncrementalRecord>,
    /// `--data-import`: the SETs wrote the import file's items; `null` without it (and in
    /// records of earlier builds).
    pub data_import: Option<DataImportRecord>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataImportRecord {
    /// The file as given.
    pub file: String,
    /// Its items (without `--generate-keys`, the key range is `0..items`).
    pub items: u64,
    /// `--generate-keys`: keys from the key range, key `k` taking item `k - key_minimum`'s
    /// value.
    pub generate_keys: bool,
    /// `--no-expiry`: the items' expiry times were not sent.
    pub no_expiry: bool,
}

/// `--data-verify`: the keys read back after the test (or by `--verify-only`), each GET's value
/// compared with the one the import file gives that key. memtier's "keys failed" is
/// `missing + mismatched`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyRecord {
    /// Keys read back.
    pub keys: u64,
    /// Keys holding the expected value.
    pub verified: u64,
    /// Keys the server does not hold (a nil reply).
    pub missing: u64,
    /// Keys holding another value, or whose read failed (an error reply).
    pub mismatched: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScanIncrementalRecord {
    /// `--scan-incremental-max-iterations`: continuations per cycle at most (0: until the
    /// cursor returns 0).
    pub max_iterations: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpiryRangeRecord {
    pub min: u64,
    pub max: u64,
}

impl MemtierDataRecord {
    pub fn of(shape: &MemtierShape, scan: Option<ScanWalk>) -> Self {
        Self {
            random_data: !shape.random_pool.is_empty(),
            data_size_pattern: if shape.size_by_key.is_some() {
                "S"
            } else {
                "R"
            }
            .into(),
            data_offset: shape.data_offset,
            expiry_range: shape
                .expiry
                .map(|(min, max)| ExpiryRangeRecord { min, max }),
            multi_key_get: shape.multi_key_get,
            scan_incremental: scan.map(|w| ScanIncrementalRecord {
                max_iterations: w.max_continuations.unwrap_or(0),
            }),
            data_import: shape.import.as_ref().map(|i| DataImportRecord {
                file: i.file.name().to_string(),
                items: i.file.len(),
                generate_keys: i.generated_from.is_some(),
                no_expiry: i.no_expiry,
            }),
        }
    }
}
