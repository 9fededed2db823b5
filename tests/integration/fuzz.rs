//! `--fuzz` against Valkey 9.1 and Redis 7.0 (the server survives, respbench does too, the same
//! seed gives the same streams), and against a scripted fake server (`fuzz_crash_server.py`) that
//! crashes only on a sequence — command A on one client, then B on another, ~50,000 commands
//! later — which the fuzzer must find and the reducer cut down to a reproducer that crashes it
//! again.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use respbench::trace::{Entry, Payload, Reader};

use crate::harness::{
    Client, Output, Running, Server, TempDir, free_port, respbench, run_respbench, wait_until,
};

/// The fake server's script.
const FAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/integration/fuzz_crash_server.py"
);

fn fuzz(server: &Server, extra: &[&str]) -> Output {
    let mut args = vec!["--fuzz", "--fuzz-loglevel", "error"];
    args.extend_from_slice(extra);
    server.bench(&args)
}

fn entries(path: &Path) -> Vec<Entry> {
    let mut r = Reader::open(path).expect("open trace");
    let mut out = Vec::new();
    loop {
        let mut e = Entry::empty();
        if !r.next_into(&mut e).expect("read trace") {
            return out;
        }
        out.push(e);
    }
}

/// A fuzz run in `modes`: it finishes, the server still answers, commands of many kinds reached
/// it, and the record (checked by the independent checker) holds the fuzz block.
fn survives(server: Server, modes: &str) {
    let dir = TempDir::new();
    let json = dir.path().join("run.json");
    let out = fuzz(
        &server,
        &[
            "-c",
            "4",
            "-n",
            "4000",
            "-r",
            "100",
            "--seed",
            "5",
            "--fuzz-mode",
            modes,
            "--json",
            json.to_str().unwrap(),
            // Its counters are what this test reads (and --fuzz-exclude takes subcommands).
            "--fuzz-exclude",
            "config|resetstat",
        ],
    );
    out.assert_success()
        .assert_stdout_contains(
            "Running fuzzer with 4 clients, 1000 commands per client (4000 total commands)",
        )
        .assert_stdout_contains("Fuzz seed: 5")
        .assert_stdout_contains("Server: survived");
    let mut c = server.client();
    assert_eq!(
        c.cmd(&["PING"]),
        resp::Value::SimpleString(b"PONG".to_vec())
    );
    // Commands of many kinds reached the server (its own table, not a fixed list).
    let stats = c.info("commandstats");
    assert!(
        stats.lines().filter(|l| l.starts_with("cmdstat_")).count() > 40,
        "{stats}"
    );
    // Nothing of the never-send list did.
    for never in [
        "cmdstat_shutdown",
        "cmdstat_flushall",
        "cmdstat_debug",
        "cmdstat_monitor",
    ] {
        assert!(!stats.contains(never), "{never} was sent");
    }
    crate::record::check_with_python(&json);
    let doc: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let f = &doc["fuzz"];
    assert_eq!(f["seed"], 5);
    assert_eq!(f["commands_sent"], 4000);
    assert_eq!(f["verdict"], "survived");
    assert!(f["commands_in_table"].as_u64().unwrap() > 150, "{f}");
    assert!(f["errors_by_kind"]["ERR"].as_u64().unwrap() > 0, "{f}");
}

#[test]
fn fuzz_valkey_survives_every_mode() {
    survives(Server::start_valkey(), "malformed-commands,config-commands");
}

#[test]
fn fuzz_redis_survives_every_mode() {
    survives(Server::start(), "malformed-commands,config-commands");
}

#[test]
fn fuzz_same_seed_same_streams() {
    let server = Server::start_valkey();
    let (a, b) = (TempDir::new(), TempDir::new());
    for dir in [&a, &b] {
        let d = dir.path().join("log");
        fuzz(
            &server,
            &[
                "-c",
                "3",
                "-n",
                "1500",
                "--seed",
                "42",
                "--fuzz-mode",
                "malformed-commands",
                "--fuzz-log",
                d.to_str().unwrap(),
            ],
        )
        .assert_success();
    }
    for i in 1..=3 {
        let name = format!("log/client-{i}.resp");
        let (x, y) = (
            fs::read(a.path().join(&name)).unwrap(),
            fs::read(b.path().join(&name)).unwrap(),
        );
        assert!(x.len() > 10_000, "client {i} wrote {} bytes", x.len());
        assert!(
            x == y,
            "client {i}'s stream differs between two runs of one seed"
        );
    }
    // The trace holds every entry, numbered in order, raw framing included.
    let log = entries(&a.path().join("log/fuzz.trace"));
    assert_eq!(log.len(), 1500);
    assert!(log.windows(2).all(|w| w[1].seq == w[0].seq + 1));
    assert!(log.iter().any(|e| matches!(e.payload, Payload::Raw(_))));
    let other = a.path().join("other");
    fuzz(
        &server,
        &[
            "-c",
            "3",
            "-n",
            "1500",
            "--seed",
            "43",
            "--fuzz-log",
            other.to_str().unwrap(),
        ],
    )
    .assert_success();
    assert_ne!(
        fs::read(other.join("client-1.resp")).unwrap(),
        fs::read(a.path().join("log/client-1.resp")).unwrap()
    );
}

#[test]
fn fuzz_bad_mode_is_the_reference_message() {
    let out = respbench(&["--fuzz", "--fuzz-mode", "aggressive"]);
    out.assert_code(2);
    assert_eq!(
        out.single_stderr_line(),
        "respbench: Invalid fuzz mode: aggressive"
    );
}

/// Starts the fake server on `port` with these arguments and waits for it.
fn start_fake_with(port: u16, extra: &[String]) -> Child {
    let mut cmd = Command::new(python());
    cmd.arg(FAKE).arg(port.to_string()).args(extra);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = cmd.spawn().expect("python3");
    assert!(wait_until(Duration::from_secs(10), || Client::try_connect(
        port
    )
    .is_ok()));
    child
}

/// Starts the fake server on `port` (crashing on `a` then `b` if given). It runs on, reaped in
/// the background: it stops by SHUTDOWN, by crashing, or on its own when idle.
fn start_fake(port: u16, crash: Option<(&[u8], &[u8])>) {
    let extra: Vec<String> = crash.map(|(a, b)| vec![hex(a), hex(b)]).unwrap_or_default();
    let mut child = start_fake_with(port, &extra);
    std::thread::spawn(move || child.wait());
}

#[test]
fn fuzz_detects_a_hang() {
    let port = free_port();
    let mut fake = start_fake_with(port, &["hang-after".into(), "3000".into()]);
    let out = run_respbench(
        &[
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "--fuzz",
            "-c",
            "2",
            "-n",
            "20000",
            "--fuzz-hang-timeout",
            "1",
            "--fuzz-loglevel",
            "error",
        ]
        .map(String::from),
        None,
    );
    // Our own child, by its handle.
    let _ = fake.kill();
    let _ = fake.wait();
    out.assert_code(1)
        .assert_stdout_contains("Server: HUNG (no reply to PING within 1 s)");
    assert!(
        out.stderr.contains("fuzz: the server hung"),
        "{}",
        out.stderr
    );
    // Each client's last command is reported with its place in the log.
    assert!(out.stdout.contains("last sent by c1 (#"), "{}", out.stdout);
}

/// The Python interpreter itself, not a version manager's shim (pyenv's adds half a second to
/// every start, and the reducer restarts the fake server dozens of times).
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Writes a command without waiting for its reply (a crash or SHUTDOWN sends none).
fn send_only(s: &mut TcpStream, args: &[Vec<u8>]) {
    let mut buf = Vec::new();
    resp::encode_command(&mut buf, args);
    s.write_all(&buf).unwrap();
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn line(e: &Entry) -> Vec<u8> {
    e.args().expect("a command").join(&b' ')
}

/// The first command of `client` at or after the log's entry `seq` whose words occur nowhere
/// else in the log (its last such command when it ended before `seq`).
fn unique_after(log: &[Entry], client: &str, seq: u64) -> Entry {
    let mut count: HashMap<Vec<u8>, usize> = HashMap::new();
    for e in log.iter().filter(|e| e.args().is_some()) {
        *count.entry(line(e)).or_default() += 1;
    }
    let mut unique = log
        .iter()
        .filter(|e| e.client == client && e.args().is_some() && count[&line(e)] == 1);
    let mut last = None;
    for e in unique.by_ref() {
        if e.seq >= seq {
            return e.clone();
        }
        last = Some(e);
    }
    last.expect("a unique command").clone()
}

/// A command of `client` near its `nth` own entry whose words occur nowhere else in the log.
fn unique_near(log: &[Entry], client: &str, nth: usize) -> Entry {
    let mut count: HashMap<Vec<u8>, usize> = HashMap::new();
    for e in log.iter().filter(|e| e.args().is_some()) {
        *count.entry(line(e)).or_default() += 1;
    }
    log.iter()
        .filter(|e| e.client == client)
        .skip(nth)
        .find(|e| e.args().is_some() && count[&line(e)] == 1)
        .expect("a unique command")
        .clone()
}

#[test]
fn fuzz_finds_and_reduces_a_two_client_sequence() {
    let port = free_port();
    let dir = TempDir::new();
    let first = dir.path().join("first");
    let args = |log: &Path| -> Vec<String> {
        [
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "--fuzz",
            "-c",
            "2",
            "-n",
            "60000",
            "-r",
            "1000",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(["--seed", "11", "--fuzz-loglevel", "error", "--fuzz-log"].map(String::from))
        .chain([log.display().to_string()])
        .collect()
    };
    // A first run against a server that never crashes: the streams, to choose A and B from.
    start_fake(port, None);
    run_respbench(&args(&first), None).assert_success();
    send_only(
        &mut TcpStream::connect(("127.0.0.1", port)).unwrap(),
        &[b"SHUTDOWN".to_vec()],
    );
    let log = entries(&first.join("fuzz.trace"));
    let a = unique_near(&log, "c1", 300);
    // B: the other client's first unique command some 45,000 entries after A in the log. Not
    // by its own count: how far the two clients' streams interleave is the scheduler's (one
    // client ran 25,000 commands to the other's 17,600 on a loaded machine), while the point
    // is only that A and B lie tens of thousands of entries apart.
    let b = unique_after(&log, "c2", a.seq + 45_000);
    let apart = b.seq - a.seq;
    assert!(apart > 20_000, "A and B are {apart} entries apart");

    // The same seed against a server that crashes on A (one client) then B (the other).
    assert!(wait_until(Duration::from_secs(5), || Client::try_connect(
        port
    )
    .is_err()));
    let (la, lb) = (line(&a), line(&b));
    start_fake(port, Some((&la, &lb)));
    let restart = format!(
        "python3 {FAKE} {port} {} {} >/dev/null 2>&1 &",
        hex(&la),
        hex(&lb)
    );
    let second = dir.path().join("second");
    let mut run = args(&second);
    run.extend(["--fuzz-restart".to_string(), restart]);
    // The reduction replays the log up to 200 times (its own bound is 300 s): on a busy machine
    // that takes minutes, so the harness's guard against a hang is the reducer's bound, not the
    // 60 s of a plain run. Nothing here asserts how long it took.
    let out = Running::spawn_args(&run).finish(Duration::from_secs(330));
    out.assert_code(1)
        .assert_stdout_contains("Server: CRASHED")
        .assert_stdout_contains("Reproducer: ");
    assert!(
        out.stderr.contains("fuzz: the server crashed"),
        "{}",
        out.stderr
    );

    // The reproducer: A on one client, then B on another, and nothing else.
    let repro = entries(&second.join("repro.trace"));
    let words: Vec<Vec<u8>> = repro.iter().map(line).collect();
    assert!(repro.len() <= 3, "{} entries: {words:?}", repro.len());
    let (ia, ib) = (
        words.iter().position(|w| *w == la).expect("A kept"),
        words.iter().position(|w| *w == lb).expect("B kept"),
    );
    assert!(ia < ib && repro[ia].client != repro[ib].client);

    // It crashes the (restarted) server again: replayed by hand, each client its own connection.
    assert!(wait_until(Duration::from_secs(5), || Client::try_connect(
        port
    )
    .is_ok()));
    let mut conns: HashMap<String, TcpStream> = HashMap::new();
    for e in &repro {
        let c = conns
            .entry(e.client.clone())
            .or_insert_with(|| TcpStream::connect(("127.0.0.1", port)).unwrap());
        send_only(c, e.args().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(wait_until(Duration::from_secs(5), || Client::try_connect(
        port
    )
    .is_err()));
}

/// `--fuzz-loglevel debug`: every reply is logged from the client threads (while the run writes
/// its own lines to the same stdout), and the run still ends.
#[test]
fn fuzz_debug_level_logs_every_reply() {
    let server = Server::start();
    let out = server.bench(&["--fuzz", "-c", "2", "-n", "200", "--fuzz-loglevel", "debug"]);
    out.assert_success();
    let replies = out
        .stdout
        .lines()
        .filter(|l| l.contains("[DEBUG] [Thread "))
        .count();
    assert!(replies >= 190, "{replies} reply lines:\n{}", out.stdout);
    assert!(out.stdout.contains("[INFO ] === FINAL STATISTICS ==="));
}

/// TLS and AUTH as in a benchmark run: the fuzzer's clients and its watch connection go through
/// the run's own connection set-up (Debian's Redis 7.0 has TLS; the Valkey wheel has none), and
/// the password is in no output.
#[test]
fn fuzz_over_tls_with_a_password() {
    use crate::harness::{ServerOptions, ServerTls, TestCerts};
    let certs = TestCerts::new();
    let server = Server::start_with(ServerOptions {
        tls: Some(ServerTls::new(&certs)),
        extra: vec!["--requirepass".into(), "fuzz-Secret-77".into()],
        ..ServerOptions::default()
    });
    let dir = TempDir::new();
    let json = dir.path().join("tls.json");
    let ca = certs.ca.to_str().expect("UTF-8 path");
    let out = server.bench_tls(&[
        "--tls",
        "--cacert",
        ca,
        "-a",
        "fuzz-Secret-77",
        "--fuzz",
        "--fuzz-loglevel",
        "error",
        "-c",
        "2",
        "-n",
        "2000",
        "--seed",
        "3",
        // The fuzzer must not end its own test by changing the password it logs in with.
        "--fuzz-exclude",
        "config|resetstat",
        "--json",
        json.to_str().unwrap(),
    ]);
    out.assert_success()
        .assert_stdout_contains("Server: survived");
    let record = fs::read_to_string(&json).unwrap();
    for text in [&out.stdout, &out.stderr, &record] {
        assert!(
            !text.contains("fuzz-Secret-77"),
            "the password leaked: {text}"
        );
    }
    let doc: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(doc["fuzz"]["commands_sent"], 2000);
    // Commands really went over TLS with the password: the server counted them.
    let mut c = server.client();
    c.ok(&["AUTH", "fuzz-Secret-77"]);
    let calls: u64 = c
        .info("commandstats")
        .lines()
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(calls >= 1000, "the server counted {calls} calls");
}
