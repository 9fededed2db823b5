//! `respbench compare`: results of respbench, valkey-benchmark, redis-benchmark and
//! memtier_benchmark side by side, with each run's change against a base and, when there are
//! repetitions, whether the change is a finding or noise.
//!
//! Layout: `input` reads and recognises files into one model (also used by the HTML report),
//! `table` builds the comparison (its effects and intervals from `crate::stats`), `headline` the
//! answer above the table, `words` a change's figures in words, `render` the text formats,
//! `html` the HTML page (drawn with `crate::html`), `costs` the storm, memory, delivery and
//! verify tables, `cli` the `compare` subcommand's options and exit codes, `files` the sides read
//! (also for `report_cli`), `ab` an A/B record's answer, table, Markdown and gate. Dependency direction: `cli → files, table, render, html, input`;
//! `html → table, render, words, input`; `render → headline, words, table`; `headline → words,
//! table`; `table → input`; `costs → input`; nothing here depends on the engine or the run.

pub mod ab;
pub mod cli;
pub mod costs;
pub mod files;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod headline;
pub mod html;
pub mod input;
pub mod render;
pub mod table;
pub mod words;
