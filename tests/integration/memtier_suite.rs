//! What memtier's own test suite (`tests/*.py` at memtier 2f74d61, `bench/memtier-suite.sh`)
//! reads from memtier_benchmark, checked here against respbench in memtier mode with real
//! servers (Redis 7.0 and Valkey 9.1): the crash report a SIGSEGV brings
//! (`test_crash_handler_integration.py`) and each row's per-second `Time-Serie` in the JSON
//! (`test_monitor_input.py`, `test_client_staircase.py`). Cluster mode's MOVED/ASK columns are
//! `cluster/memtier.rs`'s.

use std::time::{Duration, Instant};

use super::harness::{Running, Server, ServerOptions, TempDir, run_memtier};

/// Waits (bounded) until `server` has `n` clients whose last command was load (`set`/`get`):
/// each connection's worker is running then (connections open before their workers start, and
/// a worker notes its state for the report as it starts).
fn wait_for_load_clients(server: &Server, n: usize) {
    let mut c = server.client();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let list = c.bulk(&["CLIENT", "LIST"]).unwrap_or_default();
        let loaded = String::from_utf8_lossy(&list)
            .lines()
            .filter(|l| l.contains(" cmd=set ") || l.contains(" cmd=get "))
            .count();
        if loaded >= n {
            return;
        }
        assert!(Instant::now() < until, "{n} load clients never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A worker thread of `pid` (its kernel thread id), found by name in `/proc`.
fn worker_tid(pid: u32) -> i32 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(|t| {
            let t = t.ok()?.path();
            let comm = std::fs::read_to_string(t.join("comm")).ok()?;
            comm.starts_with("respbench-worke")
                .then(|| t.file_name()?.to_str()?.parse().ok())?
        })
        .next()
        .expect("a worker thread")
}

/// The report's client lines (memtier's `thread=… client=… conn=… addr=… state=… pending=…`).
fn client_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("thread=") && l.contains("client="))
        .collect()
}

/// memtier's suite sends SIGSEGV to the process and to a worker thread 5 s into a 60 s run of
/// 2 threads × 2 clients with `--pipeline=10`, and reads the report's markers, sections and
/// client lines: respbench writes them (the signal's number and how it came, each worker
/// thread, the command line with the password redacted, each connection connected with its
/// batch's pending replies) and then ends by the signal, as memtier does.
#[test]
fn sigsegv_writes_memtiers_crash_report_and_ends_by_the_signal() {
    let opts = |kind| ServerOptions {
        password: Some("crash-secret-pw".into()),
        kind,
        ..ServerOptions::default()
    };
    let servers = [
        Server::start_with(opts(Default::default())),
        Server::start_with(opts(super::harness::ServerKind::Valkey)),
    ];
    for (server, to_thread) in servers.iter().zip([false, true]) {
        let port = server.port().to_string();
        #[rustfmt::skip]
        let args = ["memtier", "-s", "127.0.0.1", "-p", &port, "-a", "crash-secret-pw",
            "-t", "2", "-c", "2", "--test-time=60", "--pipeline=10", "--hide-histogram"];
        let run = Running::spawn_args(&args.map(String::from));
        wait_for_load_clients(server, 4);
        if to_thread {
            let tid = worker_tid(run.pid());
            // SAFETY: tgkill with our child's PID (not reaped: `run` owns it) and one of its
            // threads.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_tgkill,
                    run.pid() as libc::pid_t,
                    tid,
                    libc::SIGSEGV,
                )
            };
            assert_eq!(rc, 0);
        } else {
            run.signal(libc::SIGSEGV);
        }
        let out = run.finish(Duration::from_secs(30));
        assert_eq!(out.code, None, "ended by the signal\n{}", out.stderr);
        let err = &out.stderr;
        for needle in [
            "=== MEMTIER_BENCHMARK BUG REPORT START",
            "memtier_benchmark crashed by signal: 11",
            "Crashed running signal <SIGSEGV>",
            "Sent by a process (kill)",
            "--- STACK TRACE (all threads)",
            "(current/crashing thread)",
            "(worker thread",
            "--- INFO OUTPUT",
            "command_line:",
            "--- CLIENT LIST OUTPUT",
            "=== MEMTIER_BENCHMARK BUG REPORT END",
        ] {
            assert!(err.contains(needle), "{needle:?} missing from\n{err}");
        }
        assert!(
            !err.contains("crash-secret-pw"),
            "the password leaked\n{err}"
        );
        let lines = client_lines(err);
        assert_eq!(lines.len(), 4, "one line per connection\n{err}");
        for (i, l) in lines.iter().enumerate() {
            let want = format!(
                "thread={} client={} conn=0 addr=127.0.0.1:{port}",
                i / 2,
                i % 2
            );
            assert!(l.contains(&want), "{l:?} lacks {want:?}");
            assert!(
                l.contains("state=connected") && l.contains("pending="),
                "{l}"
            );
        }
        if to_thread {
            assert!(err.contains("(this is worker thread"), "{err}");
        }
    }
}

/// `respbench memtier -s 127.0.0.1 -p PORT --hide-histogram args… --json-out-file F`: stdout
/// and the JSON.
fn memtier_json(server: &Server, args: &[&str]) -> (String, serde_json::Value) {
    let dir = TempDir::new();
    let json = dir.path().join("mb.json");
    let mut all = args.to_vec();
    let out_arg = format!("--json-out-file={}", json.display());
    all.push(&out_arg);
    let out = run_memtier(server, &all);
    out.assert_success();
    let text = std::fs::read_to_string(&json).unwrap();
    (out.stdout, serde_json::from_str(&text).unwrap())
}

/// A row's `Time-Serie` summed: its count and bytes written; and every second with requests
/// has a positive average latency and its percentiles.
fn series_sums(row: &serde_json::Value) -> (u64, u64) {
    let ts = row["Time-Serie"].as_object().expect("a Time-Serie");
    assert!(!ts.is_empty(), "{row}");
    let mut sums = (0, 0);
    for (second, s) in ts {
        let count = s["Count"].as_u64().unwrap();
        sums.0 += count;
        sums.1 += s["Bytes TX"].as_u64().unwrap();
        if count > 0 {
            let avg = s["Average Latency"].as_f64().unwrap();
            assert!(avg > 0.0, "second {second}: {s}");
            assert!(s["p50.00"].is_number() && s["p99.00"].is_number(), "{s}");
        }
    }
    sums
}

/// `test_command_stats_breakdown_by_command`'s line (two SET lines, two GET lines, the default
/// breakdown by command): one `Sets` and one `Gets` row; the Totals' per-second `Time-Serie`
/// adds up to the rows' counts and the server's calls, each busy second with its average
/// latency (real memtier 2f74d61 writes `Count`, `Bytes RX`, `Bytes TX`, `Average Latency` per
/// second as here). The command rows' series stay empty (docs/memtier.md says why).
#[test]
fn totals_time_serie_adds_up_to_the_rows_and_the_servers_calls() {
    for server in [Server::start(), Server::start_valkey()] {
        #[rustfmt::skip]
        let (stdout, json) = memtier_json(&server, &["-t", "2", "-c", "2", "-n", "100",
            "--command=SET __key__ __data__", "--command=SET __key__ __data__",
            "--command=GET __key__", "--command=GET __key__"]);
        let starts = |w: &str| stdout.lines().filter(|l| l.starts_with(w)).count();
        assert_eq!((starts("Sets"), starts("Gets")), (1, 1), "{stdout}");
        let all = &json["ALL STATS"];
        let mut c = server.client();
        for (row, command) in [("Sets", "set"), ("Gets", "get")] {
            assert_eq!(
                all[row]["Count"], 200,
                "{row}: 4 clients × 100 requests, half each"
            );
            assert_eq!(c.calls(command), 200);
            assert_eq!(all[row]["Time-Serie"], serde_json::json!({}));
        }
        let (count, tx) = series_sums(&all["Totals"]);
        assert_eq!(count, 400);
        // A SET is 3 arguments, a GET 2: each written at least its command's bytes.
        assert!(tx > 400 * 20, "{tx} bytes written");
    }
}

/// `test_staircase_timeserie_aligned_with_active_clients`: the Totals' `Time-Serie` and the
/// `Active Clients` section have the same seconds, and each second's requests carry their
/// average latency.
#[test]
fn staircase_time_serie_has_active_clients_seconds_and_averages() {
    let server = Server::start_valkey();
    #[rustfmt::skip]
    let (_, json) = memtier_json(&server, &["-t", "2", "-c", "4", "--clients-start=2",
        "--clients-step=2", "--step-duration=1", "--test-time=3", "--ratio=1:1"]);
    let all = &json["ALL STATS"];
    let ts = all["Totals"]["Time-Serie"].as_object().unwrap();
    let ac = all["Active Clients"].as_object().unwrap();
    let keys =
        |m: &serde_json::Map<String, serde_json::Value>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(ts), keys(ac));
    let (count, _) = series_sums(&all["Totals"]);
    assert_eq!(Some(count), all["Totals"]["Count"].as_u64());
}
