//! What limited a test: the server, respbench itself, both, the machine, or neither.
//!
//! Owns: the decision from CPU and machine figures to a [`Verdict`], its thresholds and the
//! sentence that names the deciding figure (the workers' own CPU and run-queue wait are read by
//! `metrics::thread_cpu`, the machine's load by `machine`).
//! Must not: measure the server or the machine, or format output beyond the reason's sentence.
//!
//! Why CPU: a Redis-protocol server executes commands on one main thread, so a server that keeps
//! that thread near a full core cannot go faster whatever the client does; likewise a respbench
//! worker thread near a full core cannot send faster, and then the figures describe respbench, not
//! the server. Why the machine: on a shared machine a thread can be far from a full core because
//! it waited for a CPU, not because it had nothing to do; without looking at the machine such a
//! test reads "latency bound, raise -c" when raising -c would change nothing. So `neither` is
//! said only when both sides have measured headroom and the machine was measured not busy.
//! The machine's waiting figures are read net of the benchmark's own demand (`own`): threads
//! beyond the cores wait for each other, and that is not someone else's load.

mod own;
pub mod slots;

pub use own::OwnDemand;

/// A thread counts as "near a full core" from this share of one core (percent). CPU readings
/// over a second wobble by a few percent (scheduler ticks, the sampling instant), and a saturated
/// event loop still spends a little time blocked in `epoll_wait` between bursts, so a saturated
/// thread reads 92–100%; 90% leaves room for that without calling a thread at 80% saturated.
pub const NEAR_FULL_CORE_PCT: f64 = 90.0;

/// When one side is near a full core and the other at least this close (percent of a core), the
/// test is "both near saturation": with both sides within the readings' wobble of their limit,
/// naming one flips from run to run (server 98%/client 88% then 98%/91%), and either side
/// freed would hit the other's limit soon after.
pub const BOTH_NEAR_PCT: f64 = 80.0;

/// A test shorter than this (its measured phase, seconds) is "can't tell": under one 100 ms
/// timeline slot, CPU figures are a handful of scheduler ticks and thread start-up. A test
/// shorter than [`slots::UNDER_SECONDS`] is judged from its slots (`slots`), longer ones from
/// the whole test's figures.
pub const MIN_SECONDS: f64 = 0.1;

/// With `--rps`, the rate counts as met from this share of the target (percent): the schedule's
/// last slots and the final replies make the achieved rate read slightly under the target.
pub const RATE_MET_PCT: f64 = 95.0;

/// A respbench thread that waited for a CPU this share of the test's wall time (percent) was
/// starved by the machine: an idle machine keeps run-queue waits well under 1%, so 10% is far
/// from noise and already costs the thread a tenth of its time.
pub const STARVED_PCT: f64 = 10.0;

/// CPU pressure (`/proc/pressure/cpu` "some": a runnable task waited) over this share of the
/// test (percent): the machine had more work than CPUs, for the server, respbench or both.
pub const PRESSURE_PCT: f64 = 20.0;

/// Steal time over this share of all CPUs' time (percent): a hypervisor took the CPUs often
/// enough to matter.
pub const STEAL_PCT: f64 = 5.0;

/// Other processes' CPU (percent of one core) that counts as competing, when the machine's CPUs
/// were also at least [`MACHINE_FULL_PCT`] busy: with idle CPUs to spare, others' work takes
/// nothing from the server or respbench.
pub const OTHERS_PCT: f64 = 25.0;

/// All CPUs together this busy (percent of the machine's capacity) counts as full.
pub const MACHINE_FULL_PCT: f64 = 90.0;

/// What limited a test's throughput. Its serde names are the record's `verdict.kind` (the same
/// as [`Verdict::name`]; a test checks they agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The server was saturated (its main thread near a full core, or executing the test's
    /// commands nearly all the time) while respbench's threads had headroom.
    ServerBound,
    /// A respbench worker thread was near a full core: more `--threads` would help, and the
    /// figures describe respbench rather than the server.
    ClientBound,
    /// One side near a full core and the other within [`BOTH_NEAR_PCT`] of one.
    BothNearSaturation,
    /// Neither side near a full core, but the machine was busy: a respbench thread waited for a
    /// CPU, CPU pressure, steal, or other processes on a full machine (the reason has the figure).
    MachineBusy,
    /// Both sides measured with headroom on a machine measured not busy: latency bound; more
    /// `-c` or `-P` would raise throughput.
    Neither,
    /// `--rps` was reached: the user set the throughput, nothing else limited it.
    RateLimited,
    /// A figure the decision needs is missing or too noisy (the reason names it).
    CantTell,
    /// What a record without a verdict, or with a kind this build does not know, reads as.
    #[default]
    #[serde(other)]
    Unknown,
}

impl Verdict {
    /// Every kind, in the order the docs list them.
    pub const ALL: [Verdict; 8] = [
        Verdict::ServerBound,
        Verdict::ClientBound,
        Verdict::BothNearSaturation,
        Verdict::MachineBusy,
        Verdict::Neither,
        Verdict::RateLimited,
        Verdict::CantTell,
        Verdict::Unknown,
    ];

    /// The name used in the JSON record and the report.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::ServerBound => "server-bound",
            Verdict::ClientBound => "client-bound",
            Verdict::BothNearSaturation => "both-near-saturation",
            Verdict::MachineBusy => "machine-busy",
            Verdict::Neither => "neither",
            Verdict::RateLimited => "rate-limited",
            Verdict::CantTell => "cant-tell",
            Verdict::Unknown => "unknown",
        }
    }

    /// One sentence for the report: what it means for the user (the record's `reason` adds the
    /// deciding figure to it).
    pub fn advice(self) -> &'static str {
        match self {
            Verdict::ServerBound => {
                "the server was saturated: its main thread near a full core, or executing \
                 commands nearly all the time"
            }
            Verdict::ClientBound => {
                "a respbench thread was near a full core: the figures describe respbench, not \
                 the server; try more --threads"
            }
            Verdict::BothNearSaturation => {
                "the server and respbench were both near a full core: freeing either would soon \
                 hit the other's limit"
            }
            Verdict::MachineBusy => {
                "the machine was busy: the server or respbench waited for a CPU, so neither \
                 side's limit was measured; more -c or -P would not help"
            }
            Verdict::Neither => {
                "neither side was near a full core and the machine was not busy: latency bound; \
                 more -c or -P would raise throughput"
            }
            Verdict::RateLimited => "the --rps target was reached",
            Verdict::CantTell => "can't tell",
            Verdict::Unknown => "no verdict recorded",
        }
    }
}

/// How busy the machine was over a test, as the verdict reads it. Every figure is optional: a
/// missing one is not zero (see `machine`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineLoad {
    /// The respbench worker that waited longest for a CPU, percent of the test's wall time.
    pub client_runqueue_pct: Option<f64>,
    /// `/proc/pressure/cpu` "some" over the test, percent of wall time.
    pub cpu_pressure_some_pct: Option<f64>,
    /// Steal, percent of all CPUs' time.
    pub steal_pct: Option<f64>,
    /// Other processes' CPU (not respbench, not the server), percent of one core; only when the
    /// server is on this machine.
    pub others_pct: Option<f64>,
    /// All CPUs together, percent of the machine's capacity.
    pub machine_busy_pct: Option<f64>,
    /// The benchmark's own demand, whose share of the run-queue wait and CPU pressure is
    /// discounted before judging ([`OwnDemand`]).
    pub own: OwnDemand,
}

impl MachineLoad {
    /// The first figure that shows a busy machine, as a phrase for the reason; `None` when none
    /// does.
    pub fn busy_figure(&self) -> Option<String> {
        self.busy_figure_over("the test")
    }

    /// [`MachineLoad::busy_figure`] with the run-queue wait said as a share of `span` (the
    /// test, or one of its slots: `slots`).
    pub fn busy_figure_over(&self, span: &str) -> Option<String> {
        let over = |p: Option<f64>, limit: f64| p.filter(|&p| p >= limit);
        let own = self.own.own_wait_pct();
        let net = if own > 0.0 {
            format!(
                " (net of respbench's own threads, which with the server wanted {own:.0}% of a \
                 core more than the CPUs they may run on)"
            )
        } else {
            String::new()
        };
        // A pinned respbench waited for its own cores, not the machine's: the reader needs that
        // to place the hog (`taskset -c 1 respbench`: a hog on CPU 1 starves it with CPU 0 idle).
        let pinned = if self.own.pinned() {
            format!(
                " (respbench may run on {} of the machine's {} cores)",
                self.own.respbench_cores, self.own.cores
            )
        } else {
            String::new()
        };
        // A task waits only for a CPU something else holds, so what other processes took (and
        // the hypervisor's steal) bounds the wait they can have caused, respbench's and the
        // server's alike; the rest was respbench's threads and its local server crowding each
        // other (pinned to one core, or over-subscribing the cores). `others_pct` is known only
        // with the server on this machine.
        let others_bound = self
            .others_pct
            .map(|o| o + self.steal_pct.unwrap_or(0.0) * self.own.cores.max(1) as f64);
        let bounded = |p: f64| others_bound.map_or(p, |b| p.min(b));
        let runqueue = self
            .client_runqueue_pct
            .map(|w| bounded(self.own.others_runqueue_pct(w)));
        if let Some(w) = over(runqueue, STARVED_PCT) {
            return Some(format!(
                "a respbench thread waited for a CPU {w:.0}% of {span}{net}{pinned}"
            ));
        }
        if let Some(s) = over(self.steal_pct, STEAL_PCT) {
            return Some(format!("steal {s:.0}% of the CPUs' time"));
        }
        if let (Some(o), Some(m)) = (
            over(self.others_pct, OTHERS_PCT),
            over(self.machine_busy_pct, MACHINE_FULL_PCT),
        ) {
            return Some(format!(
                "other processes took {o:.0}% of a core with the CPUs {m:.0}% busy"
            ));
        }
        // The pressure is said as measured; it counts only as far as others can have caused it.
        let pressure = self
            .cpu_pressure_some_pct
            .filter(|&p| bounded(self.own.others_pressure_pct(p)) >= PRESSURE_PCT);
        pressure.map(|p| format!("CPU pressure {p:.0}% (some task waited for a CPU)"))
    }

    /// Whether any figure that can show a busy machine was measured (a machine with none of
    /// them cannot be called not busy).
    fn measured(&self) -> bool {
        self.client_runqueue_pct.is_some()
            || self.cpu_pressure_some_pct.is_some()
            || self.steal_pct.is_some()
    }
}

/// The figures a verdict is drawn from. Percentages are of one core.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VerdictInput<'a> {
    /// The server's busiest single-thread figure: its main thread's CPU when the server reports
    /// it (with io-threads the process figure adds the I/O threads and would overstate how close
    /// the command thread is to its limit), else the whole process. `None`: no server figures
    /// (e.g. `INFO` refused or `--no-server-stats`). In cluster mode, the busiest node.
    pub server_cpu_pct: Option<f64>,
    /// The share of wall time the server spent executing the test's commands (`INFO
    /// commandstats` Δusec over the test's wall time), percent; busiest node. Where other
    /// processes take CPU from the server, its CPU reads low while it still never idles: this
    /// figure still shows the saturation. It leaves out reading, parsing and writing, so it can
    /// only understate the server's load (no false "server-bound").
    pub server_busy_pct: Option<f64>,
    /// Each respbench worker thread's CPU over the test; `None` when not measured.
    pub client_threads_pct: Option<&'a [f64]>,
    /// `--rps` target and achieved throughput, if a target was set.
    pub rate: Option<(f64, f64)>,
    /// How long the measured phase lasted (seconds); under [`MIN_SECONDS`]: can't tell.
    pub seconds: f64,
    /// The machine over the test.
    pub machine: MachineLoad,
}

impl VerdictInput<'_> {
    /// The server's load: the larger of its CPU and its command-busy share.
    fn server_load(&self) -> Option<f64> {
        match (self.server_cpu_pct, self.server_busy_pct) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// The busiest respbench thread.
    fn client_load(&self) -> Option<f64> {
        self.client_threads_pct
            .and_then(|t| t.iter().copied().reduce(f64::max))
    }
}

/// One watched server's CPU figures over a test (percent of one core), as the record keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerCpu {
    /// The limiting CPU (main thread where reported) over the full one-second intervals only,
    /// without the cut-short last one; `None` for a test shorter than a second.
    pub steady_pct: Option<f64>,
    /// The main thread over the whole test, where the server reports it.
    pub main_thread_pct: Option<f64>,
    /// The whole process over the whole test.
    pub process_pct: Option<f64>,
    /// The share of wall time spent executing the test's commands (see
    /// [`VerdictInput::server_busy_pct`]).
    pub busy_pct: Option<f64>,
}

impl ServerCpu {
    /// The figure a server is judged by: its steady state where the test lasted a full second
    /// (the winding-down last interval would understate a saturated server), else its main
    /// thread over the whole test (see [`VerdictInput::server_cpu_pct`]), else the process.
    pub fn judged_pct(&self) -> Option<f64> {
        self.steady_pct
            .or(self.main_thread_pct)
            .or(self.process_pct)
    }
}

/// A verdict and the figures it was drawn from, for the record and the report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    /// The advice with the deciding figure (a busy machine's, or the one a "can't tell" lacks).
    pub reason: String,
    /// The busiest server's [`ServerCpu::judged_pct`].
    pub server_cpu_pct: Option<f64>,
    /// The busiest server's `busy_pct`.
    pub server_busy_pct: Option<f64>,
    /// The busiest respbench thread.
    pub client_max_thread_cpu_pct: Option<f64>,
}

/// Judges a test from every watched server's figures (cluster mode: the busiest node decides),
/// each respbench thread's CPU, the `--rps` target and achieved rate, the measured seconds and
/// the machine's load.
pub fn judge(
    servers: &[ServerCpu],
    client_threads_pct: Option<&[f64]>,
    rate: Option<(f64, f64)>,
    seconds: f64,
    machine: MachineLoad,
) -> Judged {
    let busiest = |f: fn(&ServerCpu) -> Option<f64>| servers.iter().filter_map(f).reduce(f64::max);
    let input = VerdictInput {
        server_cpu_pct: busiest(ServerCpu::judged_pct),
        server_busy_pct: busiest(|s| s.busy_pct),
        client_threads_pct,
        rate,
        seconds,
        machine,
    };
    let verdict = decide(&input);
    Judged {
        verdict,
        reason: reason(&input, verdict),
        server_cpu_pct: input.server_cpu_pct,
        server_busy_pct: input.server_busy_pct,
        client_max_thread_cpu_pct: input.client_load(),
    }
}

/// Decides what limited a test, in this order:
/// 1. a test under [`MIN_SECONDS`] → can't tell;
/// 2. one side at or above [`NEAR_FULL_CORE_PCT`] and the other at or above [`BOTH_NEAR_PCT`]
///    → both near saturation;
/// 3. a client thread near a full core → client-bound (the figures are then respbench's);
/// 4. the server's CPU, or its command-busy share, near a full core → server-bound;
/// 5. an `--rps` target reached to [`RATE_MET_PCT`] → rate-limited;
/// 6. a busy machine ([`MachineLoad::busy_figure`]) → machine busy;
/// 7. both sides' CPU known and the machine measured → neither;
/// 8. otherwise can't tell.
pub fn decide(input: &VerdictInput) -> Verdict {
    if input.seconds < MIN_SECONDS {
        return Verdict::CantTell;
    }
    let (server, client) = (input.server_load(), input.client_load());
    let at = |p: Option<f64>, limit: f64| p.is_some_and(|p| p >= limit);
    let (server_full, client_full) = (
        at(server, NEAR_FULL_CORE_PCT),
        at(client, NEAR_FULL_CORE_PCT),
    );
    if (server_full && at(client, BOTH_NEAR_PCT)) || (client_full && at(server, BOTH_NEAR_PCT)) {
        return Verdict::BothNearSaturation;
    }
    if client_full {
        return Verdict::ClientBound;
    }
    if server_full {
        return Verdict::ServerBound;
    }
    if let Some((target, achieved)) = input.rate
        && target > 0.0
        && achieved * 100.0 >= target * RATE_MET_PCT
    {
        return Verdict::RateLimited;
    }
    if input.machine.busy_figure().is_some() {
        return Verdict::MachineBusy;
    }
    if server.is_some() && client.is_some() && input.machine.measured() {
        Verdict::Neither
    } else {
        Verdict::CantTell
    }
}

/// The record's and the report's sentence: the advice, and the figure that decided (a busy
/// machine's) or that is missing (can't tell).
pub fn reason(input: &VerdictInput, verdict: Verdict) -> String {
    reason_over(input, verdict, "the test")
}

/// [`reason`] with a busy machine's run-queue figure said as a share of `span`.
pub fn reason_over(input: &VerdictInput, verdict: Verdict, span: &str) -> String {
    match verdict {
        Verdict::MachineBusy => format!(
            "{}: {}",
            verdict.advice(),
            input.machine.busy_figure_over(span).unwrap_or_default()
        ),
        Verdict::CantTell => format!("can't tell: {}", missing(input)),
        v => v.advice().to_string(),
    }
}

/// What a "can't tell" lacks, first missing figure first.
fn missing(input: &VerdictInput) -> String {
    if input.seconds < MIN_SECONDS {
        format!(
            "the test lasted {:.0} ms, under one 100 ms slot, and CPU figures that short are \
             noise; a test of 1 s or more (a larger -n, or --duration) gets a verdict",
            input.seconds * 1e3
        )
    } else if input.server_load().is_none() {
        "no server CPU figures (INFO refused or --no-server-stats)".into()
    } else if input.client_load().is_none() {
        "respbench's thread CPU was not measured".into()
    } else {
        "the machine's load was not measured (no run-queue wait, /proc/pressure/cpu or \
         /proc/stat)"
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine measured idle (also the slot tests' machine).
    pub(super) const IDLE: MachineLoad = MachineLoad {
        client_runqueue_pct: Some(0.5),
        cpu_pressure_some_pct: Some(1.0),
        steal_pct: Some(0.0),
        others_pct: Some(3.0),
        machine_busy_pct: Some(40.0),
        own: OwnDemand::UNKNOWN,
    };

    fn input(server: Option<f64>, client: Option<&[f64]>) -> VerdictInput<'_> {
        VerdictInput {
            server_cpu_pct: server,
            client_threads_pct: client,
            seconds: 2.0,
            machine: IDLE,
            ..VerdictInput::default()
        }
    }

    fn v(server: Option<f64>, client: Option<&[f64]>) -> Verdict {
        decide(&input(server, client))
    }

    #[test]
    fn sub_second_tests_are_judged_and_only_a_sub_slot_one_is_cant_tell() {
        let at = |seconds| VerdictInput {
            seconds,
            ..input(Some(99.0), Some(&[20.0]))
        };
        assert_eq!(
            decide(&at(0.82)),
            Verdict::ServerBound,
            "PING_INLINE's 0.82 s"
        );
        assert_eq!(decide(&at(0.1)), Verdict::ServerBound);
        let short = at(0.01);
        assert_eq!(decide(&short), Verdict::CantTell);
        assert_eq!(
            reason(&short, Verdict::CantTell),
            "can't tell: the test lasted 10 ms, under one 100 ms slot, and CPU figures that \
             short are noise; a test of 1 s or more (a larger -n, or --duration) gets a verdict"
        );
    }

    #[test]
    fn the_threshold_itself_counts_as_near_full() {
        assert_eq!(v(Some(90.0), Some(&[10.0])), Verdict::ServerBound);
        assert_eq!(v(Some(89.99), Some(&[10.0])), Verdict::Neither);
        assert_eq!(v(Some(10.0), Some(&[5.0, 90.0])), Verdict::ClientBound);
        assert_eq!(v(Some(10.0), Some(&[5.0, 89.99])), Verdict::Neither);
    }

    #[test]
    fn both_sides_close_to_full_is_one_outcome_not_a_flip() {
        // The Redis SET repetitions: 98.2/87.7 then 98.4/91.2.
        assert_eq!(v(Some(98.2), Some(&[87.7])), Verdict::BothNearSaturation);
        assert_eq!(v(Some(98.4), Some(&[91.2])), Verdict::BothNearSaturation);
        assert_eq!(v(Some(85.0), Some(&[95.0])), Verdict::BothNearSaturation);
        assert_eq!(v(Some(79.9), Some(&[95.0])), Verdict::ClientBound);
        assert_eq!(v(Some(95.0), Some(&[79.9])), Verdict::ServerBound);
        assert_eq!(
            v(Some(85.0), Some(&[85.0])),
            Verdict::Neither,
            "neither full"
        );
    }

    #[test]
    fn a_server_starved_of_cpu_but_always_executing_is_server_bound() {
        let busy = |cpu: f64, busy: f64| {
            decide(&VerdictInput {
                server_busy_pct: Some(busy),
                ..input(Some(cpu), Some(&[10.0]))
            })
        };
        assert_eq!(busy(25.0, 90.0), Verdict::ServerBound);
        assert_eq!(busy(25.0, 89.9), Verdict::Neither);
        assert_eq!(busy(95.0, 1.0), Verdict::ServerBound);
    }

    #[test]
    fn a_busy_machine_is_said_with_its_figure_never_latency_bound() {
        let on = |machine: MachineLoad| {
            let i = VerdictInput {
                machine,
                ..input(Some(50.0), Some(&[40.0]))
            };
            (decide(&i), reason(&i, decide(&i)))
        };
        // (A wait that others' CPU can explain: they took 60% of a core.)
        let (v, r) = on(MachineLoad {
            client_runqueue_pct: Some(35.0),
            others_pct: Some(60.0),
            ..IDLE
        });
        assert_eq!(v, Verdict::MachineBusy);
        assert!(
            r.ends_with("would not help: a respbench thread waited for a CPU 35% of the test"),
            "{r}"
        );
        // Pressure with a remote server (others' CPU unknown).
        let (v, r) = on(MachineLoad {
            cpu_pressure_some_pct: Some(60.0),
            others_pct: None,
            ..IDLE
        });
        assert_eq!(v, Verdict::MachineBusy);
        assert!(r.contains("CPU pressure 60%"), "{r}");
        // With the server local and others at 3% of a core, others can have made a task wait
        // 3% of the time at most: the pressure was respbench and its server crowding each other.
        let (v, _) = on(MachineLoad {
            cpu_pressure_some_pct: Some(60.0),
            ..IDLE
        });
        assert_eq!(v, Verdict::Neither);
        let (v, r) = on(MachineLoad {
            steal_pct: Some(12.0),
            ..IDLE
        });
        assert_eq!(v, Verdict::MachineBusy);
        assert!(r.contains("steal 12%"), "{r}");
        // Others' CPU counts only on a full machine.
        let others = |busy| MachineLoad {
            others_pct: Some(120.0),
            machine_busy_pct: Some(busy),
            ..IDLE
        };
        assert_eq!(on(others(95.0)).0, Verdict::MachineBusy);
        assert!(
            on(others(95.0))
                .1
                .contains("other processes took 120% of a core")
        );
        assert_eq!(on(others(60.0)).0, Verdict::Neither, "idle CPUs to spare");
        // Just under every threshold: not busy.
        let under = MachineLoad {
            client_runqueue_pct: Some(9.9),
            cpu_pressure_some_pct: Some(19.9),
            steal_pct: Some(4.9),
            others_pct: Some(300.0),
            machine_busy_pct: Some(89.9),
            own: OwnDemand::UNKNOWN,
        };
        assert_eq!(on(under).0, Verdict::Neither);
    }

    #[test]
    fn a_wait_other_processes_cannot_have_caused_is_not_a_busy_machine() {
        // Seen on CI: --threads 4 on 2 cores beside a local server, others 5% of a core; the
        // demand rule left 12% of the worst thread's wait, but others held a CPU at most 5%
        // of the time, so at most that much of the wait was theirs.
        let own = OwnDemand {
            runqueue_sum_pct: Some(86.6),
            respbench_cpu_pct: Some(87.0),
            local_server_cpu_pct: 69.7,
            cores: 2,
            respbench_cores: 2,
        };
        let seen = MachineLoad {
            client_runqueue_pct: Some(23.0),
            cpu_pressure_some_pct: Some(50.8),
            steal_pct: Some(0.0),
            others_pct: Some(5.1),
            machine_busy_pct: Some(80.2),
            own,
        };
        assert_eq!(seen.busy_figure(), None);
        // The same waits with a hog taking most of a core: the machine was busy.
        let hog = MachineLoad {
            others_pct: Some(90.0),
            ..seen
        };
        assert!(hog.busy_figure().is_some());
        // Steal counts as others' (percent of all CPUs' time, two cores).
        let stolen = MachineLoad {
            steal_pct: Some(10.0),
            ..seen
        };
        assert!(stolen.busy_figure().is_some());
    }

    /// `taskset -c 1 respbench` on a 2-core machine: respbench may use 1 core, the machine has 2.
    fn pinned(runqueue_sum: f64, respbench: f64, server: f64) -> OwnDemand {
        OwnDemand {
            runqueue_sum_pct: Some(runqueue_sum),
            respbench_cpu_pct: Some(respbench),
            local_server_cpu_pct: server,
            cores: 2,
            respbench_cores: 1,
        }
    }

    #[test]
    fn a_pinned_respbench_beside_a_hog_is_machine_busy_on_its_own_core() {
        // The trial: `taskset -c 1 respbench -t get,set,incr` with a CPU hog on CPU 1 and the
        // server on CPU 0 of a busy 2-core machine: CPUs 100% busy, respbench 9% of a core, the
        // server 10%, other processes 181%; respbench's one thread waited 60% of the test.
        let trial = MachineLoad {
            client_runqueue_pct: Some(60.0),
            cpu_pressure_some_pct: Some(99.0),
            steal_pct: Some(0.0),
            others_pct: Some(181.0),
            machine_busy_pct: Some(100.0),
            own: pinned(60.0, 9.0, 10.0),
        };
        let i = VerdictInput {
            machine: trial,
            ..input(Some(10.0), Some(&[8.0]))
        };
        assert_eq!(decide(&i), Verdict::MachineBusy);
        assert_eq!(
            trial.busy_figure().unwrap(),
            "a respbench thread waited for a CPU 60% of the test (respbench may run on 1 of the \
             machine's 2 cores)"
        );
        // A machine not full (the hog at 60% of CPU 1, CPU 0 idle but for the server at 60%):
        // only respbench's wait shows it. Counting the server against respbench's one core
        // (40 + 45 + 60 > 100) took that wait for the benchmark's own and said "neither: raise
        // -c"; the server runs on the other core.
        let hog = MachineLoad {
            client_runqueue_pct: Some(45.0),
            cpu_pressure_some_pct: Some(50.0),
            steal_pct: Some(0.0),
            others_pct: Some(60.0),
            machine_busy_pct: Some(80.0),
            own: pinned(45.0, 40.0, 60.0),
        };
        let i = VerdictInput {
            machine: hog,
            ..input(Some(60.0), Some(&[40.0]))
        };
        assert_eq!(decide(&i), Verdict::MachineBusy, "{:?}", hog.busy_figure());
        assert!(
            hog.busy_figure()
                .unwrap()
                .starts_with("a respbench thread waited for a CPU 45% of the test (respbench"),
            "{:?}",
            hog.busy_figure()
        );
        // Pinned with the server on its core and no hog (others 2%): the two crowd each other,
        // which is not a busy machine, pressure and all.
        let together = MachineLoad {
            others_pct: Some(2.0),
            machine_busy_pct: Some(51.0),
            cpu_pressure_some_pct: Some(60.0),
            ..hog
        };
        assert_eq!(together.busy_figure(), None);
        // `--threads 2` pinned to one core: the threads wait for each other (100% of CPU and
        // 100% of wait on one core), even with the machine's other core idle.
        let threads = MachineLoad {
            client_runqueue_pct: Some(50.0),
            cpu_pressure_some_pct: Some(100.0),
            others_pct: None,
            machine_busy_pct: Some(65.0),
            own: pinned(100.0, 100.0, 30.0),
            ..trial
        };
        assert_eq!(threads.busy_figure(), None);
    }

    #[test]
    fn respbench_waiting_for_its_own_threads_is_not_a_busy_machine() {
        // --threads 4 on 2 cores against a local server: threads wait for each other.
        let own = OwnDemand {
            runqueue_sum_pct: Some(160.0),
            respbench_cpu_pct: Some(130.0),
            local_server_cpu_pct: 60.0,
            cores: 2,
            respbench_cores: 2,
        };
        let crowded = MachineLoad {
            client_runqueue_pct: Some(45.0),
            cpu_pressure_some_pct: Some(80.0),
            own,
            ..IDLE
        };
        let i = VerdictInput {
            machine: crowded,
            ..input(Some(60.0), Some(&[35.0, 30.0, 33.0, 32.0]))
        };
        assert_eq!(decide(&i), Verdict::Neither, "{:?}", crowded.busy_figure());
        // The same waits with the benchmark well within the cores: someone else's load.
        let shared = MachineLoad {
            own: OwnDemand {
                respbench_cpu_pct: Some(20.0),
                runqueue_sum_pct: Some(45.0),
                ..own
            },
            others_pct: Some(70.0),
            ..crowded
        };
        let i = VerdictInput {
            machine: shared,
            ..i
        };
        assert_eq!(decide(&i), Verdict::MachineBusy);
        assert_eq!(
            shared.busy_figure().unwrap(),
            "a respbench thread waited for a CPU 45% of the test"
        );
        // Partly own: the figure is the net one, and says so.
        let partly = MachineLoad {
            own: OwnDemand {
                respbench_cpu_pct: Some(100.0),
                runqueue_sum_pct: Some(80.0),
                ..own
            },
            client_runqueue_pct: Some(40.0),
            others_pct: Some(70.0),
            ..crowded
        };
        let figure = partly.busy_figure().unwrap();
        assert!(
            figure.starts_with("a respbench thread waited for a CPU 20% of the test (net of"),
            "{figure}"
        );
    }

    #[test]
    fn a_saturated_side_outranks_a_busy_machine() {
        let starved = MachineLoad {
            cpu_pressure_some_pct: Some(90.0),
            ..IDLE
        };
        let i = |server, client: &'static [f64]| VerdictInput {
            machine: starved,
            ..input(Some(server), Some(client))
        };
        assert_eq!(decide(&i(97.0, &[10.0])), Verdict::ServerBound);
        assert_eq!(decide(&i(10.0, &[97.0])), Verdict::ClientBound);
    }

    #[test]
    fn missing_figures_say_which() {
        let told = |i: &VerdictInput| {
            let v = decide(i);
            (v, reason(i, v))
        };
        let (k, r) = told(&input(None, Some(&[40.0])));
        assert_eq!(k, Verdict::CantTell);
        assert!(r.starts_with("can't tell: no server CPU figures"), "{r}");
        let (k, r) = told(&input(Some(40.0), None));
        assert_eq!(k, Verdict::CantTell);
        assert!(r.contains("thread CPU was not measured"), "{r}");
        assert_eq!(v(Some(40.0), Some(&[])), Verdict::CantTell, "no threads");
        let blind = VerdictInput {
            machine: MachineLoad::default(),
            ..input(Some(40.0), Some(&[40.0]))
        };
        let (k, r) = told(&blind);
        assert_eq!(k, Verdict::CantTell, "headroom without a measured machine");
        assert!(r.contains("machine's load was not measured"), "{r}");
        // A saturated side is enough on its own.
        assert_eq!(v(Some(97.0), None), Verdict::ServerBound);
        assert_eq!(v(None, Some(&[97.0])), Verdict::ClientBound);
        assert_eq!(v(None, None), Verdict::CantTell);
    }

    #[test]
    fn a_reached_rate_target_is_rate_limited_unless_a_side_is_saturated() {
        let rate = |target: f64, achieved: f64, server: f64| {
            decide(&VerdictInput {
                rate: Some((target, achieved)),
                ..input(Some(server), Some(&[10.0]))
            })
        };
        assert_eq!(rate(1000.0, 950.0, 10.0), Verdict::RateLimited);
        assert_eq!(rate(1000.0, 949.0, 10.0), Verdict::Neither);
        assert_eq!(rate(1000.0, 1000.0, 95.0), Verdict::ServerBound);
    }

    #[test]
    fn a_server_is_judged_by_its_steady_state_then_main_thread_then_process() {
        let full = ServerCpu {
            steady_pct: Some(95.0),
            main_thread_pct: Some(70.0),
            process_pct: Some(120.0),
            busy_pct: Some(10.0),
        };
        assert_eq!(full.judged_pct(), Some(95.0));
        let short = ServerCpu {
            steady_pct: None,
            ..full
        };
        assert_eq!(
            short.judged_pct(),
            Some(70.0),
            "main thread, not the process"
        );
        let old = ServerCpu {
            main_thread_pct: None,
            ..short
        };
        assert_eq!(old.judged_pct(), Some(120.0));
        // The busiest node decides; each figure is its own maximum.
        let idle = ServerCpu {
            steady_pct: Some(5.0),
            busy_pct: Some(40.0),
            ..ServerCpu::default()
        };
        let j = judge(&[idle, short], Some(&[10.0, 30.0]), None, 2.0, IDLE);
        assert_eq!(j.verdict, Verdict::Neither);
        assert_eq!(j.reason, Verdict::Neither.advice());
        assert_eq!(j.server_cpu_pct, Some(70.0));
        assert_eq!(j.server_busy_pct, Some(40.0));
        assert_eq!(j.client_max_thread_cpu_pct, Some(30.0));
        let j = judge(&[], None, None, 2.0, MachineLoad::default());
        assert_eq!(j.verdict, Verdict::CantTell, "nothing known");
        assert_eq!(j.server_cpu_pct, None);
    }

    #[test]
    fn names_are_the_documented_ones() {
        let names: Vec<&str> = Verdict::ALL.map(Verdict::name).to_vec();
        assert_eq!(
            names,
            [
                "server-bound",
                "client-bound",
                "both-near-saturation",
                "machine-busy",
                "neither",
                "rate-limited",
                "cant-tell",
                "unknown"
            ]
        );
        for v in Verdict::ALL {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json, v.name(), "the record's kind is the report's name");
            assert_eq!(serde_json::from_value::<Verdict>(json).unwrap(), v);
        }
        // A newer record's kind still reads.
        let later: Verdict = serde_json::from_str("\"memory-bound\"").unwrap();
        assert_eq!(later, Verdict::Unknown);
    }
}
