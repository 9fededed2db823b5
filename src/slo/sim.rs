//! A simulated server for testing the search (test builds only): a seeded, deterministic model
//! of a server with a known capacity and latency curve, and noise bursts injected into some
//! windows, so that "the answer lands within 5% of the truth" and "too noisy rather than a wrong
//! answer" are checked over many seeds without a clock.

use super::search::{Conclusion, End, MAX_WINDOWS, Next, Search, Window};

/// splitmix64: a small seeded generator (the same windows on every machine).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A server that serves at most `capacity` req/s with a p99 of `base_us / (1 - load)` (a
/// queue's curve: flat at low load, steep near capacity), each window's p99 off by up to
/// `jitter` either way, and a noise burst in a window with probability `burst` (another
/// process takes the core: the p99 is 20 times higher, and half the bursts also fall behind).
/// `stalls` (0: none) models a machine whose stalls set the p99 instead: each window's p99 is
/// at least `limit × (load / stalls)^0.15`, off by up to 10% either way. The stalls reach the
/// limit at the load `stalls` and grow only slowly with the load (more requests are in flight
/// during a stall: 11% more when the rate doubles), so the SLO breaks above about that rate,
/// by about as much at any rate above it: a boundary set by how busy the machine is.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    pub capacity: f64,
    pub base_us: f64,
    pub jitter: f64,
    pub burst: f64,
    pub stalls: f64,
}

impl Model {
    /// The true answer for `p99 < limit_us`: the highest rate at which every window without a
    /// burst meets it (its p99 at the top of the jitter is the limit).
    pub fn truth(&self, limit_us: f64) -> f64 {
        (self.capacity * (1.0 - self.base_us * (1.0 + self.jitter) / limit_us)).max(0.0)
    }

    fn window(&self, rng: &mut Rng, offered: u64, limit_us: f64) -> Window {
        let rate = offered as f64;
        let load = rate / self.capacity;
        let mut achieved = rate.min(self.capacity);
        let mut p99 = if load < 1.0 {
            self.base_us / (1.0 - load)
        } else {
            f64::INFINITY
        };
        p99 *= 1.0 + self.jitter * (2.0 * rng.unit() - 1.0);
        if self.stalls > 0.0 {
            let stall = limit_us * (load / self.stalls).powf(0.15) * (0.9 + 0.2 * rng.unit());
            p99 = p99.max(stall);
        }
        if rng.unit() < self.burst {
            p99 *= 20.0;
            if rng.unit() < 0.5 {
                achieved *= 0.8;
            }
        }
        Window {
            offered,
            achieved,
            slo_met: p99 < limit_us,
            slo_ratio: p99 / limit_us,
        }
    }
}

/// Runs a whole search against `model` for `p99 < limit_us`, starting at `start`.
pub fn search(model: Model, limit_us: f64, start: u64, seed: u64) -> (Conclusion, Vec<u64>) {
    let mut rng = Rng(seed);
    let mut s = Search::new(start, MAX_WINDOWS);
    let mut rate = s.first();
    let mut offered = Vec::new();
    loop {
        offered.push(rate);
        match s.record(model.window(&mut rng, rate, limit_us)) {
            Next::Run(r) => rate = r,
            Next::Done(c) => return (c, offered),
        }
    }
}

/// The answer's distance from the truth, as a share of the truth (`None`: no answer).
fn error(c: &Conclusion, truth: f64) -> Option<f64> {
    let best = c.best?;
    Some((best.achieved() / truth - 1.0).abs())
}

/// Servers from 40 req/s to 2M req/s, SLOs from loose (the capacity decides) to tight, starts
/// from far below to above the answer.
fn cases() -> Vec<(Model, f64, u64)> {
    let mut out = Vec::new();
    for (capacity, base_us) in [
        (400.0, 2_000.0),
        (3_268.0, 120.0),
        (72_000.0, 90.0),
        (2e6, 8.0),
    ] {
        for limit_over_base in [3.0, 10.0, 100.0] {
            for start_share in [0.02, 0.25, 0.7, 1.3] {
                let model = Model {
                    capacity,
                    base_us,
                    jitter: 0.02,
                    burst: 0.0,
                    stalls: 0.0,
                };
                let start = ((capacity * start_share) as u64).max(1);
                out.push((model, base_us * limit_over_base, start));
            }
        }
    }
    out
}

/// Runs every case at `burst` over `seeds` and counts how the searches ended: converged within
/// 5% of the truth, converged farther off (a wrong answer), too noisy, or anything else.
#[derive(Debug, Default)]
struct Outcomes {
    right: usize,
    wrong: usize,
    too_noisy: usize,
    other: usize,
    windows: usize,
}

fn outcomes(burst: f64, seeds: u64) -> Outcomes {
    outcomes_of(
        Model {
            burst,
            ..cases()[0].0
        },
        seeds,
    )
}

/// [`outcomes`] with every case's server given `noise`'s burst and stalls.
fn outcomes_of(noise: Model, seeds: u64) -> Outcomes {
    let mut o = Outcomes::default();
    for (model, limit, start) in cases() {
        let model = Model {
            burst: noise.burst,
            stalls: noise.stalls,
            ..model
        };
        let truth = model.truth(limit);
        for seed in 0..seeds {
            let (c, offered) = search(model, limit, start, seed);
            o.windows += offered.len();
            match (c.end, error(&c, truth)) {
                (End::Converged, Some(e)) if e <= 0.05 => o.right += 1,
                (End::Converged, _) => o.wrong += 1,
                (End::TooNoisy, _) => o.too_noisy += 1,
                _ => o.other += 1,
            }
        }
    }
    o
}

#[test]
fn a_quiet_server_is_always_answered_within_five_percent_of_the_truth() {
    let o = outcomes(0.0, 10);
    let searches = cases().len() * 10;
    assert_eq!(o.right, searches, "{o:?}");
    // Two windows per rate, three alternating rounds at the bounds: about 24, never the budget.
    assert!(o.windows <= searches * 25, "{o:?}");
}

#[test]
fn with_a_noise_burst_in_one_window_of_twenty_the_answer_holds() {
    // The machine: other builds now and then. Bursts land in one window of twenty; a
    // search takes about twenty windows. Every search but a few answers within 5% of the truth;
    // the few say "too noisy" (three bursts in one search) or, rarer, land farther off.
    let o = outcomes(0.05, 40);
    let searches = cases().len() * 40;
    assert!(o.right * 100 >= searches * 99, "{o:?}");
    assert!(o.wrong * 1000 <= searches * 3, "{o:?}");
    assert_eq!(o.other, 0, "{o:?}");
}

#[test]
fn when_noise_dominates_the_search_mostly_says_so() {
    // Bursts in 70% of the windows: no rate meets the SLO reliably on this machine. A search
    // sees only about twenty windows, so it cannot always tell (a lucky run of met windows
    // looks like a boundary), but most end "too noisy" (measured: 72%), some "no throughput
    // meets it" when at most one window met it (6%: true of this machine too), 21% wrong.
    let o = outcomes(0.7, 40);
    let searches = cases().len() * 40;
    assert!(o.too_noisy * 100 >= searches * 70, "{o:?}");
    assert!(o.wrong * 100 <= searches * 23, "{o:?}");
    assert!(o.other * 100 <= searches * 8, "{o:?}");
}

#[test]
fn when_stalls_set_the_boundary_the_search_says_so() {
    // The second run: stalls break p99 < 1 ms from some rate on, by about as much at any
    // rate above it. Each search sees a clean boundary (where the stalls cross the limit), but
    // where that is depends on how busy the machine was: the next run answers elsewhere. The
    // check finds that the SLO broke by no more at twice the failing rate, and says so.
    let stalls = |stalls| Model {
        capacity: 0.0,
        base_us: 0.0,
        jitter: 0.0,
        burst: 0.0,
        stalls,
    };
    let searches = cases().len() * 10;
    for at_load in [0.05, 0.2] {
        // Measured without the check (GROWTH 0): at 0.05, 189 of 480 searches answered a
        // number, each wherever that search's stalls happened to cross the limit.
        let o = outcomes_of(stalls(at_load), 10);
        eprintln!("stalls at load {at_load}: {o:?}");
        assert!(
            o.right + o.wrong <= searches / 100,
            "stalls at {at_load}: {o:?}"
        );
        // The rest say too noisy, or (starting far above and halving only four times) that
        // no rate met the SLO, which is true of this machine too.
        assert!(o.too_noisy * 2 >= searches, "stalls at {at_load}: {o:?}");
    }
    // Stalls that would reach the limit only at five times the capacity leave the server's own
    // curve to decide: answered as without them.
    let o = outcomes_of(stalls(5.0), 10);
    assert_eq!(o.right, searches, "{o:?}");
}
