//! The main command line's option table: one [`Flag`] entry per option (spellings, value,
//! secret or not, help text, how it applies, an example that parses), in valkey-benchmark's help
//! order. The parser, `--help`, the shell completions, the man page and the record's redaction
//! all read these entries, so a new option is added in one place.
//!
//! The entries live beside what they are about: valkey-benchmark's general options (`basic.rs`),
//! the transports (`tls.rs`), respbench's own (`own.rs`), live metrics (`live.rs`), the Sentinel options
//! (`cli/sentinel.rs`), the workload options (`cli/workloads.rs`, `cli/drift.rs`), and each mode's
//! in its folder, installed by the registry (`cli/mode_args.rs`).

mod basic;
mod live;
pub use live::metrics_address;
mod own;
mod tls;
pub(super) use tls::TRANSPORT;

use std::sync::OnceLock;

use super::flag::{self, Doc, Flag, SecretValue};
use super::mode_args::{self, Place};
use super::state::State;
use super::{drift, sentinel, workloads};

/// One part of the table: `cli`'s own entries, or the installed modes' whose place it is (in
/// the registry's order, `mode_args.rs`).
enum Part {
    Own(&'static [Flag<State>]),
    Modes(Place),
}

/// The table, as its parts in help order.
const LAYOUT: &[Part] = &[
    Part::Own(basic::ENDPOINT),
    Part::Own(basic::LOAD),
    Part::Own(basic::OUTPUT),
    Part::Modes(Place::Reference),
    Part::Own(tls::TRANSPORT),
    Part::Own(own::RECORD),
    Part::Own(live::LIVE),
    Part::Own(sentinel::FLAGS),
    Part::Own(own::SHARDS),
    Part::Own(workloads::FLAGS),
    Part::Modes(Place::Own),
    Part::Own(drift::FLAGS),
    Part::Own(own::SEARCH),
];

/// The table with the modes' entries in their places, made once.
fn table() -> &'static [&'static [Flag<State>]] {
    static TABLE: OnceLock<Vec<&'static [Flag<State>]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let kinds = mode_args::kinds();
        let mut parts = Vec::new();
        for part in LAYOUT {
            match part {
                Part::Own(flags) => parts.push(*flags),
                Part::Modes(place) => {
                    parts.extend(kinds.iter().filter(|k| k.place == *place).map(|k| k.flags))
                }
            }
        }
        parts
    })
}

/// Every entry, in help order.
pub(super) fn all() -> impl Iterator<Item = &'static Flag<State>> {
    table().iter().flat_map(|part| part.iter())
}

/// Every entry's description, in help order (for the completions and the man page).
pub fn docs() -> impl Iterator<Item = &'static Doc> {
    all().map(|f| &f.doc)
}

/// The entry spelled `name` (exact, case-sensitive) and that spelling.
pub(crate) fn find(name: &str) -> Option<(&'static str, &'static Flag<State>)> {
    flag::find(table(), name)
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
