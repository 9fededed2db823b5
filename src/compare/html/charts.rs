//! Which charts a test gets, from the runs' series: throughput, latency (p50, p99, max) and
//! errors over time, the percentile spectrum (corrected and uncorrected), server CPU and memory.
//! One colour per run; the line style tells a run's series apart; a run with repetitions draws
//! each (`label #2`). A chart with no data in any run is left out.

use crate::compare::input::{Detail, Input};

use super::svg::{Chart, Series, Stroke, XAxis};

/// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// The colour of input `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Every run's details of `test`: `(input index, series label prefix, detail)`.
fn details<'a>(inputs: &'a [Input], test: &str) -> Vec<(usize, String, &'a Detail)> {
    let mut out = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(t) = input.tests.iter().find(|t| t.name == test) else {
            continue;
        };
        let reps = t.samples.len();
        for (k, s) in t.samples.iter().enumerate() {
            if let Some(d) = &s.detail {
                let label = if reps > 1 {
                    format!("{} #{}", input.label, k + 1)
                } else {
                    input.label.clone()
                };
                out.push((i, label, &**d));
            }
        }
    }
    out
}

fn chart(
    kind: &'static str,
    test: &str,
    title: &str,
    x_label: &'static str,
    y_label: &'static str,
    x_axis: XAxis,
    series: Vec<Series>,
) -> Option<Chart> {
    series.iter().any(|s| !s.points.is_empty()).then(|| Chart {
        kind,
        test: test.to_string(),
        title: title.to_string(),
        x_label,
        y_label,
        x_axis,
        series,
        legend: Vec::new(),
    })
}

/// The six charts of a test: id, title, x label, y label, x axis; in page order.
const KINDS: [(&str, &str, &str, &str, XAxis); 6] = [
    (
        "throughput",
        "Throughput per second",
        "second",
        "requests/s",
        XAxis::Linear,
    ),
    (
        "latency",
        "Latency per second (p50 solid, p99 dashed, max dotted)",
        "second",
        "ms",
        XAxis::Linear,
    ),
    (
        "spectrum",
        "Latency by percentile (corrected solid, uncorrected dashed)",
        "percentile (log 1/(1-q))",
        "ms",
        XAxis::Quantile,
    ),
    (
        "errors",
        "Error replies per second",
        "second",
        "errors/s",
        XAxis::Linear,
    ),
    (
        "server-cpu",
        "Server CPU (process solid, main thread dashed)",
        "second",
        "% of one core",
        XAxis::Linear,
    ),
    (
        "server-memory",
        "Server memory (rss solid, used_memory dashed)",
        "second",
        "MiB",
        XAxis::Linear,
    ),
];

/// The series of each chart of [`KINDS`], in the same order, gathered run by run.
#[derive(Default)]
struct Gathered([Vec<Series>; 6]);

impl Gathered {
    fn push(
        &mut self,
        chart: usize,
        label: String,
        colour: &'static str,
        stroke: Stroke,
        points: Vec<(f64, f64)>,
    ) {
        self.0[chart].push(Series {
            label,
            colour,
            stroke,
            points,
        });
    }

    /// A run's client-side series: throughput, latency, errors per second, and its spectrum.
    fn run(&mut self, label: &str, c: &'static str, d: &Detail) {
        let t = |f: &dyn Fn(&crate::compare::input::SecondRow) -> f64| {
            d.timeline
                .iter()
                .map(|r| (r.second, f(r)))
                .collect::<Vec<_>>()
        };
        self.push(
            0,
            label.to_string(),
            c,
            Stroke::Solid,
            t(&|r| r.completed as f64 / r.span),
        );
        self.push(
            1,
            format!("{label} p50"),
            c,
            Stroke::Solid,
            t(&|r| r.p50 / 1000.0),
        );
        self.push(
            1,
            format!("{label} p99"),
            c,
            Stroke::Dashed,
            t(&|r| r.p99 / 1000.0),
        );
        self.push(
            1,
            format!("{label} max"),
            c,
            Stroke::Dotted,
            t(&|r| r.max / 1000.0),
        );
        let ms = |v: &[(f64, f64)]| v.iter().map(|&(q, us)| (q, us / 1000.0)).collect();
        self.push(
            2,
            format!("{label} corrected"),
            c,
            Stroke::Solid,
            ms(&d.spectrum_corrected),
        );
        self.push(
            2,
            format!("{label} uncorrected"),
            c,
            Stroke::Dashed,
            ms(&d.spectrum_uncorrected),
        );
        self.push(
            3,
            format!("{label} errors"),
            c,
            Stroke::Solid,
            t(&|r| r.failed as f64 / r.span),
        );
        for s in &d.servers {
            let name = if d.servers.len() > 1 {
                format!("{label} {}", s.address)
            } else {
                label.to_string()
            };
            self.server(&name, c, s);
        }
    }

    /// One server's CPU and memory per second.
    fn server(&mut self, name: &str, c: &'static str, s: &crate::compare::input::ServerSeries) {
        let pts = |f: &dyn Fn(&crate::compare::input::ServerPoint) -> Option<f64>| {
            s.points.iter().filter_map(|p| Some((p.t, f(p)?))).collect()
        };
        let mb = |b: u64| b as f64 / 1_048_576.0;
        self.push(
            4,
            format!("{name} process"),
            c,
            Stroke::Solid,
            pts(&|p| Some(p.cpu_pct)),
        );
        self.push(
            4,
            format!("{name} main thread"),
            c,
            Stroke::Dashed,
            pts(&|p| p.main_thread_cpu_pct),
        );
        self.push(
            5,
            format!("{name} rss"),
            c,
            Stroke::Solid,
            pts(&|p| Some(mb(p.used_memory_rss))),
        );
        self.push(
            5,
            format!("{name} used_memory"),
            c,
            Stroke::Dashed,
            pts(&|p| Some(mb(p.used_memory))),
        );
    }
}

/// The charts of one test, in page order (a chart no run has data for is left out; errors are
/// drawn whenever there is a timeline: a flat zero line is a finding too).
pub fn for_test(inputs: &[Input], test: &str) -> Vec<Chart> {
    let legend: Vec<(String, &'static str)> = inputs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.tests.iter().any(|t| t.name == test))
        .map(|(k, i)| (i.label.clone(), colour(k)))
        .collect();
    let mut g = Gathered::default();
    for (i, label, d) in details(inputs, test) {
        g.run(&label, colour(i), d);
    }
    KINDS
        .iter()
        .zip(g.0)
        .filter_map(|(&(kind, title, x, y, axis), series)| {
            chart(kind, test, title, x, y, axis, series)
        })
        .map(|mut c| {
            c.legend = legend.clone();
            c
        })
        .collect()
}

/// Totals the charts cannot show per second: error replies and cluster redirects, per run.
pub fn totals_note(inputs: &[Input], test: &str) -> Vec<String> {
    details(inputs, test)
        .into_iter()
        .filter(|(_, _, d)| d.errors > 0 || d.redirects.iter().any(|r| r.1 > 0))
        .map(|(_, label, d)| {
            let redirects: Vec<String> = d
                .redirects
                .iter()
                .filter(|r| r.1 > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let mut s = format!("{label}: {} error replies", d.errors);
            if !redirects.is_empty() {
                s.push_str(&format!(", redirects {}", redirects.join(", ")));
            }
            s
        })
        .collect()
}

/// The latency-vs-throughput curve of the runs that hold a `--find-max` search: p50 (solid) and
/// p99 (dashed) of each step against the throughput it achieved, in rate order. `None` when no
/// run has steps.
pub fn find_max(inputs: &[Input]) -> Option<Chart> {
    let mut series = Vec::new();
    let mut legend = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(curve) = &input.find_max else {
            continue;
        };
        let mut points = curve.points.clone();
        points.sort_by(|a, b| a.achieved_rps.total_cmp(&b.achieved_rps));
        let line = |f: fn(&crate::compare::input::CurvePoint) -> f64| {
            points
                .iter()
                .map(|p| (p.achieved_rps, f(p) / 1000.0))
                .collect::<Vec<_>>()
        };
        let c = colour(i);
        for (name, stroke, pts) in [
            ("p50", Stroke::Solid, line(|p| p.p50_us)),
            ("p99", Stroke::Dashed, line(|p| p.p99_us)),
        ] {
            series.push(Series {
                label: format!("{} {name}", input.label),
                colour: c,
                stroke,
                points: pts,
            });
        }
        legend.push((input.label.clone(), c));
    }
    let mut chart = chart(
        "find-max",
        "find-max",
        "Latency vs throughput (p50 solid, p99 dashed), one point per step",
        "achieved requests/s",
        "ms",
        XAxis::Linear,
        series,
    )?;
    chart.legend = legend;
    Some(chart)
}

/// One line per run with a `--find-max` search: its SLO and answer.
pub fn find_max_notes(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .filter_map(|input| {
            let c = input.find_max.as_ref()?;
            let answer = match c.answer_rps {
                Some(rps) => format!("{rps:.0} req/s"),
                None => "no step met it".to_string(),
            };
            Some(format!(
                "{}: max throughput with {}: {answer} ({} steps)",
                input.label,
                c.slo,
                c.points.len()
            ))
        })
        .collect()
}
