//! The console: the live progress line on stderr, and Ctrl-C as the engine's observer sees it.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Observer, Snapshot, Stop};
use crate::live;
use crate::metrics::{Second, Signal};
use crate::plan::{Format, RunPlan};
use crate::report::{self, Progress, ProgressPhase};

/// The figures of a caller's own progress line (memtier mode's, [`super::run_for_document`]),
/// worked out by the console once a second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgressFigures {
    /// The run (`--run-count`), from 1.
    pub run: u32,
    /// How far the run is, 0 to 100.
    pub percent: f64,
    pub secs: u64,
    pub threads: usize,
    /// Connections in all.
    pub conns: u32,
    /// Requests completed so far.
    pub ops: u64,
    /// The last interval's rate and the run's.
    pub rps: f64,
    pub avg_rps: f64,
    /// The last interval's average latency and the run's, in ms.
    pub latency_ms: f64,
    pub avg_latency_ms: f64,
    /// The last interval's bytes per second and the run's.
    pub bytes_sec: f64,
    pub avg_bytes_sec: f64,
}

/// Writes a caller's progress line from its figures (memtier's: `memtier/progress.rs`).
pub type ProgressLine = fn(&mut String, &ProgressFigures);

/// Shows the live progress line on stderr when it is a terminal.
pub(super) struct Console {
    pub(super) interrupted: Arc<AtomicBool>,
    /// Set with `interrupted` when the signal was SIGTERM (the report names it).
    pub(super) terminated: Arc<AtomicBool>,
    pub(super) progress: bool,
    pub(super) title: String,
    pub(super) by_requests: bool,
    pub(super) line: String,
    pub(super) shown: bool,
    /// Seconds since a reply last completed a request (the progress line says so after one).
    pub(super) quiet_secs: f64,
    /// `--metrics-listen`: the live metrics, told about every tick and second.
    pub(super) live: Option<live::Feed>,
    /// memtier's `--statsd-host`: told about every second (and the connections at each tick).
    pub(super) statsd: Option<live::Statsd>,
    /// `respbench memtier`: memtier's progress line instead of respbench's.
    pub(super) memtier: Option<MemtierLine>,
}

/// What memtier's progress line needs beside the engine's figures.
pub(super) struct MemtierLine {
    pub(super) threads: usize,
    pub(super) conns: u32,
    /// The run's length: requests, or seconds.
    pub(super) requests: Option<u64>,
    pub(super) secs: Option<f64>,
    /// The run under way (`--run-count`), from 1.
    pub(super) run: u32,
    /// The last whole second shown.
    pub(super) shown_sec: Option<u64>,
    /// A line was written and not yet ended: [`Console::clear`] ends it, so the test's
    /// warnings on stderr start a line of their own instead of trailing the figures.
    pub(super) open: bool,
    /// Writes the line.
    pub(super) write: ProgressLine,
}

impl Console {
    /// The run's console (`workers`: the load's threads; `caller_line`: the caller's progress
    /// line instead of respbench's, memtier's), telling the live sinks each tick and second.
    pub(super) fn new(
        plan: &RunPlan,
        workers: usize,
        caller_line: Option<ProgressLine>,
        (interrupted, terminated): (Arc<AtomicBool>, Arc<AtomicBool>),
        (live, statsd): super::Sinks,
    ) -> Console {
        let stop = plan.load.stop;
        Console {
            interrupted,
            terminated,
            progress: io::stderr().is_terminal() && plan.format != Format::Csv,
            title: String::new(),
            by_requests: matches!(stop, Stop::Requests(_)),
            line: String::new(),
            shown: false,
            quiet_secs: 0.0,
            live,
            statsd,
            memtier: caller_line.map(|write| MemtierLine {
                threads: workers,
                conns: plan.load.clients,
                requests: match stop {
                    Stop::Requests(n) => Some(n),
                    _ => None,
                },
                secs: match stop {
                    Stop::After(d) => Some(d.as_secs_f64()),
                    _ => None,
                },
                run: 1,
                shown_sec: None,
                open: false,
                write,
            }),
        }
    }

    pub(super) fn clear(&mut self) {
        if let Some(m) = self.memtier.as_mut().filter(|m| m.open) {
            // memtier's line stays (memtier leaves it there too); only ended.
            eprintln!();
            m.open = false;
        }
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

impl Observer for Console {
    fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    fn signal(&self) -> Signal {
        if self.terminated.load(Ordering::Relaxed) {
            Signal::Terminate
        } else {
            Signal::Interrupt
        }
    }

    fn second(&mut self, _index: usize, second: &Second) {
        if let Some(live) = &self.live {
            live.second(second);
        }
        if let Some(s) = &mut self.statsd {
            s.second(second);
        }
    }

    fn tick(&mut self, s: &Snapshot) {
        if let Some(live) = &self.live {
            live.progress(&live::Tick {
                warming_up: s.warming_up,
                measured_secs: s.measured_secs,
                completed: s.measured_completed,
                connections: s.connections,
                down: s.connections_down,
                in_flight: s.in_flight,
            });
        }
        if let Some(statsd) = &mut self.statsd {
            statsd.connections(s.connections);
            statsd.bytes(s.measured_bytes);
        }
        if let Some(m) = &mut self.memtier {
            memtier_tick(m, s);
            return;
        }
        if !self.progress {
            return;
        }
        let avg = |sum: u64, n: u64| {
            if n > 0 {
                sum as f64 / n as f64 / 1e6
            } else {
                0.0
            }
        };
        let overall_rps = if s.measured_secs > 0.0 {
            s.measured_completed as f64 / s.measured_secs
        } else {
            0.0
        };
        if s.interval_completed == 0 {
            self.quiet_secs += s.interval_secs;
        } else {
            self.quiet_secs = 0.0;
        }
        let p = Progress {
            stalled_secs: self.quiet_secs,
            title: &self.title,
            interval_rps: if s.interval_secs > 0.0 {
                s.interval_completed as f64 / s.interval_secs
            } else {
                0.0
            },
            overall_rps,
            interval_avg_ms: avg(s.interval_latency_sum_ns, s.interval_completed),
            overall_avg_ms: avg(s.measured_latency_sum_ns, s.measured_completed),
            phase: if self.by_requests && !s.warming_up {
                ProgressPhase::Requests(s.measured_completed)
            } else {
                ProgressPhase::Seconds {
                    elapsed: s.measured_secs,
                    warming_up: s.warming_up,
                }
            },
        };
        self.line.clear();
        report::progress_line(&mut self.line, &p);
        eprint!("\r\x1b[2K{}", self.line);
        let _ = io::stderr().flush();
        self.shown = true;
    }
}

/// memtier's line once per whole second, after a carriage return (on stderr whatever it is, as
/// memtier writes it).
fn memtier_tick(m: &mut MemtierLine, s: &Snapshot) {
    let sec = s.measured_secs as u64;
    if s.warming_up || m.shown_sec == Some(sec) {
        return;
    }
    m.shown_sec = Some(sec);
    m.open = true;
    let per = |n: u64, d: f64| if d > 0.0 { n as f64 / d } else { 0.0 };
    let ms = |sum: u64, n: u64| {
        if n > 0 {
            sum as f64 / n as f64 / 1e6
        } else {
            0.0
        }
    };
    let percent = match (m.requests, m.secs) {
        (Some(total), _) if total > 0 => s.measured_completed as f64 * 100.0 / total as f64,
        (_, Some(secs)) if secs > 0.0 => s.measured_secs * 100.0 / secs,
        _ => 0.0,
    };
    let p = ProgressFigures {
        run: m.run,
        percent,
        secs: sec,
        threads: m.threads,
        // A staircase ramp's connections as they open (never above the line's own count:
        // cluster mode places more, per node).
        conns: m
            .conns
            .min(u32::try_from(s.connections).unwrap_or(u32::MAX)),
        ops: s.measured_completed,
        rps: per(s.interval_completed, s.interval_secs),
        avg_rps: per(s.measured_completed, s.measured_secs),
        latency_ms: ms(s.interval_latency_sum_ns, s.interval_completed),
        bytes_sec: per(s.interval_bytes, s.interval_secs),
        avg_bytes_sec: per(s.measured_bytes, s.measured_secs),
        avg_latency_ms: ms(s.measured_latency_sum_ns, s.measured_completed),
    };
    let mut line = String::from("\r");
    (m.write)(&mut line, &p);
    eprint!("{line}");
    let _ = io::stderr().flush();
}
