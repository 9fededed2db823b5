//! The comparison itself: for every test in any input, each metric's value per input (median
//! and spread over repetitions) and each input's change against the base, judged by the metric's
//! direction and, with repetitions on both sides, by the noise test.
//!
//! Owns: which tests and metrics appear, in what order; what "better", "worse" and "within the
//! noise" mean; which rows trip `--fail-if-worse`. Must not: format or print.

use std::collections::{HashMap, HashSet};

use super::input::{Input, Sample};
use super::stats::{self, Noise};

/// A figure compared between runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Rps,
    Avg,
    Min,
    P50,
    P95,
    P99,
    Max,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Rps,
        Metric::Avg,
        Metric::Min,
        Metric::P50,
        Metric::P95,
        Metric::P99,
        Metric::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Rps => "rps",
            Metric::Avg => "avg",
            Metric::Min => "min",
            Metric::P50 => "p50",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Max => "max",
        }
    }

    pub fn from_name(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == s)
    }

    /// More throughput is better; more latency is worse.
    pub fn higher_is_better(self) -> bool {
        self == Metric::Rps
    }

    /// The unit tables show it in: requests per second, or milliseconds (the unit of
    /// valkey-benchmark's CSV and of most published comparisons).
    pub fn unit(self) -> &'static str {
        if self == Metric::Rps { "rps" } else { "ms" }
    }

    /// How a row is named: `rps`, `p99 ms`.
    pub fn label(self) -> String {
        if self == Metric::Rps {
            "rps".into()
        } else {
            format!("{} ms", self.name())
        }
    }

    /// The sample's figure in [`Metric::unit`].
    pub fn of(self, s: &Sample) -> Option<f64> {
        let ms = |us: Option<f64>| us.map(|v| v / 1000.0);
        match self {
            Metric::Rps => Some(s.rps),
            Metric::Avg => ms(s.avg),
            Metric::Min => ms(s.min),
            Metric::P50 => ms(s.p50),
            Metric::P95 => ms(s.p95),
            Metric::P99 => ms(s.p99),
            Metric::Max => ms(s.max),
        }
    }
}

/// One input's value of one metric in one test.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Every repetition's figure, in order.
    pub samples: Vec<f64>,
    /// The median of `samples` (the value itself without repetitions).
    pub median: f64,
    /// With repetitions: the largest distance of a repetition from the median, in percent of
    /// the median ("every repetition is within ±spread%").
    pub spread_pct: Option<f64>,
}

impl Cell {
    fn of(samples: Vec<f64>) -> Option<Cell> {
        if samples.is_empty() {
            return None;
        }
        let median = median(&samples);
        let spread_pct = spread_pct(&samples, median);
        Some(Cell {
            samples,
            median,
            spread_pct,
        })
    }
}

/// The largest distance of a sample from `median`, in percent of it: how far repetitions
/// strayed. `None` for one sample or a zero median (no spread to speak of).
pub fn spread_pct(samples: &[f64], median: f64) -> Option<f64> {
    (samples.len() > 1 && median != 0.0).then(|| {
        samples
            .iter()
            .map(|v| (v - median).abs())
            .fold(0.0, f64::max)
            / median.abs()
            * 100.0
    })
}

/// The median (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Which way a change went, by the metric's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Better,
    Worse,
    Same,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Better => "better",
            Direction::Worse => "worse",
            Direction::Same => "same",
        }
    }
}

/// One input's change against the base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// (other − base) / base, in percent, of the medians.
    pub pct: f64,
    pub direction: Direction,
    /// The noise test, when both sides have more than one sample.
    pub noise: Option<Noise>,
    /// Sample counts (base, other).
    pub n: (usize, usize),
}

impl Change {
    fn of(metric: Metric, base: &Cell, other: &Cell) -> Option<Change> {
        if base.median == 0.0 {
            return None; // No percentage of nothing.
        }
        let pct = (other.median - base.median) / base.median.abs() * 100.0;
        let up_is_good = metric.higher_is_better();
        let direction = if other.median == base.median {
            Direction::Same
        } else if (other.median > base.median) == up_is_good {
            Direction::Better
        } else {
            Direction::Worse
        };
        let (nb, no) = (base.samples.len(), other.samples.len());
        let noise = (nb > 1 && no > 1).then(|| stats::mann_whitney(&base.samples, &other.samples));
        Some(Change {
            pct,
            direction,
            noise,
            n: (nb, no),
        })
    }

    /// Within the noise: repetitions on both sides and the test found no difference.
    pub fn is_noise(&self) -> bool {
        matches!(self.noise, Some(Noise::Noise { .. }))
    }
}

/// One metric of one test across the inputs.
#[derive(Clone, Debug)]
pub struct Row {
    pub metric: Metric,
    /// Per input (`None`: the test or the figure is missing there).
    pub cells: Vec<Option<Cell>>,
    /// Per input after the base (index 0 is inputs[1]).
    pub changes: Vec<Option<Change>>,
}

/// One test across the inputs.
#[derive(Clone, Debug)]
pub struct TestRows {
    pub name: String,
    pub rows: Vec<Row>,
    /// Indexes of the inputs that do not have the test.
    pub missing_from: Vec<usize>,
    /// A command of a mix (named `TEST / COMMAND`): its test's name and the command. Such rows
    /// follow their test's, and exist only when every input that has the test ran the same
    /// commands in the same order (else a command's figures would be compared with nothing,
    /// or with a different mix's).
    pub mix_of: Option<(String, String)>,
}

/// The whole comparison; inputs[0] is the base.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub tests: Vec<TestRows>,
}

impl Comparison {
    /// Compares `inputs` (the base first) on `metrics`. Tests appear in the base's order, then
    /// each other input's new ones in theirs.
    pub fn new(inputs: &[Input], metrics: &[Metric]) -> Comparison {
        // Each input's tests by name, looked up once per test: linear in the number of tests
        // (thousands of tests must not take minutes).
        let by_name: Vec<HashMap<&str, &[Sample]>> = inputs
            .iter()
            .map(|i| {
                let mut m = HashMap::new();
                for t in &i.tests {
                    m.entry(t.name.as_str()).or_insert(&t.samples[..]);
                }
                m
            })
            .collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut names: Vec<&str> = Vec::new();
        for t in inputs.iter().flat_map(|i| &i.tests) {
            if seen.insert(t.name.as_str()) {
                names.push(&t.name);
            }
        }
        let mut tests = Vec::new();
        for &name in &names {
            let per_input: Vec<Option<&[Sample]>> =
                by_name.iter().map(|m| m.get(name).copied()).collect();
            let missing_from: Vec<usize> = (0..inputs.len())
                .filter(|&i| per_input[i].is_none())
                .collect();
            tests.push(TestRows {
                name: name.to_string(),
                rows: metrics.iter().map(|&m| row(m, &per_input)).collect(),
                missing_from: missing_from.clone(),
                mix_of: None,
            });
            for (j, command) in common_mix(&per_input).iter().enumerate() {
                // Each repetition's figures of the j-th command, as samples of a test.
                let owned: Vec<Option<Vec<Sample>>> = per_input
                    .iter()
                    .map(|s| s.map(|s| s.iter().map(|x| x.mix[j].figures.clone()).collect()))
                    .collect();
                let per_command: Vec<Option<&[Sample]>> =
                    owned.iter().map(|s| s.as_deref()).collect();
                tests.push(TestRows {
                    name: format!("{name} / {command}"),
                    rows: metrics.iter().map(|&m| row(m, &per_command)).collect(),
                    missing_from: missing_from.clone(),
                    mix_of: Some((name.to_string(), command.to_string())),
                });
            }
        }
        Comparison {
            labels: inputs.iter().map(|i| i.label.clone()).collect(),
            tests,
        }
    }

    /// Rows that got worse by more than `pct` percent and are not within the noise:
    /// `(test, metric, input index, change)`.
    pub fn worse_than(&self, pct: f64) -> Vec<(&str, Metric, usize, Change)> {
        let mut out = Vec::new();
        for t in &self.tests {
            for r in &t.rows {
                for (k, c) in r.changes.iter().enumerate() {
                    if let Some(c) = c
                        && c.direction == Direction::Worse
                        && c.pct.abs() > pct
                        && !c.is_noise()
                    {
                        out.push((t.name.as_str(), r.metric, k + 1, *c));
                    }
                }
            }
        }
        out
    }
}

/// The commands of a test's mix when every sample of every input that has the test ran the
/// same ones in the same order; empty otherwise (no mix, or mixes that differ).
fn common_mix<'a>(per_input: &[Option<&'a [Sample]>]) -> Vec<&'a str> {
    let mut samples = per_input.iter().flatten().flat_map(|s| s.iter());
    let Some(first) = samples.next() else {
        return Vec::new();
    };
    let names: Vec<&str> = first.mix.iter().map(|m| m.name.as_str()).collect();
    let same = samples.all(|s| {
        s.mix
            .iter()
            .map(|m| m.name.as_str())
            .eq(names.iter().copied())
    });
    if same { names } else { Vec::new() }
}

fn row(metric: Metric, per_input: &[Option<&[Sample]>]) -> Row {
    let cells: Vec<Option<Cell>> = per_input
        .iter()
        .map(|s| s.and_then(|s| Cell::of(s.iter().filter_map(|x| metric.of(x)).collect())))
        .collect();
    let changes = cells[1..]
        .iter()
        .map(|c| match (&cells[0], c) {
            (Some(b), Some(o)) => Change::of(metric, b, o),
            _ => None,
        })
        .collect();
    Row {
        metric,
        cells,
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::{Format, Test};

    fn input(label: &str, tests: &[(&str, &[f64])]) -> Input {
        Input {
            label: label.into(),
            files: vec![],
            format: Format::BenchmarkCsv,
            server: None,
            find_max: None,
            problems: vec![],
            tests: tests
                .iter()
                .map(|(name, rps)| Test {
                    name: name.to_string(),
                    samples: rps
                        .iter()
                        .map(|&r| Sample {
                            rps: r,
                            p99: Some(1_000_000.0 / r),
                            ..Sample::default()
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn directions_follow_the_metric() {
        let c = Comparison::new(
            &[
                input("a", &[("SET", &[100.0])]),
                input("b", &[("SET", &[110.0])]),
            ],
            &[Metric::Rps, Metric::P99, Metric::P95],
        );
        let rows = &c.tests[0].rows;
        let rps = rows[0].changes[0].unwrap();
        assert!((rps.pct - 10.0).abs() < 1e-9);
        assert_eq!(rps.direction, Direction::Better);
        assert_eq!(rps.noise, None, "no repetitions: no noise verdict");
        let p99 = rows[1].changes[0].unwrap();
        assert!(p99.pct < 0.0);
        assert_eq!(p99.direction, Direction::Better, "lower latency is better");
        assert_eq!(rows[2].cells[0], None, "no p95 in the input");
        assert!(c.worse_than(0.0).is_empty());
    }

    #[test]
    fn missing_tests_are_kept_and_named() {
        let c = Comparison::new(
            &[
                input("a", &[("SET", &[100.0]), ("GET", &[100.0])]),
                input("b", &[("GET", &[90.0]), ("INCR", &[5.0])]),
            ],
            &[Metric::Rps],
        );
        let names: Vec<_> = c.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["SET", "GET", "INCR"]);
        assert_eq!(c.tests[0].missing_from, [1]);
        assert_eq!(c.tests[2].missing_from, [0]);
        assert_eq!(c.tests[0].rows[0].changes[0], None);
        let worse = c.worse_than(5.0);
        assert_eq!(worse.len(), 1);
        assert_eq!(
            (worse[0].0, worse[0].1, worse[0].2),
            ("GET", Metric::Rps, 1)
        );
        assert!(
            c.worse_than(10.0).is_empty(),
            "exactly 10% is not more than 10%"
        );
    }

    #[test]
    fn repetitions_give_median_spread_and_a_noise_verdict() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let noisy = [100.5, 97.0, 103.0, 99.5, 101.5];
        let faster = [110.0, 111.0, 109.0, 112.0, 108.0];
        let c = Comparison::new(
            &[
                input("a", &[("SET", &base)]),
                input("b", &[("SET", &noisy)]),
                input("c", &[("SET", &faster)]),
            ],
            &[Metric::Rps],
        );
        let r = &c.tests[0].rows[0];
        let a = r.cells[0].as_ref().unwrap();
        assert_eq!(a.median, 100.0);
        assert_eq!(a.spread_pct, Some(2.0));
        assert!(r.changes[0].unwrap().is_noise());
        let sig = r.changes[1].unwrap();
        assert!(
            matches!(sig.noise, Some(Noise::Significant { .. })),
            "{sig:?}"
        );
        assert!((sig.pct - 10.0).abs() < 1e-9);
        assert_eq!(sig.n, (5, 5));
        // Noise never trips the gate, even when the medians moved.
        let worse = Comparison::new(
            &[
                input("a", &[("SET", &noisy)]),
                input("b", &[("SET", &base)]),
            ],
            &[Metric::Rps],
        );
        assert!(worse.tests[0].rows[0].changes[0].unwrap().direction == Direction::Worse);
        assert!(worse.worse_than(0.1).is_empty());
    }

    #[test]
    fn a_mix_gets_a_row_per_command_when_both_ran_the_same_commands() {
        use crate::compare::fixtures::{mix_record, side};
        let a = side(
            "a",
            mix_record(
                "SET:GET 1:10",
                1100.0,
                &[("SET", 100, 200.0), ("GET", 1000, 100.0)],
            ),
        );
        let b = side(
            "b",
            mix_record(
                "SET:GET 1:10",
                1100.0,
                &[("SET", 100, 200.0), ("GET", 1000, 150.0)],
            ),
        );
        let c = Comparison::new(&[a.clone(), b], &[Metric::Rps, Metric::P99]);
        let names: Vec<&str> = c.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["SET:GET 1:10", "SET:GET 1:10 / SET", "SET:GET 1:10 / GET"]
        );
        assert_eq!(c.tests[0].mix_of, None);
        assert_eq!(
            c.tests[2].mix_of,
            Some(("SET:GET 1:10".to_string(), "GET".to_string()))
        );
        let get = &c.tests[2].rows;
        assert_eq!(
            get[0].cells[0].as_ref().unwrap().median,
            1000.0,
            "GET's rps"
        );
        assert_eq!(
            get[1].cells[0].as_ref().unwrap().median,
            0.1,
            "GET's p99 in ms"
        );
        let change = get[1].changes[0].unwrap();
        assert_eq!(change.direction, Direction::Worse);
        assert!((change.pct - 50.0).abs() < 1e-9);
        assert_eq!(
            c.tests[1].rows[1].changes[0].unwrap().direction,
            Direction::Same
        );
        // The gate sees a command that got worse, not only the total.
        let worse: Vec<&str> = c.worse_than(10.0).iter().map(|w| w.0).collect();
        assert_eq!(worse, ["SET:GET 1:10", "SET:GET 1:10 / GET"]);

        // Different commands (or none on one side): the totals only.
        let other = side(
            "o",
            mix_record(
                "SET:GET 1:10",
                1100.0,
                &[("SET", 100, 200.0), ("INCR", 1000, 100.0)],
            ),
        );
        let c = Comparison::new(&[a.clone(), other], &[Metric::Rps]);
        assert_eq!(c.tests.len(), 1);
        let mut plain = a.clone();
        plain.tests[0].samples[0].mix.clear();
        assert_eq!(
            Comparison::new(&[a.clone(), plain], &[Metric::Rps])
                .tests
                .len(),
            1
        );
        // One run alone: its commands' rows.
        assert_eq!(Comparison::new(&[a], &[Metric::Rps]).tests.len(), 3);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
