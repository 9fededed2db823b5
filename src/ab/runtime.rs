//! Running an A/B: the blocks in the planned order, each one the benchmark engine's whole run of
//! a side's plan in this process (`run::run_for_document`, as memtier mode), kept as its record.
//!
//! Why in-process and one whole run per block: a block is then exactly what `respbench` would
//! measure for that side (control connection, server watch, verdict), with nothing of a process
//! start in it, and its record is the one `--json` writes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::plan::AbPlan;
use crate::record::ab::AbBlock;
use crate::run::{Failure, run_for_document};

/// Every block that ran (the failed one too, if it measured something), and how the run ended.
pub struct Ran {
    pub blocks: Vec<AbBlock>,
    pub order: String,
    pub ended: Result<(), Failure>,
}

/// Runs the schedule; stops at the first block that fails or at Ctrl-C, keeping what ran.
pub fn run(plan: &AbPlan, interrupted: Arc<AtomicBool>, terminated: Arc<AtomicBool>) -> Ran {
    let schedule = plan.schedule();
    let mut ran = Ran {
        blocks: Vec::new(),
        order: String::new(),
        ended: Ok(()),
    };
    for (k, &(round, side)) in schedule.iter().enumerate() {
        let s = &plan.sides[side];
        let what = match round {
            0 => "warm-up".to_string(),
            r => format!("round {r}/{}", plan.rounds),
        };
        eprintln!(
            "respbench ab: block {}/{} ({what}): {}",
            k + 1,
            schedule.len(),
            s.name.to_uppercase()
        );
        let (result, mut doc) =
            run_for_document(&s.plan, interrupted.clone(), terminated.clone(), None);
        // The process's argv names both sides: each block's record names its own.
        doc.command_line = s.command_line.clone();
        let measured = !doc.tests.is_empty();
        if measured {
            if round > 0 {
                ran.order.push_str(&s.name.to_uppercase());
            }
            ran.blocks.push(AbBlock {
                side: s.name.into(),
                round,
                record: doc,
            });
        }
        if let Err(f) = result {
            ran.ended = Err(f);
            break;
        }
        if interrupted.load(Ordering::Relaxed) {
            ran.ended = Err(Failure::Interrupted);
            break;
        }
    }
    ran
}
