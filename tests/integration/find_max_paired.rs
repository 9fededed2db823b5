//! Issue 36's done-when for `--find-max` against a real Valkey: every request an `EVAL` of a busy
//! loop of known cost (`find_max::calibrate`), the server pinned to one CPU and respbench to
//! another, two `--find-max 'p99<20ms'` searches with the server's closed-loop capacity measured
//! before, between and after them. The boundary is decided from the two neighbouring rates run
//! alternately (`slo::pairs`), and the record carries that comparison.
//!
//! What a correct build guarantees whatever the machine does, and so what is asserted: a search
//! either answers — inside [0.5, 1.1] × the capacity measured around it, from a boundary of at
//! least three alternating pairs — or says it cannot ("too noisy", "no throughput meets", with
//! no number); two answers taken while the capacity held still (its readings within 20% of each
//! other) agree within 20%. On a machine whose capacity moves between the readings (CPU hogs and
//! other builds on both cores) the agreement is printed, not asserted: no build can make two
//! runs on two different machines agree.

use serde_json::Value;

use crate::find_max::{bench_json, busy_script, calibrate};
use crate::harness::Server;
use crate::record::pin_this_thread;

/// The CPUs this thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain bits; sched_getaffinity writes one valid set of the size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Restores this thread's CPU mask (from `pin_this_thread`).
fn restore(old: &libc::cpu_set_t) {
    // SAFETY: sets this thread's mask to one read from it before.
    unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), old);
    }
}

/// The server's closed-loop throughput over one second of the busy loop at `-c 16`.
fn capacity(server: &Server, script: &str) -> f64 {
    let (out, r, _dir) = bench_json(
        server,
        &["-c", "16", "--duration", "1", "eval", script, "0"],
    );
    out.assert_success();
    let rps = r["tests"][0]["throughput_rps"].as_f64().unwrap_or(0.0);
    assert!(rps > 0.0, "no closed-loop throughput: {}", out.stdout);
    rps
}

/// One search from `start` req/s (a quarter of the capacity just measured, as the search's own
/// probe would start: a one-second probe on a machine that froze the server for that second
/// completes no request, and the run ends there with exit 1): its record's `find_max` block and
/// its last line.
fn search(server: &Server, script: &str, start: f64) -> (Value, String) {
    let start = ((start / 4.0).round() as u64).max(1).to_string();
    let (out, r, _dir) = bench_json(
        server,
        &[
            "--rps",
            &start,
            "-c",
            "16",
            "--find-max",
            "p99<20ms",
            "--step-duration",
            "0.5",
            "--warmup",
            "0.25",
            "eval",
            script,
            "0",
        ],
    );
    out.assert_success();
    let last = out.stdout.lines().rfind(|l| !l.is_empty()).unwrap_or("");
    eprintln!("{}", out.stdout);
    (r["find_max"].clone(), last.to_string())
}

/// What a search said: `Some(answer)` when it answered; `None` after checking that it said why
/// not, with no number.
fn answered(fm: &Value, line: &str, around: (f64, f64)) -> Option<f64> {
    match fm["end"].as_str() {
        Some("converged") => {}
        Some("too-noisy") => {
            assert!(fm["answer_rps"].is_null(), "{fm}");
            assert!(
                line.starts_with("too noisy to answer p99 < 20 ms"),
                "{line}"
            );
            return None;
        }
        Some("never-met") => {
            assert!(
                line.starts_with("no throughput meets p99 < 20 ms"),
                "{line}"
            );
            return None;
        }
        // The window budget: the best so far, not an answer.
        Some("window-limit") => return None,
        other => panic!("the search ended {other:?}: {line}"),
    }
    let answer = fm["answer_rps"]
        .as_f64()
        .expect("a converged search answers");
    // The boundary was decided from alternating windows at its two rates, and the answer is the
    // lower one's.
    let b = &fm["boundary"];
    assert!(b["pairs"].as_u64().unwrap_or(0) >= 3, "{fm}");
    let (low, high) = (
        b["low_rps"].as_u64().unwrap(),
        b["high_rps"].as_u64().unwrap(),
    );
    assert!(low < high && high as f64 <= low as f64 * 1.06, "{b}");
    let steps = fm["steps"].as_array().unwrap();
    let at = |rate: u64| -> Vec<usize> {
        (0..steps.len())
            .filter(|&i| steps[i]["offered_rps"].as_u64() == Some(rate))
            .collect()
    };
    // The last three rounds at the two rates: one window at each, never two at one in a row.
    let mut both: Vec<usize> = at(low).into_iter().chain(at(high)).collect();
    both.sort_unstable();
    let tail = &both[both.len() - 6..];
    for pair in tail.chunks(2) {
        assert_ne!(
            steps[pair[0]]["offered_rps"], steps[pair[1]]["offered_rps"],
            "{fm}"
        );
    }
    let interval = b["interval"]
        .as_array()
        .expect("three pairs give an interval");
    assert!(line.contains("run alternately in"), "{line}");
    assert!(
        interval[0].as_f64().unwrap() <= interval[1].as_f64().unwrap(),
        "{b}"
    );
    let (lo, hi) = around;
    assert!(
        answer >= 0.5 * lo && answer <= 1.1 * hi,
        "answered {answer:.0} req/s for a closed-loop capacity of {lo:.0} to {hi:.0}: {line}"
    );
    Some(answer)
}

#[test]
fn two_find_max_runs_against_a_busy_loop_agree_and_sit_under_its_capacity() {
    let cpus = allowed_cpus();
    let (server_cpu, bench_cpu) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
    let old = pin_this_thread(server_cpu);
    // The server inherits this thread's single-CPU mask, respbench the other one's.
    let server = Server::start_valkey();
    restore(&old);
    let mut c = server.client();
    let (n, usec) = calibrate(&mut c);
    let script = busy_script(n);
    let old = pin_this_thread(bench_cpu);
    let cap0 = capacity(&server, &script);
    let (fm1, line1) = search(&server, &script, cap0);
    let cap1 = capacity(&server, &script);
    let (fm2, line2) = search(&server, &script, cap1);
    let cap2 = capacity(&server, &script);
    restore(&old);
    let range = |a: f64, b: f64| (a.min(b), a.max(b));
    eprintln!(
        "busy loop of {n} steps, {usec:.0} µs per call quiet; closed loop {cap0:.0}, {cap1:.0}, \
         {cap2:.0} req/s"
    );
    let a1 = answered(&fm1, &line1, range(cap0, cap1));
    let a2 = answered(&fm2, &line2, range(cap1, cap2));
    let (lo, hi) = (cap0.min(cap1).min(cap2), cap0.max(cap1).max(cap2));
    match (a1, a2) {
        (Some(x), Some(y)) if hi <= 1.2 * lo => assert!(
            x.max(y) <= 1.2 * x.min(y),
            "answers {x:.0} and {y:.0} req/s on a machine whose capacity held at {lo:.0} to \
             {hi:.0}:\n{line1}\n{line2}"
        ),
        (a1, a2) => eprintln!(
            "not compared: answers {a1:?} and {a2:?}, closed-loop capacity {lo:.0} to {hi:.0} \
             req/s"
        ),
    }
}
