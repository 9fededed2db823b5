//! Authentication, error replies and unreachable servers: exit codes, one-line messages, and
//! what still reaches stdout.

use std::time::Duration;

use crate::harness::{Server, ServerKind, ServerOptions, free_port, run_respbench};

const PASSWORD: &str = "s3cret-pw";

fn server_with_password() -> Server {
    Server::start_with(ServerOptions {
        password: Some(PASSWORD.to_string()),
        ..Default::default()
    })
}

#[test]
fn password_auth_works_and_failures_exit_1_with_one_line() {
    let server = server_with_password();
    let mut c = server.client();

    server
        .bench(&["-a", PASSWORD, "-t", "set", "-n", "100", "-q"])
        .assert_success();
    assert_eq!(
        c.calls("set"),
        100,
        "the authenticated run reached the server"
    );

    // The reference's two lines: `Node host:port replied with error:` and the reply.
    let node = format!("Node 127.0.0.1:{} replied with error:", server.port());
    let out = server.bench(&["-a", "wrong-pw", "-t", "set", "-n", "100", "-q"]);
    out.assert_code(1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines[0], node, "{}", out.stderr);
    assert!(
        lines.len() == 2 && lines[1].starts_with("WRONGPASS"),
        "{}",
        out.stderr
    );

    let out = server.bench(&["-t", "set", "-n", "100", "-q"]);
    out.assert_code(1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines[0], node, "{}", out.stderr);
    assert!(
        lines.len() == 2 && lines[1].starts_with("NOAUTH") && lines[1].contains("-a"),
        "the message should say a password (-a) is needed: {}",
        out.stderr
    );

    assert_eq!(c.calls("set"), 100, "the failed runs sent no SET");
}

#[test]
fn acl_user_auth_works_and_a_wrong_acl_password_fails() {
    let server = server_with_password();
    let mut c = server.client();
    c.ok(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]);

    server
        .bench(&[
            "--user", "bench", "-a", "pw", "-t", "set", "-n", "100", "-q",
        ])
        .assert_success();
    assert_eq!(c.calls("set"), 100);
    let auths = c.calls("auth");
    assert!(
        auths > 50,
        "ours and one per benchmark client: {auths} AUTH calls"
    );

    let out = server.bench(&[
        "--user", "bench", "-a", "nope", "-t", "set", "-n", "100", "-q",
    ]);
    out.assert_code(1);
    assert!(
        out.stderr.starts_with("Node ") && out.stderr.contains("WRONGPASS"),
        "{}",
        out.stderr
    );
    assert_eq!(c.calls("set"), 100);

    // The same user through a URI, with a database number.
    let uri = format!("redis://bench:pw@127.0.0.1:{}/2", server.port());
    let out = run_respbench(
        &["-u", &uri, "-t", "set", "-n", "50", "-q"].map(String::from),
        None,
    );
    out.assert_success();
    c.ok(&["SELECT", "2"]);
    assert_eq!(
        c.int(&["EXISTS", "key:__rand_int__"]),
        1,
        "-u's /2 selected db 2"
    );
}

#[test]
fn error_replies_are_counted_with_e() {
    let server = Server::start();
    let mut c = server.client();
    c.ok(&["SET", "thatkey", "a string"]);

    let out = server.bench(&["-e", "-n", "100", "lpush", "thatkey", "x"]);
    out.assert_success();
    out.assert_stdout_contains("====== lpush thatkey x ======");
    out.assert_stdout_contains("  error replies: 100");
    out.assert_stdout_contains("    WRONGTYPE: 100");
    assert_eq!(
        out.completed(),
        0,
        "error replies are not completed requests"
    );
    assert_eq!(c.calls("lpush"), 100);
}

#[test]
fn an_error_reply_without_e_aborts_after_a_partial_report() {
    let server = Server::start();
    let mut c = server.client();
    c.ok(&["SET", "thatkey", "a string"]);

    let out = server.bench(&["-n", "100", "lpush", "thatkey", "x"]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("Error from server: WRONGTYPE") && line.contains("-e"),
        "{line}"
    );
    out.assert_stdout_contains("====== lpush thatkey x ======");
    out.assert_stdout_contains("aborted");
    out.assert_stdout_contains("Summary:");
    assert!(c.calls("lpush") <= 100);
    assert_eq!(
        c.bulk(&["GET", "thatkey"]).as_deref(),
        Some(&b"a string"[..])
    );
}

#[test]
fn unreachable_server_exits_1_with_one_line() {
    let port = free_port().to_string();
    let out = run_respbench(
        &["-h", "127.0.0.1", "-p", &port, "-t", "get"].map(String::from),
        None,
    );
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("Could not connect to server at 127.0.0.1:"),
        "{line}"
    );
    assert!(
        line.contains(&port),
        "the message names the address: {line}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout: {:?}", out.stdout);
}

#[test]
fn a_server_refusing_clients_is_a_clean_failure() {
    // maxclients 4: our connection, the control one, and two benchmark clients fit; the rest get
    // "max number of clients reached" and are closed.
    let server = Server::start_with(ServerOptions {
        extra: vec!["--maxclients".into(), "4".into()],
        ..Default::default()
    });
    let _c = server.client();
    let out = server.bench(&["-c", "10", "-n", "1000", "-t", "set"]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.starts_with("Error from server: ERR max number of clients")
            || line.starts_with("Error: "),
        "{line}"
    );
}

/// `--pubsub` without `-e` whose subscriber the server refuses while subscribing (at
/// `maxclients`): one line naming the server's `maxclients` and the `-e` hint, not the broken
/// pipe that follows the refusal. (Under `-e` the run goes on: the fault matrix.)
#[test]
fn a_subscriber_refused_at_maxclients_is_named_so() {
    let server = Server::start_with(ServerOptions {
        kind: crate::harness::ServerKind::Valkey,
        extra: vec!["--maxclients".into(), "4".into()],
        ..Default::default()
    });
    let out = server.bench(&["--pubsub", "6", "-n", "100", "--rps", "100"]);
    out.assert_code(1);
    let line = out.single_stderr_line();
    assert!(
        line.contains("maxclients") && line.contains("use -e"),
        "{line}"
    );
}

#[test]
fn a_connection_closed_by_the_server_aborts_with_a_partial_report() {
    let server = Server::start();
    let mut c = server.client();
    let running = server.spawn_bench(&["--duration", "30", "-c", "2", "-t", "set"]);
    let started =
        crate::harness::wait_until(std::time::Duration::from_secs(20), || c.calls("set") >= 1);
    assert!(started, "respbench never sent a SET");
    // Every client but ours: the benchmark connections and the control one.
    let killed = c.int(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
    assert!(killed >= 2, "killed {killed} clients");
    let out = running.finish(std::time::Duration::from_secs(20));
    out.assert_code(1);
    let line = out.single_stderr_line();
    // A read sees the close, a write may see a reset instead; either way one line naming
    // the server.
    let address = format!("127.0.0.1:{}", server.port());
    assert!(
        line.starts_with("Error: ") && line.contains(&address),
        "{line}"
    );
    let lower = line.to_ascii_lowercase();
    assert!(
        ["closed", "reset", "broken pipe"]
            .iter()
            .any(|w| lower.contains(w)),
        "{line}"
    );
    out.assert_stdout_contains("====== SET ======");
    out.assert_stdout_contains("aborted");
    out.assert_stdout_contains("Summary:");
    assert!(
        out.completed() > 0,
        "what was measured before the close is reported"
    );
}

/// A value over the server's `proto-max-bulk-len`: the server answers
/// `-ERR Protocol error: invalid bulk length` and closes while respbench is still writing the
/// value, so the write fails with a reset. The message must be the server's reason, which was
/// in the socket ahead of the reset, not "Connection reset by peer" (issue 19 item 7). One
/// 64 MB value, `-n 1 -c 1`, against each server in turn, its limit lowered to 1 MB (the
/// servers' floor): the default 512 MB limit took a 600 MB value, over a minute of the suite
/// under load, to show the same thing. What the test needs is a value the server refuses from
/// its header and far more than loopback's socket buffers hold (a few MB), so respbench is
/// still writing when the server closes: 64 MB is both.
#[test]
fn a_value_over_proto_max_bulk_len_reports_the_servers_reason() {
    for kind in [ServerKind::Redis, ServerKind::Valkey] {
        let server = Server::start_with(ServerOptions {
            kind,
            extra: vec!["--proto-max-bulk-len".into(), "1mb".into()],
            ..Default::default()
        });
        // The bound only guards against a hang.
        let out = server
            .spawn_bench(&["-t", "set", "-n", "1", "-c", "1", "-d", "64000000", "-q"])
            .finish(Duration::from_secs(240));
        out.assert_code(1);
        assert!(
            out.stderr
                .contains("ERR Protocol error: invalid bulk length")
                && !out.stderr.contains("reset by peer"),
            "{kind:?}: {}",
            out.stderr
        );
        assert_eq!(server.client().dbsize(), 0, "{kind:?}: nothing was written");
    }
}
