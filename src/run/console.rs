//! The console: the live progress line on stderr, and Ctrl-C as the engine's observer sees it.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Observer, Snapshot};
use crate::live;
use crate::metrics::{Second, Signal};
use crate::report::{self, Progress, ProgressPhase};

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
}

impl Console {
    pub(super) fn clear(&mut self) {
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
    }

    fn tick(&mut self, s: &Snapshot) {
        if let Some(live) = &self.live {
            live.progress(
                s.warming_up,
                s.measured_completed,
                s.connections,
                s.connections_down,
            );
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
