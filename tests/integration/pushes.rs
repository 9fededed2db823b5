//! RESP3 pushes: `--enable-tracking` invalidations and pub/sub traffic are counted and never
//! taken for replies; (un)subscribe replies, which are pushes in RESP3, complete their requests.
//!
//! The invalidation and message tests are deterministic: each benchmark unit hands over to a
//! writer thread through two lists (`LPUSH ready` / `BLPOP go`), so the writer's change always
//! lands between the unit's read and its last reply, and each unit gets exactly one push.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use resp::Value;

use crate::harness::{Output, Server};

/// Units per handshake run: small, since every unit waits for the writer.
const UNITS: usize = 60;

/// The number in `  <label>: N` of the full report, if the line is there (a test that spans
/// more than a second adds ` (per second: a to b)` after it, as a slow machine makes it do).
fn report_count(out: &Output, label: &str) -> Option<u64> {
    let prefix = format!("  {label}: ");
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .map(|n| n.split(" (per second: ").next().unwrap_or(n))
        .map(|n| n.parse().unwrap_or_else(|e| panic!("{label}: {n:?}: {e}")))
}

/// Serves `units` handshakes on its own connection: waits for `LPUSH ready`, runs `act`, then
/// `LPUSH go`. Stops early (bounded) if the benchmark stops handing over.
fn writer(
    server: &Server,
    units: usize,
    act: impl Fn(&mut crate::harness::Client) + Send + 'static,
) -> JoinHandle<usize> {
    let mut c = server.client();
    thread::spawn(move || {
        let mut served = 0;
        while served < units {
            match c.cmd(&["BLPOP", "ready", "5"]) {
                Value::Null => break,
                Value::Array(_) => {}
                other => panic!("BLPOP ready: {other:?}"),
            }
            act(&mut c);
            c.ok(&["LPUSH", "go", "1"]);
            served += 1;
        }
        served
    })
}

#[test]
fn invalidations_are_counted_and_never_taken_for_replies() {
    let server = Server::start();
    let mut c = server.client();
    let keys: Vec<String> = (0..10).map(|k| format!("key:{k:012}")).collect();
    let writes = keys.clone();
    let w = writer(&server, UNITS, move |c| {
        for k in &writes {
            c.ok(&["SET", k, "changed"]);
        }
    });
    let n = (3 * UNITS).to_string();
    let out = server.bench(&[
        "-3",
        "--enable-tracking",
        "-c",
        "1",
        "-n",
        &n,
        "-r",
        "10",
        "--",
        "GET",
        "key:__rand_int__",
        ";",
        "LPUSH",
        "ready",
        "1",
        ";",
        "BLPOP",
        "go",
        "5",
    ]);
    assert_eq!(w.join().expect("writer"), UNITS);
    out.assert_success();
    assert!(out.stderr_but_machine_busy().is_empty(), "{}", out.stderr);
    // Every reply counted, none of the pushes: exactly -n.
    assert_eq!(out.completed(), 3 * UNITS as u64);
    // Each unit read one key, which the writer then changed: one invalidation per unit.
    assert_eq!(
        report_count(&out, "invalidation messages"),
        Some(UNITS as u64),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("error replies"), "{}", out.stdout);
    // The prefix command really went out, once per connection.
    assert_eq!(c.calls("client|tracking"), 1);
    assert_eq!(c.calls("get"), UNITS as u64);
}

#[test]
fn tracking_without_writes_reports_zero_and_without_resp3_warns() {
    let server = Server::start();
    let mut c = server.client();
    let out = server.bench(&[
        "-3",
        "--enable-tracking",
        "-c",
        "4",
        "-n",
        "2000",
        "-r",
        "100",
        "GET",
        "key:__rand_int__",
    ]);
    out.assert_success();
    assert_eq!(out.completed(), 2000);
    // With --enable-tracking the line is always there: 0 says tracking was on.
    assert_eq!(report_count(&out, "invalidation messages"), Some(0));
    assert_eq!(c.calls("client|tracking"), 4);

    // -q: no side note for zero; stdout is the one line.
    let out = server.bench(&["-3", "--enable-tracking", "-n", "100", "-q", "GET", "k"]);
    out.assert_success();
    assert!(out.stderr_but_machine_busy().is_empty(), "{}", out.stderr);
    assert!(out.stdout.starts_with("GET k: "), "{}", out.stdout);
    assert_eq!(out.stdout.lines().filter(|l| !l.is_empty()).count(), 1);

    // RESP2: the server accepts tracking but can send nothing; say so, and still send it.
    let before = c.calls("client|tracking");
    let out = server.bench(&[
        "--enable-tracking",
        "-c",
        "2",
        "-n",
        "100",
        "-q",
        "GET",
        "k",
    ]);
    out.assert_success();
    let line = out.single_stderr_line();
    assert!(
        line.contains("--enable-tracking without -3") && line.contains("add -3"),
        "{line}"
    );
    assert_eq!(c.calls("client|tracking"), before + 2);
}

#[test]
fn resp3_subscribe_replies_complete_requests() {
    let server = Server::start();
    let mut c = server.client();
    let out = server.bench(&["-3", "-n", "1000", "-c", "4", "-P", "10", "SUBSCRIBE", "ch"]);
    out.assert_success();
    assert_eq!(out.completed(), 1000);
    assert_eq!(c.calls("subscribe"), 1000);
    assert!(
        report_count(&out, "other push messages").is_none(),
        "{}",
        out.stdout
    );
    // The same through a pipeline big enough that replies straddle reads, with both kinds of
    // unsubscribe reply mixed in (one channel each).
    let out = server.bench(&[
        "-3",
        "-n",
        "60000",
        "-c",
        "2",
        "-P",
        "500",
        "-q",
        "--",
        "SSUBSCRIBE",
        "s",
        ";",
        "PSUBSCRIBE",
        "p*",
        ";",
        "PUNSUBSCRIBE",
        "p*",
    ]);
    out.assert_success();
    assert_eq!(
        c.calls("ssubscribe") + c.calls("psubscribe") + c.calls("punsubscribe"),
        60000
    );
}

#[test]
fn published_messages_are_counted_and_never_taken_for_replies() {
    let server = Server::start();
    let w = writer(&server, UNITS, |c| {
        assert_eq!(c.int(&["PUBLISH", "news", "hello"]), 1, "one subscriber");
    });
    let n = (3 * UNITS).to_string();
    let out = server.bench(&[
        "-3",
        "-c",
        "1",
        "-n",
        &n,
        "--",
        "SUBSCRIBE",
        "news",
        ";",
        "LPUSH",
        "ready",
        "1",
        ";",
        "BLPOP",
        "go",
        "5",
    ]);
    assert_eq!(w.join().expect("writer"), UNITS);
    out.assert_success();
    assert_eq!(out.completed(), 3 * UNITS as u64);
    assert_eq!(
        report_count(&out, "pub/sub messages"),
        Some(UNITS as u64),
        "{}",
        out.stdout
    );
}

#[test]
fn subscribed_connections_differ_between_resp2_and_resp3() {
    let server = Server::start();
    // RESP2: after SUBSCRIBE only (un)subscribe/PING/QUIT/RESET are allowed; -e counts the rest.
    let out = server.bench(&[
        "-e",
        "-c",
        "1",
        "-n",
        "100",
        "--",
        "SUBSCRIBE",
        "ch",
        ";",
        "GET",
        "k",
    ]);
    out.assert_success();
    assert_eq!(out.completed(), 50);
    assert!(out.stdout.contains("error replies: 50"), "{}", out.stdout);
    assert!(
        out.stderr.contains("without -3, messages published"),
        "{}",
        out.stderr
    );
    // RESP3: the same connection may run anything; the subscribe replies are pushes.
    let out = server.bench(&[
        "-3",
        "-e",
        "-c",
        "1",
        "-n",
        "100",
        "--",
        "SUBSCRIBE",
        "ch",
        ";",
        "GET",
        "k",
    ]);
    out.assert_success();
    assert_eq!(out.completed(), 100);
    assert!(!out.stdout.contains("error replies"), "{}", out.stdout);
}

#[test]
fn multi_channel_subscriptions_are_refused() {
    let server = Server::start();
    let mut c = server.client();
    let out = server.bench(&["-3", "-n", "10", "SUBSCRIBE", "a", "b"]);
    out.assert_code(2);
    let line = out.single_stderr_line();
    assert!(
        line.contains("SUBSCRIBE with 2 arguments gets 2 replies"),
        "{line}"
    );
    let out = server.bench(&["-3", "-n", "10", "UNSUBSCRIBE"]);
    out.assert_code(2);
    assert_eq!(c.calls("subscribe") + c.calls("unsubscribe"), 0);
}

// ---------------------------------------------------------------------------------------------
// Pushes split across reads

/// A TCP proxy to `upstream` that forwards server bytes to the client one at a time (each in
/// its own segment, with a pause), so the client reads replies and pushes in pieces split at
/// every possible byte. Client bytes go through unchanged. Stops with the returned flag.
fn dribbling_proxy(upstream: u16) -> (u16, Arc<AtomicBool>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let handle = thread::spawn(move || {
        let mut pipes = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !stopped.load(Ordering::Relaxed) && Instant::now() < deadline {
            match listener.accept() {
                Ok((client, _)) => {
                    client.set_nonblocking(false).expect("blocking");
                    let server = TcpStream::connect(("127.0.0.1", upstream)).expect("upstream");
                    client.set_nodelay(true).expect("nodelay");
                    pipes.push(pipe(
                        client.try_clone().unwrap(),
                        server.try_clone().unwrap(),
                        None,
                    ));
                    pipes.push(pipe(server, client, Some(Duration::from_micros(50))));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("proxy accept: {e}"),
            }
        }
        for p in pipes {
            let _ = p.join();
        }
    });
    (port, stop, handle)
}

/// Copies `from` to `to` until either side closes; with `pause`, one byte per write.
fn pipe(mut from: TcpStream, mut to: TcpStream, pause: Option<Duration>) -> JoinHandle<()> {
    thread::spawn(move || {
        let _ = from.set_read_timeout(Some(Duration::from_secs(30)));
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let ok = match pause {
                None => to.write_all(&buf[..n]).is_ok(),
                Some(p) => buf[..n].iter().all(|b| {
                    thread::sleep(p);
                    to.write_all(std::slice::from_ref(b)).is_ok()
                }),
            };
            if !ok {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    })
}

#[test]
fn pushes_split_at_every_byte_are_still_classified() {
    let server = Server::start();
    let (proxy, stop, proxy_thread) = dribbling_proxy(server.port());
    let keys: Vec<String> = (0..4).map(|k| format!("key:{k:012}")).collect();
    let units = 20;
    let w = writer(&server, units, move |c| {
        for k in &keys {
            c.ok(&["SET", k, "changed"]);
        }
        assert_eq!(c.int(&["PUBLISH", "news", "x"]), 1);
    });
    let n = (5 * units).to_string();
    let port = proxy.to_string();
    let out = crate::harness::run_respbench(
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-3",
            "--enable-tracking",
            "-c",
            "1",
            "-n",
            &n,
            "-r",
            "4",
            "--",
            "SUBSCRIBE",
            "news",
            ";",
            "GET",
            "key:__rand_int__",
            ";",
            "SUBSCRIBE",
            "news",
            ";",
            "LPUSH",
            "ready",
            "1",
            ";",
            "BLPOP",
            "go",
            "5",
        ]
        .map(String::from),
        None,
    );
    stop.store(true, Ordering::Relaxed);
    assert_eq!(w.join().expect("writer"), units);
    proxy_thread.join().expect("proxy");
    out.assert_success();
    assert_eq!(out.completed(), 5 * units as u64);
    assert_eq!(
        report_count(&out, "invalidation messages"),
        Some(units as u64)
    );
    assert_eq!(report_count(&out, "pub/sub messages"), Some(units as u64));
}

/// Invalidations per second: a connection that reads and writes the same ten keys under
/// `--enable-tracking` is sent one for each tracked key it changes; the record's timeline
/// carries them second by second, and they add up to the test's count. `compare` against a run
/// whose hot set moves (`--key-drift`) shows both runs' invalidations per second and the drift.
fn invalidations_per_second_add_up(server: &Server) {
    let dir = crate::harness::TempDir::new();
    let json = dir.path().join("run.json");
    let out = server.bench(&[
        "-3",
        "--enable-tracking",
        "-c",
        "1",
        "--duration",
        "2.5",
        "-r",
        "10",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--",
        "GET",
        "key:__rand_int__",
        ";",
        "SET",
        "key:__rand_int__",
        "x",
    ]);
    out.assert_success();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let test = &record["tests"][0];
    let total = test["pushes"]["invalidations"].as_u64().unwrap();
    let per_second: Vec<u64> = test["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["invalidations"].as_u64().unwrap_or(0))
        .collect();
    assert!(total > 0, "no invalidations: {}", out.stdout);
    assert_eq!(per_second.iter().sum::<u64>(), total, "{per_second:?}");
    assert!(
        per_second.iter().filter(|&&n| n > 0).count() >= 2,
        "{per_second:?}"
    );
    // Against a run whose hot set moves: `compare` names the drift among what differs, and
    // prints the invalidations per second of each beside it.
    let drift = dir.path().join("drift.json");
    server
        .bench(&[
            "-3",
            "--enable-tracking",
            "-c",
            "1",
            "--duration",
            "1.5",
            "-r",
            "10",
            "--key-drift",
            "hot:5:0.5",
            "-q",
            "--json",
            drift.to_str().unwrap(),
            "--",
            "GET",
            "key:__rand_int__",
            ";",
            "SET",
            "key:__rand_int__",
            "x",
        ])
        .assert_success();
    let out = crate::harness::respbench(&[
        "compare",
        json.to_str().unwrap(),
        drift.to_str().unwrap(),
        "--label",
        "still",
        "--label",
        "moving",
    ]);
    out.assert_success();
    let text = &out.stdout;
    assert!(
        text.lines()
            .any(|l| l.trim() == "--key-drift: none (still), hot:5:0.5 (moving)"),
        "{text}"
    );
    let rows: Vec<Vec<&str>> = text[text.find("\nInvalidations (").expect("the table")..]
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    // The test's name has spaces: the cells after the side's label are the drift, the count,
    // per second and the busiest second.
    let after = |label: &str| -> Vec<&str> {
        let row = rows.iter().find(|r| r.contains(&label)).expect("a row");
        let at = row.iter().position(|c| *c == label).expect("the label");
        row[at + 1..].to_vec()
    };
    let still = after("still");
    assert_eq!(still[..2], ["none", total.to_string().as_str()], "{text}");
    let per_s: f64 = still[2].parse().expect("per second");
    assert!(per_s > 0.0, "{text}");
    assert_eq!(after("moving")[0], "hot:5:0.5", "{text}");
}

#[test]
fn invalidations_per_second_add_up_on_valkey_and_redis() {
    invalidations_per_second_add_up(&Server::start_valkey());
    invalidations_per_second_add_up(&Server::start());
}
