//! A sub-second test judged from its 100 ms slots.
//!
//! Why: a test shorter than a second has no steady-state server figure (the server is sampled
//! once a second, so its CPU is the whole test's, start-up and wind-down included), and its
//! whole-test client figures mix connecting and the last replies' trickle into the load. Each
//! respbench worker reads its own CPU and run-queue wait at every slot's end, and the sampled
//! client delays are counted per slot, so a test of 0.82 s has six to eight slots each judged
//! on its own. The slots give what one whole-test figure cannot: how much the judgement would
//! move from one tenth of a second to the next. The test's verdict is the slots' verdict when at
//! least [`AGREE_PCT`] of at least [`MIN_SLOTS`] slots agree on it, said as "k of n slots" (the
//! uncertainty few slots leave); otherwise "can't tell", naming how the slots split. A worker
//! reads its clocks when a reply crosses a slot's end, so a test of very slow commands (a reply
//! every few hundred milliseconds) has too few slots with figures: it is judged from the whole
//! test's figures, and the reason says so.
//!
//! Rules: the server's figures and the machine's (pressure, steal, other processes) are the
//! whole test's in every slot: they are not measured per slot, and the reason says so.

use super::{Judged, MachineLoad, ServerCpu, Verdict, VerdictInput, decide, reason_over};

/// A test shorter than this (seconds) is judged from its slots: it has no full one-second
/// server interval, so no steady-state server figure.
pub const UNDER_SECONDS: f64 = 1.0;

/// Fewer slots with figures than this: can't tell. Three is the fewest where one odd slot (the
/// first full one after connecting, a scheduler hiccup) cannot decide alone.
pub const MIN_SLOTS: usize = 3;

/// The share of the slots (percent) that must agree: two thirds, so that with three slots one
/// may disagree, and an even split between two verdicts is never called either.
pub const AGREE_PCT: f64 = 66.0;

/// One slot's respbench figures (what `metrics::Slot` measured).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SlotFigures {
    /// The busiest worker's CPU in the slot, percent of one core.
    pub client_cpu_pct: f64,
    /// The longest run-queue wait of a worker, percent of the slot (`None`: not measured).
    pub runqueue_pct: Option<f64>,
    /// The slot's average sampled client delay, µs (`None`: no sample in it).
    pub client_delay_us: Option<f64>,
}

/// What the slots were judged against: everything but the per-slot client figures.
#[derive(Clone, Copy, Debug)]
pub struct WholeTest<'a> {
    pub servers: &'a [ServerCpu],
    /// Each worker's CPU over the whole test: kept in the record's figures.
    pub client_threads_pct: Option<&'a [f64]>,
    pub rate: Option<(f64, f64)>,
    pub seconds: f64,
    pub machine: MachineLoad,
}

/// Judges a test from its slots (see the module comment).
pub fn judge(whole: &WholeTest, slots: &[SlotFigures]) -> Judged {
    let busiest =
        |f: fn(&ServerCpu) -> Option<f64>| whole.servers.iter().filter_map(f).reduce(f64::max);
    let server_cpu_pct = busiest(ServerCpu::judged_pct);
    let server_busy_pct = busiest(|s| s.busy_pct);
    let figures = |v: Verdict, reason: String| Judged {
        verdict: v,
        reason,
        server_cpu_pct,
        server_busy_pct,
        client_max_thread_cpu_pct: whole
            .client_threads_pct
            .and_then(|t| t.iter().copied().reduce(f64::max)),
    };
    if slots.len() < MIN_SLOTS {
        return too_few_slots(whole, slots.len());
    }
    let inputs: Vec<(f64, VerdictInput)> = slots
        .iter()
        .map(|s| {
            let machine = MachineLoad {
                client_runqueue_pct: s.runqueue_pct.or(whole.machine.client_runqueue_pct),
                ..whole.machine
            };
            let input = VerdictInput {
                server_cpu_pct,
                server_busy_pct,
                client_threads_pct: None,
                rate: whole.rate,
                seconds: whole.seconds,
                machine,
            };
            (s.client_cpu_pct, input)
        })
        .collect();
    let verdicts: Vec<Verdict> = inputs
        .iter()
        .map(|(cpu, i)| {
            decide(&VerdictInput {
                client_threads_pct: Some(std::slice::from_ref(cpu)),
                ..i.clone()
            })
        })
        .collect();
    let tally = tally(&verdicts);
    let (top, agree) = tally[0];
    let n = slots.len();
    let summary = summary(slots);
    if (agree as f64) * 100.0 < AGREE_PCT * n as f64 {
        let split: Vec<String> = tally
            .iter()
            .map(|(v, k)| format!("{k} {}", v.name()))
            .collect();
        return figures(
            Verdict::CantTell,
            format!(
                "can't tell: the {n} 100 ms slots disagree ({}); {summary}",
                split.join(", ")
            ),
        );
    }
    // The reason's figure from the agreeing slot with the median client CPU.
    let mut agreeing: Vec<usize> = (0..n).filter(|&i| verdicts[i] == top).collect();
    agreeing.sort_by(|&a, &b| slots[a].client_cpu_pct.total_cmp(&slots[b].client_cpu_pct));
    let (cpu, input) = &inputs[agreeing[agreeing.len() / 2]];
    let median = VerdictInput {
        client_threads_pct: Some(std::slice::from_ref(cpu)),
        ..input.clone()
    };
    figures(
        top,
        format!(
            "{}; in {agree} of {n} 100 ms slots: {summary}",
            reason_over(&median, top, "its median slot")
        ),
    )
}

/// A test with fewer than [`MIN_SLOTS`] slots (`slots` of them): judged from the whole test's
/// figures, which for the server are all there is anyway, and the reason says why.
fn too_few_slots(whole: &WholeTest, slots: usize) -> Judged {
    // A test too short for three full slots after the first, or too few replies to cross
    // the slots' ends (a slow command): the whole test's figures, which for the server are
    // all there is anyway, and the reason says why.
    let why = if full_slots(whole.seconds) < MIN_SLOTS {
        format!(
            "the test lasted {:.0} ms, too short to judge 100 ms at a time, which needs {} ms \
             (respbench's CPU is measured from one 100 ms mark to the next, starting at the \
             first, and a judgement needs {MIN_SLOTS} such slots); a test of 1 s or more (a \
             larger -n, or --duration) gets a firmer verdict",
            whole.seconds * 1e3,
            (MIN_SLOTS + 1) * 100
        )
    } else {
        format!(
            "too few replies to judge it 100 ms at a time (respbench measures its CPU when \
             a reply arrives after a 100 ms mark, and slow commands gave {} such slot{} of \
             the {MIN_SLOTS} needed)",
            slots,
            if slots == 1 { "" } else { "s" }
        )
    };
    let mut j = super::judge(
        whole.servers,
        whole.client_threads_pct,
        whole.rate,
        whole.seconds,
        whole.machine,
    );
    if whole.seconds < super::MIN_SECONDS {
        // Under one slot: "can't tell", whose reason already says why and what to do.
        return j;
    }
    j.reason = format!(
        "{}; judged from the whole test's figures, which are less certain: {why}",
        j.reason
    );
    j
}

/// The slots a test of `seconds` can have figures for: its whole 100 ms slots but the first
/// (a worker's clocks start when it first crosses a slot's end).
fn full_slots(seconds: f64) -> usize {
    ((seconds * 10.0 + 1e-9).floor() as usize).saturating_sub(1)
}

/// Each verdict with its count, most frequent first (ties in [`Verdict::ALL`]'s order).
fn tally(verdicts: &[Verdict]) -> Vec<(Verdict, usize)> {
    let mut t: Vec<(Verdict, usize)> = Verdict::ALL
        .iter()
        .map(|&v| (v, verdicts.iter().filter(|&&x| x == v).count()))
        .filter(|&(_, k)| k > 0)
        .collect();
    t.sort_by_key(|&(_, k)| std::cmp::Reverse(k));
    t
}

/// The slots' client figures as ranges: what the verdict read, and how much it moved.
fn summary(slots: &[SlotFigures]) -> String {
    let range = |vals: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        (lo <= hi).then_some((lo, hi))
    };
    let mut out = String::new();
    if let Some((lo, hi)) = range(&mut slots.iter().map(|s| s.client_cpu_pct)) {
        out += &format!("busiest respbench thread {lo:.0}–{hi:.0}% of a core");
    }
    if let Some((lo, hi)) = range(&mut slots.iter().filter_map(|s| s.runqueue_pct)) {
        out += &format!(", run-queue wait {lo:.0}–{hi:.0}%");
    }
    if let Some((lo, hi)) = range(&mut slots.iter().filter_map(|s| s.client_delay_us)) {
        out += &format!(", client delay {lo:.0}–{hi:.0} µs");
    }
    out + " (the server's and the machine's figures are the whole test's)"
}

#[cfg(test)]
mod tests {
    use super::super::OwnDemand;
    use super::super::tests::IDLE;
    use super::*;

    fn slot(cpu: f64, runqueue: f64, delay: f64) -> SlotFigures {
        SlotFigures {
            client_cpu_pct: cpu,
            runqueue_pct: Some(runqueue),
            client_delay_us: Some(delay),
        }
    }

    fn server(cpu: f64, busy: f64) -> [ServerCpu; 1] {
        [ServerCpu {
            main_thread_pct: Some(cpu),
            process_pct: Some(cpu),
            busy_pct: Some(busy),
            ..ServerCpu::default()
        }]
    }

    fn whole<'a>(servers: &'a [ServerCpu], machine: MachineLoad) -> WholeTest<'a> {
        WholeTest {
            servers,
            client_threads_pct: Some(&[22.7]),
            rate: None,
            seconds: 0.71,
            machine,
        }
    }

    /// Recorded: `-t ping_inline -n 20000` against Valkey 9.1 on loopback, 2 cores at load 14
    /// (eight builds running), debug build: the 0.71 s test's six slots with figures, and its
    /// whole-test machine.
    fn ping_inline_on_a_busy_machine() -> ([ServerCpu; 1], MachineLoad, [SlotFigures; 6]) {
        let machine = MachineLoad {
            client_runqueue_pct: Some(47.2),
            cpu_pressure_some_pct: Some(100.0),
            steal_pct: Some(0.0),
            others_pct: Some(161.7),
            machine_busy_pct: Some(100.0),
            own: OwnDemand {
                runqueue_sum_pct: Some(47.2),
                respbench_cpu_pct: Some(19.2),
                local_server_cpu_pct: 19.2,
                cores: 2,
                respbench_cores: 2,
            },
        };
        let slots = [
            slot(22.4, 50.3, 801.4),
            slot(11.8, 39.1, 1710.0),
            slot(13.7, 47.1, 717.9),
            slot(30.1, 43.5, 772.0),
            slot(27.0, 52.2, 655.4),
            slot(29.3, 42.1, 601.0),
        ];
        (server(19.2, 0.13), machine, slots)
    }

    #[test]
    fn ping_inline_under_a_second_is_judged_from_its_slots() {
        let (s, machine, slots) = ping_inline_on_a_busy_machine();
        let j = judge(&whole(&s, machine), &slots);
        assert_eq!(j.verdict, Verdict::MachineBusy, "{}", j.reason);
        assert!(
            j.reason.contains(
                "a respbench thread waited for a CPU 52% of its median slot; in 6 of 6 100 ms \
                 slots: busiest respbench thread 12–30% of a core, run-queue wait 39–52%, \
                 client delay 601–1710 µs (the server's and the machine's figures are the \
                 whole test's)"
            ),
            "{}",
            j.reason
        );
        assert_eq!(j.server_cpu_pct, Some(19.2));
        assert_eq!(j.client_max_thread_cpu_pct, Some(22.7), "the whole test's");
        // The same slots with the server saturated over the test: server-bound in every slot.
        let busy = server(97.0, 40.0);
        let j = judge(&whole(&busy, machine), &slots);
        assert_eq!(j.verdict, Verdict::ServerBound, "{}", j.reason);
        assert!(j.reason.contains("in 6 of 6 100 ms slots"), "{}", j.reason);
    }

    #[test]
    fn slots_that_split_are_cant_tell_naming_the_split() {
        // The recorded slots on a machine whose pressure and total CPU were low (others' CPU
        // still explains the waits): each slot's run-queue wait decides it. With two slots'
        // waits made small, it stays machine-busy in 4 of 6.
        let (s, busy, mut slots) = ping_inline_on_a_busy_machine();
        let machine = MachineLoad {
            others_pct: busy.others_pct,
            own: busy.own,
            ..IDLE
        };
        slots[0].runqueue_pct = Some(2.0);
        slots[1].runqueue_pct = Some(3.0);
        let j = judge(&whole(&s, machine), &slots);
        assert_eq!(j.verdict, Verdict::MachineBusy, "{}", j.reason);
        assert!(j.reason.contains("in 4 of 6"), "{}", j.reason);
        // A third quiet slot: 3 of 6 is an even split, never called either way.
        slots[2].runqueue_pct = Some(1.0);
        let j = judge(&whole(&s, machine), &slots);
        assert_eq!(j.verdict, Verdict::CantTell);
        assert!(
            j.reason.starts_with(
                "can't tell: the 6 100 ms slots disagree (3 machine-busy, 3 neither); busiest \
                 respbench thread 12–30% of a core, run-queue wait 1–52%"
            ),
            "{}",
            j.reason
        );
        // Two of three agreeing is enough.
        let j = judge(&whole(&s, machine), &slots[1..4]);
        assert_eq!(j.verdict, Verdict::Neither, "{}", j.reason);
        assert!(j.reason.contains("in 2 of 3"), "{}", j.reason);
    }

    #[test]
    fn a_busy_thread_in_most_slots_is_client_bound() {
        let s = server(60.0, 20.0);
        let slots = [
            slot(95.0, 0.5, 90.0),
            slot(93.0, 0.4, 80.0),
            slot(97.0, 0.6, 85.0),
            slot(60.0, 0.5, 12.0),
        ];
        let j = judge(&whole(&s, IDLE), &slots);
        assert_eq!(j.verdict, Verdict::ClientBound, "{}", j.reason);
        assert!(j.reason.contains("in 3 of 4"), "{}", j.reason);
    }

    #[test]
    fn too_few_slots_fall_back_to_the_whole_test_and_say_so() {
        // Recorded: an EVAL loop of ~500 ms per call against Valkey 9.1 (-c 4, 1.01 s; here
        // as if 0.71 s): one slot had figures, the server executed commands 84% of the time.
        let s = server(6.4, 83.9);
        let j = judge(&whole(&s, IDLE), &[slot(0.1, 2.3, 0.0)]);
        assert_eq!(j.verdict, Verdict::Neither, "{}", j.reason);
        assert!(
            j.reason.ends_with(
                "; judged from the whole test's figures, which are less certain: too few replies \
                 to judge it 100 ms at a time (respbench measures its CPU when a reply arrives \
                 after a 100 ms mark, and slow commands gave 1 such slot of the 3 needed)"
            ),
            "{}",
            j.reason
        );
        // Recorded: the quick start's LPOP (-n 20000, Valkey 9.1, load 14) lasted 0.26 s.
        let short = WholeTest {
            seconds: 0.26,
            ..whole(&s, IDLE)
        };
        let j = judge(&short, &[slot(35.0, 36.0, 300.0)]);
        assert!(
            j.reason.ends_with(
                "; judged from the whole test's figures, which are less certain: the test lasted \
                 260 ms, too short to judge 100 ms at a time, which needs 400 ms (respbench's CPU \
                 is measured from one 100 ms mark to the next, starting at the first, and a \
                 judgement needs 3 such slots); a test of 1 s or more (a larger -n, or \
                 --duration) gets a firmer verdict"
            ),
            "{}",
            j.reason
        );
        // Under one slot: "can't tell", said once (the quick start's INCR at -n 5000, 90 ms).
        let tiny = WholeTest {
            seconds: 0.09,
            ..whole(&s, IDLE)
        };
        let j = judge(&tiny, &[]);
        assert_eq!(j.verdict, Verdict::CantTell);
        assert!(
            j.reason.starts_with("can't tell: the test lasted 90 ms")
                && !j.reason.contains("whole test's figures"),
            "{}",
            j.reason
        );
        assert_eq!(
            (full_slots(0.3), full_slots(0.4), full_slots(0.05)),
            (2, 3, 0)
        );
        let saturated = server(6.4, 95.0);
        let j = judge(&whole(&saturated, IDLE), &[]);
        assert_eq!(j.verdict, Verdict::ServerBound, "{}", j.reason);
        assert_eq!(j.server_busy_pct, Some(95.0));
    }

    #[test]
    fn a_slot_without_its_own_run_queue_figure_uses_the_whole_tests() {
        let s = server(50.0, 10.0);
        let starved = MachineLoad {
            client_runqueue_pct: Some(40.0),
            others_pct: Some(90.0),
            ..IDLE
        };
        let no_rq = SlotFigures {
            client_cpu_pct: 40.0,
            runqueue_pct: None,
            client_delay_us: None,
        };
        let j = judge(&whole(&s, starved), &[no_rq; 3]);
        assert_eq!(j.verdict, Verdict::MachineBusy, "{}", j.reason);
        assert!(
            j.reason.ends_with(
                "busiest respbench thread 40–40% of a core (the server's and the machine's \
                 figures are the whole test's)"
            ),
            "no run-queue or delay range without figures: {}",
            j.reason
        );
    }
}
