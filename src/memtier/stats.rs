//! memtier's result rows (`Sets`, `Gets`, `Waits`, `Totals`, or one per `--command`) worked
//! out from respbench's record (`record::Document`): one [`Block`] per run, and the
//! `--run-count` BEST / WORST / AGGREGATED AVERAGE blocks from those.
//!
//! Every figure keeps memtier's meaning, so that a table is consistent with itself as memtier's
//! is: a command row's latency is from the write to the reply (the mix entry's `uncorrected`;
//! respbench's corrected one rides beside it, [`Row::corrected`]), its KB/sec the bytes of its
//! answered requests and their replies; and `Totals` is the aggregate of the rows above it
//! (counts, rates and bytes added, latencies from their histograms merged, memtier's
//! `m_totals`), never a second measurement of its own. Latencies are memtier's unit,
//! milliseconds.

use hdrhistogram::Histogram;

use crate::record::document::{LatencySummary, MixRecord};
use crate::record::{TestRecord, hdr};

/// One row of a results table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// `Sets`, `Gets`, `Waits`, `Totals`, or the command's name (`Hsets`).
    pub name: String,
    pub count: u64,
    /// Of `count`, the error replies: counted as memtier does, but not in the latency figures
    /// (respbench times successful replies only), so merged rows weigh by `count - errors`.
    pub errors: u64,
    pub ops: f64,
    /// Hits and misses per second: replies with a value and nil replies to a read, counted from
    /// the replies (`None`: a row that has none, printed `---`).
    pub hits: Option<f64>,
    pub misses: Option<f64>,
    /// memtier's latency: from the write to the reply.
    pub latency: Latencies,
    /// Bytes per second each way: the answered requests as written and their replies as read.
    pub kb_tx: f64,
    pub kb_rx: f64,
    /// respbench's coordinated-omission-corrected latency of the same requests (`None`: a row
    /// without requests).
    pub corrected: Option<Latencies>,
    /// `--cluster-mode`: MOVED and ASK redirects per second (`None`: printed `---`;
    /// `redirects.rs` says when a row has them).
    pub moved: Option<f64>,
    pub ask: Option<f64>,
}

/// A row's latency figures, in ms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies {
    /// `None` for a row without requests (printed `---`).
    pub avg_ms: Option<f64>,
    pub min_ms: f64,
    pub max_ms: f64,
    /// `(percentile, ms)` in the order asked (`--print-percentiles`).
    pub percentiles: Vec<(f64, f64)>,
    /// The histogram (ns) the figures come from: what `Totals` and the aggregates merge (`None`
    /// when the record kept none).
    pub hist: Option<Histogram<u64>>,
}

/// One results table: a run's, or an aggregate's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub title: String,
    pub rows: Vec<Row>,
    pub start_ms: u64,
    pub finish_ms: u64,
    pub interrupted: bool,
    /// memtier's arbitrary-command table (`--command`): a row per command and no Hits/Misses
    /// columns, rather than Sets/Gets/Waits.
    pub arbitrary: bool,
    /// `--cluster-mode`: the table has memtier's MOVED/sec and ASK/sec columns.
    pub cluster: bool,
}

impl Block {
    /// The Totals row (the last one).
    pub fn totals(&self) -> Option<&Row> {
        self.rows.last()
    }
}

/// Sizes that go into the byte estimate of a record without byte counts: the key's length and
/// the value's.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub key: usize,
    pub value: usize,
}

/// How a run's table is laid out and worked out.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    pub pcts: &'a [f64],
    pub sizes: Sizes,
    /// memtier's `--command` table (see [`Block::arbitrary`]).
    pub arbitrary: bool,
    /// `--cluster-mode` (see [`Block::cluster`]).
    pub cluster: bool,
}

/// The latency memtier's columns show for a mix command: from the write to the reply, its
/// summary and histogram. A record of an earlier build kept only the corrected one, which
/// stands in (the same without `--rate-limiting`, bar the first request of a connection).
pub fn sent_latency(m: &MixRecord) -> (&LatencySummary, &str) {
    match &m.uncorrected {
        Some(u) => (&u.latency_us, &u.histogram),
        None => (&m.latency_us, &m.histogram),
    }
}

/// A run's table from its test record.
pub fn block(title: String, t: &TestRecord, layout: Layout<'_>) -> Block {
    let secs = t.duration_s.max(f64::MIN_POSITIVE);
    let pcts = layout.pcts;
    let mut rows: Vec<Row> = t
        .mix
        .iter()
        .filter(|m| layout.arbitrary || !is_wait(&m.name))
        .map(|m| command_row(m, secs, layout))
        .collect();
    if t.mix.is_empty() {
        // A test of one command without a mix (a record of another mode): its totals.
        let count = t.requests.completed;
        rows.push(Row {
            name: row_name(&t.name),
            count,
            ops: t.throughput_rps,
            latency: latencies(
                count,
                &t.latency_us.uncorrected,
                &t.histograms.uncorrected,
                pcts,
            ),
            corrected: (count > 0).then(|| {
                latencies(
                    count,
                    &t.latency_us.corrected,
                    &t.histograms.corrected,
                    pcts,
                )
            }),
            ..Row::default()
        });
    }
    if !layout.arbitrary {
        rows = sets_gets_waits(rows, t, pcts);
    }
    rows.push(totals(&rows, pcts));
    zero_percentiles(&mut rows, pcts);
    if layout.cluster {
        let counts: Vec<u64> = rows.iter().map(|r| r.count).collect();
        let rates = super::redirects::per_row(&counts, t, secs);
        for (r, (moved, ask)) in rows.iter_mut().zip(rates) {
            (r.moved, r.ask) = (moved, ask);
        }
    }
    let start_ms = t
        .started_at
        .as_deref()
        .and_then(crate::timestamp::parse_time)
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Block {
        title,
        rows,
        start_ms,
        finish_ms: start_ms + (t.duration_s * 1000.0).round() as u64,
        interrupted: t.outcome != "completed",
        arbitrary: layout.arbitrary,
        cluster: layout.cluster,
    }
}

/// A mix command's row: its count and rate, hits and misses (a read's), latencies and bytes.
fn command_row(m: &MixRecord, secs: f64, layout: Layout<'_>) -> Row {
    let (sent, sent_hist) = sent_latency(m);
    let is_get = m.name == "GET";
    let (kb_tx, kb_rx) = match (m.bytes, m.name.as_str()) {
        (Some(b), _) => (b.tx as f64, b.rx as f64),
        (None, "SET") => set_bytes(layout.sizes, m.completed),
        (None, "GET") => get_bytes(layout.sizes, m.hits.unwrap_or(0), m.misses.unwrap_or(0)),
        (None, _) => (0.0, 0.0),
    };
    // memtier counts an error reply as an answered request of its command (it goes on); its
    // latency is not in respbench's histograms, which hold successful replies only.
    let count = m.completed + m.failed;
    Row {
        name: row_name(&m.name),
        count,
        errors: m.failed,
        ops: if m.failed == 0 {
            m.throughput_rps
        } else {
            count as f64 / secs
        },
        hits: (is_get && !layout.arbitrary).then(|| m.hits.unwrap_or(0) as f64 / secs),
        misses: (is_get && !layout.arbitrary).then(|| m.misses.unwrap_or(0) as f64 / secs),
        latency: latencies(m.completed, sent, sent_hist, layout.pcts),
        kb_tx: kb_tx / secs / 1024.0,
        kb_rx: kb_rx / secs / 1024.0,
        corrected: (m.completed > 0)
            .then(|| latencies(m.completed, &m.latency_us, &m.histogram, layout.pcts)),
        ..Row::default()
    }
}

/// memtier's `--ratio` table: Sets, Gets and Waits in that order, each present (a row without
/// requests when the run sent none), the WAITs of `--wait-ratio` together in Waits.
fn sets_gets_waits(rows: Vec<Row>, t: &TestRecord, pcts: &[f64]) -> Vec<Row> {
    let empty = |name: &str, reads: bool| Row {
        name: name.into(),
        hits: reads.then_some(0.0),
        misses: reads.then_some(0.0),
        ..Row::default()
    };
    let mut out = Vec::with_capacity(rows.len() + 3);
    let mut rest = Vec::new();
    let (mut sets, mut gets) = (None, None);
    for r in rows {
        match r.name.as_str() {
            "Sets" if sets.is_none() => sets = Some(r),
            "Gets" if gets.is_none() => gets = Some(r),
            _ => rest.push(r),
        }
    }
    out.push(sets.unwrap_or_else(|| empty("Sets", false)));
    out.push(gets.unwrap_or_else(|| empty("Gets", true)));
    out.extend(rest);
    let waits: Vec<&MixRecord> = t.mix.iter().filter(|m| is_wait(&m.name)).collect();
    out.push(if waits.is_empty() {
        empty("Waits", false)
    } else {
        waits_row(&waits, pcts)
    });
    out
}

/// memtier's `Waits` row: every WAIT command of the mix together (their histograms added).
fn waits_row(ws: &[&MixRecord], pcts: &[f64]) -> Row {
    let parts: Vec<Row> = ws
        .iter()
        .map(|m| {
            let (sent, hist) = sent_latency(m);
            Row {
                count: m.completed,
                ops: m.throughput_rps,
                latency: latencies(m.completed, sent, hist, pcts),
                corrected: (m.completed > 0)
                    .then(|| latencies(m.completed, &m.latency_us, &m.histogram, pcts)),
                ..Row::default()
            }
        })
        .collect();
    aggregate("Waits", &parts, pcts)
}

/// memtier writes every percentile key for a row without requests too (its scripts index
/// them unconditionally): zeros.
fn zero_percentiles(rows: &mut [Row], pcts: &[f64]) {
    for r in rows.iter_mut().filter(|r| r.latency.percentiles.is_empty()) {
        r.latency.percentiles = pcts.iter().map(|&p| (p, 0.0)).collect();
    }
}

/// The Totals row: the aggregate of `rows`, as memtier's `m_totals` (hits and misses only
/// where some row has them).
fn totals(rows: &[Row], pcts: &[f64]) -> Row {
    aggregate("Totals", rows, pcts)
}

/// `parts` added up into one row: counts, rates and bytes summed, latencies from the parts'
/// histograms merged (the average weighted by the counts).
fn aggregate(name: &str, parts: &[Row], pcts: &[f64]) -> Row {
    let weighted = |f: &dyn Fn(&Row) -> Option<&Latencies>| -> Vec<(u64, &Latencies)> {
        parts
            .iter()
            .filter_map(|r| f(r).map(|l| (r.count - r.errors.min(r.count), l)))
            .collect()
    };
    let count = parts.iter().map(|r| r.count).sum();
    Row {
        name: name.into(),
        count,
        errors: parts.iter().map(|r| r.errors).sum(),
        ops: parts.iter().map(|r| r.ops).sum(),
        hits: sum_opt(parts.iter().map(|r| r.hits)),
        misses: sum_opt(parts.iter().map(|r| r.misses)),
        latency: merged(&weighted(&|r| Some(&r.latency)), pcts),
        kb_tx: parts.iter().map(|r| r.kb_tx).sum(),
        kb_rx: parts.iter().map(|r| r.kb_rx).sum(),
        corrected: (count > 0).then(|| merged(&weighted(&|r| r.corrected.as_ref()), pcts)),
        // A sum of the parts only when each part has its figure (the runs of `--run-count`);
        // a block's Totals get the test's own (`redirects::per_row`).
        moved: all_of(parts.iter().map(|r| r.moved)),
        ask: all_of(parts.iter().map(|r| r.ask)),
    }
}

/// The sum when every value is known.
fn all_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.sum()
}

/// Latency figures of the requests of several parts together (`(count, figures)` each): from
/// their histograms merged, or, when a part with requests has none, the average weighted by
/// the counts and each percentile's weighted mean (an estimate; the record then kept no
/// histograms).
fn merged(parts: &[(u64, &Latencies)], pcts: &[f64]) -> Latencies {
    let busy: Vec<&(u64, &Latencies)> = parts.iter().filter(|(n, _)| *n > 0).collect();
    let count: u64 = busy.iter().map(|(n, _)| n).sum();
    match busy.as_slice() {
        [] => return Latencies::default(),
        // One part: its own figures, exactly (an all-SET run's Totals is its Sets row).
        [(_, only)] => return (*only).clone(),
        _ => {}
    }
    let mean = |f: &dyn Fn(&Latencies) -> f64| {
        busy.iter().map(|(n, l)| *n as f64 * f(l)).sum::<f64>() / count as f64
    };
    let mut hist: Option<Histogram<u64>> = None;
    let mut complete = true;
    for (_, l) in &busy {
        match (&mut hist, &l.hist) {
            (_, None) => complete = false,
            (None, Some(h)) => hist = Some(h.clone()),
            (Some(m), Some(h)) => complete &= m.add(h).is_ok(),
        }
    }
    let hist = hist.filter(|_| complete);
    let percentiles = match &hist {
        Some(h) => at_percentiles(h, pcts),
        None => (0..pcts.len())
            .map(|k| {
                (
                    pcts[k],
                    mean(&|l| l.percentiles.get(k).map_or(0.0, |p| p.1)),
                )
            })
            .collect(),
    };
    Latencies {
        avg_ms: Some(mean(&|l| l.avg_ms.unwrap_or(0.0))),
        min_ms: busy
            .iter()
            .map(|(_, l)| l.min_ms)
            .fold(f64::INFINITY, f64::min),
        max_ms: busy.iter().map(|(_, l)| l.max_ms).fold(0.0, f64::max),
        percentiles,
        hist,
    }
}

/// memtier's row name: `Sets`, `Gets`, else the command capitalised (`HSET#2` → `Hset#2s`).
fn row_name(command: &str) -> String {
    match command {
        "SET" => "Sets".into(),
        "GET" => "Gets".into(),
        other => {
            let lower = other.to_lowercase();
            let mut c = lower.chars();
            match c.next() {
                Some(first) => format!("{}{}s", first.to_uppercase(), c.as_str()),
                None => "Totals".into(),
            }
        }
    }
}

fn sum_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.fold(None, |acc, v| match (acc, v) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    })
}

/// The figures of `count` requests from their summary (µs) and histogram (ns, encoded; the
/// exact source when the record kept it).
fn latencies(count: u64, s: &LatencySummary, hist: &str, pcts: &[f64]) -> Latencies {
    if count == 0 {
        return Latencies::default();
    }
    let hist = (!hist.is_empty())
        .then(|| hdr::decode(hist))
        .flatten()
        .filter(|h| !h.is_empty());
    let percentiles = match &hist {
        Some(h) => at_percentiles(h, pcts),
        None => pcts
            .iter()
            .map(|&p| (p, summary_at(s, p) / 1000.0))
            .collect(),
    };
    Latencies {
        avg_ms: Some(s.avg / 1000.0),
        min_ms: s.min / 1000.0,
        max_ms: s.max / 1000.0,
        percentiles,
        hist,
    }
}

/// `pcts` of a histogram in ns, in ms.
fn at_percentiles(h: &Histogram<u64>, pcts: &[f64]) -> Vec<(f64, f64)> {
    pcts.iter()
        .map(|&p| (p, h.value_at_percentile(p) as f64 / 1e6))
        .collect()
}

/// The summary's nearest figure at or above `p` (the histogram is the exact source).
fn summary_at(s: &LatencySummary, p: f64) -> f64 {
    [
        (50.0, s.p50),
        (90.0, s.p90),
        (95.0, s.p95),
        (99.0, s.p99),
        (99.9, s.p99_9),
        (99.99, s.p99_99),
    ]
    .into_iter()
    .find(|(q, _)| *q >= p)
    .map_or(s.max, |(_, v)| v)
}

/// Estimated RESP bytes of `SET key value` and its `+OK` (TX, RX) for `n` requests (records of
/// earlier builds, which counted no bytes).
fn set_bytes(s: Sizes, n: u64) -> (f64, f64) {
    let tx = 4 + 9 + bulk(s.key) + bulk(s.value);
    (n as f64 * tx as f64, n as f64 * 5.0)
}

/// Estimated RESP bytes of `GET key` and its replies: the value for a hit, `$-1` for a miss.
fn get_bytes(s: Sizes, hits: u64, misses: u64) -> (f64, f64) {
    let tx = 4 + 9 + bulk(s.key);
    let rx = hits as f64 * bulk(s.value) as f64 + misses as f64 * 5.0;
    ((hits + misses) as f64 * tx as f64, rx)
}

/// `$<len>\r\n<bytes>\r\n`.
fn bulk(len: usize) -> usize {
    1 + len.to_string().len() + 2 + len + 2
}

/// `--run-count`'s blocks after the runs': the best and worst run by Totals ops/sec, and the
/// aggregate of the runs as memtier's: rates and bytes per second averaged over the runs,
/// counts added, latencies from each row's histograms of every run merged.
pub fn aggregates(runs: &[Block]) -> Vec<Block> {
    let by_ops = |b: &&Block| b.totals().map_or(0.0, |t| t.ops);
    let (Some(best), Some(worst)) = (
        runs.iter().max_by(|a, b| by_ops(a).total_cmp(&by_ops(b))),
        runs.iter().min_by(|a, b| by_ops(a).total_cmp(&by_ops(b))),
    ) else {
        return Vec::new();
    };
    let mut best = best.clone();
    best.title = "BEST RUN RESULTS".into();
    let mut worst = worst.clone();
    worst.title = "WORST RUN RESULTS".into();
    let mut avg = average(runs);
    avg.title = format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len());
    vec![best, worst, avg]
}

/// The runs' rows aggregated row by row (the runs have the same rows), the Totals row again
/// the aggregate of the others.
fn average(runs: &[Block]) -> Block {
    let n = runs.len() as f64;
    let first = &runs[0];
    let pcts: Vec<f64> = first
        .totals()
        .map(|t| t.latency.percentiles.iter().map(|p| p.0).collect())
        .unwrap_or_default();
    let mut rows = Vec::new();
    for (i, row) in first.rows.iter().enumerate().take(first.rows.len() - 1) {
        let same: Vec<Row> = runs.iter().filter_map(|b| b.rows.get(i)).cloned().collect();
        let mut r = aggregate(&row.name, &same, &pcts);
        r.ops /= n;
        r.hits = r.hits.map(|h| h / n);
        r.misses = r.misses.map(|m| m / n);
        (r.moved, r.ask) = (r.moved.map(|m| m / n), r.ask.map(|a| a / n));
        (r.kb_tx, r.kb_rx) = (r.kb_tx / n, r.kb_rx / n);
        rows.push(r);
    }
    let mut total = totals(&rows, &pcts);
    // The runs' own Totals figures, averaged (a row may not have its own).
    let run_totals: Vec<Row> = runs.iter().filter_map(|b| b.totals().cloned()).collect();
    let runs_total = aggregate("Totals", &run_totals, &pcts);
    (total.moved, total.ask) = (
        runs_total.moved.map(|m| m / n),
        runs_total.ask.map(|a| a / n),
    );
    rows.push(total);
    zero_percentiles(&mut rows, &pcts);
    Block {
        rows,
        start_ms: 0,
        finish_ms: 0,
        ..first.clone()
    }
}

/// A WAIT command of the `--ratio` mix (`--wait-ratio`; one per replica count: `WAIT`,
/// `WAIT#2`, ...).
fn is_wait(name: &str) -> bool {
    name == "WAIT" || name.starts_with("WAIT#")
}

#[cfg(test)]
mod tests;
