//! The SLO expression of `--find-max`: `p99<1ms`, `p99.9<5ms,errors<0.1%`. Every condition must
//! hold for a step to meet the SLO.
//!
//! Grammar: conditions separated by commas; each is `METRIC < NUMBER UNIT` with optional spaces,
//! METRIC one of `p50 p90 p99 p99.9 avg` (units `us`, `ms`, `s`) or `errors` (unit `%`, the share
//! of replies that were errors). The unit is required: a bare `1` could mean ms or µs, and a
//! wrong guess makes the search answer a different question without saying so.

use std::fmt;

/// A latency figure a condition can bound (corrected latency: from each request's intended
/// time, so an open-loop step that falls behind shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    P50,
    P90,
    P99,
    P999,
    Avg,
}

impl Metric {
    /// As written in the expression and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Avg => "avg",
        }
    }

    fn of(word: &str) -> Option<Metric> {
        Some(match word {
            "p50" => Metric::P50,
            "p90" => Metric::P90,
            "p99" => Metric::P99,
            "p99.9" | "p999" => Metric::P999,
            "avg" => Metric::Avg,
            _ => return None,
        })
    }
}

/// One condition: a figure strictly below a limit.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// A latency percentile (or the mean) below `limit_us` microseconds.
    Latency {
        metric: Metric,
        limit_us: f64,
        /// The limit as typed with its unit (`1ms`), for the answer line.
        shown: String,
    },
    /// Error replies below this percentage of all replies.
    Errors { max_pct: f64, shown: String },
}

/// What a step measured, in the units conditions are written against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub avg_us: f64,
    /// Error replies in percent of all replies (0 when nothing was answered).
    pub error_pct: f64,
}

impl Condition {
    /// Whether `f` satisfies this condition.
    pub fn holds(&self, f: &Figures) -> bool {
        let (value, limit) = self.value_and_limit(f);
        value < limit
    }

    /// The figure over its limit (below 1 the condition holds): how far a window was from the
    /// SLO, so the search can tell whether breaking it grows with the load.
    pub fn ratio(&self, f: &Figures) -> f64 {
        let (value, limit) = self.value_and_limit(f);
        value / limit
    }

    /// The figure this condition bounds, and its limit (above 0, by the parser).
    fn value_and_limit(&self, f: &Figures) -> (f64, f64) {
        match self {
            Condition::Latency {
                metric, limit_us, ..
            } => {
                let v = match metric {
                    Metric::P50 => f.p50_us,
                    Metric::P90 => f.p90_us,
                    Metric::P99 => f.p99_us,
                    Metric::P999 => f.p999_us,
                    Metric::Avg => f.avg_us,
                };
                (v, *limit_us)
            }
            Condition::Errors { max_pct, .. } => (f.error_pct, *max_pct),
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Latency { metric, shown, .. } => write!(f, "{} < {shown}", metric.name()),
            Condition::Errors { shown, .. } => write!(f, "errors < {shown}"),
        }
    }
}

/// A parsed SLO: every condition must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    /// The expression as given (for the record).
    pub text: String,
    pub conditions: Vec<Condition>,
}

impl Slo {
    /// Parses `text`; the error is one line naming what is wrong and what was expected.
    pub fn parse(text: &str) -> Result<Slo, String> {
        let mut conditions = Vec::new();
        for part in text.split(',') {
            conditions
                .push(condition(part.trim()).map_err(|e| format!("--find-max {text:?}: {e}"))?);
        }
        Ok(Slo {
            text: text.to_string(),
            conditions,
        })
    }

    /// Whether every condition holds for `f`.
    pub fn met(&self, f: &Figures) -> bool {
        self.conditions.iter().all(|c| c.holds(f))
    }

    /// The largest of the conditions' [`Condition::ratio`]s: the figure closest to (or furthest
    /// past) its limit.
    pub fn ratio(&self, f: &Figures) -> f64 {
        self.conditions
            .iter()
            .map(|c| c.ratio(f))
            .fold(0.0, f64::max)
    }

    /// Whether the SLO bounds error replies (then errors are counted, not fatal).
    pub fn bounds_errors(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| matches!(c, Condition::Errors { .. }))
    }
}

impl fmt::Display for Slo {
    /// `p99 < 1ms, errors < 0.1%`: the conditions spaced out for the answer line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.conditions.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

const METRICS: &str = "p50, p90, p99, p99.9, avg or errors";

/// One `METRIC < LIMIT` condition.
fn condition(part: &str) -> Result<Condition, String> {
    if part.is_empty() {
        return Err(format!(
            "an empty condition; expected e.g. p99<1ms (metrics: {METRICS})"
        ));
    }
    let Some(lt) = part.find('<') else {
        return Err(format!("{part:?} has no '<'; expected e.g. p99<1ms"));
    };
    let metric = part[..lt].trim().to_ascii_lowercase();
    let limit = part[lt + 1..].trim();
    if limit.starts_with('=') {
        return Err(format!(
            "{part:?}: use '<' (the limit is exclusive), not '<='"
        ));
    }
    if limit.is_empty() {
        return Err(format!(
            "{part:?} has no limit after '<'; expected e.g. {metric}<1ms"
        ));
    }
    let (number, unit) = split_number(limit);
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .ok_or_else(|| {
            format!("{part:?}: the limit {limit:?} does not start with a number above 0")
        })?;
    let unit = unit.trim();
    let shown = format!("{number}{}{unit}", if unit == "%" { "" } else { " " });
    if metric == "errors" {
        if unit != "%" {
            return Err(format!(
                "{part:?}: an errors limit is a percentage, e.g. errors<0.1%"
            ));
        }
        if value > 100.0 {
            return Err(format!("{part:?}: a percentage above 100"));
        }
        return Ok(Condition::Errors {
            max_pct: value,
            shown,
        });
    }
    let Some(m) = Metric::of(&metric) else {
        return Err(format!("unknown metric {metric:?} (metrics: {METRICS})"));
    };
    let scale = match unit {
        "us" | "µs" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        "" => {
            return Err(format!(
                "{part:?}: the limit needs a unit: us, ms or s (e.g. {metric}<{number}ms)"
            ));
        }
        other => return Err(format!("{part:?}: unknown unit {other:?} (us, ms or s)")),
    };
    Ok(Condition::Latency {
        metric: m,
        limit_us: value * scale,
        shown,
    })
}

/// Splits `1.5ms` into `1.5` and `ms`.
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(p99_us: f64, error_pct: f64) -> Figures {
        Figures {
            p99_us,
            error_pct,
            ..Figures::default()
        }
    }

    #[test]
    fn a_latency_condition_in_each_unit() {
        for (text, us) in [
            ("p99<1ms", 1000.0),
            ("p99 < 250us", 250.0),
            ("p99<0.5s", 500_000.0),
        ] {
            let slo = Slo::parse(text).unwrap();
            match &slo.conditions[..] {
                [
                    Condition::Latency {
                        metric, limit_us, ..
                    },
                ] => {
                    assert_eq!(*metric, Metric::P99);
                    assert_eq!(*limit_us, us, "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn every_condition_must_hold() {
        let slo = Slo::parse("p99<1ms,errors<0.1%").unwrap();
        assert!(slo.bounds_errors());
        assert!(slo.met(&figures(999.0, 0.0)));
        assert!(!slo.met(&figures(1000.0, 0.0)), "the limit is exclusive");
        assert!(!slo.met(&figures(10.0, 0.1)));
        assert_eq!(slo.to_string(), "p99 < 1 ms, errors < 0.1%");
    }

    #[test]
    fn each_metric_reads_its_own_figure() {
        let f = Figures {
            p50_us: 1.0,
            p90_us: 2.0,
            p99_us: 3.0,
            p999_us: 4.0,
            avg_us: 5.0,
            error_pct: 0.0,
        };
        for (metric, value) in [
            ("p50", 1.0),
            ("p90", 2.0),
            ("p99", 3.0),
            ("p99.9", 4.0),
            ("avg", 5.0),
        ] {
            let at = Slo::parse(&format!("{metric}<{value}us")).unwrap();
            let above = Slo::parse(&format!("{metric}<{}us", value + 0.5)).unwrap();
            assert!(!at.met(&f) && above.met(&f), "{metric}");
        }
    }

    #[test]
    fn bad_expressions_get_one_line_naming_the_problem() {
        for (text, needle) in [
            ("p98<1ms", "unknown metric \"p98\""),
            ("p99<1", "needs a unit"),
            ("p99<", "no limit"),
            ("p99", "no '<'"),
            ("p99<1ns", "unknown unit"),
            ("p99<-1ms", "number above 0"),
            ("p99<0ms", "number above 0"),
            ("p99<=1ms", "'<='"),
            ("errors<1", "percentage"),
            ("errors<200%", "above 100"),
            ("p99<1ms,", "empty condition"),
            ("", "empty condition"),
        ] {
            let e = Slo::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
            assert!(!e.contains('\n'), "{text}: one line");
        }
    }
}
