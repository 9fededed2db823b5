//! How much of the machine's measured CPU waiting was the benchmark's own doing.
//!
//! Why: CPU pressure (`/proc/pressure/cpu`) is machine-wide and a respbench thread's run-queue
//! wait does not say whom it waited for. With `--threads` above the core count, or respbench and
//! a local server together wanting more than the cores, respbench's threads wait for each other
//! and for the server on an otherwise idle machine: that is the benchmark over-subscribing the
//! machine, not "the machine was busy" with someone else's work. So before the verdict reads
//! those figures, the part the benchmark's own demand explains is taken out.
//!
//! The rule: the benchmark's demand on this machine is respbench's CPU, its threads' summed
//! run-queue wait (what they wanted on top) and a local server's CPU. Whatever of that exceeds
//! the cores had to wait whoever else ran, so up to that much of respbench's wait is its own
//! ([`OwnDemand::own_wait_pct`]). The worst thread's wait is scaled down by the same share, and
//! CPU pressure is not read at all then (it is the share of time *some* task waited, which an
//! over-subscribing benchmark fills on its own, the server's waits included): no false "machine
//! busy", at the price of leaving others' load to the run-queue, steal and other-process
//! figures.

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
}

impl OwnDemand {
    /// Nothing known: nothing is discounted.
    pub const UNKNOWN: OwnDemand = OwnDemand {
        runqueue_sum_pct: None,
        respbench_cpu_pct: None,
        local_server_cpu_pct: 0.0,
        cores: 0,
    };

    /// The part of respbench's summed run-queue wait its own demand explains (percent of one
    /// core, between 0 and the summed wait): the benchmark's demand beyond the cores. 0 when a
    /// figure is missing (then nothing is discounted, as before this rule).
    pub fn own_wait_pct(&self) -> f64 {
        let (Some(wait), Some(cpu)) = (self.runqueue_sum_pct, self.respbench_cpu_pct) else {
            return 0.0;
        };
        if self.cores == 0 {
            return 0.0;
        }
        let excess = cpu + wait + self.local_server_cpu_pct - self.cores as f64 * 100.0;
        excess.clamp(0.0, wait.max(0.0))
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
        }
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
            ..demand(200.0, 200.0, 0.0)
        };
        assert_eq!(d.own_wait_pct(), 0.0);
        assert_eq!(OwnDemand::default().others_pressure_pct(42.0), 42.0);
    }
}
