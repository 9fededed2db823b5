//! Readers refuse what is not a record without building it (issue 35): valid JSON that is not a
//! results file (`{"x":[0,0,…]}`) into `compare`, `report`, `merge` and `recover` is exit 2, one
//! line, and costs about its bytes — it used to cost 49 times them (4.9 GB for 100 MB) before
//! being refused. Here 8 MB, so the debug build stays quick; the 100 MB figures are in
//! docs/record.md.

use std::process::{Command, Stdio};

use crate::harness::TempDir;

/// Runs respbench with `args`: its exit code, its stderr and its peak resident memory in kB,
/// read from its own `/proc/PID/status` (`VmHWM`) while it runs. Not `wait4`'s `ru_maxrss`:
/// Linux carries the pre-`exec` image's high-water mark into it, and that image is this test
/// process (vfork/posix_spawn share its memory), whose size depends on the other tests running
/// beside it — 137 MB read for a run that peaked at 20 MB. Polled every 2 ms; a parse that builds
/// a tree of the input takes far longer than that, so its peak is seen.
fn run_measured(args: &[&str]) -> (Option<i32>, String, i64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_respbench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start respbench");
    let status_file = format!("/proc/{}/status", child.id());
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let mut peak = 0i64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().expect("wait for respbench") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("respbench {args:?} did not end within 300 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    (status.code(), reader.join().unwrap(), peak)
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

/// A journal whose seconds add up past 2^64 (two seconds each claiming 2^64−1 completed) is a
/// corrupt journal: `recover` used to wrap the sum silently (as `merge` refuses one), and
/// `compare` and `report` read journals through the same reader. Each refuses it: exit 2, one
/// line naming the file and the second that overflows.
#[test]
fn a_journal_whose_counts_pass_2_64_is_refused_by_every_reader() {
    let dir = TempDir::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/journals/format-1-mix.partial");
    let text = std::fs::read_to_string(fixture).unwrap();
    let mut swapped = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(r#"{"kind":"second","second":0,"#)
                || l.starts_with(r#"{"kind":"second","second":1,"#)
            {
                swapped += 1;
                l.replacen(
                    r#""completed":400,"#,
                    &format!(r#""completed":{},"#, u64::MAX),
                    1,
                )
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(swapped, 2, "the fixture's seconds 0 and 1 were found");
    let journal = dir.path().join("wrapping.partial");
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let journal = journal.to_str().unwrap();
    let out = dir.path().join("out").display().to_string();
    for args in [
        vec!["recover", journal, "-o", &out],
        vec!["compare", journal, journal],
        vec!["report", journal, "-o", &out],
    ] {
        let (code, stderr, _) = run_measured(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("wrapping.partial") && stderr.contains("past 2^64"),
            "{args:?}: names the file and the overflow: {stderr}"
        );
    }
    assert!(
        !std::path::Path::new(&out).exists(),
        "nothing written for a corrupt journal"
    );
}

/// `report` of a valkey-benchmark `--csv` of 64k rows (each its own test) drew every row: an
/// 87 MB page, 1.76 GB to make it. The page now draws the first 1,000 tests' rows and says how
/// many it left out (`compare --format csv` has them all).
#[test]
fn a_csv_of_64k_tests_makes_a_page_of_its_first_thousand() {
    let dir = TempDir::new();
    let csv = dir.path().join("big.csv");
    let n = 64_000;
    let mut text = String::from(
        "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\
         \"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n",
    );
    for k in 0..n {
        text.push_str(&format!(
            "\"T{k}\",\"{}.50\",\"0.567\",\"0.160\",\"0.431\",\"1.431\",\"3.111\",\"7.135\"\n",
            1000 + k
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let page = dir.path().join("page.html");
    let args = [
        "report",
        csv.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ];
    let (code, stderr, _) = run_measured(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.len() < 5_000_000, "page of {} bytes", html.len());
    assert!(
        html.contains(&format!("… {} more tests: see", n - 1000)),
        "says how many tests it left out"
    );
    assert!(html.contains(">T999<") && !html.contains(">T1000<"));
}
