//! The main command line's option table: one [`Flag`] entry per option (spellings, value,
//! secret or not, help text, how it applies, an example that parses), in valkey-benchmark's help
//! order. The parser, `--help`, the shell completions, the man page and the record's redaction
//! all read these entries, so a new option is added in one place.
//!
//! The entries live beside what they are about: valkey-benchmark's general options (`basic.rs`),
//! the transports (`tls.rs`), respbench's own (`own.rs`), live metrics (`live.rs`), the Sentinel options
//! (`cli/sentinel.rs`) and the workload options (`cli/workloads.rs`).

mod basic;
mod live;
pub use live::metrics_address;
mod own;
mod tls;
pub(super) use tls::TRANSPORT;

use super::flag::{self, Doc, Flag, SecretValue};
use super::state::State;
use super::{delivery, fuzz, memory, sentinel, storm, workloads};

/// The table, as its parts in help order.
pub(super) const TABLE: &[&[Flag<State>]] = &[
    basic::ENDPOINT,
    basic::LOAD,
    basic::OUTPUT,
    fuzz::FLAGS,
    tls::TRANSPORT,
    own::RECORD,
    live::LIVE,
    sentinel::FLAGS,
    own::SHARDS,
    workloads::FLAGS,
    storm::FLAGS,
    memory::FLAGS,
    delivery::FLAGS,
    own::SEARCH,
];

/// Every entry, in help order.
pub(super) fn all() -> impl Iterator<Item = &'static Flag<State>> {
    TABLE.iter().flat_map(|part| part.iter())
}

/// Every entry's description, in help order (for the completions and the man page).
pub fn docs() -> impl Iterator<Item = &'static Doc> {
    all().map(|f| &f.doc)
}

/// The entry spelled `name` (exact, case-sensitive) and that spelling.
pub(crate) fn find(name: &str) -> Option<(&'static str, &'static Flag<State>)> {
    flag::find(TABLE, name)
}

/// Whether the option spelled `name` (`-a`, `--rps`) takes a value; `None` for an unknown
/// spelling. The record uses it to find option values in argv (to redact `-a`'s).
pub fn takes_value(name: &str) -> Option<bool> {
    find(name).map(|(_, f)| f.doc.value.taken())
}

/// Where the option spelled `name` may carry a secret in its value (`None`: it never does, or
/// the spelling is unknown). From the table's `secret` mark, so a new secret option is covered
/// where it is added.
pub fn secret_value(name: &str) -> Option<SecretValue> {
    find(name).and_then(|(_, f)| f.doc.secret)
}
