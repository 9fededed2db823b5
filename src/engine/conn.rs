//! Sockets: where the server is, blocking connects for setup, non-blocking streams for workers.

use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use mio::event::Source;
use mio::{Interest, Registry, Token};

use super::EngineError;

/// How long a connect may take before we give up with a clear message.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A resolved server address.
#[derive(Clone, Debug)]
pub enum Target {
    Tcp { addr: SocketAddr, display: String },
    Unix(PathBuf),
}

impl Target {
    /// Resolves `host:port` once, so reconnects (`-k 0`) do no DNS work.
    pub fn tcp(host: &str, port: u16) -> Result<Self, EngineError> {
        let display = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| EngineError::Connect {
                target: display.clone(),
                reason: e.to_string(),
            })?
            .collect();
        let addr = match addrs.as_slice() {
            [] => {
                return Err(EngineError::Connect {
                    target: display,
                    reason: "the host name has no address".into(),
                });
            }
            [only] => *only,
            // Several addresses (localhost may be ::1 and 127.0.0.1): use the first that accepts
            // a connection, as the reference does, so workers and reconnects agree on one.
            many => *many
                .iter()
                .find(|a| TcpStream::connect_timeout(a, CONNECT_TIMEOUT).is_ok())
                .unwrap_or(&many[0]),
        };
        Ok(Self::Tcp { addr, display })
    }

    /// Another server reached the same way as this one (cluster nodes): same transport options
    /// (TLS settings, MPTCP), another address.
    pub fn at(&self, host: &str, port: u16) -> Result<Self, EngineError> {
        Self::tcp(host, port)
    }

    /// `host:port` or the socket path, for messages.
    pub fn display(&self) -> String {
        match self {
            Self::Tcp { display, .. } => display.clone(),
            Self::Unix(path) => path.display().to_string(),
        }
    }

    fn connect_error(&self, e: &io::Error) -> EngineError {
        EngineError::Connect {
            target: self.display(),
            reason: io_reason(e),
        }
    }

    /// A blocking connect with [`CONNECT_TIMEOUT`], returned as a blocking std stream.
    pub fn connect_blocking(&self) -> Result<BlockingStream, EngineError> {
        match self {
            Self::Tcp { addr, .. } => {
                let s = TcpStream::connect_timeout(addr, CONNECT_TIMEOUT)
                    .map_err(|e| self.connect_error(&e))?;
                s.set_nodelay(true).map_err(|e| self.connect_error(&e))?;
                Ok(BlockingStream::Tcp(s))
            }
            Self::Unix(path) => UnixStream::connect(path)
                .map(BlockingStream::Unix)
                .map_err(|e| self.connect_error(&e)),
        }
    }

    /// A connected non-blocking stream for a worker (setup-time connect).
    pub fn connect_for_worker(&self) -> Result<Stream, EngineError> {
        let s = self.connect_blocking()?;
        s.into_nonblocking().map_err(|e| self.connect_error(&e))
    }

    /// Starts a non-blocking connect (`-k 0` reconnects); writable means connected.
    pub fn connect_nonblocking(&self) -> Result<Stream, EngineError> {
        match self {
            Self::Tcp { addr, .. } => {
                let s = mio::net::TcpStream::connect(*addr).map_err(|e| self.connect_error(&e))?;
                s.set_nodelay(true).map_err(|e| self.connect_error(&e))?;
                Ok(Stream::Tcp(s))
            }
            Self::Unix(path) => mio::net::UnixStream::connect(path)
                .map(Stream::Unix)
                .map_err(|e| self.connect_error(&e)),
        }
    }
}

/// `Connection refused` rather than `Connection refused (os error 111)`.
pub fn io_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A blocking socket (control connections).
#[derive(Debug)]
pub enum BlockingStream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl BlockingStream {
    pub fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Self::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Self::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }

    pub fn into_nonblocking(self) -> io::Result<Stream> {
        match self {
            Self::Tcp(s) => {
                s.set_nonblocking(true)?;
                Ok(Stream::Tcp(mio::net::TcpStream::from_std(s)))
            }
            Self::Unix(s) => {
                s.set_nonblocking(true)?;
                Ok(Stream::Unix(mio::net::UnixStream::from_std(s)))
            }
        }
    }
}

impl Read for BlockingStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
        }
    }
}

impl Write for BlockingStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A non-blocking socket owned by one worker.
#[derive(Debug)]
pub enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl Stream {
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
        }
    }

    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
        }
    }

    #[inline]
    pub fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write_vectored(bufs),
            Self::Unix(s) => s.write_vectored(bufs),
        }
    }

    /// After a non-blocking connect reported writable: `Ok(())` when connected.
    pub fn finish_connect(&mut self) -> io::Result<()> {
        let err = match self {
            Self::Tcp(s) => s.take_error()?,
            Self::Unix(s) => s.take_error()?,
        };
        if let Some(e) = err {
            return Err(e);
        }
        match self {
            Self::Tcp(s) => s.peer_addr().map(|_| ()),
            Self::Unix(s) => s.peer_addr().map(|_| ()),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.register(r, t, i),
            Self::Unix(s) => s.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.reregister(r, t, i),
            Self::Unix(s) => s.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.deregister(r),
            Self::Unix(s) => s.deregister(r),
        }
    }
}
