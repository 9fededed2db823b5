//! The HTML report: one self-contained file of one or more runs, to open offline by
//! double-click or send to a colleague (`respbench report`, whose command line is
//! `report_cli`, and `--html FILE` on a run).
//!
//! Layout: `page` assembles the document in the skeleton of `crate::html::page`, `charts`
//! chooses each test's charts from the runs' series, `crate::html::svg` draws them.
//! Part of `compare`: it reads runs through `compare::input` and shows `compare::table`'s table.

mod ab;
mod blocks;
mod charts;
mod costs;
mod events;
mod find_max;
mod forest;
mod mix;
mod page;
mod split;
mod summary;
mod verdict;

use std::path::Path;

use crate::compare::input::{self, Input};
use crate::compare::table::{Comparison, Metric};
use crate::record::Document;

/// The page for `inputs` (the first is the base of the comparison table) and their comparison.
pub fn page(inputs: &[Input], cmp: &Comparison) -> String {
    page::page(inputs, cmp)
}

/// `--html FILE` at the end of a run: the report of `records` (one per run; several for runs to
/// overlay) written to `path`. Each run is labelled by its server (`valkey 9.1.2`), else `run`.
/// The records go through the same reader as `respbench report RUN.json`, so both pages agree,
/// from their typed form: a JSON tree of a record of thousands of tests would cost several times
/// its size. No second redaction is needed: a run builds its record redacted (the `--json` file
/// is these same values), and the reader redacts again only what comes from a file.
pub fn write_html(records: &[&Document], path: &Path) -> Result<(), String> {
    let mut inputs = Vec::new();
    for doc in records {
        let run = input::from_document((*doc).clone())
            .map_err(|e| format!("cannot build the HTML report: {e}"))?;
        let label = run.server.clone().unwrap_or_else(|| "run".to_string());
        inputs.extend(input::input_of(label, Vec::new(), vec![run]));
    }
    if inputs.is_empty() {
        return Err("cannot build the HTML report: no run".into());
    }
    input::dedup_labels(&mut inputs);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    // Temporary file, sync, rename: an earlier report at `path` stays until the new one is whole.
    crate::record::atomic::write(path, page::page(&inputs, &cmp).as_bytes())
        .map_err(|e| format!("cannot write the --html file {}: {e}", path.display()))
}

/// An `ab` record's page (`html/ab.rs`); `None` for any other record.
pub fn ab_page(doc: &Document) -> Option<String> {
    ab::page(doc)
}

/// Writes an `ab` record's page to `path`.
pub fn write_ab(doc: &Document, path: &Path) -> Result<(), String> {
    let page = ab::page(doc).ok_or("cannot build the HTML report: not an ab record")?;
    crate::record::atomic::write(path, page.as_bytes())
        .map_err(|e| format!("cannot write the --html file {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
