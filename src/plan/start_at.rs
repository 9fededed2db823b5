//! `--start-at TIME`: the wall-clock instant at which every shard begins its measured run.
//!
//! Why wall-clock time and not a barrier: the shards run on machines that share nothing but the
//! network to the server and (we assume) NTP-synchronised clocks, so an agreed instant is the one
//! coordination that needs no coordinator. Clock error between machines (typically a few ms under
//! NTP) becomes start skew; each shard records how late it actually started (`shard.start_offset_s`
//! in the record) so the skew is visible rather than silent.
//!
//! The forms accepted and their reading are `timestamp`'s (`timestamp::parse_time`); this module
//! adds only what makes a start time sensible.

use std::time::{Duration, SystemTime};

use crate::timestamp::{parse_time, rfc3339};

/// How far ahead a start may be: further is more likely a typo (a wrong date) than intent.
pub const MAX_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// `text` as an instant, checked against `now`: a time already past, or more than
/// [`MAX_AHEAD`] away, is an error (one line, naming the option and what was wrong).
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let at = parse_time(text).ok_or_else(|| {
        format!(
            "--start-at {text:?}: expected an RFC 3339 time (2026-01-02T03:04:05Z, with Z or an \
             offset) or Unix seconds"
        )
    })?;
    match at.duration_since(now) {
        Err(past) => Err(format!(
            "--start-at {text:?} is {:.3} s in the past (now is {})",
            past.duration().as_secs_f64(),
            rfc3339(now)
        )),
        Ok(ahead) if ahead > MAX_AHEAD => Err(format!(
            "--start-at {text:?} is more than a day away ({:.0} s); start times must be within \
             24 hours",
            ahead.as_secs_f64()
        )),
        Ok(_) => Ok(at),
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    #[test]
    fn past_and_far_future_are_errors() {
        let now = at(1_767_225_600, 0);
        assert_eq!(parse_start_at("1767225610", now), Ok(at(1_767_225_610, 0)));
        let e = parse_start_at("1767225590", now).unwrap_err();
        assert!(e.contains("in the past") && !e.contains('\n'), "{e}");
        let e = parse_start_at("2026-01-03T00:00:00Z", now).unwrap_err();
        assert!(e.contains("more than a day"), "{e}");
        let e = parse_start_at("tomorrow", now).unwrap_err();
        assert!(e.starts_with("--start-at \"tomorrow\""), "{e}");
    }
}
