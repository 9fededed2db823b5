//! The calling thread's own CPU time, for per-worker CPU figures.
//!
//! Why per thread: respbench's process CPU is the sum of its workers, so a run with 4 threads at
//! 60% each reads 240% and hides nothing, while one worker at 100% (the one that limits the run
//! when connections are spread unevenly) disappears into an average. `CLOCK_THREAD_CPUTIME_ID`
//! is one vDSO-free syscall (~100 ns) with nanosecond resolution, cheap enough to read once a
//! second from a worker loop; `getrusage(RUSAGE_THREAD)` would give user/system separately but
//! at tick (1–4 ms) resolution, too coarse for one-second figures.

use std::time::{Duration, Instant};

/// CPU time (user + system) the calling thread has used since it started. Zero if the clock
/// cannot be read (it always can on Linux and macOS).
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// CPU used over wall time, as a percentage of one core (0 when no wall time passed).
pub fn cpu_percent(cpu: Duration, wall: Duration) -> f64 {
    let wall = wall.as_secs_f64();
    if wall > 0.0 {
        cpu.as_secs_f64() / wall * 100.0
    } else {
        0.0
    }
}

/// How long the calling thread has waited on a run queue (runnable, not running) since it
/// started: `/proc/thread-self/schedstat`'s second field, nanoseconds. `None` where the kernel
/// does not keep it (no `CONFIG_SCHEDSTATS`-free schedstat, or not Linux).
///
/// Why: a thread that wants a CPU and does not get one is starved by the machine, and its own
/// CPU figure reads as headroom; this is the figure that says so. Read into a stack buffer (the
/// path is short enough for std to build its C string on the stack too): no allocation, though
/// it is only read at a test's start and end anyway.
pub fn thread_runqueue_wait() -> Option<Duration> {
    use std::io::Read as _;
    let mut buf = [0u8; 96];
    let mut file = std::fs::File::open("/proc/thread-self/schedstat").ok()?;
    let n = file.read(&mut buf).ok()?;
    parse_schedstat(buf.get(..n)?)
}

/// Another thread of this process (`tid`, its kernel thread id): its CPU time and run-queue
/// wait so far, from `/proc/self/task/TID/schedstat` (`None` where the kernel does not give
/// it). Why: the main thread reads the workers' CPU once a second for the journal
/// (`engine::seconds`), so a worker does nothing more for it.
pub fn task_cpu_and_wait(tid: u64) -> Option<(Duration, Duration)> {
    let text = std::fs::read(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let on_cpu = text.split(|b| b.is_ascii_whitespace()).next()?;
    let on_cpu: u64 = std::str::from_utf8(on_cpu).ok()?.parse().ok()?;
    Some((Duration::from_nanos(on_cpu), parse_schedstat(&text)?))
}

/// The calling thread's kernel id, for [`task_cpu_and_wait`] read from another thread.
pub fn current_tid() -> u64 {
    // SAFETY: gettid has no arguments and cannot fail.
    u64::try_from(unsafe { libc::gettid() }).unwrap_or(0)
}

/// A worker's CPU as the main thread sees it: from a mark taken once it began (its thread id
/// published), to each later reading ([`TaskCpuMark::usage_since`]).
#[derive(Clone, Copy, Debug)]
pub struct TaskCpuMark {
    tid: u64,
    cpu: Duration,
    runqueue: Duration,
    wall: Instant,
}

impl TaskCpuMark {
    /// Thread `tid`'s clocks now; `None` when they cannot be read.
    pub fn of(tid: u64) -> Option<Self> {
        let wall = Instant::now();
        let (cpu, runqueue) = task_cpu_and_wait(tid)?;
        Some(Self {
            tid,
            cpu,
            runqueue,
            wall,
        })
    }

    /// Its usage since this mark (all zeros once the thread is gone).
    pub fn usage_since(&self) -> ThreadCpuUsage {
        let (cpu, runqueue) = task_cpu_and_wait(self.tid).unwrap_or((self.cpu, self.runqueue));
        ThreadCpuUsage {
            cpu: cpu.saturating_sub(self.cpu),
            runqueue: Some(runqueue.saturating_sub(self.runqueue)),
            wall: self.wall.elapsed(),
        }
    }
}

/// `on_cpu_ns wait_ns timeslices` → the wait.
fn parse_schedstat(text: &[u8]) -> Option<Duration> {
    let wait = text.split(|b| b.is_ascii_whitespace()).nth(1)?;
    let wait: u64 = std::str::from_utf8(wait).ok()?.parse().ok()?;
    Some(Duration::from_nanos(wait))
}

/// A thread's CPU, run-queue wait and wall clock at one moment; a worker takes one at test start
/// and compares later readings with it.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCpuMark {
    cpu: Duration,
    runqueue: Option<Duration>,
    wall: Instant,
}

impl ThreadCpuMark {
    /// Reads the calling thread's clocks now.
    pub fn now() -> Self {
        // The wall clock is read before the CPU clock here and after it in `usage_since`, so the
        // CPU interval lies inside the wall interval (reading schedstat costs CPU time too).
        let runqueue = thread_runqueue_wait();
        let wall = Instant::now();
        Self {
            cpu: thread_cpu_time(),
            runqueue,
            wall,
        }
    }

    /// The calling thread's usage since this mark, and the mark moved to now (one reading of
    /// the clocks serves both: the per-slot figures read them ten times a second).
    pub fn advance(&mut self) -> ThreadCpuUsage {
        let runqueue = thread_runqueue_wait();
        let wall = Instant::now();
        let cpu = thread_cpu_time();
        let used = ThreadCpuUsage {
            cpu: cpu.saturating_sub(self.cpu),
            runqueue: match (runqueue, self.runqueue) {
                (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                _ => None,
            },
            wall: wall.saturating_duration_since(self.wall),
        };
        *self = Self {
            cpu,
            runqueue,
            wall,
        };
        used
    }

    /// The calling thread's usage since this mark (call it on the same thread).
    pub fn usage_since(&self) -> ThreadCpuUsage {
        let cpu = thread_cpu_time();
        let wall = Instant::now();
        let runqueue = thread_runqueue_wait();
        ThreadCpuUsage {
            cpu: cpu.saturating_sub(self.cpu),
            runqueue: match (runqueue, self.runqueue) {
                (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                _ => None,
            },
            wall: wall.saturating_duration_since(self.wall),
        }
    }
}

/// One worker thread's CPU over a test: what the engine hands to the record and the verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadCpuUsage {
    pub cpu: Duration,
    /// Time the thread was runnable but waited for a CPU (`None` where not measured).
    pub runqueue: Option<Duration>,
    pub wall: Duration,
}

impl ThreadCpuUsage {
    /// Percentage of one core.
    pub fn percent(&self) -> f64 {
        cpu_percent(self.cpu, self.wall)
    }

    /// Share of wall time the thread waited for a CPU, percent.
    pub fn runqueue_percent(&self) -> Option<f64> {
        self.runqueue.map(|w| cpu_percent(w, self.wall))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_uses_cpu_and_a_sleeping_one_does_not() {
        let mark = ThreadCpuMark::now();
        // Spin until this thread has used at least 20 ms of CPU: the clock must move.
        let mut x = 0u64;
        while thread_cpu_time().saturating_sub(mark.cpu) < Duration::from_millis(20) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let spun = mark.usage_since();
        assert!(spun.cpu >= Duration::from_millis(20), "{spun:?}");
        assert!(
            spun.cpu <= spun.wall,
            "a thread cannot use more CPU than wall time"
        );

        let mark = ThreadCpuMark::now();
        std::thread::sleep(Duration::from_millis(50));
        let slept = mark.usage_since();
        assert!(slept.cpu < slept.wall, "{slept:?}");
    }

    #[test]
    fn percent_of_one_core() {
        let u = ThreadCpuUsage {
            cpu: Duration::from_millis(450),
            runqueue: Some(Duration::from_millis(50)),
            wall: Duration::from_millis(500),
        };
        assert!((u.runqueue_percent().unwrap() - 10.0).abs() < 1e-9);
        assert!((u.percent() - 90.0).abs() < 1e-9);
        assert_eq!(cpu_percent(Duration::from_secs(1), Duration::ZERO), 0.0);
    }

    #[test]
    fn another_thread_is_read_by_its_id() {
        use std::sync::mpsc::channel;
        let (tid_tx, tid_rx) = channel();
        let (go_tx, go_rx) = channel::<()>();
        let (spun_tx, spun_rx) = channel::<()>();
        let t = std::thread::spawn(move || {
            tid_tx.send(current_tid()).unwrap();
            go_rx.recv().unwrap();
            let mark = ThreadCpuMark::now();
            let mut x = 0u64;
            while thread_cpu_time().saturating_sub(mark.cpu) < Duration::from_millis(30) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            spun_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        });
        let tid = tid_rx.recv().unwrap();
        assert_ne!(tid, current_tid());
        let mark = TaskCpuMark::of(tid);
        go_tx.send(()).unwrap();
        spun_rx.recv().unwrap();
        if let Some(mark) = mark {
            let u = mark.usage_since();
            assert!(u.cpu >= Duration::from_millis(30), "{u:?}");
            assert!(u.cpu <= u.wall, "{u:?}");
        }
        go_tx.send(()).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn schedstat_wait_field() {
        assert_eq!(
            parse_schedstat(b"12345 678 9\n"),
            Some(Duration::from_nanos(678))
        );
        assert_eq!(parse_schedstat(b"12345"), None);
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(thread_runqueue_wait().is_some());
        }
    }
}
