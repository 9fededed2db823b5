//! memtier's imported-data options: `--data-import=FILE`, `--data-verify`, `--verify-only`,
//! `--generate-keys`, `--no-expiry`, as table entries, and memtier's rules for combining them
//! (checked when the line is complete, as memtier checks them before it reads the file): the
//! file gives the values (no `-d`, `--data-size-range`/`--data-size-list`, `-R`), and the keys
//! unless `--generate-keys` (no `--key-minimum`/`--key-maximum`/`--key-prefix` without it);
//! the others need `--data-import`; no `--cluster-mode` (memtier refuses it too). respbench also
//! refuses `--command` with it (the file feeds the `--ratio`'s SETs and GETs).
//!
//! The file itself is read by `plan` (this module opens nothing).

use std::path::PathBuf;

use super::{MemtierState, Requests, UsageError};
use crate::cli::flag::{Flag, Value};
use crate::cli::{ImportArgs, KeyDist};

type M = Flag<MemtierState>;

/// The options as given, in any order; [`finish`] checks and applies them.
#[derive(Debug, Default)]
pub(in crate::memtier) struct ImportFlags {
    path: Option<PathBuf>,
    verify: bool,
    verify_only: bool,
    generate_keys: bool,
    no_expiry: bool,
}

impl ImportFlags {
    /// `--data-import` without `--generate-keys`: the keys are the file's.
    pub(super) fn file_keys(&self) -> bool {
        self.path.is_some() && !self.generate_keys
    }
}

pub(super) const DATA_IMPORT: M = M::value(
    &["--data-import"],
    Value::File("a memtier import file"),
    "--data-import=FILE",
    "SET the keys and values of memtier's import CSV (dumpflags,\n..., nkey, key, data), in file order",
    |st, _, v| {
        st.import.path = Some(PathBuf::from(v));
        Ok(())
    },
)
.example(&["--data-import=dump.csv", "--ratio=1:0"]);

pub(super) const DATA_VERIFY: M = M::switch(
    &["--data-verify"],
    "--data-verify",
    "After the test, GET the keys written and compare their values",
    |st, _, _| {
        st.import.verify = true;
        Ok(())
    },
)
.example(&["--data-import=dump.csv", "--data-verify"]);

pub(super) const VERIFY_ONLY: M = M::switch(
    &["--verify-only"],
    "--verify-only",
    "Only the --data-verify pass, no test",
    |st, _, _| {
        st.import.verify_only = true;
        Ok(())
    },
)
.example(&["--data-import=dump.csv", "--verify-only"]);

pub(super) const GENERATE_KEYS: M = M::switch(
    &["--generate-keys"],
    "--generate-keys",
    "Keys from the key options (memtier-N), values from the file",
    |st, _, _| {
        st.import.generate_keys = true;
        Ok(())
    },
)
.example(&["--data-import=dump.csv", "--generate-keys"]);

pub(super) const NO_EXPIRY: M = M::switch(
    &["--no-expiry"],
    "--no-expiry",
    "Leave out the file's expiry times (plain SETs)",
    |st, _, _| {
        st.import.no_expiry = true;
        Ok(())
    },
)
.example(&["--data-import=dump.csv", "--no-expiry"]);

/// Checks the options together and sets the run's `MemtierData::import`; with the file's keys,
/// SETs walk the items in order (memtier reads the file line after line) while GETs keep their
/// pattern, over the items the plan counts.
pub(super) fn finish(st: &mut MemtierState) -> Result<(), UsageError> {
    let f = std::mem::take(&mut st.import);
    let fail = |m: &str| Err(UsageError(m.to_string()));
    let Some(path) = f.path else {
        let given = [
            (f.verify, "--data-verify"),
            (f.verify_only, "--verify-only"),
            (f.generate_keys, "--generate-keys"),
            (f.no_expiry, "--no-expiry"),
        ];
        return match given.iter().find(|g| g.0) {
            Some((_, name)) => Err(UsageError(format!("{name} needs --data-import FILE"))),
            None => Ok(()),
        };
    };
    let m = &st.main;
    if ["-d", "--data-size-range", "--data-size-list"]
        .iter()
        .any(|n| m.was_given(n))
    {
        return fail(
            "--data-import takes the value sizes from the file: no -d, --data-size-range or --data-size-list",
        );
    }
    let data = m.args.workload.memtier.clone().unwrap_or_default();
    if data.random_data {
        return fail("--data-import takes the values from the file: no --random-data");
    }
    if m.args.cluster {
        return fail("--data-import is not supported with --cluster-mode (memtier refuses it too)");
    }
    if !m.args.workload.commands.is_empty() {
        return fail("--data-import feeds the --ratio's SETs and GETs, not --command lines");
    }
    let key_options = ["--key-minimum", "--key-maximum", "--key-prefix"];
    if !f.generate_keys && key_options.iter().any(|n| m.was_given(n)) {
        return fail(
            "--key-minimum, --key-maximum and --key-prefix need --generate-keys with --data-import (the keys are the file's)",
        );
    }
    let all_items = !f.generate_keys && st.opts.requests == Requests::AllKeys;
    let w = &mut st.main.args.workload;
    if !f.generate_keys {
        // SETs write the items in file order; GETs keep their half of --key-pattern.
        w.get_key_dist = w.get_key_dist.or(w.key_dist).or(Some(KeyDist::Uniform));
        w.key_dist = Some(KeyDist::Sequential);
    }
    w.memtier.get_or_insert_default().import = Some(ImportArgs {
        path,
        generate_keys: f.generate_keys,
        no_expiry: f.no_expiry,
        verify: f.verify || f.verify_only,
        verify_only: f.verify_only,
        all_items,
    });
    Ok(())
}
