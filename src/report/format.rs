//! The text of the full report, `-q` lines, `--csv` rows, the live progress line and the
//! stderr side notes.
//!
//! Owns: layout and number formatting. Must not: do terminal control (clearing the progress
//! line, `\r`), choose the stream, or decide what to run; the caller does. Every writer builds its
//! text in memory and hands it to `out` in one `write_all`, so a report is never interleaved with
//! other output at a finer grain than one test.
//!
//! Number formatting: Rust's `{:.N}` rounds the exact binary value half-to-even, as glibc's
//! `%.Nf` does, so equal doubles print equal text.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::metrics::{ClusterStats, LatencyHistogram, Outcome, RedirectKind, Role, TestResult};

use super::ReportContext;
use super::distribution::{Step, cumulative_lines, percentile_lines};

const NS_PER_MS: f64 = 1_000_000.0;

/// Converts nanoseconds to milliseconds.
fn ms(ns: f64) -> f64 {
    ns / NS_PER_MS
}

/// The six latency figures of the summary table, CSV row and `-q` line, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LatencyFigures {
    avg: f64,
    min: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    max: f64,
}

impl LatencyFigures {
    /// min = histogram min, max = histogram max, avg = mean, pXX = value at percentile; all 0
    /// for an empty histogram.
    fn of(h: &LatencyHistogram) -> Self {
        Self {
            avg: ms(h.mean_ns()),
            min: ms(h.min_ns() as f64),
            p50: ms(h.value_at_percentile_ns(50.0) as f64),
            p95: ms(h.value_at_percentile_ns(95.0) as f64),
            p99: ms(h.value_at_percentile_ns(99.0) as f64),
            max: ms(h.max_ns() as f64),
        }
    }

    fn as_array(&self) -> [f64; 6] {
        [self.avg, self.min, self.p50, self.p95, self.p99, self.max]
    }
}

/// `"    %9s %9s %9s %9s %9s %9s\n"` with avg min p50 p95 p99 max, then the values as
/// `"    %9.{precision}f ...\n"`.
fn six_column_table(s: &mut String, values: [f64; 6], precision: usize) {
    s.push_str("   ");
    for name in ["avg", "min", "p50", "p95", "p99", "max"] {
        let _ = write!(s, " {name:>9}");
    }
    s.push_str("\n   ");
    for v in values {
        let _ = write!(s, " {v:>9.precision$}");
    }
    s.push('\n');
}

/// `%3.3f%% <= %.{precision}f milliseconds (cumulative count %lld)` lines.
fn distribution_lines(s: &mut String, lines: &[Step], precision: usize) {
    for line in lines {
        let _ = writeln!(
            s,
            "{:3.3}% <= {:.precision$} milliseconds (cumulative count {})",
            line.percentile,
            ms(line.highest_equivalent as f64),
            line.cumulative
        );
    }
}

/// Whether the uncorrected latencies say something the corrected ones do not: some of avg,
/// p50, p99 or max differ by more than 1% *and* more than 1 µs. False when the uncorrected
/// histogram is empty (nothing was measured that way).
fn uncorrected_differs(corrected: &LatencyHistogram, uncorrected: &LatencyHistogram) -> bool {
    if uncorrected.is_empty() {
        return false;
    }
    let pairs = [
        (corrected.mean_ns(), uncorrected.mean_ns()),
        (
            corrected.value_at_percentile_ns(50.0) as f64,
            uncorrected.value_at_percentile_ns(50.0) as f64,
        ),
        (
            corrected.value_at_percentile_ns(99.0) as f64,
            uncorrected.value_at_percentile_ns(99.0) as f64,
        ),
        (corrected.max_ns() as f64, uncorrected.max_ns() as f64),
    ];
    pairs.iter().any(|&(a, b)| {
        let diff = (a - b).abs();
        diff > 1_000.0 && diff > 0.01 * a.abs().max(b.abs())
    })
}

/// Statistics of the per-interval RPS samples: avg, min, p50, p95, p99, max. Percentiles are
/// nearest-rank on the sorted samples (the smallest sample with at least p% of the samples at or
/// below it). All 0 without samples.
fn rps_figures(samples: &[f64]) -> [f64; 6] {
    if samples.is_empty() {
        return [0.0; 6];
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let rank = |p: f64| -> f64 {
        let r = ((p / 100.0) * n as f64).ceil() as usize;
        sorted[r.clamp(1, n) - 1]
    };
    let avg = sorted.iter().sum::<f64>() / n as f64;
    [
        avg,
        sorted[0],
        rank(50.0),
        rank(95.0),
        rank(99.0),
        sorted[n - 1],
    ]
}

/// Below this fraction of the `--rps` target the report says the target was not reached.
const RPS_REACHED_FRACTION: f64 = 0.95;

/// `Some((achieved, percent of target))` when a `--rps` target was set and the achieved
/// throughput is below 95% of it.
fn rps_shortfall(r: &TestResult) -> Option<(f64, f64)> {
    let target = r.target_rps? as f64;
    let achieved = r.throughput();
    (achieved < RPS_REACHED_FRACTION * target).then(|| (achieved, achieved / target * 100.0))
}

/// Writes the full report of one test (default output mode), valkey-benchmark's `showReport`
/// sequence (spec §4.3) from the `====== TITLE ======` line to the latency summary table. The
/// caller clears the progress line first.
///
/// Additions over the reference, each printed only when it has something to say:
/// - after the `threads` line: `interrupted: yes (...)` / `aborted: yes (...)`, the error
///   replies by first word, and the RESP3 push messages by kind (`invalidation messages: N`,
///   always shown with `--enable-tracking`, so 0 says tracking was on and nothing changed;
///   `pub/sub messages: N`; `other push messages: N`);
/// - the RPS summary (spec §4.4, only with a `--rps` target) with a "target RPS not reached"
///   line when the achieved throughput is below 95% of the target;
/// - after the latency summary, `latency summary, uncorrected (from actual send, msec):`.
///
/// The main latency figures are measured from each request's *intended* send time, so a stalled
/// server shows up as latency instead of silently lowering the offered load (coordinated omission
/// correction). The uncorrected table measures from the actual write of each request, which is
/// what valkey-benchmark reports; it is shown only when it differs from the corrected figures by
/// more than 1% and 1 µs in avg, p50, p99 or max.
///
/// Latency values use `ctx.precision` decimal places (valkey-benchmark always prints 3, which is
/// our default). An empty histogram gives the section headings with no lines and zero figures.
pub fn write_full(out: &mut impl Write, ctx: &ReportContext, r: &TestResult) -> io::Result<()> {
    let p = ctx.precision;
    let mut s = String::with_capacity(4096);
    header_lines(&mut s, ctx, r);
    side_lines(&mut s, ctx, r);
    super::outages::section(&mut s, r);

    if let Some(target) = r.target_rps {
        s.push_str("\nRPS Summary:\n");
        let _ = writeln!(s, "  target RPS: {:.2}", target as f64);
        s.push_str("  RPS distribution (reqs/sec):\n");
        six_column_table(&mut s, rps_figures(&r.rps_samples), 3);
        if let Some((achieved, percent)) = rps_shortfall(r) {
            let _ = writeln!(
                s,
                "  target RPS not reached: achieved {achieved:.2} {} per second \
                 ({percent:.1}% of target)",
                ctx.operations.plural()
            );
        }
    }

    s.push_str("\nLatency by percentile distribution:\n");
    distribution_lines(&mut s, &percentile_lines(r.latency.raw()), p);
    s.push_str("\nCumulative distribution of latencies:\n");
    distribution_lines(&mut s, &cumulative_lines(r.latency.raw()), p);

    s.push_str("\nSummary:\n");
    let _ = writeln!(
        s,
        "  throughput summary: {:.2} {} per second",
        r.throughput(),
        ctx.operations.plural()
    );
    if r.completed == 0 {
        // A table of zeros would read as a very fast server.
        let none = match ctx.operations {
            super::Operations::Requests => "no request completed",
            super::Operations::Deliveries => "no message delivered",
            super::Operations::ReplayedCommands => "no replayed command completed",
        };
        let _ = writeln!(s, "  {none}: no latency figures");
        return out.write_all(s.as_bytes());
    }
    s.push_str("  latency summary (msec):\n");
    six_column_table(&mut s, LatencyFigures::of(&r.latency).as_array(), p);
    if uncorrected_differs(&r.latency, &r.latency_uncorrected) {
        s.push_str("  latency summary, uncorrected (from actual send, msec):\n");
        six_column_table(
            &mut s,
            LatencyFigures::of(&r.latency_uncorrected).as_array(),
            p,
        );
    }
    for c in &r.commands {
        let v = super::commands::view(r, c);
        let _ = writeln!(
            s,
            "  {}: {:.2} requests per second, {} completed{}",
            c.name,
            v.throughput(),
            c.completed,
            if c.errors > 0 {
                format!(", {} errors", c.errors)
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "  {} latency summary (msec):", c.name);
        six_column_table(&mut s, LatencyFigures::of(&c.latency).as_array(), p);
    }
    if let Some(c) = &r.cluster {
        cluster_sections(&mut s, c, r.elapsed.as_secs_f64(), p);
    }
    out.write_all(s.as_bytes())
}

/// The reference's header: title, request count and time, clients, payload, keep-alive, the
/// server's (or each node's) configuration, threads.
fn header_lines(s: &mut String, ctx: &ReportContext, r: &TestResult) {
    let _ = writeln!(s, "====== {} ======", r.title);
    let _ = writeln!(
        s,
        "  {} {} completed in {:.2} seconds",
        r.completed,
        ctx.operations.plural(),
        r.elapsed.as_secs_f64()
    );
    let _ = writeln!(s, "  {} parallel clients", ctx.clients);
    let _ = writeln!(s, "  {} bytes payload", ctx.payload_bytes);
    let _ = writeln!(s, "  keep alive: {}", ctx.keepalive);
    if let Some(cl) = &ctx.cluster {
        let _ = writeln!(s, "  cluster mode: yes ({} {})", cl.count, cl.kind);
        for (i, config) in cl.node_configs.iter().enumerate() {
            if let (Some(save), Some(appendonly)) = config {
                let save = if save.is_empty() { "NONE" } else { save };
                let _ = writeln!(
                    s,
                    "  node [{i}] configuration:\n    save: {save}\n    appendonly: {appendonly}"
                );
            }
        }
    } else if let (Some(save), Some(appendonly)) = (&ctx.server_save, &ctx.server_appendonly) {
        let _ = writeln!(s, "  host configuration \"save\": {save}");
        let _ = writeln!(s, "  host configuration \"appendonly\": {appendonly}");
    }
    // `--threads 0` means single-threaded, as in the reference.
    let threads = ctx.threads.filter(|&n| n > 0);
    let _ = writeln!(
        s,
        "  multi-thread: {}",
        if threads.is_some() { "yes" } else { "no" }
    );
    if let Some(n) = threads {
        let _ = writeln!(s, "  threads: {n}");
    }
}

/// What the reference has no line for, after the header: how the test ended, error replies by
/// first word, pushes by kind.
fn side_lines(s: &mut String, ctx: &ReportContext, r: &TestResult) {
    match r.outcome {
        Outcome::Completed => {}
        Outcome::Interrupted(signal) => {
            let _ = writeln!(
                s,
                "  interrupted: yes (partial results: measured until {})",
                signal.name()
            );
        }
        Outcome::Aborted => {
            s.push_str("  aborted: yes (partial results: measured until the error)\n");
        }
    }
    if !r.errors.is_empty() {
        let what = if r.errors.has_failures_without_reply() {
            "failed (error replies, timeouts, lost connections)"
        } else {
            "error replies"
        };
        let _ = writeln!(
            s,
            "  {what}: {} (not counted as completed)",
            r.errors.total()
        );
        for (word, count) in r.errors.sorted() {
            let _ = writeln!(s, "    {word}: {count}");
        }
    }
    if r.unanswered > 0 {
        let _ = writeln!(s, "  unanswered: {} ({})", r.unanswered, unanswered_why(r));
    }
    if r.reconnect_attempts > 0 {
        let _ = write!(
            s,
            "  reconnects: {} of {} attempts",
            r.reconnects, r.reconnect_attempts
        );
        if r.reconnect_refusals > 0 {
            let _ = write!(s, " ({} refused)", r.reconnect_refusals);
        }
        s.push('\n');
    }
    let pushes = &r.pushes;
    if ctx.tracking || pushes.invalidations > 0 {
        let _ = write!(s, "  invalidation messages: {}", pushes.invalidations);
        // Per second too once there are two: a moving hot set's churn (`--key-drift`) shows
        // as a range, a stationary one as a flat line.
        let per_second: Vec<u64> = r.timeline.seconds.iter().map(|x| x.invalidations).collect();
        if pushes.invalidations > 0 && per_second.len() >= 2 {
            let (lo, hi) = (
                per_second.iter().min().copied().unwrap_or(0),
                per_second.iter().max().copied().unwrap_or(0),
            );
            let _ = write!(s, " (per second: {lo} to {hi})");
        }
        s.push('\n');
    }
    if pushes.messages > 0 {
        let _ = writeln!(s, "  pub/sub messages: {}", pushes.messages);
    }
    if pushes.other > 0 {
        let _ = writeln!(s, "  other push messages: {}", pushes.other);
    }
}

/// Why requests were still unanswered at the end: they are neither completed nor failed, and
/// have no place in the latency figures (their wait had no end).
fn unanswered_why(r: &TestResult) -> &'static str {
    match r.outcome {
        Outcome::Interrupted(_) => {
            "still waiting for a reply when interrupted; not in the latency figures"
        }
        Outcome::Aborted => {
            "still waiting for a reply when the run stopped; not in the latency figures"
        }
        Outcome::Completed => {
            "no reply within the 5 s grace after --duration; not in the latency figures"
        }
    }
}

/// Cluster mode's additions to the full report: redirects (total and by second) and one summary
/// line per node.
fn cluster_sections(s: &mut String, c: &ClusterStats, secs: f64, p: usize) {
    s.push_str("\nCluster redirects (re-sent to the right node, not counted as completed):\n");
    let _ = writeln!(s, "  {}", redirect_counts(&c.redirects, false));
    let busy: Vec<(usize, &[u64; 4])> = c
        .timeline
        .iter()
        .enumerate()
        .filter(|(_, k)| k.iter().any(|&n| n > 0))
        .collect();
    if !busy.is_empty() {
        s.push_str("  by second of the test:\n");
        for (sec, kinds) in busy {
            let _ = writeln!(s, "    {:>4}s  {}", sec, redirect_counts(kinds, true));
        }
    }
    s.push_str("\nPer-node summary:\n");
    let _ = writeln!(
        s,
        "    {:<22} {:<8} {:>10} {:>12} {:>9} {:>9} {:>9} {:>9}",
        "node", "role", "requests", "rps", "avg", "p50", "p99", "max"
    );
    for n in c.nodes.iter().filter(|n| n.completed > 0) {
        let f = LatencyFigures::of(&n.latency);
        let rps = if secs > 0.0 {
            n.completed as f64 / secs
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "    {:<22} {:<8} {:>10} {:>12.2} {:>9.p$} {:>9.p$} {:>9.p$} {:>9.p$}",
            n.address,
            n.role.map_or("", Role::name),
            n.completed,
            rps,
            f.avg,
            f.p50,
            f.p99,
            f.max
        );
    }
}

/// `MOVED: 3, ASK: 0, TRYAGAIN: 0, CLUSTERDOWN: 0` (`nonzero`: only the kinds that occurred).
fn redirect_counts(counts: &[u64; 4], nonzero: bool) -> String {
    RedirectKind::ALL
        .iter()
        .filter(|k| !nonzero || counts[**k as usize] > 0)
        .map(|k| format!("{}: {}", k.name(), counts[*k as usize]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cluster listing printed before the tests (spec §4.1): `Cluster has <N> <kind> nodes:`,
/// a blank line, `Node <i>(<Role>): <id> <host>:<port>` per node, a blank line.
pub fn write_cluster_listing(
    out: &mut impl Write,
    kind: &str,
    nodes: &[(Role, String, String)],
) -> io::Result<()> {
    let mut s = format!("Cluster has {} {kind} nodes:\n\n", nodes.len());
    for (i, (role, id, addr)) in nodes.iter().enumerate() {
        let _ = writeln!(s, "Node {i}({}): {id} {addr}", role.title());
    }
    s.push('\n');
    out.write_all(s.as_bytes())
}

/// Writes the `-q` line: `"<title>: <rps %.2f> requests per second, p50=<%.{precision}f> msec\n"`.
/// The caller clears the progress line first.
/// A command mix writes one line per command first, then the total (`commands`).
pub fn write_quiet(out: &mut impl Write, ctx: &ReportContext, r: &TestResult) -> io::Result<()> {
    for c in &r.commands {
        write_quiet(out, ctx, &super::commands::view(r, c))?;
    }
    let line = format!(
        "{}: {:.2} {} per second, p50={:.p$} msec\n",
        r.title,
        r.throughput(),
        ctx.operations.plural(),
        ms(r.latency.value_at_percentile_ns(50.0) as f64),
        p = ctx.precision
    );
    out.write_all(line.as_bytes())
}

/// Writes the `--csv` header line (once per run, before the first test).
pub fn write_csv_header(out: &mut impl Write) -> io::Result<()> {
    out.write_all(
        b"\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\
          \"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n",
    )
}

/// Writes one `--csv` row: every field double-quoted, rps with 2 decimals, the six latencies
/// (avg min p50 p95 p99 max, ms) with `ctx.precision` decimals.
///
/// The title is escaped by doubling any `"` in it (RFC 4180). valkey-benchmark writes it raw,
/// so a custom command containing `"` breaks its CSV; titles without `"` are byte-identical.
///
/// A command mix writes one row per command first, then the total (`commands`).
pub fn write_csv_row(out: &mut impl Write, ctx: &ReportContext, r: &TestResult) -> io::Result<()> {
    for c in &r.commands {
        write_csv_row(out, ctx, &super::commands::view(r, c))?;
    }
    let p = ctx.precision;
    let mut s = String::with_capacity(128);
    let _ = write!(
        s,
        "\"{}\",\"{:.2}\"",
        r.title.replace('"', "\"\""),
        r.throughput()
    );
    for v in LatencyFigures::of(&r.latency).as_array() {
        let _ = write!(s, ",\"{v:.p$}\"");
    }
    s.push('\n');
    out.write_all(s.as_bytes())
}

/// What the live progress line shows.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Test title, as in the report.
    pub title: &'a str,
    /// Completions per second over the last interval.
    pub interval_rps: f64,
    /// Completions per second since the test (or warmup) started.
    pub overall_rps: f64,
    /// Mean latency over the last interval, ms.
    pub interval_avg_ms: f64,
    /// Mean latency since the test (or warmup) started, ms.
    pub overall_avg_ms: f64,
    /// How far the test is.
    pub phase: ProgressPhase,
    /// Seconds without a completed request: from 1 s on the line says "no replies for N s", so
    /// a stalled server is not mistaken for a hung respbench.
    pub stalled_secs: f64,
}

/// The progress line's trailing counter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProgressPhase {
    /// `-n` mode: requests completed so far.
    Requests(u64),
    /// `--duration` mode or warmup: seconds elapsed; warmup lines start with "Warming up ".
    Seconds { elapsed: f64, warming_up: bool },
}

/// Appends the live progress line's content to `out` (clear `out` first when reusing it):
/// `"[Warming up ]<title>: rps=%.1f (overall: %.1f) avg_msec=%.3f (overall: %.3f) <N> requests"`
/// in `-n` mode, or `"... %.1f seconds"` in `--duration` mode and during warmup. Without the
/// leading blanking of the previous line or the trailing `\r`: the caller does terminal control.
pub fn progress_line(out: &mut String, p: &Progress) {
    if let ProgressPhase::Seconds {
        warming_up: true, ..
    } = p.phase
    {
        out.push_str("Warming up ");
    }
    let _ = write!(
        out,
        "{}: rps={:.1} (overall: {:.1}) avg_msec={:.3} (overall: {:.3}) ",
        p.title, p.interval_rps, p.overall_rps, p.interval_avg_ms, p.overall_avg_ms
    );
    let _ = match p.phase {
        ProgressPhase::Requests(n) => write!(out, "{n} requests"),
        ProgressPhase::Seconds { elapsed, .. } => write!(out, "{elapsed:.1} seconds"),
    };
    if p.stalled_secs >= 1.0 {
        let _ = write!(out, " - no replies for {:.0} s", p.stalled_secs.floor());
    }
}

/// One line (without a trailing newline) for `-q`/`--csv` users, who do not see the full
/// report, to be written to stderr so stdout stays byte-compatible: only what went wrong or could
/// not be done, because harnesses treat any output on stderr as a failure and a successful run
/// must leave it empty (pushes and cluster redirects are in the full report). Empty when there is
/// nothing to say. Parts, joined by `"; "` after `"<title>: "`:
/// `interrupted (partial results: measured until Ctrl-C)` or
/// `aborted (partial results: measured until the error)`;
/// `500 error replies (WRONGTYPE 480, ERR 20), not counted as completed`;
/// `target RPS not reached: achieved 9012.50 requests per second (90.1% of target)`.
pub fn side_notes(r: &TestResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    match r.outcome {
        Outcome::Completed => {}
        Outcome::Interrupted(signal) => {
            parts.push(format!(
                "interrupted (partial results: measured until {})",
                signal.name()
            ));
        }
        Outcome::Aborted => {
            parts.push("aborted (partial results: measured until the error)".into());
        }
    }
    if !r.errors.is_empty() {
        let total = r.errors.total();
        let words: Vec<String> = r
            .errors
            .sorted()
            .iter()
            .map(|(word, count)| format!("{word} {count}"))
            .collect();
        let what = match (r.errors.has_failures_without_reply(), total == 1) {
            (true, _) => "failed",
            (false, true) => "error reply",
            (false, false) => "error replies",
        };
        parts.push(format!(
            "{total} {what} ({}), not counted as completed",
            words.join(", ")
        ));
    }
    if r.unanswered > 0 {
        parts.push(format!(
            "{} unanswered ({})",
            r.unanswered,
            unanswered_why(r)
        ));
    }
    if r.reconnect_attempts > 0 {
        let mut part = format!(
            "{} reconnects of {} attempts",
            r.reconnects, r.reconnect_attempts
        );
        if r.reconnect_refusals > 0 {
            let _ = write!(part, " ({} refused)", r.reconnect_refusals);
        }
        parts.push(part);
    }
    if r.completed == 0 && r.issued > 0 {
        parts.push("no request completed".into());
    }
    if let Some((achieved, percent)) = rps_shortfall(r) {
        parts.push(format!(
            "target RPS not reached: achieved {achieved:.2} requests per second \
             ({percent:.1}% of target)"
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}: {}", r.title, parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Signal;
    use std::time::Duration;

    fn result(title: &str) -> TestResult {
        TestResult::empty(title, None, Outcome::Completed)
    }

    #[test]
    fn progress_line_requests_mode() {
        let mut s = String::new();
        progress_line(
            &mut s,
            &Progress {
                title: "SET",
                interval_rps: 70892.0,
                overall_rps: 69878.06,
                interval_avg_ms: 0.3854,
                overall_avg_ms: 0.398,
                phase: ProgressPhase::Requests(612482),
                stalled_secs: 0.5,
            },
        );
        assert_eq!(
            s,
            "SET: rps=70892.0 (overall: 69878.1) avg_msec=0.385 (overall: 0.398) 612482 requests"
        );
        s.clear();
        progress_line(
            &mut s,
            &Progress {
                title: "SET",
                interval_rps: 0.0,
                overall_rps: 1.0,
                interval_avg_ms: 0.0,
                overall_avg_ms: 0.3,
                phase: ProgressPhase::Requests(7),
                stalled_secs: 3.4,
            },
        );
        assert!(s.ends_with("7 requests - no replies for 3 s"), "{s}");
    }

    #[test]
    fn progress_line_seconds_and_warmup_and_appends() {
        let mut s = String::from(">");
        let mut p = Progress {
            title: "GET",
            interval_rps: 1.25,
            overall_rps: 2.0,
            interval_avg_ms: 0.1,
            overall_avg_ms: 0.2,
            phase: ProgressPhase::Seconds {
                elapsed: 3.26,
                warming_up: false,
            },
            stalled_secs: 0.0,
        };
        progress_line(&mut s, &p);
        assert_eq!(
            s,
            ">GET: rps=1.2 (overall: 2.0) avg_msec=0.100 (overall: 0.200) 3.3 seconds"
        );
        s.clear();
        p.phase = ProgressPhase::Seconds {
            elapsed: 0.5,
            warming_up: true,
        };
        progress_line(&mut s, &p);
        assert_eq!(
            s,
            "Warming up GET: rps=1.2 (overall: 2.0) avg_msec=0.100 (overall: 0.200) 0.5 seconds"
        );
    }

    #[test]
    fn side_notes_empty_when_nothing_to_say() {
        let mut r = result("SET");
        assert_eq!(side_notes(&r), "");
        r.target_rps = Some(100);
        r.completed = 100;
        r.elapsed = Duration::from_secs(1);
        assert_eq!(side_notes(&r), "", "target reached");
    }

    #[test]
    fn side_notes_say_what_failed_without_a_reply() {
        let mut r = result("SET");
        r.issued = 10;
        r.errors.record_kind("timeout", 6);
        r.errors.record_kind("connection reset", 1);
        r.unanswered = 3;
        r.reconnect_attempts = 4;
        r.reconnects = 2;
        assert_eq!(
            side_notes(&r),
            "SET: 7 failed (timeout 6, connection reset 1), not counted as completed; \
             3 unanswered (no reply within the 5 s grace after --duration; not in the latency \
             figures); 2 reconnects of 4 attempts; no request completed"
        );
        r.reconnect_refusals = 1;
        assert!(side_notes(&r).contains("; 2 reconnects of 4 attempts (1 refused);"));
        r.reconnect_refusals = 0;
        let mut v = Vec::new();
        let ctx = ReportContext {
            precision: 3,
            ..Default::default()
        };
        write_full(&mut v, &ctx, &r).unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(s.contains(
            "  failed (error replies, timeouts, lost connections): 7 (not counted as completed)\n    \
             timeout: 6\n    connection reset: 1\n  unanswered: 3 (no reply within the 5 s grace \
             after --duration; not in the latency figures)\n  reconnects: 2 of 4 attempts\n"
        ));
        assert!(
            s.ends_with("no request completed: no latency figures\n"),
            "{s}"
        );
        assert!(!s.contains("0.000"), "{s}");
    }

    #[test]
    fn side_notes_lists_everything() {
        let mut r = result("SET");
        for _ in 0..20 {
            r.errors.record(b"ERR something");
        }
        for _ in 0..480 {
            r.errors.record(b"WRONGTYPE Operation against a key");
        }
        assert_eq!(
            side_notes(&r),
            "SET: 500 error replies (WRONGTYPE 480, ERR 20), not counted as completed"
        );
        r.outcome = Outcome::Interrupted(Signal::Interrupt);
        r.pushes.invalidations = 1;
        r.target_rps = Some(1000);
        r.completed = 900;
        r.elapsed = Duration::from_secs(1);
        assert_eq!(
            side_notes(&r),
            "SET: interrupted (partial results: measured until Ctrl-C); 500 error replies \
             (WRONGTYPE 480, ERR 20), not counted as completed; target RPS not reached: achieved 900.00 requests per second (90.0% of target)"
        );
        let mut one = result("GET");
        one.errors.record(b"NOAUTH");
        one.outcome = Outcome::Aborted;
        one.pushes.messages = 2;
        one.pushes.other = 1;
        assert_eq!(
            side_notes(&one),
            "GET: aborted (partial results: measured until the error); 1 error reply \
             (NOAUTH 1), not counted as completed"
        );
    }

    #[test]
    fn rps_figures_nearest_rank() {
        assert_eq!(rps_figures(&[]), [0.0; 6]);
        let samples: Vec<f64> = (1..=20).rev().map(|v| v as f64 * 10.0).collect();
        // n = 20: p50 -> rank 10, p95 -> rank 19, p99 -> rank 20.
        assert_eq!(
            rps_figures(&samples),
            [105.0, 10.0, 100.0, 190.0, 200.0, 200.0]
        );
        assert_eq!(rps_figures(&[7.0]), [7.0; 6]);
    }

    #[test]
    fn uncorrected_threshold() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for _ in 0..100 {
            a.record(1_000_000);
            b.record(1_000_000);
        }
        assert!(!uncorrected_differs(&a, &b));
        assert!(!uncorrected_differs(&a, &LatencyHistogram::new()));
        // 0.5% larger max: below 1%.
        a.record(1_005_000);
        b.record(1_000_000);
        assert!(!uncorrected_differs(&a, &b));
        // 1 µs tiny values: 100% relative but under 1 µs absolute.
        let mut c = LatencyHistogram::new();
        let mut d = LatencyHistogram::new();
        c.record(900);
        d.record(1_800);
        assert!(!uncorrected_differs(&c, &d));
        // 5 ms max against 1 ms: differs.
        a.record(5_000_000);
        b.record(1_000_000);
        assert!(uncorrected_differs(&a, &b));
    }

    #[test]
    fn csv_header_exact() {
        let mut v = Vec::new();
        write_csv_header(&mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\
             \"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n"
        );
    }

    #[test]
    fn csv_row_escapes_quotes() {
        let mut r = result("set \"a\" b");
        r.latency.record(262_000);
        r.completed = 131_752;
        r.elapsed = Duration::from_secs(1);
        let ctx = ReportContext {
            precision: 3,
            ..Default::default()
        };
        let mut v = Vec::new();
        write_csv_row(&mut v, &ctx, &r).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "\"set \"\"a\"\" b\",\"131752.00\",\"0.262\",\"0.262\",\"0.262\",\"0.262\",\"0.262\",\"0.262\"\n"
        );
    }

    #[test]
    fn invalidation_line_always_shown_with_tracking() {
        let render = |ctx: &ReportContext, r: &TestResult| {
            let mut v = Vec::new();
            write_full(&mut v, ctx, r).unwrap();
            String::from_utf8(v).unwrap()
        };
        let mut ctx = ReportContext {
            precision: 3,
            ..Default::default()
        };
        let mut r = result("GET");
        assert!(!render(&ctx, &r).contains("invalidation"));
        ctx.tracking = true;
        assert!(
            render(&ctx, &r).contains("  multi-thread: no\n  invalidation messages: 0\n\n"),
            "{}",
            render(&ctx, &r)
        );
        assert_eq!(side_notes(&r), "", "no side note for zero");
        r.pushes.invalidations = 12;
        r.pushes.other = 1;
        assert!(
            render(&ctx, &r).contains("  invalidation messages: 12\n  other push messages: 1\n\n")
        );
        // Pushes are not a problem: nothing on stderr for -q/--csv.
        assert_eq!(side_notes(&r), "");
    }

    #[test]
    fn threads_zero_is_single_threaded() {
        let r = result("PING");
        let ctx = ReportContext {
            threads: Some(0),
            precision: 3,
            ..Default::default()
        };
        let mut v = Vec::new();
        write_full(&mut v, &ctx, &r).unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(
            s.contains("  multi-thread: no\n\nLatency by percentile"),
            "{s}"
        );
    }
}
