//! TLS: the client configuration built once from `--tls` and its options, and a stream that keeps
//! the worker's I/O contract. rustls with the *ring* provider (why: docs/architecture.md, "TLS").
//!
//! Owns: verification (CA files and directories, the system's roots, `--insecure`), the
//! per-connection server name (SNI and name verification), the client certificate, the cipher
//! lists ([`ciphers`]), handshakes (blocking for setup, non-blocking for `-k 0` reconnects), and
//! turning TLS errors into one line that says what to do. Must not: decide exit codes or format
//! reports.
//!
//! The stream contract the worker relies on (see `conn::Stream`): a `read` that returns less than
//! the buffer means "drained, wait for the next readiness edge", and a `write` that cannot finish
//! says `WouldBlock` so that write interest gets registered, then is called again with the same
//! bytes. [`TlsStream::read`] hands out decrypted data and pulls more records until the buffer is
//! full or nothing is left: it knows the socket is drained without an extra `recv` that returns
//! EAGAIN, because the socket wrapper under rustls notes whether its last `recv` was short, and
//! rustls decrypts every complete record it holds at once (at most a partial record stays, whose
//! rest will raise a new edge). [`TlsStream::write`] encrypts, then sends; when the socket is full
//! it keeps the count of the plaintext it took, says `WouldBlock`, and on the retry (the same
//! bytes) finishes sending before it reports that count — so nothing encrypted waits without
//! write interest, and nothing is sent twice.

pub mod ciphers;
mod trust;
mod v1;

use std::fmt;
use std::io::{self, IoSlice, Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, ring as provider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{PrivateKeyDer, ServerName};
use rustls::{
    AlertDescription, CertificateError, ClientConfig, ClientConnection, Error as RustlsError,
    PeerIncompatible, SupportedCipherSuite,
};

use trust::{Check, Verifier, read_file, read_pem_certificates, trust_roots};

/// What TLS set-up takes: whom to trust and how, the client certificate, the cipher lists and
/// versions to offer. `plan::tls_options` resolves it from the flags as given (`cli::TlsArgs`),
/// the one place that knows both: `cli` imports nothing of the crate and the engine nothing of
/// `cli`. Typed rather than flat, so no contradiction (`--insecure` with `--tls-verify-name`, a
/// certificate without its key) reaches the engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// `--sni`: the server name sent and verified instead of the host.
    pub sni: Option<String>,
    /// How the server's certificate is verified.
    pub verify: Verify,
    /// `--cert` and `--key`: the client certificate to authenticate with.
    pub client_cert: Option<ClientCert>,
    /// `--tls-ciphers` (TLS 1.2) and `--tls-ciphersuites` (TLS 1.3): OpenSSL's list syntax.
    pub ciphers: Option<String>,
    pub ciphersuites: Option<String>,
    /// memtier's `--tls-protocols`: the versions offered, `(TLS 1.2, TLS 1.3)`; `None` offers
    /// both.
    pub versions: Option<(bool, bool)>,
    /// `--tls-resume`: keep session tickets and resume (a connection storm times resumed
    /// handshakes apart from full ones); off by default, as valkey-benchmark never resumes.
    pub resume: bool,
}

/// How the server's certificate is verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verify {
    /// `--insecure`: not at all (the handshake's signatures still are).
    Nothing,
    /// The chain up to the CAs of `--cacert` (PEM certificates) and `--cacertdir` (a directory
    /// of them), or of the system's store when neither is given; with `name`
    /// (`--tls-verify-name`) the certificate must also name the host (or `--sni`). Off by
    /// default, as in valkey-benchmark, which checks only the chain.
    Chain {
        cacert: Option<PathBuf>,
        cacertdir: Option<PathBuf>,
        name: bool,
    },
}

impl Default for Verify {
    fn default() -> Self {
        Verify::Chain {
            cacert: None,
            cacertdir: None,
            name: false,
        }
    }
}

/// `--cert` and `--key`: a client certificate (chain) and its private key, PEM files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCert {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Checks `--tls-ciphers` and `--tls-ciphersuites` without any I/O (see [`ciphers`]): an error is
/// one line (a usage error). Entries that match nothing are skipped silently, as OpenSSL does.
pub fn check_cipher_lists(ciphers: Option<&str>, ciphersuites: Option<&str>) -> Result<(), String> {
    cipher_suites(ciphers, ciphersuites).map(drop)
}

/// The suites to offer, TLS 1.3 first, in the order of preference given (OpenSSL's default order
/// without the options).
fn cipher_suites(
    ciphers: Option<&str>,
    ciphersuites: Option<&str>,
) -> Result<Vec<SupportedCipherSuite>, String> {
    use provider::cipher_suite as cs;
    let tls13 = [
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
        cs::TLS13_AES_128_GCM_SHA256,
    ];
    let tls12 = [
        cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ];
    let tls13_chosen = match ciphersuites {
        Some(list) => ciphers::tls13(list)?,
        None => (0..tls13.len()).collect(),
    };
    let tls12_chosen = match ciphers {
        Some(list) => ciphers::tls12(list)?,
        None => (0..tls12.len()).collect(),
    };
    Ok(tls13_chosen
        .into_iter()
        .map(|i| tls13[i])
        .chain(tls12_chosen.into_iter().map(|i| tls12[i]))
        .collect())
}

/// The versions to offer: both unless `--tls-protocols` chose (the CLI refuses a choice of
/// neither).
fn protocol_versions(v: Option<(bool, bool)>) -> Vec<&'static rustls::SupportedProtocolVersion> {
    let (tls12, tls13) = v.unwrap_or((true, true));
    let mut out = Vec::with_capacity(2);
    if tls13 {
        out.push(&rustls::version::TLS13);
    }
    if tls12 {
        out.push(&rustls::version::TLS12);
    }
    out
}

/// The client side of TLS, shared (in an `Arc`) by every connection of a run.
pub struct TlsClient {
    config: Arc<ClientConfig>,
    /// `--sni`, sent and verified instead of each connection's host.
    sni: Option<String>,
    /// What error messages need to know.
    ca_given: bool,
    verify: bool,
    /// Whether the certificate must also be valid for the host (`--tls-verify-name`).
    verify_name: bool,
    ciphers_given: bool,
    client_cert: bool,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient")
            .field("sni", &self.sni)
            .field("verify", &self.verify)
            .field("verify_name", &self.verify_name)
            .finish_non_exhaustive()
    }
}

impl TlsClient {
    /// Builds the configuration: reads the CA, certificate and key files (a file problem is one
    /// line, which `run` turns into exit 1) and applies the cipher lists (whose warnings
    /// [`check_cipher_lists`] gave when the plan was made).
    pub fn new(o: &TlsOptions) -> Result<Self, String> {
        let suites = cipher_suites(o.ciphers.as_deref(), o.ciphersuites.as_deref())?;
        let provider = Arc::new(CryptoProvider {
            cipher_suites: suites,
            ..provider::default_provider()
        });
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&protocol_versions(o.versions))
            .map_err(|e| format!("cannot set up TLS: {e}"))?;

        let check = match &o.verify {
            Verify::Nothing => Check::Nothing,
            Verify::Chain {
                cacert,
                cacertdir,
                name,
            } => {
                let (roots, cas) = trust_roots(cacert.as_deref(), cacertdir.as_deref())?;
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| format!("cannot set up certificate verification: {e}"))?;
                Check::Chain {
                    webpki,
                    verify_name: *name,
                    cas,
                }
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier {
                check,
                algorithms: provider.signature_verification_algorithms,
            }));

        let mut config = match &o.client_cert {
            Some(ClientCert { cert, key }) => {
                let chain = read_pem_certificates("--cert", cert)?;
                if chain.is_empty() {
                    return Err(format!(
                        "--cert {}: no PEM certificate in the file",
                        cert.display()
                    ));
                }
                let bytes = read_file("--key", key)?;
                let key_der = PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| {
                    format!(
                        "--key {}: no usable PEM private key ({e}; PKCS#8, PKCS#1 RSA or SEC1 EC, \
                         not encrypted)",
                        key.display()
                    )
                })?;
                client_auth(builder, &provider, chain, key_der).map_err(|e| match e {
                    RustlsError::InconsistentKeys(_) => format!(
                        "--key {} is not the private key of --cert {}",
                        key.display(),
                        cert.display()
                    ),
                    // rustls reads the certificate itself here (not the server's): its
                    // "invalid peer certificate" wording would point at the wrong side.
                    RustlsError::InvalidCertificate(e) => {
                        unusable_client_certificate(cert, &format!("{e:?}"))
                    }
                    e => format!("--cert/--key: {e}"),
                })?
            }
            None => builder.with_no_client_auth(),
        };
        // A full handshake on every connection, as valkey-benchmark does (it never resumes), so
        // that `-k 0` measures the same work.
        if !o.resume {
            config.resumption = Resumption::disabled();
        }
        Ok(TlsClient {
            config: Arc::new(config),
            sni: o.sni.clone(),
            ca_given: matches!(&o.verify, Verify::Chain { cacert, cacertdir, .. }
                if cacert.is_some() || cacertdir.is_some()),
            verify: o.verify != Verify::Nothing,
            verify_name: matches!(o.verify, Verify::Chain { name: true, .. }),
            ciphers_given: o.ciphers.is_some() || o.ciphersuites.is_some(),
            client_cert: o.client_cert.is_some(),
        })
    }

    /// The name a connection to `host` presents (SNI) and verifies: `--sni`, else the host.
    pub fn server_name<'a>(&'a self, host: &'a str) -> &'a str {
        self.sni.as_deref().unwrap_or(host)
    }

    /// Runs the handshake on a connected blocking socket, within `timeout`.
    pub(crate) fn connect_blocking(
        &self,
        tcp: std::net::TcpStream,
        host: &str,
        timeout: Duration,
    ) -> io::Result<TlsStream> {
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        let mut stream = self.start(mio::net::TcpStream::from_std(tcp), host)?;
        match stream.handshake() {
            Ok(true) => {}
            // A blocking socket only "would block" when its timeout expires.
            Ok(false) => {
                return Err(tls_io_error(
                    true,
                    format!(
                        "the TLS handshake did not finish within {}s (is this a TLS port? a \
                         plain server waits for a command instead)",
                        timeout.as_secs()
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
        stream.set_timeouts(None)?;
        Ok(stream)
    }

    /// Wraps a (connected or connecting) socket; the handshake runs in
    /// [`TlsStream::finish_connect`] or [`TlsClient::connect_blocking`].
    pub(crate) fn start(&self, tcp: mio::net::TcpStream, host: &str) -> io::Result<TlsStream> {
        let name = self.server_name(host);
        // An address is verified against the certificate's IP entries and never sent as SNI.
        let server_name = match name.parse::<IpAddr>() {
            Ok(ip) => ServerName::IpAddress(ip.into()),
            Err(_) => ServerName::try_from(name.to_string()).map_err(|_| {
                tls_io_error(true, format!("{name:?} is not a valid TLS server name"))
            })?,
        };
        let conn = ClientConnection::new(self.config.clone(), server_name)
            .map_err(|e| tls_io_error(true, e.to_string()))?;
        Ok(TlsStream {
            conn,
            sock: Sock {
                tcp,
                drained: false,
            },
            unsent: 0,
            received: false,
            eof: false,
            deferred: None,
            hints: Hints {
                name: name.to_string(),
                ca_given: self.ca_given,
                ciphers_given: self.ciphers_given,
                client_cert: self.client_cert,
            },
        })
    }
}

/// A TLS problem carried inside an `io::Error`, so it travels through the same paths as socket
/// errors; `handshake` marks the ones that mean "could not negotiate a TLS connection".
#[derive(Debug)]
pub struct TlsError {
    pub handshake: bool,
    message: String,
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TlsError {}

/// How a handshake the server ended with a close begins (`idle.rs` tells it apart: a server
/// that has completed handshakes before and closes the next one is at its `maxclients`).
pub(crate) const CLOSED_IN_HANDSHAKE: &str =
    "the server closed the connection during the TLS handshake";

fn tls_io_error(handshake: bool, message: String) -> io::Error {
    io::Error::other(TlsError { handshake, message })
}

/// The TLS error inside `e`, if it carries one.
pub fn tls_error(e: &io::Error) -> Option<&TlsError> {
    e.get_ref()?.downcast_ref::<TlsError>()
}

/// The TCP socket under rustls. It notes whether its last read left the kernel's buffer empty (a
/// short read or EAGAIN), which tells [`TlsStream::read`] when to stop without another `recv`.
#[derive(Debug)]
struct Sock {
    tcp: mio::net::TcpStream,
    drained: bool,
}

impl Read for Sock {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.tcp.read(buf) {
            Ok(n) => {
                self.drained = n < buf.len();
                Ok(n)
            }
            Err(e) => {
                self.drained = e.kind() == io::ErrorKind::WouldBlock;
                Err(e)
            }
        }
    }
}

impl Write for Sock {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.write(buf)
    }
    #[inline]
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.tcp.write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What an error message needs to know about the connection.
#[derive(Debug)]
struct Hints {
    /// The name presented and verified.
    name: String,
    ca_given: bool,
    ciphers_given: bool,
    client_cert: bool,
}

/// A TLS connection over TCP, blocking (control connections) or not (workers).
#[derive(Debug)]
pub struct TlsStream {
    conn: ClientConnection,
    sock: Sock,
    /// Plaintext taken by a write whose records are not all sent yet: reported (as written) once
    /// they are, when the caller retries with the same bytes.
    unsent: usize,
    /// Application data has arrived (an alert before that is a negotiation failure: TLS 1.3
    /// servers reject a missing client certificate after the client thinks it is done).
    received: bool,
    /// The server closed the session; every later read returns 0.
    eof: bool,
    /// A failure met after some data was already read; returned by the next read.
    deferred: Option<io::Error>,
    hints: Hints,
}

impl TlsStream {
    /// The TCP socket, for registering with a poller.
    pub(crate) fn tcp(&mut self) -> &mut mio::net::TcpStream {
        &mut self.sock.tcp
    }

    /// Whether the handshake resumed an earlier session (rustls's own account of it).
    pub(crate) fn resumed(&self) -> bool {
        self.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
    }

    pub(crate) fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        let sock = socket2::SockRef::from(&self.sock.tcp);
        sock.set_read_timeout(t)?;
        sock.set_write_timeout(t)
    }

    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        socket2::SockRef::from(&self.sock.tcp).set_nonblocking(true)
    }

    /// Moves the handshake on as far as the socket allows: `Ok(true)` when it is done,
    /// `Ok(false)` when it waits for the network.
    fn handshake(&mut self) -> io::Result<bool> {
        loop {
            match self.send_pending() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => {
                    return Err(tls_io_error(
                        true,
                        format!(
                            "{CLOSED_IN_HANDSHAKE} (is this a TLS port? the server does not \
                             answer like a TLS server)"
                        ),
                    ));
                }
                Ok(_) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        let _ = self.send_pending(); // the alert, if it goes
                        return Err(self.negotiation_failure(&e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    /// Non-blocking handshake progress after a non-blocking connect: `Ok(())` once the session
    /// is up, `NotConnected` while it still waits for the network (on readiness, call again).
    pub(crate) fn finish_connect(&mut self) -> io::Result<()> {
        if !self.conn.is_handshaking() && !self.conn.wants_write() {
            return Ok(());
        }
        if let Some(e) = self.sock.tcp.take_error()? {
            return Err(e);
        }
        self.sock.tcp.peer_addr()?; // NotConnected while the TCP connect is in progress
        match self.handshake()? {
            true => Ok(()),
            false => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Sends every record rustls holds; `WouldBlock` if the socket is full first.
    #[inline]
    fn send_pending(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.sock)?;
        }
        Ok(())
    }

    /// Reads for a non-blocking worker: hands out decrypted data and pulls more records until
    /// `buf` is full or nothing is left in the socket or in rustls, so that a short count means
    /// "drained" (the worker's edge-triggered contract). `WouldBlock` only when nothing at all was
    /// read.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let mut filled = 0;
        while filled < buf.len() && !self.eof {
            match self.take_plaintext(&mut buf[filled..]) {
                Some(n) => {
                    filled += n;
                    continue;
                }
                None if self.eof => break,
                None => {}
            }
            // Nothing decrypted is left; rustls holds at most part of a record. If the last
            // recv emptied the socket, the rest will come with a new readiness edge.
            if filled > 0 && self.sock.drained {
                break;
            }
            match self.pull() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if filled == 0 {
                        return Err(e);
                    }
                    break;
                }
                Err(e) if filled == 0 => return Err(e),
                Err(e) => {
                    self.deferred = Some(e);
                    break;
                }
            }
        }
        Ok(filled)
    }

    /// Decrypted data rustls holds: `Some(n > 0)` copied into `buf`, or `None` (none held; at
    /// the end of the session `eof` is set).
    #[inline]
    fn take_plaintext(&mut self, buf: &mut [u8]) -> Option<usize> {
        match self.conn.reader().read(buf) {
            Ok(0) => {
                // close_notify received (buf is never empty here).
                self.eof = true;
                None
            }
            Ok(n) => {
                self.received = true;
                Some(n)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => None,
            // The peer closed without close_notify (Redis does): an ordinary end here, since
            // RESP framing detects a truncated reply anyway.
            Err(_) => {
                self.eof = true;
                None
            }
        }
    }

    /// One `recv` into rustls and decryption of every complete record; responses rustls owes
    /// the server (an alert, a key update) are sent if the socket takes them now, else with the
    /// next write. At the end of the stream, `take_plaintext` hands out what is left, then
    /// reports the end.
    #[inline]
    fn pull(&mut self) -> io::Result<()> {
        self.conn.read_tls(&mut self.sock)?;
        let processed = self.conn.process_new_packets();
        if self.conn.wants_write() {
            match self.send_pending() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if processed.is_ok() => return Err(e),
                Err(_) => {}
            }
        }
        match processed {
            Ok(_) => Ok(()),
            Err(e) => Err(self.stream_failure(&e)),
        }
    }

    /// Reads on a blocking socket (control connections): waits for data; 0 at the end of the
    /// session.
    pub fn read_blocking(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(n) = self.take_plaintext(buf) {
                return Ok(n);
            }
            if self.eof {
                return Ok(0);
            }
            // On a blocking socket, WouldBlock is the read timeout: the socket's own error.
            self.pull()?;
        }
    }

    /// Writes (blocking or not): returns how much of `buf` was encrypted and sent. `WouldBlock`
    /// means records are still unsent: call again with the same bytes when writable.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.unsent > 0 {
            self.send_pending()?;
            let n = std::mem::take(&mut self.unsent);
            return Ok(n.min(buf.len()));
        }
        // Records rustls owes from reading (alerts, key updates) go first.
        self.send_pending()?;
        let n = self.conn.writer().write(buf)?;
        match self.send_pending() {
            Ok(()) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.unsent = n;
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// An error after the handshake. Before any data arrived it still means the session was
    /// never usable (a TLS 1.3 server rejecting the client certificate), so it is worded and
    /// classified as a negotiation failure.
    fn stream_failure(&self, e: &RustlsError) -> io::Error {
        if self.received {
            tls_io_error(false, format!("TLS error: {e}"))
        } else {
            self.negotiation_failure(e)
        }
    }

    fn negotiation_failure(&self, e: &RustlsError) -> io::Error {
        tls_io_error(true, describe_failure(e, &self.hints))
    }
}

/// One line saying why a handshake (or the first exchange) failed and what to do about it.
fn describe_failure(e: &RustlsError, h: &Hints) -> String {
    use AlertDescription as A;
    match e {
        RustlsError::InvalidCertificate(c) => match c {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "the server's certificate is not valid for {} (name mismatch, checked \
                     because of --tls-verify-name); connect with a name on the certificate (-h), \
                     or pass that name with --sni",
                    h.name
                )
            }
            CertificateError::UnknownIssuer if h.ca_given => {
                "the server's certificate is not signed by the CA given with --cacert/--cacertdir \
                 (unknown issuer); --insecure skips verification"
                    .to_string()
            }
            CertificateError::UnknownIssuer => {
                "the server's certificate is not signed by a CA in the system's trust store \
                 (unknown issuer): pass its CA with --cacert or --cacertdir, or skip verification \
                 with --insecure"
                    .to_string()
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired (--insecure skips verification)".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet (check the clock; --insecure skips \
                 verification)"
                    .to_string()
            }
            other => format!(
                "the server's certificate was not accepted: {other:?} (--insecure skips \
                 verification)"
            ),
        },
        RustlsError::AlertReceived(A::CertificateRequired) => {
            "the server requires a client certificate (alert: certificate required): pass --cert \
             and --key"
                .to_string()
        }
        RustlsError::AlertReceived(
            alert @ (A::BadCertificate
            | A::UnknownCA
            | A::CertificateUnknown
            | A::UnsupportedCertificate
            | A::CertificateExpired
            | A::CertificateRevoked
            | A::AccessDenied),
        ) if h.client_cert => format!(
            "the server rejected the client certificate (alert: {alert:?}): check --cert/--key \
             and that the server trusts their CA"
        ),
        RustlsError::AlertReceived(A::HandshakeFailure | A::InsufficientSecurity)
        | RustlsError::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon) => {
            let alert = match e {
                RustlsError::AlertReceived(a) => format!("alert: {a:?}"),
                _ => "no cipher suite in common".to_string(),
            };
            if h.ciphers_given {
                format!(
                    "the server refused the handshake ({alert}): no cipher in common with the \
                     server; check --tls-ciphers / --tls-ciphersuites"
                )
            } else {
                format!(
                    "the server refused the handshake ({alert}): no cipher or key exchange in \
                     common with the server (respbench offers TLS 1.2 and 1.3 with ECDHE and \
                     AES-GCM or ChaCha20-Poly1305)"
                )
            }
        }
        RustlsError::AlertReceived(A::ProtocolVersion)
        | RustlsError::PeerIncompatible(PeerIncompatible::ServerDoesNotSupportTls12Or13) => {
            "no TLS version in common with the server (respbench speaks TLS 1.2 and 1.3)"
                .to_string()
        }
        RustlsError::InvalidMessage(_) | RustlsError::InappropriateMessage { .. } => {
            format!("{e} (is this a TLS port? the server does not answer like a TLS server)")
        }
        other => other.to_string(),
    }
}

/// The one line for a `--cert` that rustls refuses to load.
fn unusable_client_certificate(cert: &Path, reason: &str) -> String {
    format!(
        "--cert {}: rustls cannot use this certificate ({reason})",
        cert.display()
    )
}

/// The client certificate and its key. rustls pairs them itself (checking that the key is the
/// certificate's), except for an X.509 v1 certificate, which it cannot read: OpenSSL-based
/// clients accept those, so the pair is made and checked here instead (`v1`).
fn client_auth(
    builder: rustls::ConfigBuilder<ClientConfig, rustls::client::WantsClientCert>,
    provider: &CryptoProvider,
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<ClientConfig, RustlsError> {
    if !chain.first().is_some_and(|c| v1::is_v1(c)) {
        return builder.with_client_auth_cert(chain, key);
    }
    let key = provider.key_provider.load_private_key(key)?;
    let certified = v1::certified_v1_client_key(chain, key)?;
    Ok(
        builder
            .with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> TlsOptions {
        TlsOptions::default()
    }

    #[test]
    fn suites_follow_the_options() {
        let names = |c: Option<&str>, s: Option<&str>| -> Vec<String> {
            cipher_suites(c, s)
                .unwrap()
                .iter()
                .map(|s| format!("{:?}", s.suite()))
                .collect()
        };
        // OpenSSL's default order without options.
        assert_eq!(
            names(None, None),
            [
                "TLS13_AES_256_GCM_SHA384",
                "TLS13_CHACHA20_POLY1305_SHA256",
                "TLS13_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            ]
        );
        assert_eq!(
            names(
                Some("ECDHE-RSA-AES128-GCM-SHA256"),
                Some("TLS_CHACHA20_POLY1305_SHA256")
            ),
            [
                "TLS13_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ]
        );
        assert!(check_cipher_lists(Some("NOPE"), None).is_err());
        assert!(check_cipher_lists(None, Some("NOPE")).is_err());
        assert_eq!(check_cipher_lists(Some("HIGH:!aNULL"), None), Ok(()));
    }

    #[test]
    fn system_roots_without_ca_options() {
        let c = TlsClient::new(&opts()).unwrap();
        assert!(c.verify && !c.ca_given);
        let c = TlsClient::new(&TlsOptions {
            verify: Verify::Nothing,
            ..opts()
        })
        .unwrap();
        assert!(!c.verify);
    }

    #[test]
    fn missing_files_are_named_with_the_reason() {
        let missing = PathBuf::from("/nonexistent/respbench/ca.pem");
        let e = TlsClient::new(&TlsOptions {
            verify: Verify::Chain {
                cacert: Some(missing.clone()),
                cacertdir: None,
                name: false,
            },
            ..opts()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "cannot read --cacert file /nonexistent/respbench/ca.pem: No such file or directory"
        );
        let e = TlsClient::new(&TlsOptions {
            client_cert: Some(ClientCert {
                cert: missing.clone(),
                key: missing,
            }),
            ..opts()
        })
        .unwrap_err();
        assert!(e.starts_with("cannot read --cert file "), "{e}");
        let e = TlsClient::new(&TlsOptions {
            verify: Verify::Chain {
                cacert: None,
                cacertdir: Some("/nonexistent/respbench".into()),
                name: false,
            },
            ..opts()
        })
        .unwrap_err();
        assert!(
            e.starts_with("cannot read --cacertdir /nonexistent/respbench: "),
            "{e}"
        );
    }

    /// A self-signed X.509 v1 certificate (`openssl x509 -req -signkey` without `-extfile`) and
    /// its throwaway P-256 key, made for this test only.
    const V1_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBFjCBvQIULNQCBEAv5uI9QDxu+T7po5cD4OwwCgYIKoZIzj0EAwIwDTELMAkG
A1UEAwwCdjEwIBcNMjYxMTI1MTMxNjIzWhgPMjEyNjExMDExMzE2MjNaMA0xCzAJ
BgNVBAMMAnYxMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEjqzTdbHC5cnAY6/m
lIyWcn+sPv3s0pwNgFV8+y79ryMcSSUUK44y3yegKVv7ebLfZ0pCJxcbCnJnhj53
WTMXsjAKBggqhkjOPQQDAgNIADBFAiBFyjPriA/zShX618wFVXikL4+U0T3Pyrr9
tFaxOb6odgIhAKjU/pyL5Z+WDrCU/eyQR6lDXBIFEmg0Y9S23emh3eCl
-----END CERTIFICATE-----
";
    const V1_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgILpdkKzlwT1EGnRr
w/LRoPEZOPacx8GvZUl0Ji25MAGhRANCAASOrNN1scLlycBjr+aUjJZyf6w+/ezS
nA2AVXz7Lv2vIxxJJRQrjjLfJ6ApW/t5st9nSkInFxsKcmeGPndZMxey
-----END PRIVATE KEY-----
";

    #[test]
    fn a_v1_client_certificate_is_used_and_its_key_checked() {
        let dir = std::env::temp_dir().join(format!("respbench-tls-v1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = (dir.join("v1.crt"), dir.join("v1.key"));
        std::fs::write(&cert, V1_CERT).unwrap();
        std::fs::write(&key, V1_KEY).unwrap();
        let with = |key: &Path| {
            TlsClient::new(&TlsOptions {
                client_cert: Some(ClientCert {
                    cert: cert.clone(),
                    key: key.to_path_buf(),
                }),
                ..opts()
            })
        };
        let accepted = with(&key);
        // Another key of the same kind: the v1 path still checks the pair.
        let other = dir.join("other.key");
        let pair = rcgen::KeyPair::generate().unwrap();
        std::fs::write(&other, pair.serialize_pem()).unwrap();
        let refused = with(&other);
        std::fs::remove_dir_all(&dir).ok();
        assert!(accepted.is_ok(), "{:?}", accepted.err());
        let e = refused.unwrap_err();
        assert!(e.contains("is not the private key of --cert"), "{e}");
    }

    #[test]
    fn files_that_are_not_pem_are_refused_in_one_line() {
        let dir = std::env::temp_dir().join(format!("respbench-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = TlsClient::new(&TlsOptions {
            verify: Verify::Chain {
                cacert: Some(junk.clone()),
                cacertdir: None,
                name: false,
            },
            ..opts()
        })
        .unwrap_err();
        assert_eq!(
            e,
            format!(
                "--cacert {}: no PEM certificate in the file",
                junk.display()
            )
        );
        let e = TlsClient::new(&TlsOptions {
            client_cert: Some(ClientCert {
                cert: junk.clone(),
                key: junk.clone(),
            }),
            ..opts()
        })
        .unwrap_err();
        assert!(e.ends_with("no PEM certificate in the file"), "{e}");
        let e = TlsClient::new(&TlsOptions {
            verify: Verify::Chain {
                cacert: Some(dir.clone()),
                cacertdir: None,
                name: false,
            },
            ..opts()
        })
        .unwrap_err();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        let e = TlsClient::new(&TlsOptions {
            verify: Verify::Chain {
                cacert: None,
                cacertdir: Some(dir.clone()),
                name: false,
            },
            ..opts()
        })
        .unwrap_err();
        assert_eq!(
            e,
            format!(
                "--cacertdir {}: no PEM certificate in the directory",
                dir.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sni_overrides_the_host() {
        let c = TlsClient::new(&TlsOptions {
            sni: Some("redis.test".into()),
            ..opts()
        })
        .unwrap();
        assert_eq!(c.server_name("127.0.0.1"), "redis.test");
        let c = TlsClient::new(&opts()).unwrap();
        assert_eq!(c.server_name("127.0.0.1"), "127.0.0.1");
    }

    /// A rustls server for `localhost` on a loopback port, driven by `serve` in a thread, and
    /// respbench's client stream connected to it (handshake done, non-blocking).
    fn loopback(
        serve: impl FnOnce(rustls::ServerConnection, std::net::TcpStream) + Send + 'static,
    ) -> (TlsStream, std::thread::JoinHandle<()>) {
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let server_config =
            rustls::ServerConfig::builder_with_provider(Arc::new(provider::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(
                    vec![cert.der().clone()],
                    PrivateKeyDer::Pkcs8(signing_key.serialize_der().into()),
                )
                .unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut tcp, _) = listener.accept().unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let mut conn = rustls::ServerConnection::new(Arc::new(server_config)).unwrap();
            while conn.is_handshaking() {
                conn.complete_io(&mut tcp).unwrap();
            }
            serve(conn, tcp);
        });
        let client = TlsClient::new(&TlsOptions {
            verify: Verify::Nothing,
            ..opts()
        })
        .unwrap();
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        let stream = client
            .connect_blocking(tcp, "localhost", Duration::from_secs(10))
            .unwrap();
        stream.set_nonblocking().unwrap();
        (stream, server)
    }

    /// Polls `f` until it stops saying WouldBlock (bounded).
    fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> T {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            match f() {
                Ok(v) => return v,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    assert!(std::time::Instant::now() < deadline, "still WouldBlock");
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn a_short_read_means_drained_and_a_full_one_does_not() {
        // Five records in one burst, then a sixth after the client has read.
        let (go_on, wait) = std::sync::mpsc::channel::<()>();
        let (mut stream, server) = loopback(move |mut conn, mut tcp| {
            for i in 0..5u8 {
                conn.writer().write_all(&[b'a' + i; 100]).unwrap();
            }
            conn.complete_io(&mut tcp).unwrap();
            wait.recv().unwrap();
            conn.writer().write_all(&[b'z'; 100]).unwrap();
            conn.complete_io(&mut tcp).unwrap();
            wait.recv().unwrap();
        });
        let mut buf = [0u8; 150];
        // A full buffer: more may follow without a new readiness edge.
        let n = retry(|| stream.read(&mut buf));
        assert_eq!(n, 150);
        assert!(buf[..100].iter().all(|&b| b == b'a') && buf[100] == b'b');
        // The rest of the burst, in one call, short: drained.
        let mut big = [0u8; 4096];
        let mut got = 0;
        while got < 350 {
            let n = retry(|| stream.read(&mut big[got..]));
            assert!(n < big.len() - got);
            got += n;
        }
        assert_eq!(got, 350);
        // Drained really means nothing is left.
        assert_eq!(
            stream.read(&mut big).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        go_on.send(()).unwrap();
        assert_eq!(retry(|| stream.read(&mut big)), 100);
        go_on.send(()).unwrap();
        server.join().unwrap();
    }

    #[test]
    fn a_write_that_cannot_finish_says_wouldblock_and_the_retry_completes_it() {
        const TOTAL: usize = 4 << 20;
        let data: Vec<u8> = (0..TOTAL).map(|i| (i % 251) as u8).collect();
        let expected = data.clone();
        let (start_reading, wait) = std::sync::mpsc::channel::<()>();
        let (mut stream, server) = loopback(move |mut conn, mut tcp| {
            wait.recv().unwrap();
            let mut got = Vec::with_capacity(TOTAL);
            let mut buf = vec![0u8; 64 * 1024];
            while got.len() < TOTAL {
                conn.complete_io(&mut tcp).unwrap();
                loop {
                    match conn.reader().read(&mut buf) {
                        Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                        _ => break,
                    }
                }
            }
            // Every byte once, in order: nothing lost, nothing sent twice.
            assert!(got == expected, "the server received other bytes");
        });
        socket2::SockRef::from(&stream.sock.tcp)
            .set_send_buffer_size(4096)
            .unwrap();
        // The server does not read yet: writes stop with WouldBlock while records are unsent.
        let mut written = 0;
        let blocked_at = loop {
            match stream.write(&data[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break written,
                Err(e) => panic!("{e}"),
            }
            assert!(written < TOTAL, "the socket never filled");
        };
        assert!(stream.unsent > 0, "WouldBlock left no record behind");
        start_reading.send(()).unwrap();
        // Retries with the same bytes, as the worker does on writability.
        written = blocked_at;
        while written < TOTAL {
            written += retry(|| stream.write(&data[written..]));
        }
        assert_eq!(written, TOTAL);
        server.join().unwrap();
    }

    #[test]
    fn messages_say_what_to_do() {
        let h = Hints {
            name: "127.0.0.1".into(),
            ca_given: true,
            ciphers_given: true,
            client_cert: false,
        };
        let d = |e: RustlsError| describe_failure(&e, &h);
        let m = d(RustlsError::InvalidCertificate(
            CertificateError::NotValidForName,
        ));
        assert!(
            m.starts_with("the server's certificate is not valid for 127.0.0.1")
                && m.contains("--sni")
        );
        let m = d(RustlsError::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
        assert!(m.contains("--cacert") && m.contains("--insecure"), "{m}");
        let m = d(RustlsError::AlertReceived(
            AlertDescription::CertificateRequired,
        ));
        assert!(m.contains("--cert and --key"), "{m}");
        let m = d(RustlsError::AlertReceived(
            AlertDescription::HandshakeFailure,
        ));
        assert!(m.contains("--tls-ciphers"), "{m}");
    }
}
