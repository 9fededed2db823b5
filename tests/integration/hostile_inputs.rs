//! Readers refuse what is not a record without building it (issue 35): valid JSON that is not a
//! results file (`{"x":[0,0,…]}`) into `compare`, `report`, `merge` and `recover` is exit 2, one
//! line, and costs about its bytes — it used to cost 49 times them (4.9 GB for 100 MB) before
//! being refused. Here 8 MB, so the debug build stays quick; the 100 MB figures are in
//! docs/record.md.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crate::harness::TempDir;

/// Runs respbench with `args`: its exit code, its stderr and its peak resident memory in kB
/// (its own, from `wait4`, not other tests' children).
#[allow(clippy::zombie_processes)] // reaped by wait4, which std's `wait` cannot replace here
fn run_measured(args: &[&str]) -> (Option<i32>, String, i64) {
    let child = Command::new(env!("CARGO_BIN_EXE_respbench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start respbench");
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value of a plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child (not reaped elsewhere: `child`'s handle is consumed above
    // without waiting), with valid pointers to locals.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = std::process::ExitStatus::from_raw(status).code();
    (code, reader.join().unwrap(), usage.ru_maxrss)
}

#[test]
fn json_that_is_not_a_record_is_refused_for_the_cost_of_its_bytes() {
    let dir = TempDir::new();
    let big = dir.path().join("big.json");
    let n = 4_000_000;
    std::fs::write(&big, format!("{{\"x\":[{}0]}}", "0,".repeat(n - 1))).unwrap();
    let big = big.to_str().unwrap();
    let out = dir.path().join("out").display().to_string();
    for args in [
        vec!["compare", big, big],
        vec!["report", big, "-o", &out],
        vec!["merge", big, "-o", &out],
        vec!["recover", big, "-o", &out],
    ] {
        let (code, stderr, peak_kb) = run_measured(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("big.json"),
            "{args:?}: names the file: {stderr}"
        );
        // 8 MB of input (twice for compare): a tree of it took about 400 MB.
        assert!(peak_kb < 120 * 1024, "{args:?}: peak {peak_kb} kB");
    }
}
