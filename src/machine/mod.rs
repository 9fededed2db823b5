//! How busy the machine was around a test: CPU pressure, steal, and how much CPU the whole
//! machine and respbench's process used.
//!
//! Owns: reading `/proc/pressure/cpu`, `/proc/stat` and respbench's own process CPU at a test's
//! start and end ([`Snapshot`]) and turning two readings into figures over the test ([`Load`]).
//! Must not: judge (that is `verdict`), format output, or be read from a worker's loop.
//!
//! Why: on a shared machine a server or a load generator can be starved of CPU without either
//! being near a full core; the CPU figures then read as headroom and the test looks "latency
//! bound" when the machine was the limit. Each figure is optional: `/proc/pressure` needs a
//! kernel with PSI (4.20+, and not disabled), steal is zero outside VMs, and nothing here
//! exists off Linux; a missing figure is `None`, never zero, so the verdict can say which
//! figure it lacked.

use std::time::Instant;

/// `/proc/pressure/cpu`'s cumulative stall times, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pressure {
    /// Time at least one runnable task waited for a CPU.
    pub some_us: u64,
    /// Time every non-idle task waited (the kernel reports it for CPU since 5.13; `None` before).
    pub full_us: Option<u64>,
}

/// `/proc/stat`'s first line, all CPUs together, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq (guest time is already inside user and nice).
    pub busy: u64,
    /// Time a hypervisor ran something else while this machine's CPU wanted to run.
    pub steal: u64,
    /// Every field but guest and guest_nice (counted in user and nice already).
    pub total: u64,
}

/// The machine's counters at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    wall: Instant,
    pressure: Option<Pressure>,
    ticks: Option<CpuTicks>,
    /// respbench's process CPU (user + system), microseconds.
    own_cpu_us: Option<u64>,
}

/// The machine over a test, from two snapshots. Percentages of one core unless named otherwise.
/// Serialisable for the journal (`record::journal`), which keeps a killed test's.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Load {
    pub seconds: f64,
    /// Share of the test's wall time in which some runnable task waited for a CPU, percent.
    pub cpu_pressure_some_pct: Option<f64>,
    /// Share in which every non-idle task waited, percent.
    pub cpu_pressure_full_pct: Option<f64>,
    /// Share of all CPUs' time stolen by a hypervisor, percent.
    pub steal_pct: Option<f64>,
    /// CPU used by everything on the machine, percent of one core (a 4-core machine tops at 400).
    pub busy_pct: Option<f64>,
    /// respbench's whole process (workers, the main thread, the server watch).
    pub respbench_pct: Option<f64>,
    /// The machine's cores: every online CPU, as `/proc/stat` counts them (the ceiling of
    /// `busy_pct` is 100× this). Machine-wide figures are of these, whatever respbench may use.
    pub cores: usize,
    /// The CPUs respbench may run on (its affinity and CPU quota: `taskset -c 1 respbench` has
    /// 1), at most `cores`; 0 in a journal of an earlier build. Its threads wait for each other
    /// beyond these, even with the machine's other cores idle (`verdict::own`).
    pub respbench_cores: usize,
}

impl Snapshot {
    /// Reads every counter now (a few small files; never from a worker's loop).
    pub fn take() -> Self {
        Self {
            wall: Instant::now(),
            pressure: std::fs::read_to_string("/proc/pressure/cpu")
                .ok()
                .and_then(|t| parse_pressure(&t)),
            ticks: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| parse_stat(&t)),
            own_cpu_us: own_cpu_us(),
        }
    }

    /// The figures from this snapshot to now.
    pub fn load_since(&self) -> Load {
        Self::take().load_from(self)
    }

    /// The figures from `before` to this snapshot.
    pub fn load_from(&self, before: &Snapshot) -> Load {
        let wall = self.wall.saturating_duration_since(before.wall);
        let wall_us = wall.as_secs_f64() * 1e6;
        let share = |d: u64| {
            if wall_us > 0.0 {
                d as f64 / wall_us * 100.0
            } else {
                0.0
            }
        };
        let pressure = both(before.pressure, self.pressure);
        let ticks = both(before.ticks, self.ticks).and_then(|(b, a)| {
            let total = a.total.checked_sub(b.total).filter(|&t| t > 0)?;
            Some((
                a.busy.saturating_sub(b.busy) as f64 / total as f64,
                a.steal.saturating_sub(b.steal) as f64 / total as f64,
            ))
        });
        let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = online_cpus(allowed);
        Load {
            seconds: wall.as_secs_f64(),
            cpu_pressure_some_pct: pressure
                .map(|(b, a)| share(a.some_us.saturating_sub(b.some_us))),
            cpu_pressure_full_pct: pressure
                .and_then(|(b, a)| Some(share(a.full_us?.saturating_sub(b.full_us?)))),
            steal_pct: ticks.map(|(_, steal)| steal * 100.0),
            busy_pct: ticks.map(|(busy, _)| busy * 100.0 * cores as f64),
            respbench_pct: both(before.own_cpu_us, self.own_cpu_us)
                .map(|(b, a)| share(a.saturating_sub(b))),
            cores,
            respbench_cores: allowed.min(cores),
        }
    }
}

impl Load {
    /// CPU other processes took (everything but respbench and the server), percent of one
    /// core; only meaningful when the server runs on this machine (`server_pct` is its process
    /// CPU). Never below zero: tick-resolution `/proc/stat` and the server's own figure can
    /// disagree by a few percent.
    pub fn others_pct(&self, server_pct: f64) -> Option<f64> {
        Some((self.busy_pct? - self.respbench_pct? - server_pct).max(0.0))
    }
}

fn both<T>(a: Option<T>, b: Option<T>) -> Option<(T, T)> {
    Some((a?, b?))
}

/// The CPUs `/proc/stat`'s first line adds up: every online CPU, which is more than
/// `available_parallelism` when this process may not use them all (`taskset`, a container's
/// cpuset or CPU quota). `fallback` where `/proc/stat` cannot be read.
fn online_cpus(fallback: usize) -> usize {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .map(|t| {
            t.lines()
                .filter(|l| {
                    l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)
                })
                .count()
        })
        .filter(|&n| n > 0)
        .unwrap_or(fallback)
}

/// The process's user + system CPU, microseconds (`getrusage`: exact, not tick-rounded).
fn own_cpu_us() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into the valid, exclusively borrowed `ru`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let us = |t: libc::timeval| {
        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000 + u64::try_from(t.tv_usec).unwrap_or(0)
    };
    Some(us(ru.ru_utime) + us(ru.ru_stime))
}

/// `some avg10=… total=N` / `full … total=M` → the totals.
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let total = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))?
            .split_whitespace()
            .find_map(|w| w.strip_prefix("total="))?
            .parse()
            .ok()
    };
    Some(Pressure {
        some_us: total("some ")?,
        full_us: total("full "),
    })
}

/// `/proc/stat`'s `cpu  user nice system idle iowait irq softirq steal guest guest_nice`.
pub fn parse_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    if f.len() < 4 {
        return None;
    }
    Some(CpuTicks {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        steal: at(7),
        total: (0..8).map(at).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_totals() {
        let text = "some avg10=90.71 avg60=90.53 avg300=88.93 total=3847694818\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=12\n";
        assert_eq!(
            parse_pressure(text),
            Some(Pressure {
                some_us: 3_847_694_818,
                full_us: Some(12)
            })
        );
        let old = "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n";
        assert_eq!(parse_pressure(old).unwrap().full_us, None, "before 5.13");
        assert_eq!(parse_pressure(""), None);
    }

    #[test]
    fn stat_first_line() {
        let text = "cpu  100 10 50 1000 5 1 2 7 30 0\ncpu0 1 2 3 4\n";
        let t = parse_stat(text).unwrap();
        assert_eq!(t.busy, 100 + 10 + 50 + 1 + 2);
        assert_eq!(t.steal, 7);
        assert_eq!(
            t.total,
            100 + 10 + 50 + 1000 + 5 + 1 + 2 + 7,
            "guest left out"
        );
        assert_eq!(parse_stat("intr 1 2\n"), None);
    }

    #[test]
    fn figures_between_two_snapshots() {
        let t0 = Instant::now();
        let before = Snapshot {
            wall: t0,
            pressure: Some(Pressure {
                some_us: 1_000,
                full_us: None,
            }),
            ticks: Some(CpuTicks {
                busy: 100,
                steal: 0,
                total: 400,
            }),
            own_cpu_us: Some(0),
        };
        let after = Snapshot {
            wall: t0 + std::time::Duration::from_secs(2),
            pressure: Some(Pressure {
                some_us: 501_000,
                full_us: Some(9),
            }),
            ticks: Some(CpuTicks {
                busy: 250,
                steal: 20,
                total: 600,
            }),
            own_cpu_us: Some(1_000_000),
        };
        let l = after.load_from(&before);
        assert!((l.cpu_pressure_some_pct.unwrap() - 25.0).abs() < 1e-9);
        assert_eq!(l.cpu_pressure_full_pct, None, "not read at the start");
        assert!((l.steal_pct.unwrap() - 10.0).abs() < 1e-9);
        assert!((l.respbench_pct.unwrap() - 50.0).abs() < 1e-9);
        let busy = l.busy_pct.unwrap();
        assert!(busy > 0.0 && busy <= 75.0 * l.cores as f64);
        let l = Load {
            busy_pct: Some(180.0),
            respbench_pct: Some(60.0),
            ..Load::default()
        };
        assert_eq!(l.others_pct(100.0), Some(20.0));
        assert_eq!(l.others_pct(150.0), Some(0.0), "never negative");
        assert_eq!(Load::default().others_pct(1.0), None);
    }

    #[test]
    fn a_real_snapshot_reads_what_this_machine_has() {
        let l = Snapshot::take().load_since();
        assert!(l.cores >= 1);
        assert!((1..=l.cores).contains(&l.respbench_cores), "{l:?}");
        assert!(
            l.respbench_pct.is_some(),
            "getrusage always answers on Linux"
        );
    }
}
