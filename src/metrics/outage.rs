//! Outages found in a test's timeline: when requests were lost (timeouts, lost connections) and
//! nothing completed, how long that lasted, what failed and how the connections came back.
//!
//! Why from the timeline's 100 ms slots and not from events the workers log: the slots are
//! already merged over every worker, cost nothing per request, and place an outage within 0.1 s,
//! which is what a failover test asks ("how long were we down?"). An outage is a maximal run of
//! slots in which nothing completed (begun one slot earlier when requests were lost in the slot
//! before: the failure came in the middle of it, and ended one slot later when requests failed
//! in the slot that ended it: timeouts of requests sent during it that fire as replies resume),
//! that contains a lost request or a reconnect
//! attempt (a slow `--rps` leaves empty slots that are not outages), or, at the end of the test,
//! a run of at least a second with requests still unanswered (a server that stopped answering
//! without `--timeout`). Without `--timeout` nothing is lost in a stall that ends (a partition
//! that heals, a server paused and resumed: TCP delivers the requests late), so an empty run is
//! also an outage when the replies that end it waited through at least a second of it: from the
//! user's side requests were in flight and none was answered. Slots where some requests
//! completed are not outages even if others were lost (a server at `maxclients` refusing a few
//! connections is up for the rest); their failures are counted apart ([`failed_apart`]), so the
//! outages' failures and those add up to the test's.

use std::time::Duration;

use super::timeline::{SLOT, SLOTS, Slot, Timeline};

/// One outage, in 100 ms slots from the start of the measured phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outage {
    /// Its first slot.
    pub start_slot: usize,
    /// The slot after its last one.
    pub end_slot: usize,
    /// Requests that failed in it (error replies and lost requests).
    pub failed: u64,
    /// Of those, lost without a reply.
    pub lost: u64,
    /// Reconnect attempts and reconnects that connected, from its start until the next outage
    /// (or the end of the test): connections come back one by one after the first reply, each
    /// after its own backoff.
    pub reconnect_attempts: u64,
    pub reconnects: u64,
    /// The test ended during it (no reply came back before the end).
    pub until_end: bool,
}

impl Outage {
    /// When it began, from the start of the measured phase.
    pub fn start(&self) -> Duration {
        SLOT * self.start_slot as u32
    }

    /// When it ended, from the start of the measured phase.
    pub fn end(&self) -> Duration {
        SLOT * self.end_slot as u32
    }

    pub fn duration(&self) -> Duration {
        self.end() - self.start()
    }
}

/// Cluster, `-e`: one node's outage as the connections to it saw it, from the first request lost
/// on it to the first batch those connections completed again (on it after a restart, or on the
/// replica promoted in its place). Kept per node because a cluster with one dead primary is not
/// "down": the other shards keep completing requests, so the timeline's outages (slots in which
/// nothing completed) do not show it. One span per node: a node that fails twice in a test gets
/// one span over both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeOutage {
    /// From the start of the measured phase (0 for a failure during the warmup).
    pub start: Duration,
    /// When its slots were served again; `None`: not before the test ended.
    pub end: Option<Duration>,
}

impl NodeOutage {
    /// Two workers' views of one node: the earliest start, and the latest end (none if either
    /// worker's connections never came back).
    pub fn merged(a: Option<NodeOutage>, b: Option<NodeOutage>) -> Option<NodeOutage> {
        match (a, b) {
            (Some(a), Some(b)) => Some(NodeOutage {
                start: a.start.min(b.start),
                end: a.end.zip(b.end).map(|(x, y)| x.max(y)),
            }),
            (a, b) => a.or(b),
        }
    }

    /// Its length, up to `elapsed` (the test's) when it lasted until the end.
    pub fn duration(&self, elapsed: Duration) -> Duration {
        self.end.unwrap_or(elapsed).saturating_sub(self.start)
    }
}

/// A run of at least this many empty slots at the end of a test with requests unanswered is an
/// outage even with nothing lost (a server that stopped answering, no `--timeout`).
const STALL_SLOTS: usize = SLOTS;

/// The outages of a test that lasted `elapsed` and ended with `unanswered` requests in flight.
pub fn outages(t: &Timeline, elapsed: Duration, unanswered: u64) -> Vec<Outage> {
    let slots: Vec<[Slot; SLOTS]> = t.seconds.iter().map(|s| s.slots).collect();
    outages_in(&slots, elapsed, unanswered)
}

/// [`outages`] in the slots of each second (`record::timeline::SecondRows` keeps them without
/// the timeline's histograms).
pub fn outages_in(seconds: &[[Slot; SLOTS]], elapsed: Duration, unanswered: u64) -> Vec<Outage> {
    let slot = |i: usize| -> Slot {
        seconds
            .get(i / SLOTS)
            .map_or_else(Slot::default, |s| s[i % SLOTS])
    };
    let by_time = elapsed.as_millis().div_ceil(SLOT.as_millis()) as usize;
    let total = by_time.max(seconds.len() * SLOTS);
    let mut scan = OutageScan::default();
    for i in 0..total {
        scan.push(&slot(i));
    }
    let mut found = scan.finish(unanswered);
    // Reconnects counted until the next outage begins.
    for k in 0..found.len() {
        let to = found.get(k + 1).map_or(total, |n| n.start_slot);
        let o = &mut found[k];
        let range = o.start_slot..to;
        o.reconnect_attempts = range.clone().map(|i| slot(i).reconnect_attempts).sum();
        o.reconnects = range.map(|i| slot(i).reconnects).sum();
    }
    found
}

/// The rule of [`outages`], one 100 ms slot after another, so a test still under way can be
/// judged from the slots handed over so far (live metrics, `crate::live`) by the very rule its
/// record will use, and without keeping its slots: it holds only the run of empty slots under
/// way and the outages found. Its outages' reconnect counts are those of their own slots only
/// ([`outages`] adds the ones that come after, which needs the slots).
#[derive(Clone, Debug, Default)]
pub struct OutageScan {
    /// Slots pushed so far.
    slots: usize,
    /// The slot before the next one.
    previous: Slot,
    /// The run of empty slots under way.
    run: Option<Outage>,
    /// The slot before the next one ended an outage and its failures are that outage's (so
    /// an outage starting right after it does not count them again).
    previous_claimed: bool,
    found: Vec<Outage>,
}

impl OutageScan {
    /// The next slot.
    pub fn push(&mut self, s: &Slot) {
        let i = self.slots;
        self.slots += 1;
        let claimed = std::mem::take(&mut self.previous_claimed);
        let before = (i > 0 && self.previous.lost > 0 && !claimed).then_some(self.previous);
        self.previous = *s;
        if s.completed == 0 {
            let o = self.run.get_or_insert_with(|| {
                // The slot before lost requests: the outage began in it.
                let b = before.unwrap_or_default();
                Outage {
                    start_slot: i - usize::from(before.is_some()),
                    failed: b.failed,
                    lost: b.lost,
                    reconnect_attempts: b.reconnect_attempts,
                    ..Outage::default()
                }
            });
            o.failed += s.failed;
            o.lost += s.lost;
            o.reconnect_attempts += s.reconnect_attempts;
            return;
        }
        if let Some(o) = self.run.take().and_then(|o| closed(o, i, Some(s), 0)) {
            self.previous_claimed = o.end_slot > i;
            self.found.push(o);
        }
    }

    /// The outages found in the slots pushed, and the one under way as if the test ended now
    /// with `unanswered` requests in flight.
    pub fn finish(mut self, unanswered: u64) -> Vec<Outage> {
        self.found.extend(self.under_way(unanswered, 0));
        self.found
    }

    /// Outages that ended before the last slot pushed.
    pub fn ended(&self) -> usize {
        self.found.len()
    }

    /// The run of empty slots under way, if it is an outage were the test to end after the last
    /// slot pushed with `unanswered` requests in flight: requests lost or reconnects tried in
    /// it, or a second or more of it with requests unanswered (a server that stopped answering).
    ///
    /// `replied_until`: a slot before which replies came that the slots pushed may not hold yet
    /// (0 when they are complete, as a finished test's are). A live view's slots lack the last
    /// replies a worker got before its server froze (it hands a second over only when a reply
    /// lands in a later one), while its live counters know when they came: the run is then
    /// taken to begin no earlier, so a stall is judged by what it really lasted.
    pub fn under_way(&self, unanswered: u64, replied_until: usize) -> Option<Outage> {
        let mut o = self.run.clone()?;
        o.start_slot = o.start_slot.max(replied_until.min(self.slots));
        closed(o, self.slots, None, unanswered)
    }
}

/// The run `o` of empty slots, ended at slot `end`: by that slot's replies `by`, or (`None`) by
/// the end of the test with `unanswered` requests in flight. `Some` if it is an outage.
fn closed(mut o: Outage, end: usize, by: Option<&Slot>, unanswered: u64) -> Option<Outage> {
    o.end_slot = end;
    o.until_end = by.is_none();
    let stalled = o.until_end && unanswered > 0 && o.end_slot - o.start_slot >= STALL_SLOTS;
    // Failed (not only lost): a run in which every reply was an error is down for its user, and
    // its failures must lie within it (a stall's start below moves).
    if !(o.failed > 0 || o.reconnect_attempts > 0 || stalled) {
        o.start_slot = waited_through(by?, end, o.start_slot)?;
    }
    // Requests that failed in the slot whose replies ended it were sent during it (their
    // timeouts fire as the first replies come back): they are its failures, and it lasted
    // into that slot.
    if let Some(s) = by.filter(|s| s.failed > 0) {
        o.failed += s.failed;
        o.lost += s.lost;
        o.end_slot += 1;
    }
    Some(o)
}

/// Requests that failed outside every outage of `found` (in slots where others completed: a
/// server refusing a few connections, error replies), from the slots of each second: reported
/// apart, so that the outages' failures and these add up to the test's.
pub fn failed_apart(seconds: &[[Slot; SLOTS]], found: &[Outage]) -> u64 {
    let all: u64 = seconds.iter().flatten().map(|s| s.failed).sum();
    all.saturating_sub(found.iter().map(|o| o.failed).sum::<u64>())
}

/// Where a stall ended by slot `i` (whose replies are `s`) began, when its longest-waiting reply
/// covers at least [`STALL_SLOTS`] of the empty slots from `start` on. Counted conservatively (as
/// if the reply came at the end of its slot), so a stall is never made longer than it was.
fn waited_through(s: &Slot, i: usize, start: usize) -> Option<usize> {
    let back = (s.waited_ns / SLOT.as_nanos() as u64) as usize;
    let from = (i + 1).saturating_sub(back).max(start);
    (from + STALL_SLOTS <= i).then_some(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timeline from slots given as (completed, lost, attempts, reconnects), 100 ms each.
    fn timeline(slots: &[(u64, u64, u64, u64)]) -> Timeline {
        let mut t = Timeline::default();
        for (i, &(completed, lost, attempts, reconnects)) in slots.iter().enumerate() {
            let sec = t.second_mut(i / SLOTS);
            sec.completed += completed;
            sec.failed += lost;
            sec.slots[i % SLOTS] = Slot {
                completed,
                failed: lost,
                lost,
                reconnect_attempts: attempts,
                reconnects,
                ..Slot::default()
            };
        }
        t
    }

    #[test]
    fn two_outages_are_listed_apart_and_quiet_gaps_are_not_outages() {
        let mut slots = vec![(100, 0, 0, 0); 40];
        // Slots 5..=8: a kill (lost in slot 5 among completions), refused reconnects, back in 9.
        slots[5] = (60, 20, 0, 0);
        slots[6] = (0, 0, 20, 0);
        slots[7] = (0, 0, 20, 0);
        slots[8] = (0, 0, 20, 0);
        slots[9] = (80, 0, 0, 20);
        // Slots 12..=13: nothing completes, nothing lost (a slow --rps): not an outage.
        slots[12] = (0, 0, 0, 0);
        slots[13] = (0, 0, 0, 0);
        // Slots 25..=34: timeouts.
        for s in &mut slots[25..35] {
            *s = (0, 3, 3, 3);
        }
        let o = outages(&timeline(&slots), Duration::from_secs(4), 0);
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!((o[0].start_slot, o[0].end_slot), (5, 9));
        assert_eq!(o[0].failed, 20);
        assert_eq!((o[0].reconnect_attempts, o[0].reconnects), (60, 20));
        // Slot 15 (after the first outage, before the second): a late reconnect of the first.
        let mut late = slots.clone();
        late[15] = (100, 0, 1, 1);
        let o2 = outages(&timeline(&late), Duration::from_secs(4), 0);
        assert_eq!((o2[0].reconnect_attempts, o2[0].reconnects), (61, 21));
        assert_eq!(o[0].start(), Duration::from_millis(500));
        assert_eq!(o[0].duration(), Duration::from_millis(400));
        assert!(!o[0].until_end);
        assert_eq!((o[1].start_slot, o[1].end_slot, o[1].lost), (25, 35, 30));
    }

    /// An outage's place and counts, without the reconnects [`outages`] adds after it.
    fn shape(o: &Outage) -> (usize, usize, u64, u64, bool) {
        (o.start_slot, o.end_slot, o.failed, o.lost, o.until_end)
    }

    #[test]
    fn the_scan_slot_by_slot_finds_what_the_whole_timeline_shows() {
        // Every kind: a kill with refused reconnects, a quiet spell, timeouts, a stall its late
        // replies waited through, and a stall at the end.
        let mut slots = vec![(100, 0, 0, 0); 70];
        slots[5] = (60, 20, 0, 0);
        for s in &mut slots[6..9] {
            *s = (0, 0, 20, 0);
        }
        slots[12] = (0, 0, 0, 0);
        slots[13] = (0, 0, 0, 0);
        for s in &mut slots[25..35] {
            *s = (0, 3, 3, 3);
        }
        for s in &mut slots[40..55] {
            *s = (0, 0, 0, 0);
        }
        for s in &mut slots[58..] {
            *s = (0, 0, 0, 0);
        }
        // Every prefix, as a test that ended (or a live view that reached) there.
        for n in 0..=slots.len() {
            let mut t = timeline(&slots[..n]);
            if n > 55 {
                t.second_mut(5).slots[5].waited_ns = 1_600_000_000;
            }
            for unanswered in [0, 5] {
                let elapsed = SLOT * n as u32;
                let whole: Vec<_> = outages(&t, elapsed, unanswered).iter().map(shape).collect();
                let mut scan = OutageScan::default();
                for i in 0..t.seconds.len() * SLOTS {
                    scan.push(&t.seconds[i / SLOTS].slots[i % SLOTS]);
                }
                let under_way = scan.under_way(unanswered, 0).is_some();
                let ended = scan.ended();
                let scanned: Vec<_> = scan.finish(unanswered).iter().map(shape).collect();
                assert_eq!(scanned, whole, "{n} slots, {unanswered} unanswered");
                assert_eq!(ended + usize::from(under_way), whole.len());
            }
        }
        let mut t = timeline(&slots);
        t.second_mut(5).slots[5].waited_ns = 1_600_000_000;
        let all = outages(&t, SLOT * 70, 5);
        assert_eq!(all.len(), 4, "{all:?}");
        assert_eq!((all[2].start_slot, all[2].end_slot), (40, 55));
        assert!(all[3].until_end);
    }

    #[test]
    fn failures_in_the_slot_that_ends_an_outage_are_its_own() {
        // The Sentinel trial: a stall without losses (the replies that end it waited through
        // it), and 45 timeouts in the slot where replies resumed.
        let mut slots = vec![(100, 0, 0, 0); 10];
        slots.extend(vec![(0, 0, 0, 0); 15]);
        slots.push((50, 45, 0, 0));
        slots.extend(vec![(100, 0, 0, 0); 4]);
        let mut t = timeline(&slots);
        t.second_mut(2).slots[5].waited_ns = 2_000_000_000;
        let o = outages(&t, Duration::from_secs(3), 0);
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(shape(&o[0]), (10, 26, 45, 45, false));
        // An outage by losses ended by a slot with losses, and another right after: the slot
        // between them is the first one's (its end), not counted again as the second's start.
        let mut slots = vec![(100, 0, 0, 0); 5];
        slots.push((0, 10, 0, 0));
        slots.push((20, 7, 0, 0));
        slots.push((0, 3, 0, 0));
        slots.extend(vec![(100, 0, 0, 0); 3]);
        let o = outages(&timeline(&slots), Duration::from_millis(1100), 0);
        let shapes: Vec<_> = o.iter().map(shape).collect();
        assert_eq!(shapes, [(5, 7, 17, 17, false), (7, 8, 3, 3, false)]);
        // A quiet spell (no outage) ended by a slot with a refused connection: reported apart.
        let mut slots = vec![(100, 0, 0, 0); 5];
        slots.extend(vec![(0, 0, 0, 0); 3]);
        slots.push((100, 2, 0, 0));
        slots.push((100, 0, 0, 0));
        let t = timeline(&slots);
        let o = outages(&t, Duration::from_secs(1), 0);
        assert!(o.is_empty(), "{o:?}");
        let seconds: Vec<_> = t.seconds.iter().map(|s| s.slots).collect();
        assert_eq!(failed_apart(&seconds, &o), 2);
    }

    #[test]
    fn every_failure_lies_in_one_outage_or_is_counted_apart() {
        // Many shapes of slots (a fixed pseudo-random walk): each outage's failures are those of
        // its own slots, no slot is in two, and with those apart they add up to the test's.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..300 {
            let len = 5 + next(60) as usize;
            let slots: Vec<(u64, u64, u64, u64)> = (0..len)
                .map(|_| {
                    let completed = if next(3) == 0 { 0 } else { next(100) };
                    let lost = if next(4) == 0 { next(20) } else { 0 };
                    (completed, lost, next(2) * next(3), 0)
                })
                .collect();
            let mut t = timeline(&slots);
            if next(2) == 0 {
                let i = next(len as u64) as usize;
                t.second_mut(i / SLOTS).slots[i % SLOTS].waited_ns = next(4_000) * 1_000_000;
            }
            let unanswered = next(2) * 5;
            let o = outages(&t, SLOT * len as u32, unanswered);
            let seconds: Vec<_> = t.seconds.iter().map(|s| s.slots).collect();
            let failed = |r: std::ops::Range<usize>| -> u64 {
                r.map(|i| seconds.get(i / SLOTS).map_or(0, |s| s[i % SLOTS].failed))
                    .sum()
            };
            for w in o.windows(2) {
                assert!(w[0].end_slot <= w[1].start_slot, "round {round}: {o:?}");
            }
            for one in &o {
                assert_eq!(one.failed, failed(one.start_slot..one.end_slot), "{round}");
            }
            let in_outages: u64 = o.iter().map(|one| one.failed).sum();
            assert_eq!(
                in_outages + failed_apart(&seconds, &o),
                failed(0..len),
                "{round}"
            );
        }
    }

    #[test]
    fn node_outages_merge_to_the_widest_span() {
        let s = |a: u64, b: Option<u64>| NodeOutage {
            start: Duration::from_millis(a),
            end: b.map(Duration::from_millis),
        };
        let m = NodeOutage::merged(Some(s(200, Some(900))), Some(s(100, Some(700))));
        assert_eq!(m, Some(s(100, Some(900))));
        let open = NodeOutage::merged(m, Some(s(300, None)));
        assert_eq!(open, Some(s(100, None)));
        assert_eq!(NodeOutage::merged(None, open), open);
        assert_eq!(
            s(100, None).duration(Duration::from_secs(1)),
            Duration::from_millis(900)
        );
    }

    #[test]
    fn losses_among_completions_are_not_an_outage() {
        // A server at maxclients: some connections refused every slot, the others served.
        let slots = vec![(100, 2, 2, 0); 30];
        assert!(outages(&timeline(&slots), Duration::from_secs(3), 0).is_empty());
    }

    #[test]
    fn a_stall_until_the_end_is_an_outage_only_with_requests_unanswered() {
        let mut slots = vec![(100, 0, 0, 0); 10];
        slots.extend(vec![(0, 0, 0, 0); 20]);
        let t = timeline(&slots);
        let o = outages(&t, Duration::from_secs(3), 7);
        assert_eq!(o.len(), 1, "{o:?}");
        assert!(o[0].until_end);
        assert_eq!((o[0].start_slot, o[0].end_slot), (10, 30));
        assert!(outages(&t, Duration::from_secs(3), 0).is_empty());
    }

    #[test]
    fn a_stall_its_late_replies_waited_through_is_an_outage() {
        // A 2 s partition without --timeout: nothing lost, the requests answered late.
        let mut slots = vec![(100, 0, 0, 0); 10];
        slots.extend(vec![(0, 0, 0, 0); 20]);
        slots.extend(vec![(100, 0, 0, 0); 10]);
        let mut t = timeline(&slots);
        let waited = |t: &mut Timeline, ms: u64| {
            t.second_mut(3).slots[0].waited_ns = ms * 1_000_000;
        };
        waited(&mut t, 2_480);
        let o = outages(&t, Duration::from_secs(4), 0);
        assert_eq!(o.len(), 1, "{o:?}");
        // Counted from the end of slot 30 back 2.4 s: slot 7 is before the stall, so 10.
        assert_eq!((o[0].start_slot, o[0].end_slot, o[0].lost), (10, 30, 0));
        assert!(!o[0].until_end);
        // Replies that waited through only part of it: from where they were sent.
        waited(&mut t, 1_550);
        let o = outages(&t, Duration::from_secs(4), 0);
        assert_eq!((o[0].start_slot, o[0].end_slot), (16, 30));
        // A quiet spell (a slow --rps: the replies after it were quick) is no outage, nor is a
        // wait shorter than a second.
        for ms in [1, 900] {
            waited(&mut t, ms);
            assert!(outages(&t, Duration::from_secs(4), 0).is_empty(), "{ms} ms");
        }
    }

    #[test]
    fn the_test_time_past_the_last_second_counts() {
        // Frozen from 0.5 s on; the timeline has one second, the test lasted 3 s.
        let mut slots = vec![(100, 0, 0, 0); 5];
        slots.extend(vec![(0, 0, 0, 0); 5]);
        let o = outages(&timeline(&slots), Duration::from_secs(3), 10);
        assert_eq!((o[0].start_slot, o[0].end_slot), (5, 30));
    }
}
