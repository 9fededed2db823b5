//! A connection to one Sentinel: the engine's [`ControlConn`] with the Sentinel's short reply
//! timeout, its messages read in the control connection's wait-for-next mode (so the watcher can
//! check whether the run has ended between reads), and its failures as one phrase without the
//! address (the caller names the Sentinel).
//!
//! Sentinels are reached over plain TCP (the Sentinel port); TLS and AUTH options for the data
//! nodes do not apply to them (`--sentinel-user`/`--sentinel-password` do).

use std::time::Duration;

use resp::Value;

use crate::engine::control::ControlConn;
use crate::engine::{EngineError, Target};

/// How long a Sentinel may take to answer a command.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// One Sentinel connection.
pub struct SentinelConn {
    conn: ControlConn,
}

impl SentinelConn {
    /// Connects (within the engine's connect timeout) and authenticates when `auth` is given
    /// (the arguments after `AUTH`), both bounded by [`REPLY_TIMEOUT`].
    pub fn open(host: &str, port: u16, auth: Option<&[Vec<u8>]>) -> Result<Self, String> {
        let target = Target::tcp(host, port).map_err(|e| reason(&e))?;
        let mut conn = ControlConn::connect(&target).map_err(|e| reason(&e))?;
        conn.set_timeout(REPLY_TIMEOUT).map_err(|e| reason(&e))?;
        if let Some(auth) = auth {
            conn.auth(auth).map_err(|e| reason(&e))?;
        }
        Ok(Self { conn })
    }

    /// Sends one command and waits (at most [`REPLY_TIMEOUT`]) for its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Value, String> {
        self.send(args)?;
        self.next()?
            .ok_or_else(|| format!("no reply within {} s", REPLY_TIMEOUT.as_secs()))
    }

    /// Sends a command without waiting (SUBSCRIBE: its replies are messages).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<(), String> {
        self.conn.send(args).map_err(|e| reason(&e))
    }

    /// Changes the read timeout (the watcher reads messages in short waits).
    pub fn set_timeout(&mut self, t: Duration) -> Result<(), String> {
        self.conn.set_timeout(t).map_err(|e| reason(&e))
    }

    /// The next value; `None` when the read timeout passed first. A closed connection or a
    /// protocol error is an error.
    pub fn next(&mut self) -> Result<Option<Value>, String> {
        self.conn.wait_next().map_err(|e| reason(&e))
    }
}

/// An engine error's reason without the address it names (the caller names the Sentinel).
fn reason(e: &EngineError) -> String {
    match e {
        EngineError::Connect { reason, .. } => reason.clone(),
        EngineError::Auth { message, .. } => format!("AUTH refused: {message}"),
        EngineError::Io(m) => m
            .split_once(": ")
            .map_or(m.as_str(), |(_, r)| r)
            .to_string(),
        EngineError::Protocol(m) => format!("protocol error: {m}"),
        other => other.to_string(),
    }
}
