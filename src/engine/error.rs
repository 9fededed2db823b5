//! The engine's errors: `EngineError` (what stops a run, as one message) and the wording of an
//! I/O error's reason. Its own file so that every socket module (`conn`, `tls`, `control`,
//! `idle`, the worker) can name them without importing one another.

use std::fmt;
use std::io;

/// A fatal problem. `main` prints it and exits 1.
///
/// Where valkey-benchmark has a message for the same condition (its spec, §4.8), the text starts
/// with the reference's words (`Could not connect to server at …`, `Error from server: …`,
/// `Error: …`), because scripts and test harnesses match them; respbench's detail and hint follow
/// on the same line. [`EngineError::Other`] is respbench's own wording and gets its name in front
/// ([`EngineError::is_reference_text`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// Could not connect (or reconnect) to the server.
    Connect { target: String, reason: String },
    /// A socket failed or the server closed a connection.
    Io(String),
    /// The server sent bytes that are not RESP (the message says "protocol error: …").
    Protocol(String),
    /// An error reply that stops the run; `hint` says how to go on where there is a way.
    Server {
        message: String,
        hint: Option<&'static str>,
    },
    /// An error reply to AUTH/SELECT/HELLO sent before the first batch.
    Setup {
        command: &'static str,
        message: String,
    },
    /// The password (or user) was refused on a setup connection.
    Auth { target: String, message: String },
    /// `CLUSTER SLOTS` could not be fetched or read from the entry node.
    ClusterConfig { target: String, reason: String },
    /// Anything else that stops the run before it starts.
    Other(String),
    /// The TLS handshake (or the first exchange after it) failed.
    Tls { target: String, reason: String },
}

impl EngineError {
    /// Whether the message starts with valkey-benchmark's own words for the condition (then it is
    /// printed as it is; otherwise after `respbench: `).
    pub fn is_reference_text(&self) -> bool {
        !matches!(self, Self::Other(_))
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { target, reason } => {
                write!(f, "Could not connect to server at {target}: {reason}")
            }
            Self::Io(m) | Self::Protocol(m) => write!(f, "Error: {m}"),
            Self::Other(m) => f.write_str(m),
            Self::Server { message, hint } => {
                write!(f, "Error from server: {message}")?;
                match hint {
                    Some(h) => write!(f, " ({h})"),
                    None => Ok(()),
                }
            }
            Self::Setup { command, message } => {
                write!(f, "Error from server: {message} (the reply to {command})")
            }
            // Two lines, as the reference prints them.
            Self::Auth { target, message } => {
                write!(f, "Node {target} replied with error:\n{message}")
            }
            Self::ClusterConfig { target, reason } => {
                write!(
                    f,
                    "Failed to fetch cluster configuration from {target}: {reason}"
                )
            }
            Self::Tls { target, reason } => {
                write!(
                    f,
                    "Could not negotiate a TLS connection: {target}: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for EngineError {}

/// `Connection refused` rather than `Connection refused (os error 111)`.
pub fn io_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
