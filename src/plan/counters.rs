//! `--check-counters`: which test is an INCR test, and the `SCAN MATCH` pattern of its keys.
//!
//! The check is a sum, not a per-key tally: every acknowledged `INCR` adds exactly one to the sum
//! of the counters, so `sum after - sum before` against the acknowledged count says how many
//! acknowledged increments are missing, with no work on the hot path. It needs every increment of
//! the test to be counted, so `--warmup` (sent, acknowledged, not counted) is refused.

use crate::cli::Args;

use super::Workload;

/// The INCR test to check and its keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterCheck {
    /// The test's title (`INCR` in the suite, the custom command's line otherwise).
    pub test: String,
    /// A `SCAN MATCH` pattern matching every key the test increments.
    pub pattern: Vec<u8>,
    /// `--dbnum`: where the keys are.
    pub db: u32,
}

/// The check `--check-counters` asks for, or why it cannot be done (a usage error).
pub fn check(args: &Args, workload: &Workload) -> Result<Option<CounterCheck>, String> {
    if !args.check_counters {
        return Ok(None);
    }
    let needs = "--check-counters needs an INCR test: -t incr, or a custom command INCR <key>";
    if args.cluster {
        return Err("--check-counters does not work with --cluster yet".to_string());
    }
    if args.warmup.is_some() {
        return Err(
            "--check-counters counts every increment: --warmup's would not be counted".to_string(),
        );
    }
    if args.dataset.is_some() {
        return Err(needs.to_string());
    }
    let (test, key): (String, &[u8]) = match workload {
        Workload::Suite(tests) => {
            if !tests.iter().any(|t| t.name == "incr") {
                return Err(needs.to_string());
            }
            ("INCR".to_string(), b"counter:__rand_int__")
        }
        Workload::Custom { title, .. } => match args.command.as_slice() {
            [cmd, key] if cmd.eq_ignore_ascii_case(b"incr") => (title.clone(), key.as_slice()),
            _ => return Err(needs.to_string()),
        },
        // A mix's INCRs are a share of its replies; the check counts a whole test's.
        Workload::Mix { .. } => return Err(needs.to_string()),
    };
    Ok(Some(CounterCheck {
        test,
        pattern: glob_of(key),
        db: args.dbnum,
    }))
}

/// The key with each `__rand_*__` placeholder as `*` and glob characters escaped.
fn glob_of(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 4);
    let mut i = 0;
    while i < key.len() {
        if key[i..].starts_with(b"__rand_")
            && let Some(end) = key[i + 7..].windows(2).position(|w| w == b"__")
        {
            let name = &key[i + 7..i + 7 + end];
            if !name.is_empty() && name.iter().all(u8::is_ascii_alphanumeric) {
                out.push(b'*');
                i += 7 + end + 2;
                continue;
            }
        }
        if matches!(key[i], b'*' | b'?' | b'[' | b']' | b'\\') {
            out.push(b'\\');
        }
        out.push(key[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_stars_and_glob_characters_are_escaped() {
        assert_eq!(glob_of(b"counter:__rand_int__"), b"counter:*");
        assert_eq!(glob_of(b"c:__rand_1st__:x"), b"c:*:x");
        assert_eq!(glob_of(b"a*b?[c]\\"), b"a\\*b\\?\\[c\\]\\\\");
        assert_eq!(glob_of(b"plain"), b"plain");
        assert_eq!(glob_of(b"__rand_"), b"__rand_");
    }
}
