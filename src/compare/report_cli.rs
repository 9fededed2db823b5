//! `respbench report`: its options, help text, and the run from files to the HTML page and exit
//! code. The page itself is `compare::html`'s (the same page as `compare --format html` and a
//! run's `--html`); `src/report` is the run's text report, not this command.

use std::ffi::OsString;

use super::files::{emit, load_inputs};
use super::html;
use super::table::{Comparison, Metric};

/// The help text of `respbench report --help`.
pub const HELP: &str = "\
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
  -o, --output FILE  the HTML file to write (required; - for stdout)
  --label NAME       name the runs in order (repeat; default: file names)
  --help             this help

Exit codes: 0 written, 2 usage or input problem.
";

/// `respbench report ...`: returns the exit code.
pub fn main(argv: Vec<OsString>) -> u8 {
    match parse(argv) {
        Ok(None) => {
            print!("{HELP}");
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
                emit(out, &html::page(&inputs, &cmp))
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
type ReportArgs = (Vec<Vec<String>>, Vec<String>, String);

fn parse(argv: Vec<OsString>) -> Result<Option<ReportArgs>, String> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(argv);
    let (mut sides, mut labels, mut output) = (Vec::new(), Vec::new(), None);
    let utf8 = |v: OsString| {
        v.into_string()
            .map_err(|_| "an argument is not valid UTF-8".to_string())
    };
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Long("help") | Short('h') => return Ok(None),
            Long("output") | Short('o') => {
                output = Some(utf8(p.value().map_err(|e| e.to_string())?)?)
            }
            Long("label") => labels.push(utf8(p.value().map_err(|e| e.to_string())?)?),
            Value(v) => sides.push(
                utf8(v)?
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>(),
            ),
            other => {
                return Err(format!(
                    "{}; see respbench report --help",
                    other.unexpected()
                ));
            }
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn report_arguments() {
        let a = |v: &[&str]| super::parse(v.iter().map(OsString::from).collect());
        let (sides, _, out) = a(&["a.json,b.json", "c.json", "-o", "x.html"])
            .unwrap()
            .unwrap();
        assert_eq!(sides.len(), 2);
        assert_eq!(out, "x.html");
        assert!(a(&["a.json"]).unwrap_err().contains("needs -o FILE"));
        assert!(
            a(&["-o", "x.html"])
                .unwrap_err()
                .contains("at least one RUN")
        );
        assert_eq!(a(&["--help"]).unwrap(), None);
    }
}
