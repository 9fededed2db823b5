//! What `/metrics` shows, kept up to date from the run's own data: the seconds the engine hands
//! over (`Observer::second`), the progress ticks (phase, connections), and each test's final
//! result.
//!
//! Why counters from seconds: a second carries the failures by kind, reconnects and a latency
//! histogram, all counted once by the workers' existing tallies, so nothing is added to the hot
//! path; and at a test's end the same counters are recomputed from the result's whole timeline,
//! whose sums equal the record's totals (`Timeline::check_totals`). A second only grows after it
//! was handed over (a late worker adds to it), so the recomputed figures are never below the
//! live ones: counters stay monotonic. The completed counter alone also follows the progress
//! ticks (the workers' live counters, every 250 ms), whichever is ahead: seconds arrive about
//! 1.2 s late and in whole-second steps, which makes `rate()` over a short window jumpy.

use crate::metrics::outage::{OutageScan, outages};
use crate::metrics::{FAILURE_KINDS, LatencyHistogram, SLOT, Second, TestResult};
use crate::watch::{SampleFeed, ServerInterval};

/// Upper bounds of the latency histogram's buckets, in seconds: 50 µs to 10 s, about three per
/// decade, which covers a loopback GET and a stalled failover alike.
pub const BUCKETS: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The percentiles shown for the last complete second (100 is its maximum), with their label
/// values. Not a summary's `quantile`: they are one second's, not over a sliding window.
pub const PERCENTILES: [(f64, &str); 5] = [
    (50.0, "50"),
    (90.0, "90"),
    (99.0, "99"),
    (99.9, "99.9"),
    (100.0, "100"),
];

/// Failure kinds as label values: error replies first, then [`FAILURE_KINDS`] in order.
pub const KINDS: [&str; 1 + FAILURE_KINDS.len()] = [
    "error_reply",
    "timeout",
    "connection_reset",
    "connection_closed",
    "connection_refused",
    "connection_error",
];

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Connecting to the server, before the first test.
    Starting,
    /// A test's connections are opening, or `--warmup` is running.
    Warmup,
    Measuring,
    /// Between tests, or after the last one (`--metrics-linger`).
    Idle,
    /// The run is over.
    Ended,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Starting,
        Phase::Warmup,
        Phase::Measuring,
        Phase::Idle,
        Phase::Ended,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Warmup => "warmup",
            Phase::Measuring => "measuring",
            Phase::Idle => "idle",
            Phase::Ended => "ended",
        }
    }
}

/// A progress tick's figures: every 250 ms from the engine's monitor (`Observer::tick`), as
/// often from the modes with loops of their own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tick {
    /// `--warmup` still runs.
    pub warming_up: bool,
    /// Seconds since the measured phase began: the clock of the test's seconds and slots.
    pub measured_secs: f64,
    /// The test's completed requests so far (the workers' live counters).
    pub completed: u64,
    pub connections: u64,
    /// Of those, down or being reopened after a failure.
    pub down: u64,
    /// Measured requests in flight (`engine::Snapshot::in_flight`); `None` where the loop does
    /// not count them (the seconds handed over then tell: [`Outages`]).
    pub in_flight: Option<u64>,
}

/// One test's counters (a `test` label's series).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    pub completed: u64,
    /// By [`KINDS`].
    pub failed: [u64; KINDS.len()],
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// Outages (`metrics::outage`): of a test under way, those its seconds handed over so far
    /// show ([`Outages`]); of a finished test, its record's.
    pub outages: u64,
    /// Cumulative counts at or below each of [`BUCKETS`]; the count is `completed`.
    pub buckets: [u64; BUCKETS.len()],
    /// Sum of the latencies, seconds (from the histograms' equivalent values).
    pub latency_sum: f64,
    /// Messages published (`--pubsub`/`--stream`; 0 in other tests).
    pub published: u64,
}

impl Counters {
    /// Adds one second's figures.
    pub fn add_second(&mut self, s: &Second) {
        self.completed += s.completed;
        let lost: u64 = s.lost.iter().sum();
        self.failed[0] += s.failed.saturating_sub(lost);
        for (mine, n) in self.failed[1..].iter_mut().zip(&s.lost) {
            *mine += n;
        }
        self.reconnect_attempts += s.reconnect_attempts();
        self.reconnects += s.reconnects();
        self.published += s.published;
        if !s.latency.is_empty() {
            self.add_latency(&s.latency.histogram());
        }
    }

    fn add_latency(&mut self, h: &LatencyHistogram) {
        let raw = h.raw();
        for v in raw.iter_recorded() {
            let ns = raw.highest_equivalent(v.value_iterated_to());
            let n = v.count_at_value();
            let secs = ns as f64 / 1e9;
            self.latency_sum += secs * n as f64;
            for (b, bound) in self.buckets.iter_mut().zip(BUCKETS) {
                if secs <= bound {
                    *b += n;
                }
            }
        }
    }

    fn plus(&self, o: &Counters) -> Counters {
        let mut c = self.clone();
        c.completed += o.completed;
        for (a, b) in c.failed.iter_mut().zip(&o.failed) {
            *a += b;
        }
        c.reconnect_attempts += o.reconnect_attempts;
        c.reconnects += o.reconnects;
        c.outages += o.outages;
        for (a, b) in c.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        c.latency_sum += o.latency_sum;
        c.published += o.published;
        c
    }
}

/// The last complete second of the test under way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LastSecond {
    pub completed: u64,
    pub failed: u64,
    /// [`PERCENTILES`]' values, seconds.
    pub percentiles: [f64; PERCENTILES.len()],
}

/// One test label's series: what earlier tests of that name left, and the test under way.
#[derive(Clone, Debug, Default)]
pub struct TestSeries {
    /// The test's name, redacted.
    pub name: String,
    /// Finished tests of this name.
    pub done: Counters,
    /// The test under way, from its seconds so far.
    pub running: Counters,
    /// The test under way's completed requests from the last progress tick (the workers' live
    /// counters, every 250 ms): ahead of its seconds, so `rate()` over a short window is smooth.
    pub ticked: u64,
    /// The test under way's outages so far.
    outages: Outages,
}

/// A test's outages while it runs, found in the seconds handed over by the rule its record uses
/// (`metrics::outage::OutageScan`, the one rule, fed slot by slot): what the record would list
/// had the test ended with the last second handed over, as `recover` reads a killed run's
/// journal. So an outage shows while it lasts, not only when the test ends.
///
/// Two inputs of the rule come from the progress ticks (the workers' live counters), because the
/// seconds handed over cannot say them yet. The requests in flight (unanswered, were the test
/// to end now): the engine's workers count them; other loops' ticks do not, and then the seconds
/// tell (commands written, `Second::issued`, less those answered or failed). And when replies
/// last came: a worker hands a second over when a reply lands in a later one, so the replies of
/// the last moments before a server froze are not handed over until it answers again, and the
/// stall would look as if it began with the second they came in; it is judged from the last
/// reply the ticks saw (`OutageScan::under_way`'s `replied_until`), so it shows once nothing
/// was answered for a second, and is not made longer than it was.
#[derive(Clone, Debug, Default)]
pub struct Outages {
    scan: OutageScan,
    /// The requests in flight, as the last tick counted them; else from the seconds: their
    /// commands written, and their requests completed or failed (as `recover` reads a journal).
    in_flight: Option<u64>,
    issued: u64,
    answered: u64,
    /// The last tick's completed count, and the slot (from the measured phase's start) before
    /// which the ticks saw replies: the one after the tick that saw the last of them.
    ticked: u64,
    replied_until: usize,
    /// The most found so far: a counter never goes down while the test runs. (When it ends,
    /// the record's count replaces it; see [`State::test_ended`].)
    counted: u64,
    /// The empty slots at the end of what was handed over are an outage under way.
    active: bool,
}

impl Outages {
    fn add_second(&mut self, s: &Second) {
        for slot in &s.slots {
            self.scan.push(slot);
        }
        if let Some(n) = s.issued {
            self.issued += n;
        }
        self.answered += s.completed + s.failed;
        self.judge();
    }

    /// A tick of the measured phase: replies since the last one move `replied_until`.
    fn tick(&mut self, t: &Tick) {
        if t.completed > self.ticked {
            let slot = (t.measured_secs / SLOT.as_secs_f64()).floor() as usize + 1;
            self.replied_until = self.replied_until.max(slot);
        }
        self.ticked = t.completed;
        self.in_flight = t.in_flight;
        self.judge();
    }

    fn judge(&mut self) {
        let seconds = || self.issued.saturating_sub(self.answered);
        let unanswered = self.in_flight.unwrap_or_else(seconds);
        let under_way = self.scan.under_way(unanswered, self.replied_until);
        self.active = under_way.is_some();
        let found = self.scan.ended() as u64 + u64::from(self.active);
        self.counted = self.counted.max(found);
    }
}

impl TestSeries {
    pub fn total(&self) -> Counters {
        let mut c = self.done.plus(&self.running);
        c.completed = self.done.completed + self.running.completed.max(self.ticked);
        c.outages = self.done.outages + self.outages.counted;
        c
    }
}

/// A server's latest figures, kept after its sampler stops.
#[derive(Clone, Debug)]
pub struct ServerFigures {
    pub address: String,
    pub interval: ServerInterval,
}

/// Everything `/metrics` shows.
#[derive(Debug)]
pub struct State {
    /// Label pairs on every series (`shard="1",shards="4"` in a sharded run), already escaped.
    pub common: String,
    pub phase: Phase,
    /// Index into `tests` of the test under way or the last one.
    pub current: Option<usize>,
    pub tests: Vec<TestSeries>,
    pub tests_started: u64,
    pub last_second: Option<LastSecond>,
    pub connections: u64,
    pub connections_up: u64,
    feeds: Vec<SampleFeed>,
    pub servers: Vec<ServerFigures>,
}

impl State {
    pub fn new(common: String) -> Self {
        Self {
            common,
            phase: Phase::Starting,
            current: None,
            tests: Vec::new(),
            tests_started: 0,
            last_second: None,
            connections: 0,
            connections_up: 0,
            feeds: Vec::new(),
            servers: Vec::new(),
        }
    }

    /// A test begins (its connections open next); `name` is already redacted.
    pub fn test_started(&mut self, name: &str, feeds: Vec<SampleFeed>) {
        let i = match self.tests.iter().position(|t| t.name == name) {
            Some(i) => i,
            None => {
                self.tests.push(TestSeries {
                    name: name.to_string(),
                    ..TestSeries::default()
                });
                self.tests.len() - 1
            }
        };
        self.tests[i].running = Counters::default();
        self.tests[i].ticked = 0;
        self.tests[i].outages = Outages::default();
        self.current = Some(i);
        self.tests_started += 1;
        self.phase = Phase::Warmup;
        self.last_second = None;
        self.feeds = feeds;
    }

    /// A progress tick: whether the measured phase has begun, the test's completed requests so
    /// far, and the connections.
    pub fn progress(&mut self, t: &Tick) {
        if let Some(i) = self.current
            && matches!(self.phase, Phase::Warmup | Phase::Measuring)
        {
            self.tests[i].ticked = t.completed;
            if !t.warming_up {
                self.tests[i].outages.tick(t);
            }
            self.phase = if t.warming_up {
                Phase::Warmup
            } else {
                Phase::Measuring
            };
        }
        self.connections = t.connections;
        self.connections_up = t.connections.saturating_sub(t.down);
    }

    /// A complete second of the test under way.
    pub fn second(&mut self, s: &Second) {
        let Some(i) = self.current else { return };
        self.tests[i].running.add_second(s);
        self.tests[i].outages.add_second(s);
        let mut percentiles = [0.0; PERCENTILES.len()];
        if !s.latency.is_empty() {
            let h = s.latency.histogram();
            for (q, (p, _)) in percentiles.iter_mut().zip(PERCENTILES) {
                *q = h.value_at_percentile_ns(p) as f64 / 1e9;
            }
        }
        self.last_second = Some(LastSecond {
            completed: s.completed,
            failed: s.failed,
            percentiles,
        });
    }

    /// Whether the test under way is in an outage (as far as its seconds handed over show).
    pub fn outage_active(&self) -> bool {
        self.current.is_some_and(|i| self.tests[i].outages.active)
    }

    /// The test ended: its series become the result's exact totals. Its outages are the
    /// record's from here (its whole timeline, the requests really unanswered at its end), in
    /// place of those found while it ran, never added to them: the same outages, counted once.
    pub fn test_ended(&mut self, r: &TestResult) {
        self.refresh_servers();
        self.feeds.clear();
        self.phase = Phase::Idle;
        self.connections = 0;
        self.connections_up = 0;
        let Some(i) = self.current else { return };
        let mut whole = Counters::default();
        for s in &r.timeline.seconds {
            whole.add_second(s);
        }
        whole.outages = outages(&r.timeline, r.elapsed, r.unanswered).len() as u64;
        let t = &mut self.tests[i];
        t.done = t.done.plus(&whole);
        t.running = Counters::default();
        t.ticked = 0;
        t.outages = Outages::default();
    }

    /// The servers' latest figures from the samplers of the test under way (kept when a sampler
    /// has nothing new).
    pub fn refresh_servers(&mut self) {
        for feed in &self.feeds {
            let Some(interval) = feed.latest() else {
                continue;
            };
            match self.servers.iter_mut().find(|s| s.address == feed.address) {
                Some(s) => s.interval = interval,
                None => self.servers.push(ServerFigures {
                    address: feed.address.clone(),
                    interval,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Outcome;

    fn second(latencies_us: &[u64], lost_timeouts: u64) -> Second {
        let mut s = Second::default();
        for &us in latencies_us {
            s.latency.record(us * 1000);
        }
        s.completed = latencies_us.len() as u64;
        s.failed = lost_timeouts + 1; // one error reply
        s.lost[0] = lost_timeouts;
        s
    }

    #[test]
    fn seconds_add_up_by_kind_and_bucket() {
        let mut c = Counters::default();
        c.add_second(&second(&[40, 300, 2_000], 2));
        c.add_second(&second(&[90], 0));
        assert_eq!(c.completed, 4);
        assert_eq!(c.failed, [2, 2, 0, 0, 0, 0]);
        // <= 50 µs: one; <= 100 µs: two; <= 500 µs: three; <= 2.5 ms: all four.
        assert_eq!(&c.buckets[..6], &[1, 2, 2, 3, 3, 4]);
        assert_eq!(c.buckets[BUCKETS.len() - 1], 4);
        assert!(
            (c.latency_sum - 0.00243).abs() < 0.00005,
            "{}",
            c.latency_sum
        );
    }

    /// A second of 100 ms slots each completing `per_slot`, with `issued` commands written.
    fn served(per_slot: u64, issued: u64) -> Second {
        let mut s = Second::default();
        for slot in &mut s.slots {
            slot.completed = per_slot;
        }
        s.completed = per_slot * s.slots.len() as u64;
        s.issued = Some(issued);
        s
    }

    #[test]
    fn an_outage_shows_while_it_lasts_and_the_end_counts_it_once() {
        let mut st = State::new(String::new());
        st.test_started("GET", Vec::new());
        let outages = |st: &State| st.tests[0].total().outages;
        let tick = |st: &mut State, at: f64, completed: u64| {
            st.progress(&Tick {
                measured_secs: at,
                completed,
                connections: 4,
                ..Tick::default()
            })
        };
        // Second 0 served; 10 requests in flight (written, not answered).
        let before = served(10, 110);
        st.second(&before);
        assert!(!st.outage_active());
        // The server freezes at 1.95 s: second 1's replies are not handed over (its workers
        // hand it over with their next reply), but the ticks saw them.
        tick(&mut st, 1.95, 195);
        let frozen = Second::default();
        st.second(&frozen);
        assert!(!st.outage_active(), "silent since 1.95 s only");
        tick(&mut st, 2.5, 195);
        st.second(&frozen);
        assert!(st.outage_active(), "nothing answered from 2 s to 3 s");
        assert_eq!(outages(&st), 1);
        let body = super::super::text::render(&st, super::super::Format::Prometheus);
        assert!(body.contains("\nrespbench_outage_active 1\n"), "{body}");
        assert!(
            body.contains("respbench_outages_total{test=\"GET\"} 1\n"),
            "{body}"
        );
        st.second(&frozen);
        assert_eq!(outages(&st), 1, "the same outage, still under way");
        // Replies again at 4.05 s: over at the next tick, still one outage.
        tick(&mut st, 4.1, 205);
        assert!(!st.outage_active());
        // Second 4's replies waited 2.1 s.
        let mut back = served(10, 100);
        back.slots[0].waited_ns = 2_100_000_000;
        st.second(&back);
        assert!(!st.outage_active());
        assert_eq!(outages(&st), 1);
        // The test ends: the record's count (second 1 whole now), the same outage, not added
        // to the live one.
        let mut r = TestResult::empty("GET", None, Outcome::Completed);
        let second_1 = served(10, 100);
        r.timeline.seconds = vec![before, second_1, frozen.clone(), frozen.clone(), back];
        r.elapsed = std::time::Duration::from_secs(5);
        st.test_ended(&r);
        assert_eq!(outages(&st), 1);
        assert!(!st.outage_active());

        // Nothing in flight (every command written was answered): a quiet spell, no outage.
        st.test_started("GET", Vec::new());
        st.second(&served(10, 100));
        st.second(&frozen);
        st.second(&frozen);
        assert!(!st.outage_active());
        assert_eq!(outages(&st), 1, "the first test's only");
        // The workers' live count of requests in flight, where a tick has it, over the seconds'.
        st.test_started("GET", Vec::new());
        st.second(&served(10, 110));
        st.progress(&Tick {
            measured_secs: 1.0,
            in_flight: Some(0),
            ..Tick::default()
        });
        st.second(&frozen);
        st.second(&frozen);
        assert!(!st.outage_active(), "nothing in flight: a quiet spell");
        st.progress(&Tick {
            measured_secs: 3.25,
            in_flight: Some(4),
            ..Tick::default()
        });
        assert!(st.outage_active(), "4 requests unanswered for 2 s");
    }

    #[test]
    fn a_test_end_sets_the_exact_totals_and_never_lowers_a_counter() {
        let mut st = State::new(String::new());
        st.test_started("SET", Vec::new());
        st.progress(&Tick {
            completed: 3,
            connections: 4,
            down: 1,
            ..Tick::default()
        });
        assert_eq!((st.phase, st.connections_up), (Phase::Measuring, 3));
        let early = second(&[100, 200], 0);
        st.second(&early);
        let live = st.tests[0].total();
        // The tick is ahead of the seconds handed over.
        assert_eq!(live.completed, 3);
        // The result's timeline: the same second grew (a late worker), and one more.
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut grown = early.clone();
        grown.latency.record(300_000);
        grown.completed += 1;
        r.timeline.seconds = vec![grown, second(&[50], 0)];
        r.completed = 4;
        st.test_ended(&r);
        let end = st.tests[0].total();
        assert_eq!(end.completed, 4);
        assert!(end.completed >= live.completed && end.latency_sum >= live.latency_sum);
        assert!(end.buckets.iter().zip(&live.buckets).all(|(a, b)| a >= b));
        assert_eq!(st.phase, Phase::Idle);
        // The same test again adds to its series.
        st.test_started("SET", Vec::new());
        st.second(&second(&[10], 0));
        assert_eq!(st.tests.len(), 1);
        assert_eq!(st.tests[0].total().completed, 5);
        assert_eq!(st.tests_started, 2);
    }
}
