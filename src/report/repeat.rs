//! `--repeat N`: the line that sums up a test's repetitions, after their own reports.
//!
//! Why a median: one repetition that met a hiccup (a page fault storm, a neighbour on a shared
//! machine) moves a mean but not a median; the spread (largest distance of a repetition from the
//! median, in percent) says how much the runs agreed. Whether a difference between two servers is
//! more than that noise is `respbench compare`'s question, which the JSON's repetitions answer.

use std::io::{self, Write};

use crate::compare::table::{median, spread_pct};
use crate::metrics::TestResult;

/// The figures of each repetition of one test.
#[derive(Debug, Default)]
pub struct Repetitions {
    rps: Vec<f64>,
    p50_ms: Vec<f64>,
    p99_ms: Vec<f64>,
}

impl Repetitions {
    /// Adds one repetition's result.
    pub fn add(&mut self, r: &TestResult) {
        self.rps.push(r.throughput());
        self.p50_ms
            .push(r.latency.value_at_percentile_ns(50.0) as f64 / 1e6);
        self.p99_ms
            .push(r.latency.value_at_percentile_ns(99.0) as f64 / 1e6);
    }

    pub fn len(&self) -> usize {
        self.rps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rps.is_empty()
    }

    /// `TITLE: median of N runs: R requests per second (±S%), p50=A msec, p99=B msec`.
    pub fn write_median(
        &self,
        out: &mut impl Write,
        title: &str,
        precision: usize,
    ) -> io::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let rps = median(&self.rps);
        let spread = spread_pct(&self.rps, rps).unwrap_or(0.0);
        writeln!(
            out,
            "{title}: median of {} runs: {rps:.2} requests per second (±{spread:.1}%), \
             p50={:.p$} msec, p99={:.p$} msec",
            self.len(),
            median(&self.p50_ms),
            median(&self.p99_ms),
            p = precision
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::Outcome;

    fn run(completed: u64, p50_us: u64) -> TestResult {
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        r.completed = completed;
        r.elapsed = Duration::from_secs(1);
        for _ in 0..completed.min(100) {
            r.latency.record(p50_us * 1000);
        }
        r
    }

    #[test]
    fn median_line_of_odd_and_even_counts() {
        let mut reps = Repetitions::default();
        for (c, p) in [(1000, 200), (900, 300), (1100, 250)] {
            reps.add(&run(c, p));
        }
        let mut v = Vec::new();
        reps.write_median(&mut v, "SET", 3).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "SET: median of 3 runs: 1000.00 requests per second (±10.0%), p50=0.250 msec, \
             p99=0.250 msec\n"
        );
        reps.add(&run(1050, 260));
        let mut v = Vec::new();
        reps.write_median(&mut v, "SET", 1).unwrap();
        assert!(
            String::from_utf8(v)
                .unwrap()
                .starts_with("SET: median of 4 runs: 1025.00 requests per second (±12.2%)"),
        );
        let mut v = Vec::new();
        Repetitions::default()
            .write_median(&mut v, "SET", 3)
            .unwrap();
        assert!(v.is_empty());
    }
}
