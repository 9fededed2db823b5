//! `--start-at`: holding the measured run until the agreed wall-clock instant, so the shards of a
//! benchmark on several machines load the server together and their per-second timelines line
//! up.
//!
//! Called once, after the server is reached and prepared and before the first test: in this
//! engine each test opens its own connections, so the start aligns the *first* test's start (its
//! connection time, a few ms on a LAN, is inside the alignment error, like NTP skew). Later tests
//! of a suite start when the previous one ends on each shard.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, SystemTime};

use crate::plan::RunPlan;
use crate::record::RunRecord;

use super::Failure;

/// How long one sleep may be: short enough that Ctrl-C stops the wait promptly, and that a wall
/// clock stepped by NTP during the wait is re-read soon.
const STEP: Duration = Duration::from_millis(50);

/// Sleeps until `start_at` by the wall clock, in short steps so `interrupted` (Ctrl-C) ends the
/// wait. Returns how late the wait ended (zero or a few scheduler ticks; more if `start_at` was
/// already past when called), or `Err(())` when interrupted.
pub fn wait_until(start_at: SystemTime, interrupted: &AtomicBool) -> Result<Duration, ()> {
    loop {
        if interrupted.load(Ordering::Relaxed) {
            return Err(());
        }
        match start_at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => thread::sleep(left.min(STEP)),
            _ => {
                return Ok(SystemTime::now()
                    .duration_since(start_at)
                    .unwrap_or_default());
            }
        }
    }
}

/// The run's start: waits for `--start-at` if given, then notes the actual start (and how late it
/// was) in the record and on stderr for a sharded run.
pub(super) fn begin(
    plan: &RunPlan,
    interrupted: &AtomicBool,
    rec: &mut RunRecord,
) -> Result<(), Failure> {
    let late = match plan.start_at {
        Some(at) => {
            let late = wait_until(at, interrupted).map_err(|()| Failure::Interrupted)?;
            if plan.shard.is_some() {
                eprintln!(
                    "started {:.6} s after --start-at {}",
                    late.as_secs_f64(),
                    crate::timestamp::rfc3339(at)
                );
            }
            Some(late.as_secs_f64())
        }
        None => None,
    };
    rec.started(SystemTime::now(), late);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_past_time_returns_at_once_with_its_lateness() {
        let flag = AtomicBool::new(false);
        let late = wait_until(SystemTime::now() - Duration::from_secs(5), &flag).unwrap();
        assert!(late >= Duration::from_secs(5));
    }

    #[test]
    fn ctrl_c_ends_the_wait() {
        let flag = AtomicBool::new(true);
        let far = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(wait_until(far, &flag), Err(()));
    }

    #[test]
    fn a_near_time_is_waited_for() {
        let flag = AtomicBool::new(false);
        let at = SystemTime::now() + Duration::from_millis(120);
        wait_until(at, &flag).unwrap();
        assert!(SystemTime::now() >= at);
    }
}
