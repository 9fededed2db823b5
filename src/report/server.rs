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
use crate::record::document::{Document, LatencySplit, MachineRecord, Range, ServerTestRecord};
use crate::verdict::Verdict;

use super::run_summary::titled;

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
        node_lines(&mut s, n, t, p);
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
    if let Some(own) = own_limit(t) {
        // A delivery test's limit is its own (publishers, receivers, the rate asked), not the
        // request/response verdict's, which reads "can't tell" for it.
        let _ = match t.verdict.kind {
            Verdict::MachineBusy => {
                writeln!(s, "{indent}limited by: can't tell ({})", t.verdict.reason)
            }
            _ => writeln!(s, "{indent}limited by: {own}"),
        };
    } else if known {
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

/// One watched server's lines of the block: CPU, memory, time per call, percentiles, and
/// what happened to it (a fork, rejected connections, evictions, a lost watch).
fn node_lines(s: &mut String, n: &ServerTestRecord, t: &TestRecord, p: usize) {
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
            "    server time per call {per_call:.p$} usec ({}), measured avg {}",
            names.join(", "),
            sent_avg(t, p)
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

/// `CPU pressure 12% (some), steal 0%, CPUs 80% busy (2 cores), respbench 95% of a core, other
/// processes 40% of a core, a respbench thread waited for a CPU up to 3% of the time`, then what
/// the machine did not offer. The CPUs' figure is of the machine's cores; a respbench allowed
/// fewer (`taskset`) says so beside its own figure, since its run-queue wait is for those. The
/// HTML report's test sections show the same line.
pub fn machine_line(m: &MachineRecord) -> String {
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
        &|p| format!("CPUs {p:.0}% busy ({})", cores(m.cores)),
        "CPU use",
    );
    let allowed = match m.respbench_cores {
        Some(n) if n < m.cores => format!(" (it may run on {n} of the {})", cores(m.cores)),
        _ => String::new(),
    };
    add(
        m.respbench_cpu_pct,
        &|p| format!("respbench {p:.0}% of a core{allowed}"),
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

/// `1 core`, `2 cores`.
fn cores(n: usize) -> String {
    format!("{n} core{}", if n == 1 { "" } else { "s" })
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

/// `249.952 usec (from actual send)`: the measured average the server's time per call is set
/// against, the same figure the split divides (the record's `latency_split.avg_us`): from each
/// request's actual send, not from its intended send as the latency summary's `avg`, which with
/// a request waiting for its connection or its `--rps` slot is a little or much more. Records
/// without uncorrected figures have the corrected average, unlabelled.
fn sent_avg(t: &TestRecord, p: usize) -> String {
    let u = &t.latency_us.uncorrected;
    if u.count > 0 {
        format!("{:.p$} usec (from actual send)", u.avg)
    } else {
        format!("{:.p$} usec", t.latency_us.corrected.avg)
    }
}

/// `where the latency went: avg 250.0 usec (from actual send) = server 1.0 (0.4%) + client
/// delay not measured + rest 249.0 (99.6%) (network, kernel, queueing)`.
fn split_line(split: &LatencySplit, p: usize) -> String {
    let part = |us: f64| format!("{us:.p$} ({:.1}%)", split.share_pct(us));
    let client = match split.client_delay_us {
        Some(us) => format!("client delay {}", part(us)),
        None => "client delay not measured".into(),
    };
    format!(
        "where the latency went: avg {:.p$} usec (from actual send) = server {} + {client} + \
         rest {} (network, kernel, queueing)",
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

/// What limited a test whose limit is its mode's own (a delivery test's: its block's kind says,
/// `record::block::Block::own_limit`), in words; `None` for a request/response test.
fn own_limit(t: &TestRecord) -> Option<String> {
    t.blocks.iter().find_map(|(kind, b)| kind.own_limit(b))
}

/// The stderr line for a client-bound or machine-busy test, printed whatever the format (`-q`
/// and `--csv` included): the figures then describe respbench or the machine, not the server.
/// `repetitions`: the run's `--repeat`, so that a repetition's line says which it is.
pub fn verdict_warning(t: &TestRecord, repetitions: u32) -> Option<String> {
    // Only on a second or more of evidence: a shorter test is judged too (in the report and the
    // record), but its thread CPU shares are dominated by start-up, and stderr stays as quiet as
    // the reference's for the short tests scripts and valkey's own test suite run. Shorter tests
    // are summed up at the run's end instead (`short_tests_warnings`).
    if t.duration_s < WARN_FROM_S {
        return None;
    }
    let title = titled(&t.name, t.repetition, repetitions);
    match t.verdict.kind {
        // More -c or -P is not a delivery test's remedy: its own limit is in its report.
        Verdict::ClientBound if own_limit(t).is_some() => None,
        Verdict::ClientBound => Some(format!(
            "WARNING: {title}: {} (busiest respbench thread {:.0}% of a core)",
            t.verdict.kind.advice(),
            t.verdict.client_max_thread_cpu_pct.unwrap_or(0.0)
        )),
        // The reason is the advice with the figure that decided it.
        Verdict::MachineBusy => Some(format!("WARNING: {title}: {}", t.verdict.reason)),
        _ => None,
    }
}

/// The shortest test whose client-bound or machine-busy verdict is also warned about on stderr
/// (seconds).
const WARN_FROM_S: f64 = 1.0;

/// The end of a run's stderr lines for its tests shorter than [`WARN_FROM_S`] that were judged
/// machine-busy or client-bound: one line per kind, with how many and the range of the figures
/// that decided them (`WARNING: 24 of 24 tests shorter than 1 s: the machine was busy (…)`).
/// Why: a suite at the quick start's `-n 20000` on a busy machine has only such tests, each
/// judged in the report and the record, while `-q` shows rps and p50 alone; one line says the
/// figures are the machine's. Only with a second or more of such tests together, the evidence
/// a single test's warning needs: a script's or valkey's own test suite's few short tests keep
/// stderr as quiet as the reference's. Never for a `--find-max` run (its steps are the search's).
pub fn short_tests_warnings(doc: &Document) -> Vec<String> {
    if doc.find_max.is_some() {
        return Vec::new();
    }
    let short: Vec<&TestRecord> = doc
        .tests
        .iter()
        .filter(|t| t.duration_s > 0.0 && t.duration_s < WARN_FROM_S)
        .collect();
    let n = short.len();
    let of_kind = |kind: Verdict| -> Vec<&TestRecord> {
        let tests: Vec<&TestRecord> = short
            .iter()
            .copied()
            .filter(|t| t.verdict.kind == kind)
            .collect();
        let seconds: f64 = tests.iter().map(|t| t.duration_s).sum();
        if seconds >= WARN_FROM_S {
            tests
        } else {
            Vec::new()
        }
    };
    let mut lines = Vec::new();
    let busy = of_kind(Verdict::MachineBusy);
    if !busy.is_empty() {
        let m = |f: fn(&MachineRecord) -> Option<f64>| {
            span(busy.iter().filter_map(|t| t.machine.as_ref().and_then(f)))
        };
        let figures: Vec<String> = [
            m(|m| m.cpu_pressure_some_pct).map(|r| format!("CPU pressure {r}%")),
            m(|m| m.others_cpu_pct).map(|r| format!("other processes {r}% of a core")),
            m(|m| m.client_max_runqueue_pct)
                .map(|r| format!("respbench's worst thread waited for a CPU {r}% of the time")),
        ]
        .into_iter()
        .flatten()
        .collect();
        lines.push(format!(
            "WARNING: {} of {n} tests shorter than 1 s: the machine was busy ({}): their figures \
             describe the machine's load, not the server; each test's reason is in the full \
             report and the record",
            busy.len(),
            figures.join(", ")
        ));
    }
    let client = of_kind(Verdict::ClientBound);
    if !client.is_empty() {
        let cpu = span(
            client
                .iter()
                .filter_map(|t| t.verdict.client_max_thread_cpu_pct),
        )
        .unwrap_or_default();
        lines.push(format!(
            "WARNING: {} of {n} tests shorter than 1 s were client-bound (busiest respbench \
             thread {cpu}% of a core): their figures describe respbench, not the server; try \
             more --threads",
            client.len()
        ));
    }
    lines
}

/// `29–52` (whole percents), or `40` when the range rounds to one value; `None` when empty.
fn span(values: impl Iterator<Item = f64>) -> Option<String> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return None;
    }
    let (lo, hi) = (format!("{lo:.0}"), format!("{hi:.0}"));
    Some(if lo == hi { lo } else { format!("{lo}–{hi}") })
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
                "  where the latency went: avg 249.952 usec (from actual send) = server 0.950 \
                 (0.4%) + client delay not measured + rest 249.002 (99.6%) (network, kernel, \
                 queueing)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_server_line_and_the_split_show_one_average() {
        // The trial: "measured avg 648.409 usec" (from intended send) above "where the latency
        // went: avg 647.814 usec" (from actual send). Requests here waited 600 ns for their
        // connection, so the two histograms' means differ.
        let mut r = result();
        let mut sent = LatencyHistogram::new();
        for i in 0..1000u64 {
            sent.record(200_000 + i * 100 - 600);
        }
        r.latency_uncorrected = sent;
        let t = test_record(&r, vec!["set".into()], &[watched()], TestExtras::default());
        assert!(t.latency_us.corrected.avg > t.latency_us.uncorrected.avg + 0.5);
        let text = render(&t);
        let avg = |after: &str| {
            let at = text
                .find(after)
                .unwrap_or_else(|| panic!("{after} in {text}"))
                + after.len();
            text[at..].split_whitespace().next().unwrap().to_string()
        };
        let split = t.latency_split.as_ref().unwrap().avg_us;
        assert_eq!(avg("measured avg "), format!("{split:.3}"), "{text}");
        assert_eq!(avg("where the latency went: avg "), format!("{split:.3}"));
        assert!(text.contains(&format!("measured avg {split:.3} usec (from actual send)")));
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
        assert_eq!(verdict_warning(&both, 1), None);
        let t = test_record(&result(), vec![], &[], extras);
        assert_eq!(t.verdict.kind, Verdict::ClientBound);
        let line = verdict_warning(&t, 1).unwrap();
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
        assert_eq!(verdict_warning(&short, 1), None);
        let server_bound = test_record(&result(), vec![], &[watched()], TestExtras::default());
        assert_eq!(verdict_warning(&server_bound, 1), None);
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
        let line = verdict_warning(&t, 1).unwrap();
        assert!(
            line.starts_with("WARNING: SET: the machine was busy"),
            "{line}"
        );
        assert!(
            line.ends_with(": CPU pressure 63% (some task waited for a CPU)"),
            "{line}"
        );
        // A repetition says which (the trial's --repeat 3 printed "WARNING: SET:" three times).
        t.repetition = Some(2);
        let line = verdict_warning(&t, 3).unwrap();
        assert!(
            line.starts_with("WARNING: SET (repetition 2 of 3): the machine was busy"),
            "{line}"
        );
        t.repetition = None;
        t.duration_s = 0.9;
        assert_eq!(
            verdict_warning(&t, 1),
            None,
            "under a second: summed up at the end instead"
        );
        t.duration_s = 2.0;
        t.verdict.kind = Verdict::Neither;
        assert_eq!(verdict_warning(&t, 1), None);
    }

    /// A test of `seconds` judged `kind`, with the machine's figures of a busy machine.
    fn judged(name: &str, seconds: f64, kind: Verdict, runqueue: f64) -> TestRecord {
        let mut t = test_record(&result(), vec![], &[], TestExtras::default());
        t.name = name.into();
        t.duration_s = seconds;
        t.verdict.kind = kind;
        t.verdict.client_max_thread_cpu_pct = Some(runqueue + 50.0);
        t.machine = Some(MachineRecord {
            cpu_pressure_some_pct: Some(90.0 + runqueue / 10.0),
            others_cpu_pct: Some(100.0 + runqueue),
            client_max_runqueue_pct: Some(runqueue),
            cores: 2,
            ..MachineRecord::default()
        });
        t
    }

    #[test]
    fn sub_second_tests_judged_busy_are_summed_up_at_the_end() {
        // The trial: the quick start's `-q -n 20000` on a busy machine, every test 0.2–0.9 s and
        // machine-busy in the record, nothing on stderr.
        let mut doc = Document::default();
        for (i, name) in ["PING_INLINE", "SET", "GET", "LRANGE_600"]
            .iter()
            .enumerate()
        {
            let t = judged(
                name,
                0.2 + i as f64 * 0.2,
                Verdict::MachineBusy,
                29.0 + i as f64 * 7.0,
            );
            assert_eq!(verdict_warning(&t, 1), None, "each is under a second");
            doc.tests.push(t);
        }
        let lines = short_tests_warnings(&doc);
        assert_eq!(
            lines,
            [
                "WARNING: 4 of 4 tests shorter than 1 s: the machine was busy (CPU pressure 93–95%, \
              other processes 129–150% of a core, respbench's worst thread waited for a CPU \
              29–50% of the time): their figures describe the machine's load, not the server; \
              each test's reason is in the full report and the record"
            ]
        );
        // The harness's filter for a busy machine's lines (tests/integration/harness.rs)
        // recognises it.
        assert!(lines[0].starts_with("WARNING: ") && lines[0].contains(": the machine was busy"));
        // Client-bound ones get their own line; longer tests were warned one by one.
        doc.tests
            .push(judged("INCR", 0.5, Verdict::ClientBound, 42.0));
        doc.tests
            .push(judged("MSET", 0.6, Verdict::ClientBound, 45.0));
        doc.tests
            .push(judged("XADD", 3.0, Verdict::ClientBound, 48.0));
        let lines = short_tests_warnings(&doc);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("WARNING: 4 of 6 tests shorter than 1 s: the machine"));
        assert_eq!(
            lines[1],
            "WARNING: 2 of 6 tests shorter than 1 s were client-bound (busiest respbench thread \
             92–95% of a core): their figures describe respbench, not the server; try more \
             --threads"
        );
    }

    #[test]
    fn a_few_short_tests_keep_stderr_quiet() {
        // Under a second of such tests together is less evidence than one test's warning needs:
        // valkey's own test suite runs `-P 5 -c 10 -n 10010 -t set,get` under Tcl's `exec`,
        // which fails on any stderr output.
        let mut doc = Document::default();
        doc.tests
            .push(judged("SET", 0.45, Verdict::MachineBusy, 30.0));
        doc.tests
            .push(judged("GET", 0.45, Verdict::MachineBusy, 30.0));
        doc.tests.push(judged("INCR", 0.9, Verdict::Neither, 1.0));
        assert_eq!(short_tests_warnings(&doc), Vec::<String>::new());
        doc.tests[2].verdict.kind = Verdict::MachineBusy;
        assert_eq!(short_tests_warnings(&doc).len(), 1, "1.8 s of them");
        // A --find-max run's test is one step of the search.
        doc.find_max = Some(Default::default());
        assert_eq!(short_tests_warnings(&doc), Vec::<String>::new());
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

    #[test]
    fn a_pinned_respbench_reads_the_machines_cores_and_its_own() {
        // The trial: `taskset -c 1 respbench` (a CPU hog on CPU 1, the server on CPU 0) of a
        // 2-core machine printed "CPUs 200% busy (1 cores)": the CPUs respbench may use were
        // taken for the machine's. Built from the machine's load as a run builds it.
        let load = crate::machine::Load {
            seconds: 2.0,
            cpu_pressure_some_pct: Some(99.0),
            steal_pct: Some(0.0),
            busy_pct: Some(200.0),
            respbench_pct: Some(9.0),
            cores: 2,
            respbench_cores: 1,
            ..crate::machine::Load::default()
        };
        // respbench's one worker: 8% of a core, waiting for its CPU 60% of the 2 s test.
        let threads = [crate::metrics::thread_cpu::ThreadCpuUsage {
            cpu: Duration::from_millis(160),
            runqueue: Some(Duration::from_millis(1200)),
            wall: Duration::from_secs(2),
        }];
        let extras = TestExtras {
            machine: Some(load),
            client_threads: Some(&threads),
            ..TestExtras::default()
        };
        let mut server = watched();
        for s in &mut server.samples {
            s.cpu_user = s.at.as_secs_f64() * 0.1;
            s.cpu_main = Some(s.cpu_user);
        }
        let t = test_record(&result(), vec![], &[server], extras);
        let m = t.machine.as_ref().unwrap();
        assert_eq!((m.cores, m.respbench_cores), (2, Some(1)));
        assert_eq!(
            machine_line(m),
            "CPU pressure 99% (some), steal 0%, CPUs 100% busy (2 cores), respbench 9% of a core \
             (it may run on 1 of the 2 cores), other processes 181% of a core, a respbench \
             thread waited for a CPU up to 60% of the time"
        );
        // Judged on its own core: the hog beside it, not the server on the other one.
        assert_eq!(t.verdict.kind, Verdict::MachineBusy, "{}", t.verdict.reason);
        assert!(
            t.verdict.reason.ends_with(
                "a respbench thread waited for a CPU 60% of the test (respbench may run on 1 of \
                 the machine's 2 cores)"
            ),
            "{}",
            t.verdict.reason
        );
        let one = MachineRecord {
            busy_pct: Some(50.0),
            cores: 1,
            respbench_cores: Some(1),
            ..MachineRecord::default()
        };
        let line = machine_line(&one);
        assert!(line.starts_with("CPUs 50% busy (1 core);"), "{line}");
        assert!(
            !line.contains("may run on"),
            "all the machine's cores: {line}"
        );
    }
}
