//! `--find-max`: the highest throughput a server sustains while an SLO holds (`p99<1ms`).
//!
//! Owns: the SLO expression (`expr`), the search over offered rates as a pure state machine
//! (`search`: window results in, next rate or conclusion out), and the table and answer text
//! (`table`). Must not: run anything or read a clock: `run::find_max` drives the engine window
//! by window and feeds this module what each measured, so every decision here is unit-tested
//! with synthetic servers (`sim`: a seeded model with noise bursts); the boundary is a paired
//! comparison of the two neighbouring rates run alternately (`pairs`), its interval
//! `stats::from_pairs`'s (the one home of intervals). Imports nothing else of the crate.

pub mod expr;
pub mod pairs;
pub mod search;
pub mod table;
pub mod window;

#[cfg(test)]
mod sim;

pub use expr::{Condition, Figures, Metric, Slo};
pub use search::{Conclusion, Decision, End, Next, Search, Tally, Window};
