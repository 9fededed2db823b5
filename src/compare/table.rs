//! The comparison itself: for every test in any input, each metric's value per input (median
//! and spread over repetitions) and each input's change against the base: an effect with its
//! interval (`stats`), judged by the metric's direction.
//!
//! Owns: which tests and metrics appear, in what order; what "better", "worse", "within the
//! noise", "too noisy to tell" and "can't tell" mean; when a side's test was "mostly"
//! client-bound or on a busy machine, which makes its changes unattributable to the servers;
//! which rows trip `--fail-if-worse` and which it cannot judge. Must not: format or print.

use std::collections::{HashMap, HashSet};

use super::input::facts::Fact;
use super::input::{Input, Sample};
use crate::record::block::BlockKind;
use crate::stats::{self, Estimate, Evidence, median, spread_pct};
use crate::verdict::Verdict;

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

    /// The sample's figure per whole second of its run (from the record's timeline), in
    /// [`Metric::unit`]; `None` for figures the timeline does not have (avg, min, p95, max) and
    /// files without one.
    pub fn per_second(self, s: &Sample) -> Option<Vec<f64>> {
        let rows = s
            .detail
            .as_ref()?
            .timeline
            .iter()
            .filter(|r| r.span >= 0.999);
        let v: Vec<f64> = match self {
            Metric::Rps => rows.map(|r| r.completed as f64 / r.span).collect(),
            Metric::P50 => rows.map(|r| r.p50 / 1000.0).collect(),
            Metric::P99 => rows.map(|r| r.p99 / 1000.0).collect(),
            _ => return None,
        };
        (!v.is_empty()).then_some(v)
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
    /// A single run's figure per whole second, when its record has a timeline: the within-run
    /// evidence when there are no repetitions.
    pub seconds: Option<Vec<f64>>,
}

impl Cell {
    /// The figure a table shows: the geometric mean of the repetitions (the figures a change is
    /// the ratio of, so a row never shows 78,930 → 82,400 beside a change of −7%), the value
    /// itself for one run, the median when a repetition is zero (no logarithm).
    pub fn shown(&self) -> f64 {
        if self.samples.len() > 1 && self.samples.iter().all(|&x| x > 0.0) {
            let n = self.samples.len() as f64;
            (self.samples.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
        } else {
            self.median
        }
    }

    fn of(metric: Metric, from: &[Sample]) -> Option<Cell> {
        let samples: Vec<f64> = from.iter().filter_map(|x| metric.of(x)).collect();
        if samples.is_empty() {
            return None;
        }
        let median = median(&samples);
        let spread_pct = spread_pct(&samples, median);
        let seconds = match from {
            [one] => metric.per_second(one),
            _ => None,
        };
        Some(Cell {
            samples,
            median,
            spread_pct,
            seconds,
        })
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

/// "Most repetitions": more than half of them. One rule for the warnings above the table and
/// for the changes it makes unattributable.
pub fn mostly(bound: usize, of: usize) -> bool {
    bound * 2 > of
}

/// What limited each side's test in most of its repetitions when that was not the server, from
/// the record's verdict: [`Verdict::MachineBusy`] (the server or respbench waited for a CPU)
/// or [`Verdict::ClientBound`] (respbench was the bottleneck). Its figures then describe the
/// machine's load or respbench, not the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub base: Option<Verdict>,
    pub other: Option<Verdict>,
}

impl Limits {
    pub fn any(self) -> bool {
        self.base.is_some() || self.other.is_some()
    }
}

/// What a change's evidence says, read off its interval ([`stats`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Judgement {
    /// Repetitions on both sides and the interval excludes zero: better or worse, for real.
    Finding,
    /// One run on a side, and the interval over its seconds excludes zero: the runs differ by
    /// more than each wobbled inside itself, but how much two runs of one server differ is
    /// unknown. Not a finding.
    WithinRunOnly,
    /// The interval spans zero.
    WithinNoise,
    /// The interval spans zero and could hide a change of [`stats::NOISY_PCT`] either way.
    /// `(side, spread)`: the side whose repetitions strayed most (0 the base, 1 the other) and
    /// its spread in percent, when there are repetitions.
    TooNoisy { noisiest: Option<(usize, f64)> },
    /// No interval: a single run without per-second figures, or one repetition against several.
    CantTell,
    /// A side was machine-busy or client-bound in most repetitions of the test: whatever the
    /// interval says, the difference (or its absence) cannot be put down to the servers. Runs
    /// of a and b are sequential, under a load that changes over time (or both capped by
    /// respbench), so a busy machine's figures compare the load of two moments. The effect and
    /// interval are still shown; the verdict is "can't tell", never better or worse.
    Unattributable(Limits),
}

impl Judgement {
    /// The word CSV and JSON give it.
    pub fn name(self) -> &'static str {
        match self {
            Judgement::Finding => "finding",
            Judgement::WithinRunOnly => "within-run-only",
            Judgement::WithinNoise => "noise",
            Judgement::TooNoisy { .. } => "too-noisy",
            Judgement::CantTell => "cant-tell",
            Judgement::Unattributable(_) => "unattributable",
        }
    }
}

/// What `--fail-if-worse` makes of one change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Pass,
    /// Worse by more than the allowance, and not shown to be noise.
    Fail,
    /// A side's figures describe the machine's load or respbench ([`Judgement::Unattributable`]):
    /// the gate can neither pass nor fail it.
    CantTell,
}

/// One input's change against the base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The change in percent: the estimate's (ratio of geometric means) when there is one, else
    /// (other − base) / base of the medians.
    pub pct: f64,
    pub direction: Direction,
    /// The effect with its interval, when the figures allow one.
    pub estimate: Option<Estimate>,
    pub judgement: Judgement,
    /// Sample counts (base, other).
    pub n: (usize, usize),
}

impl Change {
    fn of(metric: Metric, base: &Cell, other: &Cell, limits: Limits) -> Option<Change> {
        if base.median == 0.0 {
            return None; // No percentage of nothing.
        }
        let (nb, no) = (base.samples.len(), other.samples.len());
        let estimate = if nb > 1 && no > 1 {
            stats::from_repetitions(&base.samples, &other.samples)
        } else if nb == 1 && no == 1 {
            match (&base.seconds, &other.seconds) {
                (Some(b), Some(o)) if base.median > 0.0 && other.median > 0.0 => {
                    stats::from_seconds(b, o).map(|e| {
                        // Centred on the runs' own figures; the blocks give the width.
                        let at =
                            ((other.median / base.median).ln() - (e.pct / 100.0).ln_1p()).exp();
                        let shift = |p: f64| ((p / 100.0 + 1.0) * at - 1.0) * 100.0;
                        Estimate {
                            pct: shift(e.pct),
                            lo: shift(e.lo),
                            hi: shift(e.hi),
                            ..e
                        }
                    })
                }
                _ => None,
            }
        } else {
            None
        };
        let pct = match estimate {
            Some(e) => e.pct,
            None => (other.shown() - base.shown()) / base.shown().abs() * 100.0,
        };
        let direction = if pct == 0.0 {
            Direction::Same
        } else if (pct > 0.0) == metric.higher_is_better() {
            Direction::Better
        } else {
            Direction::Worse
        };
        let judgement = match estimate {
            _ if limits.any() => Judgement::Unattributable(limits),
            None => Judgement::CantTell,
            Some(e) if e.excludes_zero() => match e.evidence {
                Evidence::Repetitions | Evidence::Pairs => Judgement::Finding,
                Evidence::WithinRun => Judgement::WithinRunOnly,
            },
            Some(e) if e.too_wide() => Judgement::TooNoisy {
                noisiest: [&base.spread_pct, &other.spread_pct]
                    .iter()
                    .enumerate()
                    .filter_map(|(k, s)| s.map(|s| (k, s)))
                    .max_by(|a, b| a.1.total_cmp(&b.1)),
            },
            Some(_) => Judgement::WithinNoise,
        };
        Some(Change {
            pct,
            direction,
            estimate,
            judgement,
            n: (nb, no),
        })
    }

    /// A finding: better or worse, backed by repetitions.
    pub fn is_finding(&self) -> bool {
        self.judgement == Judgement::Finding && self.direction != Direction::Same
    }

    /// The interval spans zero (within the noise or too noisy to tell).
    pub fn is_noise(&self) -> bool {
        matches!(
            self.judgement,
            Judgement::WithinNoise | Judgement::TooNoisy { .. }
        )
    }

    /// What `--fail-if-worse PCT` makes of this change. It fails when worse by more than `pct`
    /// percent and not shown to be noise. The same rule as the verdict: an interval that spans
    /// zero never fails. A worse interval from a single run's seconds fails (the user's PCT is
    /// then the allowance for run-to-run noise), and so does a change with no interval at all
    /// (one run without per-second figures: it fails safe, as it always has). An
    /// unattributable change (a side machine-busy or client-bound) is neither: whichever way
    /// its figures went, they describe the load, so the gate says it cannot tell.
    pub fn gate(&self, pct: f64) -> Gate {
        if matches!(self.judgement, Judgement::Unattributable(_)) {
            Gate::CantTell
        } else if self.direction == Direction::Worse && self.pct.abs() > pct && !self.is_noise() {
            Gate::Fail
        } else {
            Gate::Pass
        }
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
    /// Per input, the server its file names (`valkey 9.1.2`), if it does.
    pub servers: Vec<Option<String>>,
    /// Per input, the circumstances of its figures (`input::facts`).
    pub facts: Vec<Vec<Fact>>,
    /// Per input, each test's repetitions that were client-bound: `(test, client-bound, of)`.
    pub client_bound: Vec<Vec<(String, usize, usize)>>,
    /// Per input, each test's repetitions on a busy machine: `(test, machine-busy, of)`.
    pub machine_busy: Vec<Vec<(String, usize, usize)>>,
    pub tests: Vec<TestRows>,
    /// Some side ran a mode that refuses `--repeat` (`--connect-storm`, `--pubsub`,
    /// `--stream`): its repetitions are separate runs given comma-separated, and the advice
    /// says so.
    pub repeat_refused: bool,
}

/// Whether `input` ran a mode that refuses `--repeat` (a storm, a delivery test: their block's
/// kind says, `record::block::Block::SEPARATE_RUNS`).
fn refuses_repeat(input: &Input) -> bool {
    let separate = |(kind, _): (&BlockKind, _)| kind.separate_runs;
    input.costs.runs.iter().any(|b| b.iter().any(separate))
        || input
            .tests
            .iter()
            .flat_map(|t| &t.samples)
            .filter_map(|s| s.detail.as_ref())
            .any(|d| d.blocks.iter().any(separate))
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
        let client_bound: Vec<_> = inputs
            .iter()
            .map(|i| limited_by(i, Verdict::ClientBound))
            .collect();
        let machine_busy: Vec<_> = inputs
            .iter()
            .map(|i| limited_by(i, Verdict::MachineBusy))
            .collect();
        // Looked up by name once per test, as above (thousands of tests stay linear).
        let limits_by_test: Vec<HashMap<&str, Verdict>> = machine_busy
            .iter()
            .zip(&client_bound)
            .map(|(busy, bound)| limits_of(busy, bound))
            .collect();
        let mut tests = Vec::new();
        for &name in &names {
            let per_input: Vec<Option<&[Sample]>> =
                by_name.iter().map(|m| m.get(name).copied()).collect();
            let missing_from: Vec<usize> = (0..inputs.len())
                .filter(|&i| per_input[i].is_none())
                .collect();
            // A mix's commands ran in their test's repetitions: the test's limits are theirs.
            let limits: Vec<Option<Verdict>> = limits_by_test
                .iter()
                .map(|m| m.get(name).copied())
                .collect();
            tests.push(TestRows {
                name: name.to_string(),
                rows: metrics
                    .iter()
                    .map(|&m| row(m, &per_input, &limits))
                    .collect(),
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
                    rows: metrics
                        .iter()
                        .map(|&m| row(m, &per_command, &limits))
                        .collect(),
                    missing_from: missing_from.clone(),
                    mix_of: Some((name.to_string(), command.to_string())),
                });
            }
        }
        Comparison {
            labels: inputs.iter().map(|i| i.label.clone()).collect(),
            servers: inputs.iter().map(|i| i.server.clone()).collect(),
            facts: inputs.iter().map(|i| i.facts.clone()).collect(),
            client_bound,
            machine_busy,
            tests,
            repeat_refused: inputs.iter().any(refuses_repeat),
        }
    }

    /// Rows that fail `--fail-if-worse pct` ([`Change::gate`]):
    /// `(test, metric, input index, change)`.
    pub fn worse_than(&self, pct: f64) -> Vec<(&str, Metric, usize, Change)> {
        self.gated(pct, Gate::Fail)
    }

    /// Rows `--fail-if-worse pct` cannot judge ([`Gate::CantTell`]), in the same form.
    pub fn cannot_gate(&self, pct: f64) -> Vec<(&str, Metric, usize, Change)> {
        self.gated(pct, Gate::CantTell)
    }

    fn gated(&self, pct: f64, want: Gate) -> Vec<(&str, Metric, usize, Change)> {
        let mut out = Vec::new();
        for t in &self.tests {
            for r in &t.rows {
                for (k, c) in r.changes.iter().enumerate() {
                    if let Some(c) = c
                        && c.gate(pct) == want
                    {
                        out.push((t.name.as_str(), r.metric, k + 1, *c));
                    }
                }
            }
        }
        out
    }
}

/// What limited each of a side's tests in most repetitions, when that was not the server
/// ([`Limits`]; a busy machine first: it explains a client-bound run too). Tests without such a
/// limit are absent.
fn limits_of<'a>(
    machine_busy: &'a [(String, usize, usize)],
    client_bound: &'a [(String, usize, usize)],
) -> HashMap<&'a str, Verdict> {
    let mut out = HashMap::new();
    for (counts, kind) in [
        (client_bound, Verdict::ClientBound),
        (machine_busy, Verdict::MachineBusy),
    ] {
        for (test, bound, of) in counts {
            if mostly(*bound, *of) {
                out.insert(test.as_str(), kind); // Busy last: it wins.
            }
        }
    }
    out
}

/// Each test's count of repetitions limited by `kind` (a record's `verdict.kind`), and of
/// repetitions.
fn limited_by(input: &Input, kind: Verdict) -> Vec<(String, usize, usize)> {
    input
        .tests
        .iter()
        .map(|t| {
            let bound = t
                .samples
                .iter()
                .filter(|s| s.limited_by.as_deref() == Some(kind.name()))
                .count();
            (t.name.clone(), bound, t.samples.len())
        })
        .collect()
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

/// One metric's row; `limits`: what limited each input's test ([`Limits`]).
fn row(metric: Metric, per_input: &[Option<&[Sample]>], limits: &[Option<Verdict>]) -> Row {
    let cells: Vec<Option<Cell>> = per_input
        .iter()
        .map(|s| s.and_then(|s| Cell::of(metric, s)))
        .collect();
    let changes = cells[1..]
        .iter()
        .zip(&limits[1..])
        .map(|(c, &other)| match (&cells[0], c) {
            (Some(b), Some(o)) => Change::of(
                metric,
                b,
                o,
                Limits {
                    base: limits[0],
                    other,
                },
            ),
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
    use crate::compare::input::Format;

    fn input(label: &str, tests: &[(&str, &[f64])]) -> Input {
        crate::compare::fixtures::input(
            label,
            Format::BenchmarkCsv,
            crate::compare::fixtures::tests_of(tests, |r| Sample {
                rps: r,
                p99: Some(1_000_000.0 / r),
                ..Sample::default()
            }),
        )
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
        assert_eq!(
            rps.judgement,
            Judgement::CantTell,
            "no repetitions and no seconds: no interval"
        );
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
        assert_eq!(sig.judgement, Judgement::Finding, "{sig:?}");
        let e = sig.estimate.unwrap();
        assert!(
            e.lo > 5.0 && e.hi < 15.0 && e.lo < sig.pct && sig.pct < e.hi,
            "{e:?}"
        );
        assert!((sig.pct - 10.0).abs() < 0.1, "geometric means: {}", sig.pct);
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

    /// One run of `seconds` whole seconds at `rps` per second, wobbling by ±1% in turn.
    fn timed_run(label: &str, rps: f64, seconds: usize) -> Input {
        use crate::compare::input::{Detail, SecondRow};
        let mut i = input(label, &[("GET", &[rps])]);
        let timeline = (0..seconds)
            .map(|k| SecondRow {
                second: k as f64,
                span: 1.0,
                completed: (rps * if k % 2 == 0 { 1.01 } else { 0.99 }) as u64,
                p99: 1_000_000.0 / rps,
                p50: 500_000.0 / rps,
                ..SecondRow::default()
            })
            .collect();
        i.tests[0].samples[0].avg = Some(500_000.0 / rps);
        i.tests[0].samples[0].detail = Some(Box::new(Detail {
            timeline,
            ..Detail::default()
        }));
        i
    }

    #[test]
    fn single_runs_with_enough_seconds_are_within_run_evidence_only() {
        let c = Comparison::new(
            &[timed_run("a", 1000.0, 20), timed_run("b", 900.0, 20)],
            &[Metric::Rps, Metric::Avg],
        );
        let rps = c.tests[0].rows[0].changes[0].unwrap();
        assert_eq!(rps.judgement, Judgement::WithinRunOnly, "{rps:?}");
        let e = rps.estimate.unwrap();
        assert_eq!(e.evidence, Evidence::WithinRun);
        assert!(
            (rps.pct + 10.0).abs() < 1e-9,
            "centred on the runs' figures: {rps:?}"
        );
        assert!(e.lo < -10.0 && e.hi > -10.0 && e.hi < 0.0, "{e:?}");
        assert!(!rps.is_finding(), "not a finding: no run-to-run evidence");
        assert_eq!(
            rps.gate(5.0),
            Gate::Fail,
            "but the gate trips on it, past PCT"
        );
        assert_eq!(rps.gate(15.0), Gate::Pass);
        // avg has no per-second figure: can't tell.
        let avg = c.tests[0].rows[1].changes[0];
        assert_eq!(avg.map(|c| c.judgement), Some(Judgement::CantTell));
        // Too short for blocks: can't tell.
        let c = Comparison::new(
            &[timed_run("a", 1000.0, 19), timed_run("b", 900.0, 19)],
            &[Metric::Rps],
        );
        assert_eq!(
            c.tests[0].rows[0].changes[0].unwrap().judgement,
            Judgement::CantTell
        );
    }

    #[test]
    fn the_gate_follows_the_interval() {
        let rows = |base: &[f64], other: &[f64]| {
            Comparison::new(
                &[input("a", &[("SET", base)]), input("b", &[("SET", other)])],
                &[Metric::Rps],
            )
        };
        // A wild side: its interval spans zero, so no trip whatever the medians say.
        let noisy = rows(&[100., 101., 99.], &[50., 20., 95.]);
        let c = noisy.tests[0].rows[0].changes[0].unwrap();
        assert!(
            matches!(
                c.judgement,
                Judgement::TooNoisy {
                    noisiest: Some((1, _))
                }
            ),
            "{c:?}"
        );
        assert!(noisy.worse_than(0.0).is_empty());
        // A steady 10% slowdown at 3+3 trips.
        let slower = rows(&[100., 101., 99.], &[90., 91., 89.]);
        assert_eq!(slower.worse_than(5.0).len(), 1);
        assert!(slower.worse_than(12.0).is_empty(), "not past PCT");
        // One repetition against three: no interval, the figure alone decides (fails safe).
        let one = rows(&[100.], &[90., 91., 89.]);
        let c = one.tests[0].rows[0].changes[0].unwrap();
        assert_eq!((c.judgement, c.n), (Judgement::CantTell, (1, 3)));
        assert_eq!(one.worse_than(5.0).len(), 1);
    }

    /// The trial on a busy machine (load 7–12): Redis 7.0 against Valkey 9.1, INCR at three
    /// repetitions each, every one of them judged `machine-busy`.
    fn busy_incr(base_kind: &str, other_kind: &str) -> Comparison {
        let side = |label: &str, rps: &[f64], kind: &str| {
            crate::compare::fixtures::input(
                label,
                Format::Respbench,
                crate::compare::fixtures::tests_of(&[("INCR", rps)], |r| Sample {
                    rps: r,
                    p99: Some(3e8 / r),
                    limited_by: Some(kind.into()),
                    ..Sample::default()
                }),
            )
        };
        Comparison::new(
            &[
                side("a", &[58258.9, 56145.8, 51174.4], base_kind),
                side("b", &[85931.4, 86542.3, 89740.0], other_kind),
            ],
            &[Metric::Rps, Metric::P99],
        )
    }

    #[test]
    fn a_side_busy_or_client_bound_in_most_repetitions_is_never_better_or_worse() {
        // Quiet on both sides: INCR +58.6% is a finding.
        let quiet = busy_incr("neither", "server-bound");
        let rps = quiet.tests[0].rows[0].changes[0].unwrap();
        assert!(rps.is_finding(), "{rps:?}");
        assert!(
            quiet.tests[0].rows[1].changes[0].unwrap().is_finding(),
            "p99 too"
        );
        // The same figures on a busy machine: the effect and its interval stay, the verdict
        // does not.
        let busy = busy_incr("machine-busy", "machine-busy");
        for (r, q) in busy.tests[0].rows.iter().zip(&quiet.tests[0].rows) {
            let c = r.changes[0].unwrap();
            assert_eq!(c.estimate, q.changes[0].unwrap().estimate);
            assert!(c.estimate.is_some());
            assert_eq!(
                c.judgement,
                Judgement::Unattributable(Limits {
                    base: Some(Verdict::MachineBusy),
                    other: Some(Verdict::MachineBusy)
                })
            );
            assert!(!c.is_finding() && !c.is_noise(), "{c:?}");
            assert_eq!(c.gate(5.0), Gate::CantTell);
        }
        assert!(busy.worse_than(0.0).is_empty(), "neither fails the gate…");
        assert_eq!(busy.cannot_gate(0.0).len(), 2, "…nor passes it silently");
        // One side is enough; client-bound counts as well.
        let one = busy_incr("neither", "client-bound");
        let c = one.tests[0].rows[0].changes[0].unwrap();
        assert_eq!(
            c.judgement,
            Judgement::Unattributable(Limits {
                base: None,
                other: Some(Verdict::ClientBound)
            })
        );
        assert_eq!(c.judgement.name(), "unattributable");
        // Most means more than half: one busy repetition of three is not most.
        assert!(mostly(2, 3) && mostly(1, 1) && !mostly(1, 2) && !mostly(1, 3));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
