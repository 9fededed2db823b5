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
use crate::record::document::{LatencySplit, MachineRecord, Range, ServerTestRecord};
use crate::verdict::Verdict;

/// Writes the block for `t` (nothing when there are no server figures and no verdict: a record
/// of an earlier build).
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
    // Without server figures (`--no-server-stats`, INFO refused) there is no server block, only
    // the machine and the verdict, unindented.
    let (mut s, indent) = if t.server.is_empty() {
        (String::from("\n"), "")
    } else {
        (String::from("\nServer:\n"), "  ")
    };
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
        if !n.latency_percentiles.is_empty() {
            let _ = writeln!(s, "    {}", server_percentiles_line(n, t, p));
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
    if let Some(split) = &t.latency_split {
        let _ = writeln!(s, "{indent}{}", split_line(split, p));
    }
    if let Some(d) = &t.client_delay_us {
        let _ = writeln!(
            s,
            "{indent}replies waited for respbench: avg {:.p$} p50 {:.p$} p99 {:.p$} usec ({} \
             sampled reads, kernel receive timestamps)",
            d.avg, d.p50, d.p99, d.count
        );
        if let Some(line) = delay_by_second(t, p) {
            let _ = writeln!(s, "{indent}  {line}");
        }
    }
    if let Some(m) = &t.machine {
        let _ = writeln!(s, "{indent}machine: {}", machine_line(m));
    }
    if known {
        let v = &t.verdict;
        // Records of earlier builds have the advice alone, or nothing.
        let reason = if v.reason.is_empty() {
            v.kind.advice()
        } else {
            v.reason.as_str()
        };
        if v.kind == Verdict::CantTell {
            let _ = writeln!(s, "{indent}limited by: {reason}");
        } else {
            let _ = writeln!(s, "{indent}limited by: {} ({reason})", v.kind.name());
        }
    }
    out.write_all(s.as_bytes())
}

/// `CPU pressure 12% (some), steal 0%, CPUs 80% busy, respbench 95% of a core, other
/// processes 40% of a core, a respbench thread waited for a CPU up to 3% of the time`, then what
/// the machine did not offer.
fn machine_line(m: &MachineRecord) -> String {
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let mut add = |v: Option<f64>, text: &dyn Fn(f64) -> String, name: &'static str| match v {
        Some(v) => parts.push(text(v)),
        None => missing.push(name),
    };
    add(
        m.cpu_pressure_some_pct,
        &|p| format!("CPU pressure {p:.0}% (some)"),
        "CPU pressure",
    );
    add(m.steal_pct, &|p| format!("steal {p:.0}%"), "steal");
    add(
        m.busy_pct,
        &|p| format!("CPUs {p:.0}% busy ({} cores)", m.cores),
        "CPU use",
    );
    add(
        m.respbench_cpu_pct,
        &|p| format!("respbench {p:.0}% of a core"),
        "respbench's CPU",
    );
    add(
        m.others_cpu_pct,
        &|p| format!("other processes {p:.0}% of a core"),
        "other processes' CPU (needs a local server's figures)",
    );
    add(
        m.client_max_runqueue_pct,
        &|p| format!("a respbench thread waited for a CPU up to {p:.0}% of the time"),
        "run-queue wait",
    );
    let mut line = parts.join(", ");
    if !missing.is_empty() {
        let _ = write!(line, "; not measured: {}", missing.join(", "));
    }
    line
}

/// `server latency since its stats were reset: set p50=1.003 p99=2.007 p99.9=4.015 usec;
/// respbench p50=… p99=… p99.9=… usec`: the server's own percentiles (`INFO latencystats`,
/// cumulative, so more than this test) beside the client's.
fn server_percentiles_line(n: &ServerTestRecord, t: &TestRecord, p: usize) -> String {
    let server: Vec<String> = n
        .latency_percentiles
        .iter()
        .map(|c| {
            let ps: Vec<String> = c
                .percentiles_usec
                .iter()
                .map(|(k, v)| format!("{k}={v:.p$}"))
                .collect();
            format!("{} {}", c.command, ps.join(" "))
        })
        .collect();
    let c = &t.latency_us.corrected;
    format!(
        "server latency since its stats were reset: {} usec; respbench p50={:.p$} p99={:.p$} \
         p99.9={:.p$} usec",
        server.join(", "),
        c.p50,
        c.p99,
        c.p99_9
    )
}

/// `where the latency went: avg 250.0 usec = server 1.0 (0.4%) + client delay not measured +
/// rest 249.0 (99.6%: network, kernel, queueing)`.
fn split_line(split: &LatencySplit, p: usize) -> String {
    let part = |us: f64| format!("{us:.p$} ({:.1}%)", split.share_pct(us));
    let client = match split.client_delay_us {
        Some(us) => format!("client delay {}", part(us)),
        None => "client delay not measured".into(),
    };
    format!(
        "where the latency went: avg {:.p$} usec = server {} + {client} + rest {} (network, \
         kernel, queueing)",
        split.avg_us,
        part(split.server_us),
        part(split.rest_us)
    )
}

/// `by second: p99 from 31.0 (second 0) to 412.0 usec (second 3)`: how the client's delay moved
/// over the test (a worker starved for a few seconds shows here, not in the test's average).
/// `None` under two seconds with samples.
fn delay_by_second(t: &TestRecord, p: usize) -> Option<String> {
    let rows: Vec<(usize, f64)> = t
        .timeline
        .iter()
        .filter_map(|r| Some((r.second, r.client_delay_us?.p99)))
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let low = rows.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let high = rows.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "by second: p99 from {:.p$} (second {}) to {:.p$} usec (second {})",
        low.1, low.0, high.1, high.0
    ))
}

/// The stderr line for a client-bound or machine-busy test, printed whatever the format (`-q`
/// and `--csv` included): the figures then describe respbench or the machine, not the server.
pub fn verdict_warning(t: &TestRecord) -> Option<String> {
    // Only on a second or more of evidence: a shorter test is judged too (in the report and the
    // record), but its thread CPU shares are dominated by start-up, and stderr stays as quiet as
    // the reference's for the short tests scripts and valkey's own test suite run.
    if t.duration_s < WARN_FROM_S {
        return None;
    }
    match t.verdict.kind {
        Verdict::ClientBound => Some(format!(
            "WARNING: {}: {} (busiest respbench thread {:.0}% of a core)",
            t.name,
            t.verdict.kind.advice(),
            t.verdict.client_max_thread_cpu_pct.unwrap_or(0.0)
        )),
        // The reason is the advice with the figure that decided it.
        Verdict::MachineBusy => Some(format!("WARNING: {}: {}", t.name, t.verdict.reason)),
        _ => None,
    }
}

/// The shortest test whose client-bound or machine-busy verdict is also warned about on stderr
/// (seconds).
const WARN_FROM_S: f64 = 1.0;

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
            latencystats: Some(
                "latency_percentiles_usec_set:p50=1.003,p99=2.007,p99.9=4.015\r\n".into(),
            ),
            lost: false,
            gaps: 0,
            ..Watched::default()
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
        assert!(
            text.contains(
                "    server latency since its stats were reset: set p50=1.003 p99=2.007 \
                 p99.9=4.015 usec; respbench p50="
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  where the latency went: avg 249.952 usec = server 0.950 (0.4%) + client delay \
                 not measured + rest 249.002 (99.6%) (network, kernel, queueing)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_client_bound_test_warns() {
        use crate::metrics::thread_cpu::ThreadCpuUsage;
        let threads = [
            ThreadCpuUsage {
                cpu: Duration::from_millis(950),
                wall: Duration::from_secs(1),
                ..ThreadCpuUsage::default()
            },
            ThreadCpuUsage::default(),
        ];
        let extras = TestExtras {
            client_threads: Some(&threads),
            ..TestExtras::default()
        };
        // With the server near a full core too, neither side alone is named.
        let both = test_record(&result(), vec![], &[watched()], extras);
        assert_eq!(both.verdict.kind, Verdict::BothNearSaturation);
        assert!(render(&both).contains("limited by: both-near-saturation (the server and"));
        assert_eq!(verdict_warning(&both), None);
        let t = test_record(&result(), vec![], &[], extras);
        assert_eq!(t.verdict.kind, Verdict::ClientBound);
        let line = verdict_warning(&t).unwrap();
        assert!(
            line.starts_with("WARNING: SET: a respbench thread"),
            "{line}"
        );
        assert!(
            line.ends_with("(busiest respbench thread 95% of a core)"),
            "{line}"
        );
        assert!(render(&t).contains("limited by: client-bound"));
        // A sub-second test is judged the same, but not warned about on stderr.
        let short = TestRecord {
            duration_s: 0.5,
            ..t.clone()
        };
        assert_eq!(short.verdict.kind, Verdict::ClientBound);
        assert_eq!(verdict_warning(&short), None);
        let server_bound = test_record(&result(), vec![], &[watched()], TestExtras::default());
        assert_eq!(verdict_warning(&server_bound), None);
    }

    #[test]
    fn a_machine_busy_test_warns_with_its_figure() {
        let mut t = test_record(&result(), vec![], &[], TestExtras::default());
        t.duration_s = 2.0;
        t.verdict.kind = Verdict::MachineBusy;
        t.verdict.reason = format!(
            "{}: CPU pressure 63% (some task waited for a CPU)",
            Verdict::MachineBusy.advice()
        );
        let line = verdict_warning(&t).unwrap();
        assert!(
            line.starts_with("WARNING: SET: the machine was busy"),
            "{line}"
        );
        assert!(
            line.ends_with(": CPU pressure 63% (some task waited for a CPU)"),
            "{line}"
        );
        t.duration_s = 0.9;
        assert_eq!(
            verdict_warning(&t),
            None,
            "under a second: report and record only"
        );
        t.duration_s = 2.0;
        t.verdict.kind = Verdict::Neither;
        assert_eq!(verdict_warning(&t), None);
    }

    #[test]
    fn the_client_delay_by_second_names_its_lowest_and_highest_second() {
        use crate::record::timeline::{DelayRow, TimelineRow};
        let mut t = test_record(&result(), vec![], &[], TestExtras::default());
        let row = |second, p99| TimelineRow {
            second,
            client_delay_us: Some(DelayRow {
                avg: p99 / 2.0,
                p50: p99 / 3.0,
                p99,
                samples: 40,
            }),
            ..TimelineRow::default()
        };
        t.timeline = vec![row(0, 31.0)];
        assert_eq!(delay_by_second(&t, 1), None, "one second says nothing more");
        t.timeline = vec![
            row(0, 31.0),
            TimelineRow {
                second: 1,
                ..TimelineRow::default()
            },
            row(2, 412.0),
            row(3, 50.0),
        ];
        assert_eq!(
            delay_by_second(&t, 1).unwrap(),
            "by second: p99 from 31.0 (second 0) to 412.0 usec (second 2)"
        );
    }

    #[test]
    fn nothing_without_server_figures_or_verdict() {
        let mut t = test_record(&result(), vec![], &[], TestExtras::default());
        // Without figures a fresh record still says what it lacks.
        assert_eq!(
            render(&t),
            "\nlimited by: can't tell: no server CPU figures (INFO refused or --no-server-stats)\n"
        );
        // A record of an earlier build without a verdict: nothing to say.
        t.verdict = Default::default();
        assert_eq!(render(&t), "");
    }

    #[test]
    fn the_machine_line_names_what_was_not_measured() {
        let m = MachineRecord {
            cpu_pressure_some_pct: Some(42.4),
            steal_pct: Some(0.0),
            busy_pct: Some(97.0),
            respbench_cpu_pct: Some(61.0),
            client_max_runqueue_pct: Some(23.0),
            cores: 2,
            ..MachineRecord::default()
        };
        assert_eq!(
            machine_line(&m),
            "CPU pressure 42% (some), steal 0%, CPUs 97% busy (2 cores), respbench 61% of a \
             core, a respbench thread waited for a CPU up to 23% of the time; not measured: \
             other processes' CPU (needs a local server's figures)"
        );
    }
}
