//! memtier_benchmark's progress line (`[RUN #1 33%,   1 secs]  1 threads  5 conns: …`), shown
//! once a second on stderr after a carriage return, as memtier does, for `respbench memtier`:
//! scripts that scrape it keep working. Bytes per second are not measured live by respbench;
//! the line keeps its shape with `0.00KB/sec` there (docs/memtier.md).

use std::fmt::Write as _;

/// One progress line's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemtierProgress {
    /// The run (`--run-count`), from 1.
    pub run: u32,
    /// How far the run is, 0 to 100.
    pub percent: f64,
    pub secs: u64,
    pub threads: usize,
    /// Connections in all.
    pub conns: u32,
    /// Requests completed so far.
    pub ops: u64,
    /// The last interval's rate and the run's.
    pub rps: f64,
    pub avg_rps: f64,
    /// The last interval's average latency and the run's, in ms.
    pub latency_ms: f64,
    pub avg_latency_ms: f64,
}

/// Writes the line (without the leading `\r`) into `out`.
pub fn memtier_progress_line(out: &mut String, p: &MemtierProgress) {
    let _ = write!(
        out,
        "[RUN #{} {:.0}%, {:>3} secs] {:>2} threads {:>2} conns: {:>11} ops, {:>7.0} (avg: {:>7.0}) \
         ops/sec, 0.00KB/sec (avg: 0.00KB/sec), {:>5.2} (avg: {:>5.2}) msec latency",
        p.run,
        p.percent.clamp(0.0, 100.0),
        p.secs,
        p.threads,
        p.conns,
        p.ops,
        p.rps,
        p.avg_rps,
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
        let p = MemtierProgress {
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
        };
        memtier_progress_line(&mut s, &p);
        // memtier's own line from shared/fixtures, bytes aside.
        assert_eq!(
            s,
            "[RUN #1 33%,   1 secs]  1 threads  5 conns:       45215 ops,   45156 (avg:   45156) \
             ops/sec, 0.00KB/sec (avg: 0.00KB/sec),  0.11 (avg:  0.11) msec latency"
        );
    }
}
