//! Sockets: where the server is, blocking connects for setup, non-blocking streams for workers.
//!
//! The transport options (TLS, Multipath TCP) travel with the [`Target`], so that every
//! connection — control connections, worker connections, `-k 0` reconnects, other cluster nodes
//! through [`Target::at`] — is opened the same way.

use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mio::event::Source;
use mio::{Interest, Registry, Token};

use super::connect::{connect_within, interrupt_requested};
use super::error::{EngineError, io_reason};
use super::follow::FollowedPrimary;
use super::tls::{TlsClient, TlsStream, tls_error};

/// How long a connect may take before we give up with a clear message.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The one line `--mptcp` gives where the kernel has no Multipath TCP.
pub const MPTCP_UNSUPPORTED: &str =
    "--mptcp: this kernel does not support Multipath TCP (net.mptcp.enabled=0 or no MPTCP support)";

/// How TCP connections are opened: plain by default.
#[derive(Clone, Debug, Default)]
pub struct Transport {
    /// TLS settings shared by every connection (`--tls`); `None` is plain TCP.
    pub tls: Option<Arc<TlsClient>>,
    /// Open sockets with `IPPROTO_MPTCP` (`--mptcp`, Linux).
    pub mptcp: bool,
    /// memtier's `-4`/`-6`: host names resolve to addresses of this family only.
    pub family: Option<Family>,
    /// memtier's `--connection-timeout`: how long a blocking connect (and its TLS handshake)
    /// may take instead of [`CONNECT_TIMEOUT`]; a worker's reopening uses it too.
    pub connect_timeout: Option<Duration>,
}

/// An address family a host name may be limited to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

impl Transport {
    /// How long a connect may take: `--connection-timeout`, else [`CONNECT_TIMEOUT`].
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout.unwrap_or(CONNECT_TIMEOUT)
    }
}

/// A resolved server address and how to reach it.
#[derive(Clone, Debug)]
pub enum Target {
    Tcp {
        addr: SocketAddr,
        /// The host as given: the server name for TLS (SNI and verification) unless `--sni`.
        host: String,
        /// `host:port` for messages.
        display: String,
        transport: Transport,
        /// `--sentinel`: the primary this target follows. When set, every connect reads the
        /// address (and host, display) from it instead of the fields above, which keep the
        /// first primary's.
        follow: Option<Arc<FollowedPrimary>>,
    },
    Unix(PathBuf),
}

impl Target {
    /// Resolves `host:port` once, so reconnects (`-k 0`) do no DNS work. Plain TCP.
    pub fn tcp(host: &str, port: u16) -> Result<Self, EngineError> {
        Self::tcp_with(host, port, Transport::default())
    }

    /// [`Target::tcp`] with transport options (TLS, MPTCP).
    pub fn tcp_with(host: &str, port: u16, transport: Transport) -> Result<Self, EngineError> {
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
            .filter(|a| match transport.family {
                Some(Family::V4) => a.is_ipv4(),
                Some(Family::V6) => a.is_ipv6(),
                None => true,
            })
            .collect();
        let timeout = transport.connect_timeout();
        let addr = match addrs.as_slice() {
            [] => {
                return Err(EngineError::Connect {
                    target: display,
                    reason: no_address_reason(host, transport.family),
                });
            }
            [only] => *only,
            // Several addresses (localhost may be ::1 and 127.0.0.1): use the first that accepts
            // a connection, as the reference does, so workers and reconnects agree on one.
            many => *many
                .iter()
                .find(|a| tcp_connect_blocking(a, false, timeout).is_ok())
                .unwrap_or(&many[0]),
        };
        Ok(Self::Tcp {
            addr,
            host: host.to_string(),
            display,
            transport,
            follow: None,
        })
    }

    /// A target that goes wherever `primary` is when a connection is opened (Sentinel): the
    /// setup connections, `-k 0` replacements and reopened connections all follow a failover.
    pub fn following(primary: Arc<FollowedPrimary>, transport: Transport) -> Self {
        let now = primary.current();
        Self::Tcp {
            addr: now.addr,
            host: now.host,
            display: now.display,
            transport,
            follow: Some(primary),
        }
    }

    /// The followed primary's epoch (changes when it moves); `None` for a fixed address. A
    /// connection noting this when it opens is stale once it differs.
    #[inline]
    pub fn epoch(&self) -> Option<u64> {
        match self {
            Self::Tcp {
                follow: Some(p), ..
            } => Some(p.epoch()),
            _ => None,
        }
    }

    /// Another server reached the same way as this one (cluster nodes): same transport options
    /// (TLS settings, MPTCP), another address. The TLS server name is `--sni` if given, else
    /// `host`.
    pub fn at(&self, host: &str, port: u16) -> Result<Self, EngineError> {
        let transport = match self {
            Self::Tcp { transport, .. } => transport.clone(),
            Self::Unix(_) => Transport::default(),
        };
        Self::tcp_with(host, port, transport)
    }

    /// The transport options (`None` for a unix socket).
    pub fn transport(&self) -> Option<&Transport> {
        match self {
            Self::Tcp { transport, .. } => Some(transport),
            Self::Unix(_) => None,
        }
    }

    /// `host:port` or the socket path, for messages.
    pub fn display(&self) -> String {
        match self {
            Self::Tcp {
                follow: Some(p), ..
            } => p.current().display,
            Self::Tcp { display, .. } => display.clone(),
            Self::Unix(path) => path.display().to_string(),
        }
    }

    /// The error for a failed connect to this target: a TLS negotiation failure, a kernel
    /// without MPTCP, or the socket's reason.
    pub fn connect_error(&self, e: &io::Error) -> EngineError {
        if let Some(t) = tls_error(e) {
            return EngineError::Tls {
                target: self.display(),
                reason: t.to_string(),
            };
        }
        if e.kind() == io::ErrorKind::Unsupported && e.to_string() == MPTCP_UNSUPPORTED {
            return EngineError::Other(MPTCP_UNSUPPORTED.to_string());
        }
        EngineError::Connect {
            target: self.display(),
            reason: io_reason(e),
        }
    }

    /// A blocking connect with [`CONNECT_TIMEOUT`] (or `--connection-timeout`; and the TLS
    /// handshake, within the same time), returned as a blocking stream.
    pub fn connect_blocking(&self) -> Result<BlockingStream, EngineError> {
        self.connect_blocking_within(self.connect_timeout())
    }

    /// How long a connect to this target may take (`--connection-timeout`, else
    /// [`CONNECT_TIMEOUT`]).
    pub fn connect_timeout(&self) -> Duration {
        self.transport()
            .map_or(CONNECT_TIMEOUT, Transport::connect_timeout)
    }

    /// [`Target::connect_blocking`] with another timeout (the server watch, which must not
    /// stall a test's end for 10 s).
    pub fn connect_blocking_within(
        &self,
        timeout: Duration,
    ) -> Result<BlockingStream, EngineError> {
        self.connect_with(
            |addr, mptcp| tcp_connect_blocking(addr, mptcp, timeout),
            BlockingStream::Tcp,
            |tls, s, host| {
                tls.connect_blocking(s, host, timeout)
                    .map(|s| BlockingStream::Tls(Box::new(s)))
            },
            |path| UnixStream::connect(path).map(BlockingStream::Unix),
        )
    }

    /// A connected non-blocking stream for a worker (setup-time connect).
    pub fn connect_for_worker(&self) -> Result<Stream, EngineError> {
        let s = self.connect_blocking()?;
        s.into_nonblocking().map_err(|e| self.connect_error(&e))
    }

    /// Starts a non-blocking connect (`-k 0` reconnects): call [`Stream::finish_connect`] on
    /// readiness (writable, or readable during a TLS handshake) until it says connected.
    pub fn connect_nonblocking(&self) -> Result<Stream, EngineError> {
        self.connect_with(
            tcp_connect_nonblocking,
            Stream::Tcp,
            |tls, s, host| tls.start(s, host).map(|s| Stream::Tls(Box::new(s))),
            |path| mio::net::UnixStream::connect(path).map(Stream::Unix),
        )
    }

    /// The one shape of every connect: TCP (or MPTCP), then TLS when the transport has it, or a
    /// unix socket. The arguments say how each step is done (blocking or not); every failure
    /// becomes [`Target::connect_error`].
    fn connect_with<T, S>(
        &self,
        tcp: impl FnOnce(&SocketAddr, bool) -> io::Result<T>,
        plain: impl FnOnce(T) -> S,
        tls: impl FnOnce(&TlsClient, T, &str) -> io::Result<S>,
        unix: impl FnOnce(&Path) -> io::Result<S>,
    ) -> Result<S, EngineError> {
        self.connect_io(tcp, plain, tls, unix)
            .map_err(|e| self.connect_error(&e))
    }

    /// A blocking connect (as [`Target::connect_blocking_within`]) that calls `after_socket`
    /// between the TCP (or unix) connect and the TLS handshake, so a connection storm can time
    /// the two apart; a failure keeps the socket's own error (its errno tells a client-side limit
    /// from a server's refusal). `tls_failed` says whether it came after `after_socket`, that is
    /// from the handshake.
    pub fn connect_blocking_staged(
        &self,
        timeout: Duration,
        after_socket: &mut dyn FnMut(),
    ) -> Result<BlockingStream, (bool, io::Error)> {
        let socket_done = std::cell::Cell::new(false);
        let after_socket = std::cell::RefCell::new(after_socket);
        self.connect_io(
            |addr, mptcp| {
                let s = tcp_connect_blocking(addr, mptcp, timeout)?;
                socket_done.set(true);
                (after_socket.borrow_mut())();
                Ok(s)
            },
            BlockingStream::Tcp,
            |tls, s, host| {
                tls.connect_blocking(s, host, timeout)
                    .map(|s| BlockingStream::Tls(Box::new(s)))
            },
            |path| {
                let s = UnixStream::connect(path)?;
                socket_done.set(true);
                (after_socket.borrow_mut())();
                Ok(BlockingStream::Unix(s))
            },
        )
        .map_err(|e| (socket_done.get(), e))
    }

    /// [`Target::connect_with`] before its errors become [`Target::connect_error`].
    fn connect_io<T, S>(
        &self,
        tcp: impl FnOnce(&SocketAddr, bool) -> io::Result<T>,
        plain: impl FnOnce(T) -> S,
        tls: impl FnOnce(&TlsClient, T, &str) -> io::Result<S>,
        unix: impl FnOnce(&Path) -> io::Result<S>,
    ) -> io::Result<S> {
        match self {
            Self::Tcp {
                addr,
                host,
                transport,
                follow,
                ..
            } => {
                // The one place a followed primary's address is read (see `engine::follow`).
                let now = follow.as_ref().map(|p| p.current());
                let (addr, host) = match &now {
                    Some(p) => (&p.addr, p.host.as_str()),
                    None => (addr, host.as_str()),
                };
                let s = tcp(addr, transport.mptcp)?;
                match &transport.tls {
                    None => Ok(plain(s)),
                    Some(client) => tls(client, s, host),
                }
            }
            Self::Unix(path) => unix(path),
        }
    }
}

/// A TCP (or MPTCP) socket for `addr`, close-on-exec.
fn tcp_socket(addr: &SocketAddr, mptcp: bool) -> io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    if !mptcp {
        return Socket::new(
            Domain::for_address(*addr),
            Type::STREAM,
            Some(Protocol::TCP),
        );
    }
    #[cfg(target_os = "linux")]
    {
        Socket::new(
            Domain::for_address(*addr),
            Type::STREAM,
            Some(Protocol::MPTCP),
        )
        .map_err(|e| {
            match e.raw_os_error() {
                // No MPTCP in the kernel, or net.mptcp.enabled=0, or not for this family.
                Some(
                    libc::EPROTONOSUPPORT
                    | libc::ENOPROTOOPT
                    | libc::EINVAL
                    | libc::EAFNOSUPPORT
                    | libc::ESOCKTNOSUPPORT,
                ) => io::Error::new(io::ErrorKind::Unsupported, MPTCP_UNSUPPORTED),
                _ => e,
            }
        })
    }
    #[cfg(not(target_os = "linux"))]
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        MPTCP_UNSUPPORTED,
    ))
}

/// A blocking connect within `timeout` that Ctrl-C or SIGTERM cuts short (see
/// `engine::connect`), with Nagle off.
fn tcp_connect_blocking(
    addr: &SocketAddr,
    mptcp: bool,
    timeout: Duration,
) -> io::Result<TcpStream> {
    let sock = tcp_socket(addr, mptcp)?;
    connect_within(&sock, addr, timeout, &interrupt_requested)?;
    let s = TcpStream::from(sock);
    s.set_nodelay(true)?;
    // Receive timestamps for the client's delay (metrics::rx_delay); without them, no figure.
    crate::metrics::rx_delay::enable(std::os::fd::AsRawFd::as_raw_fd(&s));
    Ok(s)
}

/// A non-blocking connect under way, with Nagle off.
fn tcp_connect_nonblocking(addr: &SocketAddr, mptcp: bool) -> io::Result<mio::net::TcpStream> {
    let s = if mptcp {
        let sock = tcp_socket(addr, true)?;
        sock.set_nonblocking(true)?;
        match sock.connect(&(*addr).into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        mio::net::TcpStream::from_std(sock.into())
    } else {
        mio::net::TcpStream::connect(*addr)?
    };
    s.set_nodelay(true)?;
    crate::metrics::rx_delay::enable(std::os::fd::AsRawFd::as_raw_fd(&s));
    Ok(s)
}

/// A blocking socket (control connections).
#[derive(Debug)]
pub enum BlockingStream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
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
            Self::Tls(s) => s.set_timeouts(t),
        }
    }

    /// Whether a TLS connection's handshake resumed an earlier session (`--tls-resume`);
    /// `None` for plain TCP and unix sockets.
    pub fn tls_resumed(&self) -> Option<bool> {
        match self {
            Self::Tls(s) => Some(s.resumed()),
            _ => None,
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
            Self::Tls(s) => {
                s.set_nonblocking()?;
                Ok(Stream::Tls(s))
            }
        }
    }
}

impl Read for BlockingStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
            Self::Tls(s) => s.read_blocking(buf),
        }
    }
}

impl Write for BlockingStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
            Self::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A non-blocking socket owned by one worker.
///
/// The contract the worker relies on, for every variant: a `read` that returns less than the
/// buffer means the socket is drained (wait for the next readiness edge); `WouldBlock` from a
/// write means "register write interest and call again with the same bytes".
#[derive(Debug)]
pub enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
            Self::Tls(s) => s.read(buf),
        }
    }

    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
            Self::Tls(s) => s.write(buf),
        }
    }

    /// TLS has no gather write: it sends the first non-empty slice (one record), and the caller
    /// loops for the rest, as after any partial write.
    #[inline]
    pub fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write_vectored(bufs),
            Self::Unix(s) => s.write_vectored(bufs),
            Self::Tls(s) => match bufs.iter().find(|b| !b.is_empty()) {
                Some(b) => s.write(b),
                None => Ok(0),
            },
        }
    }

    /// Closes both directions now (the socket itself is freed when replaced): a connection given
    /// up after a timeout stops holding the server's side while it waits to be reopened.
    pub fn shutdown(&mut self) {
        let _ = match self {
            Self::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Self::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Self::Tls(s) => s.tcp().shutdown(std::net::Shutdown::Both),
        };
    }

    /// After a non-blocking connect reported readiness: `Ok(())` when connected (for TLS: when
    /// the handshake is done); `NotConnected` while it is still under way.
    pub fn finish_connect(&mut self) -> io::Result<()> {
        let err = match self {
            Self::Tcp(s) => s.take_error()?,
            Self::Unix(s) => s.take_error()?,
            Self::Tls(s) => return s.finish_connect(),
        };
        if let Some(e) = err {
            return Err(e);
        }
        match self {
            Self::Tcp(s) => s.peer_addr().map(|_| ()),
            Self::Unix(s) => s.peer_addr().map(|_| ()),
            Self::Tls(_) => Ok(()),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.register(r, t, i),
            Self::Unix(s) => s.register(r, t, i),
            Self::Tls(s) => s.tcp().register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.reregister(r, t, i),
            Self::Unix(s) => s.reregister(r, t, i),
            Self::Tls(s) => s.tcp().reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.deregister(r),
            Self::Unix(s) => s.deregister(r),
            Self::Tls(s) => s.tcp().deregister(r),
        }
    }
}

/// Why a host gave no address to connect to. An address written out (`-s 127.0.0.1 -6`) is not a
/// host name that failed to resolve: the line says which family it is, so the user drops the
/// `-4`/`-6` or the address rather than looking at DNS.
fn no_address_reason(host: &str, family: Option<Family>) -> String {
    let literal = host.parse::<std::net::IpAddr>().ok();
    match (family, literal) {
        (Some(Family::V6), Some(std::net::IpAddr::V4(_))) => {
            format!("{host} is an IPv4 address, and -6 asks for IPv6")
        }
        (Some(Family::V4), Some(std::net::IpAddr::V6(_))) => {
            format!("{host} is an IPv6 address, and -4 asks for IPv4")
        }
        (Some(Family::V4), _) => "the host name has no IPv4 address (-4)".into(),
        (Some(Family::V6), _) => "the host name has no IPv6 address (-6)".into(),
        (None, _) => "the host name has no address".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tls::{TlsClient, TlsOptions, Verify};

    fn tls_transport(sni: Option<&str>) -> Transport {
        let client = TlsClient::new(&TlsOptions {
            sni: sni.map(str::to_string),
            verify: Verify::Nothing,
            ..TlsOptions::default()
        })
        .unwrap();
        Transport {
            tls: Some(Arc::new(client)),
            mptcp: true,
            ..Transport::default()
        }
    }

    #[test]
    fn an_address_of_the_other_family_is_named_not_looked_up() {
        let v6 = Transport {
            family: Some(Family::V6),
            ..Transport::default()
        };
        let v4 = Transport {
            family: Some(Family::V4),
            ..Transport::default()
        };
        let reason = |host: &str, t: &Transport| match Target::tcp_with(host, 6379, t.clone()) {
            Err(EngineError::Connect { reason, .. }) => reason,
            other => panic!("{host}: expected a connect error, got {other:?}"),
        };
        assert_eq!(
            reason("127.0.0.1", &v6),
            "127.0.0.1 is an IPv4 address, and -6 asks for IPv6"
        );
        assert_eq!(
            reason("::1", &v4),
            "::1 is an IPv6 address, and -4 asks for IPv4"
        );
    }
    #[test]
    fn another_node_is_reached_the_same_way() {
        let first = Target::tcp_with("127.0.0.1", 7000, tls_transport(None)).unwrap();
        let other = first.at("127.0.0.2", 7001).unwrap();
        let Target::Tcp {
            addr,
            host,
            display,
            transport,
            follow: None,
        } = &other
        else {
            panic!("{other:?}");
        };
        assert_eq!(addr.to_string(), "127.0.0.2:7001");
        assert_eq!(
            (host.as_str(), display.as_str()),
            ("127.0.0.2", "127.0.0.2:7001")
        );
        assert!(transport.mptcp);
        let tls = transport.tls.as_ref().expect("TLS kept");
        // The node's own host is its TLS name, unless --sni names every node.
        assert_eq!(tls.server_name(host), "127.0.0.2");
        let first = Target::tcp_with("127.0.0.1", 7000, tls_transport(Some("redis.test"))).unwrap();
        let other = first.at("127.0.0.2", 7001).unwrap();
        let tls = other.transport().unwrap().tls.as_ref().unwrap();
        assert_eq!(tls.server_name("127.0.0.2"), "redis.test");
        // Plain stays plain.
        let plain = Target::tcp("127.0.0.1", 7000)
            .unwrap()
            .at("::1", 7001)
            .unwrap();
        assert!(plain.transport().unwrap().tls.is_none());
        assert_eq!(plain.display(), "[::1]:7001");
    }

    /// The protocol the kernel reports for a socket (`SO_PROTOCOL`).
    #[cfg(target_os = "linux")]
    fn protocol_of(fd: &impl std::os::fd::AsRawFd) -> i32 {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt on a descriptor we own, writing one c_int into `value`.
        let rc = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PROTOCOL,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0, "getsockopt: {}", io::Error::last_os_error());
        value
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn mptcp_sockets_are_mptcp_or_the_error_says_why() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let target = Target::tcp_with(
            "127.0.0.1",
            addr.port(),
            Transport {
                mptcp: true,
                ..Transport::default()
            },
        )
        .unwrap();
        match target.connect_blocking() {
            Ok(BlockingStream::Tcp(s)) => {
                assert_eq!(protocol_of(&s), libc::IPPROTO_MPTCP);
                // The non-blocking connect (-k 0) too.
                let Ok(Stream::Tcp(s)) = target.connect_nonblocking() else {
                    panic!("non-blocking MPTCP connect failed");
                };
                assert_eq!(protocol_of(&s), libc::IPPROTO_MPTCP);
            }
            Ok(other) => panic!("{other:?}"),
            Err(e) => assert_eq!(e, EngineError::Other(MPTCP_UNSUPPORTED.to_string())),
        }
        // Without --mptcp: plain TCP.
        let Ok(BlockingStream::Tcp(s)) = Target::tcp("127.0.0.1", addr.port())
            .unwrap()
            .connect_blocking()
        else {
            panic!("plain connect failed");
        };
        assert_eq!(protocol_of(&s), libc::IPPROTO_TCP);
    }
}
