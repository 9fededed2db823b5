//! `capture` and `replay` over TLS (issue 25): the main command line's own `--tls`, `--cacert`,
//! `--cert`, `--key` and `rediss://` entries, against Redis 7.0 (the Valkey 9.1 build the tests
//! use has no TLS). The servers require a client certificate, and respbench is pointed at their
//! TLS ports, which speak nothing but TLS: a capture or replay that works went over TLS with the
//! client certificate. The plain ports are the test's own view of what landed.

use std::path::Path;
use std::time::Duration;

use super::harness::{
    Server, ServerOptions, ServerTls, TempDir, TestCerts, respbench, spawn_respbench, wait_until,
};

fn tls_server(certs: &TestCerts) -> Server {
    let mut tls = ServerTls::new(certs);
    tls.auth_clients = true;
    Server::start_with(ServerOptions {
        tls: Some(tls),
        password: Some("s3cret-tls".into()),
        ..Default::default()
    })
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

#[test]
fn capture_and_replay_over_tls_with_a_client_certificate() {
    let certs = TestCerts::new();
    let src = tls_server(&certs);
    let dst = tls_server(&certs);
    let dir = TempDir::new();
    let trace = dir.path().join("t.trace");
    let tls_port = src.tls_port().to_string();
    let cap = spawn_respbench(&[
        "capture",
        "--tls",
        "--cacert",
        p(&certs.ca),
        "--cert",
        p(&certs.client_cert),
        "--key",
        p(&certs.client_key),
        "-p",
        &tls_port,
        "-a",
        "s3cret-tls",
        "-o",
        p(&trace),
        "--duration",
        "2",
    ]);
    let mut admin = src.client();
    assert!(
        wait_until(Duration::from_secs(10), || {
            let list = admin.bulk(&["CLIENT", "LIST"]).unwrap_or_default();
            String::from_utf8_lossy(&list).contains("cmd=monitor")
        }),
        "the capture's MONITOR connection (over TLS) appears"
    );
    for i in 0..20 {
        admin.ok(&["SET", &format!("t:{i}"), "v"]);
    }
    admin.cmd(&["INCR", "t:n"]);
    let out = cap.finish(Duration::from_secs(20));
    assert!(out.code == Some(0), "capture: {out:?}");

    // The replay: a rediss:// URI (with the password) plus the certificate options.
    let json = dir.path().join("r.json");
    let uri = format!("rediss://:s3cret-tls@127.0.0.1:{}", dst.tls_port());
    let out = respbench(&[
        "replay",
        p(&trace),
        "-u",
        &uri,
        "--cacert",
        p(&certs.ca),
        "--cert",
        p(&certs.client_cert),
        "--key",
        p(&certs.client_key),
        "--speed",
        "max",
        "--json",
        p(&json),
    ]);
    assert!(out.code == Some(0), "replay: {out:?}");
    let mut c = dst.client();
    assert_eq!(c.calls("set"), 20, "every SET of the trace landed");
    assert_eq!(c.calls("incr"), 1);
    assert_eq!(c.bulk(&["GET", "t:19"]).as_deref(), Some(&b"v"[..]));
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        !text.contains("s3cret-tls"),
        "the password is in the record"
    );
    assert!(!out.stdout.contains("s3cret-tls") && !out.stderr.contains("s3cret-tls"));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["target"]["tls"], true, "{}", doc["target"]);
    assert_eq!(doc["tests"][0]["requests"]["failed"], 0);

    // Without the client certificate the server refuses the handshake: exit 1, one line.
    let out = respbench(&["replay", p(&trace), "-u", &uri, "--cacert", p(&certs.ca)]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(!out.stderr.contains("s3cret-tls"));
}

#[test]
fn tls_usage_mistakes_are_one_line_and_exit_2() {
    let dir = TempDir::new();
    let trace = dir.path().join("t.trace");
    std::fs::write(&trace, "1700000000.000000 [0 127.0.0.1:1] \"PING\"\n").unwrap();
    for args in [
        vec![
            "replay",
            p(&trace),
            "--tls",
            "--tls-ciphers",
            "NO-SUCH-CIPHER",
        ],
        vec!["replay", p(&trace), "-u", "rediss://h:1/3"],
        vec!["capture", "-o", "-", "--tls-ciphersuites", "NOPE", "--tls"],
    ] {
        let out = respbench(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    }
}
