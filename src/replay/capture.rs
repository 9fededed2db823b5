//! `respbench capture -o TRACE`: records a live server's traffic with `MONITOR` into a trace
//! (`crate::trace`'s format, written by its one `Writer`, which redacts every password).
//!
//! MONITOR's costs are the server's: it formats every command for the monitor, and a MONITOR
//! client has no output-buffer limit, so a capture that falls behind grows the production
//! server's memory. So a second connection reads the capture connection's backlog (`CLIENT
//! LIST ID`, its `omem`) every [`WATCH_EVERY`] and the capture stops, with a message saying so,
//! past `--max-backlog`. The capture connection is its own (never a benchmark's).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use resp::Value;

use crate::cli::UsageError;
use crate::cli::connection::{self, ConnectionArgs};
use crate::cli::flag::{self, Action, Doc, Flag, help_block, parse_subcommand_sharing};
use crate::engine::Target;
use crate::engine::control::ControlConn;
use crate::trace::{Entry, Writer, parse_monitor_line};

/// How often the capture connection's backlog is read.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// `capture`'s options as given.
#[derive(Clone, Debug)]
pub struct CaptureArgs {
    /// Where the server is, the capture connection's credentials and TLS: the main command
    /// line's own entries (`cli::connection`).
    pub conn: ConnectionArgs,
    pub out: Option<PathBuf>,
    pub duration: Option<Duration>,
    pub max_backlog: u64,
    /// `--cluster`: every primary of the cluster captured at once (`capture_cluster`).
    pub cluster: bool,
}

impl Default for CaptureArgs {
    fn default() -> Self {
        Self {
            conn: ConnectionArgs::default(),
            out: None,
            duration: None,
            max_backlog: 64 << 20,
            cluster: false,
        }
    }
}

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
    F::new(
        &["--help"],
        flag::Value::None,
        "--help",
        "Print this help and exit",
        Action::Help,
    ),
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

/// Every option of `capture`, in help order: the shared connection entries, then its own.
pub fn docs() -> Vec<&'static Doc> {
    connection::docs()
        .chain(OPTIONS.iter().map(|f| &f.doc))
        .collect()
}

/// `respbench capture --help`.
pub fn help_text() -> String {
    format!("{HELP_HEAD}{}", help_block(docs(), 1, 22))
}

/// The arguments after `capture`; `Ok(None)` when the help was asked for.
pub fn parse(argv: Vec<OsString>) -> Result<Option<CaptureArgs>, String> {
    let mut a = CaptureArgs::default();
    let see = "see respbench capture --help";
    let help = parse_subcommand_sharing(
        OPTIONS,
        argv,
        &mut a,
        |_, v| Err(format!("unexpected argument {v:?} ({see})")),
        |a, name, value| a.conn.apply(name, value),
        see,
    )?;
    if help {
        return Ok(None);
    }
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

/// `CLIENT LIST` line's `field=value`.
fn client_field<'a>(line: &'a str, field: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(field)?.strip_prefix('='))
}

pub(super) fn io(e: impl std::fmt::Display) -> (u8, String) {
    (1, e.to_string())
}

/// The server's unsent output for client `id` (`CLIENT LIST ID`'s `omem`), bytes.
fn backlog(watch: &mut ControlConn, id: i64) -> Result<u64, crate::engine::EngineError> {
    let id = id.to_string();
    let list = watch.call(&["CLIENT", "LIST", "ID", id.as_str()])?;
    let line = match &list {
        Value::BulkString(b) | Value::VerbatimString { text: b, .. } => {
            String::from_utf8_lossy(b).into_owned()
        }
        _ => String::new(),
    };
    Ok(client_field(&line, "omem")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// How one node's capture ended.
pub(super) enum Ended {
    /// `--duration`, Ctrl-C, or (`--cluster`) another node's capture stopping.
    Stopped,
    /// The server held this many bytes of MONITOR output unread, over `--max-backlog`.
    Backlog(u64),
}

/// One node's capture: `MONITOR` on a connection of its own, each line written to `writer`, the
/// backlog watched on a second connection, until `stop` or `--duration` (or the backlog bound).
/// Returns how it ended and the commands written.
pub(super) fn monitor<W: Write>(
    a: &CaptureArgs,
    target: &Target,
    writer: &mut Writer<W>,
    stop: &AtomicBool,
) -> Result<(Ended, u64), (u8, String)> {
    let auth = super::connect::auth(&a.conn);
    let node = |e: crate::engine::EngineError| (1, format!("{}: {e}", target.display()));
    let mut watch = ControlConn::connect_auth(target, auth.as_deref()).map_err(node)?;
    let mut mon = ControlConn::connect_auth(target, auth.as_deref()).map_err(node)?;
    let id = match mon.call(&["CLIENT", "ID"]).map_err(node)? {
        Value::Integer(id) => id,
        other => return Err((1, format!("CLIENT ID answered {other:?}"))),
    };
    if let Value::Error(e) = mon.call(&["MONITOR"]).map_err(node)? {
        return Err((
            1,
            format!(
                "MONITOR refused by {}: {}",
                target.display(),
                String::from_utf8_lossy(&e)
            ),
        ));
    }
    mon.set_timeout(Duration::from_millis(50)).map_err(node)?;
    let started = Instant::now();
    let mut next_watch = started;
    let mut entry = Entry::empty();
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) && a.duration.is_none_or(|d| started.elapsed() < d) {
        if Instant::now() >= next_watch {
            next_watch += WATCH_EVERY;
            let omem = backlog(&mut watch, id).map_err(node)?;
            if omem > a.max_backlog {
                writer.flush().map_err(io)?;
                return Ok((Ended::Backlog(omem), seq));
            }
        }
        let Some(value) = mon.wait_next().map_err(node)? else {
            // A pause in the traffic: the file catches up, so what was captured is on disk
            // (for `tail -f`, and for a capture killed later).
            writer.flush().map_err(io)?;
            continue;
        };
        let line: &[u8] = match &value {
            Value::SimpleString(s) => s,
            _ => continue,
        };
        // Lines that are not commands (`OK`) or not MONITOR's shape are not traffic.
        if !matches!(parse_monitor_line(line, &mut entry), Ok(true)) {
            continue;
        }
        seq += 1;
        entry.seq = seq;
        writer.write(&entry).map_err(io)?;
    }
    writer.flush().map_err(io)?;
    Ok((Ended::Stopped, seq))
}

/// The one-line message of a capture stopped by `--max-backlog`.
pub(super) fn backlog_message(who: &str, omem: u64, a: &CaptureArgs, kept: &str) -> String {
    format!(
        "stopped: {who} holds {} MiB of MONITOR output the capture has not read (over \
         --max-backlog {} MiB); the capture cannot keep up with this traffic, and a MONITOR \
         client's buffer has no limit. {kept}",
        omem >> 20,
        a.max_backlog >> 20,
    )
}

/// Why the capture ended, for its last line.
pub(super) fn why(a: &CaptureArgs, started: Instant) -> &'static str {
    match a.duration {
        Some(d) if started.elapsed() >= d => "--duration",
        _ => "Ctrl-C",
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
    fn options_parse_and_client_list_fields_are_read() {
        for f in OPTIONS {
            if !f.doc.example.is_empty() {
                let argv = f.doc.example.iter().map(OsString::from).collect();
                assert!(parse(argv).is_ok(), "{:?}", f.doc.example);
            }
        }
        assert!(parse(vec![]).is_err());
        let to_stdout = parse(["--cluster", "-o", "-"].map(OsString::from).to_vec());
        assert!(to_stdout.unwrap_err().contains("give -o a file"));
        let line = "id=7 addr=127.0.0.1:5 fd=8 name= age=1 omem=20504 tot-mem=22";
        assert_eq!(client_field(line, "omem"), Some("20504"));
        assert_eq!(client_field(line, "mem"), None);
    }
}
