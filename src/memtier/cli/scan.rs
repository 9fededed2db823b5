//! memtier's `--scan-incremental-iteration` and `--scan-incremental-max-iterations`: table
//! entries that set the run's `MemtierData`, and the check that the line can follow a cursor
//! (one `--command` of the form `SCAN <cursor> …`, `--pipeline 1`, no cluster mode). The engine
//! follows the cursor (`engine/scan_walk.rs`); kept beside `table.rs` so that table only names
//! them.

use std::ffi::OsStr;

use super::{MemtierState, UsageError};
use crate::cli::flag::Flag;
use crate::cli::value::whole;
use crate::cli::{Args, MemtierData};

type M = Flag<MemtierState>;

fn data(st: &mut MemtierState) -> &mut MemtierData {
    st.main.args.workload.memtier.get_or_insert_default()
}

pub(super) const ITERATION: M = M::switch(
    &["--scan-incremental-iteration"],
    "--scan-incremental-iteration",
    "With --command=\"SCAN 0 ...\" (and -P 1): each SCAN sends\nthe cursor the last reply returned, from 0 again when\nit returns 0",
    |st, _, _| {
        data(st).scan_incremental = true;
        Ok(())
    },
)
.example(&[
    "--command=SCAN 0 COUNT 100",
    "--pipeline=1",
    "--scan-incremental-iteration",
]);

pub(super) const MAX_ITERATIONS: M = M::value(
    &["--scan-incremental-max-iterations"],
    crate::cli::flag::Value::Text,
    "--scan-incremental-max-iterations=NUMBER",
    "Continuation SCANs per cycle at most, then SCAN 0 again\n(0, the default: until the cursor returns 0)",
    |st, n, v: &OsStr| {
        data(st).scan_max_iterations = whole(n, v, 0, u64::MAX)?;
        Ok(())
    },
)
.example(&[
    "--command=SCAN 0",
    "--pipeline=1",
    "--scan-incremental-iteration",
    "--scan-incremental-max-iterations=10",
]);

/// The line's checks when cursor following is on; a max without it is a usage error too (it
/// would silently do nothing).
pub(super) fn check(a: &Args) -> Result<(), UsageError> {
    let Some(d) = a.workload.memtier.as_ref() else {
        return Ok(());
    };
    if !d.scan_incremental {
        if d.scan_max_iterations > 0 {
            return Err(UsageError(
                "--scan-incremental-max-iterations needs --scan-incremental-iteration".into(),
            ));
        }
        return Ok(());
    }
    let fail = |why: &str| Err(UsageError(format!("--scan-incremental-iteration {why}")));
    if a.pipeline > 1 {
        return fail(
            "needs --pipeline 1: each SCAN waits for the previous reply's cursor, and a \
             pipelined batch is written before its replies arrive",
        );
    }
    if a.cluster {
        return fail("is not supported with --cluster-mode (a cursor belongs to one node)");
    }
    match a.workload.commands.as_slice() {
        [one] if is_scan(&one.args) => Ok(()),
        _ => {
            fail("needs exactly one --command of the form \"SCAN 0 [MATCH p] [COUNT n] [TYPE t]\"")
        }
    }
}

/// `SCAN <digits> …` with no placeholder (the request is rewritten whole per cursor).
fn is_scan(args: &[Vec<u8>]) -> bool {
    matches!(args, [name, cursor, ..]
        if name.eq_ignore_ascii_case(b"SCAN")
            && !cursor.is_empty()
            && cursor.iter().all(u8::is_ascii_digit))
        && !args.iter().any(|a| a.windows(2).any(|w| w == b"__"))
}
