//! memtier's stdout: the header lines, a results table per block (`ALL STATS`, or `RUN #n
//! RESULTS` and the `--run-count` aggregates), then the latency distribution unless
//! `--hide-histogram`. Column widths are memtier 2.x's (the fixtures in `shared/fixtures`), so a
//! script that cuts its columns reads ours.

use std::fmt::Write as _;

use crate::compare::input::spectrum;
use crate::record::TestRecord;
use crate::record::memtier_data::VerifyRecord;

use super::stats::{Block, Row};

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

/// One results table.
pub fn table(b: &Block, pcts: &[f64]) -> String {
    let mut head = format!(
        "{:<6}{:>14}{:>13}{:>13}{:>16}",
        "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency"
    );
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
        out.push_str(&row(r, pcts.len()));
        out.push('\n');
    }
    out
}

fn row(r: &Row, n_pcts: usize) -> String {
    let opt = |v: Option<f64>, width: usize, digits: usize| match v {
        Some(v) => format!("{v:>width$.digits$}"),
        None => format!("{:>width$}", "---"),
    };
    let mut s = format!(
        "{:<6}{:>14.2}{}{}{}",
        r.name,
        r.ops,
        opt(r.hits, 13, 2),
        opt(r.misses, 13, 2),
        opt(r.avg_ms, 16, 5)
    );
    for k in 0..n_pcts {
        s.push_str(&opt(r.avg_ms.and(r.percentiles.get(k).map(|p| p.1)), 16, 5));
    }
    let kb = (r.avg_ms.is_some()).then_some(r.kb_tx + r.kb_rx);
    s.push_str(&opt(kb, 13, 2));
    s.push(' ');
    s
}

/// memtier's `Request Latency Distribution`: per command, `<= msec` and the cumulative
/// percent at each recorded value of its histogram.
pub fn distribution(t: &TestRecord) -> String {
    let mut out = String::from(
        "\n\nRequest Latency Distribution\nType     <= msec         Percent\n\
         ------------------------------------------------------------------------\n",
    );
    let mut first = true;
    for m in &t.mix {
        let Some(h) = spectrum::decode(&m.histogram).filter(|h| !h.is_empty()) else {
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
