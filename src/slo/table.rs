//! The `--find-max` table and answer as text: one row per window, printed as each window ends,
//! and the sentence that answers the question. Pure formatting, so the wording is unit-tested.

use super::expr::Slo;
use super::pairs::Boundary;
use super::search::{Conclusion, Decision, End, LOAD_MULTIPLE, Noise, TOLERANCE, Tally, Window};

/// One window as the table shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// The search's step (1-based): consecutive windows at one rate share it.
    pub step: usize,
    /// The window's number at its rate (1-based, counting earlier steps at the same rate).
    pub window: u32,
    pub offered: u64,
    pub achieved: f64,
    /// Latencies of the window's replies (`None`: it got none, as when a saturated server is
    /// still answering the warmup's backlog when the window ends).
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub errors: u64,
    pub slo_met: bool,
    /// The SLO's figure over its limit ([`Window::slo_ratio`]).
    pub slo_ratio: f64,
    /// Every window at the rate so far, this one included, when they decide it: the row then
    /// says what the rate's windows add up to.
    pub decided: Option<Tally>,
}

impl Row {
    /// The search's view of a row.
    pub fn as_window(&self) -> Window {
        Window {
            offered: self.offered,
            achieved: self.achieved,
            slo_met: self.slo_met,
            slo_ratio: self.slo_ratio,
        }
    }
}

/// What held the achieved rate below the offered one, from the window's verdict (one variant
/// per verdict outcome that can describe a window that fell behind, so the answer never reads
/// "unknown" for a window that was judged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The server's main thread (or command time) near a full core.
    Server,
    /// A respbench worker thread near a full core.
    Client,
    /// Both sides near a full core: naming one would flip from run to run.
    Both,
    /// Neither side near a full core, but the machine was busy (a thread waited for a CPU,
    /// pressure, steal or other processes): the ceiling is the machine's, not the server's.
    MachineBusy,
    /// Neither near a full core: the connections cannot carry the rate at this latency.
    Connections,
    /// The window was judged, but a figure the judgement needs was missing or too noisy.
    CantTell,
    /// No verdict recorded for the window.
    Unknown,
}

impl Limit {
    /// Every variant, in the order the docs list them.
    pub const ALL: [Limit; 7] = [
        Limit::Server,
        Limit::Client,
        Limit::Both,
        Limit::MachineBusy,
        Limit::Connections,
        Limit::CantTell,
        Limit::Unknown,
    ];

    /// The record's word (`find_max.limit`).
    pub fn name(self) -> &'static str {
        match self {
            Limit::Server => "server",
            Limit::Client => "client",
            Limit::Both => "both",
            Limit::MachineBusy => "machine-busy",
            Limit::Connections => "connections",
            Limit::CantTell => "cant-tell",
            Limit::Unknown => "unknown",
        }
    }

    fn explain(self) -> &'static str {
        match self {
            Limit::Server => "the server saturated (its main thread near a full core)",
            Limit::Client => {
                "respbench saturated (a worker thread near a full core): more --threads would \
                 push further"
            }
            Limit::Both => {
                "the server and respbench were both near a full core: freeing either would soon \
                 hit the other's limit"
            }
            Limit::MachineBusy => {
                "the machine was busy (the server or respbench waited for a CPU): this is the \
                 machine's ceiling, not the server's; run on a quieter machine"
            }
            Limit::Connections => {
                "neither side was near a full core: the connections cannot carry that rate at \
                 that latency; raise -c or -P"
            }
            Limit::CantTell => {
                "can't tell which side (a figure the verdict needs was missing or too noisy: \
                 see the window's verdict in the record)"
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
        "{:>4}  {:>3}  {:>13}  {:>13}  {:>9}  {:>9}  {:>9}  {:>7}  SLO",
        "step", "win", "offered rps", "achieved rps", "p50 ms", "p99 ms", "p99.9 ms", "errors"
    )
}

/// One row; `precision`: decimals of the latency columns.
pub fn row(r: &Row, precision: usize) -> String {
    let ms =
        |us: Option<f64>| us.map_or("-".to_string(), |us| format!("{:.precision$}", us / 1000.0));
    let w = r.as_window();
    let mut status = match (r.slo_met, w.saturated()) {
        (true, false) => "met".to_string(),
        (false, false) => "broken".to_string(),
        (met, true) => format!(
            "{} (achieved {:.0}% of offered)",
            if met { "behind" } else { "broken" },
            r.achieved / r.offered.max(1) as f64 * 100.0
        ),
    };
    if let Some(t) = &r.decided {
        status.push_str(" => ");
        status.push_str(&tally(t));
    }
    format!(
        "{:>4}  {:>3}  {:>13}  {:>13}  {:>9}  {:>9}  {:>9}  {:>7}  {status}",
        r.step,
        r.window,
        group(r.offered),
        group(r.achieved.round() as u64),
        ms(r.p50_us),
        ms(r.p99_us),
        ms(r.p999_us),
        r.errors
    )
}

/// A rate's windows in a few words: `met in 3 of 3`, `broken in 2 of 3`, `split: met in 3 of 6`.
pub fn tally(t: &Tally) -> String {
    let n = t.windows();
    match t.decision() {
        Decision::Met => format!("met in {} of {n}", t.met),
        Decision::Broken => format!("broken in {} of {n}", t.broken),
        Decision::Split => format!("split: met in {} of {n}", t.met),
        Decision::Open => format!("open: met in {} of {n}", t.met),
    }
}

/// The evidence for the met bound: `68,000 req/s offered met it in 3 of 3 windows`.
fn met_evidence(b: &Tally) -> String {
    format!(
        "{} req/s offered met it in {} of {} windows",
        group(b.offered),
        b.met,
        b.windows()
    )
}

/// Why the failing bound fails, with its windows.
fn upper_evidence(u: &Tally, limit: Option<Limit>) -> String {
    let w = u.failing();
    let explain = limit.unwrap_or(Limit::Unknown).explain();
    let achieved = group(w.achieved.round() as u64);
    let (offered, broken, n) = (group(u.offered), u.broken, u.windows());
    if u.decision() == Decision::Split {
        format!(
            "{offered} req/s offered met it in {} of {n} windows and broke it in {broken}: the \
             boundary is about there",
            u.met
        )
    } else if w.saturated() && w.slo_met {
        format!(
            "the SLO never broke: at {offered} req/s offered only {achieved} were achieved \
             ({broken} of {n} windows fell behind): {explain}"
        )
    } else if w.saturated() {
        format!(
            "{offered} req/s offered broke it in {broken} of {n} windows, achieving only \
             {achieved}: {explain}"
        )
    } else {
        format!("{offered} req/s offered broke it in {broken} of {n} windows")
    }
}

/// The boundary's alternating windows: `run alternately in 3 pairs, the SLO's figure was 38%
/// higher at 1,239 req/s offered than at 1,180 [+12%, +70%]` (the 95% paired interval).
fn paired(p: &Boundary) -> String {
    let (low, high) = (group(p.low), group(p.high));
    match p.change {
        Some(e) => format!(
            "run alternately in {} pairs, the SLO's figure was {:.0}% {} at {high} req/s offered \
             than at {low} [{:+.0}%, {:+.0}%]",
            p.pairs,
            e.pct.abs(),
            if e.pct >= 0.0 { "higher" } else { "lower" },
            e.lo,
            e.hi
        ),
        None => format!(
            "{high} and {low} req/s offered run alternately in {} pair",
            p.pairs
        ),
    }
}

/// What the noise did: `7 of the 18 windows disagreed with the rest`.
fn noise(n: &Noise) -> String {
    format!(
        "{} of the {} windows disagreed with the rest (broke it at a rate that met it, or met \
         it above one that broke it)",
        n.disagreeing, n.windows
    )
}

/// The answer: the number and the windows that back it (or what stopped the search). `limit`:
/// what held back the failing bound's window, when it fell behind.
pub fn answer(slo: &Slo, c: &Conclusion, limit: Option<Limit>) -> String {
    let rps = |t: &Tally| group(t.achieved().round() as u64);
    if let (Some(u), Some(flat)) = (&c.upper, &c.no_growth) {
        match c.end {
            End::TooNoisy => return not_the_load(slo, c.best.as_ref(), u, flat),
            End::NeverMet => return at_any_load(slo, u, flat),
            _ => {}
        }
    }
    if let (End::TooNoisy, Some(p)) = (c.end, c.boundary.filter(Boundary::reversed)) {
        return format!(
            "too noisy to answer {slo} on this machine: {}, so the load did not set the boundary \
             between them (run again with longer --step-duration, on a quieter machine, or with a \
             looser SLO)",
            paired(&p)
        );
    }
    match (c.end, &c.best, &c.upper) {
        (End::Converged, Some(b), Some(u)) => format!(
            "max throughput with {slo}: {} req/s (within {:.0}%: {}; {}{})",
            rps(b),
            TOLERANCE * 100.0,
            met_evidence(b),
            upper_evidence(u, limit),
            c.boundary
                .map_or(String::new(), |p| format!("; {}", paired(&p)))
        ),
        (End::TooNoisy, None, _) => format!(
            "too noisy to answer {slo} on this machine: no rate met it reliably, and {} (run \
             again with longer --step-duration, on a quieter machine, or with a looser SLO)",
            noise(&c.noise)
        ),
        (End::TooNoisy, Some(b), _) => format!(
            "too noisy to answer {slo} on this machine: the highest rate that met it, {} req/s \
             offered, met it in {} of {} windows, and {} (run again with longer \
             --step-duration, on a quieter machine, or with a looser SLO)",
            group(b.offered),
            b.met,
            b.windows(),
            noise(&c.noise)
        ),
        (End::NeverMet, _, Some(u)) => {
            let w = u.failing();
            format!(
                "no throughput meets {slo}: even the lowest rate ({} req/s offered) broke it in \
                 {} of {} windows{}",
                group(u.offered),
                u.broken,
                u.windows(),
                if w.saturated() {
                    format!(
                        " (it achieved only {}: {})",
                        group(w.achieved.round() as u64),
                        limit.unwrap_or(Limit::Unknown).explain()
                    )
                } else {
                    String::new()
                }
            )
        }
        (End::RateCap, Some(b), _) => format!(
            "max throughput with {slo}: at least {} req/s (every rate met it, up to the largest \
             rate the search offers)",
            rps(b)
        ),
        (end, best, upper) => {
            let stopped = match end {
                End::WindowLimit => {
                    format!("the search stopped at its limit of {} windows", c.windows)
                }
                _ => format!("the search was stopped after {} windows", c.windows),
            };
            match (best, upper) {
                (Some(b), Some(u)) => format!(
                    "max throughput with {slo} so far: {} req/s ({stopped}; {}; {})",
                    rps(b),
                    met_evidence(b),
                    upper_evidence(u, limit)
                ),
                (Some(b), None) => format!(
                    "max throughput with {slo} so far: at least {} req/s ({stopped} before the \
                     SLO broke; {})",
                    rps(b),
                    met_evidence(b)
                ),
                (None, _) => format!("no rate met {slo} ({stopped})"),
            }
        }
    }
}

/// The answer when load did not set the boundary: the failing bound and the rate far above it
/// at which the SLO broke by no more ([`Conclusion::no_growth`]).
fn not_the_load(slo: &Slo, best: Option<&Tally>, u: &Tally, flat: &Tally) -> String {
    let met = best.map_or(String::new(), |b| {
        format!(
            "; the highest rate that met it, {} req/s offered, met it in {} of {} windows",
            group(b.offered),
            b.met,
            b.windows()
        )
    });
    format!(
        "too noisy to answer {slo} on this machine: {} req/s offered broke it ({:.2}x the limit, \
         the median of {} windows), and {} req/s, at least {LOAD_MULTIPLE}x that rate, broke it \
         by no more ({:.2}x): the boundary is set by this machine's stalls, not by the load, so \
         another run would answer elsewhere{met} (loosen the SLO, run longer --step-duration, or \
         on a quieter machine)",
        group(u.offered),
        u.median_ratio(),
        u.windows(),
        group(flat.offered),
        flat.median_ratio()
    )
}

/// The answer when no rate met the SLO and it broke by no more far above the lowest rate
/// ([`Conclusion::no_growth`]): the machine breaks it, whatever the load.
fn at_any_load(slo: &Slo, lowest: &Tally, flat: &Tally) -> String {
    format!(
        "no throughput meets {slo} on this machine: even the lowest rate ({} req/s offered) broke \
         it in {} of {} windows ({:.2}x the limit, the median), and {} req/s broke it by no more \
         ({:.2}x): this machine's stalls break it at any load, not the server's load (loosen the \
         SLO, or run on a quieter machine)",
        group(lowest.offered),
        lowest.broken,
        lowest.windows(),
        lowest.median_ratio(),
        group(flat.offered),
        flat.median_ratio()
    )
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

    fn windows(offered: u64, achieved: f64, met: &[bool]) -> Tally {
        let ws: Vec<Window> = met
            .iter()
            .map(|&slo_met| Window {
                offered,
                achieved,
                slo_met,
                slo_ratio: if slo_met { 0.5 } else { 1.5 },
            })
            .collect();
        Tally::of(&ws).unwrap()
    }

    fn concluded(end: End, best: Option<Tally>, upper: Option<Tally>) -> Conclusion {
        Conclusion {
            best,
            upper,
            end,
            windows: 17,
            noise: Noise {
                disagreeing: 1,
                windows: 12,
            },
            no_growth: None,
            boundary: None,
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
    fn the_answer_names_the_number_and_the_windows_on_both_sides() {
        let slo = Slo::parse("p99<1ms").unwrap();
        let c = concluded(
            End::Converged,
            Some(windows(68_000, 68_031.4, &[true, true, true])),
            Some(windows(71_400, 71_300.0, &[false, true, false, false])),
        );
        assert_eq!(
            answer(&slo, &c, None),
            "max throughput with p99 < 1 ms: 68,031 req/s (within 5%: 68,000 req/s offered met \
             it in 3 of 3 windows; 71,400 req/s offered broke it in 3 of 4 windows)"
        );
    }

    #[test]
    fn a_ceiling_says_which_side_was_the_limit() {
        let slo = Slo::parse("p99<1s").unwrap();
        let c = concluded(
            End::Converged,
            Some(windows(6_600, 6_590.0, &[true, true, true])),
            Some(windows(6_900, 6_000.0, &[true, true, true])),
        );
        let text = answer(&slo, &c, Some(Limit::Server));
        assert!(text.contains("the SLO never broke"), "{text}");
        assert!(text.contains("3 of 3 windows fell behind"), "{text}");
        assert!(text.contains("the server saturated"), "{text}");
        let text = answer(&slo, &c, Some(Limit::Client));
        assert!(text.contains("respbench saturated"), "{text}");
        let text = answer(&slo, &c, Some(Limit::Both));
        assert!(text.contains("both near a full core"), "{text}");
        let text = answer(&slo, &c, Some(Limit::MachineBusy));
        assert!(text.contains("the machine was busy"), "{text}");
        assert!(!text.contains("no CPU figures"), "{text}");
        let text = answer(&slo, &c, Some(Limit::CantTell));
        assert!(text.contains("can't tell which side"), "{text}");
    }

    #[test]
    fn every_limit_has_its_own_name_and_sentence() {
        let names: Vec<&str> = Limit::ALL.map(Limit::name).to_vec();
        assert_eq!(
            names,
            [
                "server",
                "client",
                "both",
                "machine-busy",
                "connections",
                "cant-tell",
                "unknown"
            ]
        );
        let mut said: Vec<&str> = Limit::ALL.map(Limit::explain).to_vec();
        said.sort_unstable();
        said.dedup();
        assert_eq!(said.len(), Limit::ALL.len(), "no two limits read the same");
    }

    #[test]
    fn a_split_bound_and_a_noisy_machine_are_said_as_such() {
        let slo = Slo::parse("p99<1ms").unwrap();
        let split = windows(9_000, 9_000.0, &[true, false, true, false, false, true]);
        let c = concluded(
            End::Converged,
            Some(windows(8_600, 8_600.0, &[true, true, true])),
            Some(split),
        );
        let text = answer(&slo, &c, None);
        assert!(
            text.contains("met it in 3 of 6 windows and broke it in 3"),
            "{text}"
        );
        let floor = windows(8_600, 8_600.0, &[true, true, false, false, false, true]);
        let noisy = Conclusion {
            noise: Noise {
                disagreeing: 5,
                windows: 13,
            },
            ..concluded(End::TooNoisy, Some(floor), None)
        };
        let text = answer(&slo, &noisy, None);
        assert!(
            text.starts_with("too noisy to answer p99 < 1 ms on this machine"),
            "{text}"
        );
        assert!(
            text.contains("8,600 req/s offered, met it in 3 of 6 windows"),
            "{text}"
        );
        assert!(text.contains("5 of the 13 windows"), "{text}");
        let nothing = Conclusion {
            best: None,
            ..noisy
        };
        let text = answer(&slo, &nothing, None);
        assert!(
            text.contains("on this machine: no rate met it reliably, and 5 of"),
            "{text}"
        );
    }

    #[test]
    fn stalls_are_named_when_the_slo_broke_as_much_far_above() {
        let slo = Slo::parse("p99<1ms").unwrap();
        let flat_at = |offered, ratio| {
            let w = Window {
                offered,
                achieved: offered as f64,
                slo_met: false,
                slo_ratio: ratio,
            };
            Tally::of(&[w, w, w]).unwrap()
        };
        let (lowest, far) = (flat_at(564, 3.4), flat_at(9_024, 3.6));
        let never = Conclusion {
            no_growth: Some(far),
            ..concluded(End::NeverMet, None, Some(lowest))
        };
        let text = answer(&slo, &never, None);
        assert!(
            text.starts_with(
                "no throughput meets p99 < 1 ms on this machine: even the lowest rate (564 req/s \
                 offered) broke it in 3 of 3 windows (3.40x the limit, the median), and 9,024 \
                 req/s broke it by no more (3.60x): this machine's stalls"
            ),
            "{text}"
        );
        let noisy = Conclusion {
            no_growth: Some(far),
            ..concluded(
                End::TooNoisy,
                Some(windows(300, 300.0, &[true; 3])),
                Some(lowest),
            )
        };
        let text = answer(&slo, &noisy, None);
        assert!(text.contains("564 req/s offered broke it (3.40x the limit, the median of 3 windows), and 9,024 req/s, at least 2x that rate, broke it by no more (3.60x)"), "{text}");
        assert!(
            text.contains(
                "the highest rate that met it, 300 req/s offered, met it in 3 of 3 windows"
            ),
            "{text}"
        );
    }

    #[test]
    fn no_answer_and_stopped_searches_say_so() {
        let slo = Slo::parse("p50<1us").unwrap();
        let never = concluded(End::NeverMet, None, Some(windows(100, 100.0, &[false; 3])));
        assert_eq!(
            answer(&slo, &never, None),
            "no throughput meets p50 < 1 us: even the lowest rate (100 req/s offered) broke it \
             in 3 of 3 windows"
        );
        let stopped = concluded(
            End::Stopped,
            Some(windows(2_000, 2_000.0, &[true; 2])),
            None,
        );
        assert!(answer(&slo, &stopped, None).contains("so far: at least 2,000 req/s"));
        let nothing = concluded(End::WindowLimit, None, None);
        assert!(answer(&slo, &nothing, None).starts_with("no rate met p50 < 1 us"));
    }

    #[test]
    fn rows_line_up_under_the_header_and_say_what_decided_a_rate() {
        let mut r = Row {
            step: 3,
            window: 2,
            offered: 40_000,
            achieved: 30_000.0,
            p50_us: Some(120.0),
            p99_us: Some(9_000.0),
            p999_us: Some(12_000.0),
            errors: 0,
            slo_met: false,
            slo_ratio: 9.0,
            decided: None,
        };
        let line = row(&r, 3);
        assert!(line.ends_with("broken (achieved 75% of offered)"), "{line}");
        assert_eq!(
            line.find("40,000").map(|i| i + 6),
            header().find("offered rps").map(|i| i + 11)
        );
        assert_eq!(
            line.find(" 2 ").map(|i| i + 2),
            header().find("win").map(|i| i + 3)
        );
        r.decided = Some(windows(40_000, 30_000.0, &[false, false]));
        assert!(
            row(&r, 3).ends_with("=> broken in 2 of 2"),
            "{}",
            row(&r, 3)
        );
    }

    #[test]
    fn the_answer_carries_the_boundary_pairs_and_a_reversed_one_is_too_noisy() {
        use crate::stats::{Estimate, Evidence};
        let slo = Slo::parse("p99<20ms").unwrap();
        let best = windows(1_180, 1_163.0, &[true; 5]);
        let upper = windows(1_239, 1_230.0, &[false; 5]);
        let pairs = |pct: f64, lo: f64, hi: f64| Boundary {
            low: 1_180,
            high: 1_239,
            pairs: 3,
            change: Some(Estimate {
                pct,
                lo,
                hi,
                evidence: Evidence::Pairs,
            }),
        };
        let c = Conclusion {
            boundary: Some(pairs(48.0, 21.0, 81.0)),
            ..concluded(End::Converged, Some(best), Some(upper))
        };
        let text = answer(&slo, &c, None);
        assert!(
            text.starts_with("max throughput with p99 < 20 ms: 1,163 req/s"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "; run alternately in 3 pairs, the SLO's figure was 48% higher at 1,239 req/s \
                 offered than at 1,180 [+21%, +81%])"
            ),
            "{text}"
        );
        let c = Conclusion {
            boundary: Some(pairs(-40.0, -55.0, -20.0)),
            ..concluded(End::TooNoisy, Some(best), Some(upper))
        };
        let text = answer(&slo, &c, None);
        assert!(
            text.starts_with(
                "too noisy to answer p99 < 20 ms on this machine: run alternately in 3 pairs, the \
                 SLO's figure was 40% lower at 1,239 req/s offered than at 1,180 [-55%, -20%], so \
                 the load did not set the boundary"
            ),
            "{text}"
        );
    }
}
