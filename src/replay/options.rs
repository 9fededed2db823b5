//! `replay`'s options: one `cli::flag` entry each, so `--help`, the completions and the man page
//! are read from the same table as the parser.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::cli::UsageError;
use crate::cli::connection::{self, ConnectionArgs};
use crate::cli::flag::{self, Doc, Flag};

/// How fast the trace is replayed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    /// `--speed X`: the trace's gaps divided by X (1 = as recorded).
    Factor(f64),
    /// `--speed max`: no schedule, every command as soon as the connection can take it.
    Max,
}

impl Speed {
    /// The intended send time of a command `offset_us` into the (windowed) trace, in ns from the
    /// replay's start; `None` at `--speed max`. Rounded to the nanosecond: the one formula the
    /// live replay and `--dry-run` use, so the schedule a test checks is the one that ran.
    pub fn due_ns(self, offset_us: u64) -> Option<u64> {
        match self {
            Speed::Factor(x) => Some((offset_us as f64 * 1000.0 / x).round() as u64),
            Speed::Max => None,
        }
    }
}

/// What `replay` was asked to do.
#[derive(Clone, Debug)]
pub struct ReplayArgs {
    /// The traces, in the order given: several are merged by time (`trace::Merge`), e.g. one
    /// captured on each primary of a cluster.
    pub traces: Vec<PathBuf>,
    /// Where the target is, its credentials and TLS: the main command line's own entries
    /// (`cli::connection`). The trace's own AUTH commands are never sent; these are used.
    pub conn: ConnectionArgs,
    pub speed: Speed,
    pub loops: u32,
    /// `--start`/`--end`: the window, in µs from the trace's first entry.
    pub start_us: u64,
    pub end_us: Option<u64>,
    /// `--warmup-from`: commands before this offset (µs into the window) are sent, not measured.
    pub warmup_us: u64,
    /// `--connections N`: fold the trace's clients onto N connections.
    pub connections: Option<u32>,
    pub key_prefix: Option<Vec<u8>>,
    /// `--shard I/N`: only the clients whose hash falls in share I of N.
    pub shard: Option<(u64, u64)>,
    /// `--allow`: skipped-by-default commands to send anyway (upper case; `CONFIG SET` or `CONFIG`).
    pub allow: Vec<String>,
    pub threads: Option<usize>,
    /// `--cluster`: each command to the primary owning its keys' slot (`route.rs`).
    pub cluster: bool,
    pub dry_run: bool,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// `--journal`: where the journal goes (default: beside `--json FILE`; none with `--json -`).
    pub journal: Option<PathBuf>,
    pub quiet: bool,
    /// `--metrics-listen`: live metrics (`crate::live`) while the replay runs, and
    /// `--metrics-linger`: how long after it.
    pub metrics_listen: Option<std::net::SocketAddr>,
    pub metrics_linger: Option<std::time::Duration>,
    /// `--timeout`: a request unanswered this long fails as a timeout (the benchmark's rule).
    pub timeout: Option<std::time::Duration>,
    /// `-e`: error replies and lost connections are counted and the replay goes on (lost
    /// connections reopened with a backoff); without it, either ends the replay, as it ends a
    /// benchmark run.
    pub keep_going: bool,
    /// `--max-gap`: a quiet stretch of the trace longer than this is shortened to it (µs).
    pub max_gap_us: Option<u64>,
    /// `--gap-warn`: a quiet stretch longer than this is named on stderr (µs).
    pub gap_warn_us: u64,
}

/// `--gap-warn`'s default: a minute without a command is worth a word (a trace with a gap of
/// hours would otherwise sleep through it silently).
pub const GAP_WARN_DEFAULT_US: u64 = 60_000_000;

impl Default for ReplayArgs {
    fn default() -> Self {
        Self {
            traces: Vec::new(),
            conn: ConnectionArgs::default(),
            speed: Speed::Factor(1.0),
            loops: 1,
            start_us: 0,
            end_us: None,
            warmup_us: 0,
            connections: None,
            key_prefix: None,
            shard: None,
            allow: Vec::new(),
            threads: None,
            cluster: false,
            dry_run: false,
            json: None,
            html: None,
            journal: None,
            quiet: false,
            metrics_listen: None,
            metrics_linger: None,
            timeout: None,
            keep_going: false,
            max_gap_us: None,
            gap_warn_us: GAP_WARN_DEFAULT_US,
        }
    }
}

type F = Flag<ReplayArgs>;

fn text(v: &OsStr) -> &str {
    v.to_str().unwrap_or("")
}

fn bad(flag: &str, v: &OsStr, want: &str) -> UsageError {
    UsageError(format!("{flag} {:?}: expected {want}", v.to_string_lossy()))
}

/// Seconds as a float (0 allowed) → µs.
fn micros(flag: &str, v: &OsStr) -> Result<u64, UsageError> {
    match text(v).parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=1e9).contains(&s) => Ok((s * 1e6).round() as u64),
        _ => Err(bad(flag, v, "seconds (e.g. 1.5)")),
    }
}

fn count<T: std::str::FromStr + PartialOrd + From<u8>>(
    flag: &str,
    v: &OsStr,
) -> Result<T, UsageError> {
    match text(v).parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        _ => Err(bad(flag, v, "a whole number of 1 or more")),
    }
}

/// `replay`'s options, one entry each, in help order.
pub const OPTIONS: &[F] = &[
    F::value(
        &["--speed"],
        flag::Value::Text,
        "--speed <x|max>",
        "Time scale: 2 replays twice as fast, 0.5 half as fast;\nmax sends every command as soon as it can (default 1)",
        |a, f, v| {
            a.speed = match text(v) {
                "max" => Speed::Max,
                t => match t.parse::<f64>() {
                    Ok(x) if (0.001..=1e6).contains(&x) => Speed::Factor(x),
                    _ => return Err(bad(f, v, "a factor from 0.001 to 1000000, or max")),
                },
            };
            Ok(())
        },
    )
    .example(&["--speed", "3", "t.trace"]),
    F::value(
        &["--loop"],
        flag::Value::Text,
        "--loop <n>",
        "Replay the trace n times, each lap after the last (default 1)",
        |a, f, v| {
            a.loops = count(f, v)?;
            Ok(())
        },
    )
    .example(&["--loop", "3", "t.trace"]),
    F::value(
        &["--max-gap"],
        flag::Value::Text,
        "--max-gap <s>",
        "Shorten every quiet stretch of the trace longer than s\n\
         seconds to s (trace time, before --speed)",
        |a, name, v| {
            a.max_gap_us = Some(crate::cli::parse_seconds(name, v)?.as_micros() as u64);
            Ok(())
        },
    )
    .example(&["--max-gap", "5", "t.trace"]),
    F::value(
        &["--gap-warn"],
        flag::Value::Text,
        "--gap-warn <s>",
        "Name on stderr every quiet stretch of the trace longer\n\
         than s seconds (default 60)",
        |a, name, v| {
            a.gap_warn_us = crate::cli::parse_seconds(name, v)?.as_micros() as u64;
            Ok(())
        },
    )
    .example(&["--gap-warn", "10", "t.trace"]),
    F::value(
        &["--timeout"],
        flag::Value::Text,
        "--timeout <sec>",
        "A command unanswered this long (e.g. 2 or 0.5) fails as\n\
         \"timeout\" with the rest in flight on its connection (with\n\
         -e the replay goes on; without, it stops with a partial\n\
         report). Without it, replies are awaited 5 s after the end",
        |a, name, v| {
            a.timeout = Some(crate::cli::parse_seconds(name, v)?);
            Ok(())
        },
    )
    .example(&["--timeout", "0.5", "t.trace"]),
    F::switch(
        &["-e"],
        "-e",
        "Keep going on error replies and count them (by default an\n\
         error reply stops the replay); also on lost connections:\n\
         their commands fail by kind (reset, closed, refused,\n\
         timeout) and they are reopened with a backoff",
        |a, _, _| {
            a.keep_going = true;
            Ok(())
        },
    )
    .example(&["-e", "t.trace"]),
    F::value(
        &["--start"],
        flag::Value::Text,
        "--start <s>",
        "Skip the trace's first s seconds (a window's start)",
        |a, f, v| {
            a.start_us = micros(f, v)?;
            Ok(())
        },
    )
    .example(&["--start", "60", "t.trace"]),
    F::value(
        &["--end"],
        flag::Value::Text,
        "--end <s>",
        "Stop at s seconds into the trace (a window's end)",
        |a, f, v| {
            a.end_us = Some(micros(f, v)?);
            Ok(())
        },
    )
    .example(&["--end", "120", "t.trace"]),
    F::value(
        &["--warmup-from"],
        flag::Value::Text,
        "--warmup-from <s>",
        "Send the window's first s seconds without measuring them",
        |a, f, v| {
            a.warmup_us = micros(f, v)?;
            Ok(())
        },
    )
    .example(&["--warmup-from", "10", "t.trace"]),
    F::value(
        &["--connections"],
        flag::Value::Text,
        "--connections <n>",
        "Fold the trace's clients onto n connections (default: one\nconnection per client of the trace)",
        |a, f, v| {
            a.connections = Some(count(f, v)?);
            Ok(())
        },
    )
    .example(&["--connections", "50", "t.trace"]),
    F::value(
        &["--threads"],
        flag::Value::Text,
        "--threads <n>",
        "Threads the connections are spread over (default: cores)",
        |a, f, v| {
            a.threads = Some(count(f, v)?);
            Ok(())
        },
    )
    .example(&["--threads", "2", "t.trace"]),
    F::value(
        &["--key-prefix"],
        flag::Value::Text,
        "--key-prefix <p>",
        "Put p before every key, so a replay never writes the\ntarget's own keys",
        |a, _, v| {
            a.key_prefix = Some(v.as_encoded_bytes().to_vec());
            Ok(())
        },
    )
    .example(&["--key-prefix", "replay:", "t.trace"]),
    F::value(
        &["--shard"],
        flag::Value::Text,
        "--shard <i/n>",
        "Replay only share i of n of the trace's clients (each client\nwhole in one share; respbench merge adds the shards' records)",
        |a, _, v| {
            a.shard = Some(crate::cli::parse_shard(text(v))?);
            Ok(())
        },
    )
    .example(&["--shard", "0/2", "t.trace"]),
    F::value(
        &["--allow"],
        flag::Value::Text,
        "--allow <cmd,...>",
        "Send these destructive or admin commands too (FLUSHALL,\nCONFIG SET, ...); skipped and counted otherwise",
        |a, _, v| {
            for c in text(v).split(',').filter(|c| !c.trim().is_empty()) {
                a.allow.push(c.trim().replace('|', " ").to_ascii_uppercase());
            }
            Ok(())
        },
    )
    .example(&["--allow", "FLUSHDB,CONFIG SET", "t.trace"]),
    F::switch(
        &["--cluster"],
        "--cluster",
        "The target is a cluster node: each command goes to the\n\
         primary owning its keys' slot (one connection per client\n\
         and node); commands and MULTI/EXEC blocks whose keys span\n\
         slots are skipped and counted; MOVED/ASK are followed",
        |a, _, _| {
            a.cluster = true;
            Ok(())
        },
    )
    .example(&["--cluster", "-p", "7000", "t.trace"]),
    F::switch(
        &["--dry-run"],
        "--dry-run",
        "Print the schedule (each command's intended send time,\nconnection and database, or why it is skipped); send nothing",
        |a, _, _| {
            a.dry_run = true;
            Ok(())
        },
    )
    .example(&["--dry-run", "t.trace"]),
    F::value(
        &["--json"],
        flag::Value::File("the record's file"),
        "--json <file>",
        "Write the run's record (with its replay section) here",
        |a, _, v| {
            a.json = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--json", "replay.json", "t.trace"]),
    F::value(
        &["--html"],
        flag::Value::File("the report's file"),
        "--html <file>",
        "Write the HTML report here",
        |a, _, v| {
            a.html = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--html", "replay.html", "t.trace"]),
    F::value(
        &["--journal"],
        flag::Value::File("a file path for the replay's journal"),
        "--journal <file>",
        "Where the journal goes (default: beside --json FILE, as\n\
         FILE.partial; none with --json -): every second's figures\n\
         as JSON Lines, synced, removed when the replay ends. After\n\
         a kill, respbench recover FILE.partial -o FILE",
        |a, _, v| {
            a.journal = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--json", "-", "--journal", "replay.partial", "t.trace"]),
    F::value(
        &["--metrics-listen"],
        flag::Value::Text,
        "--metrics-listen <addr:port>",
        "Serve live metrics on http://addr:port/metrics while\n\
         the replay runs (docs/live-metrics.md)",
        |a, name, v| {
            a.metrics_listen = Some(crate::cli::metrics_address(name, v)?);
            Ok(())
        },
    )
    .example(&["--metrics-listen", "127.0.0.1:9100", "t.trace"]),
    F::value(
        &["--metrics-linger"],
        flag::Value::Text,
        "--metrics-linger <sec>",
        "Keep serving /metrics this long after the replay ends, so\n\
         the last scrape sees the final figures (default 0)",
        |a, name, v| {
            a.metrics_linger = Some(crate::cli::parse_seconds(name, v)?);
            Ok(())
        },
    )
    .example(&[
        "--metrics-listen",
        "127.0.0.1:9100",
        "--metrics-linger",
        "15",
        "t.trace",
    ]),
    F::switch(&["-q"], "-q", "Quiet: the report's summary lines only", |a, _, _| {
        a.quiet = true;
        Ok(())
    })
    .example(&["-q", "t.trace"]),
    F::long_help(),
];

const HELP_HEAD: &str = "\
Usage: respbench replay [options] <trace>...

Sends a trace (respbench capture's file, or valkey-cli/redis-cli monitor
output) to a server with the trace's own timing: each command at its offset in
the trace (scaled by --speed), latency from that intended time (coordinated
omission corrected), and the schedule slip (how far behind respbench fell)
per second. Each client of the trace gets a connection of its own, so its
order, SELECT, MULTI/EXEC blocks and blocking commands keep their meaning.
Commands run by scripts ([0 lua] lines) are never sent (their EVAL/FCALL is);
AUTH is never sent (the target's own -a/--user are used); destructive and
admin commands are skipped and counted unless --allow names them. Several
traces (one captured on each primary of a cluster) are replayed as one,
merged by time, each trace's clients kept apart.

Options:
";

const HELP_TAIL: &str = "
The report, --json record, HTML report and respbench compare work as for any
run; the record's \"replay\" section has the trace, span, speed, skipped
commands and slip. See docs/replay.md.
";

/// `replay`'s shape: the shared connection entries, then its own options.
const REPLAY: connection::Subcommand<ReplayArgs> = connection::Subcommand {
    name: "replay",
    own: OPTIONS,
    conn: |a| &mut a.conn,
};

/// Every option of `replay`, in help order: the shared connection entries, then its own.
pub fn docs() -> Vec<&'static Doc> {
    REPLAY.docs()
}

/// `respbench replay --help`.
pub fn help_text() -> String {
    REPLAY.help_text(HELP_HEAD, HELP_TAIL)
}

/// The arguments after `replay`; `Ok(None)` when the help was asked for.
pub fn parse(argv: Vec<OsString>) -> Result<Option<ReplayArgs>, String> {
    let see = REPLAY.see();
    let trace = |a: &mut ReplayArgs, v| {
        a.traces.push(PathBuf::from(v));
        Ok(())
    };
    let Some(a) = REPLAY.parse(argv, trace)? else {
        return Ok(None);
    };
    if a.traces.is_empty() {
        return Err(format!("no trace given ({see})"));
    }
    if let Some(end) = a.end_us
        && end <= a.start_us
    {
        return Err("--end must be later than --start".into());
    }
    if a.metrics_linger.is_some() && a.metrics_listen.is_none() {
        return Err("--metrics-linger needs --metrics-listen".into());
    }
    super::connect::check(&a.conn)?;
    Ok(Some(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Option<ReplayArgs>, String> {
        parse(v.iter().map(OsString::from).collect())
    }

    #[test]
    fn every_example_parses() {
        for f in OPTIONS {
            if !f.doc.example.is_empty() {
                let parsed = args(f.doc.example);
                assert!(parsed.is_ok(), "{:?}: {parsed:?}", f.doc.example);
            }
        }
    }

    #[test]
    fn values_are_checked_and_speed_scales_offsets() {
        let a = args(&["--speed", "2", "--start", "1.5", "x"])
            .unwrap()
            .unwrap();
        assert_eq!(a.speed.due_ns(3), Some(1500));
        assert_eq!(a.start_us, 1_500_000);
        assert_eq!(Speed::Max.due_ns(10), None);
        assert!(args(&["--speed", "0", "x"]).is_err());
        assert!(args(&["--loop", "0", "x"]).is_err());
        assert!(args(&["--start", "5", "--end", "2", "x"]).is_err());
        let two = args(&["x", "--speed", "max", "y"]).unwrap().unwrap();
        assert_eq!(two.traces, [PathBuf::from("x"), PathBuf::from("y")]);
        assert!(args(&[]).is_err());
        let a = args(&["--allow", "flushall,config|set", "x"])
            .unwrap()
            .unwrap();
        assert_eq!(a.allow, ["FLUSHALL", "CONFIG SET"]);
        assert!(args(&["--help"]).unwrap().is_none());
    }
}
