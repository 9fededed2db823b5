//! A command mix's per-command figures (`--ratio`): each command of the mix gets its own line in
//! `-q` and `--csv` (titled `<test> <command>`, before the test's total line, as memtier lists
//! Sets, Gets, then Totals) and its own throughput and latency table in the full report.
//!
//! Each command is shown through a [`TestResult`] view of its own figures, so the `-q` and CSV
//! writers lay it out exactly as a whole test.

use crate::metrics::{CommandResult, TestResult};

/// A test-shaped view of one command of `r`'s mix: its own counts and histograms over the
/// test's measured time, titled `<test> <command>`.
pub(super) fn view(r: &TestResult, c: &CommandResult) -> TestResult {
    let mut v = TestResult::empty(&format!("{} {}", r.title, c.name), None, r.outcome);
    v.completed = c.completed;
    v.elapsed = r.elapsed;
    v.latency = c.latency.clone();
    v.issued = c.completed + c.errors;
    v
}
