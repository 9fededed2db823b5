//! The full report's server block: what the server did during a test, beside what respbench
//! measured, and what limited the test.
//!
//! Shown after a test's summary, only in the full report (`-q` and `--csv` keep the reference's
//! bytes) and only when there is something to say: server figures, or a verdict. The server's
//! own time per call next to the measured average shows how much of the latency is the server
//! and how much is network and client.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::record::TestRecord;
use crate::record::document::Range;
use crate::verdict::Verdict;

/// Writes the block for `t` (nothing when there are no server figures and no verdict).
/// `precision`: decimal places of latency figures, as the rest of the report.
pub fn write_server_block(
    out: &mut impl Write,
    t: &TestRecord,
    precision: usize,
) -> io::Result<()> {
    let known = t.verdict.kind != Verdict::Unknown;
    if t.server.is_empty() && !known {
        return Ok(());
    }
    let p = precision;
    let mut s = String::from("\nServer:\n");
    for n in &t.server {
        let _ = write!(s, "  {}:", n.address);
        if let Some(cpu) = n.cpu_pct {
            let _ = write!(s, " CPU {cpu:.1}% of a core");
            if let Some(main) = n.main_thread_cpu_pct {
                let _ = write!(s, " (main thread {main:.1}%)");
            }
        }
        if let Some(peak) = n.peak_second_cpu_pct {
            let _ = write!(s, ", busiest second {peak:.1}%");
        }
        if let Some(busy) = n.command_busy_pct {
            let _ = write!(s, "; executing commands {busy:.1}% of the time");
        }
        s.push('\n');
        if let Some(m) = n.used_memory {
            let _ = write!(s, "    memory {}", range(m));
            if let Some(rss) = n.used_memory_rss {
                let _ = write!(s, " (rss {})", range(rss));
            }
            s.push('\n');
        }
        if let Some(per_call) = n.usec_per_call {
            let names: Vec<&str> = n.commands.iter().map(|c| c.command.as_str()).collect();
            let _ = writeln!(
                s,
                "    server time per call {per_call:.p$} usec ({}), measured avg {:.p$} usec",
                names.join(", "),
                t.latency_us.corrected.avg
            );
        }
        let mut notes = Vec::new();
        if n.fork_seen {
            notes.push("a fork (RDB save or AOF rewrite) ran".to_string());
        }
        if n.counters.rejected_connections > 0 {
            notes.push(format!(
                "{} connections rejected",
                n.counters.rejected_connections
            ));
        }
        if n.counters.evicted_keys > 0 {
            notes.push(format!("{} keys evicted", n.counters.evicted_keys));
        }
        if n.watch_gaps > 0 {
            notes.push(format!(
                "the watch lost the server {} time(s) and reconnected: the seconds between have \
                 no figures",
                n.watch_gaps
            ));
        } else if n.partial {
            notes.push("the server stopped answering INFO: figures are partial".to_string());
        }
        if !notes.is_empty() {
            let _ = writeln!(s, "    {}", notes.join("; "));
        }
    }
    if known {
        let _ = writeln!(
            s,
            "  limited by: {} ({})",
            t.verdict.kind.name(),
            t.verdict.kind.advice()
        );
    }
    out.write_all(s.as_bytes())
}

/// The stderr line for a client-bound test, printed whatever the format (`-q` and `--csv`
/// included): the figures then describe respbench, not the server.
pub fn client_bound_warning(t: &TestRecord) -> Option<String> {
    (t.verdict.kind == Verdict::ClientBound).then(|| {
        format!(
            "WARNING: {}: {} (busiest respbench thread {:.0}% of a core)",
            t.name,
            t.verdict.kind.advice(),
            t.verdict.client_max_thread_cpu_pct.unwrap_or(0.0)
        )
    })
}

/// `1.02 MB -> 1.35 MB peak`.
fn range(r: Range) -> String {
    format!("{} -> {} peak", megabytes(r.start), megabytes(r.peak))
}

fn megabytes(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::metrics::{LatencyHistogram, Outcome, TestResult};
    use crate::record::build::{TestExtras, test_record};
    use crate::watch::commandstats::CommandCounters;
    use crate::watch::{ServerSample, Watched};

    fn result() -> TestResult {
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut h = LatencyHistogram::new();
        for i in 0..1000u64 {
            h.record(200_000 + i * 100);
        }
        r.latency_uncorrected = h.clone();
        r.latency = h;
        r.completed = 1000;
        r.elapsed = Duration::from_secs(2);
        r
    }

    fn watched() -> Watched {
        let sample = |at: u64, cpu: f64, mem: u64, fork: bool| ServerSample {
            at: Duration::from_secs(at),
            cpu_user: cpu,
            cpu_main: Some(cpu * 0.98),
            used_memory: mem,
            used_memory_rss: mem * 4,
            fork_in_progress: fork,
            ..ServerSample::default()
        };
        let counters = |calls, usec| {
            Some(vec![CommandCounters {
                name: "set".into(),
                calls,
                usec,
            }])
        };
        Watched {
            address: "127.0.0.1:6379".into(),
            samples: vec![
                sample(0, 10.0, 1_020_000, false),
                sample(1, 10.97, 1_350_000, true),
                sample(2, 11.94, 1_200_000, false),
            ],
            commandstats_before: counters(5, 10),
            commandstats_after: counters(1005, 960),
            lost: false,
            gaps: 0,
        }
    }

    fn render(t: &TestRecord) -> String {
        let mut out = Vec::new();
        write_server_block(&mut out, t, 3).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn block_matches_the_golden_file() {
        let t = test_record(
            &result(),
            vec!["set".into()],
            &[watched()],
            TestExtras::default(),
        );
        let text = render(&t);
        let path =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/report/golden/server.full.txt");
        if std::env::var_os("REGENERATE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let golden = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, golden);
        assert!(
            text.contains("CPU 97.0% of a core (main thread 95.1%)"),
            "{text}"
        );
        assert!(
            text.contains("server time per call 0.950 usec (set), measured avg"),
            "{text}"
        );
        assert!(text.contains("limited by: server-bound"), "{text}");
    }

    #[test]
    fn a_client_bound_test_warns() {
        use crate::metrics::thread_cpu::ThreadCpuUsage;
        let threads = [
            ThreadCpuUsage {
                cpu: Duration::from_millis(950),
                wall: Duration::from_secs(1),
            },
            ThreadCpuUsage::default(),
        ];
        let extras = TestExtras {
            client_threads: Some(&threads),
            ..TestExtras::default()
        };
        let t = test_record(&result(), vec![], &[watched()], extras);
        assert_eq!(t.verdict.kind, Verdict::ClientBound);
        let line = client_bound_warning(&t).unwrap();
        assert!(
            line.starts_with("WARNING: SET: a respbench thread"),
            "{line}"
        );
        assert!(
            line.ends_with("(busiest respbench thread 95% of a core)"),
            "{line}"
        );
        assert!(render(&t).contains("limited by: client-bound"));
        let server_bound = test_record(&result(), vec![], &[watched()], TestExtras::default());
        assert_eq!(client_bound_warning(&server_bound), None);
    }

    #[test]
    fn nothing_without_server_figures_or_verdict() {
        let t = test_record(&result(), vec![], &[], TestExtras::default());
        assert_eq!(render(&t), "");
    }
}
