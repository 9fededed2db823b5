//! One worker's recording: every reply's latency and every counted error or push, in the
//! worker's own histograms and counters (no sharing, no locks), merged after the test.

use std::time::Instant;

use super::{
    ClusterStats, ErrorCounts, FAILURE_KINDS, LatencyHistogram, PushCounts, SecondTally,
    SharedTimeline, Whole,
};

/// The whole-test figures a hand-over reads, borrowed field by field from a [`Recorder`] (a
/// macro, not a method: the tally they are handed to is borrowed mutably beside them).
macro_rules! whole {
    ($r:expr, $cluster:expr) => {
        Whole {
            latency: &$r.latency,
            uncorrected: &$r.uncorrected,
            errors: &$r.errors,
            commands: &$r.commands,
            cluster: $cluster,
            issued: $r.issued,
            pushes: $r.pushes,
            reconnect_refusals: $r.reconnect_refusals,
        }
    };
}

/// What one worker measured. Recording is constant time and allocates nothing (an error word
/// allocates on its first appearance only).
#[derive(Debug)]
pub struct Recorder {
    /// Corrected latency (from the intended send time) of measured successful replies.
    pub latency: LatencyHistogram,
    /// The same replies from just before the write: the figure that hides queueing.
    pub uncorrected: LatencyHistogram,
    /// Measured successful replies and their latency sum (for the progress line's average).
    pub completed: u64,
    pub latency_sum_ns: u64,
    /// Successful replies including `--warmup`, for the progress line's interval figures.
    pub all_completed: u64,
    pub all_latency_sum_ns: u64,
    /// Error replies counted with `-e`, by first word (measured phase only).
    pub errors: ErrorCounts,
    /// Measured requests failed (error replies and requests lost without one): `errors`' total
    /// as one count, which the engine's worker publishes each loop turn so the main thread knows
    /// the requests in flight (`issued − completed − failures`: live metrics' outages).
    pub failures: u64,
    /// RESP3 pushes that were not replies, by kind.
    pub pushes: PushCounts,
    /// When the last measured reply arrived: a test that ran to its end lasts until then.
    pub last_reply: Option<Instant>,
    /// When measured requests last failed without a reply (a timeout, a lost connection): a
    /// test whose last requests timed out lasts until then, not until its last reply.
    pub last_failure: Option<Instant>,
    /// The second under way of the test's per-second timeline.
    pub tally: SecondTally,
    /// Measured commands in flight when the worker stopped.
    pub unanswered: u64,
    /// Measured commands written so far (the record's `issued`): the worker's send path counts
    /// here (one add per batch, as before), so each second's hand-over takes its part with it.
    pub issued: u64,
    /// Attempts to reopen a failed connection, those the server answered on, and those it
    /// refused (a refused connect, or `ERR max number of clients reached`).
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    pub reconnect_refusals: u64,
    /// A command mix (`--ratio`): each command's own figures, by its index in the mix (empty
    /// otherwise). Sized once, before the test. Their latencies are *not* also in `latency` and
    /// `uncorrected` (see [`Recorder::success_of`]).
    pub commands: Vec<CommandTally>,
    /// Measured bytes of a mix's answered requests, each request's with its reply's (the sum
    /// of `commands`' `tx_bytes` and `rx_bytes`, kept as one figure for the live progress).
    pub mix_bytes: u64,
    /// Sampled waits of replies in the kernel (see `rx_delay`).
    pub rx_delay: super::rx_delay::RxDelay,
    /// Cluster mode: every second is handed over with the nodes' part
    /// ([`Recorder::hand_over_at`] before anything is counted), never by the plain hand-over.
    cluster: bool,
}

/// A reply's two latencies in nanoseconds. Replies that arrive in one read to one batch share
/// them (the batch's intended and write times, the read's time), so a pipelined batch works
/// them out once per read rather than once per reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latency {
    /// From the intended send time (coordinated omission corrected).
    pub corrected_ns: u64,
    /// From just before the write.
    pub uncorrected_ns: u64,
}

impl Latency {
    /// The latencies of a reply at `now` to a request intended at `intended`, written at `sent`.
    #[inline]
    pub fn between(intended: Instant, sent: Instant, now: Instant) -> Self {
        Self {
            corrected_ns: now.saturating_duration_since(intended).as_nanos() as u64,
            uncorrected_ns: now.saturating_duration_since(sent).as_nanos() as u64,
        }
    }
}

/// One command of a mix as one worker measured it over the test so far.
pub type CommandTally = CommandFigures<LatencyHistogram>;

/// One command of a mix as one worker measured it, its latencies in `H`: over the test so far
/// ([`CommandTally`]), or a second's part as full-precision pairs
/// ([`ExactCommand`](super::ExactCommand)), which the journal keeps and recovery adds up.
#[derive(Clone, Debug, Default)]
pub struct CommandFigures<H> {
    /// Corrected latency (from the intended send time).
    pub latency: H,
    /// From just before the write (memtier's per-command figure). Recorded *instead of* the
    /// worker's `uncorrected`, as `latency` is instead of its `latency`: a mix's reply still
    /// costs two histogram records, as a single command's does.
    pub uncorrected: H,
    pub completed: u64,
    pub errors: u64,
    /// What its successful replies found, memtier's hits and misses of a read: a reply with a
    /// value is a hit, a nil reply a miss, an array reply's elements one each (an `MGET`'s keys).
    pub hits: u64,
    pub nils: u64,
    /// Bytes of its measured requests as written, and of their replies as read (memtier's
    /// KB/sec: request plus reply, per command).
    pub tx_bytes: u64,
    pub rx_bytes: u64,
}

impl Recorder {
    /// `measure_start`: where the timeline's second 0 begins; `timeline`: the test's, shared by
    /// its workers.
    pub fn new(measure_start: Instant, timeline: SharedTimeline) -> Self {
        Self {
            latency: LatencyHistogram::new(),
            uncorrected: LatencyHistogram::new(),
            completed: 0,
            latency_sum_ns: 0,
            all_completed: 0,
            all_latency_sum_ns: 0,
            errors: ErrorCounts::default(),
            failures: 0,
            pushes: PushCounts::default(),
            last_reply: None,
            last_failure: None,
            tally: SecondTally::new(measure_start, timeline),
            unanswered: 0,
            issued: 0,
            reconnect_attempts: 0,
            reconnects: 0,
            reconnect_refusals: 0,
            commands: Vec::new(),
            mix_bytes: 0,
            rx_delay: Default::default(),
            cluster: false,
        }
    }

    /// Cluster mode: the worker hands each second over with its nodes' part
    /// ([`Recorder::hand_over_at`]) before it counts anything, so a journal's second holds every
    /// node's part of it (a debug build checks that no plain hand-over comes first).
    pub fn in_cluster(mut self) -> Self {
        self.cluster = true;
        self
    }

    /// Gives each of `n` mix commands its own figures.
    pub fn with_commands(mut self, n: usize) -> Self {
        self.commands = (0..n).map(|_| CommandTally::default()).collect();
        self
    }

    /// An error reply to mix command `k`, after [`Recorder::error`] counted it in the totals.
    #[inline]
    pub fn command_error(&mut self, k: usize, warmup: bool) {
        if let Some(c) = self.commands.get_mut(k).filter(|_| !warmup) {
            c.errors += 1;
        }
    }

    /// A reply to mix command `k`, after it was counted as a success or an error: its bytes
    /// (`rx` as read, and its request's `tx` as written: memtier counts a request's bytes with
    /// its reply's, an error reply's too) and what it found, `hits` values and `misses` nils (see
    /// [`CommandTally::hits`]; none for an error).
    #[inline]
    pub fn command_answered(
        &mut self,
        k: usize,
        (rx, tx): (usize, u32),
        (hits, misses): (u64, u64),
        warmup: bool,
    ) {
        if let Some(c) = self.commands.get_mut(k).filter(|_| !warmup) {
            c.tx_bytes += u64::from(tx);
            c.rx_bytes += rx as u64;
            self.mix_bytes += u64::from(tx) + rx as u64;
            c.hits += hits;
            c.nils += misses;
        }
    }

    /// Counts one successful reply to a request intended at `intended` and written at `sent`;
    /// returns its corrected latency.
    #[inline]
    pub fn success(&mut self, intended: Instant, sent: Instant, warmup: bool, now: Instant) -> u64 {
        self.success_of(None, intended, sent, warmup, now)
    }

    /// [`Recorder::success`] for command `k` of a mix (`Some`): its latencies go into that
    /// command's histograms *instead of* the total ones, and the runner adds the commands'
    /// histograms into the totals when the test ends (two histogram records per reply, as for a
    /// single command, which keeps a mix's client CPU close to a plain test's).
    #[inline]
    pub fn success_of(
        &mut self,
        k: Option<usize>,
        intended: Instant,
        sent: Instant,
        warmup: bool,
        now: Instant,
    ) -> u64 {
        self.success_with(k, Latency::between(intended, sent, now), warmup, now)
    }

    /// [`Recorder::success_of`] with the latencies already worked out (see [`Latency`]).
    #[inline]
    pub fn success_with(
        &mut self,
        k: Option<usize>,
        latency: Latency,
        warmup: bool,
        now: Instant,
    ) -> u64 {
        let latency_ns = latency.corrected_ns;
        self.all_completed += 1;
        self.all_latency_sum_ns += latency_ns;
        if !warmup {
            self.hand_over(now);
            match k.and_then(|k| self.commands.get_mut(k)) {
                Some(c) => {
                    c.latency.record(latency_ns);
                    c.uncorrected.record(latency.uncorrected_ns);
                    c.completed += 1;
                }
                None => {
                    self.latency.record(latency_ns);
                    self.uncorrected.record(latency.uncorrected_ns);
                }
            }
            self.completed += 1;
            self.latency_sum_ns += latency_ns;
            self.tally.success(now, latency_ns);
        }
        latency_ns
    }

    /// `n` successful replies that share `latency` (one read's replies to one batch): the same
    /// as `n` calls of [`Recorder::success_with`] without a mix command, each histogram and
    /// count touched once.
    #[inline]
    pub fn successes(&mut self, latency: Latency, n: u64, warmup: bool, now: Instant) {
        let latency_ns = latency.corrected_ns;
        self.all_completed += n;
        self.all_latency_sum_ns += latency_ns * n;
        if !warmup {
            self.hand_over(now);
            self.latency.record_times(latency_ns, n);
            self.uncorrected.record_times(latency.uncorrected_ns, n);
            self.completed += n;
            self.latency_sum_ns += latency_ns * n;
            self.tally.successes(now, latency_ns, n);
        }
    }

    /// Counts an error reply (`-e`) that arrived at `now`; warmup errors are checked but not
    /// counted.
    pub fn error(&mut self, warmup: bool, text: &[u8], now: Instant) {
        if !warmup {
            self.hand_over(now);
            self.errors.record(text);
            self.failures += 1;
            self.tally.error_reply(now, text);
        }
    }

    /// Counts `n` measured requests that failed at `now` without a reply (a timeout, a lost
    /// connection), under `kind` (index into [`FAILURE_KINDS`]).
    pub fn failed(&mut self, kind: usize, n: u64, now: Instant) {
        self.hand_over(now);
        self.errors.record_kind(FAILURE_KINDS[kind], n);
        self.failures += n;
        self.tally.lost(now, kind, n);
        self.last_failure = Some(now);
    }

    /// An attempt to reopen a failed connection at `now`.
    pub fn reconnect_attempt(&mut self, now: Instant) {
        self.hand_over(now);
        self.reconnect_attempts += 1;
        self.tally.reconnect_attempt(now);
    }

    /// A reopened connection was answered at `now`: it is back.
    pub fn reconnected(&mut self, now: Instant) {
        self.hand_over(now);
        self.reconnects += 1;
        self.tally.reconnected(now);
    }

    /// A client-side caching invalidation push that arrived at `now` (measured phase), for the
    /// per-second count (the test's count is `pushes`).
    pub fn invalidation(&mut self, now: Instant) {
        self.hand_over(now);
        self.tally.invalidation(now);
    }

    /// A sampled client's delay (`rx_delay`) of `ns`, taken at `now`.
    pub fn client_delay(&mut self, now: Instant, ns: u64) {
        self.hand_over(now);
        self.tally.client_delay(now, ns);
    }

    /// Hands the second under way to the timeline when `now` is in a later one, before anything
    /// at `now` is counted: its full-precision part is then what the whole-test figures gained
    /// since the last hand-over (`metrics::ExactSecond`). One comparison per reply.
    #[inline]
    fn hand_over(&mut self, now: Instant) {
        if self.tally.due(now) {
            // Cluster mode's worker hands over first, with the nodes' part: handed over here,
            // the second would go without it, and a killed run's journal would lose it.
            debug_assert!(
                !self.cluster,
                "a cluster worker's second handed over without its nodes' part \
                 (call Recorder::hand_over_at first)"
            );
            self.hand_over_with(now, None);
        }
    }

    /// Hands the second under way over when `now` is in a later one, with cluster mode's part
    /// (`cluster`: the worker's redirect and per-node figures, which the plain hand-over cannot
    /// see) when given. A cluster worker calls it before it counts anything at `now` (a reply,
    /// an error, a lost request, a reconnect, a sampled delay), so no second is handed over
    /// without its nodes' part: one that was would leave that part to the next second, and a
    /// run killed in between would lose it from the journal (`metrics::ExactSecond`).
    #[inline]
    pub fn hand_over_at(&mut self, now: Instant, cluster: Option<&ClusterStats>) {
        if self.tally.due(now) {
            self.hand_over_with(now, cluster);
        }
    }

    #[cold]
    fn hand_over_with(&mut self, now: Instant, cluster: Option<&ClusterStats>) {
        let whole = whole!(self, cluster);
        self.tally.hand_over(now, &whole);
    }

    /// The worker stopped: the second under way to the timeline, with its full-precision part.
    pub fn flush(&mut self) {
        self.flush_cluster(None);
    }

    /// The same, with cluster mode's per-node figures (see [`Recorder::hand_over_at`]).
    pub fn flush_cluster(&mut self, cluster: Option<&ClusterStats>) {
        let whole = whole!(self, cluster);
        self.tally.flush_with(Some(&whole));
    }

    /// The server refused an attempt to reopen a connection: a refusal, not a reconnect.
    pub fn reconnect_refused(&mut self) {
        self.reconnect_refusals += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The figures a recorder's replies leave behind, its timeline's included.
    fn figures(rec: &mut Recorder, shared: &SharedTimeline) -> Vec<u64> {
        rec.tally.flush();
        let t = shared.lock().unwrap();
        let mut v = vec![
            rec.completed,
            rec.latency_sum_ns,
            rec.all_completed,
            rec.all_latency_sum_ns,
        ];
        for h in [&rec.latency, &rec.uncorrected] {
            v.extend([
                h.len(),
                h.min_ns(),
                h.max_ns(),
                h.value_at_percentile_ns(50.0),
            ]);
        }
        for s in &t.seconds {
            v.extend([s.completed, s.latency.len(), s.latency.max_ns()]);
            v.extend(s.slots.iter().map(|slot| slot.completed));
        }
        v
    }

    #[test]
    fn successes_of_one_read_equal_the_same_replies_one_by_one() {
        let start = Instant::now();
        let at = |us: u64| start + Duration::from_micros(us);
        // Reads of 16, 3 and 1 replies (one warmup read), across a slot and a second boundary,
        // and latencies at 0 (recorded as 1 ns) and above the histograms' range (clamped).
        let reads = [
            (at(50), at(60), at(90_000), 16, false),
            (at(0), at(0), at(0), 2, false),
            (at(100), at(150), at(150_000), 3, true),
            (at(900_000), at(900_500), at(1_200_000), 5, false),
            (at(0), at(1), start + Duration::from_secs(7_200), 1, false),
        ];
        let one_by_one = SharedTimeline::default();
        let together = SharedTimeline::default();
        let mut a = Recorder::new(start, one_by_one.clone());
        let mut b = Recorder::new(start, together.clone());
        for (intended, sent, now, n, warmup) in reads {
            for _ in 0..n {
                a.success_of(None, intended, sent, warmup, now);
            }
            b.successes(Latency::between(intended, sent, now), n, warmup, now);
        }
        let fa = figures(&mut a, &one_by_one);
        assert_eq!(fa, figures(&mut b, &together));
        assert_eq!(fa[0], 24, "the warmup read is not measured");
    }

    #[test]
    fn each_seconds_full_precision_part_is_what_the_whole_test_gained_in_it() {
        let shared = SharedTimeline::default();
        shared.lock().unwrap().exact = true;
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut rec = Recorder::new(start, shared.clone()).with_commands(2);
        let lat = |c: u64, u: u64| Latency {
            corrected_ns: c,
            uncorrected_ns: u,
        };
        rec.success_with(Some(0), lat(1_001, 901), false, at(10));
        rec.success_with(Some(1), lat(2_003, 1_777), false, at(20));
        rec.command_answered(1, (5, 30), (0, 1), false);
        rec.error(false, b"WRONGTYPE x", at(30));
        rec.command_error(0, false);
        rec.failed(0, 2, at(40));
        // Second 1: the reply that hands second 0 over is not in it.
        rec.success_with(Some(0), lat(123_457, 5), false, at(1_100));
        rec.successes(lat(7_777, 7), 3, false, at(2_500));
        rec.error(false, b"OOM y", at(2_600));
        rec.flush();
        let t = shared.lock().unwrap();
        let e: Vec<&crate::metrics::ExactSecond> = t
            .seconds
            .iter()
            .map(|s| s.exact.as_deref().unwrap())
            .collect();
        assert_eq!(e.len(), 3);
        let h: Vec<[LatencyHistogram; 2]> = e
            .iter()
            .map(|e| [e.corrected.to_histogram(), e.uncorrected.to_histogram()])
            .collect();
        assert_eq!(
            (h[0][0].len(), h[0][0].max_ns(), h[0][1].max_ns()),
            (2, 2_003, 1_777)
        );
        assert_eq!(e[0].errors.iter().collect::<Vec<_>>(), [("WRONGTYPE", 1)]);
        let c = &e[0].commands;
        assert_eq!((c[0].completed, c[0].errors, c[1].nils), (1, 1, 1));
        assert_eq!(e[1].corrected.len(), 1);
        assert!(h[1][0].min_ns() > 123_000, "the reply of second 1 only");
        assert_eq!(e[1].commands[0].completed, 1);
        assert_eq!(e[1].errors.total(), 0);
        assert_eq!((h[2][0].len(), h[2][1].max_ns()), (3, 7));
        assert_eq!(e[2].errors.iter().filter(|x| x.1 > 0).count(), 1);
        let mut sum = LatencyHistogram::new();
        for s in &h {
            sum.merge(&s[1]);
        }
        // The whole test's uncorrected latencies: the worker's and its mix commands'.
        let mut whole = rec.uncorrected.clone();
        for c in &rec.commands {
            whole.merge(&c.uncorrected);
        }
        assert_eq!(sum.len(), whole.len());
        assert_eq!(sum.max_ns(), whole.max_ns());
        assert_eq!(whole.len(), 6, "2 + 1 mix replies and 3 plain ones");
        let per_command: Vec<u64> = e
            .iter()
            .map(|e| e.commands.iter().map(|c| c.uncorrected.len()).sum())
            .collect();
        assert_eq!(
            per_command,
            [2, 1, 0],
            "each mix reply in its second, from the write"
        );
        assert_eq!(rec.commands[1].uncorrected.max_ns(), 1_777);
    }

    /// The histograms' buckets and counts, to compare exactly.
    fn buckets(h: &LatencyHistogram) -> Vec<(u64, u64)> {
        h.raw()
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn a_seconds_exact_part_is_the_difference_of_the_whole_for_sparse_and_wide_values() {
        let shared = SharedTimeline::default();
        shared.lock().unwrap().exact = true;
        let start = Instant::now();
        let mut rec = Recorder::new(start, shared.clone());
        // Per second: the whole-test histograms after it (the difference of two is its part).
        let mut after = vec![(LatencyHistogram::new(), LatencyHistogram::new())];
        for sec in 0..6u64 {
            for k in 0..(200 * sec + 3) {
                // From 1 ns to an hour: dense around 100 µs, a sparse tail, a few far outliers.
                let c = match k % 50 {
                    0 => 10u64.pow((k / 50 % 13) as u32),
                    1 => 3_600_000_000_000 - k,
                    _ => 100_000 + (k * 7919 + sec * 104_729) % 50_000,
                };
                let u = if k % 7 == 0 { c } else { c / 3 };
                let at = start + Duration::from_millis(sec * 1_000 + k % 900);
                let lat = Latency {
                    corrected_ns: c,
                    uncorrected_ns: u,
                };
                if k % 5 == 0 {
                    rec.successes(lat, 2, false, at);
                } else {
                    rec.success_with(None, lat, false, at);
                }
            }
            after.push((rec.latency.clone(), rec.uncorrected.clone()));
        }
        rec.flush();
        let t = shared.lock().unwrap();
        assert_eq!(t.seconds.len(), 6);
        for (sec, s) in t.seconds.iter().enumerate() {
            let e = s.exact.as_deref().unwrap();
            let mut want_c = after[sec + 1].0.clone();
            want_c.subtract(&after[sec].0);
            let mut want_u = after[sec + 1].1.clone();
            want_u.subtract(&after[sec].1);
            let (c, u) = (e.corrected.to_histogram(), e.uncorrected.to_histogram());
            assert_eq!(buckets(&c), buckets(&want_c), "second {sec}, corrected");
            assert_eq!(buckets(&u), buckets(&want_u), "second {sec}, uncorrected");
            assert_eq!(c.len(), s.completed, "second {sec}");
            assert_eq!((c.min_ns(), c.max_ns()), (want_c.min_ns(), want_c.max_ns()));
        }
    }

    #[test]
    fn each_second_carries_what_the_worker_wrote_since_its_last_hand_over() {
        let shared = SharedTimeline::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let l = Latency {
            corrected_ns: 1_000,
            uncorrected_ns: 900,
        };
        let mut rec = Recorder::new(start, shared.clone());
        rec.issued = 3;
        rec.successes(l, 2, false, at(10));
        rec.issued += 4; // still in flight at second 0's end
        rec.successes(l, 1, false, at(1_100)); // hands second 0 over
        rec.issued += 1;
        rec.failed(0, 1, at(1_500));
        rec.issued += 5; // written in second 2, nothing answered there
        rec.successes(l, 1, false, at(3_200)); // hands second 1 over, with the 5
        rec.flush();
        let t = shared.lock().unwrap();
        let issued: Vec<Option<u64>> = t.seconds.iter().map(|s| s.issued).collect();
        assert_eq!(issued, [Some(7), Some(6), None, Some(0)]);
        let mut replies = 0;
        let mut written = 0;
        for s in &t.seconds {
            replies += s.completed + s.failed;
            written += s.issued.unwrap_or(0);
            assert!(
                written >= replies,
                "never fewer written than answered so far"
            );
        }
        assert_eq!((written, rec.issued), (13, 13));
    }

    /// A cluster worker's events as its worker counts them (`engine::worker`): each after
    /// `hand_over_at` with the cluster's figures, a sampled delay, a lost request or a
    /// reconnect first in its second included. Every second then holds its nodes' part, so a
    /// journal cut after any second has per-node figures that add up to its requests.
    #[test]
    fn a_cluster_workers_seconds_each_hold_their_nodes_part() {
        use crate::metrics::NodeStats;
        let shared = SharedTimeline::default();
        shared.lock().unwrap().exact = true;
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut rec = Recorder::new(start, shared.clone()).in_cluster();
        let mut stats = ClusterStats {
            nodes: vec![NodeStats::new(), NodeStats::new()],
            ..ClusterStats::default()
        };
        let l = Latency {
            corrected_ns: 1_000,
            uncorrected_ns: 900,
        };
        for sec in 0..4u64 {
            let first = at(sec * 1_000 + 5);
            rec.hand_over_at(first, Some(&stats));
            match sec {
                1 => rec.client_delay(first, 7),
                2 => rec.failed(0, 1, first),
                3 => rec.reconnect_attempt(first),
                _ => {}
            }
            for k in 0..10 + sec {
                let now = at(sec * 1_000 + 10 + k * 50);
                rec.hand_over_at(now, Some(&stats));
                let latency = rec.success_with(None, l, false, now);
                let n = &mut stats.nodes[(k % 2) as usize];
                n.completed += 1;
                n.latency.record(latency);
            }
        }
        rec.flush_cluster(Some(&stats));
        let t = shared.lock().unwrap();
        assert_eq!(t.seconds.len(), 4);
        for (sec, s) in t.seconds.iter().enumerate() {
            let e = s.exact.as_deref().unwrap();
            let nodes: u64 = e.nodes.iter().map(|n| n.completed).sum();
            let want = 10 + sec as u64;
            assert_eq!((nodes, s.completed), (want, want), "second {sec}");
        }
    }

    /// A second of a cluster worker handed over without its nodes' part (a plain hand-over
    /// first in the second: its part would wait for the next, which a killed run's journal
    /// never gets) stops a debug build, so a worker's call site that misses the cluster's
    /// hand-over fails the cluster tests.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "without its nodes' part")]
    fn a_cluster_workers_plain_hand_over_stops_a_debug_build() {
        let start = Instant::now();
        let mut rec = Recorder::new(start, SharedTimeline::default()).in_cluster();
        rec.client_delay(start + Duration::from_millis(1_200), 7);
    }
}
