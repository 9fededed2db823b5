//! `-I`: open `-c` connections that send nothing and wait until Ctrl-C.
//!
//! Unlike the reference, each connection first sends the prefix commands (AUTH/SELECT/HELLO), so
//! idle connections count as authenticated clients. Anything the server sends afterwards (for
//! example "max number of clients reached", then a close) ends the run with its message.

use std::io;
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};

use super::conn::io_reason;
use super::control::{ControlConn, error_text};
use super::{ConnSetup, EngineError};

/// Opens `clients` idle connections, calls `on_count` every 250 ms with how many are open, and
/// returns when `interrupted()` says so, or with the first error.
pub fn run_idle(
    setup: &ConnSetup,
    clients: u32,
    interrupted: &dyn Fn() -> bool,
    on_count: &mut dyn FnMut(usize),
) -> Result<(), EngineError> {
    let os = |e: io::Error| EngineError::Other(format!("event loop: {e}"));
    let mut poll = Poll::new().map_err(os)?;
    let mut streams = Vec::with_capacity(clients as usize);
    for i in 0..clients as usize {
        if interrupted() {
            return Ok(());
        }
        let mut conn = ControlConn::connect(&setup.target)?;
        if !setup.prefix.is_empty() {
            let replies = conn.call_raw(&setup.prefix, setup.prefix_commands.len())?;
            for (reply, command) in replies.iter().zip(&setup.prefix_commands) {
                if let Some(message) = error_text(reply) {
                    return Err(EngineError::Setup { command, message });
                }
            }
        }
        let mut stream = conn
            .into_stream()
            .into_nonblocking()
            .map_err(|e| EngineError::Io(io_reason(&e)))?;
        poll.registry()
            .register(&mut stream, Token(i), Interest::READABLE)
            .map_err(os)?;
        streams.push(stream);
        if i % 256 == 0 {
            on_count(streams.len());
        }
    }
    on_count(streams.len());
    let mut events = Events::with_capacity(256);
    let mut buf = vec![0u8; 4096];
    loop {
        if interrupted() {
            return Ok(());
        }
        match poll.poll(&mut events, Some(Duration::from_millis(250))) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(os(e)),
        }
        for ev in events.iter() {
            let s = &mut streams[ev.token().0];
            match s.read(&mut buf) {
                Ok(0) => {
                    return Err(EngineError::Io(format!(
                        "the server at {} closed an idle connection",
                        setup.target.display()
                    )));
                }
                Ok(n) => {
                    let text = String::from_utf8_lossy(&buf[..n]);
                    let line = text.trim_end().trim_start_matches('-');
                    return Err(EngineError::Server {
                        message: line.to_string(),
                        hint: None,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(EngineError::Io(io_reason(&e))),
            }
        }
        on_count(streams.len());
    }
}
