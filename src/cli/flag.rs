//! One option as one table entry: its spellings, whether it takes a value (and what kind), whether
//! that value is secret, its help text and how it applies. The main command line
//! (`cli::flags`) and every subcommand (`compare`, `report`, `merge`, …) describe their options
//! with this type, so `--help`, the shell completions and the man page are all read from the same
//! entries and cannot disagree.
//!
//! Owns: the entry type and the help layout of a table. Must not: know any particular option.

use std::ffi::{OsStr, OsString};

use super::UsageError;

/// What an option's value is, for the parser (a path must not be an option's spelling) and for
/// the shell completions (complete file names, directories or a fixed list of words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A switch: no value.
    None,
    /// Free text: a number, a name, a list.
    Text,
    /// One of these words (the parser still checks; the list only guides completion).
    Choice(&'static [&'static str]),
    /// A file; the text says what is expected, for the refusal of an empty value or an option.
    File(&'static str),
    /// A directory; the text as for [`Value::File`].
    Dir(&'static str),
}

impl Value {
    /// Whether the next argument (or an attached `=value`) belongs to the option.
    pub fn taken(self) -> bool {
        self != Value::None
    }
}

/// Where a secret hides in an option's value, for `crate::redact`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretValue {
    /// The whole value is a password (`-a`, `--sentinel-password`).
    Password,
    /// A server URI whose userinfo may hold a password (`-u`).
    Uri,
    /// A command line whose arguments may hold one (`--command 'AUTH user PW'`).
    Command,
    /// A shell command whose options may hold one (`--fuzz-restart 'valkey-server
    /// --requirepass PW'`).
    Shell,
}

/// Everything about an option except how it applies: what the help, the completions, the man
/// page and the record's redaction read.
#[derive(Clone, Copy, Debug)]
pub struct Doc {
    /// Every spelling (`-h`, `--primary-name`, `--master-name`), exact and case-sensitive.
    pub names: &'static [&'static str],
    /// Its value, if any.
    pub value: Value,
    /// Where the value may hold a secret (`None`: it never does): every output redacts it
    /// through `crate::redact`.
    pub secret: Option<SecretValue>,
    /// The help's left column (`-h <hostname>`); empty when the entry is described together
    /// with the one before it, or (unsupported options) in a line of its own.
    pub usage: &'static str,
    /// The help's right column, lines separated by `\n`.
    pub help: &'static str,
    /// A command line that uses the option and parses (the table's test runs every one).
    pub example: &'static [&'static str],
}

/// Applies an option's value to the parser's state `S`: `(state, spelling, value)`.
pub type Setter<S> = fn(&mut S, &'static str, &OsStr) -> Result<(), UsageError>;

/// What an option does.
#[derive(Clone, Copy)]
pub enum Action<S> {
    /// Changes the state.
    Set(Setter<S>),
    /// Print the help and stop.
    Help,
    /// Print the version and stop.
    Version,
    /// A valkey-benchmark option respbench does not implement yet: its value (if any) is
    /// consumed so the rest of the line still parses, then the invocation is refused.
    NotYet,
    /// An option that only exists in some valkey-benchmark builds (RDMA); refused the same way.
    NotInThisBuild,
}

/// One option: its description and its action.
#[derive(Clone, Copy)]
pub struct Flag<S> {
    pub doc: Doc,
    pub action: Action<S>,
}

impl<S> Flag<S> {
    /// An option with `value`, described in the help by `usage` and `help`.
    pub const fn new(
        names: &'static [&'static str],
        value: Value,
        usage: &'static str,
        help: &'static str,
        action: Action<S>,
    ) -> Self {
        Flag {
            doc: Doc {
                names,
                value,
                secret: None,
                usage,
                help,
                example: &[],
            },
            action,
        }
    }

    /// A switch that sets something.
    pub const fn switch(
        names: &'static [&'static str],
        usage: &'static str,
        help: &'static str,
        set: Setter<S>,
    ) -> Self {
        Self::new(names, Value::None, usage, help, Action::Set(set))
    }

    /// `--help`, `-h`: a subcommand's "this help" (the same entry in every subcommand's table).
    pub const fn help() -> Self {
        Self::new(
            &["--help", "-h"],
            Value::None,
            "--help",
            "this help",
            Action::Help,
        )
    }

    /// `--help` alone, where `-h` is the host (the main command line, `replay`, `capture`).
    pub const fn long_help() -> Self {
        Self::new(
            &["--help"],
            Value::None,
            "--help",
            "Print this help and exit",
            Action::Help,
        )
    }

    /// An option whose value sets something.
    pub const fn value(
        names: &'static [&'static str],
        value: Value,
        usage: &'static str,
        help: &'static str,
        set: Setter<S>,
    ) -> Self {
        Self::new(names, value, usage, help, Action::Set(set))
    }

    /// Marks the value as a password (the whole value is secret).
    pub const fn secret(self) -> Self {
        self.secret_as(SecretValue::Password)
    }

    /// Marks where the value may hold a secret (a URI's userinfo, a command's arguments).
    pub const fn secret_as(mut self, kind: SecretValue) -> Self {
        self.doc.secret = Some(kind);
        self
    }

    /// A command line using the option that parses and changes what the option changes.
    pub const fn example(mut self, argv: &'static [&'static str]) -> Self {
        self.doc.example = argv;
        self
    }
}

/// An option's value as UTF-8 text, or the one-line complaint naming `what` it is (`--label`,
/// `an argument`): the subcommands' options hold names and paths they print back.
pub fn utf8(v: &OsStr, what: &str) -> Result<String, UsageError> {
    v.to_str()
        .map(str::to_owned)
        .ok_or_else(|| UsageError(format!("{what} is not valid UTF-8")))
}

/// The entry `name` is a spelling of, in `tables` (searched in order).
pub fn find<'t, S>(tables: &[&'t [Flag<S>]], name: &str) -> Option<(&'static str, &'t Flag<S>)> {
    tables.iter().flat_map(|t| t.iter()).find_map(|f| {
        f.doc
            .names
            .iter()
            .find(|n| **n == name)
            .map(|&spelling| (spelling, f))
    })
}

/// Parses a subcommand's arguments with `table`: options anywhere, lexed by lexopt (`--opt=v`,
/// `-ov`), every other argument handed to `positional`. `Ok(true)` when the help was asked for
/// (parsing stops there). An unknown option is refused with lexopt's words and `see` appended
/// (`; see respbench compare --help`).
pub fn parse_subcommand<S>(
    table: &[Flag<S>],
    argv: Vec<OsString>,
    st: &mut S,
    positional: impl FnMut(&mut S, OsString) -> Result<(), String>,
    see: &str,
) -> Result<bool, String> {
    parse_subcommand_sharing(table, argv, st, positional, |_, _, _| None, see)
}

/// Takes an option's value from the command line (for [`parse_subcommand_sharing`]'s `shared`).
pub type ValueOf<'a> = dyn FnMut() -> Result<OsString, String> + 'a;

/// [`parse_subcommand`], with `shared` asked about every option `table` does not have: it applies
/// the option spelled so (taking its value from the given function) and answers `Some`, or
/// answers `None` for an unknown option. How `replay` and `capture` take the main table's
/// connection entries (`cli::connection`) without copies of them.
pub fn parse_subcommand_sharing<S>(
    table: &[Flag<S>],
    argv: Vec<OsString>,
    st: &mut S,
    mut positional: impl FnMut(&mut S, OsString) -> Result<(), String>,
    mut shared: impl FnMut(&mut S, &str, &mut ValueOf<'_>) -> Option<Result<(), String>>,
    see: &str,
) -> Result<bool, String> {
    let mut p = lexopt::Parser::from_args(argv);
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let spelling = match &arg {
            lexopt::Arg::Short(c) => format!("-{c}"),
            lexopt::Arg::Long(l) => format!("--{l}"),
            lexopt::Arg::Value(v) => {
                positional(st, v.clone())?;
                continue;
            }
        };
        let Some((name, flag)) = find(&[table], &spelling) else {
            let unknown = format!("{}; {see}", arg.unexpected());
            let mut value = || p.value().map_err(|e| e.to_string());
            match shared(st, &spelling, &mut value) {
                Some(applied) => {
                    applied?;
                    continue;
                }
                None => return Err(unknown),
            }
        };
        match flag.action {
            Action::Set(set) => {
                let value = if flag.doc.value.taken() {
                    p.value().map_err(|e| e.to_string())?
                } else {
                    OsString::new()
                };
                set(st, name, &value).map_err(|e| e.0)?;
            }
            Action::Help => return Ok(true),
            Action::Version | Action::NotYet | Action::NotInThisBuild => {
                return Err(format!("{name} is not supported here; {see}"));
            }
        }
    }
    Ok(false)
}

/// The help lines of `docs` (those with a usage), each usage `indent` spaces in and its text at
/// column `column`; a usage too long for that gets a line of its own. Ends with a newline.
pub fn help_block<'d>(
    docs: impl IntoIterator<Item = &'d Doc>,
    indent: usize,
    column: usize,
) -> String {
    let mut out = String::new();
    for doc in docs.into_iter().filter(|d| !d.usage.is_empty()) {
        let mut lines = doc.help.lines();
        out.push_str(&" ".repeat(indent));
        out.push_str(doc.usage);
        if indent + doc.usage.len() < column {
            out.push_str(&" ".repeat(column - indent - doc.usage.len()));
        } else {
            out.push('\n');
            out.push_str(&" ".repeat(column));
        }
        out.push_str(lines.next().unwrap_or(""));
        out.push('\n');
        for line in lines {
            out.push_str(&" ".repeat(column));
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn noop(_: &mut (), _: &'static str, _: &OsStr) -> Result<(), UsageError> {
        Ok(())
    }

    #[test]
    fn help_block_lays_out_short_and_long_usages() {
        let table: [Flag<()>; 3] = [
            Flag::switch(&["-q"], "-q", "Quiet\nvery", noop),
            Flag::value(&["--long-one"], Value::Text, "--long-one <x>", "Long", noop),
            Flag::value(&["--sentinel-password"], Value::Text, "", "", noop).secret(),
        ];
        let docs = table.iter().map(|f| &f.doc);
        assert_eq!(
            help_block(docs, 1, 10),
            " -q       Quiet\n          very\n --long-one <x>\n          Long\n"
        );
        assert_eq!(
            find(&[&table], "--sentinel-password").unwrap().1.doc.secret,
            Some(SecretValue::Password)
        );
        assert!(find(&[&table], "--nope").is_none());
    }
}
