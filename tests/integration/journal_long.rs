//! A long run's journal (issue 22's "leave a long run unattended"): a day's journal is gigabytes
//! (each second's line carries its exact histograms, tens of kilobytes), far past the size cap a
//! results file is read whole with. `recover` and `compare` read a journal a line at a time and
//! keep of the test under way its sums and a row per second, so the journal's size only sets how
//! long they read, not how much memory they hold.
//!
//! The journal here is synthetic (a day's run is not a test): two seconds written by the journal
//! writer itself, the second one repeated with its index changed, and the input cap set far
//! below the journal's size. No server is involved.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use respbench::metrics::{ExactSecond, Second};
use respbench::record::Document;
use respbench::record::journal::{Journal, TestStart};
use serde_json::Value;

use crate::harness::TempDir;

/// Requests in each second, their latencies spread over 0.1–20 ms (thousands of buckets: a
/// line of about 11 kB, as a busy second's).
const PER_SECOND: u64 = 4_000;

fn second() -> Second {
    let mut s = Second {
        exact: Some(Box::default()),
        ..Second::default()
    };
    let e: &mut ExactSecond = s.exact.as_mut().unwrap();
    for k in 0..PER_SECOND {
        let v = 100_000 + (k * 7_919 % 19_900) * 1_000 + k % 997;
        s.latency.record(v);
        e.corrected.record(v);
        e.uncorrected.record(v * 9 / 10);
        s.slots[(k % 10) as usize].completed += 1;
    }
    s.completed = PER_SECOND;
    s.issued = Some(PER_SECOND);
    s
}

/// Writes a journal of `seconds` seconds at `path`; returns its size in bytes.
fn long_journal(dir: &Path, path: &Path, seconds: usize) -> u64 {
    // The registry's tables (the record's blocks, redaction's command lines), as `main` installs
    // them before anything is written.
    respbench::modes::install();
    let template = dir.join(format!("template-{seconds}.partial"));
    let mut j = Journal::create(&template).unwrap();
    j.head(&Document {
        schema: respbench::record::document::SCHEMA.into(),
        outcome: "completed".into(),
        ..Document::default()
    })
    .unwrap();
    let s = second();
    for i in 0..2 {
        let test = TestStart {
            name: "SET",
            started_at: Some("2026-01-02T03:04:05.000006Z".into()),
            commands: vec!["set".into()],
            ..TestStart::default()
        };
        j.second(test, i, &s).unwrap();
    }
    drop(j);
    let text = std::fs::read_to_string(&template).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "head, begin, two seconds");
    let last = lines[3];
    assert!(last.contains("\"second\":1,"), "{last}");
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for l in &lines[..3] {
        writeln!(out, "{l}").unwrap();
    }
    for i in 1..seconds {
        writeln!(
            out,
            "{}",
            last.replacen("\"second\":1,", &format!("\"second\":{i},"), 1)
        )
        .unwrap();
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Runs respbench with `args` and the input cap set to `cap` (at most 5 minutes): its exit
/// code, its standard output, and its peak resident memory in kB (the kernel's `ru_maxrss`).
// The child is reaped by `wait4` (which gives its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], cap: &str) -> (i32, String, u64) {
    let dir = TempDir::new();
    let out_path = dir.path().join("stdout");
    let child = Command::new(env!("CARGO_BIN_EXE_respbench"))
        .args(args)
        .env("RESPBENCH_MAX_INPUT_SIZE", cap)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child by its PID, with valid pointers to locals.
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                -1
            };
            let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
            return (code, stdout, usage.ru_maxrss as u64);
        }
        assert!(done == 0, "wait4: {}", std::io::Error::last_os_error());
        if Instant::now() > deadline {
            // SAFETY: our own child, by its PID.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("respbench {args:?} did not finish within 5 minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `respbench recover` of a journal of `seconds` seconds through a 4 MiB cap: the record, the
/// journal's size and recover's peak memory (kB).
fn recover(dir: &Path, seconds: usize) -> (Value, u64, u64) {
    let journal = dir.join(format!("long-{seconds}.partial"));
    let size = long_journal(dir, &journal, seconds);
    assert!(size > 4 << 20, "past the cap: {size} bytes");
    let out = dir.join(format!("long-{seconds}.json"));
    let (code, _, peak) = run_measured(
        &[
            "recover",
            journal.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        "4M",
    );
    assert_eq!(code, 0, "recover of {seconds} seconds");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (rec, size, peak)
}

#[test]
fn a_journal_far_past_the_cap_recovers_and_compares_in_memory_that_does_not_follow_its_size() {
    let dir = TempDir::new();
    let (short, short_size, short_peak) = recover(dir.path(), 1_000);
    let (long, long_size, long_peak) = recover(dir.path(), 4_000);
    for (rec, seconds) in [(&short, 1_000u64), (&long, 4_000)] {
        let test = &rec["tests"][0];
        assert_eq!(rec["outcome"], "killed");
        assert_eq!(test["outcome"], "interrupted");
        assert_eq!(test["timeline"].as_array().unwrap().len() as u64, seconds);
        assert_eq!(test["requests"]["completed"], seconds * PER_SECOND);
        assert_eq!(test["requests"]["issued"], seconds * PER_SECOND);
        assert_eq!(test["duration_s"], seconds as f64);
    }
    // Every second the same: so are the percentiles of their sums (exact: each second's
    // full-precision parts added up).
    for which in ["corrected", "uncorrected"] {
        let (a, b) = (
            &short["tests"][0]["latency_us"][which],
            &long["tests"][0]["latency_us"][which],
        );
        for p in ["min", "p50", "p99", "p99_9", "max"] {
            assert_eq!(a[p], b[p], "{which} {p}");
        }
        assert_eq!(b["count"], 4_000 * PER_SECOND, "{which}");
    }
    // Each second's line is about 11 kB; what the reader keeps of it is a timeline row and the
    // record it builds (a few kB). Reading the whole journal, or a histogram a second, would
    // take more than the line per second.
    let per_second_line = (long_size - short_size) / 3_000;
    let per_second_kept = long_peak.saturating_sub(short_peak) * 1024 / 3_000;
    assert!(per_second_line > 8_000, "{per_second_line} bytes a line");
    assert!(
        per_second_kept * 2 < per_second_line,
        "recover kept {per_second_kept} bytes a second ({short_peak} kB for 1,000 seconds, \
         {long_peak} kB for 4,000) of {per_second_line}-byte lines"
    );
    eprintln!(
        "recover: {short_peak} kB peak for 1,000 seconds ({short_size} bytes), {long_peak} kB \
         for 4,000 ({long_size} bytes)"
    );
    // compare reads them the same way, past the cap: the same seconds, the same figures.
    let journal = |n: usize| dir.path().join(format!("long-{n}.partial"));
    let (code, stdout, _) = run_measured(
        &[
            "compare",
            journal(1_000).to_str().unwrap(),
            journal(4_000).to_str().unwrap(),
        ],
        "4M",
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("SET"), "{stdout}");
    assert!(stdout.contains("p99"), "{stdout}");
}
