//! `--find-max`: the highest throughput a server sustains while an SLO holds (`p99<1ms`).
//!
//! Owns: the SLO expression (`expr`), the search over offered rates as a pure state machine
//! (`search`: step results in, next rate or conclusion out), and the table and answer text
//! (`table`). Must not: run anything or read a clock: `run::find_max` drives the engine step by
//! step and feeds this module what each step measured, so every decision here is unit-tested
//! with synthetic servers. Imports nothing of the crate.

pub mod expr;
pub mod search;
pub mod table;

pub use expr::{Condition, Figures, Metric, Slo};
pub use search::{Conclusion, End, Next, Search, Step};
