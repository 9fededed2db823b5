//! Line charts as inline SVG, drawn by respbench: the page needs no script, no font and no
//! library to show them, so it opens offline, is the same bytes for the same data, and stays
//! small (a path per series). Native SVG `<title>` elements are the tooltips.
//!
//! Owns: scales, ticks, axis labels, the log `1/(1-q)` axis of the percentile spectrum. Must
//! not: know about tests or runs (the page passes series).

use std::fmt::Write as _;

use super::esc;

/// How the x axis maps values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XAxis {
    /// Plain numbers (seconds).
    #[default]
    Linear,
    /// Quantiles q in [0, 1] drawn at log10(1/(1-q)), labelled as percentiles; q = 1 (the
    /// maximum) is drawn one tenth of a decade after the series' last percentile.
    Quantile,
}

/// Line style, to tell series of the same run apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

/// One line.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub colour: &'static str,
    pub stroke: Stroke,
    pub points: Vec<(f64, f64)>,
}

/// A shaded span of x (an outage): `data-band`, `data-start`, `data-end` for the DOM checks, the
/// label as its tooltip.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub kind: &'static str,
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// A shaded spread between two lines over the same x values (repetitions' lowest and highest),
/// labelled by its tooltip.
#[derive(Clone, Debug, PartialEq)]
pub struct Area {
    pub label: String,
    pub colour: &'static str,
    /// `(x, low, high)`, ascending x.
    pub points: Vec<(f64, f64, f64)>,
}

/// A vertical line at one x (a Sentinel switch), labelled on the chart, not by colour alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    pub kind: &'static str,
    pub x: f64,
    pub label: String,
}

/// A horizontal line at one y (an SLO, the 80% CPU line), labelled at its right end.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub kind: &'static str,
    pub y: f64,
    pub label: String,
}

/// One judged point (a `--find-max` step): a filled circle when `ok`, a cross otherwise, so the
/// judgement is carried by shape and not by colour alone; the label is its tooltip.
#[derive(Clone, Debug, PartialEq)]
pub struct Dot {
    pub x: f64,
    pub y: f64,
    pub ok: bool,
    pub label: String,
}

/// One chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    /// `data-chart`: what it shows (`throughput`, `latency`, `spectrum`, ...).
    pub kind: &'static str,
    /// `data-test`: the test it belongs to.
    pub test: String,
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub x_axis: XAxis,
    pub series: Vec<Series>,
    /// The runs' colours, named at the top right (`(label, colour)`).
    pub legend: Vec<(String, &'static str)>,
    pub bands: Vec<Band>,
    pub areas: Vec<Area>,
    pub markers: Vec<Marker>,
    pub rules: Vec<Rule>,
    pub dots: Vec<Dot>,
    /// Time from the test's start: the x axis begins at 0 whatever the first point.
    pub x_from_zero: bool,
    /// A log10 y axis (latencies spanning decades, as `--find-max`'s); values ≤ 0 are not drawn.
    pub y_log: bool,
}

/// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// The colour of input `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A chart of `series`, or `None` when no series has a point (a chart with no data in any run is
/// left out).
pub fn chart(
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
        ..Chart::default()
    })
}

const W: f64 = 520.0;
const H: f64 = 250.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 38.0;
const BOTTOM: f64 = 40.0;

/// "Nice" tick step (1, 2 or 5 × 10^k) for about `n` ticks over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A tick label without needless decimals.
fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// `log10(1/(1-q))` for q < 1.
fn qx(q: f64) -> f64 {
    -(1.0 - q).log10()
}

/// The quantile label of a decade position: 0 → `0%`, 1 → `90%`, 3 → `99.9%`.
fn quantile_label(x: f64) -> String {
    let q = (1.0 - 10f64.powf(-x)) * 100.0;
    let decimals = (x.round() as i64 - 2).max(0) as usize;
    format!("{q:.decimals$}%")
}

/// The series' points in axis space (the quantile axis transformed).
fn placed(chart: &Chart) -> Vec<Vec<(f64, f64)>> {
    chart
        .series
        .iter()
        .map(|s| match chart.x_axis {
            XAxis::Linear => s.points.clone(),
            XAxis::Quantile => {
                let mut out: Vec<(f64, f64)> = Vec::new();
                for &(q, y) in &s.points {
                    let x = if q < 1.0 {
                        qx(q)
                    } else {
                        out.last().map_or(0.0, |p| p.0) + 0.1
                    };
                    out.push((x, y));
                }
                out
            }
        })
        .collect()
}

/// The chart as an `<svg>` element (empty string when no series has a point).
pub fn render(chart: &Chart) -> String {
    let pts = placed(chart);
    let mut all: Vec<(f64, f64)> = pts
        .iter()
        .flatten()
        .copied()
        .chain(chart.dots.iter().map(|d| (d.x, d.y)))
        .chain(
            chart
                .areas
                .iter()
                .flat_map(|a| &a.points)
                .map(|p| (p.0, p.2)),
        )
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .filter(|p| !chart.y_log || p.1 > 0.0)
        .collect();
    if all.is_empty() {
        return String::new();
    }
    // The rules stay in sight: an SLO above every point is still drawn.
    let x = all[0].0;
    all.extend(chart.rules.iter().map(|r| (x, r.y)));
    if chart.x_from_zero {
        all.push((0.0, all[0].1));
    }
    let Some(frame) = Frame::around(&all, chart.x_axis, chart.y_log) else {
        return String::new();
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" data-chart="{}" data-test="{}" viewBox="0 0 {W} {H}" role="img" aria-label="{}"><title>{}</title>"#,
        chart.kind,
        esc(&chart.test),
        esc(&chart.title),
        esc(&chart.title)
    );
    let _ = write!(
        s,
        r#"<text class="ct" x="{LEFT}" y="16">{}</text>"#,
        esc(&chart.title)
    );
    legend(&mut s, &chart.legend);
    axes(&mut s, chart, &frame);
    for b in &chart.bands {
        band(&mut s, b, &frame);
    }
    for a in &chart.areas {
        area(&mut s, a, &frame);
    }
    for (series, points) in chart.series.iter().zip(&pts) {
        line(&mut s, series, points, &frame);
    }
    for r in &chart.rules {
        rule(&mut s, r, &frame);
    }
    // Each marker's label on the first line down where it clears the labels already placed
    // there (markers a second apart would print over each other on one line).
    let mut rows: Vec<f64> = Vec::new();
    for m in &chart.markers {
        let x = frame.sx(m.x.clamp(frame.x0, frame.x1)) + 3.0;
        let width = (m.kind.chars().count() + 2) as f64 * 6.5;
        let row = rows.iter().position(|&end| x > end).unwrap_or(rows.len());
        if row == rows.len() {
            rows.push(0.0);
        }
        rows[row] = x + width;
        marker(&mut s, m, &frame, row);
    }
    for d in &chart.dots {
        dot(&mut s, d, &frame);
    }
    s.push_str("</svg>");
    s
}

/// The data's extent and its mapping to the drawing area.
struct Frame {
    x0: f64,
    x1: f64,
    /// Linear: 0; log: the decade below the smallest value (as log10).
    y0: f64,
    y1: f64,
    y_step: f64,
    y_log: bool,
}

impl Frame {
    /// `None` when there is nothing to draw.
    fn around(all: &[(f64, f64)], x_axis: XAxis, y_log: bool) -> Option<Frame> {
        if all.is_empty() {
            return None;
        }
        let (mut x0, mut x1) = all
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if x_axis == XAxis::Quantile {
            x0 = 0.0;
        }
        let y_max = all.iter().fold(0f64, |m, p| m.max(p.1));
        if y_log {
            let y_min = all.iter().fold(f64::MAX, |m, p| m.min(p.1));
            let y0 = y_min.log10().floor();
            let y1 = y_max.log10().ceil().max(y0 + 1.0);
            return Some(Frame {
                x0,
                x1,
                y0,
                y1,
                y_step: 1.0,
                y_log,
            });
        }
        let y_step = nice_step(if y_max > 0.0 { y_max } else { 1.0 }, 4.0);
        let y1 = (y_max / y_step).ceil().max(1.0) * y_step;
        Some(Frame {
            x0,
            x1,
            y0: 0.0,
            y1,
            y_step,
            y_log,
        })
    }

    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }

    /// The y pixel of a value (of its log10 on a log axis).
    fn sy(&self, y: f64) -> f64 {
        let v = if self.y_log { y.log10() } else { y };
        H - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)
    }
}

/// The grid, the ticks and the axis labels.
fn axes(s: &mut String, chart: &Chart, f: &Frame) {
    let mut v = f.y0;
    while v <= f.y1 + f.y_step / 2.0 {
        let (y, label) = if f.y_log {
            (f.sy(10f64.powf(v)), tick(10f64.powf(v)))
        } else {
            (f.sy(v), tick(v))
        };
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tk" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            W - RIGHT,
            LEFT - 5.0,
            y + 4.0,
            label
        );
        v += f.y_step;
    }
    for (x, label) in x_ticks(chart.x_axis, f.x0, f.x1) {
        let px = f.sx(x);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{:.1}"/><text class="tk" x="{px:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            H - BOTTOM,
            H - BOTTOM + 14.0
        );
    }
    let _ = write!(
        s,
        r#"<text class="al" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 6.0,
        chart.x_label
    );
    let _ = write!(
        s,
        r#"<text class="al" transform="translate(13 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (TOP + H - BOTTOM) / 2.0,
        chart.y_label
    );
}

/// One series as a path. A point whose y is not finite (NaN) is a gap: the line stops there
/// and starts again after it, never joining the figures on either side (a second without
/// figures is not interpolated). A run of one point between gaps gets a dot, having no length.
fn line(s: &mut String, series: &Series, points: &[(f64, f64)], f: &Frame) {
    let mut d: Vec<String> = Vec::new();
    let mut lone: Vec<(f64, f64)> = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut flush = |run: &mut Vec<(f64, f64)>, d: &mut Vec<String>| {
        if run.len() == 1 {
            lone.push(run[0]);
        }
        for (i, p) in run.iter().enumerate() {
            d.push(format!(
                "{}{:.1},{:.1}",
                if i == 0 { 'M' } else { 'L' },
                f.sx(p.0),
                f.sy(p.1)
            ));
        }
        run.clear();
    };
    for &p in points {
        if p.0.is_finite() && p.1.is_finite() && (!f.y_log || p.1 > 0.0) {
            run.push(p);
        } else {
            flush(&mut run, &mut d);
        }
    }
    flush(&mut run, &mut d);
    if d.is_empty() {
        return;
    }
    let dash = match series.stroke {
        Stroke::Solid => "",
        Stroke::Dashed => r#" stroke-dasharray="6 3""#,
        Stroke::Dotted => r#" stroke-dasharray="2 3""#,
    };
    let _ = write!(
        s,
        r#"<path class="line" data-series="{}" d="{}" stroke="{}"{dash}><title>{}</title></path>"#,
        esc(&series.label),
        d.join(""),
        series.colour,
        esc(&series.label)
    );
    for p in lone {
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
            f.sx(p.0),
            f.sy(p.1),
            series.colour
        );
    }
}

/// An outage band: shaded, with its span in data attributes and its figures as the tooltip.
fn band(s: &mut String, b: &Band, f: &Frame) {
    let (a, z) = (f.sx(b.x0.max(f.x0)), f.sx(b.x1.min(f.x1)));
    let _ = write!(
        s,
        r##"<rect class="band" data-band="{}" data-start="{}" data-end="{}" x="{a:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#b3261e" fill-opacity="0.12" stroke="#b3261e" stroke-opacity="0.5" stroke-dasharray="3 2"><title>{}</title></rect>"##,
        b.kind,
        b.x0,
        b.x1,
        (z - a).max(1.5),
        H - TOP - BOTTOM,
        esc(&b.label)
    );
}

/// A spread as a filled polygon: along the highs, back along the lows.
fn area(s: &mut String, a: &Area, f: &Frame) {
    let pts: Vec<&(f64, f64, f64)> = a
        .points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && p.2.is_finite())
        .collect();
    if pts.len() < 2 {
        return;
    }
    let mut d = String::new();
    for (i, p) in pts.iter().enumerate() {
        let _ = write!(
            d,
            "{}{:.1},{:.1}",
            if i == 0 { 'M' } else { 'L' },
            f.sx(p.0),
            f.sy(p.2)
        );
    }
    for p in pts.iter().rev() {
        let _ = write!(d, "L{:.1},{:.1}", f.sx(p.0), f.sy(p.1));
    }
    let _ = write!(
        s,
        r#"<path class="spread" d="{d}Z" fill="{}" fill-opacity="0.18" stroke="none"><title>{}</title></path>"#,
        a.colour,
        esc(&a.label)
    );
}

/// A labelled vertical marker, its label on line `row` (0: the top) of the labels.
fn marker(s: &mut String, m: &Marker, f: &Frame, row: usize) {
    let x = f.sx(m.x.clamp(f.x0, f.x1));
    let _ = write!(
        s,
        r##"<g class="marker" data-marker="{}" data-x="{}"><line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#6a1b9a" stroke-width="1.5" stroke-dasharray="5 2"/><text x="{:.1}" y="{:.1}" fill="#6a1b9a">▼ {}</text><title>{}</title></g>"##,
        m.kind,
        m.x,
        H - BOTTOM,
        x + 3.0,
        TOP + 10.0 + 12.0 * row as f64,
        m.kind,
        esc(&m.label)
    );
}

/// A labelled horizontal rule (the SLO, the 80% CPU line).
fn rule(s: &mut String, r: &Rule, f: &Frame) {
    let y = f.sy(r.y);
    let _ = write!(
        s,
        r##"<g class="rule" data-rule="{}" data-y="{}"><line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#b3261e" stroke-width="1.2" stroke-dasharray="8 3"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#b3261e">{}</text></g>"##,
        r.kind,
        r.y,
        W - RIGHT,
        W - RIGHT - 2.0,
        y - 3.0,
        esc(&r.label)
    );
}

/// A judged point: a circle (met) or a cross (broken), with its label as the tooltip.
fn dot(s: &mut String, d: &Dot, f: &Frame) {
    if f.y_log && d.y <= 0.0 {
        return;
    }
    let (x, y) = (f.sx(d.x), f.sy(d.y));
    let mark = if d.ok {
        format!(r##"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="#08753a"/>"##)
    } else {
        format!(
            r##"<path d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="#b3261e" stroke-width="2"/>"##,
            x - 4.0,
            y - 4.0,
            x + 4.0,
            y + 4.0,
            x - 4.0,
            y + 4.0,
            x + 4.0,
            y - 4.0
        )
    };
    let _ = write!(
        s,
        r#"<g class="dot" data-ok="{}">{mark}<title>{}</title></g>"#,
        d.ok,
        esc(&d.label)
    );
}

/// The runs' names in their colours, in a line under the title.
fn legend(s: &mut String, entries: &[(String, &str)]) {
    if entries.len() < 2 {
        return; // One run: the page header names it.
    }
    let mut x = LEFT;
    for (label, colour) in entries {
        let _ = write!(
            s,
            r#"<text class="lg" x="{x:.1}" y="30" fill="{colour}">{}</text>"#,
            esc(label)
        );
        x += 7.0 * label.chars().count() as f64 + 14.0;
    }
}

/// Tick positions and labels along x.
fn x_ticks(axis: XAxis, x0: f64, x1: f64) -> Vec<(f64, String)> {
    match axis {
        XAxis::Linear => {
            let step = nice_step(x1 - x0, 6.0);
            let mut v = (x0 / step).ceil() * step;
            let mut out = Vec::new();
            while v <= x1 + step * 1e-9 {
                out.push((v, tick(v)));
                v += step;
            }
            out
        }
        XAxis::Quantile => {
            // 0% (the minimum) is the left edge; a label there would collide with 50%.
            let mut out = vec![(qx(0.5), "50%".to_string())];
            let mut d = 1.0;
            while d <= x1 + 1e-9 {
                out.push((d, quantile_label(d)));
                d += 1.0;
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(axis: XAxis, points: Vec<(f64, f64)>) -> Chart {
        Chart {
            kind: "latency",
            test: "SET <1>".into(),
            title: "t".into(),
            x_label: "x",
            y_label: "y",
            x_axis: axis,
            series: vec![Series {
                label: "run p99".into(),
                colour: "#000",
                stroke: Stroke::Dashed,
                points,
            }],
            legend: vec![("a".into(), "#111"), ("b<".into(), "#222")],
            ..Chart::default()
        }
    }

    #[test]
    fn ticks_and_labels() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(0.9, 4.0), 0.5);
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(quantile_label(1.0), "90%");
        assert_eq!(quantile_label(2.0), "99%");
        assert_eq!(quantile_label(4.0), "99.99%");
    }

    #[test]
    fn a_chart_has_its_data_attributes_and_an_escaped_test_name() {
        let s = render(&chart(
            XAxis::Linear,
            vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)],
        ));
        assert!(
            s.starts_with(r#"<svg class="chart" data-chart="latency" data-test="SET &lt;1&gt;""#),
            "{s}"
        );
        assert!(s.contains(r#"data-series="run p99""#));
        assert!(s.contains("stroke-dasharray"));
        assert!(s.contains(r##"fill="#222">b&lt;</text>"##), "legend: {s}");
        assert!(s.contains(r##"fill="#222">b&lt;</text>"##), "legend: {s}");
        assert!(render(&chart(XAxis::Linear, vec![])).is_empty());
    }

    #[test]
    fn marker_labels_close_together_go_on_lines_of_their_own() {
        let mut c = chart(XAxis::Linear, (0..=10).map(|i| (i as f64, 1.0)).collect());
        let at = |kind, x| Marker {
            kind,
            x,
            label: String::new(),
        };
        // A switch and a failover 0.2 s apart, a MOVED burst well after them.
        c.markers = vec![at("switch", 2.0), at("failover", 2.2), at("moved", 8.0)];
        let s = render(&c);
        let y = |kind: &str| -> String {
            let g = &s[s.find(&format!("data-marker=\"{kind}\"")).unwrap()..];
            let t = &g[g.find("<text").unwrap()..];
            t[t.find(" y=\"").unwrap() + 4..]
                .split('"')
                .next()
                .unwrap()
                .to_string()
        };
        assert_ne!(y("switch"), y("failover"), "{s}");
        assert_eq!(y("switch"), y("moved"), "{s}");
    }

    #[test]
    fn the_quantile_axis_is_logarithmic() {
        let s = render(&chart(
            XAxis::Quantile,
            vec![
                (0.0, 1.0),
                (0.9, 2.0),
                (0.99, 3.0),
                (0.999, 4.0),
                (1.0, 9.0),
            ],
        ));
        for label in [">50%<", ">90%<", ">99%<", ">99.9%<"] {
            assert!(s.contains(label), "{label} in {s}");
        }
        let pts = placed(&chart(
            XAxis::Quantile,
            vec![(0.0, 1.0), (0.99, 3.0), (1.0, 9.0)],
        ));
        assert!((pts[0][1].0 - 2.0).abs() < 1e-9);
        assert!(
            (pts[0][2].0 - 2.1).abs() < 1e-9,
            "the maximum one step after"
        );
    }
}
