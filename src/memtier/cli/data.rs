//! memtier's data options (`-R`, `--data-size-pattern`, `--data-offset`, `--expiry-range`,
//! `--multi-key-get`) and `--command-stats-breakdown` as table entries: each sets the run's `MemtierData`, which `plan` turns
//! into the mix's request shapes (`workload::shape`). Kept beside `table.rs` so that table
//! only names them.

use std::ffi::OsStr;

use super::{MemtierState, UsageError};
use crate::cli::MemtierData;
use crate::cli::flag::{Flag, Value};
use crate::cli::value::{invalid_value, text, whole};

type M = Flag<MemtierState>;

fn data(st: &mut MemtierState) -> &mut MemtierData {
    st.main.args.workload.memtier.get_or_insert_default()
}

pub(super) const RANDOM_DATA: M = M::switch(
    &["-R", "--random-data"],
    "-R, --random-data",
    "Random value bytes (a different slice of a random pool\nfor each value)",
    |st, _, _| {
        data(st).random_data = true;
        Ok(())
    },
)
.example(&["-R"]);

pub(super) const DATA_OFFSET: M = M::value(
    &["--data-offset"],
    Value::Text,
    "--data-offset=OFFSET",
    "Values written with SETRANGE at OFFSET and read with\nGETRANGE (the value is OFFSET bytes longer)",
    |st, n, v| {
        data(st).data_offset = whole(n, v, 0, 512 * 1024 * 1024)?;
        Ok(())
    },
)
.example(&["--data-offset=100"]);

pub(super) const SIZE_PATTERN: M = M::value(
    &["--data-size-pattern"],
    Value::Choice(&["R", "S"]),
    "--data-size-pattern=R|S",
    "With --data-size-range: R draws each size, S spreads\nthe sizes over the key range (small keys, small values)",
    |st, n, v| {
        data(st).size_pattern_s = match v.as_encoded_bytes() {
            b"R" => false,
            b"S" => true,
            _ => return Err(invalid_value(n, v, "R or S")),
        };
        Ok(())
    },
)
.example(&["--data-size-range=32-64", "--data-size-pattern=S"]);

pub(super) const EXPIRY_RANGE: M = M::value(
    &["--expiry-range"],
    Value::Text,
    "--expiry-range=RANGE",
    "SETs become SETEX with seconds drawn from MIN-MAX",
    |st, n, v| {
        data(st).expiry = Some(expiry_range(n, v)?);
        Ok(())
    },
)
.example(&["--expiry-range=100-200"]);

pub(super) const MULTI_KEY_GET: M = M::value(
    &["--multi-key-get"],
    Value::Text,
    "--multi-key-get=NUM",
    "GETs become MGETs of up to NUM keys (the ratio's GET\ncount is made of their keys)",
    |st, n, v| {
        // At most 1000 keys: a batch buffer is reserved for its longest request.
        data(st).multi_key_get = whole(n, v, 0, 1000)?;
        Ok(())
    },
)
.example(&["--multi-key-get=10"]);

pub(super) const STATS_BREAKDOWN: M = M::value(
    &["--command-stats-breakdown"],
    Value::Choice(&["command", "line"]),
    "--command-stats-breakdown=command|line",
    "Rows of --command results: command (default) one per\ncommand name, line one per --command",
    |st, n, v| {
        st.opts.command_stats_by_line = match v.as_encoded_bytes() {
            b"command" => false,
            b"line" => true,
            _ => return Err(invalid_value(n, v, "command or line")),
        };
        Ok(())
    },
)
.example(&["--command-stats-breakdown=line"]);

/// `MIN-MAX` seconds, `0 <= MIN <= MAX`, MAX above 0.
fn expiry_range(name: &str, v: &OsStr) -> Result<(u64, u64), UsageError> {
    let bad = || invalid_value(name, v, "MIN-MAX seconds, MIN <= MAX, e.g. 100-200");
    let s = text(name, v)?;
    let (lo, hi) = s.split_once('-').ok_or_else(bad)?;
    let lo: u64 = whole(name, OsStr::new(lo), 0, 1 << 40).map_err(|_| bad())?;
    let hi: u64 = whole(name, OsStr::new(hi), 1, 1 << 40).map_err(|_| bad())?;
    if lo > hi {
        return Err(bad());
    }
    Ok((lo, hi))
}
