//! What both subcommands (`compare`, `report`) do with files: read the sides named on the command
//! line into inputs, and write the output to `-o FILE` or stdout.

use std::io::Write;

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
    Ok(inputs)
}

/// Writes `text` to `-o FILE` or stdout. A closed stdout is not an error (`| head`).
pub fn emit(output: Option<&str>, text: &str) -> Result<(), String> {
    match output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}")),
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
