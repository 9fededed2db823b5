//! What both subcommands (`compare`, `report`) do with the files named on the command line: read
//! the sides into inputs.

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
    input::peer_view::align_with_memtier(&mut inputs);
    Ok(inputs)
}
