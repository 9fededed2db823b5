//! `-I`: open `-c` connections that send nothing and wait until Ctrl-C.
//!
//! Unlike the reference, each connection first sends the prefix commands (AUTH/SELECT/HELLO), so
//! idle connections count as authenticated clients. Anything the server sends afterwards (for
//! example "max number of clients reached", then a close) ends the run with its message.

use std::io;
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};

use super::control::ControlConn;
use super::error::io_reason;
use super::tls::CLOSED_IN_HANDSHAKE;
use super::{ConnSetup, EngineError};

/// An idle connection the server reset or closed while it was being opened: a TLS server at
/// its `maxclients` accepts, then resets the handshake (or closes it, when the close comes before
/// our hello). The reference's idle clients see that as a read error, `Error: Connection reset by
/// peer` or `Error: Server closed the connection`, and scripts match on `Error`: so it is an
/// [`EngineError::Io`] in those words, with where it happened after them. A close is only taken
/// for that after a handshake with the server succeeded (the first one: it may not speak TLS).
fn closed_while_opening(e: EngineError, i: usize, clients: u32) -> EngineError {
    let reset = io_reason(&io::Error::from_raw_os_error(libc::ECONNRESET));
    let words = match &e {
        EngineError::Connect { target, reason } if *reason == reset => Some((reset, target)),
        EngineError::Tls { target, reason } if i > 0 && reason.starts_with(CLOSED_IN_HANDSHAKE) => {
            Some(("Server closed the connection".to_string(), target))
        }
        _ => None,
    };
    match words {
        Some((words, target)) => EngineError::Io(format!(
            "{words} (opening idle connection {} of {clients} to {target}; a server at its \
             maxclients does this)",
            i + 1
        )),
        None => e,
    }
}

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
        let mut conn =
            ControlConn::connect(&setup.target).map_err(|e| closed_while_opening(e, i, clients))?;
        if let Some((command, message)) = conn.send_prefix(setup)? {
            return Err(EngineError::Setup { command, message });
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
