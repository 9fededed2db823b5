//! `respbench ab` (issue 36): an A/B comparison that answers on a shared machine. A and B run in
//! short blocks, alternately, in a random balanced order; each pair of neighbouring blocks shares
//! the machine's state, so the ratio of the pair cancels the slow part of the machine's noise
//! that separate runs (`--repeat`, then `compare`) cannot. The answer per test and metric is B's
//! change against A from the pairs, with its 95 % interval and a verdict.
//!
//! Layout: `cli` the option table and help, `plan` the sides' plans and the block order,
//! `runtime` the blocks (the engine in-process), `analysis` the verdicts and confounders; the
//! wording of the answer, the table, Markdown and the gate are `compare::ab`'s (so `compare` reads
//! an `ab` record the same way), the record's block `record::ab`.
//!
//! Owns: the A/B mode end to end. Must not: measure anything itself (the engine does), or word a
//! verdict twice. Only `main.rs` (and the manual) name this module.
//!
//! Exit codes: 0 answered; 1 a block failed (the record keeps what ran) or `--fail-if-worse`
//! tripped; 2 usage; 3 `--fail-if-worse` cannot tell; 130/143 interrupted (answered from what ran).

mod analysis;
pub mod cli;
mod plan;
mod runtime;

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::record::Document;
use crate::record::ab::{AbRecord, AbSide};
use crate::record::atomic;
use crate::run::Failure;

use cli::{AbArgs, Parsed};
use plan::{AbPlan, Refusal};

/// The subcommand: `argv` are the arguments after `ab`. Returns the exit code.
pub fn main(argv: Vec<OsString>, interrupted: Arc<AtomicBool>, terminated: Arc<AtomicBool>) -> u8 {
    let a = match cli::parse(argv) {
        Ok(Parsed::Help) => {
            print!("{}", cli::help_text());
            return 0;
        }
        Ok(Parsed::Ab(a)) => a,
        Err(e) => {
            eprintln!("respbench ab: {e}");
            return 2;
        }
    };
    let plan = match AbPlan::new(&a) {
        Ok(p) => p,
        Err(Refusal::Usage(m)) => {
            eprintln!("respbench ab: {m}");
            return 2;
        }
        Err(Refusal::Io(m)) => {
            eprintln!("respbench ab: {m}");
            return 1;
        }
    };
    for p in [&a.json, &a.html, &a.markdown].into_iter().flatten() {
        if let Err(e) = check_output(p) {
            eprintln!("respbench ab: cannot write {}: {e}", p.display());
            return 1;
        }
    }
    let ran = runtime::run(&plan, interrupted, terminated.clone());
    let doc = document(&a, &plan, ran.blocks, ran.order);
    let rec = doc.ab.as_deref().expect("the A/B block was just set");
    if let Err(e) = write_outputs(&a, &doc, rec) {
        eprintln!("respbench ab: {e}");
        return 1;
    }
    match ran.ended {
        Ok(()) => a
            .fail_if_worse
            .map_or(0, |pct| crate::compare::ab::gate(rec, pct)),
        Err(Failure::Interrupted) if terminated.load(Ordering::Relaxed) => 143,
        Err(Failure::Interrupted) => 130,
        Err(Failure::BrokenPipe) => 0,
        Err(Failure::Fatal(m) | Failure::Usage(m)) => {
            eprintln!("respbench ab: {m}");
            1
        }
        Err(Failure::Reference(m)) => {
            eprintln!("{m}");
            1
        }
    }
}

fn check_output(p: &Path) -> std::io::Result<()> {
    if crate::cli::is_stdout(p) {
        return Ok(());
    }
    atomic::check_writable(p)
}

/// The run's record: the head of A's first block (client, target, options), no tests of its
/// own, and the `ab` block with every block and the answer.
fn document(
    a: &AbArgs,
    plan: &AbPlan,
    blocks: Vec<crate::record::ab::AbBlock>,
    order: String,
) -> Document {
    let verdicts = analysis::verdicts(&blocks);
    let comparisons = analysis::comparisons(&blocks) as u32;
    let confounders = analysis::confounders(&blocks);
    let mut doc = blocks
        .iter()
        .find(|b| b.side == "a")
        .map(|b| b.record.clone())
        .unwrap_or_default();
    doc.tests.clear();
    doc.command_line = command_line(a, plan);
    doc.outcome = match blocks.iter().all(|b| b.record.outcome == "completed") {
        true if order.len() == 2 * plan.rounds as usize => "completed".into(),
        _ => "interrupted".into(),
    };
    if let Some(last) = blocks.last() {
        doc.ended_at = last.record.ended_at.clone();
    }
    doc.ab = Some(Box::new(AbRecord {
        seed: plan.seed,
        rounds: plan.rounds,
        order,
        sides: plan
            .sides
            .iter()
            .map(|s| AbSide {
                side: s.name.into(),
                options: s.options.clone(),
            })
            .collect(),
        answer: crate::compare::ab::answer(&verdicts),
        blocks,
        verdicts,
        comparisons,
        confounders,
    }));
    doc
}

/// `respbench ab` as run, redacted: the shared options through `redact::command_line`, each
/// side's as its own redacted line.
fn command_line(a: &AbArgs, plan: &AbPlan) -> Vec<String> {
    let mut argv = vec![OsString::from("respbench")];
    argv.extend(a.shared.iter().cloned());
    let mut out = crate::redact::command_line(&argv);
    out.insert(1, "ab".into());
    for s in &plan.sides {
        out.push(format!("--{}", s.name));
        out.push(s.options.clone());
    }
    out.extend([
        "--rounds".into(),
        plan.rounds.to_string(),
        "--seed".into(),
        plan.seed.to_string(),
    ]);
    out
}

fn write_outputs(a: &AbArgs, doc: &Document, rec: &AbRecord) -> Result<(), String> {
    // Nothing measured (the first block failed): the failure's message is the whole answer.
    let text = match rec.blocks.is_empty() {
        true => String::new(),
        false => crate::compare::ab::text(rec),
    };
    let json = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())? + "\n";
    let mut stdout = Vec::new();
    for (path, bytes) in [
        (&a.json, json.as_bytes()),
        (&a.markdown, crate::compare::ab::markdown(rec).as_bytes()),
    ] {
        match path {
            Some(p) if crate::cli::is_stdout(p) => stdout.extend_from_slice(bytes),
            Some(p) => {
                atomic::write(p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))?
            }
            None => {}
        }
    }
    if let Some(p) = &a.html {
        crate::compare::html::write_ab(doc, p)?;
    }
    // The answer goes to stdout unless a record or Markdown does (then to stderr).
    let out = std::io::stdout();
    let mut out = out.lock();
    let written = if stdout.is_empty() {
        out.write_all(text.as_bytes())
    } else {
        eprint!("{text}");
        out.write_all(&stdout)
    };
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write the answer: {e}"))
        }
        _ => Ok(()),
    }
}
