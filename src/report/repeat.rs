//! `--repeat N`: the line that sums up a test's repetitions, after their own reports.
//!
//! Why a median: one repetition that met a hiccup (a page fault storm, a neighbour on a shared
//! machine) moves a mean but not a median; the spread (largest distance of a repetition from the
//! median, in percent) says how much the runs agreed. Whether a difference between two servers is
//! more than that noise is `respbench compare`'s question, which the JSON's repetitions answer.
//!
//! The line also says what limited the repetitions (`limited by: client-bound (2 of 3)`): a
//! median of client-bound runs describes respbench, and the reader of one line should not have
//! to open each run's report to learn it.

use std::io::{self, Write};

use crate::metrics::TestResult;
use crate::stats::{median, spread_pct};
use crate::verdict::Verdict;

/// The figures of each repetition of one test.
#[derive(Debug, Default)]
pub struct Repetitions {
    rps: Vec<f64>,
    p50_ms: Vec<f64>,
    p99_ms: Vec<f64>,
    verdicts: Vec<Verdict>,
}

impl Repetitions {
    /// Adds one repetition's result and what limited it.
    pub fn add(&mut self, r: &TestResult, verdict: Verdict) {
        self.verdicts.push(verdict);
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

    /// `; limited by: client-bound (2 of 3), neither (1 of 3)`, most frequent first; empty when
    /// no repetition's verdict is known.
    fn limits(&self) -> String {
        let mut counts: Vec<(Verdict, usize)> = Vec::new();
        for &v in self.verdicts.iter().filter(|v| **v != Verdict::Unknown) {
            match counts.iter_mut().find(|c| c.0 == v) {
                Some(c) => c.1 += 1,
                None => counts.push((v, 1)),
            }
        }
        if counts.is_empty() {
            return String::new();
        }
        counts.sort_by_key(|c| std::cmp::Reverse(c.1));
        let n = self.len();
        let parts: Vec<String> = counts
            .iter()
            .map(|(v, k)| format!("{} ({k} of {n})", v.name()))
            .collect();
        format!("; limited by: {}", parts.join(", "))
    }

    /// `TITLE: median of N runs: R requests per second (±S%), p50=A msec, p99=B msec`, then what
    /// limited the runs when known.
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
             p50={:.p$} msec, p99={:.p$} msec{}",
            self.len(),
            median(&self.p50_ms),
            median(&self.p99_ms),
            self.limits(),
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
            reps.add(&run(c, p), Verdict::Unknown);
        }
        let mut v = Vec::new();
        reps.write_median(&mut v, "SET", 3).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "SET: median of 3 runs: 1000.00 requests per second (±10.0%), p50=0.250 msec, \
             p99=0.250 msec\n"
        );
        reps.add(&run(1050, 260), Verdict::Unknown);
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

    #[test]
    fn the_median_line_says_what_limited_the_runs() {
        let mut reps = Repetitions::default();
        for v in [
            Verdict::ClientBound,
            Verdict::Neither,
            Verdict::ClientBound,
            Verdict::Unknown,
        ] {
            reps.add(&run(1000, 200), v);
        }
        let mut out = Vec::new();
        reps.write_median(&mut out, "GET", 3).unwrap();
        let line = String::from_utf8(out).unwrap();
        assert!(
            line.ends_with("msec; limited by: client-bound (2 of 4), neither (1 of 4)\n"),
            "{line}"
        );
    }
}
