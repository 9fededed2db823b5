//! memtier's stdout: the header lines, a results table per block (`ALL STATS`, or `RUN #n
//! RESULTS` and the `--run-count` aggregates), then the latency distribution unless
//! `--hide-histogram`. Column widths are memtier 2.x's (the fixtures in `shared/fixtures`), so a
//! script that cuts its columns reads ours.

use std::fmt::Write as _;

use crate::record::shape::VerifyRecord;
use crate::record::{TestRecord, hdr};

use super::stats::{Block, Row, sent_latency};

/// The lines before the tables: threads, connections per thread, and the test's length.
pub fn header(threads: u32, clients: u32, length: &str) -> String {
    format!("{threads:<10}Threads\n{clients:<10}Connections per thread\n{length}\n\n\n")
}

/// `--data-verify`'s lines, as memtier writes them after the tables (its spelling kept: scripts
/// match it).
pub fn verification(v: &VerifyRecord) -> String {
    format!(
        "\n\nPerforming data verification...\nData verification completed:\n\
         {:<10} keys verified successfuly.\n{:<10} keys failed.\n",
        v.verified,
        v.missing + v.mismatched
    )
}

/// One results table. The Type column is as wide as its longest name (at least memtier's 6);
/// memtier's `--command` table has no Hits/sec and Misses/sec columns.
pub fn table(b: &Block, pcts: &[f64]) -> String {
    let w = b
        .rows
        .iter()
        .map(|r| shown(&r.name).len())
        .fold(6, usize::max);
    let mut head = format!("{:<w$}{:>14}", "Type", "Ops/sec");
    if !b.arbitrary {
        let _ = write!(head, "{:>13}{:>13}", "Hits/sec", "Misses/sec");
    }
    let _ = write!(head, "{:>16}", "Avg. Latency");
    for p in pcts {
        let _ = write!(head, "{:>16}", format!("p{p} Latency"));
    }
    let _ = write!(head, "{:>13} ", "KB/sec");
    let mut out = format!("{}\n", b.title);
    out.push_str(&"=".repeat(head.len()));
    out.push('\n');
    out.push_str(&head);
    out.push('\n');
    out.push_str(&"-".repeat(head.len()));
    out.push('\n');
    for r in &b.rows {
        out.push_str(&row(r, w, pcts.len(), !b.arbitrary));
        out.push('\n');
    }
    out
}

/// A row's name as memtier's table prints it: `--command-stats-breakdown=line`'s second line
/// of a command (`Set#2s`, a distinct JSON key) is `Sets` again, as memtier prints it.
fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    match name.split_once('#') {
        Some((command, rest)) => {
            let suffix = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{command}{suffix}").into()
        }
        None => name.into(),
    }
}

fn row(r: &Row, w: usize, n_pcts: usize, reads: bool) -> String {
    let opt = |v: Option<f64>, width: usize, digits: usize| match v {
        Some(v) => format!("{v:>width$.digits$}"),
        None => format!("{:>width$}", "---"),
    };
    let avg = r.latency.avg_ms;
    let mut s = format!("{:<w$}{:>14.2}", shown(&r.name), r.ops);
    if reads {
        s.push_str(&opt(r.hits, 13, 2));
        s.push_str(&opt(r.misses, 13, 2));
    }
    s.push_str(&opt(avg, 16, 5));
    for k in 0..n_pcts {
        s.push_str(&opt(
            avg.and(r.latency.percentiles.get(k).map(|p| p.1)),
            16,
            5,
        ));
    }
    // memtier prints no bytes for a row without requests, nor for its Waits (it counts none).
    let kb = (avg.is_some() && !(reads && r.name == "Waits")).then_some(r.kb_tx + r.kb_rx);
    s.push_str(&opt(kb, 13, 2));
    s.push(' ');
    s
}

/// memtier's `Request Latency Distribution`: per command, `<= msec` and the cumulative
/// percent at each recorded value of its histogram (from the write, memtier's meaning).
pub fn distribution(t: &TestRecord) -> String {
    let mut out = String::from(
        "\n\nRequest Latency Distribution\nType     <= msec         Percent\n\
         ------------------------------------------------------------------------\n",
    );
    let mut first = true;
    for m in &t.mix {
        let Some(h) = hdr::decode(sent_latency(m).1).filter(|h| !h.is_empty()) else {
            continue;
        };
        if !first {
            out.push_str("---\n");
        }
        first = false;
        let total = h.len() as f64;
        let mut seen = 0u64;
        for v in h.iter_recorded() {
            seen += v.count_since_last_iteration();
            let ms = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e6;
            let _ = writeln!(
                out,
                "{:<6}{:>9.3}{:>13.3}",
                m.name,
                ms,
                seen as f64 * 100.0 / total
            );
        }
    }
    out
}
