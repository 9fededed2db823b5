//! `respbench compare`: its option table, help text, and the run from files to output and exit code.
//!
//! Exit codes: 0 compared; 1 `--fail-if-worse` tripped (the offending rows go to stderr); 2 a
//! usage mistake or an input that cannot be read (one line naming the file); 3 `--fail-if-worse`
//! cannot tell (nothing tripped it, but a checked row's side was machine-busy or client-bound
//! in most repetitions: those rows go to stderr).

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::Path;

use crate::cli::UsageError;
use crate::cli::flag::{Flag, Value, help_block, parse_subcommand, utf8};

use crate::cli::check_output;
use crate::record::atomic::emit;

use super::files::load_inputs;
use super::input::Input;
use super::render;
use super::table::{Comparison, Metric};

/// The help text of `respbench compare --help`: the description, then the option table's.
pub fn help_text() -> String {
    format!(
        "{HELP_HEAD}{}{HELP_TAIL}",
        help_block(OPTIONS.iter().map(|f| &f.doc), 2, 23)
    )
}

const HELP_HEAD: &str = "\
Usage: respbench compare [OPTIONS] BASE OTHER [OTHER ...]

Compares benchmark results side by side: every test of every input, its rps and
avg/min/p50/p95/p99/max latency (ms), and each OTHER's change against BASE in
percent, marked better or worse by the metric's direction (more rps is better,
more latency is worse). Tests missing from some inputs are listed.

BASE and each OTHER are results files, recognised by content:
  respbench --json records, valkey-benchmark / redis-benchmark --csv output,
  memtier_benchmark --json-out-file output (tests SET, GET, ..., TOTALS).
Several comma-separated files are repetitions of one run (a.json,b.json,c.json),
as are a respbench record's repeated tests (--repeat). Each change gets a 95%
interval: from the repetitions when both sides have two or more (values are then
medians with their spread), from blocks of seconds for single runs of 20 s or
more (within-run evidence only), else none (can't tell). better/worse: the
interval excludes zero; ~: within the noise (it spans zero, both ends within
+20% and -16.7%); 'too noisy to tell' when it spans zero but an end is past
them. A test one side ran machine-busy or client-bound in most repetitions is
'can't tell' whatever its interval. The output starts with a one-line answer per
OTHER and what differs between the sides besides the numbers.

`compare` is recognised only as the first argument.

Options:
";

const HELP_TAIL: &str = "
Exit codes: 0 compared, 1 --fail-if-worse tripped, 2 usage or input problem,
3 --fail-if-worse cannot tell (a checked side was machine-busy or client-bound).
";

type F = Flag<CompareArgs>;

/// `compare`'s options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["--format"],
        Value::Choice(&["text", "markdown", "csv", "html", "json"]),
        "--format FORMAT",
        "text, markdown, csv, html or json (default: by -o's\n\
         extension, .md .csv .html .json; else text)",
        |a, name, v| {
            a.format = Some(match utf8(v, name)?.as_str() {
                "text" => OutFormat::Text,
                "markdown" | "md" => OutFormat::Markdown,
                "csv" => OutFormat::Csv,
                "html" => OutFormat::Html,
                "json" => OutFormat::Json,
                other => {
                    return Err(UsageError(format!(
                        "--format {other}: expected text, markdown, csv, html or json"
                    )));
                }
            });
            Ok(())
        },
    ),
    F::value(
        &["--metrics"],
        Value::Text,
        "--metrics LIST",
        "metrics to show and check, comma-separated\n\
         (default rps,avg,min,p50,p95,p99,max)",
        |a, name, v| {
            a.metrics = utf8(v, name)?
                .split(',')
                .map(|m| {
                    Metric::from_name(m.trim()).ok_or_else(|| {
                        UsageError(format!(
                            "--metrics: unknown metric \"{m}\" (rps, avg, min, p50, p95, p99, max)"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?;
            Ok(())
        },
    ),
    F::value(
        &["--fail-if-worse"],
        Value::Text,
        "--fail-if-worse PCT",
        "exit 1 when a metric of an OTHER is worse than BASE by\n\
         more than PCT percent (a change whose interval spans\n\
         zero does not count; one without an interval does);\n\
         the offending rows go to stderr. Exit 3 instead of 0\n\
         when a checked test was machine-busy or client-bound\n\
         on a side in most repetitions (can't tell)",
        |a, name, v| {
            let v = utf8(v, name)?;
            let pct: f64 = v
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    UsageError(format!(
                        "--fail-if-worse {v}: expected a percentage (0 or more)"
                    ))
                })?;
            a.fail_if_worse = Some(pct);
            Ok(())
        },
    ),
    F::value(
        &["--label"],
        Value::Text,
        "--label NAME",
        "name the inputs in order (repeat; default: file names)",
        |a, name, v| {
            a.labels.push(utf8(v, name)?);
            Ok(())
        },
    ),
    F::value(
        &["-o", "--output"],
        Value::File("a file to write"),
        "-o, --output FILE",
        "write to FILE instead of stdout",
        |a, _, v| {
            a.output = Some(utf8(v, "--output")?);
            Ok(())
        },
    ),
    F::switch(
        &["--no-color"],
        "--no-color",
        "no colours (default: colours on a terminal, unless\n\
         NO_COLOR is set)",
        |a, _, _| {
            a.no_color = true;
            Ok(())
        },
    ),
    F::help(),
];

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    Text,
    Markdown,
    Csv,
    Html,
    Json,
}

impl OutFormat {
    /// The format `-o FILE` asks for by its extension when `--format` does not say: `cmp.html`
    /// is a page, not the text table in a file named `.html`. Text for any other name.
    pub fn of_output(path: &str) -> OutFormat {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("html" | "htm") => OutFormat::Html,
            Some("md" | "markdown") => OutFormat::Markdown,
            Some("csv") => OutFormat::Csv,
            Some("json") => OutFormat::Json,
            _ => OutFormat::Text,
        }
    }
}

/// `compare`'s parsed options.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareArgs {
    /// Per side, its files (repetitions).
    pub sides: Vec<Vec<String>>,
    /// `--format`; `None`: by `-o`'s extension ([`OutFormat::of_output`]), else text.
    pub format: Option<OutFormat>,
    pub metrics: Vec<Metric>,
    pub fail_if_worse: Option<f64>,
    pub labels: Vec<String>,
    pub output: Option<String>,
    pub no_color: bool,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    Help,
    Compare(CompareArgs),
}

/// Parses the arguments after `compare`.
pub fn parse(argv: Vec<OsString>) -> Result<Parsed, String> {
    let mut a = CompareArgs {
        sides: Vec::new(),
        format: None,
        metrics: Metric::ALL.to_vec(),
        fail_if_worse: None,
        labels: Vec::new(),
        output: None,
        no_color: false,
    };
    let side = |a: &mut CompareArgs, v: OsString| {
        let v = utf8(&v, "a file name").map_err(|e| e.0)?;
        a.sides.push(
            v.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        );
        Ok(())
    };
    if parse_subcommand(OPTIONS, argv, &mut a, side, "see respbench compare --help")? {
        return Ok(Parsed::Help);
    }
    // One file: an A/B record, read in `main` (anything else is refused there).
    if a.sides.is_empty() || a.sides.iter().any(Vec::is_empty) {
        return Err("compare needs a BASE and at least one OTHER results file; see respbench compare --help".into());
    }
    if a.labels.len() > a.sides.len() {
        return Err(format!(
            "{} --label for {} inputs",
            a.labels.len(),
            a.sides.len()
        ));
    }
    check_output(a.output.as_deref(), &a.sides)?;
    Ok(Parsed::Compare(a))
}

/// `respbench compare ...`: returns the exit code.
pub fn main(argv: Vec<OsString>) -> u8 {
    let a = match parse(argv) {
        Ok(Parsed::Help) => {
            print!("{}", help_text());
            return 0;
        }
        Ok(Parsed::Compare(a)) => a,
        Err(e) => {
            eprintln!("respbench: {e}");
            return 2;
        }
    };
    if let [side] = a.sides.as_slice() {
        return match (
            side.as_slice(),
            side.first().and_then(|f| super::ab::read(f)),
        ) {
            ([_], Some(doc)) => ab_record(&a, &doc),
            _ => {
                eprintln!(
                    "respbench: compare needs a BASE and at least one OTHER results file (or one \
                     respbench ab record); see respbench compare --help"
                );
                2
            }
        };
    }
    let inputs = match load_inputs(&a.sides, &a.labels) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("respbench: {e}");
            return 2;
        }
    };
    if a.fail_if_worse.is_some()
        && let Err(e) = checked_metrics_present(&inputs, &a.metrics)
    {
        eprintln!("respbench: {e}");
        return 2;
    }
    let cmp = Comparison::new(&inputs, &a.metrics);
    let color = !a.no_color
        && a.output
            .as_deref()
            .is_none_or(|o| crate::cli::is_stdout(Path::new(o)))
        && std::env::var_os("NO_COLOR").is_none()
        && std::io::stdout().is_terminal();
    let format = a
        .format
        .or_else(|| a.output.as_deref().map(OutFormat::of_output))
        .unwrap_or(OutFormat::Text);
    let out = match format {
        // Records with no benchmark test (connection storms only): their tables alone, not an
        // empty speed table with "no test in common" and advice about repetitions.
        OutFormat::Text | OutFormat::Markdown
            if cmp.tests.is_empty() && !super::costs::text(&inputs).is_empty() =>
        {
            let costs = super::costs::text(&inputs);
            match format {
                OutFormat::Markdown => format!("```{costs}```\n"),
                _ => costs.trim_start().to_string(),
            }
        }
        OutFormat::Text => render::text(&cmp, color) + &super::costs::text(&inputs),
        OutFormat::Markdown => {
            let costs = super::costs::text(&inputs);
            render::markdown(&cmp)
                + &if costs.is_empty() {
                    costs
                } else {
                    format!("\n```{costs}```\n")
                }
        }
        OutFormat::Csv => render::csv(&cmp),
        OutFormat::Json => render::json(&cmp, &a.sides),
        OutFormat::Html => super::html::page(&inputs, &cmp),
    };
    if let Err(e) = emit(a.output.as_deref(), &out) {
        eprintln!("respbench: {e}");
        return 2;
    }
    // A failed or cut-short run's figures are not the run's: say so wherever the output went.
    for input in &inputs {
        for p in &input.problems {
            eprintln!("respbench: warning: {p}");
        }
    }
    gate(&inputs, &cmp, a.fail_if_worse)
}

/// `compare AB.json`: the A/B record's paired answer in the format asked for, and its gate.
fn ab_record(a: &CompareArgs, doc: &crate::record::Document) -> u8 {
    let rec = doc.ab.as_deref().expect("read as an A/B record");
    let format = a
        .format
        .or_else(|| a.output.as_deref().map(OutFormat::of_output))
        .unwrap_or(OutFormat::Text);
    let out = match format {
        OutFormat::Markdown => super::ab::markdown(rec),
        OutFormat::Html => match super::html::ab_page(doc) {
            Some(p) => p,
            None => return 2,
        },
        OutFormat::Json => match serde_json::to_string_pretty(&rec.verdicts) {
            Ok(j) => j + "\n",
            Err(e) => {
                eprintln!("respbench: {e}");
                return 2;
            }
        },
        OutFormat::Text | OutFormat::Csv => super::ab::text(rec),
    };
    if let Err(e) = emit(a.output.as_deref(), &out) {
        eprintln!("respbench: {e}");
        return 2;
    }
    a.fail_if_worse.map_or(0, |pct| super::ab::gate(rec, pct))
}

/// `--fail-if-worse` needs every metric it checks in every input: a metric an input lacks (a CSV
/// without p99, memtier without a histogram's p95) cannot be worse, so the gate would pass
/// unchecked. That is an input problem (exit 2), named with the file and a test.
fn checked_metrics_present(inputs: &[Input], metrics: &[Metric]) -> Result<(), String> {
    for input in inputs {
        for t in &input.tests {
            for &m in metrics {
                if t.samples.iter().any(|s| m.of(s).is_none()) {
                    return Err(format!(
                        "--fail-if-worse checks {}, which {} does not have (test {}): choose --metrics among those every input has",
                        m.name(),
                        input.files.join(","),
                        t.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `--fail-if-worse`: 1 with the offending rows on stderr; else 3 with the rows it cannot judge
/// (a side machine-busy or client-bound in most repetitions: neither a pass nor a failure, and
/// never silent); else 0. A side that is not a whole run (failed, interrupted, an aborted test)
/// or lacks a test the base has fails it too: a change that crashes the server must not pass
/// as "not worse". Tests only the others have are fine (a base of `-t set,get` against a whole
/// suite).
fn gate(inputs: &[Input], cmp: &Comparison, pct: Option<f64>) -> u8 {
    let Some(pct) = pct else { return 0 };
    let incomplete: Vec<&str> = inputs
        .iter()
        .filter(|i| !i.problems.is_empty())
        .map(|i| i.label.as_str())
        .collect();
    let missing: Vec<String> = cmp
        .tests
        .iter()
        .filter(|t| {
            t.mix_of.is_none() && !t.missing_from.is_empty() && !t.missing_from.contains(&0)
        })
        .map(|t| t.name.clone())
        .collect();
    if !incomplete.is_empty() || !missing.is_empty() {
        let mut why = Vec::new();
        if !incomplete.is_empty() {
            why.push(format!("not a whole run: {}", incomplete.join(", ")));
        }
        if !missing.is_empty() {
            why.push(format!(
                "the base's tests missing from a side: {}",
                missing.join(", ")
            ));
        }
        eprintln!("respbench: --fail-if-worse: {}", why.join("; "));
        return 1;
    }
    let rows = |list: &[(&str, Metric, usize, crate::compare::table::Change)]| {
        for &(test, metric, k, change) in list {
            eprintln!(
                "  {test} {} {}: {}",
                metric.name(),
                cmp.labels[k],
                render::change_text(Some(&change), (&cmp.labels[0], &cmp.labels[k]))
            );
        }
    };
    let worse = cmp.worse_than(pct);
    let unjudged = cmp.cannot_gate(pct);
    if !worse.is_empty() {
        eprintln!(
            "respbench: {} figure(s) worse than {} by more than {pct}%:",
            worse.len(),
            cmp.labels[0]
        );
        rows(&worse);
    }
    if !unjudged.is_empty() {
        eprintln!(
            "respbench: --fail-if-worse cannot tell for {} figure(s): a side was machine-busy or \
             client-bound in most repetitions, so they describe the machine's load or respbench \
             (run again on a quiet machine, or with more --threads):",
            unjudged.len()
        );
        rows(&unjudged);
    }
    if !worse.is_empty() {
        1
    } else if !unjudged.is_empty() {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<OsString> {
        s.iter().map(OsString::from).collect()
    }

    #[test]
    fn help_is_the_golden_text() {
        assert_eq!(help_text(), include_str!("compare_help.golden"));
    }

    #[test]
    fn sides_and_repetitions() {
        let Parsed::Compare(a) = parse(args(&[
            "a.json,b.json",
            "c.csv",
            "--format",
            "md",
            "--fail-if-worse",
            "5%",
        ]))
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            a.sides,
            vec![
                vec!["a.json".to_string(), "b.json".into()],
                vec!["c.csv".into()]
            ]
        );
        assert_eq!(a.format, Some(OutFormat::Markdown));
        assert_eq!(a.fail_if_worse, Some(5.0));
    }

    #[test]
    fn the_output_file_names_the_format_unless_format_does() {
        for (name, want) in [
            ("cmp.html", OutFormat::Html),
            ("CMP.HTM", OutFormat::Html),
            ("cmp.md", OutFormat::Markdown),
            ("cmp.csv", OutFormat::Csv),
            ("out/cmp.json", OutFormat::Json),
            ("cmp.txt", OutFormat::Text),
            ("cmp", OutFormat::Text),
            ("-", OutFormat::Text),
        ] {
            assert_eq!(OutFormat::of_output(name), want, "{name}");
        }
        let Parsed::Compare(a) =
            parse(args(&["a", "b", "-o", "x.html", "--format", "csv"])).unwrap()
        else {
            panic!()
        };
        assert_eq!(a.format, Some(OutFormat::Csv), "--format wins");
        let Parsed::Compare(a) = parse(args(&["a", "b", "-o", "x.html"])).unwrap() else {
            panic!()
        };
        assert_eq!(a.format, None, "decided from -o when the output is written");
    }

    #[test]
    fn mistakes_are_one_line() {
        for (argv, want) in [
            (vec![], "needs a BASE and at least one OTHER"),
            (vec!["a", "b", "--format", "pdf"], "--format pdf: expected"),
            (vec!["a", "b", "--metrics", "p42"], "unknown metric \"p42\""),
            (
                vec!["a", "b", "--fail-if-worse", "-1"],
                "expected a percentage",
            ),
            (vec!["a", "b", "--bogus"], "--bogus"),
            (
                vec!["a", "b", "--label", "x", "--label", "y", "--label", "z"],
                "3 --label for 2 inputs",
            ),
        ] {
            let e = parse(args(&argv)).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{argv:?}: {e}");
        }
        assert_eq!(parse(args(&["--help"])).unwrap(), Parsed::Help);
    }

    #[test]
    fn a_checked_metric_missing_from_an_input_is_an_input_problem() {
        use crate::compare::fixtures::{mix_record, side};
        use crate::compare::input::{input_of, parse};
        let record = side("a", mix_record("GET", 1000.0, &[("GET", 100, 50.0)]));
        let csv = parse("\"test\",\"rps\"\n\"GET\",\"900\"\n").unwrap();
        let csv = input_of("b".into(), vec!["b.csv".into()], vec![csv]).unwrap();
        let inputs = [record, csv];
        assert_eq!(checked_metrics_present(&inputs, &[Metric::Rps]), Ok(()));
        let e = checked_metrics_present(&inputs, &Metric::ALL).unwrap_err();
        assert_eq!(
            e,
            "--fail-if-worse checks avg, which b.csv does not have (test GET): choose --metrics among those every input has"
        );
    }

    #[test]
    fn the_gate_fails_on_a_side_that_is_not_a_whole_run_or_lacks_a_test() {
        use crate::compare::fixtures::{mix_record, side};
        let run = |name: &str| mix_record(name, 1000.0, &[("GET", 100, 50.0)]);
        let same = [side("a", run("GET")), side("b", run("GET"))];
        let cmp = Comparison::new(&same, &Metric::ALL);
        assert_eq!(gate(&same, &cmp, Some(5.0)), 0, "equal runs pass");
        assert_eq!(gate(&same, &cmp, None), 0, "no gate, no failure");

        let mut failed = run("GET");
        failed.problems.push("the run failed: WRONGPASS".into());
        let cut = [side("a", run("GET")), side("b", failed)];
        let cmp = Comparison::new(&cut, &Metric::ALL);
        assert_eq!(cmp.worse_than(5.0).len(), 0, "its figures look fine");
        assert_eq!(gate(&cut, &cmp, Some(5.0)), 1);
        assert_eq!(cut[1].problems, ["b.json: the run failed: WRONGPASS"]);

        let missing = [side("a", run("GET")), side("b", run("SET"))];
        let cmp = Comparison::new(&missing, &Metric::ALL);
        assert_eq!(
            gate(&missing, &cmp, Some(5.0)),
            1,
            "the base's GET is missing"
        );
        let mut both = run("GET");
        both.tests.extend(run("SET").tests);
        let extra = [side("a", run("GET")), side("b", both)];
        let cmp = Comparison::new(&extra, &Metric::ALL);
        assert_eq!(
            gate(&extra, &cmp, Some(5.0)),
            0,
            "a test only the other has"
        );
    }

    #[test]
    fn the_gate_cannot_tell_when_a_side_was_busy_and_says_so_with_3() {
        use crate::compare::fixtures::{mix_record, side};
        let run = |rps: f64, p99: f64, kind: &str| {
            let mut input = side("x", mix_record("GET", rps, &[("GET", 100, p99)]));
            for s in &mut input.tests[0].samples {
                s.limited_by = Some(kind.into());
            }
            input
        };
        // 20% slower and p99 doubled, one run each: the gate fails safe on the figures.
        let quiet = [run(1000.0, 50.0, "neither"), run(800.0, 100.0, "neither")];
        let cmp = Comparison::new(&quiet, &Metric::ALL);
        assert_eq!(gate(&quiet, &cmp, Some(5.0)), 1);
        // The same figures with the other side on a busy machine: not a failure, not a pass.
        let busy = [
            run(1000.0, 50.0, "neither"),
            run(800.0, 100.0, "machine-busy"),
        ];
        let cmp = Comparison::new(&busy, &Metric::ALL);
        assert!(cmp.worse_than(5.0).is_empty());
        assert_eq!(gate(&busy, &cmp, Some(5.0)), 3);
        // Better figures, the base client-bound: still nothing the gate can vouch for.
        let better = [
            run(800.0, 100.0, "client-bound"),
            run(1000.0, 50.0, "neither"),
        ];
        let cmp = Comparison::new(&better, &Metric::ALL);
        assert_eq!(gate(&better, &cmp, Some(5.0)), 3);
        assert_eq!(gate(&better, &cmp, None), 0, "no gate, no exit code");
    }
}
