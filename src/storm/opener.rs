//! The openers: `-c` threads, each with an even share of the connection count (`-n`) and of
//! the rate (`--rps`), opening connections one after another until its share is done, the
//! duration is over, or Ctrl-C.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::engine::Stop;
use crate::metrics::SecondTally;
use crate::workload::split::even_part;

use super::stages::{Ended, connect_once};
use super::{Stage, StormResult, StormSpec};

/// The longest an opener sleeps at once while paced, so Ctrl-C is seen promptly.
const NAP: Duration = Duration::from_millis(50);

/// Runs every opener and merges what they measured.
pub(super) fn run_openers(spec: &StormSpec, interrupted: Arc<AtomicBool>) -> StormResult {
    let openers = u64::from(spec.openers.max(1));
    let start = spec.start;
    let results: Vec<StormResult> = thread::scope(|s| {
        let handles: Vec<_> = (0..openers)
            .map(|i| {
                let count = match spec.stop {
                    Stop::Requests(n) => Some(even_part(n, i, openers).len),
                    Stop::After(_) => None,
                };
                let rate = spec.rate.map(|r| even_part(r, i, openers).len);
                let deadline = match spec.stop {
                    Stop::After(d) => Some(start + d),
                    Stop::Requests(_) => None,
                };
                let stop = interrupted.clone();
                s.spawn(move || open_loop(spec, count, rate, deadline, start, &stop))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut merged = StormResult {
        elapsed: start.elapsed(),
        ..StormResult::default()
    };
    for r in &results {
        merged.merge(r);
    }
    merged
}

/// One opener: connections back to back, or at `rate` per second from `start`.
fn open_loop(
    spec: &StormSpec,
    count: Option<u64>,
    rate: Option<u64>,
    deadline: Option<Instant>,
    start: Instant,
    interrupted: &AtomicBool,
) -> StormResult {
    let mut out = StormResult::default();
    // A paced opener whose share of the rate is 0 has nothing to do.
    if rate == Some(0) {
        return out;
    }
    // Each connection counted as it ends, with a journal into the second's full-precision part
    // (`SecondTally::direct`: its total, each stage's time, a failure by stage and kind), so a
    // killed storm's block is rebuilt whole (`record::journal`).
    let mut seconds = SecondTally::direct(start, spec.timeline.clone());
    // A failure's `"stage kind"`, written into the same buffer each time.
    let mut word = String::new();
    let mut k: u64 = 0;
    loop {
        if count.is_some_and(|c| k >= c) {
            break;
        }
        if let Some(rate) = rate {
            let due = start + Duration::from_secs_f64(k as f64 / rate as f64);
            while Instant::now() < due && !interrupted.load(Ordering::Relaxed) {
                thread::sleep(due.saturating_duration_since(Instant::now()).min(NAP));
            }
        }
        if interrupted.load(Ordering::Relaxed) {
            out.interrupted = true;
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let ended = connect_once(spec, &mut out);
        let now = Instant::now();
        let tally = match ended {
            Ended::Completed { total, laps } => {
                seconds.success_exact(now, total);
                for (stage, ns) in Stage::ALL.iter().zip(laps) {
                    if let Some(ns) = ns {
                        seconds.stage(stage.index(), ns);
                    }
                }
                &spec.tally.completed
            }
            Ended::Failed((stage, kind)) => {
                word.clear();
                word.push_str(stage.name());
                word.push(' ');
                word.push_str(kind);
                seconds.error_word(now, &word);
                &spec.tally.failed
            }
        };
        tally.fetch_add(1, Ordering::Relaxed);
        spec.ended.fetch_add(1, Ordering::Relaxed);
        k += 1;
    }
    seconds.flush();
    out
}
