//! The memory-per-key options (issue 26 item 2): `--memory-per-key` reads the server's memory
//! and keys around every test and reports what each key added cost; `--fill` makes the tests a
//! load phase that writes every key of the `-r` range exactly once, as fast as possible, and
//! implies it.
//!
//! Memory per key's part of the main option table (installed by the registry,
//! `cli::ModeArgs`). Options of the benchmark mode, not a mode of their own: `plan/fill.rs` and
//! `plan::conflicts` read them through `Args::asks` and check them against the rest of the line.

use crate::cli::flag::Flag;
use crate::cli::{ModeArgs, Place, State, UsageError};

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

impl ModeArgs for MemoryArgs {
    const FLAGS: &'static [Flag<State>] = FLAGS;
    const PLACE: Place = Place::Own;

    /// `--fill` walks the range once: a `-n` given contradicts it.
    fn check(st: &mut State) -> Result<(), UsageError> {
        if st.was_given("-n") && st.args.mode::<MemoryArgs>().fill {
            return Err(UsageError(
                "--fill writes every key of -r once: -n does not apply".to_owned(),
            ));
        }
        Ok(())
    }

    fn asks(&self, name: &str) -> bool {
        match name {
            "--fill" => self.fill,
            "--memory-per-key" => self.per_key,
            _ => false,
        }
    }
}

/// The entries, in help order.
const FLAGS: &[Flag<State>] = &[
    F::switch(
        &["--fill"],
        "--fill",
        "Load phase: each test writes every key of the -r range\n\
         exactly once (in order, split over the connections, and\n\
         over the nodes with --cluster), as fast as possible, with\n\
         the value sizes asked; implies --memory-per-key. Needs -r;\n\
         not with -n, --duration, --rps or a key pattern",
        |st, _, _| {
            st.args.mode_mut::<MemoryArgs>().fill = true;
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
            st.args.mode_mut::<MemoryArgs>().per_key = true;
            Ok(())
        },
    )
    .example(&["-t", "set", "-r", "1000", "--memory-per-key"]),
];
