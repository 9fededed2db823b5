//! `respbench report`: its options, help text, and the run from files to the HTML page and exit
//! code. The page itself is `compare::html`'s (the same page as `compare --format html` and a
//! run's `--html`); `src/report` is the run's text report, not this command.

use std::ffi::OsString;

use crate::cli::flag::{Flag, Value, help_block, parse_subcommand, utf8};

use crate::cli::check_output;
use crate::compare::files::load_inputs;
use crate::compare::html;
use crate::compare::table::{Comparison, Metric};
use crate::record::atomic::emit;

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
double-click, no network requests, data embedded. First a summary per test
(rps, p50/p99/p99.9, error replies, lost requests, verdict, outages) and what
ran. Per test: throughput, latency (p50, p99, max), error replies and lost
requests over time with outages shaded, the latency percentile spectrum
(corrected and uncorrected, log axis), server CPU and memory over time. With
several runs: the comparison's headline and forest plot, the compare table
(the first RUN is the base) and the charts overlaid, one colour per run.

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
            a.output = Some(utf8(v, "an argument")?);
            Ok(())
        },
    ),
    F::value(
        &["--label"],
        Value::Text,
        "--label NAME",
        "name the runs in order (repeat; default: file names)",
        |a, _, v| {
            a.labels.push(utf8(v, "an argument")?);
            Ok(())
        },
    ),
    F::help(),
];

/// `respbench report ...`: returns the exit code.
pub fn main(argv: Vec<OsString>) -> u8 {
    match parse(argv) {
        Ok(None) => {
            print!("{}", help_text());
            0
        }
        Ok(Some((sides, labels, output))) => {
            // One A/B record (`respbench ab --json`): its own page.
            if let [side] = sides.as_slice()
                && let [file] = side.as_slice()
                && let Some(doc) = crate::compare::ab::read(file)
            {
                let page = html::ab_page(&doc).unwrap_or_default();
                return match emit(Some(&output), &page) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("respbench: {e}");
                        2
                    }
                };
            }
            let result = load_inputs(&sides, &labels).and_then(|inputs| {
                let cmp = Comparison::new(&inputs, &Metric::ALL);
                emit(Some(&output), &html::page(&inputs, &cmp))
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
            utf8(&v, "an argument")
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
    check_output(Some(&output), &sides)?;
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

    #[test]
    fn help_is_the_golden_text() {
        assert_eq!(super::help_text(), include_str!("help.golden"));
    }
}
