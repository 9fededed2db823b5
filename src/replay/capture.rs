//! `respbench capture -o TRACE`: records a live server's traffic with `MONITOR` into a trace
//! (`crate::trace`'s format, written by its one `Writer`, which redacts every password).
//!
//! MONITOR's costs are the server's: it formats every command for the monitor, and a MONITOR
//! client has no output-buffer limit, so a capture that falls behind grows the production
//! server's memory. So a second connection reads the capture connection's backlog and the
//! capture stops, with a message saying so, past `--max-backlog` (`capture_node`). The capture
//! connection is its own (never a benchmark's).
//!
//! This file is the subcommand: its options, help, and a capture of one server or
//! (`capture_cluster`) of every primary.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::cli::UsageError;
use crate::cli::connection;
use crate::cli::flag::{self, Doc, Flag};
use crate::trace::Writer;

use super::capture_node::{CaptureArgs, Ended, backlog_message, io, monitor, why};

type F = Flag<CaptureArgs>;

fn bad(flag: &str, v: &OsStr, want: &str) -> UsageError {
    UsageError(format!("{flag} {:?}: expected {want}", v.to_string_lossy()))
}

/// `capture`'s options, one entry each.
pub const OPTIONS: &[F] = &[
    F::value(
        &["-o", "--output"],
        flag::Value::File("the trace's file"),
        "-o, --output <file>",
        "Write the trace here (- for stdout)",
        |a, _, v| {
            a.out = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["-o", "t.trace"]),
    F::value(
        &["--duration"],
        flag::Value::Text,
        "--duration <s>",
        "Stop after s seconds (default: at Ctrl-C)",
        |a, f, v| {
            match v.to_str().and_then(|s| s.parse::<f64>().ok()) {
                Some(s) if s > 0.0 && s <= 1e7 => a.duration = Some(Duration::from_secs_f64(s)),
                _ => return Err(bad(f, v, "seconds above 0")),
            }
            Ok(())
        },
    )
    .example(&["--duration", "600", "-o", "t.trace"]),
    F::value(
        &["--max-backlog"],
        flag::Value::Text,
        "--max-backlog <mb>",
        "Stop when the server holds more than this many MiB of\nunsent MONITOR output for the capture (default 64)",
        |a, f, v| {
            match v.to_str().and_then(|s| s.parse::<u64>().ok()) {
                Some(mb) if (1..=1 << 20).contains(&mb) => a.max_backlog = mb << 20,
                _ => return Err(bad(f, v, "MiB from 1")),
            }
            Ok(())
        },
    )
    .example(&["--max-backlog", "16", "-o", "t.trace"]),
    F::switch(
        &["--cluster"],
        "--cluster",
        "The server is a cluster node: capture every primary at once\n\
         (a MONITOR each), merged by time into the one trace at the end",
        |a, _, _| {
            a.cluster = true;
            Ok(())
        },
    )
    .example(&["--cluster", "-p", "7000", "-o", "t.trace"]),
    F::long_help(),
];

const HELP_HEAD: &str = "\
Usage: respbench capture -o <trace> [options]

Records a server's traffic with MONITOR into a trace for respbench replay:
each command with its time, client and database. Passwords (AUTH, HELLO,
CONFIG SET, ACL) are never written. MONITOR costs the server throughput (see
docs/replay.md for how much) and its output buffer has no limit: the capture
stops, saying so, when the server holds more than --max-backlog for it.
Times are when the server ran each command, not when the client sent it.
Ends after --duration or at Ctrl-C (exit 0 either way, the trace complete).
With --cluster, every primary is captured at once and the one trace holds them
all, merged by time (respbench replay --cluster replays it).

Options:
";

/// `capture`'s shape: the shared connection entries, then its own options.
const CAPTURE: connection::Subcommand<CaptureArgs> = connection::Subcommand {
    name: "capture",
    own: OPTIONS,
    conn: |a| &mut a.conn,
};

/// Every option of `capture`, in help order: the shared connection entries, then its own.
pub fn docs() -> Vec<&'static Doc> {
    CAPTURE.docs()
}

/// `respbench capture --help`.
pub fn help_text() -> String {
    CAPTURE.help_text(HELP_HEAD, "")
}

/// The arguments after `capture`; `Ok(None)` when the help was asked for.
pub fn parse(argv: Vec<OsString>) -> Result<Option<CaptureArgs>, String> {
    let see = CAPTURE.see();
    let unexpected = |_: &mut CaptureArgs, v| Err(format!("unexpected argument {v:?} ({see})"));
    let Some(a) = CAPTURE.parse(argv, unexpected)? else {
        return Ok(None);
    };
    match &a.out {
        None => return Err(format!("-o FILE is required (- for stdout; {see})")),
        Some(o) if a.cluster && crate::cli::is_stdout(o) => {
            return Err(format!(
                "--cluster writes each primary's part beside the trace and merges them at the \
                 end: give -o a file, not - ({see})"
            ));
        }
        Some(_) => {}
    }
    super::connect::check(&a.conn)?;
    Ok(Some(a))
}

/// The subcommand's entry point: `args` are the arguments after `capture`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let a = match parse(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{}", help_text());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("respbench capture: {e}");
            return ExitCode::from(2);
        }
    };
    match capture(&a) {
        Ok(message) => {
            eprintln!("respbench capture: {message}");
            ExitCode::SUCCESS
        }
        Err((code, message)) => {
            eprintln!("respbench capture: {message}");
            ExitCode::from(code)
        }
    }
}

fn capture(a: &CaptureArgs) -> Result<String, (u8, String)> {
    let target = super::connect::target(&a.conn, "capture").map_err(io)?;
    let out_path = a.out.clone().expect("checked by parse");
    let stop = super::signals().0;
    if a.cluster {
        return super::capture_cluster::capture(a, &target, &out_path, &stop);
    }
    let sink: Box<dyn Write> = if crate::cli::is_stdout(&out_path) {
        Box::new(std::io::stdout())
    } else {
        Box::new(File::create(&out_path).map_err(|e| {
            (
                1,
                format!("cannot write the trace {}: {e}", out_path.display()),
            )
        })?)
    };
    let mut writer = Writer::new(BufWriter::new(sink)).map_err(io)?;
    eprintln!(
        "respbench capture: MONITOR on {} (it costs the server throughput; see docs/replay.md)",
        target.display()
    );
    let started = Instant::now();
    match monitor(a, &target, &mut writer, &stop)? {
        (Ended::Backlog(omem), seq) => Err((
            1,
            backlog_message(
                "the server",
                omem,
                a,
                &format!("{seq} commands were written to {}", out_path.display()),
            ),
        )),
        (Ended::Stopped, seq) => Ok(format!(
            "{seq} commands in {:.1} s written to {} (stopped by {})",
            started.elapsed().as_secs_f64(),
            out_path.display(),
            why(a, started)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        for f in OPTIONS {
            if !f.doc.example.is_empty() {
                let argv = f.doc.example.iter().map(OsString::from).collect();
                assert!(parse(argv).is_ok(), "{:?}", f.doc.example);
            }
        }
        assert!(parse(vec![]).is_err());
        let to_stdout = parse(["--cluster", "-o", "-"].map(OsString::from).to_vec());
        assert!(to_stdout.unwrap_err().contains("give -o a file"));
    }
}
