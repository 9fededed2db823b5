//! Test harness: a private `redis-server` per test, a tiny synchronous RESP client to look at the
//! server's state, and bounded runs of the `respbench` binary.
//!
//! Everything a test starts is stopped by `Drop` through its own child handle (never by name), and
//! every wait is bounded, so a broken build fails instead of hanging.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use resp::Value;

/// How long a respbench run may take before it is killed and the test fails.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to answer its first PING.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(10);
/// The server binary; CI installs it.
const REDIS_SERVER: &str = "redis-server";
/// Where `scripts/ensure-valkey.sh` says the Valkey 9.1 binary is.
const VALKEY_ENV: &str = "RESPBENCH_VALKEY_SERVER";

// ---------------------------------------------------------------------------------------------
// Temporary directories

/// A fresh directory under the system temp dir, removed on drop. Paths stay short so that a unix
/// socket inside fits in `sun_path`.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rbit-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// A loopback port that was free a moment ago (bound to port 0, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local_addr").port()
}

// ---------------------------------------------------------------------------------------------
// The server

/// A `redis-server` child on a free loopback port, killed (by its own PID) on drop.
pub struct Server {
    child: Child,
    /// How it was started (binary, then arguments), for [`Server::kill_and_restart`].
    command: Vec<std::ffi::OsString>,
    log_path: PathBuf,
    port: u16,
    tls_port: Option<u16>,
    password: Option<String>,
    unix_socket: Option<PathBuf>,
    // Declared last: removed after the child is gone (Drop kills the child first).
    _dir: TempDir,
}

/// Options for [`Server::start_with`].
#[derive(Default)]
pub struct ServerOptions {
    /// `--requirepass`.
    pub password: Option<String>,
    /// `--unixsocket <dir>/redis.sock --unixsocketperm 700`.
    pub unix_socket: bool,
    /// Also serve TLS on a second free port (`--tls-port` and the certificate flags). The plain
    /// port stays open, so [`Server::client`] can still look at the server's state.
    pub tls: Option<ServerTls>,
    /// Anything else, appended as given (e.g. `--tls-protocols TLSv1.2`, or for a cluster node
    /// over TLS `--cluster-enabled yes --tls-cluster yes --tls-replication yes`).
    pub extra: Vec<String>,
    /// Which server binary: Debian's `redis-server` (default) or Valkey 9.1.
    pub kind: ServerKind,
}

/// The server implementation a test runs against. Their `INFO` differs (Valkey adds
/// `server_name:valkey` and `valkey_version`), which the record and watch code must handle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerKind {
    /// `redis-server` on PATH (Debian's Redis 7.0).
    #[default]
    Redis,
    /// The `valkey-server` 9.1 binary named by `$RESPBENCH_VALKEY_SERVER` (built without TLS).
    Valkey,
}

impl ServerKind {
    /// The binary to start. A Valkey test without the variable fails loudly rather than passing
    /// without having run against Valkey.
    pub fn binary(self) -> String {
        match self {
            ServerKind::Redis => REDIS_SERVER.to_string(),
            ServerKind::Valkey => std::env::var(VALKEY_ENV).unwrap_or_else(|_| {
                panic!(
                    "${VALKEY_ENV} is not set: the Valkey tests need a valkey-server 9.1 binary; \
                     run `bash scripts/test.sh` (it fetches one), or `. scripts/ensure-valkey.sh \
                     && ensure_valkey` before `cargo test`, or set ${VALKEY_ENV} to a binary"
                )
            }),
        }
    }
}

/// The TLS side of a test server: its certificate, key and the CA it trusts for clients.
#[derive(Clone, Debug)]
pub struct ServerTls {
    /// `--tls-cert-file`.
    pub cert: PathBuf,
    /// `--tls-key-file`.
    pub key: PathBuf,
    /// `--tls-ca-cert-file`: verifies client certificates (and peers, for cluster/replication).
    pub ca: PathBuf,
    /// `--tls-auth-clients yes`: clients must present a certificate signed by `ca`.
    pub auth_clients: bool,
}

impl ServerTls {
    /// `certs`' server certificate (valid for 127.0.0.1, ::1, localhost and redis.test), its CA,
    /// client certificates not required.
    pub fn new(certs: &TestCerts) -> ServerTls {
        ServerTls {
            cert: certs.server_cert.clone(),
            key: certs.server_key.clone(),
            ca: certs.ca.clone(),
            auth_clients: false,
        }
    }

    /// The server's flags (the port is added by the harness).
    pub fn args(&self) -> Vec<String> {
        let path = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
        vec![
            "--tls-cert-file".into(),
            path(&self.cert),
            "--tls-key-file".into(),
            path(&self.key),
            "--tls-ca-cert-file".into(),
            path(&self.ca),
            "--tls-auth-clients".into(),
            if self.auth_clients { "yes" } else { "no" }.into(),
        ]
    }
}

impl Server {
    /// A plain server: no password, no unix socket.
    pub fn start() -> Server {
        Server::start_with(ServerOptions::default())
    }

    /// A plain Valkey 9.1 server (see [`ServerKind::Valkey`]).
    pub fn start_valkey() -> Server {
        Server::start_with(ServerOptions {
            kind: ServerKind::Valkey,
            ..ServerOptions::default()
        })
    }

    pub fn start_with(opts: ServerOptions) -> Server {
        // A port can be taken between `free_port` and the server's bind (another test doing the
        // same): try a few ports before failing.
        let mut last_log = String::new();
        for _ in 0..5 {
            match Server::try_start(&opts) {
                Ok(server) => return server,
                Err(log) => last_log = log,
            }
        }
        panic!("redis-server did not start; its last log:\n{last_log}");
    }

    fn try_start(opts: &ServerOptions) -> Result<Server, String> {
        let dir = TempDir::new();
        let port = free_port();
        let tls_port = opts.tls.as_ref().map(|_| {
            loop {
                let p = free_port();
                if p != port {
                    break p;
                }
            }
        });
        let log_path = dir.path().join("redis.log");
        let log = File::create(&log_path).expect("create server log");
        let binary = opts.kind.binary();
        let mut cmd = Command::new(&binary);
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir.path());
        if let Some(pw) = &opts.password {
            cmd.args(["--requirepass", pw]);
        }
        let unix_socket = opts.unix_socket.then(|| dir.path().join("redis.sock"));
        if let Some(sock) = &unix_socket {
            cmd.arg("--unixsocket").arg(sock);
            cmd.args(["--unixsocketperm", "700"]);
        }
        if let (Some(tls), Some(tls_port)) = (&opts.tls, tls_port) {
            cmd.args(["--tls-port", &tls_port.to_string()]);
            cmd.args(tls.args());
        }
        cmd.args(&opts.extra);
        cmd.stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log handle"))
            .stderr(log);
        die_with_parent(&mut cmd);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::NotFound => panic!(
                "`{binary}` was not found: the integration tests need a real server \
                 (`bash scripts/test.sh` installs redis-server and fetches valkey-server)"
            ),
            Err(e) => panic!("cannot start {binary}: {e}"),
        };
        let mut command = vec![std::ffi::OsString::from(&binary)];
        command.extend(cmd.get_args().map(|a| a.to_os_string()));
        let mut server = Server {
            child,
            command,
            log_path: log_path.clone(),
            port,
            tls_port,
            password: opts.password.clone(),
            unix_socket,
            _dir: dir,
        };
        let deadline = Instant::now() + SERVER_START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!("(exited with {status})\n{log}"));
            }
            if server.answers_ping() {
                if let Some(sock) = &server.unix_socket {
                    // The unix socket is set up before the TCP listener answers, but check anyway.
                    if !sock.exists() {
                        panic!("redis-server did not create {}", sock.display());
                    }
                }
                return Ok(server);
            }
            if Instant::now() > deadline {
                let log = fs::read_to_string(&log_path).unwrap_or_default();
                panic!(
                    "redis-server on port {port} did not answer PING within {:?}; log:\n{log}",
                    SERVER_START_TIMEOUT
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Any reply (including NOAUTH) means the server is up.
    fn answers_ping(&self) -> bool {
        let Ok(mut c) = Client::try_connect(self.port) else {
            return false;
        };
        c.try_cmd(&["PING"]).is_ok()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, ...) to this server's process (only).
    pub fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid fits pid_t");
        // SAFETY: kill(2) with the PID of our own child, not reaped yet (we hold its handle).
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(
            rc,
            0,
            "kill -{signal} {pid}: {}",
            io::Error::last_os_error()
        );
    }

    /// SIGKILLs the server, waits `down`, and starts it again on the same port with the same
    /// options (its data is gone: no persistence), waiting until it answers PING.
    pub fn kill_and_restart(&mut self, down: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        thread::sleep(down);
        let log = File::options()
            .append(true)
            .open(&self.log_path)
            .expect("server log");
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log handle"))
            .stderr(log);
        die_with_parent(&mut cmd);
        let deadline = Instant::now() + SERVER_START_TIMEOUT;
        loop {
            self.child = cmd.spawn().expect("restart the server");
            // The port may still be held briefly: a server that exits at once is started again.
            while Instant::now() < deadline {
                if self.answers_ping() {
                    return;
                }
                if let Ok(Some(_)) = self.child.try_wait() {
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
            assert!(
                Instant::now() < deadline,
                "the restarted server did not answer: {}",
                fs::read_to_string(&self.log_path).unwrap_or_default()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The TLS port (the server must have been started with [`ServerOptions::tls`]).
    pub fn tls_port(&self) -> u16 {
        self.tls_port.expect("server started without TLS")
    }

    pub fn unix_socket(&self) -> &Path {
        self.unix_socket
            .as_deref()
            .expect("server started without a unix socket")
    }

    /// A client connection, authenticated if the server has a password.
    pub fn client(&self) -> Client {
        let mut c = Client::connect(self.port);
        if let Some(pw) = &self.password {
            c.ok(&["AUTH", pw]);
        }
        c
    }

    /// `respbench -h 127.0.0.1 -p <port> <args>`, bounded.
    pub fn bench(&self, args: &[&str]) -> Output {
        run_respbench(&self.args_with(args), None)
    }

    /// Same, with `stdin` piped in.
    pub fn bench_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        run_respbench(&self.args_with(args), Some(stdin))
    }

    /// Starts `respbench -h 127.0.0.1 -p <port> <args>` in the background.
    pub fn spawn_bench(&self, args: &[&str]) -> Running {
        Running::spawn(&self.args_with(args))
    }

    /// `respbench -h 127.0.0.1 -p <TLS port> <args>`, bounded (the test adds `--tls` and the
    /// certificate options it means to test).
    pub fn bench_tls(&self, args: &[&str]) -> Output {
        run_respbench(&Self::args_on(self.tls_port(), args), None)
    }

    /// Starts `respbench -h 127.0.0.1 -p <TLS port> <args>` in the background.
    pub fn spawn_bench_tls(&self, args: &[&str]) -> Running {
        Running::spawn(&Self::args_on(self.tls_port(), args))
    }

    fn args_with(&self, args: &[&str]) -> Vec<String> {
        Self::args_on(self.port, args)
    }

    fn args_on(port: u16, args: &[&str]) -> Vec<String> {
        let mut all = vec![
            "-h".to_string(),
            "127.0.0.1".to_string(),
            "-p".to_string(),
            port.to_string(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        all
    }
}

impl Server {
    /// SIGKILLs the server now (our own child, by its handle): a crash, not a shutdown.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Our own child only, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// On Linux, asks the kernel to SIGKILL the child if the test process dies first (e.g. killed
/// by a CI timeout), so no server outlives the test run even when `Drop` never runs.
pub fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the closure runs in the forked child before exec and only calls prctl, which is
        // async-signal-safe; it touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

// ---------------------------------------------------------------------------------------------
// TLS certificates, made for the test

/// Certificates and keys (PEM files) made for one test (with rcgen), in their own temporary
/// directory (removed on drop). ECDSA P-256 keys.
pub struct TestCerts {
    /// The CA that signed `server_cert`, `name_only_cert` and `client_cert`.
    pub ca: PathBuf,
    /// A directory holding `ca` under an OpenSSL hashed-style name, for `--cacertdir`.
    pub ca_dir: PathBuf,
    /// An unrelated CA: verifying the server with it must fail.
    pub other_ca: PathBuf,
    /// For 127.0.0.1, ::1, localhost and redis.test; serverAuth and clientAuth, so a server can
    /// also present it as a client (cluster bus, replication).
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// For redis.test only (no address, no localhost): connecting by address must fail name
    /// verification unless `--sni redis.test`.
    pub name_only_cert: PathBuf,
    pub name_only_key: PathBuf,
    /// A client certificate (clientAuth) signed by `ca`.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    dir: TempDir,
}

impl TestCerts {
    pub fn new() -> TestCerts {
        let dir = TempDir::new();
        let d = dir.path();
        let write = |name: &str, pem: &str| {
            let path = d.join(name);
            fs::write(&path, pem).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            path
        };
        let (ca_pem, ca) = certificate_authority("respbench test CA");
        let (other_pem, _) = certificate_authority("respbench other CA");
        let leaf = |cn: &str, names: &[&str], server: bool| -> (String, String) {
            let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
            params.distinguished_name.push(DnType::CommonName, cn);
            params.subject_alt_names = names
                .iter()
                .map(|n| match n.parse() {
                    Ok(ip) => SanType::IpAddress(ip),
                    Err(_) => SanType::DnsName((*n).try_into().expect("DNS name")),
                })
                .collect();
            params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
            if server {
                params
                    .extended_key_usages
                    .push(ExtendedKeyUsagePurpose::ServerAuth);
            }
            params.use_authority_key_identifier_extension = true;
            let key = KeyPair::generate().expect("key");
            let cert = params.signed_by(&key, &ca).expect("sign");
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert, server_key) = leaf(
            "redis.test",
            &["127.0.0.1", "::1", "localhost", "redis.test"],
            true,
        );
        let (name_cert, name_key) = leaf("redis.test", &["redis.test"], true);
        let (client_cert, client_key) = leaf("respbench client", &[], false);

        let ca_dir = d.join("cadir");
        fs::create_dir(&ca_dir).expect("create cadir");
        fs::write(ca_dir.join("5f3a9c21.0"), &ca_pem).expect("write CA into cadir");
        TestCerts {
            ca: write("ca.crt", &ca_pem),
            ca_dir,
            other_ca: write("other-ca.crt", &other_pem),
            server_cert: write("server.crt", &server_cert),
            server_key: write("server.key", &server_key),
            name_only_cert: write("name-only.crt", &name_cert),
            name_only_key: write("name-only.key", &name_key),
            client_cert: write("client.crt", &client_cert),
            client_key: write("client.key", &client_key),
            dir,
        }
    }

    /// The directory holding every file.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// A self-signed CA: its certificate (PEM) and what signs with it.
fn certificate_authority(cn: &str) -> (String, Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(DnType::CommonName, cn);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().expect("CA key");
    let cert = params.self_signed(&key).expect("self-sign CA");
    (cert.pem(), Issuer::new(params, key))
}

// ---------------------------------------------------------------------------------------------
// A tiny synchronous RESP client

/// A blocking RESP2 connection for checking the server's state.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        Client::try_connect(port).unwrap_or_else(|e| panic!("connect to 127.0.0.1:{port}: {e}"))
    }

    pub fn try_connect(port: u16) -> io::Result<Client> {
        Client::try_connect_to("127.0.0.1", port)
    }

    /// A client of the server at `host` (a network namespace's address: `netns.rs`).
    pub fn try_connect_to(host: &str, port: u16) -> io::Result<Client> {
        let stream = TcpStream::connect((host, port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(Client {
            stream,
            buf: Vec::new(),
        })
    }

    fn try_cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<Value> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.stream.write_all(&out)?;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match Value::parse(&self.buf) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(v);
                }
                Ok(None) => {}
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
            }
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Sends one command and returns its reply (error replies included).
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Value {
        self.try_cmd(args).unwrap_or_else(|e| {
            let shown: Vec<String> = args
                .iter()
                .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
                .collect();
            panic!("{shown:?}: {e}")
        })
    }

    /// A command that must not fail.
    pub fn ok<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Value {
        let v = self.cmd(args);
        if let Value::Error(e) = &v {
            panic!("command failed: {}", String::from_utf8_lossy(e));
        }
        v
    }

    /// A command whose reply is an integer.
    pub fn int<A: AsRef<[u8]>>(&mut self, args: &[A]) -> i64 {
        match self.ok(args) {
            Value::Integer(n) => n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    /// A command whose reply is a bulk string or nil.
    pub fn bulk<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Option<Vec<u8>> {
        match self.ok(args) {
            Value::BulkString(b) => Some(b),
            Value::Null => None,
            other => panic!("expected a bulk string, got {other:?}"),
        }
    }

    /// A command whose reply is an array of bulk strings.
    pub fn strings<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<Vec<u8>> {
        match self.ok(args) {
            Value::Array(items) | Value::Set(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::BulkString(b) => b,
                    other => panic!("expected bulk strings, got {other:?}"),
                })
                .collect(),
            other => panic!("expected an array, got {other:?}"),
        }
    }

    pub fn dbsize(&mut self) -> i64 {
        self.int(&["DBSIZE"])
    }

    /// The text of `INFO <section>`.
    pub fn info(&mut self, section: &str) -> String {
        let v = self.bulk(&["INFO", section]).expect("INFO reply");
        String::from_utf8(v).expect("INFO is text")
    }

    /// A numeric field of `INFO <section>`, e.g. `("stats", "total_connections_received")`.
    pub fn info_u64(&mut self, section: &str, field: &str) -> u64 {
        let info = self.info(section);
        let prefix = format!("{field}:");
        info.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {field} in INFO {section}:\n{info}"))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{field} is not a number: {e}"))
    }

    /// `calls` of `cmdstat_<name>` in INFO commandstats (0 when the command never ran).
    pub fn calls(&mut self, name: &str) -> u64 {
        let info = self.info("commandstats");
        let prefix = format!("cmdstat_{}:calls=", name.to_ascii_lowercase());
        info.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .map(|rest| {
                rest.split(',')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("bad commandstats line: {rest}"))
            })
            .unwrap_or(0)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

// ---------------------------------------------------------------------------------------------
// Running respbench

/// What a finished respbench run left.
#[derive(Debug)]
pub struct Output {
    /// Exit code; `None` if killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Wall time of the whole process.
    pub elapsed: Duration,
    pub args: Vec<String>,
}

impl Output {
    /// stderr without machine-busy warnings: a run of a second or more on a machine busy with
    /// other work (other tests, other builds) rightly warns that the machine was the limit, and
    /// a test about something else must not fail for it (`tests/integration/machine_busy.rs`
    /// checks the warning itself). Both kinds: a test's own (`WARNING: GET: the machine was
    /// busy …`) and the run's summary of its sub-second tests (`WARNING: 24 of 24 tests shorter
    /// than 1 s: the machine was busy (…)`).
    pub fn stderr_but_machine_busy(&self) -> String {
        self.stderr
            .lines()
            .filter(|l| !(l.starts_with("WARNING: ") && l.contains(": the machine was busy")))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    fn describe(&self) -> String {
        format!(
            "respbench {:?}\nexit: {:?} after {:.2?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.elapsed, self.stdout, self.stderr
        )
    }

    /// Panics with everything shown unless the exit code is `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "unexpected exit code\n{}",
            self.describe()
        );
        self
    }

    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        self.assert_code(0)
    }

    #[track_caller]
    pub fn assert_stdout_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{}",
            self.describe()
        );
        self
    }

    #[track_caller]
    pub fn assert_stderr_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// stderr is exactly one line (ending in a newline) and it is returned.
    #[track_caller]
    pub fn single_stderr_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            lines.len() == 1 && self.stderr.ends_with('\n'),
            "expected exactly one stderr line\n{}",
            self.describe()
        );
        lines[0]
    }

    /// No live progress line: stderr is a pipe here, so it must stay clean of `\r` and `rps=`.
    #[track_caller]
    pub fn assert_no_progress_line(&self) -> &Self {
        assert!(
            !self.stderr.contains('\r') && !self.stderr.contains("rps="),
            "progress output on a non-terminal stderr\n{}",
            self.describe()
        );
        assert!(
            !self.stdout.contains('\r'),
            "carriage return on a non-terminal stdout\n{}",
            self.describe()
        );
        self
    }

    /// The number in `  throughput summary: <x> requests per second`.
    #[track_caller]
    pub fn throughput(&self) -> f64 {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix("  throughput summary: "))
            .and_then(|rest| rest.strip_suffix(" requests per second"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no throughput summary\n{}", self.describe()))
    }

    /// The N of `  N requests completed in S seconds` (the first report).
    #[track_caller]
    pub fn completed(&self) -> u64 {
        self.stdout
            .lines()
            .find_map(|l| {
                let rest = l.strip_prefix("  ")?;
                let (n, tail) = rest.split_once(' ')?;
                tail.starts_with("requests completed in ")
                    .then(|| n.parse().ok())?
            })
            .unwrap_or_else(|| panic!("no 'requests completed' line\n{}", self.describe()))
    }
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_respbench")
}

fn reader<R: Read + Send + 'static>(mut r: R) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// A respbench process running in the background; killed on drop if still running.
pub struct Running {
    child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    stdin: Option<JoinHandle<()>>,
    started: Instant,
    args: Vec<String>,
    done: bool,
}

impl Running {
    /// Starts `respbench <args>` in the background (no server options added).
    pub fn spawn_args(args: &[String]) -> Running {
        Running::spawn(args)
    }

    fn spawn(args: &[String]) -> Running {
        Running::spawn_with(args, None)
    }

    fn spawn_with(args: &[String], stdin: Option<&[u8]>) -> Running {
        let setup = match stdin {
            Some(bytes) => StdinSetup::Bytes(bytes),
            None => StdinSetup::Null,
        };
        Running::spawn_full(args, setup, &[])
    }

    fn spawn_full(args: &[String], setup: StdinSetup<'_>, env: &[(&str, &str)]) -> Running {
        let stdin = match setup {
            StdinSetup::Bytes(bytes) => Some(bytes),
            StdinSetup::Null | StdinSetup::Closed => None,
        };
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .envs(env.iter().copied())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if matches!(setup, StdinSetup::Closed) {
            // SAFETY: runs in the child between fork and exec, where only async-signal-safe
            // calls are allowed; close(2) is one.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::close(0);
                    Ok(())
                });
            }
        }
        die_with_parent(&mut cmd);
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary()));
        let stdout = reader(child.stdout.take().expect("stdout pipe"));
        let stderr = reader(child.stderr.take().expect("stderr pipe"));
        let stdin = stdin.map(|bytes| {
            let bytes = bytes.to_vec();
            let mut pipe = child.stdin.take().expect("stdin pipe");
            thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
                // Dropping the pipe closes it: respbench sees EOF.
            })
        });
        Running {
            child,
            stdout: Some(stdout),
            stderr: Some(stderr),
            stdin,
            started,
            args: args.to_vec(),
            done: false,
        }
    }

    /// The child's process ID (for `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGINT to this child (only).
    pub fn interrupt(&self) {
        self.signal(libc::SIGINT);
    }

    /// Sends `signal` to this child (only).
    pub fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid fits pid_t");
        // SAFETY: kill(2) with the PID of a child we spawned and have not reaped yet (the handle
        // is still owned here), so the PID cannot have been reused by another process.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(
            rc,
            0,
            "kill -{signal} {pid}: {}",
            io::Error::last_os_error()
        );
    }

    /// Waits for the exit (killing the process and failing the test after `timeout`).
    pub fn finish(mut self, timeout: Duration) -> Output {
        let deadline = Instant::now() + timeout;
        let status: ExitStatus = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) => {}
                Err(e) => panic!("waiting for respbench: {e}"),
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                self.done = true;
                let out = self.collect(None);
                panic!(
                    "respbench did not finish within {timeout:?}; killed\n{}",
                    out.describe()
                );
            }
            thread::sleep(Duration::from_millis(5));
        };
        self.done = true;
        self.collect(status.code())
    }

    fn collect(&mut self, code: Option<i32>) -> Output {
        let elapsed = self.started.elapsed();
        if let Some(h) = self.stdin.take() {
            let _ = h.join();
        }
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            h.map(|h| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned())
                .unwrap_or_default()
        };
        Output {
            code,
            stdout: text(self.stdout.take()),
            stderr: text(self.stderr.take()),
            elapsed,
            args: self.args.clone(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `respbench memtier -s 127.0.0.1 -p PORT --hide-histogram args…` against `server`, to
/// completion.
pub fn run_memtier(server: &Server, args: &[&str]) -> Output {
    let port = server.port().to_string();
    let mut all = vec![
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--hide-histogram",
    ];
    all.extend_from_slice(args);
    run_respbench(&all.iter().map(|s| s.to_string()).collect::<Vec<_>>(), None)
}

/// Runs respbench with `args` (and `stdin` if given) to completion, within [`RUN_TIMEOUT`].
pub fn run_respbench(args: &[String], stdin: Option<&[u8]>) -> Output {
    Running::spawn_with(args, stdin).finish(RUN_TIMEOUT)
}

/// How a run's standard input is set up.
#[derive(Clone, Copy, Debug)]
pub enum StdinSetup<'a> {
    /// `/dev/null`.
    Null,
    /// A pipe that delivers these bytes, then EOF.
    Bytes(&'a [u8]),
    /// No fd 0 at all, as after the shell's `<&-`.
    Closed,
}

/// Runs respbench with `args`, the given standard input and extra environment variables, to
/// completion within [`RUN_TIMEOUT`].
pub fn run_respbench_with(args: &[String], stdin: StdinSetup<'_>, env: &[(&str, &str)]) -> Output {
    Running::spawn_full(args, stdin, env).finish(RUN_TIMEOUT)
}

/// Starts respbench with `args` in the background (a test's own server, e.g. a scripted one).
pub fn spawn_respbench(args: &[&str]) -> Running {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    Running::spawn(&args)
}

/// Runs respbench with no server involved (command-line checks).
pub fn respbench(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_respbench(&args, None)
}

/// Polls `cond` every 20 ms until it holds; false after `timeout`.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// `s` is `<digits>.<exactly `decimals` digits>` (or just digits when `decimals` is 0).
pub fn is_decimal(s: &str, decimals: usize) -> bool {
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if decimals == 0 {
        return all_digits(s);
    }
    match s.split_once('.') {
        Some((int, frac)) => all_digits(int) && all_digits(frac) && frac.len() == decimals,
        None => false,
    }
}

/// Splits one RFC 4180 CSV line where every field is quoted; `None` if it is not such a line.
pub fn quoted_csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        if chars.next()? != '"' {
            return None;
        }
        let mut field = String::new();
        loop {
            match chars.next()? {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => break,
                c => field.push(c),
            }
        }
        fields.push(field);
        match chars.next() {
            None => return Some(fields),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

/// The 24 titles of the default suite, in the reference's order (spec §2.1).
pub const SUITE_TITLES: [&str; 24] = [
    "PING_INLINE",
    "PING_MBULK",
    "SET",
    "GET",
    "INCR",
    "LPUSH",
    "RPUSH",
    "LPOP",
    "RPOP",
    "SADD",
    "HSET",
    "SPOP",
    "ZADD",
    "ZPOPMIN",
    "LPUSH (needed to benchmark LRANGE)",
    "LRANGE_100 (first 100 elements)",
    "LRANGE_300 (first 300 elements)",
    "LRANGE_500 (first 500 elements)",
    "LRANGE_600 (first 600 elements)",
    "MSET (10 keys)",
    "MGET (10 keys)",
    "XADD",
    "FUNCTION LOAD",
    "FCALL",
];
