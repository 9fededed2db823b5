//! The per-second timeline of a test: completed and failed requests and the latency of each
//! second of the measured phase, from every worker.
//!
//! Why it is built this way: a worker tallies the second under way in its own [`SecondTally`]
//! (no lock, no allocation per request) and hands it to the test's [`SharedTimeline`] when a reply
//! lands in a later second and when it stops, so the lock is taken about once per second per
//! worker, and memory holds one merged histogram per second of the test, not one per worker.
//! A request belongs to the second in which its reply arrived (counted from the start of the
//! measured phase); the sums over the seconds equal the test's totals ([`Timeline::check_totals`]).
//!
//! Each second also keeps ten 100 ms slots (completed, failed, requests lost without a reply,
//! reconnect attempts and successes): a second is too coarse to say when an outage began and
//! ended, and `outage.rs` finds outages in these slots. The per-reply cost stays one comparison
//! (the boundary the tally checks is the next slot's) and one count: a reply is counted in its
//! slot only, and the second's `completed` and `failed` are the slots' sums, taken when the
//! tally hands the second over.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::thread_cpu::{ThreadCpuMark, ThreadCpuUsage, cpu_percent};
use super::{
    CoarseHistogram, ExactSecond, FAILURE_KINDS, LatencyHistogram, PushCounts, SecondBase,
    TestResult, Whole,
};

/// 100 ms slots per second.
pub const SLOTS: usize = 10;
/// The length of a slot.
pub const SLOT: Duration = Duration::from_millis(100);

/// One 100 ms slot of a second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    pub completed: u64,
    /// Error replies and requests lost without a reply.
    pub failed: u64,
    /// Requests lost without a reply (timeouts, lost connections): what marks an outage.
    pub lost: u64,
    /// Attempts to reopen a failed connection (`-e`), and those that connected.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// The longest corrected latency of a request completed in it (ns): that request was
    /// waiting for so long, so the empty slots before it were a stall, not a quiet spell
    /// (`outage.rs`). Not in the record: outages are.
    pub waited_ns: u64,
    /// The busiest worker's CPU over the slot, per mille of one core, and the longest run-queue
    /// wait, per mille of the slot's wall time; `cpu_workers`/`runqueue_workers` workers
    /// measured them (0: not measured). Each worker reads its clocks when it crosses the slot's
    /// end (`SlotClock`), so a sub-second test is judged from its slots (`verdict::slots`),
    /// not from figures that mix its start-up into its steady state.
    pub cpu_max_permille: u32,
    pub runqueue_max_permille: u32,
    pub cpu_workers: u32,
    pub runqueue_workers: u32,
    /// The sampled client delays (`rx_delay`) taken in the slot: their sum (ns) and count.
    pub delay_sum_ns: u64,
    pub delay_samples: u64,
}

impl Slot {
    fn add(&mut self, o: &Slot) {
        self.completed += o.completed;
        self.failed += o.failed;
        self.lost += o.lost;
        self.reconnect_attempts += o.reconnect_attempts;
        self.reconnects += o.reconnects;
        self.waited_ns = self.waited_ns.max(o.waited_ns);
        self.cpu_max_permille = self.cpu_max_permille.max(o.cpu_max_permille);
        self.runqueue_max_permille = self.runqueue_max_permille.max(o.runqueue_max_permille);
        self.cpu_workers += o.cpu_workers;
        self.runqueue_workers += o.runqueue_workers;
        self.delay_sum_ns = self.delay_sum_ns.saturating_add(o.delay_sum_ns);
        self.delay_samples += o.delay_samples;
    }

    /// The busiest worker's CPU in the slot, percent of one core (`None`: not measured).
    pub fn client_cpu_pct(&self) -> Option<f64> {
        (self.cpu_workers > 0).then(|| f64::from(self.cpu_max_permille) / 10.0)
    }

    /// The longest run-queue wait of a worker in the slot, percent of its wall time.
    pub fn client_runqueue_pct(&self) -> Option<f64> {
        (self.runqueue_workers > 0).then(|| f64::from(self.runqueue_max_permille) / 10.0)
    }

    /// The slot's average sampled client delay, ns (`None`: no sample in it).
    pub fn client_delay_avg_ns(&self) -> Option<f64> {
        (self.delay_samples > 0).then(|| self.delay_sum_ns as f64 / self.delay_samples as f64)
    }

    /// Records one worker's clocks over the slot.
    fn measured(&mut self, u: &ThreadCpuUsage) {
        let permille = |part: Duration| (cpu_percent(part, u.wall) * 10.0).round() as u32;
        self.cpu_max_permille = self.cpu_max_permille.max(permille(u.cpu));
        self.cpu_workers += 1;
        if let Some(w) = u.runqueue {
            self.runqueue_max_permille = self.runqueue_max_permille.max(permille(w));
            self.runqueue_workers += 1;
        }
    }
}

/// One second of a test.
#[derive(Clone, Debug)]
pub struct Second {
    /// Replies that were not errors.
    pub completed: u64,
    /// Error replies and requests lost without a reply.
    pub failed: u64,
    /// Of `failed`, those lost without a reply, by kind (index into [`FAILURE_KINDS`]).
    pub lost: [u64; FAILURE_KINDS.len()],
    /// The second's ten 100 ms slots.
    pub slots: [Slot; SLOTS],
    /// Corrected latency of this second's completed requests (nanoseconds, 2 significant
    /// figures: [`LatencyHistogram::coarse`]), packed once the workers are done with the second
    /// ([`Timeline::pack_older`]).
    pub latency: CoarseHistogram,
    /// The sampled client's delays (`rx_delay`) taken in this second, nanoseconds, coarse as
    /// `latency`: the client's delay over time (a worker starved for a few seconds shows there,
    /// not only in the test's average). Empty where not measured.
    pub client_delay: CoarseHistogram,
    /// Client-side caching invalidations received in this second (`--enable-tracking`): the
    /// churn a moving hot set (`--key-drift`) causes, second by second.
    pub invalidations: u64,
    /// Messages published in this second (`--pubsub`/`--stream`: acknowledged publishes or
    /// `XADD`s, by their send time); 0 in other tests, whose `completed` are the requests.
    pub published: u64,
    /// Measured commands written, as the workers handed them over with this second (each
    /// worker's count since its previous hand-over, so a few written just after the second's
    /// end may be in it: never fewer than its replies'). `None` where no worker counts them
    /// (`storm`, `fuzz`): the journal's recovered test then says `issued` is unknown.
    pub issued: Option<u64>,
    /// What the workers' pushes (every kind, warm-up's too: as the test's `pushes`) and the
    /// reconnects the server refused gained, handed over with the second as `issued` is, so a
    /// journal's recovered test has them; `None` where no worker hands them over.
    pub pushes: Option<PushCounts>,
    pub reconnect_refusals: Option<u64>,
    /// `--pubsub`/`--stream`: the deliveries owed for the messages published in this second
    /// (each acknowledged message's receivers), so a killed test still says how many were due.
    pub owed: u64,
    /// The second's latencies at full precision, for the journal (`ExactSecond`): `Some` in a
    /// worker's second under way, and in the test's timeline until the second is handed over
    /// (`engine::seconds` moves it out), `None` after.
    pub exact: Option<Box<ExactSecond>>,
    /// Each worker thread's CPU from the measured phase's start to this second's hand-over
    /// (`engine::seconds` reads it on the main thread, into the copy it hands to the observer,
    /// for the journal); empty in the timeline itself.
    pub client_threads: Vec<super::ThreadCpuUsage>,
}

impl Default for Second {
    fn default() -> Self {
        Self {
            completed: 0,
            failed: 0,
            lost: [0; FAILURE_KINDS.len()],
            slots: [Slot::default(); SLOTS],
            latency: CoarseHistogram::Empty,
            client_delay: CoarseHistogram::Empty,
            invalidations: 0,
            published: 0,
            issued: None,
            pushes: None,
            reconnect_refusals: None,
            owed: 0,
            exact: None,
            client_threads: Vec::new(),
        }
    }
}

impl Second {
    fn is_empty(&self) -> bool {
        self.completed == 0
            && self.failed == 0
            && self.reconnect_attempts() == 0
            && self.invalidations == 0
            && self.published == 0
            // A direct tally's writes (`SecondTally::written`); a worker's are set after this
            // check (`SecondTally::flush_with`).
            && self.issued.unwrap_or(0) == 0
    }

    fn add(&mut self, other: &Second) {
        self.completed += other.completed;
        self.failed += other.failed;
        for (a, b) in self.lost.iter_mut().zip(&other.lost) {
            *a += b;
        }
        for (a, b) in self.slots.iter_mut().zip(&other.slots) {
            a.add(b);
        }
        self.latency.merge(&other.latency);
        self.client_delay.merge(&other.client_delay);
        self.invalidations += other.invalidations;
        self.published += other.published;
        if let Some(n) = other.issued {
            *self.issued.get_or_insert(0) += n;
        }
        if let Some(p) = &other.pushes {
            self.pushes.get_or_insert_default().merge(p);
        }
        if let Some(n) = other.reconnect_refusals {
            *self.reconnect_refusals.get_or_insert(0) += n;
        }
        self.owed += other.owed;
        if let Some(o) = &other.exact {
            // Once per second of the test (the first worker to hand it over), off the hot path.
            self.exact.get_or_insert_with(Default::default).add(o);
        }
    }

    fn clear(&mut self) {
        self.completed = 0;
        self.failed = 0;
        self.lost = [0; FAILURE_KINDS.len()];
        self.slots = [Slot::default(); SLOTS];
        self.latency = CoarseHistogram::Empty;
        // `exact` is left: the next hand-over sets all of it (`ExactSecond::take_delta`).
        self.client_delay = CoarseHistogram::Empty;
        self.invalidations = 0;
        self.published = 0;
        self.issued = None;
        self.pushes = None;
        self.reconnect_refusals = None;
        self.owed = 0;
    }

    /// Reconnect attempts in this second.
    pub fn reconnect_attempts(&self) -> u64 {
        self.slots.iter().map(|s| s.reconnect_attempts).sum()
    }

    /// Reconnects that connected in this second.
    pub fn reconnects(&self) -> u64 {
        self.slots.iter().map(|s| s.reconnects).sum()
    }

    /// Whether something failed or reconnected in this second (its slots then go into the
    /// record, to place an outage within the second).
    pub fn troubled(&self) -> bool {
        self.failed > 0 || self.reconnect_attempts() > 0
    }
}

/// A test's seconds, index = second since the start of the measured phase.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub seconds: Vec<Second>,
    /// Whether the workers keep each second's full-precision histograms (`ExactSecond`): only
    /// when a journal writes them (`engine::Observer::exact_seconds`), since taking them costs
    /// each worker a read of part of its histograms once a second. Set before the workers
    /// start.
    pub exact: bool,
    /// memtier's `--client-stats`: each load connection's own seconds, added by its worker when
    /// it ends (empty unless `LoadSpec::conn_seconds`).
    pub connections: Vec<super::ConnSeconds>,
    /// The seconds before this one are packed ([`Timeline::pack_older`]).
    packed_below: usize,
}

/// A second stays open (its histograms as counts) until a second this many later is handed
/// over: by then every busy worker has handed it over, and the journal's and live metrics'
/// hand-over (`engine::seconds`, 200 ms after its end) has read it.
pub const OPEN_SECONDS: usize = 3;

/// The timeline the workers of one test add their seconds to.
pub type SharedTimeline = Arc<Mutex<Timeline>>;

impl Timeline {
    /// The entry of second `index`, created (with the ones before it) when first reached.
    pub fn second_mut(&mut self, index: usize) -> &mut Second {
        if self.seconds.len() <= index {
            self.seconds.resize_with(index + 1, Second::default);
        }
        &mut self.seconds[index]
    }

    /// Drops the seconds' full-precision histograms (`ExactSecond`) not handed over: when the
    /// test ends its record has the whole-test histograms, and a long suite keeps every test's
    /// timeline.
    pub fn drop_exact(&mut self) {
        for s in &mut self.seconds {
            s.exact = None;
        }
    }

    /// Adds one second of another timeline at `index` (a delivery receiver handing over a
    /// second it has finished: `delivery::seconds`).
    pub fn add_second(&mut self, index: usize, s: &Second) {
        self.second_mut(index).add(s);
        self.pack_older(index);
    }

    /// Adds another timeline, second by second.
    pub fn merge(&mut self, other: &Timeline) {
        for (i, s) in other.seconds.iter().enumerate() {
            self.second_mut(i).add(s);
            self.pack_older(i);
        }
    }

    /// Packs the histograms of the seconds [`OPEN_SECONDS`] or more before `newest` (the second
    /// just handed over), and `newest` itself when it is one of those already packed (a worker
    /// that was idle for seconds handing over its last one), so a long test's memory grows by
    /// the bytes of its seconds' values, not by two 37 kB histograms a second
    /// (`metrics::coarse`).
    pub fn pack_older(&mut self, newest: usize) {
        if newest < self.packed_below {
            self.pack(newest);
        }
        let end = newest.saturating_sub(OPEN_SECONDS).min(self.seconds.len());
        while self.packed_below < end {
            self.pack(self.packed_below);
            self.packed_below += 1;
        }
    }

    fn pack(&mut self, index: usize) {
        if let Some(s) = self.seconds.get_mut(index) {
            s.latency.pack();
            s.client_delay.pack();
        }
    }

    /// What the seconds keep on the heap and in place, bytes: a long run's memory for its
    /// timeline (measured by the tests; `bench/run-memory.sh` measures a real run's).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        let heap: usize = self
            .seconds
            .iter()
            .map(|s| s.latency.heap_bytes() + s.client_delay.heap_bytes())
            .sum();
        heap + self.seconds.capacity() * std::mem::size_of::<Second>()
    }

    /// `Ok` when the seconds add up to the test's totals: completed, error replies, and the
    /// corrected histogram's count.
    pub fn check_totals(&self, r: &TestResult) -> Result<(), String> {
        let completed: u64 = self.seconds.iter().map(|s| s.completed).sum();
        let failed: u64 = self.seconds.iter().map(|s| s.failed).sum();
        let recorded: u64 = self.seconds.iter().map(|s| s.latency.len()).sum();
        let mut wrong = Vec::new();
        if completed != r.completed {
            wrong.push(format!("completed {completed} != {}", r.completed));
        }
        if failed != r.errors.total() {
            wrong.push(format!("failed {failed} != {}", r.errors.total()));
        }
        if recorded != r.latency.len() {
            wrong.push(format!("latencies {recorded} != {}", r.latency.len()));
        }
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("timeline sums differ: {}", wrong.join(", ")))
        }
    }
}

/// One worker's second under way.
#[derive(Debug)]
pub struct SecondTally {
    /// The start of the measured phase: second 0 begins here.
    start: Instant,
    index: usize,
    /// The 100 ms slot of second `index` under way.
    slot: usize,
    /// When slot `slot` ends: the per-reply check is one comparison with it.
    boundary: Instant,
    current: Second,
    /// The second under way's corrected latencies and client delays: kept here, not in
    /// `current`, so a reply records into a plain histogram (`metrics::coarse`).
    latency: LatencyHistogram,
    client_delay: LatencyHistogram,
    /// The worker's whole-test figures at the last hand-over, when the seconds' full-precision
    /// figures are kept (`ExactSecond::take_delta`).
    base: Option<Box<SecondBase>>,
    shared: SharedTimeline,
    /// The worker's clocks when it last crossed a slot's end: `None` until the first crossing,
    /// because the tally may be built on another thread than the worker that fills it (a
    /// thread's CPU clock means nothing on another thread), so the first slot has no figures.
    clock: Option<ThreadCpuMark>,
    /// The worker's issued count, pushes and refused reconnects ([`Whole`]) at the last
    /// hand-over that had them.
    issued_base: u64,
    pushes_base: PushCounts,
    refusals_base: u64,
}

/// A span between two slot crossings shorter than this gives no slot figures: a few
/// milliseconds of CPU time are a handful of scheduler decisions, not a share of a core.
const MIN_SPAN: Duration = Duration::from_millis(50);

impl SecondTally {
    pub fn new(start: Instant, shared: SharedTimeline) -> Self {
        Self::with_base(start, shared, true)
    }

    /// `base`: whether the seconds' full-precision parts are taken as differences of the
    /// worker's whole-test figures (`SecondBase`), or counted directly ([`SecondTally::direct`]).
    fn with_base(start: Instant, shared: SharedTimeline, base: bool) -> Self {
        let exact = shared.lock().unwrap_or_else(|e| e.into_inner()).exact;
        Self {
            start,
            index: 0,
            slot: 0,
            boundary: start + SLOT,
            current: Second {
                exact: exact.then(Box::default),
                ..Second::default()
            },
            base: (exact && base).then(Box::default),
            latency: LatencyHistogram::coarse(),
            client_delay: LatencyHistogram::coarse(),
            shared,
            clock: None,
            issued_base: 0,
            pushes_base: PushCounts::default(),
            refusals_base: 0,
        }
    }

    /// A tally for a mode that counts its events one by one, without a worker's whole-test
    /// figures to take a second's part from (the fuzzer, a storm's opener): while the timeline
    /// keeps full-precision seconds (a journal is written), what [`SecondTally::success_exact`],
    /// [`SecondTally::error_word`] and [`SecondTally::stage`] count goes into the second's
    /// full-precision part as it comes, and is handed over with the second.
    ///
    /// Why not the difference of whole-test histograms, as a worker's: that keeps a copy of a
    /// full-precision histogram's counts (270 kB) per thread, and these modes run many threads
    /// at a few events a second each; a pair per event, compacted in place by bucket
    /// (`SparseHistogram::record_bounded`), costs them nothing per event but a push.
    pub fn direct(start: Instant, shared: SharedTimeline) -> Self {
        Self::with_base(start, shared, false)
    }

    /// [`SecondTally::success`], and its latency into the second's full-precision part (a
    /// direct tally's: [`SecondTally::direct`]).
    pub fn success_exact(&mut self, now: Instant, latency_ns: u64) {
        self.success(now, latency_ns);
        if let Some(e) = self.current.exact.as_deref_mut() {
            e.corrected.record_bounded(latency_ns);
            e.uncorrected.record_bounded(latency_ns);
        }
    }

    /// An error reply at `now` whose first word is `word`, by that word in the second's
    /// full-precision part (a direct tally's).
    pub fn error_word(&mut self, now: Instant, word: &str) {
        self.failures(now, 1);
        if let Some(e) = self.current.exact.as_deref_mut() {
            e.errors.record_kind(word, 1);
        }
    }

    /// Stage `k` of an event completed at `now` took `ns` (a direct tally's: a storm's
    /// connection stages), in the second's full-precision part as part `k`'s latency.
    pub fn stage(&mut self, k: usize, ns: u64) {
        if let Some(e) = self.current.exact.as_deref_mut() {
            if e.commands.len() <= k {
                e.commands.resize_with(k + 1, Default::default);
            }
            let part = &mut e.commands[k];
            part.latency.record_bounded(ns);
            part.completed += 1;
        }
    }

    /// `n` measured commands written at `now` (a direct tally's: the worker's are handed over
    /// from [`Whole::issued`]).
    pub fn written(&mut self, now: Instant, n: u64) {
        self.at(now);
        *self.current.issued.get_or_insert(0) += n;
    }

    /// A measured reply that completed a request at `now` with corrected latency `latency_ns`.
    #[inline]
    pub fn success(&mut self, now: Instant, latency_ns: u64) {
        self.successes(now, latency_ns, 1);
    }

    /// `n` measured replies that completed requests at `now`, all with corrected latency
    /// `latency_ns`.
    #[inline]
    pub fn successes(&mut self, now: Instant, latency_ns: u64, n: u64) {
        self.at(now);
        let slot = &mut self.current.slots[self.slot];
        slot.completed += n;
        slot.waited_ns = slot.waited_ns.max(latency_ns);
        self.latency.record_times(latency_ns, n);
    }

    /// A sampled client's delay (`rx_delay`) of `ns`, taken at `now` (1 read event in
    /// `rx_delay::SAMPLE_EVERY`, so off the per-reply path).
    pub fn client_delay(&mut self, now: Instant, ns: u64) {
        self.at(now);
        self.client_delay.record(ns);
        let slot = &mut self.current.slots[self.slot];
        slot.delay_sum_ns = slot.delay_sum_ns.saturating_add(ns);
        slot.delay_samples += 1;
    }

    /// A measured error reply at `now`.
    #[inline]
    pub fn failure(&mut self, now: Instant) {
        self.failures(now, 1);
    }

    /// A measured error reply at `now` whose text (without the `-`) is `text`: counted by its
    /// first word too while the second's full-precision figures are kept (`ExactSecond`).
    #[inline]
    pub fn error_reply(&mut self, now: Instant, _text: &[u8]) {
        self.failures(now, 1);
    }

    /// `n` measured requests failed at `now` (error replies).
    #[inline]
    pub fn failures(&mut self, now: Instant, n: u64) {
        self.at(now);
        self.current.slots[self.slot].failed += n;
    }

    /// `n` measured requests lost at `now` without a reply (a timeout, a lost connection), of
    /// kind `kind` (index into [`FAILURE_KINDS`]).
    pub fn lost(&mut self, now: Instant, kind: usize, n: u64) {
        self.failures(now, n);
        self.current.lost[kind] += n;
        self.current.slots[self.slot].lost += n;
    }

    /// An attempt to reopen a failed connection, started at `now`.
    pub fn reconnect_attempt(&mut self, now: Instant) {
        self.at(now);
        self.current.slots[self.slot].reconnect_attempts += 1;
    }

    /// A reopened connection connected at `now`.
    pub fn reconnected(&mut self, now: Instant) {
        self.at(now);
        self.current.slots[self.slot].reconnects += 1;
    }

    /// Whether `now` is past the slot under way (the worker's `Recorder` then calls
    /// [`SecondTally::hand_over`] before counting anything at `now`).
    #[inline]
    pub fn due(&self, now: Instant) -> bool {
        now >= self.boundary
    }

    /// Moves to the slot `now` falls in, handing over the second that ended with its part of
    /// `whole` (the worker's figures so far, none of them from `now`'s second) when the
    /// second's full-precision figures are kept.
    #[cold]
    pub fn hand_over(&mut self, now: Instant, whole: &Whole<'_>) {
        self.next_slot(now, Some(whole));
    }

    /// Moves to the slot `now` falls in, handing over the second that ended.
    #[inline]
    fn at(&mut self, now: Instant) {
        if now >= self.boundary {
            self.next_slot(now, None);
        }
    }

    /// A client-side caching invalidation that arrived at `now` (measured phase only).
    #[inline]
    pub fn invalidation(&mut self, now: Instant) {
        self.at(now);
        self.current.invalidations += 1;
    }

    /// Out of line: ten times a second per worker.
    #[cold]
    fn next_slot(&mut self, now: Instant, whole: Option<&Whole<'_>>) {
        // The slot under way ends here: its share of the worker's CPU and run-queue wait
        // (clocks read ten times a second, no allocation: `ThreadCpuMark`).
        match &mut self.clock {
            Some(mark) => {
                let used = mark.advance();
                if used.wall >= MIN_SPAN {
                    self.current.slots[self.slot].measured(&used);
                }
            }
            None => self.clock = Some(ThreadCpuMark::now()),
        }
        let slots = now.saturating_duration_since(self.start).as_millis() / SLOT.as_millis();
        let slots = slots as usize;
        if slots / SLOTS != self.index {
            self.flush_with(whole);
            self.index = slots / SLOTS;
        }
        self.slot = slots % SLOTS;
        self.boundary = self.start + SLOT * (slots as u32 + 1);
    }

    /// Hands the second under way to the shared timeline, without its full-precision figures
    /// (see [`SecondTally::flush_with`]).
    pub fn flush(&mut self) {
        self.flush_with(None);
    }

    /// Hands the second under way to the shared timeline (the worker calls it when it stops),
    /// with its full-precision figures when they are kept and `whole` is given: what `whole`
    /// gained since the last hand-over (`ExactSecond::take_delta`). The worker's `Recorder`
    /// always gives it; without it (a unit test's call) the second goes without them.
    pub fn flush_with(&mut self, whole: Option<&Whole<'_>>) {
        // Replies are counted in their slot only; the second's totals are the slots' sums.
        let slots = &self.current.slots;
        self.current.completed = slots.iter().map(|s| s.completed).sum();
        self.current.failed = slots.iter().map(|s| s.failed).sum();
        if self.current.is_empty() {
            return;
        }
        // Once a second: what the worker wrote since its last hand-over goes with this second's
        // replies (an empty second keeps it for the next: none of it was answered yet).
        if let Some(w) = whole {
            self.current.issued = Some(w.issued.saturating_sub(self.issued_base));
            self.issued_base = w.issued;
            self.current.pushes = Some(w.pushes.since(&self.pushes_base));
            self.pushes_base = w.pushes;
            let refusals = w.reconnect_refusals.saturating_sub(self.refusals_base);
            self.current.reconnect_refusals = Some(refusals);
            self.refusals_base = w.reconnect_refusals;
        }
        // Where the second's values lie: its coarse histogram's range (`metrics::handed_over`).
        let band = (self.latency.min_ns(), self.latency.max_ns());
        let kept = match (
            whole,
            self.base.as_deref_mut(),
            self.current.exact.as_deref_mut(),
        ) {
            (Some(w), Some(base), Some(e)) => {
                e.take_delta(base, w, band);
                None
            }
            // A direct tally's part, as counted (`SecondTally::direct`): compacted, then
            // handed over with the second and emptied for the next.
            (_, None, Some(e)) => {
                e.corrected.compact();
                e.uncorrected.compact();
                for c in &mut e.commands {
                    c.latency.compact();
                }
                None
            }
            _ => self.current.exact.take(),
        };
        let mut t = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        let s = t.second_mut(self.index);
        s.add(&self.current);
        s.latency.merge_histogram(&self.latency);
        s.client_delay.merge_histogram(&self.client_delay);
        t.pack_older(self.index);
        drop(t);
        self.latency.reset();
        self.client_delay.reset();
        if kept.is_some() {
            self.current.exact = kept;
        }
        if self.base.is_none()
            && let Some(e) = self.current.exact.as_deref_mut()
        {
            e.clear();
        }
        self.current.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_from_several_workers_add_up_by_second() {
        let shared = SharedTimeline::default();
        shared.lock().unwrap().exact = true;
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = SecondTally::new(start, shared.clone());
        let mut b = SecondTally::new(start, shared.clone());
        a.success(at(10), 1_000);
        b.success(at(20), 2_000);
        a.failure(at(900));
        a.success(at(1_100), 3_000); // second 1: second 0 handed over
        b.success(at(2_500), 4_001); // b skips second 1
        a.flush();
        b.flush();
        a.flush(); // nothing left: no double count
        let t = shared.lock().unwrap();
        let quiet = SharedTimeline::default();
        let plain = SecondTally::new(start, quiet);
        assert!(
            plain.current.exact.is_none(),
            "no journal, no full-precision pair"
        );
        let counts: Vec<(u64, u64, u64)> = t
            .seconds
            .iter()
            .map(|s| (s.completed, s.failed, s.latency.len()))
            .collect();
        assert_eq!(counts, [(2, 1, 2), (1, 0, 1), (1, 0, 1)]);
        assert!(
            t.seconds.iter().all(|s| s.exact.is_none()),
            "flushed without the whole-test figures: no full-precision part"
        );
        assert!(t.seconds[2].latency.max_ns() >= 3_960 && t.seconds[2].latency.max_ns() <= 4_040);
    }

    #[test]
    fn each_slot_a_worker_crossed_the_end_of_carries_its_cpu_and_client_delay() {
        let shared = SharedTimeline::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut a = SecondTally::new(start, shared.clone());
        a.success(at(10), 1_000);
        // The first crossing only sets the clock: slot 0 gets no figures.
        a.success(at(150), 1_000);
        // Burn real CPU for longer than a span must last to count.
        let spin = Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < MIN_SPAN + Duration::from_millis(10) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        a.success(at(250), 1_000);
        a.client_delay(at(260), 5_000);
        a.client_delay(at(270), 7_000);
        // A crossing right after the last: a span too short to count.
        a.success(at(350), 1_000);
        a.flush();
        let t = shared.lock().unwrap();
        let slots = &t.seconds[0].slots;
        assert_eq!(
            slots[0].client_cpu_pct(),
            None,
            "no clock before the first crossing"
        );
        let cpu = slots[1].client_cpu_pct().expect("slot 1 measured");
        assert!(cpu > 0.0, "a spinning worker used CPU: {:?}", slots[1]);
        assert_eq!(slots[1].cpu_workers, 1);
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(slots[1].client_runqueue_pct().is_some(), "{:?}", slots[1]);
        }
        assert_eq!(slots[2].client_cpu_pct(), None, "a span under MIN_SPAN");
        assert_eq!(slots[2].client_delay_avg_ns(), Some(6_000.0));
        assert_eq!(slots[1].client_delay_avg_ns(), None, "no sample in it");
        // Workers add up: the busiest worker's CPU, every worker counted, delays summed.
        let mut sum = slots[1];
        sum.add(&Slot {
            cpu_max_permille: 2,
            cpu_workers: 1,
            delay_sum_ns: 3_000,
            delay_samples: 1,
            ..Slot::default()
        });
        assert_eq!(sum.client_cpu_pct(), Some(cpu.max(0.2)));
        assert_eq!(
            (sum.cpu_workers, sum.client_delay_avg_ns()),
            (2, Some(3_000.0))
        );
    }

    #[test]
    fn totals_check_catches_a_lost_second() {
        use crate::metrics::Outcome;
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut t = Timeline::default();
        for sec in 0..3usize {
            for k in 0..(10 * (sec as u64 + 1)) {
                t.second_mut(sec).latency.record(50_000 + k);
                t.second_mut(sec).completed += 1;
                r.latency.record(50_000 + k);
                r.completed += 1;
            }
        }
        t.second_mut(1).failed += 2;
        r.errors.record(b"ERR a");
        r.errors.record(b"ERR b");
        assert_eq!(t.check_totals(&r), Ok(()));
        let mut lost = t.clone();
        lost.seconds.pop();
        let e = lost.check_totals(&r).unwrap_err();
        assert!(
            e.contains("completed 30 != 60") && e.contains("latencies"),
            "{e}"
        );
    }
}
