//! `respbench compare`: results of respbench, valkey-benchmark, redis-benchmark and
//! memtier_benchmark side by side, with each run's change against a base and, when there are
//! repetitions, whether the change is a finding or noise.
//!
//! Layout: `input` reads and recognises files into one model (also used by the HTML report),
//! `table` builds the comparison, `stats` the effects and their intervals, `headline` the answer
//! above the table, `render` the text formats, `cli` the subcommand's options and exit codes.
//! Dependency direction: `cli → table, render, input`; `render → headline, table, stats`;
//! `headline → table`; `table → stats, input`; nothing here depends on the engine or the run.

pub mod cli;
#[cfg(test)]
mod fixtures;
pub mod headline;
pub mod html;
pub mod input;
pub mod render;
pub mod stats;
pub mod table;
