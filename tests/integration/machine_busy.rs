//! The machine-busy verdict against real servers (Valkey 9.1 and Redis 7.0): a CPU hog pinned
//! with `taskset` beside the server and respbench reads machine-busy, with the deciding figure
//! warned on stderr; `--threads` above the core count on an otherwise idle machine does not read
//! machine-busy from respbench's own threads waiting for each other; a respbench pinned beside
//! a hog (`taskset`) at sub-second tests is machine-busy on its own core, summed up on stderr at
//! the run's end.

use std::process::{Child, Command};

use serde_json::Value;

use crate::harness::{Output, Server};
use crate::record::{bench_json, first_allowed_cpu, pin_this_thread};

/// A CPU hog pinned to one CPU: bounded in time by itself (30 s, or as given) and killed by its
/// PID when dropped (also when the test panics). `taskset` execs it, so the PID is the hog's.
/// Also the A/B tests' load (`ab.rs`).
pub(crate) struct Hog(Child);

impl Hog {
    fn on(cpu: usize) -> Hog {
        Hog::lasting(cpu, 30)
    }

    pub(crate) fn lasting(cpu: usize, secs: u32) -> Hog {
        let child = Command::new("taskset")
            .args(["-c", &cpu.to_string(), "python3", "-c"])
            .arg(format!(
                "import time\nend = time.time() + {secs}\nwhile time.time() < end: pass"
            ))
            .spawn()
            .expect("taskset and python3 run");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a server and runs respbench with the hog, all three on one CPU: neither the server
/// nor respbench can come near a full core (the hog takes its fair share), and both wait for
/// the CPU, so the test was the machine's.
fn hog_beside_the_test(start: fn() -> Server) -> (Output, Value) {
    let cpu = first_allowed_cpu();
    let _hog = Hog::on(cpu);
    let old = pin_this_thread(cpu);
    // The server and respbench inherit this thread's single-CPU mask.
    let server = start();
    let (out, record, _, _dir) = bench_json(&server, &["-c", "8", "--duration", "2", "-t", "get"]);
    // SAFETY: restores the mask read above on this same thread.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old);
    }
    (out, record)
}

fn a_hog_beside_the_test_is_machine_busy_and_warned(start: fn() -> Server) {
    let (out, r) = hog_beside_the_test(start);
    out.assert_success();
    let t = &r["tests"][0];
    assert_eq!(t["verdict"]["kind"], "machine-busy", "{t}");
    let reason = t["verdict"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("the machine was busy"), "{reason}");
    // The warning carries the figure that decided it, whatever the format.
    let line = format!("WARNING: GET: {reason}");
    out.assert_stderr_contains(&line);
    assert!(
        ["waited for a CPU", "CPU pressure", "other processes took"]
            .iter()
            .any(|f| line.contains(f)),
        "names its figure: {line}"
    );
    out.assert_stdout_contains("limited by: machine-busy (the machine was busy");
}

#[test]
fn machine_busy_valkey_with_a_hog_on_its_cpu_is_warned_on_stderr() {
    a_hog_beside_the_test_is_machine_busy_and_warned(Server::start_valkey);
}

#[test]
fn machine_busy_redis_with_a_hog_on_its_cpu_is_warned_on_stderr() {
    a_hog_beside_the_test_is_machine_busy_and_warned(Server::start);
}

/// The trial's `taskset -c 1 respbench` with a CPU hog on that CPU and the server free to run
/// elsewhere, at sub-second tests (`-q`, 0.6 s each): the record reads the machine's cores and
/// the one respbench may use apart (the trial's "CPUs 200% busy (1 cores)"), each test is
/// machine-busy on respbench's own core, and the run ends with one stderr line summing the
/// sub-second tests up, while `-q`'s stdout keeps the reference's lines only.
fn a_pinned_respbench_beside_a_hog_is_summed_up(start: fn() -> Server) {
    let server = start();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = first_allowed_cpu();
    let _hog = Hog::on(cpu);
    let old = pin_this_thread(cpu);
    // respbench inherits this thread's single-CPU mask; the server was started before.
    let (out, r, _, _dir) = bench_json(
        &server,
        &["-c", "8", "--duration", "0.6", "-t", "get,set", "-q"],
    );
    // SAFETY: restores the mask read above on this same thread.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old);
    }
    out.assert_success();
    let tests = r["tests"].as_array().unwrap();
    let mut busy = 0;
    for t in tests {
        let m = &t["machine"];
        assert_eq!(m["respbench_cores"], 1, "{m}");
        assert!(
            m["cores"].as_u64().unwrap() as usize >= cores,
            "the machine's cores, not respbench's: {m}"
        );
        assert!(
            m["busy_pct"].as_f64().unwrap() <= 100.5,
            "a share of the machine: {m}"
        );
        assert_eq!(t["verdict"]["kind"], "machine-busy", "{t}");
        if t["duration_s"].as_f64().unwrap() < 1.0 {
            busy += 1;
        }
    }
    // A crawling machine may stretch a test past a second: it is then warned about alone.
    let summary =
        format!("WARNING: {busy} of {busy} tests shorter than 1 s: the machine was busy (");
    if busy == tests.len() {
        out.assert_stderr_contains(&summary);
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with(&summary))
            .unwrap();
        assert!(line.contains("worst thread waited for a CPU"), "{line}");
        assert_eq!(
            out.stderr_but_machine_busy(),
            "",
            "the harness's filter knows the line"
        );
    }
    assert!(!out.stdout.contains("WARNING"), "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(
        lines[0].starts_with("SET: ") && lines[1].starts_with("GET: "),
        "{}",
        out.stdout
    );
    assert_eq!(lines[2], "");
}

#[test]
fn machine_busy_valkey_pinned_beside_a_hog_sub_second_tests_are_summed_up() {
    a_pinned_respbench_beside_a_hog_is_summed_up(Server::start_valkey);
}

#[test]
fn machine_busy_redis_pinned_beside_a_hog_sub_second_tests_are_summed_up() {
    a_pinned_respbench_beside_a_hog_is_summed_up(Server::start);
}

/// `--threads` at twice the cores (at least 4) against a server with nothing else to do: the
/// threads wait for each other, and that is not a busy machine. Another process's real load (this
/// machine may be shared while the tests run) is allowed to read machine-busy, but then the
/// record must show other processes' CPU; respbench's own waits never do.
fn own_threads_are_not_a_busy_machine(start: fn() -> Server) {
    let server = start();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = (2 * cores).max(4).to_string();
    let (out, r, _, _dir) = bench_json(
        &server,
        &[
            "--threads",
            &threads,
            "-c",
            "16",
            "--duration",
            "2",
            "-t",
            "get",
        ],
    );
    out.assert_success();
    let t = &r["tests"][0];
    let waits = t["client_threads_runqueue_pct"].as_array().unwrap();
    assert_eq!(waits.len().to_string(), threads, "every thread's wait: {t}");
    if t["verdict"]["kind"] == "machine-busy" {
        // Only other processes' load (the tests running beside this one) may make it so: a
        // thread waits only for a CPU someone else holds, so others' CPU plus steal must be
        // able to explain the 10% wait the verdict needs.
        let others = t["machine"]["others_cpu_pct"].as_f64().unwrap_or(0.0);
        let steal = t["machine"]["steal_pct"].as_f64().unwrap_or(0.0);
        let cores = t["machine"]["cores"].as_f64().unwrap_or(1.0);
        assert!(
            others + steal * cores >= respbench::verdict::STARVED_PCT || steal >= 5.0,
            "machine-busy from respbench's own threads: {t}"
        );
    }
}

#[test]
fn machine_busy_not_from_respbench_own_threads_valkey() {
    own_threads_are_not_a_busy_machine(Server::start_valkey);
}

#[test]
fn machine_busy_not_from_respbench_own_threads_redis() {
    own_threads_are_not_a_busy_machine(Server::start);
}
