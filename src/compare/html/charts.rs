//! Which charts a test gets, from the runs' series: throughput, latency (p50, p99, max) and
//! errors over time, the percentile spectrum (corrected and uncorrected), server CPU and memory.
//! One colour per run; the line style tells a run's series apart; a run with repetitions draws
//! each (`label #2`). A chart with no data in any run is left out.

use crate::compare::input::{Detail, Input};

use crate::html::svg::{Area, Band, Chart, Marker, Rule, Series, Stroke, XAxis, chart, colour};

/// Tests beyond this many get no section of charts, only their rows in the overview and the
/// comparison: a page of thousands of tests' charts (hundreds of megabytes of SVG) does not open,
/// and nobody reads a thousand charts.
pub const MAX_CHARTED_TESTS: usize = 100;

/// Tests beyond this many get no row in the page's tables nor in its embedded data: a CSV of 64k
/// rows made an 87 MB page (and took 1.8 GB and two minutes to draw, each row looking its test
/// up in every input). `compare --format csv` has every test; the page says how many it left out.
pub const MAX_TABLED_TESTS: usize = 1000;

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

/// The charts of a test: id, title, x label, y label, x axis; in page order.
const KINDS: [(&str, &str, &str, &str, XAxis); 9] = [
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
        "lost",
        "Requests lost without a reply per second, by kind (no reply: not error replies)",
        "second",
        "lost/s",
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
    (
        "client-delay",
        "Client delay per second (avg solid, p99 dashed)",
        "second",
        "ms",
        XAxis::Linear,
    ),
    (
        "invalidations",
        "Invalidations per second (--enable-tracking)",
        "second",
        "invalidations/s",
        XAxis::Linear,
    ),
];

/// `f` of each row of `d`'s timeline, at the middle of the time the row covers: a second's rate
/// belongs to the whole second, so it lines up with outages placed at 0.1 s.
fn seconds(d: &Detail, f: &dyn Fn(&crate::compare::input::SecondRow) -> f64) -> Vec<(f64, f64)> {
    d.timeline
        .iter()
        .map(|r| (r.second + r.span / 2.0, f(r)))
        .collect()
}

/// Per second present in every repetition: `(x, median, lowest, highest)` of `f` (the median as
/// `compare` takes it: the middle value, or the mean of the middle two).
fn spread(
    reps: &[&Detail],
    f: impl Fn(&crate::compare::input::SecondRow) -> f64,
) -> Vec<(f64, f64, f64, f64)> {
    let Some(first) = reps.first() else {
        return Vec::new();
    };
    first
        .timeline
        .iter()
        .filter_map(|row| {
            let mut v: Vec<f64> = reps
                .iter()
                .map(|d| d.timeline.iter().find(|r| r.second == row.second).map(&f))
                .collect::<Option<_>>()?;
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let median = if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            };
            Some((row.second + row.span / 2.0, median, v[0], v[n - 1]))
        })
        .collect()
}

/// Points of several repetitions at the x every repetition has (to 0.01): `(x, median, lowest,
/// highest)`; an x some repetition lacks is left out (a gap, never filled in).
fn aligned_spread(series: &[Vec<(f64, f64)>]) -> Vec<(f64, f64, f64, f64)> {
    let key = |x: f64| (x * 100.0).round() as i64;
    let Some(first) = series.first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter_map(|&(x, _)| {
            let mut v: Vec<f64> = series
                .iter()
                .map(|s| s.iter().find(|p| key(p.0) == key(x)).map(|p| p.1))
                .collect::<Option<_>>()?;
            v.sort_by(f64::total_cmp);
            let n = v.len();
            Some((x, (v[(n - 1) / 2] + v[n / 2]) / 2.0, v[0], v[n - 1]))
        })
        .collect()
}

/// The line style of each kind of lost request, in the order of [`lost_kinds`].
const LOST_STROKES: [Stroke; 3] = [Stroke::Solid, Stroke::Dashed, Stroke::Dotted];

/// Every kind of lost request in the runs' test, sorted: one line style each, named in the
/// chart's title (so the kind is not told by colour or style alone).
fn lost_kinds(found: &[(usize, String, &Detail)]) -> Vec<String> {
    let mut kinds: Vec<String> = found
        .iter()
        .flat_map(|(_, _, d)| d.lost.iter().map(|l| l.1.clone()))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// The series of each chart of [`KINDS`], in the same order, gathered run by run.
#[derive(Default)]
struct Gathered([Vec<Series>; 9]);

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
    /// `own_lines`: false for a repetition, whose throughput and latency are drawn as the run's
    /// median and spread instead (`spread`).
    fn run(&mut self, label: &str, c: &'static str, d: &Detail, kinds: &[String], own_lines: bool) {
        let t = |f: &dyn Fn(&crate::compare::input::SecondRow) -> f64| {
            d.timeline
                .iter()
                // At the middle of the time the row covers: a second's rate belongs to the whole
                // second, so it lines up with outages placed at 0.1 s.
                .map(|r| (r.second + r.span / 2.0, f(r)))
                .collect::<Vec<_>>()
        };
        if own_lines {
            self.time_lines(label, c, d);
        }
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
        // Error replies only: the lost requests are in `failed` too, and drawn on their own.
        let lost_in =
            |second: f64| -> u64 { d.lost.iter().filter(|l| l.0 == second).map(|l| l.2).sum() };
        self.push(
            3,
            format!("{label} error replies"),
            c,
            Stroke::Solid,
            t(&|r| r.failed.saturating_sub(lost_in(r.second)) as f64 / r.span),
        );
        for (k, kind) in kinds.iter().enumerate() {
            if !d.lost.iter().any(|l| &l.1 == kind) {
                continue;
            }
            let per = |r: &crate::compare::input::SecondRow| {
                let n: u64 = d
                    .lost
                    .iter()
                    .filter(|l| l.0 == r.second && &l.1 == kind)
                    .map(|l| l.2)
                    .sum();
                n as f64 / r.span
            };
            self.push(
                4,
                format!("{label} lost: {kind}"),
                c,
                LOST_STROKES[k % LOST_STROKES.len()],
                t(&per),
            );
        }
        // Only a test that received invalidations gets the chart (a test without tracking
        // would draw a flat zero line).
        if d.timeline.iter().any(|r| r.invalidations > 0) {
            self.push(
                8,
                format!("{label} invalidations"),
                c,
                Stroke::Solid,
                t(&|r| r.invalidations as f64 / r.span),
            );
        }
        // Seconds without samples are left out (not drawn as zero).
        let delay = |f: fn((f64, f64)) -> f64| -> Vec<(f64, f64)> {
            d.timeline
                .iter()
                .filter_map(|r| Some((r.second + r.span / 2.0, f(r.client_delay?) / 1000.0)))
                .collect()
        };
        self.push(
            7,
            format!("{label} client delay avg"),
            c,
            Stroke::Solid,
            delay(|d| d.0),
        );
        self.push(
            7,
            format!("{label} client delay p99"),
            c,
            Stroke::Dashed,
            delay(|d| d.1),
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

    /// Throughput, and latency (p50, p99, max) per second of one run.
    fn time_lines(&mut self, label: &str, c: &'static str, d: &Detail) {
        let t = |f: &dyn Fn(&crate::compare::input::SecondRow) -> f64| seconds(d, f);
        // A short test has its 100 ms slots: drawn at 0.1 s, not as one or two points.
        let throughput = if d.slots.is_empty() {
            t(&|r| r.completed as f64 / r.span)
        } else {
            d.slots
                .iter()
                .map(|&(start, n)| (start + 0.05, n as f64 / 0.1))
                .collect()
        };
        self.push(0, label.to_string(), c, Stroke::Solid, throughput);
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
        // A short test's slots carry their longest latency: the max drawn at 0.1 s too.
        let max = if d.slot_max.is_empty() {
            t(&|r| r.max / 1000.0)
        } else {
            d.slot_max
                .iter()
                .map(|&(start, us)| (start + 0.05, us / 1000.0))
                .collect()
        };
        self.push(1, format!("{label} max"), c, Stroke::Dotted, max);
    }

    /// A run with repetitions: the median of its repetitions per second, throughput and p50/p99,
    /// with the lowest-to-highest spread of throughput and p99 shaded, so N repetitions read as
    /// one run and its noise rather than N lines of one colour.
    fn repeated(
        &mut self,
        label: &str,
        c: &'static str,
        reps: &[&Detail],
        areas: &mut [Vec<Area>; 9],
    ) {
        let n = reps.len();
        let (tp, p50, p99) = (
            spread(reps, |r| r.completed as f64 / r.span),
            spread(reps, |r| r.p50 / 1000.0),
            spread(reps, |r| r.p99 / 1000.0),
        );
        let median = |v: &[(f64, f64, f64, f64)]| v.iter().map(|p| (p.0, p.1)).collect();
        let area = |v: &[(f64, f64, f64, f64)], what: &str| Area {
            label: format!("{label} {what}: lowest to highest of {n} repetitions"),
            colour: c,
            points: v.iter().map(|p| (p.0, p.2, p.3)).collect(),
        };
        self.push(
            0,
            format!("{label} median of {n}"),
            c,
            Stroke::Solid,
            median(&tp),
        );
        areas[0].push(area(&tp, "throughput"));
        self.push(
            1,
            format!("{label} p50 median of {n}"),
            c,
            Stroke::Solid,
            median(&p50),
        );
        self.push(
            1,
            format!("{label} p99 median of {n}"),
            c,
            Stroke::Dashed,
            median(&p99),
        );
        areas[1].push(area(&p99, "p99"));
        // The other per-second series get their spread too (no median line: each repetition's
        // own line is drawn), so N repetitions' server CPU and client delay read as one band.
        let band = |series: Vec<Vec<(f64, f64)>>, what: &str| {
            let v = aligned_spread(&series);
            (!v.is_empty()).then(|| area(&v, what))
        };
        let cpu = reps
            .iter()
            .map(|d| {
                d.servers
                    .first()
                    .map(|s| s.points.iter().map(|p| (p.t + 0.5, p.cpu_pct)).collect())
                    .unwrap_or_default()
            })
            .collect();
        areas[5].extend(band(cpu, "server CPU"));
        let delay = reps
            .iter()
            .map(|d| {
                d.timeline
                    .iter()
                    .filter_map(|r| Some((r.second + r.span / 2.0, r.client_delay?.1 / 1000.0)))
                    .collect()
            })
            .collect();
        areas[7].extend(band(delay, "client delay p99"));
    }

    /// One server's CPU and memory per second.
    fn server(&mut self, name: &str, c: &'static str, s: &crate::compare::input::ServerSeries) {
        // A gap of more than an interval between samples (the watch lost the server: a restart,
        // a failover) stays a gap: a NaN point breaks the line there.
        // An interval starts at `t` and lasts about a second: drawn at its middle, as the
        // client's seconds are.
        let pts = |f: &dyn Fn(&crate::compare::input::ServerPoint) -> Option<f64>| {
            let mut out: Vec<(f64, f64)> = Vec::new();
            for p in &s.points {
                let Some(v) = f(p) else { continue };
                let x = p.t + 0.5;
                if out.last().is_some_and(|l| x - l.0 > 1.5) {
                    out.push((x - 0.5, f64::NAN));
                }
                out.push((x, v));
            }
            out
        };
        let mb = |b: u64| b as f64 / 1_048_576.0;
        self.push(
            5,
            format!("{name} process"),
            c,
            Stroke::Solid,
            pts(&|p| Some(p.cpu_pct)),
        );
        self.push(
            5,
            format!("{name} main thread"),
            c,
            Stroke::Dashed,
            pts(&|p| p.main_thread_cpu_pct),
        );
        self.push(
            6,
            format!("{name} rss"),
            c,
            Stroke::Solid,
            pts(&|p| Some(mb(p.used_memory_rss))),
        );
        self.push(
            6,
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
    let found = details(inputs, test);
    let kinds = lost_kinds(&found);
    let mut areas: [Vec<Area>; 9] = Default::default();
    for (k, input) in inputs.iter().enumerate() {
        let reps: Vec<&Detail> = found
            .iter()
            .filter(|(i, _, _)| *i == k)
            .map(|x| x.2)
            .collect();
        if reps.len() > 1 {
            g.repeated(&input.label, colour(k), &reps, &mut areas);
        }
    }
    for (i, label, d) in &found {
        let alone = found.iter().filter(|(j, _, _)| j == i).count() == 1;
        g.run(label, colour(*i), d, &kinds, alone);
    }
    let (bands, markers) = time_marks(&found);
    let troubled = cpu_line(inputs, test);
    KINDS
        .iter()
        .zip(g.0)
        .filter(|(k, series)| {
            // An errors chart of zeros says nothing a line of text does not: the page collapses
            // it to "no errors" (see `no_errors`).
            k.0 != "errors" || series.iter().flat_map(|s| &s.points).any(|p| p.1 > 0.0)
        })
        .filter_map(|(&(kind, title, x, y, axis), series)| {
            chart(kind, test, title, x, y, axis, series)
        })
        .map(|mut c| {
            c.legend = legend.clone();
            match c.kind {
                "throughput" => c.areas = areas[0].clone(),
                "latency" => c.areas = areas[1].clone(),
                "server-cpu" => c.areas = areas[5].clone(),
                "client-delay" => c.areas = areas[7].clone(),
                _ => {}
            }
            if c.kind == "throughput" && found.iter().any(|(_, _, d)| !d.slots.is_empty()) {
                c.title = "Throughput per 0.1 s (requests/s)".into();
            }
            if c.kind == "latency" && found.iter().any(|(_, _, d)| !d.slot_max.is_empty()) {
                c.title =
                    "Latency: p50 solid and p99 dashed per second, max dotted per 0.1 s".into();
            }
            if c.kind == "lost" {
                // The kinds in the title (short: `connection reset` is `reset`), by line style.
                let named: Vec<String> = kinds
                    .iter()
                    .zip(["solid", "dashed", "dotted"].iter().cycle())
                    .map(|(k, style)| format!("{} {style}", k.trim_start_matches("connection ")))
                    .collect();
                c.title = format!("Lost without a reply/s: {}", named.join(", "));
            }
            if c.x_axis == XAxis::Linear {
                c.x_from_zero = true;
                c.bands = bands.clone();
                c.markers = markers.clone();
            }
            // A paced run, or one through an outage or a switch, should leave the server room:
            // the 80% line shows how close it came (not for a plain closed-loop test, which
            // saturates by design).
            if c.kind == "server-cpu" && troubled {
                c.rules.push(Rule {
                    kind: "cpu-80",
                    y: CPU_LINE_PCT,
                    label: format!("{CPU_LINE_PCT:.0}%"),
                });
            }
            c
        })
        .collect()
}

/// The server CPU share above which a paced or troubled test is flagged.
pub const CPU_LINE_PCT: f64 = 80.0;

/// Whether `test`'s server CPU gets the 80% line: a paced run (`--rps`) of it, or one that went
/// through an outage or a Sentinel switch.
pub fn cpu_line(inputs: &[Input], test: &str) -> bool {
    let paced = inputs.iter().any(|i| {
        i.facts.iter().any(|(k, _)| *k == "--rps") && i.tests.iter().any(|t| t.name == test)
    });
    paced
        || details(inputs, test)
            .iter()
            .any(|(_, _, d)| !d.outages.is_empty() || !d.switches.is_empty())
}

/// Seconds in which a server's limiting CPU (main thread where reported) went above
/// [`CPU_LINE_PCT`], per run of `test` that had any: `(run label, seconds)`.
pub fn cpu_above_line(inputs: &[Input], test: &str) -> Vec<(String, usize)> {
    details(inputs, test)
        .into_iter()
        .filter_map(|(_, label, d)| {
            let n = d
                .servers
                .iter()
                .flat_map(|s| &s.points)
                .filter(|p| p.main_thread_cpu_pct.unwrap_or(p.cpu_pct) > CPU_LINE_PCT)
                .count();
            (n > 0).then_some((label, n))
        })
        .collect()
}

/// The outages (as bands), Sentinel switches, cluster failovers, MOVED bursts and reconnect
/// storms (as markers, `events`) of every run's test, as the record has them, labelled with the run when several runs share the chart.
fn time_marks(found: &[(usize, String, &Detail)]) -> (Vec<Band>, Vec<Marker>) {
    let named = |label: &str, text: String| {
        if found.len() > 1 {
            format!("{label}: {text}")
        } else {
            text
        }
    };
    let mut bands = Vec::new();
    let mut markers = Vec::new();
    for (_, label, d) in found {
        for o in &d.outages {
            bands.push(Band {
                kind: "outage",
                x0: o.start_s,
                x1: o.end_s,
                label: named(label, super::events::outage_text(o)),
            });
        }
        // A dead primary among several is not an outage of the whole test: its own band.
        for (node, from, to, lost) in &d.node_outages {
            bands.push(Band {
                kind: "node-outage",
                x0: *from,
                x1: *to,
                label: named(
                    label,
                    format!(
                        "cluster node {node}: connections lost from {from:.1} s to {to:.1} s, {lost} requests lost"
                    ),
                ),
            });
        }
        for (at, what) in &d.switches {
            markers.push(Marker {
                kind: "switch",
                x: *at,
                label: named(label, format!("Sentinel switch {what}")),
            });
        }
        markers.extend(super::events::markers(d, &|text| named(label, text)));
    }
    (bands, markers)
}

/// Whether `test` has a timeline in some run and neither error replies nor lost requests (nor lost
/// messages) in any: its errors panel is then one line of text.
pub fn no_errors(inputs: &[Input], test: &str) -> bool {
    let found = details(inputs, test);
    !found.is_empty()
        && found.iter().all(|(_, _, d)| {
            !d.timeline.is_empty()
                && d.timeline.iter().all(|r| r.failed == 0)
                && d.lost.is_empty()
                // Messages never delivered (`--pubsub`, `--stream`) are lost too.
                && d.blocks.iter().all(|(kind, b)| kind.lost(b) == 0)
        })
}

/// Totals the charts cannot show per second: error replies and cluster redirects, per run.
pub fn totals_note(inputs: &[Input], test: &str) -> Vec<String> {
    details(inputs, test)
        .into_iter()
        .filter(|(_, _, d)| d.errors > 0 || d.redirects.iter().any(|r| r.1 > 0))
        .map(|(i, label, d)| {
            let lost: u64 = d.lost.iter().map(|l| l.2).sum();
            (i, label, d, lost)
        })
        .map(|(_, label, d, lost)| {
            let redirects: Vec<String> = d
                .redirects
                .iter()
                .filter(|r| r.1 > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            // The record's failed count includes the lost requests: they were no replies.
            let mut s = format!("{label}: {} error replies", d.errors.saturating_sub(lost));
            if lost > 0 {
                s.push_str(&format!(", {lost} requests lost without a reply"));
            }
            if !redirects.is_empty() {
                s.push_str(&format!(", redirects {}", redirects.join(", ")));
            }
            s
        })
        .collect()
}
