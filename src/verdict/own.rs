//! How much of the machine's measured CPU waiting was the benchmark's own doing.
//!
//! Why: CPU pressure (`/proc/pressure/cpu`) is machine-wide and a respbench thread's run-queue
//! wait does not say whom it waited for. With `--threads` above the cores respbench may use, or
//! respbench and a local server together wanting more than the machine's cores, respbench's
//! threads wait for each other and for the server on an otherwise idle machine: that is the
//! benchmark over-subscribing the CPUs, not "the machine was busy" with someone else's work. So
//! before the verdict reads those figures, the part the benchmark's own demand explains is taken
//! out.
//!
//! The rule: the benchmark's demand is respbench's CPU plus its threads' summed run-queue wait
//! (what they wanted on top), and a local server's CPU. Whatever of it exceeds the CPUs it can
//! have had to wait whoever else ran, so up to that much of respbench's wait is its own
//! ([`OwnDemand::own_wait_pct`]). Two capacities bound it: respbench's demand alone against the
//! cores respbench may run on (`taskset -c 1`: one, whatever the machine has), and respbench's
//! with the server's against the machine's cores. The server's CPU is never counted against
//! respbench's own cores: where the server runs is not known, and counting it there would take
//! a hog's doing for the benchmark's own (respbench pinned beside a hog, the server on another
//! core). The price: respbench confined with its server to the same few cores of a larger
//! machine (a container's cpuset) and over-subscribing them is not discounted here; only the cap
//! at other processes' CPU (`MachineLoad::busy_figure_over`) keeps that from reading as a busy
//! machine, and on a host busy with others it does not (the server's affinity, read through
//! its `INFO` `process_id`, would tell).
//!
//! The worst thread's wait is scaled down by the own share, and CPU pressure is not read at all
//! then (it is the share of time *some* task waited, which an over-subscribing benchmark fills
//! on its own, the server's waits included): no false "machine busy", at the price of leaving
//! others' load to the run-queue, steal and other-process figures.

/// The benchmark's own figures on this machine, percent of one core (each optional).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OwnDemand {
    /// Every respbench worker's run-queue wait, summed (percent of one core over the test).
    pub runqueue_sum_pct: Option<f64>,
    /// respbench's whole process CPU.
    pub respbench_cpu_pct: Option<f64>,
    /// The servers on this machine (loopback or unix socket); 0 when the server is remote.
    pub local_server_cpu_pct: f64,
    /// The machine's cores (0: unknown, nothing discounted).
    pub cores: usize,
    /// The cores respbench may run on (its affinity or CPU quota); 0: unknown, taken as
    /// `cores`.
    pub respbench_cores: usize,
}

impl OwnDemand {
    /// Nothing known: nothing is discounted.
    pub const UNKNOWN: OwnDemand = OwnDemand {
        runqueue_sum_pct: None,
        respbench_cpu_pct: None,
        local_server_cpu_pct: 0.0,
        cores: 0,
        respbench_cores: 0,
    };

    /// The cores respbench may run on: [`OwnDemand::respbench_cores`], else the machine's.
    pub fn allowed_cores(&self) -> usize {
        match self.respbench_cores {
            0 => self.cores,
            n => n,
        }
    }

    /// Whether respbench may run on fewer cores than the machine has (`taskset`, a cpuset or a
    /// CPU quota): then its run-queue wait is for its own cores, which the reason says.
    pub fn pinned(&self) -> bool {
        self.respbench_cores > 0 && self.respbench_cores < self.cores
    }

    /// The part of respbench's summed run-queue wait its own demand explains (percent of one
    /// core, between 0 and the summed wait): the larger of respbench's demand beyond the cores
    /// it may run on and the benchmark's (with a local server) beyond the machine's cores. 0
    /// when a figure is missing (then nothing is discounted, as before this rule).
    pub fn own_wait_pct(&self) -> f64 {
        let (Some(wait), Some(cpu)) = (self.runqueue_sum_pct, self.respbench_cpu_pct) else {
            return 0.0;
        };
        if self.cores == 0 {
            return 0.0;
        }
        let alone = cpu + wait - self.allowed_cores() as f64 * 100.0;
        let with_server = cpu + wait + self.local_server_cpu_pct - self.cores as f64 * 100.0;
        alone.max(with_server).clamp(0.0, wait.max(0.0))
    }

    /// The worst thread's wait without the benchmark's own share (scaled by it).
    pub fn others_runqueue_pct(&self, worst_pct: f64) -> f64 {
        match self.runqueue_sum_pct {
            Some(sum) if sum > 0.0 => worst_pct * (1.0 - self.own_wait_pct() / sum),
            _ => worst_pct,
        }
    }

    /// CPU pressure as evidence of others' load: none when the benchmark over-subscribed the
    /// CPUs itself. Pressure is the share of time *some* task waited, and a benchmark that wants
    /// more than the cores keeps some task (its own threads, or the server they crowd out, whose
    /// waits are not measured) waiting whoever else runs; then only the run-queue share above,
    /// steal and other processes' CPU can tell a busy machine.
    pub fn others_pressure_pct(&self, pressure_pct: f64) -> f64 {
        if self.own_wait_pct() > 0.0 {
            0.0
        } else {
            pressure_pct
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demand(wait: f64, cpu: f64, server: f64) -> OwnDemand {
        OwnDemand {
            runqueue_sum_pct: Some(wait),
            respbench_cpu_pct: Some(cpu),
            local_server_cpu_pct: server,
            cores: 2,
            respbench_cores: 2,
        }
    }

    /// The same on a 2-core machine with respbench pinned to one (`taskset -c 1 respbench`).
    fn pinned(wait: f64, cpu: f64, server: f64) -> OwnDemand {
        OwnDemand {
            respbench_cores: 1,
            ..demand(wait, cpu, server)
        }
    }

    #[test]
    fn a_pinned_respbench_beside_a_hog_is_not_discounted_for_the_server_elsewhere() {
        // `taskset -c 1 respbench` with a CPU hog on CPU 1 and the server on CPU 0 at 60%:
        // respbench got 40% and waited 45%. Counting the server against respbench's one core
        // (160% + 45% wait of 100%) took all of the hog's doing for the benchmark's own; the
        // server runs on the other core, and 145% of the machine's 200% is no over-subscription.
        let d = pinned(45.0, 40.0, 60.0);
        assert!(d.pinned());
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(d.others_runqueue_pct(45.0), 45.0);
        assert_eq!(d.others_pressure_pct(70.0), 70.0);
        // The trial's figures: respbench 9% of a core, the server 10%, others 181%.
        let d = pinned(80.0, 9.0, 10.0);
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(d.others_runqueue_pct(80.0), 80.0);
    }

    #[test]
    fn threads_beyond_the_cores_respbench_may_use_wait_for_each_other() {
        // `taskset -c 1 respbench --threads 2`: two always-runnable threads share one core
        // while the machine's other core is idle but for the server.
        let d = pinned(100.0, 100.0, 30.0);
        assert_eq!(d.own_wait_pct(), 100.0, "all of it their own");
        assert_eq!(d.others_runqueue_pct(50.0), 0.0);
        assert_eq!(d.others_pressure_pct(90.0), 0.0);
        // Unpinned, the same threads fit the machine's two cores: nothing is theirs.
        assert_eq!(demand(100.0, 100.0, 0.0).own_wait_pct(), 0.0);
        // An unknown affinity (a journal of an earlier build) is the machine's cores.
        let unknown = OwnDemand {
            respbench_cores: 0,
            ..demand(100.0, 100.0, 0.0)
        };
        assert_eq!(unknown.allowed_cores(), 2);
        assert!(!unknown.pinned());
    }

    #[test]
    fn threads_beyond_the_cores_wait_for_each_other_not_for_the_machine() {
        // --threads 4 on 2 cores, always runnable, nothing else: every wait is respbench's own.
        let d = demand(200.0, 200.0, 0.0);
        assert_eq!(d.own_wait_pct(), 200.0);
        assert_eq!(d.others_runqueue_pct(50.0), 0.0);
        assert_eq!(d.others_pressure_pct(100.0), 0.0);
        // With a local server at 90%: the benchmark over-subscribes by more than it waited.
        let d = demand(250.0, 110.0, 90.0);
        assert_eq!(d.own_wait_pct(), 250.0);
        assert_eq!(d.others_runqueue_pct(70.0), 0.0);
    }

    #[test]
    fn a_hog_beside_respbench_is_not_discounted() {
        // One respbench thread sharing its core with a hog, the server at 60% on the other:
        // the benchmark wants 160% of 200%, so its 50% wait was someone else's doing.
        let d = demand(50.0, 50.0, 60.0);
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(d.others_runqueue_pct(50.0), 50.0);
        assert_eq!(d.others_pressure_pct(60.0), 60.0);
    }

    #[test]
    fn a_partly_own_wait_is_scaled_down() {
        // 230% wanted of 200%: 30 of the 40 summed wait points are respbench's own.
        let d = demand(40.0, 120.0, 70.0);
        assert!((d.own_wait_pct() - 30.0).abs() < 1e-9);
        assert!((d.others_runqueue_pct(16.0) - 4.0).abs() < 1e-9);
        assert_eq!(
            d.others_pressure_pct(35.0),
            0.0,
            "pressure an over-subscriber makes"
        );
    }

    #[test]
    fn a_missing_figure_discounts_nothing() {
        let mut d = demand(200.0, 200.0, 0.0);
        d.respbench_cpu_pct = None;
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(d.others_runqueue_pct(50.0), 50.0);
        let d = OwnDemand {
            cores: 0,
            respbench_cores: 0,
            ..demand(200.0, 200.0, 0.0)
        };
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(OwnDemand::default().others_pressure_pct(42.0), 42.0);
    }
}
