//! memtier_benchmark's progress line (`[RUN #1 33%,   1 secs]  1 threads  5 conns: …`), shown
//! once a second on stderr after a carriage return, as memtier does, for `respbench memtier`:
//! scripts that scrape it keep working. The run's console works the figures out
//! (`run::ProgressFigures`); this writes them as memtier does. KB/sec counts each answered request's bytes with its
//! reply's, as the final table does.

use std::fmt::Write as _;

use crate::run::ProgressFigures;

/// memtier's byte rate: GB, MB or KB (of 1024) with two decimals.
fn size(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if bytes >= K * K * K {
        format!("{:.2}GB", bytes / (K * K * K))
    } else if bytes >= K * K {
        format!("{:.2}MB", bytes / (K * K))
    } else {
        format!("{:.2}KB", bytes / K)
    }
}

/// Writes the line (without the leading `\r`) into `out`: the run's console calls it once a
/// second (`run::run_for_document`'s `ProgressLine`).
pub fn line(out: &mut String, p: &ProgressFigures) {
    let _ = write!(
        out,
        "[RUN #{} {:.0}%, {:>3} secs] {:>2} threads {:>2} conns: {:>11} ops, {:>7.0} (avg: {:>7.0}) \
         ops/sec, {}/sec (avg: {}/sec), {:>5.2} (avg: {:>5.2}) msec latency",
        p.run,
        p.percent.clamp(0.0, 100.0),
        p.secs,
        p.threads,
        p.conns,
        p.ops,
        p.rps,
        p.avg_rps,
        size(p.bytes_sec),
        size(p.avg_bytes_sec),
        p.latency_ms,
        p.avg_latency_ms
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_has_memtiers_shape() {
        let mut s = String::new();
        let p = ProgressFigures {
            run: 1,
            percent: 33.4,
            secs: 1,
            threads: 1,
            conns: 5,
            ops: 45215,
            rps: 45156.0,
            avg_rps: 45156.0,
            latency_ms: 0.11,
            avg_latency_ms: 0.11,
            bytes_sec: 0.0,
            avg_bytes_sec: 4.83 * 1024.0 * 1024.0,
        };
        line(&mut s, &p);
        // memtier's own line from shared/fixtures (its last, whose interval is empty).
        assert_eq!(
            s,
            "[RUN #1 33%,   1 secs]  1 threads  5 conns:       45215 ops,   45156 (avg:   45156) \
             ops/sec, 0.00KB/sec (avg: 4.83MB/sec),  0.11 (avg:  0.11) msec latency"
        );
        assert_eq!(size(1536.0), "1.50KB");
    }
}
