//! TLS: the client context built once from `--tls` and its options, and a stream that keeps the
//! worker's I/O contract.
//!
//! Owns: OpenSSL configuration (verification, client certificate, cipher lists), the per-connection
//! server name (SNI and name verification), handshakes (blocking for setup, non-blocking for `-k 0`
//! reconnects), and turning OpenSSL's errors into one line that says what to do. Must not: decide
//! exit codes or format reports.
//!
//! The stream contract the worker relies on (see `worker.rs`): a `read` that returns less than the
//! buffer means "drained, wait for the next readiness edge", and a `write` that cannot finish says
//! `WouldBlock`, so write interest gets registered. [`TlsStream::read`] therefore keeps decrypting
//! records until the buffer is full or nothing is left, neither in the socket nor inside OpenSSL.
//! It knows the socket is drained without an extra `recv` that returns EAGAIN: OpenSSL reads
//! ahead (one `recv` takes everything the kernel has), the socket wrapper below notes whether that
//! read was short, and `SSL_has_pending` says whether OpenSSL still holds bytes. A `write` that
//! leaves an encrypted record half-sent returns `WouldBlock`; OpenSSL keeps the rest, and the retry
//! the worker makes on writability (with the same bytes, as OpenSSL requires) sends it.
//!
//! Nothing here allocates per request: OpenSSL keeps one read and one write buffer per
//! connection (`SSL_MODE_RELEASE_BUFFERS` is off), and the error paths that build messages only
//! run when a connection fails.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use foreign_types::ForeignTypeRef;
use openssl::error::ErrorStack;
use openssl::ssl::{
    self, ErrorCode, Ssl, SslContext, SslContextBuilder, SslFiletype, SslMethod, SslMode,
    SslOptions, SslRef, SslStream, SslVerifyMode,
};
use openssl::x509::X509VerifyResult;
use openssl::x509::verify::X509CheckFlags;

/// The TLS options as given on the command line (`cli::TlsArgs` without `enabled`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// `--sni`: the server name sent and verified instead of the host.
    pub sni: Option<String>,
    /// `--cacert`: CA certificates (PEM) to verify the server with.
    pub cacert: Option<PathBuf>,
    /// `--cacertdir`: an OpenSSL hashed directory of CA certificates.
    pub cacertdir: Option<PathBuf>,
    /// `--insecure`: no verification of the server's certificate.
    pub insecure: bool,
    /// `--cert` / `--key`: the client certificate (chain) and its private key (PEM).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// `--tls-ciphers`: OpenSSL cipher list for TLS 1.2 and below.
    pub ciphers: Option<String>,
    /// `--tls-ciphersuites`: OpenSSL TLS 1.3 ciphersuite list.
    pub ciphersuites: Option<String>,
}

/// The names OpenSSL 3 knows for TLS 1.3 ciphersuites (RFC 8446), for messages.
const TLS13_NAMES: &str = "TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256, \
                           TLS_AES_128_GCM_SHA256, TLS_AES_128_CCM_SHA256, TLS_AES_128_CCM_8_SHA256";

/// `X509_V_ERR_HOSTNAME_MISMATCH` and `X509_V_ERR_IP_ADDRESS_MISMATCH` (x509_vfy.h).
const VERIFY_HOSTNAME_MISMATCH: i32 = 62;
const VERIFY_IP_ADDRESS_MISMATCH: i32 = 64;

/// Checks `--tls-ciphers` and `--tls-ciphersuites` without any I/O, with OpenSSL's own parser (so
/// the syntax is exactly OpenSSL's: `--tls-ciphers` entries separated by `:`, `,` or spaces, with
/// keywords, `!`/`-`/`+` and `@STRENGTH`; `--tls-ciphersuites` names separated by `:`).
///
/// A list from which OpenSSL selects nothing is an error (one line). Entries that select nothing
/// while others do are ignored by OpenSSL, as in valkey-benchmark; they come back as a warning.
pub fn check_cipher_lists(
    ciphers: Option<&str>,
    ciphersuites: Option<&str>,
) -> Result<Vec<String>, String> {
    let builder = || {
        SslContextBuilder::new(SslMethod::tls_client())
            .map_err(|e| format!("cannot initialise OpenSSL: {}", stack_reason(&e)))
    };
    let mut warnings = Vec::new();
    if let Some(list) = ciphers {
        if builder()?.set_cipher_list(list).is_err() {
            return Err(format!(
                "--tls-ciphers {list:?}: OpenSSL ({}) selects no cipher from this list (TLS 1.2 \
                 names and keywords as printed by `openssl ciphers -v`, e.g. \
                 ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384; TLS 1.3 \
                 ciphersuites go in --tls-ciphersuites)",
                openssl::version::version()
            ));
        }
        let mut unknown = Vec::new();
        for entry in list.split([':', ',', ' ']).filter(|e| !e.is_empty()) {
            // Removals, reorderings and @-commands select nothing by themselves.
            if entry.starts_with(['!', '-', '+', '@']) {
                continue;
            }
            if builder()?.set_cipher_list(entry).is_err() {
                unknown.push(entry);
            }
        }
        if !unknown.is_empty() {
            warnings.push(format!(
                "WARNING: --tls-ciphers: {} selects no cipher in this OpenSSL; ignored",
                unknown.join(", ")
            ));
        }
    }
    if let Some(list) = ciphersuites {
        // OpenSSL accepts an empty list, then refuses every connection ("no ciphers available":
        // a client keeps TLS 1.3 as its highest version): say so now.
        if list.split(':').all(str::is_empty) {
            return Err(format!(
                "--tls-ciphersuites {list:?}: an empty list leaves TLS 1.3 without ciphersuites, \
                 and OpenSSL then cannot connect at all (names: {TLS13_NAMES})"
            ));
        }
        if builder()?.set_ciphersuites(list).is_err() {
            return Err(format!(
                "--tls-ciphersuites {list:?}: no TLS 1.3 ciphersuite in this list is known to \
                 OpenSSL (names: {TLS13_NAMES}; separate them with ':')"
            ));
        }
        let unknown: Vec<&str> = list
            .split(':')
            .filter(|e| !e.is_empty())
            .filter(|e| builder().map(|mut b| b.set_ciphersuites(e).is_err()) == Ok(true))
            .collect();
        if !unknown.is_empty() {
            warnings.push(format!(
                "WARNING: --tls-ciphersuites: {} is not a TLS 1.3 ciphersuite; ignored",
                unknown.join(", ")
            ));
        }
    }
    Ok(warnings)
}

/// The client side of TLS, shared (in an `Arc`) by every connection of a run.
pub struct TlsClient {
    ctx: SslContext,
    /// `--sni`, sent and verified instead of each connection's host.
    sni: Option<String>,
    /// Verify the server's certificate and name (not `--insecure`).
    verify: bool,
    /// `--cacert`/`--cacertdir` were given (for the hint when verification fails).
    ca_given: bool,
    /// `--tls-ciphers`/`--tls-ciphersuites` were given (for the hint when nothing is shared).
    ciphers_given: bool,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient")
            .field("sni", &self.sni)
            .field("verify", &self.verify)
            .finish_non_exhaustive()
    }
}

impl TlsClient {
    /// Builds the context: reads the CA, certificate and key files (a file problem is one line,
    /// which `run` turns into exit 1) and applies the cipher lists. Returns warnings beside it.
    pub fn new(o: &TlsOptions) -> Result<(Self, Vec<String>), String> {
        let ossl = |what: &str, e: ErrorStack| format!("{what}: {}", stack_reason(&e));
        let mut b = SslContextBuilder::new(SslMethod::tls_client())
            .map_err(|e| ossl("cannot initialise OpenSSL", e))?;
        b.set_options(
            SslOptions::NO_COMPRESSION
                | SslOptions::NO_SSLV2
                | SslOptions::NO_SSLV3
                // A server that closes without close_notify (Redis does) is an ordinary EOF: RESP
                // framing already detects a truncated reply.
                | SslOptions::IGNORE_UNEXPECTED_EOF,
        );
        // Partial writes and a retry from a moved buffer are what a non-blocking writer needs;
        // no RELEASE_BUFFERS (it would free and reallocate the record buffers on every request).
        b.set_mode(
            SslMode::AUTO_RETRY
                | SslMode::ACCEPT_MOVING_WRITE_BUFFER
                | SslMode::ENABLE_PARTIAL_WRITE,
        );
        // One recv takes everything the kernel has (see the module comment).
        b.set_read_ahead(true);

        let mut warnings = check_cipher_lists(o.ciphers.as_deref(), o.ciphersuites.as_deref())?;
        if let Some(list) = &o.ciphers {
            b.set_cipher_list(list)
                .map_err(|e| ossl(&format!("--tls-ciphers {list:?}"), e))?;
        }
        if let Some(list) = &o.ciphersuites {
            b.set_ciphersuites(list)
                .map_err(|e| ossl(&format!("--tls-ciphersuites {list:?}"), e))?;
        }

        if o.insecure {
            b.set_verify(SslVerifyMode::NONE);
        } else {
            b.set_verify(SslVerifyMode::PEER);
        }
        if let Some(file) = &o.cacert {
            let path = readable_file("--cacert", file)?;
            b.load_verify_locations(Some(Path::new(path)), None)
                .map_err(|e| ossl(&format!("--cacert {path}"), e))?;
        }
        if let Some(dir) = &o.cacertdir {
            let path = utf8_path("--cacertdir", dir)?;
            match std::fs::read_dir(dir) {
                Ok(entries) => {
                    if !entries.flatten().any(|e| is_hashed_name(&e.file_name())) {
                        warnings.push(format!(
                            "WARNING: --cacertdir {path} has no hashed certificate names \
                             (like 1a2b3c4d.0); OpenSSL looks CAs up by those: run `openssl \
                             rehash {path}`"
                        ));
                    }
                }
                Err(e) => {
                    return Err(format!(
                        "cannot read --cacertdir {path}: {}",
                        super::conn::io_reason(&e)
                    ));
                }
            }
            b.load_verify_locations(None, Some(Path::new(path)))
                .map_err(|e| ossl(&format!("--cacertdir {path}"), e))?;
        }
        if o.cacert.is_none() && o.cacertdir.is_none() && !o.insecure {
            // The system's trust store, found the way valkey-benchmark finds it (OpenSSL's
            // default paths; SSL_CERT_FILE and SSL_CERT_DIR override them).
            b.set_default_verify_paths()
                .map_err(|e| ossl("cannot load the system's CA certificates", e))?;
        }
        match (&o.cert, &o.key) {
            (Some(cert), Some(key)) => {
                let cert = readable_file("--cert", cert)?;
                let key = readable_file("--key", key)?;
                b.set_certificate_chain_file(cert)
                    .map_err(|e| ossl(&format!("--cert {cert}: not a PEM certificate"), e))?;
                b.set_private_key_file(key, SslFiletype::PEM)
                    .map_err(|e| ossl(&format!("--key {key}: not a PEM private key"), e))?;
                b.check_private_key().map_err(|e| {
                    ossl(
                        &format!("--key {key} is not the private key of --cert {cert}"),
                        e,
                    )
                })?;
            }
            (None, None) => {}
            // The command line refuses one without the other; defensive.
            _ => return Err("--cert and --key go together".to_string()),
        }
        let client = TlsClient {
            ctx: b.build(),
            sni: o.sni.clone(),
            verify: !o.insecure,
            ca_given: o.cacert.is_some() || o.cacertdir.is_some(),
            ciphers_given: o.ciphers.is_some() || o.ciphersuites.is_some(),
        };
        Ok((client, warnings))
    }

    /// The name a connection to `host` presents (SNI) and verifies: `--sni`, else the host.
    pub fn server_name<'a>(&'a self, host: &'a str) -> &'a str {
        self.sni.as_deref().unwrap_or(host)
    }

    /// A new session for `host`: SNI (for a name, not an address) and, unless `--insecure`, the
    /// name (or address) the certificate must carry.
    fn session(&self, host: &str) -> Result<Ssl, ErrorStack> {
        let name = self.server_name(host);
        let ip = name.parse::<IpAddr>().ok();
        let mut ssl = Ssl::new(&self.ctx)?;
        ssl.set_connect_state();
        if ip.is_none() {
            ssl.set_hostname(name)?;
        }
        if self.verify {
            let param = ssl.param_mut();
            param.set_hostflags(X509CheckFlags::NO_PARTIAL_WILDCARDS);
            match ip {
                Some(ip) => param.set_ip(ip)?,
                None => param.set_host(name)?,
            }
        }
        Ok(ssl)
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
        loop {
            match stream.ssl.connect() {
                Ok(()) => break,
                Err(e) if is_want(&e) => match e.io_error() {
                    // A socket timeout surfaces as "want read/write" with EAGAIN.
                    Some(_) => {
                        return Err(tls_io_error(
                            true,
                            format!(
                                "the TLS handshake did not finish within {}s (is this a TLS \
                                 port? a plain server waits for a command instead)",
                                timeout.as_secs()
                            ),
                        ));
                    }
                    None => continue,
                },
                Err(e) => return Err(stream.handshake_failure(&e)),
            }
        }
        stream.handshaken = true;
        stream.set_timeouts(None)?;
        Ok(stream)
    }

    /// Wraps a (connected or connecting) socket; the handshake runs in
    /// [`TlsStream::finish_connect`] or [`TlsClient::connect_blocking`].
    pub(crate) fn start(&self, tcp: mio::net::TcpStream, host: &str) -> io::Result<TlsStream> {
        let setup = |e: ErrorStack| tls_io_error(true, stack_reason(&e));
        let ssl = self.session(host).map_err(setup)?;
        let sock = Sock {
            tcp,
            drained: false,
        };
        Ok(TlsStream {
            ssl: SslStream::new(ssl, sock).map_err(setup)?,
            handshaken: false,
            received: false,
            eof: false,
            deferred: None,
            hints: Hints {
                name: self.server_name(host).to_string(),
                ca_given: self.ca_given,
                verify: self.verify,
                ciphers_given: self.ciphers_given,
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

fn tls_io_error(handshake: bool, message: String) -> io::Error {
    io::Error::other(TlsError { handshake, message })
}

/// The TLS error inside `e`, if it carries one.
pub fn tls_error(e: &io::Error) -> Option<&TlsError> {
    e.get_ref()?.downcast_ref::<TlsError>()
}

/// The TCP socket under OpenSSL. It notes whether its last read left the kernel's buffer empty
/// (a short read or EAGAIN), which tells [`TlsStream::read`] when to stop without another `recv`.
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
    verify: bool,
    ciphers_given: bool,
}

/// A TLS connection over TCP, blocking (control connections) or not (workers).
#[derive(Debug)]
pub struct TlsStream {
    ssl: SslStream<Sock>,
    handshaken: bool,
    /// Application data has arrived (an alert before that is a negotiation failure: TLS 1.3
    /// servers reject a missing client certificate after the client thinks it is done).
    received: bool,
    /// The server closed the session; every later read returns 0.
    eof: bool,
    /// A failure met after some data was already read; returned by the next read.
    deferred: Option<io::Error>,
    hints: Hints,
}

/// How an OpenSSL call ended, when it did not succeed.
enum Outcome {
    /// Try again on readiness.
    WouldBlock,
    /// The server closed the session.
    Eof,
    Failed(io::Error),
}

fn is_want(e: &ssl::Error) -> bool {
    e.code() == ErrorCode::WANT_READ || e.code() == ErrorCode::WANT_WRITE
}

impl TlsStream {
    /// The TCP socket, for registering with a poller and for socket options.
    pub(crate) fn tcp(&mut self) -> &mut mio::net::TcpStream {
        &mut self.ssl.get_mut().tcp
    }

    pub(crate) fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        let sock = socket2::SockRef::from(&self.ssl.get_ref().tcp);
        sock.set_read_timeout(t)?;
        sock.set_write_timeout(t)
    }

    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        socket2::SockRef::from(&self.ssl.get_ref().tcp).set_nonblocking(true)
    }

    /// Non-blocking handshake progress after a non-blocking connect: `Ok(())` once the session
    /// is up, `NotConnected` while it still waits for the network (on readiness, call again).
    pub(crate) fn finish_connect(&mut self) -> io::Result<()> {
        if self.handshaken {
            return Ok(());
        }
        let tcp = &self.ssl.get_ref().tcp;
        if let Some(e) = tcp.take_error()? {
            return Err(e);
        }
        tcp.peer_addr()?; // NotConnected while the TCP connect is in progress
        match self.ssl.connect() {
            Ok(()) => {
                self.handshaken = true;
                Ok(())
            }
            Err(e) if is_want(&e) => Err(io::ErrorKind::NotConnected.into()),
            Err(e) => Err(self.handshake_failure(&e)),
        }
    }

    /// Reads for a non-blocking worker: decrypts records until `buf` is full or nothing is
    /// left in the socket or in OpenSSL, so that a short count means "drained" (the worker's
    /// edge-triggered contract). `WouldBlock` only when nothing at all was read.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if self.eof {
            return Ok(0);
        }
        let mut filled = 0;
        while filled < buf.len() {
            if filled > 0 && self.settled() {
                break;
            }
            match self.ssl.ssl_read(&mut buf[filled..]) {
                Ok(n) => {
                    filled += n;
                    self.received = true;
                }
                Err(e) => match self.outcome(e) {
                    Outcome::WouldBlock if filled == 0 => {
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                    Outcome::WouldBlock => break,
                    Outcome::Eof => {
                        self.eof = true;
                        break;
                    }
                    Outcome::Failed(e) if filled == 0 => return Err(e),
                    Outcome::Failed(e) => {
                        self.deferred = Some(e);
                        break;
                    }
                },
            }
        }
        Ok(filled)
    }

    /// Nothing left to read without waiting: the last `recv` emptied the socket and OpenSSL
    /// holds no bytes (neither decrypted nor still encrypted).
    #[inline]
    fn settled(&self) -> bool {
        if !self.ssl.get_ref().drained {
            return false;
        }
        // SAFETY: the pointer comes from a live `SslRef` borrowed for this call, and
        // SSL_has_pending (OpenSSL >= 1.1.0) only reads the session's buffer state.
        unsafe { SSL_has_pending(self.ssl.ssl().as_ptr().cast()) == 0 }
    }

    /// Reads on a blocking socket (control connections): at most one record's data, waiting
    /// for it; 0 at the end of the session.
    pub fn read_blocking(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.eof || buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.ssl.ssl_read(buf) {
                Ok(n) => {
                    self.received = true;
                    return Ok(n);
                }
                Err(e) => {
                    // A socket timeout is "want read" with EAGAIN: report it as the socket's.
                    if is_want(&e) {
                        match e.into_io_error() {
                            Ok(io) => return Err(io),
                            Err(_) => continue,
                        }
                    }
                    match self.outcome(e) {
                        Outcome::WouldBlock => continue,
                        Outcome::Eof => {
                            self.eof = true;
                            return Ok(0);
                        }
                        Outcome::Failed(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// Writes (blocking or not): returns how much of `buf` was encrypted and sent. `WouldBlock`
    /// means OpenSSL may hold part of a record: call again with the same bytes when writable.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.ssl.ssl_write(buf) {
            Ok(n) => Ok(n),
            Err(e) if is_want(&e) => match e.into_io_error() {
                // Blocking socket with a timeout: the socket's own error.
                Ok(io) if io.kind() != io::ErrorKind::WouldBlock => Err(io),
                _ => Err(io::ErrorKind::WouldBlock.into()),
            },
            Err(e) => match self.outcome(e) {
                Outcome::WouldBlock => Err(io::ErrorKind::WouldBlock.into()),
                Outcome::Eof => Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the server closed the TLS session",
                )),
                Outcome::Failed(e) => Err(e),
            },
        }
    }

    fn outcome(&mut self, e: ssl::Error) -> Outcome {
        match e.code() {
            ErrorCode::WANT_READ | ErrorCode::WANT_WRITE => Outcome::WouldBlock,
            ErrorCode::ZERO_RETURN => Outcome::Eof,
            ErrorCode::SYSCALL => match e.into_io_error() {
                Ok(io) => Outcome::Failed(io),
                // EOF in the middle of a record or without close_notify.
                Err(e) if e.ssl_error().is_none() => Outcome::Eof,
                Err(e) => Outcome::Failed(self.stream_failure(&e)),
            },
            _ => Outcome::Failed(self.stream_failure(&e)),
        }
    }

    /// An error after the handshake. Before any data arrived it still means the session was
    /// never usable (a TLS 1.3 server rejecting the client certificate), so it is worded and
    /// classified as a negotiation failure.
    fn stream_failure(&self, e: &ssl::Error) -> io::Error {
        if self.received {
            tls_io_error(false, format!("TLS error: {}", error_reason(e)))
        } else {
            self.handshake_failure(e)
        }
    }

    fn handshake_failure(&self, e: &ssl::Error) -> io::Error {
        tls_io_error(true, describe_failure(self.ssl.ssl(), e, &self.hints))
    }
}

// `SSL_has_pending` is in libssl >= 1.1.0 (which openssl-sys links) but has no binding there.
unsafe extern "C" {
    fn SSL_has_pending(ssl: *const std::ffi::c_void) -> std::ffi::c_int;
}

/// One line saying why a handshake (or the first exchange) failed and what to do about it.
fn describe_failure(ssl: &SslRef, e: &ssl::Error, h: &Hints) -> String {
    let verify = ssl.verify_result();
    if h.verify && verify != X509VerifyResult::OK {
        let why = verify.error_string();
        return match verify.as_raw() {
            VERIFY_HOSTNAME_MISMATCH | VERIFY_IP_ADDRESS_MISMATCH => format!(
                "the server's certificate is not valid for {} ({why}); connect with a name on \
                 the certificate (-h), or pass that name with --sni, or skip verification with \
                 --insecure",
                h.name
            ),
            _ if h.ca_given => format!(
                "the server's certificate was not accepted: {why} (is it signed by the CA given \
                 with --cacert/--cacertdir? --insecure skips verification)"
            ),
            _ => format!(
                "the server's certificate was not accepted: {why} (its CA is not in the system's \
                 trust store: pass it with --cacert or --cacertdir, or skip verification with \
                 --insecure)"
            ),
        };
    }
    let reason = error_reason(e);
    let r = reason.to_ascii_lowercase();
    if r.contains("certificate required") {
        format!("the server requires a client certificate ({reason}): pass --cert and --key")
    } else if r.contains("unknown ca")
        || r.contains("bad certificate")
        || r.contains("certificate unknown")
        || r.contains("unsupported certificate")
    {
        format!(
            "the server rejected the client certificate ({reason}): check --cert/--key and that \
             the server trusts their CA"
        )
    } else if r.contains("wrong version number")
        || r.contains("packet length too long")
        || r.contains("record layer failure")
        || r.contains("http request")
        || r.contains("unexpected eof")
        || r.contains("closed the connection")
    {
        format!("{reason} (is this a TLS port? the server does not answer like a TLS server)")
    } else if r.contains("handshake failure")
        || r.contains("no shared cipher")
        || r.contains("no cipher")
        || r.contains("protocol version")
        || r.contains("unsupported protocol")
        || r.contains("no protocols available")
    {
        if h.ciphers_given {
            format!(
                "{reason} (no protocol version or cipher in common with the server: check \
                 --tls-ciphers / --tls-ciphersuites)"
            )
        } else {
            format!("{reason} (no protocol version or cipher in common with the server)")
        }
    } else {
        reason
    }
}

/// The most telling part of an OpenSSL error: its reason string (`certificate verify failed`,
/// `tlsv13 alert certificate required`), or the socket error.
fn error_reason(e: &ssl::Error) -> String {
    if let Some(stack) = e.ssl_error() {
        return stack_reason(stack);
    }
    if let Some(io) = e.io_error() {
        return super::conn::io_reason(io);
    }
    match e.code() {
        ErrorCode::ZERO_RETURN | ErrorCode::SYSCALL => {
            "the server closed the connection during the TLS handshake".to_string()
        }
        _ => e.to_string(),
    }
}

fn stack_reason(stack: &ErrorStack) -> String {
    let reasons: Vec<&str> = stack.errors().iter().filter_map(|e| e.reason()).collect();
    if reasons.is_empty() {
        stack.to_string()
    } else {
        reasons.join("; ")
    }
}

/// An OpenSSL hashed-directory name: 8 hex digits, a dot, a number (`1a2b3c4d.0`).
fn is_hashed_name(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let Some((hash, n)) = name.split_once('.') else {
        return false;
    };
    let n = n.strip_prefix('r').unwrap_or(n); // CRLs: 1a2b3c4d.r0
    hash.len() == 8
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

/// OpenSSL takes paths as C strings: refuse what it could not open (non-UTF-8 names).
fn utf8_path<'a>(flag: &str, p: &'a Path) -> Result<&'a str, String> {
    p.to_str()
        .ok_or_else(|| format!("{flag} {}: the path is not valid UTF-8", p.display()))
}

/// The path, after checking that the file opens (so a missing or unreadable file is named with
/// the system's reason, not OpenSSL's).
fn readable_file<'a>(flag: &str, p: &'a Path) -> Result<&'a str, String> {
    let path = utf8_path(flag, p)?;
    match File::open(p).and_then(|f| f.metadata()) {
        Ok(m) if m.is_dir() => Err(format!("{flag} {path}: is a directory, not a file")),
        Ok(_) => Ok(path),
        Err(e) => Err(format!(
            "cannot read {flag} file {path}: {}",
            super::conn::io_reason(&e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_lists_use_openssl_syntax() {
        // Names, keywords, exclusions and all three separators of the TLS 1.2 list.
        for ok in [
            "ECDHE-RSA-AES256-GCM-SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES256-GCM-SHA384,ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES256-GCM-SHA384 ECDHE-ECDSA-AES128-GCM-SHA256",
            "HIGH:!aNULL:!MD5",
            "DEFAULT:@STRENGTH",
            "ECDHE+AESGCM",
        ] {
            assert_eq!(check_cipher_lists(Some(ok), None), Ok(vec![]), "{ok}");
        }
        for ok in [
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
        ] {
            assert_eq!(check_cipher_lists(None, Some(ok)), Ok(vec![]), "{ok:?}");
        }
        // OpenSSL takes an empty list and then cannot connect: refused up front.
        for empty in ["", ":"] {
            let e = check_cipher_lists(None, Some(empty)).unwrap_err();
            assert!(e.contains("an empty list"), "{e}");
        }
    }

    #[test]
    fn a_list_that_selects_nothing_is_one_clear_line() {
        let e = check_cipher_lists(Some("NOT-A-CIPHER:ALSO-NOT"), None).unwrap_err();
        assert!(
            e.starts_with("--tls-ciphers \"NOT-A-CIPHER:ALSO-NOT\": OpenSSL"),
            "{e}"
        );
        assert!(e.contains("openssl ciphers -v") && !e.contains('\n'), "{e}");
        // A TLS 1.3 name is not a TLS 1.2 cipher: the message points to the other option.
        let e = check_cipher_lists(Some("TLS_AES_128_GCM_SHA256"), None).unwrap_err();
        assert!(e.contains("--tls-ciphersuites"), "{e}");

        let e = check_cipher_lists(None, Some("TLS_NOPE")).unwrap_err();
        assert!(
            e.starts_with("--tls-ciphersuites \"TLS_NOPE\": no TLS 1.3"),
            "{e}"
        );
        assert!(e.contains("TLS_AES_256_GCM_SHA384"), "{e}");
        // Only ':' separates ciphersuites (OpenSSL's rule).
        assert!(
            check_cipher_lists(None, Some("TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"))
                .is_err()
        );
        // A TLS 1.2 name is not a ciphersuite.
        assert!(check_cipher_lists(None, Some("ECDHE-RSA-AES256-GCM-SHA384")).is_err());
    }

    #[test]
    fn entries_that_select_nothing_are_ignored_with_a_warning() {
        let w = check_cipher_lists(Some("FOO:ECDHE-RSA-AES256-GCM-SHA384:!MD5"), None).unwrap();
        assert_eq!(
            w,
            ["WARNING: --tls-ciphers: FOO selects no cipher in this OpenSSL; ignored"]
        );
        let w = check_cipher_lists(None, Some("TLS_AES_128_GCM_SHA256:TLS_NOPE")).unwrap();
        assert_eq!(
            w,
            ["WARNING: --tls-ciphersuites: TLS_NOPE is not a TLS 1.3 ciphersuite; ignored"]
        );
    }

    fn opts() -> TlsOptions {
        TlsOptions::default()
    }

    #[test]
    fn system_roots_without_ca_options() {
        let (c, w) = TlsClient::new(&opts()).unwrap();
        assert!(w.is_empty());
        assert!(c.verify && !c.ca_given);
        let (c, _) = TlsClient::new(&TlsOptions {
            insecure: true,
            ..opts()
        })
        .unwrap();
        assert!(!c.verify);
    }

    #[test]
    fn missing_files_are_named_with_the_reason() {
        let missing = PathBuf::from("/nonexistent/respbench/ca.pem");
        let e = TlsClient::new(&TlsOptions {
            cacert: Some(missing.clone()),
            ..opts()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "cannot read --cacert file /nonexistent/respbench/ca.pem: No such file or directory"
        );
        let e = TlsClient::new(&TlsOptions {
            cert: Some(missing.clone()),
            key: Some(missing),
            ..opts()
        })
        .unwrap_err();
        assert!(e.starts_with("cannot read --cert file "), "{e}");
        let e = TlsClient::new(&TlsOptions {
            cacertdir: Some("/nonexistent/respbench".into()),
            ..opts()
        })
        .unwrap_err();
        assert!(
            e.starts_with("cannot read --cacertdir /nonexistent/respbench: "),
            "{e}"
        );
    }

    #[test]
    fn files_that_are_not_pem_are_refused_in_one_line() {
        let dir = std::env::temp_dir().join(format!("respbench-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let e = TlsClient::new(&TlsOptions {
            cacert: Some(junk.clone()),
            ..opts()
        })
        .unwrap_err();
        assert!(
            e.starts_with(&format!("--cacert {}: ", junk.display())),
            "{e}"
        );
        let e = TlsClient::new(&TlsOptions {
            cert: Some(junk.clone()),
            key: Some(junk.clone()),
            ..opts()
        })
        .unwrap_err();
        assert!(e.contains("not a PEM certificate"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = TlsClient::new(&TlsOptions {
            cacert: Some(dir.clone()),
            ..opts()
        })
        .unwrap_err();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        // A directory without hashed names still works, with a warning.
        let (_, w) = TlsClient::new(&TlsOptions {
            cacertdir: Some(dir.clone()),
            ..opts()
        })
        .unwrap();
        assert!(w.len() == 1 && w[0].contains("openssl rehash"), "{w:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sni_overrides_the_host() {
        let (c, _) = TlsClient::new(&TlsOptions {
            sni: Some("redis.test".into()),
            ..opts()
        })
        .unwrap();
        assert_eq!(c.server_name("127.0.0.1"), "redis.test");
        let (c, _) = TlsClient::new(&opts()).unwrap();
        assert_eq!(c.server_name("127.0.0.1"), "127.0.0.1");
        // Sessions for a name and for an address both build (SNI only for the name).
        assert!(c.session("localhost").is_ok());
        assert!(c.session("::1").is_ok());
    }

    #[test]
    fn hashed_names() {
        for yes in ["1a2b3c4d.0", "ABCDEF01.12", "1a2b3c4d.r0"] {
            assert!(is_hashed_name(yes.as_ref()), "{yes}");
        }
        for no in ["ca.pem", "1a2b3c4d", "1a2b3c4.0", "1a2b3c4d.x", "1a2b3c4d."] {
            assert!(!is_hashed_name(no.as_ref()), "{no}");
        }
    }
}
