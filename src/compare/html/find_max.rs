//! The `--find-max` section's chart and words: the latency-vs-throughput curve of each run's
//! search, its steps as the record judged them, the SLO's bounds, and the answer with its caveat.
//!
//! Owns: drawing a search. Must not: judge a step (the record's `met`/`saturated` are drawn).

use crate::compare::input::Input;

use crate::html::svg::{Chart, Dot, Rule, Series, Stroke, XAxis};
use crate::html::svg::{chart, colour};

/// The latency-vs-throughput curve of the runs that hold a `--find-max` search: p50 (solid) and
/// p99 (dashed) of each step against the throughput it achieved, in rate order, on a log latency
/// axis (the steps under a 1 ms SLO and the collapse above it differ by decades). Each step's
/// p99 is a judged point (met: circle, broken: cross, as the record judged it) and each SLO
/// latency bound is a line. `None` when no run has steps.
pub fn find_max(inputs: &[Input]) -> Option<Chart> {
    let mut series = Vec::new();
    let mut legend = Vec::new();
    let mut dots = Vec::new();
    let mut rules: Vec<Rule> = Vec::new();
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
        for p in &points {
            dots.push(step_dot(&input.label, p));
        }
        for r in slo_rules(&curve.slo) {
            if !rules.contains(&r) {
                rules.push(r);
            }
        }
        legend.push((input.label.clone(), c));
    }
    let mut chart = chart(
        "find-max",
        "find-max",
        "Latency vs throughput (p50 solid, p99 dashed; ● met, ✕ broken)",
        "achieved requests/s",
        "ms (log)",
        XAxis::Linear,
        series,
    )?;
    chart.legend = legend;
    chart.dots = dots;
    chart.rules = rules;
    chart.y_log = true;
    Some(chart)
}

/// A step as a judged point: met only when the record says so and it ran at its rate.
fn step_dot(label: &str, p: &crate::compare::input::CurvePoint) -> Dot {
    let ok = p.met && !p.saturated;
    let verdict = match (p.met, p.saturated) {
        (_, true) => "broken (fell behind its offered rate)",
        (true, false) => "met",
        (false, false) => "broken",
    };
    Dot {
        x: p.achieved_rps,
        y: p.p99_us / 1000.0,
        ok,
        label: format!(
            "{label}: {} req/s offered, {:.0} achieved, p50 {:.3} ms, p99 {:.3} ms: SLO {verdict}",
            p.offered_rps,
            p.achieved_rps,
            p.p50_us / 1000.0,
            p.p99_us / 1000.0
        ),
    }
}

/// The SLO's latency bounds as lines (an error bound has no place on a latency axis).
fn slo_rules(slo: &str) -> Vec<Rule> {
    let Ok(parsed) = crate::slo::Slo::parse(slo) else {
        return Vec::new();
    };
    parsed
        .conditions
        .iter()
        .filter_map(|c| match c {
            crate::slo::Condition::Latency { limit_us, .. } => Some(Rule {
                kind: "slo",
                y: limit_us / 1000.0,
                label: format!("SLO {c}"),
            }),
            crate::slo::Condition::Errors { .. } => None,
        })
        .collect()
}

/// One line per run with a `--find-max` search: its SLO, answer and the answer's caveat (how the
/// search ended, as the record says).
pub fn find_max_notes(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .filter_map(|input| {
            let c = input.find_max.as_ref()?;
            let n = c.points.len();
            let answer = match (c.answer_rps, c.end.as_str()) {
                (Some(rps), "rate-cap") => format!(
                    "at least {rps:.0} req/s (every step met it, up to the largest rate the search offers)"
                ),
                (Some(rps), "window-limit" | "step-limit") => format!(
                    "{rps:.0} req/s so far (the search stopped at its limit of {n} windows)"
                ),
                (Some(rps), "stopped" | "running") => {
                    format!("{rps:.0} req/s so far (the search was stopped after {n} steps)")
                }
                (Some(rps), _) => format!("{rps:.0} req/s"),
                (None, "too-noisy") => match c.no_growth_rps {
                    Some(r) => format!(
                        "too noisy to answer on that machine (the SLO broke by no more at {r} \
                         req/s than at the failing rate: the machine's stalls, not the load, set \
                         the boundary)"
                    ),
                    None => "too noisy to answer on that machine (its windows disagreed)".into(),
                },
                (None, "never-met" | "converged" | "") => "no step met it".to_string(),
                (None, _) => format!("no step met it so far (the search ended: {})", c.end),
            };
            let limit = c
                .limit
                .as_deref()
                .map(|l| format!("; the failing step above it fell behind its rate, limited by: {l}"))
                .unwrap_or_default();
            Some(format!(
                "{}: max throughput with {}: {answer} ({n} steps){limit}",
                input.label, c.slo,
            ))
        })
        .collect()
}
