//! Traces of RESP traffic: the one format that `--fuzz-log` writes and `replay` reads, and the
//! reader of the traces people already have (`valkey-cli monitor` / `redis-cli monitor` text).
//!
//! Why one home: the fuzzer's log, `capture`'s output, `replay`'s input and memtier's
//! `--monitor-input` are the same thing — commands in order, each with when it was sent, on which
//! client and database — and a crash found by the fuzzer is worth most when the log it leaves can
//! be replayed as is. So there is one entry type ([`Entry`]), one writer ([`Writer`], which sends
//! every command through the one redaction function, so a trace never holds a password) and one
//! streaming reader ([`Reader`], which tells the formats apart by their first line and reuses its
//! buffers, so a trace of ten million lines is read in bounded memory), and one merge of several
//! traces in time order ([`Merge`]: a cluster's primaries, each captured on its own node).
//!
//! The respbench format (`docs/trace.md`): a first line `#respbench-trace 1`; lines starting with
//! `#` are comments; each entry is a header line `SEQ TIME_US CLIENT DB KIND LEN` followed by
//! `LEN` bytes and a newline. `KIND` is `cmd` (the bytes are a RESP array of bulk strings: the
//! command as sent, replayable by respbench and, per client, by `valkey-cli --pipe`) or `raw`
//! (any bytes: malformed framing from the fuzzer, kept exactly). A length-prefixed body keeps the
//! file binary-safe while the headers stay readable with `less` and `grep`.

mod merge;
mod monitor;
pub(crate) use monitor::parse_args as parse_monitor_args;
mod native;
mod reader;
#[cfg(test)]
mod tests;

pub use merge::{Merge, MergeError};
pub use monitor::parse_monitor_line;
pub use native::{FORMAT_LINE, Writer};
pub use reader::{Format, Reader};

/// The largest entry (the body of one command, or one MONITOR line) a reader accepts: far above
/// any real command (a server's own default `proto-max-bulk-len` is 512 MiB, but a 64 MiB value
/// is already rare), and a bound on what one bad line can make the reader hold.
pub const MAX_ENTRY: usize = 64 << 20;

/// The client of a command run by a script or function: MONITOR shows it as `[0 lua]`. Such a
/// command is never replayed — the `EVAL`/`FCALL` that ran it is, and runs it again.
pub const SCRIPT_CLIENT: &str = "lua";

/// What was sent: a command (its arguments), or bytes that are not a well-formed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    Command(Vec<Vec<u8>>),
    Raw(Vec<u8>),
}

/// One command of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its place in the trace (from 1 in a respbench trace; a MONITOR trace is numbered by the
    /// reader in the order of its lines).
    pub seq: u64,
    /// When it was sent (a fuzz log) or executed (MONITOR), in µs since the Unix epoch.
    pub time_us: i64,
    /// Who sent it: a token without whitespace (`127.0.0.1:54321`, `c3`, [`SCRIPT_CLIENT`]).
    pub client: String,
    /// The database it ran in.
    pub db: u32,
    pub payload: Payload,
}

impl Entry {
    /// An empty entry, for [`Reader::next_into`] to fill.
    pub fn empty() -> Entry {
        Entry {
            seq: 0,
            time_us: 0,
            client: String::new(),
            db: 0,
            payload: Payload::Command(Vec::new()),
        }
    }

    /// A command run by a script or function (MONITOR's `[db lua]`): never replayed itself.
    pub fn from_script(&self) -> bool {
        self.client == SCRIPT_CLIENT
    }

    /// The command's arguments, when it is one.
    pub fn args(&self) -> Option<&[Vec<u8>]> {
        match &self.payload {
            Payload::Command(a) => Some(a),
            Payload::Raw(_) => None,
        }
    }
}

/// Why a trace could not be read, with where (line number for text, entry number for both).
#[derive(Debug, PartialEq, Eq)]
pub enum TraceError {
    /// The OS's reason (the path named when there is one).
    Io(String),
    /// A line or entry that does not follow its format.
    Malformed { line: u64, reason: String },
    /// The file ends inside an entry (a writer killed mid-write): everything before it was read.
    Truncated { line: u64 },
    /// An entry larger than [`MAX_ENTRY`].
    TooLarge { line: u64, size: usize },
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Io(m) => write!(f, "{m}"),
            TraceError::Malformed { line, reason } => write!(f, "line {line}: {reason}"),
            TraceError::Truncated { line } => {
                write!(
                    f,
                    "line {line}: the trace ends inside an entry (cut short?)"
                )
            }
            TraceError::TooLarge { line, size } => write!(
                f,
                "line {line}: an entry of {size} bytes, more than the {} MiB a trace entry may hold",
                MAX_ENTRY >> 20
            ),
        }
    }
}

impl std::error::Error for TraceError {}
