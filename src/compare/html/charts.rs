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

/// The charts of one test, in page order.
pub fn for_test(inputs: &[Input], test: &str) -> Vec<Chart> {
    let runs = details(inputs, test);
    let legend: Vec<(String, &'static str)> = inputs
        .iter()
        .enumerate()
        .filter(|(_, i)| i.tests.iter().any(|t| t.name == test))
        .map(|(k, i)| (i.label.clone(), colour(k)))
        .collect();
    let mut tput = Vec::new();
    let mut lat = Vec::new();
    let mut spec = Vec::new();
    let mut errs = Vec::new();
    let mut cpu = Vec::new();
    let mut mem = Vec::new();
    let line = |label: String, colour, stroke, points| Series {
        label,
        colour,
        stroke,
        points,
    };
    for (i, label, d) in &runs {
        let c = colour(*i);
        let tl = &d.timeline;
        let t = |f: &dyn Fn(&crate::compare::input::SecondRow) -> f64| {
            tl.iter().map(|r| (r.second, f(r))).collect::<Vec<_>>()
        };
        tput.push(line(
            label.clone(),
            c,
            Stroke::Solid,
            t(&|r| r.completed as f64),
        ));
        lat.push(line(
            format!("{label} p50"),
            c,
            Stroke::Solid,
            t(&|r| r.p50 / 1000.0),
        ));
        lat.push(line(
            format!("{label} p99"),
            c,
            Stroke::Dashed,
            t(&|r| r.p99 / 1000.0),
        ));
        lat.push(line(
            format!("{label} max"),
            c,
            Stroke::Dotted,
            t(&|r| r.max / 1000.0),
        ));
        errs.push(line(
            format!("{label} errors"),
            c,
            Stroke::Solid,
            t(&|r| r.failed as f64),
        ));
        let ms = |v: &[(f64, f64)]| v.iter().map(|&(q, us)| (q, us / 1000.0)).collect();
        spec.push(line(
            format!("{label} corrected"),
            c,
            Stroke::Solid,
            ms(&d.spectrum_corrected),
        ));
        spec.push(line(
            format!("{label} uncorrected"),
            c,
            Stroke::Dashed,
            ms(&d.spectrum_uncorrected),
        ));
        for s in &d.servers {
            let name = if d.servers.len() > 1 {
                format!("{label} {}", s.address)
            } else {
                label.clone()
            };
            cpu.push(line(
                format!("{name} process"),
                c,
                Stroke::Solid,
                s.points.iter().map(|p| (p.t, p.cpu_pct)).collect(),
            ));
            cpu.push(line(
                format!("{name} main thread"),
                c,
                Stroke::Dashed,
                s.points
                    .iter()
                    .filter_map(|p| Some((p.t, p.main_thread_cpu_pct?)))
                    .collect(),
            ));
            let mb = |b: u64| b as f64 / 1_048_576.0;
            mem.push(line(
                format!("{name} rss"),
                c,
                Stroke::Solid,
                s.points
                    .iter()
                    .map(|p| (p.t, mb(p.used_memory_rss)))
                    .collect(),
            ));
            mem.push(line(
                format!("{name} used_memory"),
                c,
                Stroke::Dashed,
                s.points.iter().map(|p| (p.t, mb(p.used_memory))).collect(),
            ));
        }
    }
    // Errors are drawn whenever there is a timeline: a flat zero line is a finding too.
    [
        chart(
            "throughput",
            test,
            "Throughput per second",
            "second",
            "requests/s",
            XAxis::Linear,
            tput,
        ),
        chart(
            "latency",
            test,
            "Latency per second (p50 solid, p99 dashed, max dotted)",
            "second",
            "ms",
            XAxis::Linear,
            lat,
        ),
        chart(
            "spectrum",
            test,
            "Latency by percentile (corrected solid, uncorrected dashed)",
            "percentile (log 1/(1-q))",
            "ms",
            XAxis::Quantile,
            spec,
        ),
        chart(
            "errors",
            test,
            "Error replies per second",
            "second",
            "errors/s",
            XAxis::Linear,
            errs,
        ),
        chart(
            "server-cpu",
            test,
            "Server CPU (process solid, main thread dashed)",
            "second",
            "% of one core",
            XAxis::Linear,
            cpu,
        ),
        chart(
            "server-memory",
            test,
            "Server memory (rss solid, used_memory dashed)",
            "second",
            "MiB",
            XAxis::Linear,
            mem,
        ),
    ]
    .into_iter()
    .flatten()
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
