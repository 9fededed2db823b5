//! The HTML report: one self-contained file of one or more runs, to open offline by
//! double-click or send to a colleague (`respbench report`, and `--html FILE` on a run).
//!
//! Layout: `page` assembles the document, `charts` chooses each test's charts from the runs'
//! series, `svg` draws them. The charts are SVG rendered here rather than a JavaScript chart
//! library: no script to vendor, audit or keep up to date, nothing that can fetch, the same
//! bytes for the same data, and a few kB per chart (see docs/architecture.md, "HTML report").
//! Part of `compare`: it reads runs through `compare::input` and shows `compare::table`'s table.

mod charts;
mod mix;
mod page;
mod split;
mod svg;

use std::ffi::{OsStr, OsString};
use std::path::Path;

use crate::cli::UsageError;
use crate::cli::flag::{Action, Flag, Value, help_block, parse_subcommand};
use crate::compare::cli::{emit, load_inputs};
use crate::compare::input::{self, Input};
use crate::compare::table::{Comparison, Metric};
use crate::record::Document;

/// HTML text escaping for element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page for `inputs` (the first is the base of the comparison table) and their comparison.
pub fn page(inputs: &[Input], cmp: &Comparison) -> String {
    page::page(inputs, cmp)
}

/// `--html FILE` at the end of a run: the report of `records` (one per run; several for runs to
/// overlay) written to `path`. Each run is labelled by its server (`valkey 9.1.2`), else `run`.
/// The records go through the same reader as `respbench report RUN.json`, so both pages agree.
pub fn write_html(records: &[&Document], path: &Path) -> Result<(), String> {
    let mut inputs = Vec::new();
    for doc in records {
        let value =
            serde_json::to_value(doc).map_err(|e| format!("cannot build the HTML report: {e}"))?;
        let run =
            input::from_json(value).map_err(|e| format!("cannot build the HTML report: {e}"))?;
        let label = run.server.clone().unwrap_or_else(|| "run".to_string());
        inputs.extend(input::input_of(label, Vec::new(), vec![run]));
    }
    if inputs.is_empty() {
        return Err("cannot build the HTML report: no run".into());
    }
    input::dedup_labels(&mut inputs);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    std::fs::write(path, page::page(&inputs, &cmp))
        .map_err(|e| format!("cannot write the --html file {}: {e}", path.display()))
}

/// The help text of `respbench report --help`: the description, then the option table's.
pub fn help_text() -> String {
    format!(
        "{HELP_HEAD}{}{HELP_TAIL}",
        help_block(OPTIONS.iter().map(|f| &f.doc), 2, 21)
    )
}

const HELP_HEAD: &str = "\
Usage: respbench report RUN [RUN ...] -o FILE

Writes one self-contained HTML file of one or more runs: opens offline by
double-click, no network requests, data embedded. Per test: throughput,
latency (p50, p99, max) and errors over time, the latency percentile spectrum
(corrected and uncorrected, log axis), server CPU and memory over time; an
overview of rps and p99 per test. With several runs: the compare table (the
first RUN is the base) and the charts overlaid, one colour per run.

Each RUN is a results file (respbench --json records; valkey-benchmark /
redis-benchmark --csv and memtier_benchmark JSON give the tables and what
series they have), or several comma-separated files that are repetitions.

`report` is recognised only as the first argument.

Options:
";

const HELP_TAIL: &str = "
Exit codes: 0 written, 2 usage or input problem.
";

/// `report`'s arguments: the runs (each a list of files), their labels, the output path.
#[derive(Debug, Default)]
pub struct ReportArgs {
    pub sides: Vec<Vec<String>>,
    pub labels: Vec<String>,
    pub output: Option<String>,
}

type F = Flag<ReportArgs>;

/// `report`'s options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["-o", "--output"],
        Value::File("the HTML file to write"),
        "-o, --output FILE",
        "the HTML file to write (required; - for stdout)",
        |a, _, v| {
            a.output = Some(utf8(v)?);
            Ok(())
        },
    ),
    F::value(
        &["--label"],
        Value::Text,
        "--label NAME",
        "name the runs in order (repeat; default: file names)",
        |a, _, v| {
            a.labels.push(utf8(v)?);
            Ok(())
        },
    ),
    F::new(
        &["--help", "-h"],
        Value::None,
        "--help",
        "this help",
        Action::Help,
    ),
];

fn utf8(v: &OsStr) -> Result<String, UsageError> {
    v.to_str()
        .map(str::to_owned)
        .ok_or_else(|| UsageError("an argument is not valid UTF-8".to_string()))
}

/// `respbench report ...`: returns the exit code.
pub fn main(argv: Vec<OsString>) -> u8 {
    match parse(argv) {
        Ok(None) => {
            print!("{}", help_text());
            0
        }
        Ok(Some((sides, labels, output))) => {
            let result = load_inputs(&sides, &labels).and_then(|inputs| {
                let cmp = Comparison::new(&inputs, &Metric::ALL);
                let out = if output == "-" {
                    None
                } else {
                    Some(output.as_str())
                };
                emit(out, &page::page(&inputs, &cmp))
            });
            match result {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("respbench: {e}");
                    2
                }
            }
        }
        Err(e) => {
            eprintln!("respbench: {e}");
            2
        }
    }
}

/// Runs (each a list of files), labels and the output path; `None` for `--help`.
type Request = (Vec<Vec<String>>, Vec<String>, String);

fn parse(argv: Vec<OsString>) -> Result<Option<Request>, String> {
    let mut a = ReportArgs::default();
    let run = |a: &mut ReportArgs, v: OsString| {
        a.sides.push(
            utf8(&v)
                .map_err(|e| e.0)?
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>(),
        );
        Ok(())
    };
    if parse_subcommand(OPTIONS, argv, &mut a, run, "see respbench report --help")? {
        return Ok(None);
    }
    let ReportArgs {
        sides,
        labels,
        output,
    } = a;
    if sides.is_empty() || sides.iter().any(Vec::is_empty) {
        return Err("report needs at least one RUN file; see respbench report --help".into());
    }
    let output = output
        .ok_or("report needs -o FILE (the HTML file to write); see respbench report --help")?;
    if labels.len() > sides.len() {
        return Err(format!("{} --label for {} runs", labels.len(), sides.len()));
    }
    Ok(Some((sides, labels, output)))
}

#[cfg(test)]
mod tests;
