//! memtier's `--monitor-input`: `--command=__monitor_lineN__` is the Nth command of a
//! `valkey-cli monitor` / `redis-cli monitor` capture, read with the one trace reader
//! (`crate::trace`, as `replay` reads it); `__monitor_line@__` becomes one mix command per line
//! of the file, each of weight 1: sent in order (`S`, the mix's cycle) or drawn (`R`).
//!
//! Done before the plan is made: the file is read once, bounded by the reader's entry cap and by
//! [`MAX_LINES`], and the `--command`s get the commands' arguments as typed.

use std::path::Path;

use crate::cli::{Args, CommandArg};
use crate::memtier::cli::MemtierOptions;

/// The most commands read from a capture: `__monitor_line@__` makes a mix of them, and a mix
/// holds at most 256 commands.
pub const MAX_LINES: usize = 256;

const PREFIX: &[u8] = b"__monitor_line";

/// The longest line read from a capture (a command with a large value fits; a file that is not
/// text ends with one line rather than unbounded memory).
const MAX_LINE: usize = crate::trace::MAX_ENTRY;

/// Replaces `__monitor_line…__` commands in `args` with the capture's commands. `Err` is one
/// line: a usage mistake (exit 2) or the file's problem.
pub fn resolve(args: &mut Args, opts: &MemtierOptions) -> Result<(), String> {
    let named = |c: &CommandArg| c.args.len() == 1 && c.args[0].starts_with(PREFIX);
    let wanted = args.workload.commands.iter().any(named);
    let Some(path) = &opts.monitor_input else {
        return match wanted {
            true => Err("__monitor_line…__ needs --monitor-input FILE".into()),
            false => Ok(()),
        };
    };
    if !wanted {
        return Err(
            "--monitor-input needs --command=__monitor_lineN__ or __monitor_line@__".into(),
        );
    }
    let lines = read(path)?;
    let mut out = Vec::new();
    for c in std::mem::take(&mut args.workload.commands) {
        if !named(&c) {
            out.push(c);
            continue;
        }
        // memtier's own check: the placeholder ends right after its `__`.
        let invalid = || {
            format!(
                "--command {}: invalid monitor placeholder: expected __monitor_lineN__ (N from 1) or __monitor_line@__",
                String::from_utf8_lossy(&c.args[0])
            )
        };
        let which = c.args[0][PREFIX.len()..]
            .strip_suffix(b"__")
            .ok_or_else(invalid)?;
        if which == b"@" {
            out.extend(lines.iter().map(|l| CommandArg {
                args: l.clone(),
                ..c.clone()
            }));
            continue;
        }
        let n: usize = std::str::from_utf8(which)
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|n| *n >= 1)
            .ok_or_else(invalid)?;
        let line = lines.get(n - 1).ok_or_else(|| {
            format!(
                "--command __monitor_line{n}__: {} has {} commands",
                path.display(),
                lines.len()
            )
        })?;
        out.push(CommandArg {
            args: line.clone(),
            ..c
        });
    }
    args.workload.commands = out;
    Ok(())
}

/// The capture's commands, read as memtier reads them: each line's command starts at its first
/// `"` (whatever comes before: a time and client, a proxy's `[ proxy60 ]` tag); a line without
/// one is not a command; a line whose arguments do not parse is skipped with memtier's warning
/// (memtier skips it when its turn comes). Script lines (`[0 lua]`) are left out: the `EVAL`
/// that ran them is there. Bounded: at most [`MAX_LINES`] commands, lines of at most
/// [`MAX_LINE`] bytes (`crate::trace::MAX_ENTRY`, the trace reader's bound).
fn read(path: &Path) -> Result<Vec<Vec<Vec<u8>>>, String> {
    use std::io::{BufRead, Read};
    let name = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("--monitor-input {name}: {e}"))?;
    let mut input = std::io::BufReader::new(file);
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        line.clear();
        let n = Read::take(&mut input, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("--monitor-input {name}: {e}"))?;
        if n == 0 {
            break;
        }
        total += 1;
        if line.len() > MAX_LINE {
            return Err(format!(
                "--monitor-input {name}: line {total} is longer than {MAX_LINE} bytes"
            ));
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let Some(quote) = text.iter().position(|&b| b == b'"') else {
            continue;
        };
        if text[..quote].ends_with(b" lua] ") {
            continue;
        }
        let mut args = Vec::new();
        if crate::trace::parse_monitor_args(&text[quote..], &mut args).is_err() || args.is_empty() {
            eprintln!(
                "warning: skipping malformed monitor command at line {total}: {}",
                String::from_utf8_lossy(&text[quote..])
            );
            continue;
        }
        if lines.len() == MAX_LINES {
            return Err(format!(
                "--monitor-input {name}: more than {MAX_LINES} commands (respbench mixes at most {MAX_LINES})"
            ));
        }
        lines.push(args);
    }
    if lines.is_empty() {
        return Err(format!("--monitor-input {name}: no commands in it"));
    }
    eprintln!(
        "Loaded {} monitor commands from {total} total lines",
        lines.len()
    );
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::memtier::cli::{MemtierInvocation, parse};

    fn resolved(file: &str, command: &str) -> Result<Vec<Vec<Vec<u8>>>, String> {
        let dir = std::env::temp_dir().join(format!("respbench-monitor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // One file per call: the tests run in parallel.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("m{n}.txt"));
        std::fs::write(&path, file).unwrap();
        let argv = [
            format!("--monitor-input={}", path.display()),
            format!("--command={command}"),
        ];
        let Ok(MemtierInvocation::Run(mut args, opts)) =
            parse(argv.iter().map(OsString::from), None)
        else {
            panic!("parse")
        };
        let r = resolve(&mut args, &opts);
        std::fs::remove_file(&path).unwrap();
        r.map(|()| args.workload.commands.into_iter().map(|c| c.args).collect())
    }

    const CAPTURE: &str = "OK\n\
        1732500000.000001 [0 127.0.0.1:5000] \"SET\" \"k1\" \"v 1\"\n\
        1732500000.000002 [0 lua] \"GET\" \"inner\"\n\
        1732500000.000003 [0 127.0.0.1:5000] \"GET\" \"k1\"\n";

    #[test]
    fn a_numbered_line_is_that_command_and_at_is_every_command() {
        let one = resolved(CAPTURE, "__monitor_line2__").unwrap();
        assert_eq!(one, vec![vec![b"GET".to_vec(), b"k1".to_vec()]]);
        let all = resolved(CAPTURE, "__monitor_line@__").unwrap();
        assert_eq!(all.len(), 2, "the script's line is left out");
        assert_eq!(all[0][2], b"v 1");
    }

    #[test]
    fn out_of_range_and_empty_captures_are_one_line() {
        let e = resolved(CAPTURE, "__monitor_line3__").unwrap_err();
        assert!(e.contains("has 2 commands"), "{e}");
        let e = resolved("OK\n", "__monitor_line1__").unwrap_err();
        assert!(e.starts_with("--monitor-input"), "{e}");
    }
}
