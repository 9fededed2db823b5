//! A blocking side connection for work that is not measured: AUTH checks, `CONFIG GET`, loading
//! the FCALL test's function, the server watch's `INFO`, and (in its wait-for-next mode,
//! [`ControlConn::wait_next`]) the Sentinel watcher's subscription, which reads in short waits
//! so it can look at its stop flag between them.

use std::io::{Read, Write};
use std::time::Duration;

use resp::Value;

use super::EngineError;
use super::conn::{BlockingStream, Target};
use super::error::io_reason;
use super::tls::tls_error;

/// How long a control command may take.
pub const CONTROL_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes one read takes.
const READ_CHUNK: usize = 16 * 1024;

/// A synchronous RESP connection.
#[derive(Debug)]
pub struct ControlConn {
    stream: BlockingStream,
    target: String,
    buf: Vec<u8>,
    /// What one read takes, kept: zeroing a fresh 16 kB array for every read was most of a
    /// publish's cost in the delivery modes, whose publishers call through here per message.
    chunk: Box<[u8]>,
    out: Vec<u8>,
    /// A reply has been read on this connection.
    answered: bool,
    /// The command under way (`CONFIG GET`, `AUTH`, …), so that a failure says what was being
    /// done: a reset during start-up is otherwise a bare "Connection reset by peer".
    doing: Doing,
    /// The read/write timeout in force, so that running out of it says "no reply within 10 s"
    /// rather than the socket's EAGAIN ("Resource temporarily unavailable").
    timeout: Duration,
}

impl ControlConn {
    /// Connects; no commands are sent.
    pub fn connect(target: &Target) -> Result<Self, EngineError> {
        Self::connect_within(target, target.connect_timeout())
    }

    /// [`ControlConn::connect`] giving up on the connect after `timeout`.
    pub fn connect_within(target: &Target, timeout: Duration) -> Result<Self, EngineError> {
        let stream = target.connect_blocking_within(timeout)?;
        Self::over(stream, target)
    }

    /// A control connection over a stream already connected to `target` (a connection storm
    /// opens it stage by stage, then sends its commands through here).
    pub fn over(stream: BlockingStream, target: &Target) -> Result<Self, EngineError> {
        stream
            .set_timeouts(Some(CONTROL_TIMEOUT))
            .map_err(|e| EngineError::Io(format!("{}: {}", target.display(), io_reason(&e))))?;
        Ok(Self {
            stream,
            target: target.display(),
            buf: Vec::with_capacity(4096),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            out: Vec::with_capacity(256),
            answered: false,
            doing: Doing::Out,
            timeout: CONTROL_TIMEOUT,
        })
    }

    /// Connects and sends `AUTH` when a password was given (`auth`: the arguments after `AUTH`);
    /// a refused password is an error naming the server.
    pub fn connect_auth(target: &Target, auth: Option<&[Vec<u8>]>) -> Result<Self, EngineError> {
        Self::connect_auth_within(target, auth, target.connect_timeout())
    }

    /// [`ControlConn::connect_auth`] giving up on the connect after `timeout`.
    pub fn connect_auth_within(
        target: &Target,
        auth: Option<&[Vec<u8>]>,
        timeout: Duration,
    ) -> Result<Self, EngineError> {
        let mut c = Self::connect_within(target, timeout)?;
        if let Some(auth) = auth {
            c.auth(auth)?;
        }
        Ok(c)
    }

    /// Sends `AUTH` with `auth` (the arguments after `AUTH`); a refused password is
    /// [`EngineError::Auth`] naming the server.
    pub fn auth(&mut self, auth: &[Vec<u8>]) -> Result<(), EngineError> {
        let mut cmd: Vec<&[u8]> = vec![b"AUTH"];
        cmd.extend(auth.iter().map(|a| a.as_slice()));
        match error_text(&self.call(&cmd)?) {
            Some(message) => Err(EngineError::Auth {
                target: self.target.clone(),
                message,
            }),
            None => Ok(()),
        }
    }

    /// Sends one command and returns its reply (error replies are returned as values).
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Value, EngineError> {
        self.send(args)?;
        self.read_reply()
    }

    /// Sends one command without waiting for its reply (`SUBSCRIBE`: what follows are messages,
    /// read with [`ControlConn::wait_next`]).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<(), EngineError> {
        self.doing = Doing::Out;
        self.out.clear();
        resp::encode_command(&mut self.out, args);
        self.stream
            .write_all(&self.out)
            .map_err(|e| self.io_error(&e))
    }

    /// The wait-for-next mode: the next value the server sends (pushes included), or `None`
    /// when the read timeout ([`ControlConn::set_timeout`]) passes first, which means "nothing
    /// yet", not a failure. A closed connection or a protocol error is an error.
    pub fn wait_next(&mut self) -> Result<Option<Value>, EngineError> {
        let value = self.read_value(Wait::UntilTimeout)?;
        self.answered |= value.is_some();
        Ok(value)
    }

    /// Sends pre-encoded commands and returns their `n` replies.
    pub fn call_raw(&mut self, bytes: &[u8], n: usize) -> Result<Vec<Value>, EngineError> {
        self.doing = Doing::Setup(n);
        self.stream
            .write_all(bytes)
            .map_err(|e| self.io_error(&e))?;
        (0..n).map(|_| self.read_reply()).collect()
    }

    /// Sends the run's prefix (AUTH, HELLO, SELECT, the client name: what every connection of
    /// the run sends first) and checks each reply: the one place a blocking connection is
    /// prepared as the benchmark's own. `Ok(Some(_))` is the first command the server refused
    /// and its error (each caller says it in its own words); nothing is sent without a prefix.
    pub fn send_prefix(
        &mut self,
        setup: &super::ConnSetup,
    ) -> Result<Option<(&'static str, String)>, EngineError> {
        if setup.prefix_commands.is_empty() {
            return Ok(None);
        }
        let replies = self.call_raw(&setup.prefix, setup.prefix_commands.len())?;
        Ok((setup.prefix_commands.iter().zip(&replies))
            .find_map(|(name, reply)| error_text(reply).map(|e| (*name, e))))
    }

    /// Replaces the read/write timeout (30 s by default). The server watch uses a short one so a
    /// server that stops answering cannot hold up the run.
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.stream
            .set_timeouts(Some(timeout))
            .map_err(|e| self.io_error(&e))?;
        self.timeout = timeout;
        Ok(())
    }

    /// The socket, for handing over to an event loop.
    pub fn into_stream(self) -> BlockingStream {
        self.stream
    }

    /// The socket and the bytes read past the last value returned (a subscriber's first
    /// messages may have arrived with its confirmation), for handing over to an event loop.
    pub fn into_parts(self) -> (BlockingStream, Vec<u8>) {
        (self.stream, self.buf)
    }

    /// Reads one reply, skipping RESP3 push messages.
    fn read_reply(&mut self) -> Result<Value, EngineError> {
        loop {
            match self.read_value(Wait::ForReply)? {
                Some(Value::Push(_)) => continue,
                Some(value) => {
                    self.answered = true;
                    return Ok(value);
                }
                // `Wait::ForReply` turns a timeout into an error; kept defined all the same.
                None => return Err(self.io_error(&std::io::ErrorKind::TimedOut.into())),
            }
        }
    }

    /// Reads until one whole value is buffered and returns it; `None` only under
    /// `Wait::UntilTimeout`, when the read timeout passed first.
    fn read_value(&mut self, wait: Wait) -> Result<Option<Value>, EngineError> {
        loop {
            match Value::parse(&self.buf) {
                Ok(Some((value, used))) => {
                    self.buf.drain(..used);
                    return Ok(Some(value));
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(EngineError::Protocol(format!(
                        "{e} (from {}, in the reply to {})",
                        self.target,
                        self.doing()
                    )));
                }
            }
            let n = match (self.stream.read(&mut self.chunk), wait) {
                (Ok(n), _) => n,
                (Err(e), Wait::UntilTimeout) if e.kind() == std::io::ErrorKind::Interrupted => {
                    continue;
                }
                (Err(e), Wait::UntilTimeout)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None);
                }
                (Err(e), _) => return Err(self.io_error(&e)),
            };
            if n == 0 {
                if matches!(self.stream, BlockingStream::Tls(_)) && !self.answered {
                    return Err(self.io_error(&std::io::ErrorKind::UnexpectedEof.into()));
                }
                return Err(EngineError::Io(format!(
                    "{}: the server closed the connection (waiting for the reply to {})",
                    self.target,
                    self.doing()
                )));
            }
            self.buf.extend_from_slice(&self.chunk[..n]);
        }
    }

    /// The command under way, named for a message: read back from what was sent only when a
    /// failure needs it (a publisher calls through here once per message).
    fn doing(&self) -> String {
        match self.doing {
            Doing::Setup(n) => format!("{n} setup command(s)"),
            Doing::Out => match Value::parse(&self.out) {
                Ok(Some((Value::Array(items), _))) => {
                    let args: Vec<&[u8]> = items
                        .iter()
                        .map(|v| match v {
                            Value::BulkString(b) => b.as_slice(),
                            _ => b"",
                        })
                        .collect();
                    command_name(&args)
                }
                _ => String::new(),
            },
        }
    }

    fn io_error(&self, e: &std::io::Error) -> EngineError {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        // A TLS 1.3 server that wants a client certificate may also just close the connection
        // after the handshake, before its alert is read: then the first command gets a reset.
        if matches!(self.stream, BlockingStream::Tls(_))
            && !self.answered
            && matches!(
                e.kind(),
                ConnectionReset | UnexpectedEof | ConnectionAborted | BrokenPipe
            )
            && tls_error(e).is_none()
        {
            return EngineError::Tls {
                target: self.target.clone(),
                reason: format!(
                    "the server closed the connection right after the handshake ({}); a server \
                     with tls-auth-clients does this without a client certificate: pass --cert \
                     and --key",
                    io_reason(e)
                ),
            };
        }
        // A TLS 1.3 server refuses a missing client certificate after the handshake: the first
        // command's reply is where that shows.
        if let Some(t) = tls_error(e).filter(|t| t.handshake) {
            return EngineError::Tls {
                target: self.target.clone(),
                reason: t.to_string(),
            };
        }
        // SO_RCVTIMEO/SO_SNDTIMEO running out is EAGAIN on Linux (TimedOut elsewhere).
        if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            return EngineError::Io(format!(
                "{}: no reply within {} s (sending {} or waiting for its reply)",
                self.target,
                self.timeout.as_secs_f64(),
                self.doing()
            ));
        }
        EngineError::Io(format!(
            "{}: {} (sending {} or waiting for its reply)",
            self.target,
            io_reason(e),
            self.doing()
        ))
    }
}

/// What [`ControlConn::doing`] names.
#[derive(Clone, Copy, Debug)]
enum Doing {
    /// The command in `out` (nothing yet when it is empty).
    Out,
    /// `n` setup commands sent pre-encoded.
    Setup(usize),
}

/// What a read does when the read timeout passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// A reply is owed: the timeout is an error (a server that stopped answering).
    ForReply,
    /// Messages may or may not come: the timeout means "nothing yet".
    UntilTimeout,
}

/// How a command is named in messages: its first word, and the second for commands whose first
/// word is a container (`CONFIG GET`, `CLUSTER SLOTS`). Never the arguments (`AUTH`'s password).
fn command_name<A: AsRef<[u8]>>(args: &[A]) -> String {
    const CONTAINERS: &[&str] = &["ACL", "CLIENT", "CLUSTER", "COMMAND", "CONFIG", "FUNCTION"];
    let word = |i: usize| {
        args.get(i)
            .map(|a| String::from_utf8_lossy(a.as_ref()).to_uppercase())
            .unwrap_or_default()
    };
    let first = word(0);
    if CONTAINERS.contains(&first.as_str()) && args.len() > 1 {
        format!("{first} {}", word(1))
    } else {
        first
    }
}

/// The text of an error reply, if `v` is one.
pub fn error_text(v: &Value) -> Option<String> {
    match v {
        Value::Error(t) | Value::BlobError(t) => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;
    use std::sync::mpsc;

    use super::*;

    /// A loopback server that, when told to, reads `expect` bytes, writes `bytes`, then closes.
    fn server(
        expect: usize,
        bytes: &'static [u8],
    ) -> (Target, mpsc::Sender<()>, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (go, wait) = mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let _ = wait.recv();
            let mut got = vec![0u8; expect];
            s.read_exact(&mut got).unwrap();
            s.write_all(bytes).unwrap();
        });
        (Target::tcp("127.0.0.1", port).unwrap(), go, handle)
    }

    #[test]
    fn wait_for_next_says_nothing_yet_then_gives_every_value_then_the_close() {
        let (target, go, handle) =
            server(0, b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n+OK\r\n");
        let mut c = ControlConn::connect(&target).unwrap();
        c.set_timeout(Duration::from_millis(20)).unwrap();
        // The server writes nothing before `go`: the read timeout passes with nothing.
        assert_eq!(c.wait_next().unwrap(), None);
        go.send(()).unwrap();
        let mut values = Vec::new();
        let mut closed = None;
        // Bounded: the server's bytes and its close arrive within a few waits on loopback.
        for _ in 0..500 {
            match c.wait_next() {
                Ok(Some(v)) => values.push(v),
                Ok(None) => {}
                Err(e) => {
                    closed = Some(e.to_string());
                    break;
                }
            }
        }
        assert!(
            matches!(values[0], Value::Push(_)),
            "a push is a value here"
        );
        assert_eq!(values[1], Value::SimpleString(b"OK".to_vec()));
        assert_eq!(values.len(), 2);
        let closed = closed.expect("the close is an error");
        assert!(closed.contains("closed the connection"), "{closed}");
        handle.join().unwrap();
    }

    #[test]
    fn a_call_skips_pushes() {
        let ping = b"*1\r\n$4\r\nPING\r\n".len();
        let (target, go, handle) = server(ping, b">2\r\n$4\r\nping\r\n$1\r\nx\r\n:5\r\n");
        let mut c = ControlConn::connect(&target).unwrap();
        go.send(()).unwrap();
        assert_eq!(c.call(&["PING"]).unwrap(), Value::Integer(5));
        handle.join().unwrap();
        assert!(c.call(&["PING"]).is_err(), "no reply from a closed server");
    }
}
