//! A blocking connection to one Sentinel: commands with a reply timeout, and pub/sub messages
//! read with a short timeout so the watcher can check whether the run has ended.
//!
//! Sentinels are reached over plain TCP (the Sentinel port); TLS and AUTH options for the data
//! nodes do not apply to them (`--sentinel-user`/`--sentinel-password` do).

use std::io::{self, Read, Write};
use std::time::Duration;

use resp::Value;

use crate::engine::conn::BlockingStream;
use crate::engine::control::error_text;
use crate::engine::{EngineError, Target};

/// How long a Sentinel may take to answer a command.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// One Sentinel connection.
pub struct SentinelConn {
    stream: BlockingStream,
    buf: Vec<u8>,
}

impl SentinelConn {
    /// Connects (within the engine's connect timeout) and authenticates when `auth` is given
    /// (the arguments after `AUTH`). Errors are one phrase, without the address.
    pub fn open(host: &str, port: u16, auth: Option<&[Vec<u8>]>) -> Result<Self, String> {
        let target = Target::tcp(host, port).map_err(|e| reason(&e))?;
        let stream = target.connect_blocking().map_err(|e| reason(&e))?;
        stream
            .set_timeouts(Some(REPLY_TIMEOUT))
            .map_err(|e| e.to_string())?;
        let mut c = Self {
            stream,
            buf: Vec::with_capacity(1024),
        };
        if let Some(auth) = auth {
            let mut cmd: Vec<&[u8]> = vec![b"AUTH"];
            cmd.extend(auth.iter().map(Vec::as_slice));
            if let Some(e) = error_text(&c.call(&cmd)?) {
                return Err(format!("AUTH refused: {e}"));
            }
        }
        Ok(c)
    }

    /// Sends one command and waits (at most [`REPLY_TIMEOUT`]) for its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Value, String> {
        self.send(args)?;
        self.next()?
            .ok_or_else(|| format!("no reply within {} s", REPLY_TIMEOUT.as_secs()))
    }

    /// Sends a command without waiting (SUBSCRIBE: its replies are messages).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<(), String> {
        let mut out = Vec::with_capacity(64);
        resp::encode_command(&mut out, args);
        self.stream.write_all(&out).map_err(|e| e.to_string())
    }

    /// Changes the read timeout (the watcher reads messages in short waits).
    pub fn set_timeout(&mut self, t: Duration) -> Result<(), String> {
        self.stream.set_timeouts(Some(t)).map_err(|e| e.to_string())
    }

    /// The next value; `None` when the read timeout passed first. A closed connection or a
    /// protocol error is an error.
    pub fn next(&mut self) -> Result<Option<Value>, String> {
        let mut chunk = [0u8; 4096];
        loop {
            match Value::parse(&self.buf) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(Some(v));
                }
                Ok(None) => {}
                Err(e) => return Err(format!("protocol error: {e}")),
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err("the Sentinel closed the connection".to_string()),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}

/// An engine error's reason without the address it names (the caller names the Sentinel).
fn reason(e: &EngineError) -> String {
    match e {
        EngineError::Connect { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
