//! The connection, reconnection, TLS-version, debug and WAIT options (`conn.rs`): what each
//! sets, and their one-line refusals.

use std::time::Duration;

use super::tests::{err, run};
use crate::cli::{AddrFamily, TlsVersionsArg, WaitArgs};

#[test]
fn reconnect_and_connect_options_reach_the_args() {
    let (a, _) = run(&[
        "--reconnect-interval=50",
        "--reconnect-on-error",
        "--connection-timeout",
        "3",
        "--max-reconnect-attempts=0",
        "--reconnect-backoff-factor=1.5",
    ]);
    assert_eq!(a.conn.reconnect_interval, Some(50));
    assert!(a.continue_on_error, "--reconnect-on-error is -e");
    assert_eq!(a.conn.connect_timeout, Some(Duration::from_secs(3)));
    assert_eq!(a.conn.backoff_factor, Some(1.5));
    let (a, _) = run(&["--connection-timeout=0"]);
    assert_eq!(a.conn.connect_timeout, None, "0 keeps respbench's bound");
    assert!(err(&["--reconnect-interval=0"]).contains("--reconnect-interval"));
    let (a, _) = run(&["--reconnect-on-error", "--max-reconnect-attempts=3"]);
    assert_eq!(a.conn.max_reconnect_attempts, Some(3));
    let (a, _) = run(&["--max-reconnect-attempts=0"]);
    assert_eq!(
        a.conn.max_reconnect_attempts, None,
        "0 is memtier's unlimited"
    );
    assert!(err(&["--reconnect-backoff-factor=-1"]).contains("--reconnect-backoff-factor"));
}

#[test]
fn the_family_the_last_of_4_and_6() {
    assert_eq!(run(&["-4"]).0.conn.family, Some(AddrFamily::V4));
    assert_eq!(run(&["--ipv6"]).0.conn.family, Some(AddrFamily::V6));
    assert_eq!(run(&["-6", "-4"]).0.conn.family, Some(AddrFamily::V4));
    assert_eq!(run(&[]).0.conn.family, None);
}

#[test]
fn tls_protocols_map_to_rustls_versions_and_old_ones_are_refused() {
    let (a, _) = run(&["--tls", "--tls-protocols", "TLSv1.2"]);
    assert_eq!(
        a.conn.tls_versions,
        Some(TlsVersionsArg {
            tls12: true,
            tls13: false
        })
    );
    let (a, _) = run(&["--tls", "--tls-protocols=TLSv1.3,TLSv1.2"]);
    assert_eq!(
        a.conn.tls_versions,
        Some(TlsVersionsArg {
            tls12: true,
            tls13: true
        })
    );
    for old in ["TLSv1", "TLSv1.2,TLSv1.1"] {
        let e = err(&["--tls", "--tls-protocols", old]);
        assert!(e.contains("RFC 8996") && !e.contains('\n'), "{e}");
    }
    assert!(err(&["--tls-protocols", "SSLv3"]).contains("TLSv1.2 and/or TLSv1.3"));
}

#[test]
fn jitter_range_is_checked_and_a_minimum_alone_is_the_pause() {
    let (a, _) = run(&["--thread-conn-start-min-jitter-micros=10"]);
    assert_eq!(a.conn.start_jitter_us, (10, 10));
    let (a, _) = run(&[
        "--thread-conn-start-min-jitter-micros=10",
        "--thread-conn-start-max-jitter-micros=90",
    ]);
    assert_eq!(a.conn.start_jitter_us, (10, 90));
    let e = err(&[
        "--thread-conn-start-min-jitter-micros=100",
        "--thread-conn-start-max-jitter-micros=90",
    ]);
    assert!(e.contains("above"), "{e}");
}

#[test]
fn wait_options_build_the_wait_settings() {
    let (a, _) = run(&[
        "--wait-ratio=2:1",
        "--num-slaves=0-2",
        "--wait-timeout=10-20",
    ]);
    assert_eq!(
        a.conn.wait,
        Some(WaitArgs {
            sets: 2,
            waits: 1,
            replicas: (0, 2),
            timeout_ms: (10, 20)
        })
    );
    assert!(err(&["--num-slaves=2-1"]).contains("--num-slaves"));
    assert!(err(&["--num-slaves=0-40"]).contains("at most 16"));
    assert!(err(&["--wait-ratio=0:1"]).contains("1:N"));
    let e = err(&["--command=GET __key__", "--wait-ratio=1:1"]);
    assert!(e.contains("--wait-ratio"), "{e}");
}

#[test]
fn show_config_and_debug_are_noted() {
    let (_, o) = run(&["--show-config", "-D"]);
    assert!(o.show_config && o.debug);
}

#[test]
fn the_staircase_needs_its_three_options_a_start_below_clients_and_a_test_time() {
    let (a, _) = run(&[
        "--clients-start=2",
        "--clients-step=3",
        "--step-duration=4",
        "-c",
        "10",
        "--test-time=20",
    ]);
    assert_eq!(a.conn.ramp, Some((2, 3, 4)));
    let e = err(&["--clients-start=2", "-c", "10", "--test-time=20"]);
    assert!(e.contains("missing --clients-step, --step-duration"), "{e}");
    let e = err(&[
        "--clients-start=10",
        "--clients-step=1",
        "--step-duration=1",
        "-c",
        "10",
        "--test-time=5",
    ]);
    assert!(e.contains("less than --clients"), "{e}");
    let e = err(&[
        "--clients-start=1",
        "--clients-step=1",
        "--step-duration=1",
        "-c",
        "10",
    ]);
    assert!(e.contains("--test-time"), "{e}");
}
