//! `respbench recover JOURNAL -o FILE`: a killed run's journal (`record::journal`) turned into a
//! normal `--json` record. The record is what `compare`, `report` and `merge` read from the
//! journal itself (one reader: `record::journal::recognise`, then `record::Document::read`), so
//! recovering it changes nothing they show; it only makes a file every tool reads, and the
//! journal can go.

use std::ffi::OsString;
use std::path::Path;

use crate::cli::flag::{Flag, Value, help_block, parse_subcommand, utf8};
use crate::record::Document;

use crate::cli::check_output;

/// The help text of `respbench recover --help`.
pub fn help_text() -> String {
    format!(
        "{HELP_HEAD}{}{HELP_TAIL}",
        help_block(OPTIONS.iter().map(|f| &f.doc), 2, 21)
    )
}

const HELP_HEAD: &str = "\
Usage: respbench recover JOURNAL -o FILE

Turns the journal of a run that was killed (SIGKILL, the OOM killer, a power
cut) into a --json record: every test that ended, and the test under way up
to its last full second, as Ctrl-C at that second would have recorded it.
The run's outcome says \"killed\". A run with --json FILE keeps its journal
in FILE.partial (or where --journal said) until its record is written.

`recover` is recognised only as the first argument.

Options:
";

const HELP_TAIL: &str = "
Exit codes: 0 written, 1 the record could not be written, 2 usage or input
problem (not a journal, or its run is still going).
";

/// `recover`'s arguments.
#[derive(Debug, Default)]
pub struct RecoverArgs {
    pub journal: Option<String>,
    pub output: Option<String>,
}

type F = Flag<RecoverArgs>;

/// `recover`'s options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["-o", "--output"],
        Value::File("the record to write"),
        "-o, --output FILE",
        "the --json record to write (required; - for stdout)",
        |a, _, v| {
            a.output = Some(utf8(v, "an argument")?);
            Ok(())
        },
    ),
    F::help(),
];

/// `respbench recover ...`: returns the exit code.
pub fn main(argv: Vec<OsString>) -> u8 {
    let (journal, output) = match parse(argv) {
        Ok(None) => {
            print!("{}", help_text());
            return 0;
        }
        Ok(Some(r)) => r,
        Err(e) => {
            eprintln!("respbench: {e}");
            return 2;
        }
    };
    let text = match recover(Path::new(&journal)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("respbench: {e}");
            return 2;
        }
    };
    let written = if crate::cli::is_stdout(Path::new(&output)) {
        crate::record::atomic::emit(None, &text)
    } else {
        crate::record::atomic::write(Path::new(&output), text.as_bytes())
            .map_err(|e| format!("cannot write {output}: {e}"))
    };
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("respbench: {e}");
            1
        }
    }
}

/// The record the journal at `path` holds, as `--json` writes one.
pub fn recover(path: &Path) -> Result<String, String> {
    let shown = path.display();
    // Line by line: a long run's journal may be larger than the cap a file is read whole with.
    let value = match crate::record::journal::read_file(path) {
        Some(record) => record.map_err(|e| format!("{shown}: {e}"))?,
        None => {
            // Why not: the whole file's read says (missing, unreadable, over the cap), or
            // what it is not.
            let bytes =
                crate::record::input_file::read(path).map_err(|e| e.message().to_string())?;
            return Err(match std::str::from_utf8(&bytes) {
                Err(_) => format!("{shown}: not a respbench journal (not UTF-8 text)"),
                Ok(_) => format!("{shown}: not a respbench journal (no journal head line)"),
            });
        }
    };
    let doc = Document::read(value).map_err(|e| format!("{shown}: {e}"))?;
    if doc.outcome == "running" {
        return Err(format!(
            "{shown}: its run is still going (it holds the journal's lock); its record will be written when it ends"
        ));
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// The journal and the output path; `None` for `--help`.
fn parse(argv: Vec<OsString>) -> Result<Option<(String, String)>, String> {
    let mut a = RecoverArgs::default();
    let journal = |a: &mut RecoverArgs, v: OsString| {
        if a.journal.is_some() {
            return Err("recover reads one JOURNAL; see respbench recover --help".to_string());
        }
        a.journal = Some(utf8(&v, "an argument").map_err(|e| e.0)?);
        Ok(())
    };
    if parse_subcommand(
        OPTIONS,
        argv,
        &mut a,
        journal,
        "see respbench recover --help",
    )? {
        return Ok(None);
    }
    let journal = a
        .journal
        .ok_or("recover needs a JOURNAL file; see respbench recover --help")?;
    let output = a
        .output
        .ok_or("recover needs -o FILE (the record to write); see respbench recover --help")?;
    check_output(Some(&output), &[vec![journal.clone()]])?;
    Ok(Some((journal, output)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(Into::into).collect()
    }

    #[test]
    fn needs_a_journal_and_an_output_that_is_not_the_journal() {
        assert_eq!(
            parse(args(&["j.partial", "-o", "r.json"])).unwrap(),
            Some(("j.partial".into(), "r.json".into()))
        );
        assert!(
            parse(args(&["-o", "r.json"]))
                .unwrap_err()
                .contains("JOURNAL")
        );
        assert!(parse(args(&["j.partial"])).unwrap_err().contains("-o FILE"));
        assert!(parse(args(&["a", "b", "-o", "r.json"])).is_err());
        assert!(parse(args(&["j", "-o", "j"])).is_err());
        assert_eq!(parse(args(&["--help"])).unwrap(), None);
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_named_so() {
        let dir = std::env::temp_dir().join(format!("respbench-recover-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.json");
        std::fs::write(&p, "{\"schema\":\"respbench/1\",\"tests\":[]}\n").unwrap();
        let e = recover(&p).unwrap_err();
        assert!(e.contains("not a respbench journal"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
