//! One node's capture by `MONITOR`, and the options every capture runs with. MONITOR's costs
//! are the server's, and a MONITOR client has no output-buffer limit, so a second connection
//! reads the capture connection's backlog (`CLIENT LIST ID`, its `omem`) every [`WATCH_EVERY`]
//! and the capture stops past `--max-backlog`. Apart from `capture` (the subcommand) so that a
//! single server's capture and `capture_cluster`'s (one per primary) share it without importing
//! each other.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use resp::Value;

use crate::cli::connection::ConnectionArgs;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_list_fields_are_read() {
        let line = "id=7 addr=127.0.0.1:5 fd=8 name= age=1 omem=20504 tot-mem=22";
        assert_eq!(client_field(line, "omem"), Some("20504"));
        assert_eq!(client_field(line, "mem"), None);
    }
}
