//! memtier's result rows (`Sets`, `Gets`, `Waits`, `Totals`, or one per `--command`) worked
//! out from respbench's record (`record::Document`): one [`Block`] per run, and the
//! `--run-count` BEST / WORST / AGGREGATED AVERAGE blocks from those.
//!
//! Latencies are memtier's unit, milliseconds. A command row's latency is the command's
//! histogram (respbench's corrected one, equal to the time from send without `--rate-limiting`);
//! the Totals row's memtier columns are from send to reply (`uncorrected`), memtier's meaning,
//! and the corrected figure rides beside it ([`Row::corrected`]).

use crate::compare::input::spectrum;
use crate::record::TestRecord;
use crate::record::document::{LatencySummary, MixRecord};

/// One row of a results table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// `Sets`, `Gets`, `Waits`, `Totals`, or the command's name (`Hsets`).
    pub name: String,
    pub count: u64,
    pub ops: f64,
    /// Hits and misses per second: replies with a value and nil replies to a read, counted from
    /// the replies (`None`: a row that has none, printed `---`).
    pub hits: Option<f64>,
    pub misses: Option<f64>,
    /// `None` for a row without requests (printed `---`).
    pub avg_ms: Option<f64>,
    pub min_ms: f64,
    pub max_ms: f64,
    /// `(percentile, ms)` in the order asked (`--print-percentiles`).
    pub percentiles: Vec<(f64, f64)>,
    /// Bytes per second each way, estimated from the request and reply sizes.
    pub kb_tx: f64,
    pub kb_rx: f64,
    /// respbench's coordinated-omission-corrected latency (Totals only), in ms.
    pub corrected: Option<Corrected>,
}

/// respbench's corrected latency beside memtier's figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Corrected {
    pub avg_ms: f64,
    pub percentiles: Vec<(f64, f64)>,
}

/// One results table: a run's, or an aggregate's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub title: String,
    pub rows: Vec<Row>,
    pub start_ms: u64,
    pub finish_ms: u64,
    pub interrupted: bool,
}

impl Block {
    /// The Totals row (the last one).
    pub fn totals(&self) -> Option<&Row> {
        self.rows.last()
    }
}

/// Sizes that go into the byte estimate: the key's length and the value's.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub key: usize,
    pub value: usize,
}

/// A run's table from its test record.
pub fn block(title: String, t: &TestRecord, pcts: &[f64], sizes: Sizes) -> Block {
    let mut rows = Vec::new();
    let secs = t.duration_s.max(f64::MIN_POSITIVE);
    let ratio_mix = t.mix.iter().any(|m| m.name == "SET")
        && t.mix
            .iter()
            .all(|m| m.name == "SET" || m.name == "GET" || is_wait(&m.name));
    let waits: Vec<&MixRecord> = t.mix.iter().filter(|m| is_wait(&m.name)).collect();
    for m in t.mix.iter().filter(|m| !ratio_mix || !is_wait(&m.name)) {
        let name = row_name(&m.name);
        let is_get = m.name == "GET";
        let mut row = latency_row(name, m.completed, &m.latency_us, &m.histogram, pcts);
        row.ops = m.throughput_rps;
        if is_get {
            let hits = m.hits.unwrap_or(0) as f64;
            let misses = m.misses.unwrap_or(0) as f64;
            row.hits = Some(hits / secs);
            row.misses = Some(misses / secs);
            let (tx, rx) = get_bytes(sizes, m.hits.unwrap_or(0), m.misses.unwrap_or(0));
            (row.kb_tx, row.kb_rx) = (tx / secs / 1024.0, rx / secs / 1024.0);
        } else if m.name == "SET" {
            let (tx, rx) = set_bytes(sizes, m.completed);
            (row.kb_tx, row.kb_rx) = (tx / secs / 1024.0, rx / secs / 1024.0);
        }
        rows.push(row);
    }
    if t.mix.is_empty() {
        let mut row = latency_row(
            row_name(&t.name),
            t.requests.completed,
            &t.latency_us.uncorrected,
            &t.histograms.uncorrected,
            pcts,
        );
        row.ops = t.throughput_rps;
        rows.push(row);
    }
    if ratio_mix && !t.mix.iter().any(|m| m.name == "GET") {
        rows.push(Row {
            name: "Gets".into(),
            hits: Some(0.0),
            misses: Some(0.0),
            ..Row::default()
        });
    }
    if ratio_mix || t.mix.iter().any(|m| m.name == "GET") {
        if !rows.iter().any(|r| r.name == "Sets") {
            rows.insert(
                0,
                Row {
                    name: "Sets".into(),
                    ..Row::default()
                },
            );
        }
        rows.push(match waits.as_slice() {
            [] => Row {
                name: "Waits".into(),
                ..Row::default()
            },
            ws => waits_row(ws, pcts),
        });
    }
    // memtier writes every percentile key for a row without requests too (its scripts index
    // them unconditionally): zeros.
    for r in rows.iter_mut().filter(|r| r.percentiles.is_empty()) {
        r.percentiles = pcts.iter().map(|&p| (p, 0.0)).collect();
    }
    let mut total = latency_row(
        "Totals".into(),
        t.requests.completed,
        &t.latency_us.uncorrected,
        &t.histograms.uncorrected,
        pcts,
    );
    total.ops = t.throughput_rps;
    total.hits = sum_opt(rows.iter().map(|r| r.hits));
    total.misses = sum_opt(rows.iter().map(|r| r.misses));
    total.kb_tx = rows.iter().map(|r| r.kb_tx).sum();
    total.kb_rx = rows.iter().map(|r| r.kb_rx).sum();
    total.corrected = Some(Corrected {
        avg_ms: t.latency_us.corrected.avg / 1000.0,
        percentiles: percentiles(&t.latency_us.corrected, &t.histograms.corrected, pcts),
    });
    rows.push(total);
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

fn latency_row(name: String, count: u64, s: &LatencySummary, hist: &str, pcts: &[f64]) -> Row {
    Row {
        name,
        count,
        avg_ms: (count > 0).then_some(s.avg / 1000.0),
        min_ms: s.min / 1000.0,
        max_ms: s.max / 1000.0,
        percentiles: if count > 0 {
            percentiles(s, hist, pcts)
        } else {
            Vec::new()
        },
        ..Row::default()
    }
}

/// `pcts` from the histogram (nanoseconds) when the record kept it, else the summary's.
fn percentiles(s: &LatencySummary, hist: &str, pcts: &[f64]) -> Vec<(f64, f64)> {
    let decoded = (!hist.is_empty()).then(|| spectrum::decode(hist)).flatten();
    pcts.iter()
        .map(|&p| {
            let us = match &decoded {
                Some(h) if !h.is_empty() => h.value_at_percentile(p) as f64 / 1000.0,
                _ => summary_at(s, p),
            };
            (p, us / 1000.0)
        })
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

/// RESP bytes of `SET key value` and its `+OK` (TX, RX) for `n` requests.
fn set_bytes(s: Sizes, n: u64) -> (f64, f64) {
    let tx = 4 + 9 + bulk(s.key) + bulk(s.value);
    (n as f64 * tx as f64, n as f64 * 5.0)
}

/// RESP bytes of `GET key` and its replies: the value for a hit, `$-1` for a miss.
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
/// average of every figure over the runs.
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

/// Every figure averaged over the runs, row by row (the runs have the same rows).
fn average(runs: &[Block]) -> Block {
    let n = runs.len() as f64;
    let mut out = runs[0].clone();
    out.start_ms = 0;
    out.finish_ms = 0;
    for (i, row) in out.rows.iter_mut().enumerate() {
        let rows: Vec<&Row> = runs.iter().filter_map(|b| b.rows.get(i)).collect();
        let mean = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        row.count = rows.iter().map(|r| r.count).sum::<u64>() / runs.len() as u64;
        row.ops = mean(&|r| r.ops);
        row.hits = row.hits.map(|_| mean(&|r| r.hits.unwrap_or(0.0)));
        row.misses = row.misses.map(|_| mean(&|r| r.misses.unwrap_or(0.0)));
        row.avg_ms = row.avg_ms.map(|_| mean(&|r| r.avg_ms.unwrap_or(0.0)));
        row.min_ms = rows.iter().map(|r| r.min_ms).fold(f64::INFINITY, f64::min);
        row.max_ms = rows.iter().map(|r| r.max_ms).fold(0.0, f64::max);
        for (k, p) in row.percentiles.iter_mut().enumerate() {
            p.1 = mean(&|r| r.percentiles.get(k).map_or(0.0, |x| x.1));
        }
        row.kb_tx = mean(&|r| r.kb_tx);
        row.kb_rx = mean(&|r| r.kb_rx);
        if let Some(c) = &mut row.corrected {
            c.avg_ms = mean(&|r| r.corrected.as_ref().map_or(0.0, |c| c.avg_ms));
            for (k, p) in c.percentiles.iter_mut().enumerate() {
                p.1 = mean(&|r| {
                    r.corrected
                        .as_ref()
                        .and_then(|c| c.percentiles.get(k))
                        .map_or(0.0, |x| x.1)
                });
            }
        }
    }
    out
}

/// A WAIT command of the `--ratio` mix (`--wait-ratio`; one per replica count: `WAIT`,
/// `WAIT#2`, ...).
fn is_wait(name: &str) -> bool {
    name == "WAIT" || name.starts_with("WAIT#")
}

/// memtier's `Waits` row: every WAIT command of the mix together (their histograms added).
fn waits_row(ws: &[&MixRecord], pcts: &[f64]) -> Row {
    let count: u64 = ws.iter().map(|m| m.completed).sum();
    let mut row = match ws {
        [only] => latency_row(
            "Waits".into(),
            count,
            &only.latency_us,
            &only.histogram,
            pcts,
        ),
        _ => {
            let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
            for h in ws.iter().filter_map(|m| spectrum::decode(&m.histogram)) {
                match &mut merged {
                    Some(m) => {
                        let _ = m.add(&h);
                    }
                    None => merged = Some(h),
                }
            }
            let sum_us: f64 = ws
                .iter()
                .map(|m| m.latency_us.avg * m.completed as f64)
                .sum();
            Row {
                name: "Waits".into(),
                count,
                avg_ms: (count > 0).then(|| sum_us / count as f64 / 1000.0),
                min_ms: ws.iter().map(|m| m.latency_us.min).fold(f64::MAX, f64::min) / 1000.0,
                max_ms: ws.iter().map(|m| m.latency_us.max).fold(0.0, f64::max) / 1000.0,
                percentiles: match (&merged, count > 0) {
                    (Some(h), true) => pcts
                        .iter()
                        .map(|&p| (p, h.value_at_percentile(p) as f64 / 1e6))
                        .collect(),
                    _ => Vec::new(),
                },
                ..Row::default()
            }
        }
    };
    row.ops = ws.iter().map(|m| m.throughput_rps).sum();
    row
}
