//! The `--find-max` table and answer as text: one row per step, printed as each step ends, and
//! the sentence that answers the question. Pure formatting, so the wording is unit-tested.

use super::expr::Slo;
use super::search::{Conclusion, End, Step, TOLERANCE};

/// One step as the table shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// 1-based.
    pub step: usize,
    pub offered: u64,
    pub achieved: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub errors: u64,
    pub slo_met: bool,
}

impl Row {
    /// The search's view of a row.
    pub fn as_step(&self) -> Step {
        Step {
            offered: self.offered,
            achieved: self.achieved,
            slo_met: self.slo_met,
        }
    }
}

/// What held the achieved rate below the offered one, from the step's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The server's main thread (or command time) near a full core.
    Server,
    /// A respbench worker thread near a full core.
    Client,
    /// Neither near a full core: the connections cannot carry the rate at this latency.
    Connections,
    /// No CPU figures to tell.
    Unknown,
}

impl Limit {
    fn explain(self) -> &'static str {
        match self {
            Limit::Server => "the server saturated (its main thread near a full core)",
            Limit::Client => {
                "respbench saturated (a worker thread near a full core): more --threads would \
                 push further"
            }
            Limit::Connections => {
                "neither side was near a full core: the connections cannot carry that rate at \
                 that latency; raise -c or -P"
            }
            Limit::Unknown => {
                "the load generator or the server saturated (no CPU figures to tell which)"
            }
        }
    }
}

/// The table's header line.
pub fn header() -> String {
    format!(
        "{:>4}  {:>13}  {:>13}  {:>9}  {:>9}  {:>9}  {:>7}  SLO",
        "step", "offered rps", "achieved rps", "p50 ms", "p99 ms", "p99.9 ms", "errors"
    )
}

/// One row; `precision`: decimals of the latency columns.
pub fn row(r: &Row, precision: usize) -> String {
    let ms = |us: f64| format!("{:.precision$}", us / 1000.0);
    let step = r.as_step();
    let status = match (r.slo_met, step.saturated()) {
        (true, false) => "met".to_string(),
        (false, false) => "broken".to_string(),
        (met, true) => format!(
            "{} (achieved {:.0}% of offered)",
            if met { "behind" } else { "broken" },
            r.achieved / r.offered.max(1) as f64 * 100.0
        ),
    };
    format!(
        "{:>4}  {:>13}  {:>13}  {:>9}  {:>9}  {:>9}  {:>7}  {status}",
        r.step,
        group(r.offered),
        group(r.achieved.round() as u64),
        ms(r.p50_us),
        ms(r.p99_us),
        ms(r.p999_us),
        r.errors
    )
}

/// The answer: the number, and why the search trusts it (or what stopped it). `limit`: what
/// held back the failing step above the answer, when that step fell behind.
pub fn answer(slo: &Slo, c: &Conclusion, limit: Option<Limit>) -> String {
    let rps = |s: &Step| group(s.achieved.round() as u64);
    let why_upper = |u: &Step| -> String {
        if u.saturated() && u.slo_met {
            format!(
                "the SLO never broke: at {} req/s offered only {} were achieved: {}",
                group(u.offered),
                rps(u),
                limit.unwrap_or(Limit::Unknown).explain()
            )
        } else if u.saturated() {
            format!(
                "{} req/s offered broke it, achieving only {}: {}",
                group(u.offered),
                rps(u),
                limit.unwrap_or(Limit::Unknown).explain()
            )
        } else {
            format!("{} req/s offered broke it", group(u.offered))
        }
    };
    match (c.end, &c.best, &c.upper) {
        (End::Converged, Some(b), Some(u)) => format!(
            "max throughput with {slo}: {} req/s (within {:.0}%; {})",
            rps(b),
            TOLERANCE * 100.0,
            why_upper(u)
        ),
        (End::NeverMet, _, Some(u)) => format!(
            "no throughput meets {slo}: even the lowest step ({} req/s offered) broke it{}",
            group(u.offered),
            if u.saturated() {
                format!(
                    " (it achieved only {}: {})",
                    rps(u),
                    limit.unwrap_or(Limit::Unknown).explain()
                )
            } else {
                String::new()
            }
        ),
        (End::RateCap, Some(b), _) => format!(
            "max throughput with {slo}: at least {} req/s (every step met it, up to the largest \
             rate the search offers)",
            rps(b)
        ),
        (end, best, upper) => {
            let stopped = match end {
                End::StepLimit => format!("the search stopped at its limit of {} steps", c.steps),
                _ => format!("the search was stopped after {} steps", c.steps),
            };
            match (best, upper) {
                (Some(b), Some(u)) => format!(
                    "max throughput with {slo} so far: {} req/s ({stopped}; {})",
                    rps(b),
                    why_upper(u)
                ),
                (Some(b), None) => format!(
                    "max throughput with {slo} so far: at least {} req/s ({stopped} before the \
                     SLO broke)",
                    rps(b)
                ),
                (None, _) => format!("no step met {slo} ({stopped})"),
            }
        }
    }
}

/// A whole number with thousands separators: `83,200`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(offered: u64, achieved: f64, slo_met: bool) -> Step {
        Step {
            offered,
            achieved,
            slo_met,
        }
    }

    fn concluded(end: End, best: Option<Step>, upper: Option<Step>) -> Conclusion {
        Conclusion {
            best,
            upper,
            end,
            steps: 9,
        }
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(83_200), "83,200");
        assert_eq!(group(1_234_567), "1,234,567");
    }

    #[test]
    fn the_answer_names_the_number_and_the_step_that_broke_it() {
        let slo = Slo::parse("p99<1ms").unwrap();
        let c = concluded(
            End::Converged,
            Some(step(83_500, 83_200.4, true)),
            Some(step(86_000, 85_900.0, false)),
        );
        assert_eq!(
            answer(&slo, &c, None),
            "max throughput with p99 < 1 ms: 83,200 req/s (within 5%; 86,000 req/s offered broke it)"
        );
    }

    #[test]
    fn a_ceiling_says_which_side_was_the_limit() {
        let slo = Slo::parse("p99<1s").unwrap();
        let c = concluded(
            End::Converged,
            Some(step(6_600, 6_590.0, true)),
            Some(step(6_900, 6_000.0, true)),
        );
        let text = answer(&slo, &c, Some(Limit::Server));
        assert!(text.contains("the SLO never broke"), "{text}");
        assert!(text.contains("the server saturated"), "{text}");
        let text = answer(&slo, &c, Some(Limit::Client));
        assert!(text.contains("respbench saturated"), "{text}");
    }

    #[test]
    fn no_answer_and_stopped_searches_say_so() {
        let slo = Slo::parse("p50<1us").unwrap();
        let never = concluded(End::NeverMet, None, Some(step(100, 100.0, false)));
        assert_eq!(
            answer(&slo, &never, None),
            "no throughput meets p50 < 1 us: even the lowest step (100 req/s offered) broke it"
        );
        let stopped = concluded(End::Stopped, Some(step(2_000, 2_000.0, true)), None);
        assert!(answer(&slo, &stopped, None).contains("so far: at least 2,000 req/s"));
        let nothing = concluded(End::StepLimit, None, None);
        assert!(answer(&slo, &nothing, None).starts_with("no step met p50 < 1 us"));
    }

    #[test]
    fn rows_line_up_under_the_header_and_mark_steps_that_fell_behind() {
        let r = Row {
            step: 3,
            offered: 40_000,
            achieved: 30_000.0,
            p50_us: 120.0,
            p99_us: 9_000.0,
            p999_us: 12_000.0,
            errors: 0,
            slo_met: false,
        };
        let line = row(&r, 3);
        assert!(line.ends_with("broken (achieved 75% of offered)"), "{line}");
        assert_eq!(
            line.find("40,000").map(|i| i + 6),
            header().find("offered rps").map(|i| i + 11)
        );
    }
}
