//! `respbench compare`: results of respbench, valkey-benchmark, redis-benchmark and
//! memtier_benchmark side by side, with each run's change against a base and, when there are
//! repetitions, whether the change is a finding or noise.
//!
//! Layout: `input` reads and recognises files into one model (also used by the HTML report),
//! `table` builds the comparison, `stats` the effects and their intervals, `headline` the answer
//! above the table, `render` the text formats, `html` the HTML page, `cli` the `compare`
//! subcommand's options and exit codes, `report_cli` the `report` subcommand's, `recover_cli` the
//! `recover` subcommand's (a killed run's journal into a record), `files` what they read and
//! write, `ab` an A/B record's answer, table, Markdown and gate. Dependency direction: `cli → files, table, render, html, input`; `report_cli →
//! files, table, html`; `html → table, render, input`; `render → headline, table, stats`;
//! `headline → table`; `table → stats, input`; nothing here depends on the engine or the run.

pub mod ab;
pub mod cli;
pub mod costs;
mod files;
#[cfg(test)]
mod fixtures;
pub mod headline;
pub mod html;
pub mod input;
pub mod recover_cli;
pub mod render;
pub mod report_cli;
pub mod stats;
pub mod table;
