//! Transport options against real `redis-server` processes: TLS (`--tls` and its options,
//! `rediss://`/`valkeys://`) with certificates made for each test, `--mptcp`, `--rdma`.
//!
//! Each TLS server keeps its plain port too, which the harness's client uses to check what
//! landed; respbench is pointed at the TLS port, which speaks nothing but TLS, so a run that
//! succeeds there went over TLS.

use std::path::Path;
use std::time::Duration;

use super::harness::{
    Output, RUN_TIMEOUT, Server, ServerOptions, ServerTls, TestCerts, quoted_csv_fields, respbench,
    wait_until,
};

fn tls_server(certs: &TestCerts) -> Server {
    tls_server_with(ServerTls::new(certs), &[])
}

fn tls_server_with(tls: ServerTls, extra: &[&str]) -> Server {
    Server::start_with(ServerOptions {
        tls: Some(tls),
        extra: extra.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// The one stderr line of a run that could not negotiate TLS with the server's TLS port.
#[track_caller]
fn negotiation_failure<'a>(out: &'a Output, server: &Server) -> &'a str {
    out.assert_code(1);
    let line = out.single_stderr_line();
    let prefix = format!(
        "Could not negotiate a TLS connection: 127.0.0.1:{}: ",
        server.tls_port()
    );
    assert!(line.starts_with(&prefix), "{line}");
    &line[prefix.len()..]
}

// ---- verification -----------------------------------------------------------------------------

#[test]
fn cacert_verifies_the_server_and_the_data_lands() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.ca),
        "-t",
        "set",
        "-n",
        "2000",
        "-r",
        "1000",
        "-c",
        "4",
        "-q",
    ]);
    out.assert_success().assert_stdout_contains("SET: ");
    let mut c = server.client();
    assert_eq!(c.calls("set"), 2000);
    assert!(c.dbsize() > 100, "random keys were written");
}

#[test]
fn cacertdir_with_hashed_names_verifies_the_server() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench_tls(&[
        "--tls",
        "--cacertdir",
        p(&certs.ca_dir),
        "-t",
        "incr",
        "-n",
        "500",
        "-q",
    ]);
    out.assert_success();
    assert!(
        out.stderr_but_machine_busy().is_empty(),
        "no warning: {}",
        out.stderr
    );
    assert_eq!(server.client().calls("incr"), 500);
}

#[test]
fn a_server_signed_by_another_ca_is_refused_in_one_line() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.other_ca),
        "-t",
        "set",
        "-n",
        "10",
    ]);
    let reason = negotiation_failure(&out, &server);
    assert!(
        reason.starts_with("the server's certificate is not signed by the CA given with --cacert")
            && reason.contains("--insecure"),
        "{reason}"
    );
    assert!(out.stdout.is_empty(), "nothing measured: {}", out.stdout);
    assert_eq!(server.client().dbsize(), 0);
}

#[test]
fn without_a_ca_option_the_system_store_is_used_and_does_not_know_a_private_ca() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench_tls(&["--tls", "-t", "set", "-n", "10"]);
    let reason = negotiation_failure(&out, &server);
    assert!(reason.contains("system's trust store"), "{reason}");
}

#[test]
fn insecure_skips_verification() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    for args in [
        &["--tls", "--insecure"][..],
        &["--tls", "--insecure", "--cacert", p(&certs.other_ca)][..],
    ] {
        let mut all = args.to_vec();
        all.extend(["-t", "set", "-n", "100", "-q"]);
        server.bench_tls(&all).assert_success();
    }
    assert_eq!(server.client().calls("set"), 200);

    // Nor is the name checked.
    let named = TestCerts::new();
    let server = tls_server_with(
        ServerTls {
            cert: named.name_only_cert.clone(),
            key: named.name_only_key.clone(),
            ..ServerTls::new(&named)
        },
        &[],
    );
    server
        .bench_tls(&["--tls", "--insecure", "-t", "set", "-n", "100", "-q"])
        .assert_success();
}

// ---- names and SNI ----------------------------------------------------------------------------

/// A server whose certificate names redis.test only (no address, no localhost).
fn name_only_server(certs: &TestCerts) -> Server {
    tls_server_with(
        ServerTls {
            cert: certs.name_only_cert.clone(),
            key: certs.name_only_key.clone(),
            ..ServerTls::new(certs)
        },
        &[],
    )
}

#[test]
fn by_default_the_chain_is_verified_and_not_the_name() {
    let certs = TestCerts::new();
    let server = name_only_server(&certs);
    // The certificate names redis.test only; by address it is accepted, as valkey-benchmark
    // accepts it (the chain is what is checked).
    let out = server.bench_tls(&["--tls", "--cacert", p(&certs.ca), "-t", "set", "-n", "50"]);
    out.assert_success();
    assert_eq!(out.stderr, "");
    assert_eq!(server.client().calls("set"), 50);
    // Another CA is still refused.
    let out = server.bench_tls(&["--tls", "--cacert", p(&certs.other_ca), "-t", "set"]);
    let reason = negotiation_failure(&out, &server);
    assert!(reason.contains("not signed by the CA"), "{reason}");
}

#[test]
fn with_tls_verify_name_the_certificate_must_carry_the_name_and_sni_names_it() {
    let certs = TestCerts::new();
    let server = name_only_server(&certs);
    let ca = p(&certs.ca);
    // The certificate is for redis.test only: connecting by address is refused, clearly.
    let strict = "--tls-verify-name";
    let out = server.bench_tls(&["--tls", strict, "--cacert", ca, "-t", "set", "-n", "10"]);
    let reason = negotiation_failure(&out, &server);
    assert!(
        reason.starts_with("the server's certificate is not valid for 127.0.0.1 ")
            && reason.contains("--sni")
            && reason.contains(strict),
        "{reason}"
    );
    // --sni names the server: presented and verified.
    let out = server.bench_tls(&[
        "--tls",
        strict,
        "--cacert",
        ca,
        "--sni",
        "redis.test",
        "-t",
        "set",
        "-n",
        "300",
        "-q",
    ]);
    out.assert_success();
    assert_eq!(server.client().calls("set"), 300);
    // Another name is checked against the certificate too.
    let out = server.bench_tls(&[
        "--tls",
        strict,
        "--cacert",
        ca,
        "--sni",
        "other.test",
        "-t",
        "set",
        "-n",
        "10",
    ]);
    let reason = negotiation_failure(&out, &server);
    assert!(
        reason.starts_with("the server's certificate is not valid for other.test "),
        "{reason}"
    );
}

#[test]
fn a_host_name_is_verified_as_a_name() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    // The full certificate carries localhost; -h localhost works without --sni.
    let port = server.tls_port().to_string();
    let out = respbench(&[
        "-h",
        "localhost",
        "-p",
        &port,
        "--tls",
        "--tls-verify-name",
        "--cacert",
        p(&certs.ca),
        "-t",
        "set",
        "-n",
        "100",
        "-q",
    ]);
    // localhost may resolve to ::1 first; the server listens on 127.0.0.1 only, and respbench
    // uses the first address that accepts.
    out.assert_success();
}

// ---- client certificates ----------------------------------------------------------------------

#[test]
fn client_certificates_when_the_server_requires_them() {
    let certs = TestCerts::new();
    let server = tls_server_with(
        ServerTls {
            auth_clients: true,
            ..ServerTls::new(&certs)
        },
        &[],
    );
    let ca = p(&certs.ca);
    let out = server.bench_tls(&["--tls", "--cacert", ca, "-t", "set", "-n", "10"]);
    let reason = negotiation_failure(&out, &server);
    assert!(
        reason.contains("client certificate") && reason.contains("--cert"),
        "{reason}"
    );
    assert_eq!(server.client().dbsize(), 0);

    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        ca,
        "--cert",
        p(&certs.client_cert),
        "--key",
        p(&certs.client_key),
        "-t",
        "set",
        "-n",
        "500",
        "-q",
    ]);
    out.assert_success();
    assert_eq!(server.client().calls("set"), 500);
}

#[test]
fn certificate_and_key_problems_are_one_line() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    // One without the other: a usage error.
    let out = server.bench_tls(&["--tls", "--cert", p(&certs.client_cert)]);
    out.assert_code(2);
    assert_eq!(
        out.single_stderr_line(),
        "respbench: --cert needs --key (the private key of the client certificate)"
    );
    // Files that cannot be read or do not belong together: exit 1, before any connection.
    let mut c = server.client();
    let before = c.info_u64("stats", "total_connections_received");
    let missing = certs.dir().join("missing.pem");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--cacert", p(&missing)],
            "respbench: cannot read --cacert file ",
        ),
        (
            &["--cert", p(&certs.client_cert), "--key", p(&missing)],
            "respbench: cannot read --key file ",
        ),
        (
            &[
                "--cert",
                p(&certs.client_cert),
                "--key",
                p(&certs.server_key),
            ],
            "respbench: --key ",
        ),
    ];
    for (args, start) in cases {
        let mut all = vec!["--tls"];
        all.extend(args);
        let out = server.bench_tls(&all);
        out.assert_code(1);
        let line = out.single_stderr_line();
        assert!(line.starts_with(start), "{line}");
    }
    assert_eq!(c.info_u64("stats", "total_connections_received"), before);
}

// ---- URIs -------------------------------------------------------------------------------------

#[test]
fn rediss_and_valkeys_uris_with_password_db_and_resp3() {
    let certs = TestCerts::new();
    let server = Server::start_with(ServerOptions {
        password: Some("s3cret".into()),
        tls: Some(ServerTls::new(&certs)),
        ..Default::default()
    });
    let port = server.tls_port();
    for (scheme, db) in [("rediss", 3), ("valkeys", 4)] {
        let uri = format!("{scheme}://:s3cret@127.0.0.1:{port}/{db}");
        let out = respbench(&[
            "-u",
            &uri,
            "--cacert",
            p(&certs.ca),
            "-3",
            "-t",
            "set",
            "-n",
            "200",
            "-r",
            "50",
            "-q",
        ]);
        out.assert_success();
        let mut c = server.client();
        c.ok(&["SELECT", &db.to_string()]);
        assert!(c.dbsize() > 0, "{scheme}: keys in db {db}");
    }
    // The same URI without TLS is refused by the TLS port, not silently sent in clear.
    let out = respbench(&[
        "-u",
        &format!("redis://:s3cret@127.0.0.1:{port}"),
        "-t",
        "set",
        "-n",
        "10",
    ]);
    out.assert_code(1);
}

// ---- cipher options ---------------------------------------------------------------------------

#[test]
fn tls12_ciphers_are_honoured() {
    let certs = TestCerts::new();
    // A TLS 1.2 server with one cipher (EC certificate, so ECDSA ciphers).
    let server = tls_server_with(
        ServerTls::new(&certs),
        &[
            "--tls-protocols",
            "TLSv1.2",
            "--tls-ciphers",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ],
    );
    let ca = p(&certs.ca);
    let run = |ciphers: &str| {
        server.bench_tls(&[
            "--tls",
            "--cacert",
            ca,
            "--tls-ciphers",
            ciphers,
            "-t",
            "set",
            "-n",
            "100",
            "-q",
        ])
    };
    run("ECDHE-ECDSA-AES256-GCM-SHA384").assert_success();
    // OpenSSL syntax: keywords, exclusions, ',' and ' ' as separators.
    run("ECDHE-ECDSA-AES128-GCM-SHA256,ECDHE-ECDSA-AES256-GCM-SHA384").assert_success();
    run("ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384").assert_success();
    run("HIGH:!aNULL:!CHACHA20").assert_success();
    // Nothing in common with the server: refused, naming the option.
    let out = run("ECDHE-ECDSA-AES128-GCM-SHA256");
    let reason = negotiation_failure(&out, &server);
    assert!(reason.contains("--tls-ciphers"), "{reason}");
    // A list that leaves nothing: a usage error, before connecting.
    let out = run("NOT-A-CIPHER");
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .starts_with("respbench: --tls-ciphers \"NOT-A-CIPHER\" selects no cipher"),
        "{}",
        out.stderr
    );
    // An unknown entry beside a good one is skipped silently, as OpenSSL skips it.
    let out = run("NOT-A-CIPHER:ECDHE-ECDSA-AES256-GCM-SHA384");
    out.assert_success();
    assert_eq!(out.stderr_but_machine_busy(), "", "no warning");
    assert_eq!(server.client().calls("set"), 500);
}

#[test]
fn tls13_ciphersuites_are_honoured() {
    let certs = TestCerts::new();
    let server = tls_server_with(
        ServerTls::new(&certs),
        &[
            "--tls-protocols",
            "TLSv1.3",
            "--tls-ciphersuites",
            "TLS_AES_256_GCM_SHA384",
        ],
    );
    let ca = p(&certs.ca);
    let run = |suites: &str| {
        server.bench_tls(&[
            "--tls",
            "--cacert",
            ca,
            "--tls-ciphersuites",
            suites,
            "-t",
            "set",
            "-n",
            "100",
            "-q",
        ])
    };
    run("TLS_AES_256_GCM_SHA384").assert_success();
    run("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384").assert_success();
    let out = run("TLS_CHACHA20_POLY1305_SHA256");
    let reason = negotiation_failure(&out, &server);
    assert!(reason.contains("--tls-ciphersuites"), "{reason}");
    let out = run("TLS_NOPE");
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .starts_with("respbench: --tls-ciphersuites \"TLS_NOPE\": no TLS 1.3 ciphersuite"),
        "{}",
        out.stderr
    );
    assert_eq!(server.client().calls("set"), 200);
}

// ---- the engine over TLS ----------------------------------------------------------------------

#[test]
fn reconnects_with_k0_handshake_every_batch() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let before = server
        .client()
        .info_u64("stats", "total_connections_received");
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.ca),
        "-k",
        "0",
        "-t",
        "set",
        "-n",
        "300",
        "-c",
        "3",
        "-q",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set"), 300);
    let opened = c.info_u64("stats", "total_connections_received") - before;
    // 3 at start, one per batch after the first on each, the control connection, our client.
    assert!(
        opened >= 300,
        "only {opened} connections for 300 batches with -k 0"
    );
}

#[test]
fn pipelines_threads_and_values_larger_than_a_record() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    // 16 x 40 kB per batch: many TLS records each way, partial writes, reads that fill the
    // worker's buffer. A stream that broke the read contract would hang until the timeout.
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.ca),
        "-t",
        "set,get",
        "-d",
        "40000",
        "-P",
        "16",
        "-c",
        "4",
        "--threads",
        "2",
        "-n",
        "3200",
        "-r",
        "50",
        "-q",
    ]);
    out.assert_success()
        .assert_stdout_contains("SET: ")
        .assert_stdout_contains("GET: ");
    let mut c = server.client();
    assert_eq!(c.calls("set"), 3200);
    assert_eq!(c.calls("get"), 3200);
    let key = c.strings(&["KEYS", "key:*"]).pop().expect("a key");
    assert_eq!(
        c.bulk(&["GET", &String::from_utf8(key).unwrap()])
            .unwrap()
            .len(),
        40000
    );
}

#[test]
fn a_command_larger_than_the_socket_buffers() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    // One 8 MB SET per batch: hundreds of records per command, written while the server reads
    // (the unit tests in src/engine/tls/mod.rs force the socket-full case).
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.ca),
        "-t",
        "set",
        "-d",
        "8000000",
        "-c",
        "1",
        "-n",
        "3",
        "-q",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set"), 3);
    let value = c.bulk(&["GET", "key:__rand_int__"]).expect("the key");
    assert_eq!(value.len(), 8_000_000);
}

#[test]
fn quiet_and_csv_output_over_tls() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let ca = p(&certs.ca);
    let out = server.bench_tls(&[
        "--tls", "--cacert", ca, "-t", "ping,get", "-n", "2000", "-P", "16", "--csv",
    ]);
    out.assert_success().assert_no_progress_line();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert!(lines[0].starts_with("\"test\",\"rps\""));
    for (line, title) in lines[1..].iter().zip(["PING_INLINE", "PING_MBULK", "GET"]) {
        let fields = quoted_csv_fields(line).expect("quoted CSV");
        assert_eq!(fields.len(), 8);
        assert_eq!(fields[0], title);
    }
    let out = server.bench_tls(&["--tls", "--cacert", ca, "-t", "set", "-n", "2000", "-q"]);
    out.assert_success();
    let line = out.stdout.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("SET: ") && line.contains(" requests per second, p50="),
        "{line}"
    );
}

#[test]
fn idle_connections_over_tls() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let run = server.spawn_bench_tls(&["--tls", "--cacert", p(&certs.ca), "-I", "-c", "5"]);
    let mut c = server.client();
    assert!(
        wait_until(Duration::from_secs(20), || c
            .info_u64("clients", "connected_clients")
            >= 6),
        "5 idle TLS connections did not show up"
    );
    run.interrupt();
    let out = run.finish(RUN_TIMEOUT);
    out.assert_code(130);
}

#[test]
fn tls_against_a_plain_port_says_so() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench(&["--tls", "--insecure", "-t", "set", "-n", "10"]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with(&format!(
            "Could not negotiate a TLS connection: 127.0.0.1:{}: ",
            server.port()
        )) && line.contains("TLS port"),
        "{line}"
    );
}

#[test]
fn tls_options_without_tls_warn_and_run_in_clear() {
    let server = Server::start();
    let out = server.bench(&[
        "--cacert",
        "/nonexistent/ca.pem",
        "-t",
        "set",
        "-n",
        "100",
        "-q",
    ]);
    out.assert_success().assert_stderr_contains(
        "WARNING: --cacert has no effect without --tls (or a rediss:// URI)",
    );
    assert_eq!(server.client().calls("set"), 100);
}

#[test]
fn tls_needs_tcp() {
    let out = respbench(&["--tls", "-s", "/tmp/respbench-no.sock"]);
    out.assert_code(2);
    assert!(
        out.single_stderr_line()
            .contains("not with a unix socket (-s)")
    );
}

// ---- MPTCP and RDMA ---------------------------------------------------------------------------

/// Whether this kernel lets a process open a Multipath TCP socket.
fn kernel_has_mptcp() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain socket(2) and close(2) on a descriptor we own.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP);
            if fd < 0 {
                return false;
            }
            libc::close(fd);
            true
        }
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// `MPTcpExt: MPCapableSYNTX` of /proc/net/netstat: SYNs sent offering MPTCP (this network
/// namespace, all processes; it only grows).
fn mp_capable_syns_sent() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("MPTcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let i = names
        .split_whitespace()
        .position(|n| n == "MPCapableSYNTX")?;
    values.split_whitespace().nth(i)?.parse().ok()
}

#[test]
fn mptcp_runs_where_the_kernel_has_it_and_says_so_where_not() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    if kernel_has_mptcp() {
        let before = mp_capable_syns_sent();
        server
            .bench(&["--mptcp", "-t", "set", "-n", "500", "-c", "3", "-q"])
            .assert_success();
        // The server is plain TCP: the connections fall back, but they did offer MPTCP.
        if let (Some(before), Some(after)) = (before, mp_capable_syns_sent()) {
            assert!(
                after >= before + 4,
                "MPCapableSYNTX went from {before} to {after}"
            );
        }
        // With TLS and -k 0 (non-blocking connects) too.
        server
            .bench_tls(&[
                "--mptcp",
                "--tls",
                "--cacert",
                p(&certs.ca),
                "-k",
                "0",
                "-t",
                "set",
                "-n",
                "100",
                "-c",
                "2",
                "-q",
            ])
            .assert_success();
        assert_eq!(server.client().calls("set"), 600);
    } else {
        let out = server.bench(&["--mptcp", "-t", "set", "-n", "10"]);
        out.assert_code(1);
        assert_eq!(
            out.single_stderr_line(),
            "respbench: --mptcp: this kernel does not support Multipath TCP \
             (net.mptcp.enabled=0 or no MPTCP support)"
        );
    }
    let out = respbench(&["--mptcp", "-s", "/tmp/respbench-no.sock"]);
    out.assert_code(2);
}

#[test]
fn rdma_is_not_in_this_build() {
    let out = respbench(&["--rdma", "-q"]);
    out.assert_code(2);
    assert_eq!(
        out.single_stderr_line(),
        "respbench: --rdma is not supported by this build"
    );
}

/// `-I` over TLS against a server at its `maxclients`: the server resets (or closes) the
/// handshake of the connection it has no room for. The reference's idle clients report that as
/// `Error: Connection reset by peer` (or `Error: Server closed the connection`), and scripts match
/// on `Error`; respbench said `Could not connect to server at …` (or, for the close, "is this a
/// TLS port?", of a port that had just completed two handshakes).
#[test]
fn idle_over_tls_at_maxclients_ends_with_the_references_error_line() {
    let certs = TestCerts::new();
    let server = tls_server_with(ServerTls::new(&certs), &["--maxclients", "2"]);
    let out = server
        .spawn_bench_tls(&["--tls", "--cacert", p(&certs.ca), "-I", "-c", "5"])
        .finish(Duration::from_secs(30));
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("Error: Connection reset by peer (opening idle connection ")
            || line.starts_with("Error: Server closed the connection (opening idle connection "),
        "{line}"
    );
    assert!(line.contains("maxclients"), "{line}");
}

/// A large value is sent from one shared copy by a gathered write; over TLS (no gather write:
/// one piece per call, the same bytes again after a full socket) it still arrives whole, with
/// several connections and pipelining.
#[test]
fn a_large_shared_value_arrives_whole_over_tls() {
    let certs = TestCerts::new();
    let server = tls_server(&certs);
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        p(&certs.ca),
        "-n",
        "24",
        "-c",
        "3",
        "-P",
        "2",
        "-d",
        "3000000",
        "-q",
        "--",
        "set",
        "big",
        "__data__",
    ]);
    out.assert_success();
    let mut c = server.client();
    assert_eq!(c.calls("set"), 24);
    let value = c.bulk(&["GET", "big"]).unwrap();
    assert_eq!(value.len(), 3_000_000);
    server
        .bench(&[
            "-n",
            "1",
            "-c",
            "1",
            "-q",
            "--data-size-list",
            "3000000:1",
            "--",
            "set",
            "copied",
            "__data__",
        ])
        .assert_success();
    assert!(
        c.bulk(&["GET", "copied"]).unwrap() == value,
        "the same bytes as the copying path"
    );
}

// ---- X.509 v1 certificates, as OpenSSL-based tools accept them ----------------------------------

/// A CA, a server and a client certificate made the way Redis's and memtier's
/// `gen-test-certs.sh` make them: keys by `openssl genrsa`, certificates by `openssl x509 -req`
/// without extensions, so all three are X.509 v1 (the CA signs itself the same way). And an
/// unrelated CA made alike, which must not verify the server.
struct V1Certs {
    dir: super::harness::TempDir,
}

impl V1Certs {
    fn new() -> V1Certs {
        let certs = V1Certs {
            dir: super::harness::TempDir::new(),
        };
        for ca in ["ca", "other-ca"] {
            certs.openssl(&["genrsa", "-out", &format!("{ca}.key"), "2048"]);
            certs.openssl(&[
                "req",
                "-new",
                "-sha256",
                "-key",
                &format!("{ca}.key"),
                "-subj",
                "/O=respbench test/CN=Certificate Authority",
                "-out",
                &format!("{ca}.csr"),
            ]);
            certs.openssl(&[
                "x509",
                "-req",
                "-sha256",
                "-days",
                "3650",
                "-in",
                &format!("{ca}.csr"),
                "-signkey",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.crt"),
            ]);
        }
        for (who, cn) in [("server", "redis.test"), ("client", "Client-only")] {
            certs.openssl(&["genrsa", "-out", &format!("{who}.key"), "2048"]);
            certs.openssl(&[
                "req",
                "-new",
                "-sha256",
                "-key",
                &format!("{who}.key"),
                "-subj",
                &format!("/O=respbench test/CN={cn}"),
                "-out",
                &format!("{who}.csr"),
            ]);
            certs.openssl(&[
                "x509",
                "-req",
                "-sha256",
                "-days",
                "365",
                "-in",
                &format!("{who}.csr"),
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &format!("{who}.crt"),
            ]);
        }
        for c in ["ca.crt", "server.crt", "client.crt"] {
            let text = certs.openssl(&["x509", "-noout", "-text", "-in", c]);
            assert!(text.contains("Version: 1 (0x0)"), "{c} is not v1:\n{text}");
        }
        certs
    }

    /// Runs `openssl ARGS` in the directory; its stdout.
    fn openssl(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("the openssl command (Debian's openssl package) makes the v1 certificates");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// A Redis whose TLS port presents the v1 server certificate and requires a client
    /// certificate signed by the v1 CA.
    fn server(&self) -> Server {
        tls_server_with(
            ServerTls {
                cert: self.dir.path().join("server.crt"),
                key: self.dir.path().join("server.key"),
                ca: self.dir.path().join("ca.crt"),
                auth_clients: true,
            },
            &[],
        )
    }
}

#[test]
fn v1_ca_server_and_client_certificates_connect_and_verify() {
    let certs = V1Certs::new();
    let server = certs.server();
    let (ca, cert, key) = (
        certs.path("ca.crt"),
        certs.path("client.crt"),
        certs.path("client.key"),
    );
    let tls = ["--tls", "--cacert", &ca, "--cert", &cert, "--key", &key];
    let out = server.bench_tls(&[&tls[..], &["-t", "set", "-n", "500", "-q"]].concat());
    out.assert_success();
    assert_eq!(server.client().calls("set"), 500);

    // The name too, when asked: the v1 certificate's only name is its CN.
    let named = [
        "--tls-verify-name",
        "--sni",
        "redis.test",
        "-t",
        "get",
        "-n",
        "100",
        "-q",
    ];
    server
        .bench_tls(&[&tls[..], &named[..]].concat())
        .assert_success();
    let unnamed =
        server.bench_tls(&[&tls[..], &["--tls-verify-name", "-t", "get", "-n", "10"]].concat());
    let reason = negotiation_failure(&unnamed, &server);
    assert!(reason.contains("name"), "{reason}");

    // `--insecure` takes the v1 certificate as it takes any, and still checks the handshake's
    // signature with its key (webpki cannot read a v1 certificate for that).
    let insecure = ["--tls", "--insecure", "--cert", &cert, "--key", &key];
    server
        .bench_tls(&[&insecure[..], &["-t", "get", "-n", "100", "-q"]].concat())
        .assert_success();

    // memtier's own TLS line, unchanged, in memtier mode.
    let port = server.tls_port().to_string();
    let out = respbench(&[
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--cacert",
        &ca,
        "--cert",
        &cert,
        "--key",
        &key,
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "100",
        "--ratio",
        "1:0",
        "--hide-histogram",
    ]);
    out.assert_success();
    assert_eq!(server.client().calls("set"), 600);
}

#[test]
fn a_v1_server_certificate_from_another_ca_is_refused_in_one_line() {
    let certs = V1Certs::new();
    let server = certs.server();
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        &certs.path("other-ca.crt"),
        "--cert",
        &certs.path("client.crt"),
        "--key",
        &certs.path("client.key"),
        "-t",
        "set",
        "-n",
        "10",
    ]);
    let reason = negotiation_failure(&out, &server);
    assert!(
        reason.starts_with("the server's certificate is not signed by the CA given with --cacert"),
        "{reason}"
    );
    assert_eq!(server.client().dbsize(), 0);
}
