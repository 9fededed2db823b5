//! `respbench completions SHELL` and `respbench man`: shell completions (bash, zsh, fish) and a
//! man page, generated from the same option tables the parsers and `--help` use (`cli::flags`
//! for the main command line, each subcommand's `OPTIONS`), so they cannot disagree with them.
//!
//! Owns: the list of subcommands with their tables and help texts ([`commands`]), the two
//! generators (`completions.rs`, `man.rs`) and the two subcommands' own small tables. Must not:
//! parse a benchmark's options or run anything.
//!
//! Exit codes of both subcommands: 0 written (also when stdout closes early), 2 a usage mistake.

mod completions;
mod man;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::io::Write;

use crate::cli;
use crate::cli::flag::{Action, Doc, Flag, Value, help_block, parse_subcommand};

pub use completions::{Shell, completions};
pub use man::man_page;

/// What a command's arguments after its options are, for completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// A custom command to benchmark: free words.
    Command,
    /// Results files.
    Files,
    /// One of these words.
    Words(&'static [&'static str]),
    /// None.
    Nothing,
}

/// A command respbench answers to: the main command line (`name` empty) or a subcommand.
pub struct Command {
    /// The subcommand's word (`compare`), empty for the main command line.
    pub name: &'static str,
    /// One line saying what it does (completion menus, the man page).
    pub summary: &'static str,
    /// Its `--help` text (the man page takes the description and sections from it).
    pub help: String,
    /// Its options, in help order.
    pub options: Vec<&'static Doc>,
    /// What follows the options.
    pub operands: Operands,
}

/// The main command line, then every subcommand, each with its table and help.
pub fn commands() -> Vec<Command> {
    let mut all = vec![
        Command {
            name: "",
            summary: "load generator and benchmark for RESP servers (Valkey, Redis)",
            help: cli::help_text().to_string(),
            options: cli::docs().collect(),
            operands: Operands::Command,
        },
        Command {
            name: "ab",
            summary: "A/B on a shared machine: interleaved blocks, paired answer",
            help: crate::ab::cli::help_text(),
            options: docs(crate::ab::cli::OPTIONS),
            operands: Operands::Command,
        },
        Command {
            name: "compare",
            summary: "compare runs, with a noise test and a CI gate",
            help: crate::compare::cli::help_text(),
            options: docs(crate::compare::cli::OPTIONS),
            operands: Operands::Files,
        },
        Command {
            name: "report",
            summary: "a self-contained HTML report of one or more runs",
            help: crate::report_cli::help_text(),
            options: docs(crate::report_cli::OPTIONS),
            operands: Operands::Files,
        },
        Command {
            name: "merge",
            summary: "merge the --json records of a sharded run into one",
            help: crate::merge::help_text(),
            options: docs(crate::merge::OPTIONS),
            operands: Operands::Files,
        },
        Command {
            name: "recover",
            summary: "turn a killed run's journal into a --json record",
            help: crate::recover_cli::help_text(),
            options: docs(crate::recover_cli::OPTIONS),
            operands: Operands::Files,
        },
        Command {
            name: "replay",
            summary: "replay a traffic trace with its own timing",
            help: crate::replay::help_text(),
            options: crate::replay::docs(),
            operands: Operands::Files,
        },
        Command {
            name: "capture",
            summary: "record a server's traffic into a trace (MONITOR)",
            help: crate::replay::capture::help_text(),
            options: crate::replay::capture::docs(),
            operands: Operands::Nothing,
        },
    ];
    all.extend(pages().iter().map(ModePage::command));
    all.extend([
        Command {
            name: "completions",
            summary: "print shell completions (bash, zsh or fish)",
            help: completions_help(),
            options: docs(COMPLETIONS_OPTIONS),
            operands: Operands::Words(Shell::NAMES),
        },
        Command {
            name: "man",
            summary: "print the man page (roff)",
            help: man_help(),
            options: docs(MAN_OPTIONS),
            operands: Operands::Nothing,
        },
    ]);
    all
}

/// A mode's own command line as a subcommand (memtier's): its help and table, installed by the
/// registry (`crate::modes::PAGES`) so the manual lists it without naming the mode.
pub struct ModePage {
    pub name: &'static str,
    pub summary: &'static str,
    pub help: fn() -> String,
    pub options: fn() -> Vec<&'static Doc>,
}

impl ModePage {
    fn command(&self) -> Command {
        Command {
            name: self.name,
            summary: self.summary,
            help: (self.help)(),
            options: (self.options)(),
            operands: Operands::Nothing,
        }
    }
}

static PAGES: std::sync::OnceLock<&'static [ModePage]> = std::sync::OnceLock::new();

/// Installs the modes' subcommand pages (the registry's list), once, before the manual is made.
pub fn install(pages: &'static [ModePage]) {
    let _ = PAGES.set(pages);
}

/// The installed pages.
fn pages() -> &'static [ModePage] {
    match PAGES.get() {
        Some(pages) => pages,
        None => not_installed(),
    }
}

/// Outside tests, a manual made before the registry installed the modes' pages is a bug of the
/// program's start (it would lack their subcommands).
#[cfg(not(test))]
fn not_installed() -> &'static [ModePage] {
    panic!("manual: the modes' pages were not installed (crate::modes::install)")
}

/// Tests get the registry's pages without installing them.
#[cfg(test)]
fn not_installed() -> &'static [ModePage] {
    PAGES.get_or_init(|| crate::modes::PAGES)
}

/// `completions`' options: only help; the shell is its operand.
pub const COMPLETIONS_OPTIONS: &[Flag<Option<String>>] = &[Flag::new(
    &["--help", "-h"],
    Value::None,
    "--help",
    "Print this help and exit",
    Action::Help,
)];

/// `man`'s options: only help.
pub const MAN_OPTIONS: &[Flag<Option<String>>] = COMPLETIONS_OPTIONS;

/// `respbench completions --help`.
pub fn completions_help() -> String {
    format!(
        "Usage: respbench completions bash|zsh|fish\n\n\
         Prints the shell completion script for respbench, its options and its\n\
         subcommands (see docs/install.md for where each shell looks for it):\n\
         \x20 respbench completions bash > ~/.local/share/bash-completion/completions/respbench\n\
         \x20 respbench completions zsh > ~/.zfunc/_respbench\n\
         \x20 respbench completions fish > ~/.config/fish/completions/respbench.fish\n\n\
         Options:\n{}",
        help_block(COMPLETIONS_OPTIONS.iter().map(|f| &f.doc), 1, 13)
    )
}

/// `respbench man --help`.
pub fn man_help() -> String {
    format!(
        "Usage: respbench man\n\n\
         Prints respbench's man page (roff, section 1), with a section per\n\
         subcommand; view it with `respbench man | man -l -`, or install it:\n\
         \x20 respbench man > ~/.local/share/man/man1/respbench.1\n\n\
         Options:\n{}",
        help_block(MAN_OPTIONS.iter().map(|f| &f.doc), 1, 13)
    )
}

/// `respbench completions …`: returns the exit code.
pub fn completions_main(argv: Vec<OsString>) -> u8 {
    let mut shell: Option<String> = None;
    let mut extra = 0;
    let operand = |s: &mut Option<String>, v: OsString| {
        if s.is_some() {
            extra += 1;
        }
        *s = Some(v.to_string_lossy().into_owned());
        Ok(())
    };
    let see = "see respbench completions --help";
    match parse_subcommand(COMPLETIONS_OPTIONS, argv, &mut shell, operand, see) {
        Ok(true) => return emit(&completions_help()),
        Ok(false) => {}
        Err(e) => return usage(&e),
    }
    if extra > 0 {
        return usage(&format!("completions takes one shell; {see}"));
    }
    let Some(name) = shell else {
        return usage(&format!(
            "completions needs a shell: bash, zsh or fish; {see}"
        ));
    };
    match Shell::from_name(&name) {
        Some(shell) => emit(&completions(shell, &commands())),
        None => usage(&format!(
            "unknown shell {name:?}: expected bash, zsh or fish; {see}"
        )),
    }
}

/// `respbench man …`: returns the exit code.
pub fn man_main(argv: Vec<OsString>) -> u8 {
    let mut none: Option<String> = None;
    let operand = |_: &mut Option<String>, v: OsString| {
        Err(format!(
            "man takes no arguments (got {:?}); see respbench man --help",
            v.to_string_lossy()
        ))
    };
    match parse_subcommand(
        MAN_OPTIONS,
        argv,
        &mut none,
        operand,
        "see respbench man --help",
    ) {
        Ok(true) => emit(&man_help()),
        Ok(false) => emit(&man_page(&commands(), env!("CARGO_PKG_VERSION"))),
        Err(e) => usage(&e),
    }
}

fn usage(message: &str) -> u8 {
    eprintln!("respbench: {message}");
    2
}

/// Writes `text` to stdout: 0, also when the reader went away (`| head`); 1 on another error.
fn emit(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("respbench: cannot write to stdout: {e}");
            1
        }
        _ => 0,
    }
}

/// A table's descriptions.
fn docs<S>(table: &'static [Flag<S>]) -> Vec<&'static Doc> {
    table.iter().map(|f| &f.doc).collect()
}

/// The spellings of `doc` (for the generators).
fn names(doc: &Doc) -> impl Iterator<Item = &'static str> {
    doc.names.iter().copied()
}

/// Each option's one-line description: the first line of its help; an entry described together
/// with the one before it (`--sentinel-password`) gets that one's.
fn summaries(docs: &[&Doc]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(docs.len());
    for doc in docs {
        let first = doc.help.lines().next().unwrap_or("").trim_end();
        let line = match (first.is_empty(), out.last()) {
            (true, Some(before)) => before.clone(),
            _ => first.to_string(),
        };
        out.push(line);
    }
    out
}
