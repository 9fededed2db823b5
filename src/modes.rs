//! The registry: every mode of a run, in one place. A mode is a folder (its plan, its runtime,
//! its record block, its report) plus a line here: a variant of [`RunMode`], the line of
//! [`RunMode::of`] that says when it runs, the line of [`dispatch`] that runs it, and its record
//! block's kind in [`BLOCKS`] (what `record`, `merge`, `compare` and `recover` do with the
//! block without naming the mode).
//!
//! Above the mode folders and below `main` only: it names the modes, they do not name it, and
//! what they run with comes from `run` ([`run::ModeContext`]: the connection setup, the control
//! connection, the console with its stop flags, the record). The rules between a mode and the
//! options it cannot honour are one table in `plan::conflicts`, checked when the plan is made.
//!
//! The subcommands `replay`, `capture` and `memtier` are dispatched by `main`, not here (they
//! have command lines of their own); the replay's record block is in [`BLOCKS`] all the same.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::cli::{self, Args, ArgsKind};
use crate::manual::{ModePage, Operands};
use crate::plan::{PlanError, RunPlan};
use crate::record::block::{self, BlockKind};
use crate::redact::LineTable;
use crate::run::{self, Failure, ModeContext};
use crate::{delivery, fuzz, memory, memtier, storm};

/// Every mode's record block that the record holds through its kind (`record::block`), in the
/// order they are written in the record.
pub static BLOCKS: &[BlockKind] = &[
    BlockKind::of::<crate::replay::block::ReplayRecord>(),
    BlockKind::of::<fuzz::block::FuzzRecord>(),
    BlockKind::of::<storm::block::StormRecord>(),
    BlockKind::of::<memory::block::MemoryRecord>(),
    BlockKind::of::<delivery::block::DeliveryRecord>(),
];

/// Every mode's own options (their entries and their type, `cli::ModeArgs`), which the option
/// table and `cli::Args` hold without naming the mode; in this order at their place in the
/// table (so in the completions and the man page), and their whole-line checks run in it.
pub static OPTIONS: &[ArgsKind] = &[
    ArgsKind::of::<fuzz::cli::FuzzArgs>(),
    ArgsKind::of::<storm::cli::StormArgs>(),
    ArgsKind::of::<memory::cli::MemoryArgs>(),
    ArgsKind::of::<delivery::cli::DeliveryArgs>(),
];

/// The modes whose command line is read by a table of their own (memtier's), for `redact` to
/// find their secrets the way their parser does.
pub static LINES: &[LineTable] = &[LineTable {
    subcommand: "memtier",
    program: "memtier_benchmark",
    takes_value: memtier::cli::takes_value,
    secret_value: memtier::cli::secret_value,
}];

/// The modes that are subcommands of their own (replay's, capture's, memtier's), for the man page
/// and completions, in the manual's order.
pub static PAGES: &[ModePage] = &[
    ModePage {
        name: "replay",
        summary: "replay a traffic trace with its own timing",
        help: crate::replay::help_text,
        options: crate::replay::docs,
        operands: Operands::Files,
    },
    ModePage {
        name: "capture",
        summary: "record a server's traffic into a trace (MONITOR)",
        help: crate::replay::capture::help_text,
        options: crate::replay::capture::docs,
        operands: Operands::Nothing,
    },
    ModePage {
        name: "memtier",
        summary: "memtier_benchmark's command line and output (also as argv[0] memtier_benchmark)",
        help: memtier::cli::help_text,
        options: || memtier::cli::docs().collect(),
        operands: Operands::Nothing,
    },
];

/// Installs [`BLOCKS`] for the record, [`OPTIONS`] for the command line, [`TEST_PROBE`] for the
/// benchmark, [`LINES`] for `redact` and [`PAGES`] for the manual (before any record is read or
/// written, or a command line parsed or shown: `main` does it first).
pub fn install() {
    block::install(BLOCKS);
    cli::install(OPTIONS);
    run::install_test_probe(TEST_PROBE);
    crate::redact::install(LINES);
    crate::manual::install(PAGES);
}

/// What runs around each benchmark test when the plan asks for it (`run::TestProbe`): memory
/// per key's readings, block and report lines.
pub static TEST_PROBE: &dyn run::TestProbe = &memory::probe::MemoryProbe;

/// What a run does once the server is known: one mode, chosen once from the command line.
/// `--find-max` and `--memory-per-key`/`--fill` are options of [`RunMode::Benchmark`] (they run
/// the engine's tests); the other variants replace the tests.
#[derive(Clone, Debug)]
pub enum RunMode {
    /// The workload's tests on the request engine (`run::benchmark`).
    Benchmark,
    /// `-I`: idle connections until Ctrl-C.
    Idle,
    /// memtier's `--verify-only`: the imported keys read back, no test.
    VerifyOnly,
    /// `--connect-storm`: connections opened and closed, stage by stage (`storm/`).
    Storm(storm::plan::StormPlan),
    /// `--pubsub`/`--stream`: a delivery test (`delivery/`).
    Delivery(delivery::DeliverySpec),
    /// `--fuzz`: the fuzzer instead of a benchmark (`fuzz/`), with its options.
    Fuzz(fuzz::cli::FuzzArgs),
}

impl RunMode {
    /// The mode the command line asks for. One command line asks for one mode (what a mode
    /// refuses is `plan::conflicts`'); where two are given that do not refuse each other, the
    /// first of this order runs, as the run always has: idle, fuzz, storm, verify-only,
    /// delivery.
    pub fn of(args: &Args, plan: &RunPlan) -> Result<RunMode, PlanError> {
        let delivery = delivery::plan::plan(args, plan)?;
        Ok(if args.idle {
            RunMode::Idle
        } else if args.mode::<fuzz::cli::FuzzArgs>().enabled {
            RunMode::Fuzz(args.mode::<fuzz::cli::FuzzArgs>().clone())
        } else if let Some(p) = storm::plan::plan(args) {
            RunMode::Storm(p)
        } else if plan.verify.is_some_and(|v| v.only) {
            RunMode::VerifyOnly
        } else if let Some(spec) = delivery {
            RunMode::Delivery(spec)
        } else {
            RunMode::Benchmark
        })
    }
}

/// A run as planned: the options every mode shares, and the mode.
pub struct Planned {
    pub plan: RunPlan,
    pub mode: RunMode,
}

/// The plan of `args` (`stdin`: the `-x` argument if it was read) and its mode.
pub fn plan(args: &Args, stdin: Option<Vec<u8>>) -> Result<Planned, PlanError> {
    let plan = RunPlan::new(args, stdin)?;
    let mode = RunMode::of(args, &plan)?;
    Ok(Planned { plan, mode })
}

/// Runs the planned mode (see `run::run`: the record is written however the run ends).
pub fn run(
    planned: &Planned,
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
) -> Result<(), Failure> {
    let mode = &planned.mode;
    run::run(&planned.plan, interrupted, terminated, &|ctx| {
        dispatch(mode, ctx)
    })
}

/// The dispatch table: each mode's entry point, given the one context every mode gets.
fn dispatch(mode: &RunMode, ctx: ModeContext<'_>) -> Result<(), Failure> {
    match mode {
        RunMode::Benchmark => run::benchmark(ctx),
        RunMode::Idle => run::idle(ctx),
        RunMode::VerifyOnly => run::verify_only(ctx),
        RunMode::Storm(plan) => storm::run::run(ctx, plan),
        RunMode::Delivery(spec) => delivery::run::run(ctx, spec),
        RunMode::Fuzz(args) => fuzz::run::run(ctx, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(argv: &[&str]) -> RunMode {
        let args = match crate::cli::parse(argv.iter().map(|s| s.into())) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        plan(&args, None).map(|p| p.mode).unwrap()
    }

    #[test]
    fn one_mode_per_command_line_in_the_runs_order() {
        assert!(matches!(mode(&["-t", "get"]), RunMode::Benchmark));
        assert!(matches!(
            mode(&["--find-max", "p99<1ms", "-t", "get"]),
            RunMode::Benchmark
        ));
        assert!(matches!(mode(&["--memory-per-key"]), RunMode::Benchmark));
        assert!(matches!(mode(&["-I"]), RunMode::Idle));
        assert!(matches!(mode(&["--fuzz"]), RunMode::Fuzz(_)));
        assert!(matches!(mode(&["--pubsub", "2"]), RunMode::Delivery(_)));
        let storm = mode(&["--connect-storm", "PING"]);
        let RunMode::Storm(p) = storm else {
            panic!("{storm:?}")
        };
        assert_eq!(p.command_name.as_deref(), Some("PING"));
        // Given together, the first of the order runs (fuzz before the storm), as it always has.
        assert!(matches!(
            mode(&["--fuzz", "--connect-storm"]),
            RunMode::Fuzz(_)
        ));
    }
}
