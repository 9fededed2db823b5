//! What both subcommands (`compare`, `report`) do with files: read the sides named on the command
//! line into inputs, and write the output to `-o FILE` or stdout.

use std::io::Write;
use std::path::Path;

use super::input::{self, Input};

/// Reads every side, with `--label` names applied and labels made unique.
pub fn load_inputs(sides: &[Vec<String>], labels: &[String]) -> Result<Vec<Input>, String> {
    let mut inputs = sides
        .iter()
        .map(|files| input::load_side(files).map_err(|e| e.0))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, l) in labels.iter().enumerate() {
        inputs[i].label = l.clone();
    }
    input::dedup_labels(&mut inputs);
    // A respbench record beside memtier's JSON: its mix as memtier's rows (SET, GET, TOTALS).
    input::memtier_view::align_with_memtier(&mut inputs);
    Ok(inputs)
}

/// `-o` by the rule every output follows (`cli::check_outputs`): never one of the input files.
pub fn check_output(output: Option<&str>, sides: &[Vec<String>]) -> Result<(), String> {
    let Some(output) = output else { return Ok(()) };
    let inputs: Vec<(&str, &Path)> = sides
        .iter()
        .flatten()
        .map(|f| ("an input", Path::new(f)))
        .collect();
    crate::cli::check_outputs(&[("-o", Path::new(output))], &inputs).map_err(|e| e.0)
}

/// Writes `text` to `-o FILE` or stdout (no `-o`, or `-o -`). A closed stdout is not an error
/// (`| head`).
pub fn emit(output: Option<&str>, text: &str) -> Result<(), String> {
    match output.filter(|o| !crate::cli::is_stdout(Path::new(o))) {
        Some(path) => crate::record::atomic::write(Path::new(path), text.as_bytes())
            .map_err(|e| format!("cannot write {path}: {e}")),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write to stdout: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}
