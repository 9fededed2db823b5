//! The memory-per-key options (issue 26 item 2): `--memory-per-key` reads the server's memory
//! and keys around every test and reports what each key added cost; `--fill` makes the tests a
//! load phase that writes every key of the `-r` range exactly once, as fast as possible, and
//! implies it.
//!
//! Kept apart from the main table (`flags/`) so the entries and their plain values sit together;
//! `plan` checks them against the rest of the line.

use super::flag::Flag;
use super::state::State;

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// The memory options as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryArgs {
    /// `--memory-per-key`.
    pub per_key: bool,
    /// `--fill`.
    pub fill: bool,
}

/// The entries, in help order.
pub(super) const FLAGS: &[Flag<State>] = &[
    F::switch(
        &["--fill"],
        "--fill",
        "Load phase: each test writes every key of the -r range\n\
         exactly once (in order, split over the connections, and\n\
         over the nodes with --cluster), as fast as possible, with\n\
         the value sizes asked; implies --memory-per-key. Needs -r;\n\
         not with -n, --duration, --rps or a key pattern",
        |st, _, _| {
            st.args.memory.fill = true;
            Ok(())
        },
    )
    .example(&["-t", "set", "-r", "100000", "-d", "100", "--fill"]),
    F::switch(
        &["--memory-per-key"],
        "--memory-per-key",
        "Read the server's INFO memory and keyspace before and after\n\
         each test (after it finished rehashing) and report bytes\n\
         per key added and the overhead over the payload, for\n\
         used_memory, used_memory_rss and the dataset figure, with\n\
         the allocator and version beside them",
        |st, _, _| {
            st.args.memory.per_key = true;
            Ok(())
        },
    )
    .example(&["-t", "set", "-r", "1000", "--memory-per-key"]),
];
