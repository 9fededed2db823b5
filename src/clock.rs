//! Wall-clock times as RFC 3339 UTC text, and the client host's name and cores: what the record, the
//! `--start-at` messages and the shard notes say about when and where a run happened.
//!
//! Why hand-written: the record needs one format (`2026-01-02T03:04:05.678Z`, UTC, milliseconds)
//! from `SystemTime`; the civil-from-days conversion is a few lines of integer arithmetic
//! (Howard Hinnant's published algorithm), not worth a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC). Times before 1970 read as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// (year, month 1..=12, day 1..=31) of the day `days` after 1970-01-01 (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // 0..=365
    let mp = (5 * doy + 2) / 153; // March-based month, 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// This machine's host name (`gethostname`); empty if it cannot be read.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the valid, exclusively borrowed
    // buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The cores this process may run on (affinity and cgroup limits included).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(secs: u64, millis: u64) -> String {
        rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
        assert_eq!(at(951_827_696, 789), "2000-02-29T12:34:56.789Z");
        // The last second of 1999, and 2100-03-01 (2100 is not a leap year).
        assert_eq!(at(946_684_799, 999), "1999-12-31T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        assert_eq!(at(1_767_225_600, 5), "2026-01-01T00:00:00.005Z");
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        // Walk 1970..2400 day by day: the date must advance by exactly one calendar day.
        let mut prev = civil_from_days(0);
        for d in 1..(430 * 366) {
            let cur = civil_from_days(d);
            let next_day = (prev.0, prev.1, prev.2 + 1);
            let next_month = (prev.0, prev.1 + 1, 1);
            let next_year = (prev.0 + 1, 1, 1);
            assert!(
                cur == next_day || cur == next_month || cur == next_year,
                "{prev:?} -> {cur:?}"
            );
            prev = cur;
        }
    }

    #[test]
    fn host_facts() {
        assert!(!hostname().is_empty());
        assert!(cores() >= 1);
    }
}
