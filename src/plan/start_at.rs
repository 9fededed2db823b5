//! `--start-at TIME`: the wall-clock instant at which every shard begins its measured run.
//!
//! Why wall-clock time and not a barrier: the shards run on machines that share nothing but the
//! network to the server and (we assume) NTP-synchronised clocks, so an agreed instant is the one
//! coordination that needs no coordinator. Clock error between machines (typically a few ms under
//! NTP) becomes start skew; each shard records how late it actually started (`shard.start_offset_s`
//! in the record) so the skew is visible rather than silent.
//!
//! Accepted forms: RFC 3339 with `Z` or a numeric offset, fractional seconds allowed
//! (`2026-01-02T03:04:05.250Z`, `2026-01-02T04:04:05+01:00`, a space instead of `T`), or Unix
//! seconds, integer or fractional (`1767323045`, `1767323045.5`; what `date +%s` prints). The
//! civil-date arithmetic is Howard Hinnant's `days_from_civil`, the inverse of the formatter's
//! `civil_from_days` in `record::clock`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
            crate::clock::rfc3339(now)
        )),
        Ok(ahead) if ahead > MAX_AHEAD => Err(format!(
            "--start-at {text:?} is more than a day away ({:.0} s); start times must be within \
             24 hours",
            ahead.as_secs_f64()
        )),
        Ok(_) => Ok(at),
    }
}

/// An RFC 3339 time or Unix seconds; `None` if it is neither.
pub fn parse_time(text: &str) -> Option<SystemTime> {
    let t = text.trim();
    if t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return parse_unix(t);
    }
    parse_rfc3339(t)
}

/// `1767323045` or `1767323045.25`.
fn parse_unix(t: &str) -> Option<SystemTime> {
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() {
        return None;
    }
    let secs: u64 = whole.parse().ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs) + fraction(frac)?)
}

/// The digits after a decimal point as a duration (nanosecond precision, further digits dropped).
fn fraction(digits: &str) -> Option<Duration> {
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut nanos = 0u32;
    for (i, b) in digits.bytes().take(9).enumerate() {
        nanos += u32::from(b - b'0') * 10u32.pow(8 - i as u32);
    }
    Some(Duration::from_nanos(u64::from(nanos)))
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse_rfc3339(t: &str) -> Option<SystemTime> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    // 60 is a leap second: read as the next second's start, as POSIX time does.
    if hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let rest = &t[19..];
    let (frac, zone) = match rest.strip_prefix('.') {
        Some(r) => {
            let end = r.find(|c: char| !c.is_ascii_digit())?;
            if end == 0 {
                return None;
            }
            (fraction(&r[..end])?, &r[end..])
        }
        None => (Duration::ZERO, rest),
    };
    let offset_s = zone_offset(zone)?;
    let days = days_from_civil(year, month as u32, day as u32);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_s;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs) + frac)
}

/// `Z` → 0, `+01:00` → 3600, `-05:30` → -19800 (seconds east of UTC).
fn zone_offset(zone: &str) -> Option<i64> {
    if zone.eq_ignore_ascii_case("z") {
        return Some(0);
    }
    let b = zone.as_bytes();
    if b.len() != 6 || b[3] != b':' {
        return None;
    }
    let sign = match b[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let h: i64 = zone.get(1..3)?.parse().ok()?;
    let m: i64 = zone.get(4..6)?.parse().ok()?;
    if h > 23 || m > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12); // March-based month, 0..=11
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::rfc3339;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    #[test]
    fn rfc3339_forms() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(at(0, 0)));
        assert_eq!(
            parse_time("2000-02-29T12:34:56.789Z"),
            Some(at(951_827_696, 789))
        );
        assert_eq!(
            parse_time("2000-02-29T13:34:56.789+01:00"),
            Some(at(951_827_696, 789))
        );
        assert_eq!(
            parse_time("2000-02-29 07:04:56.789-05:30"),
            Some(at(951_827_696, 789))
        );
        assert_eq!(
            parse_time("2026-01-01t00:00:00.005z"),
            Some(at(1_767_225_600, 5))
        );
    }

    #[test]
    fn unix_seconds() {
        assert_eq!(parse_time("1767225600"), Some(at(1_767_225_600, 0)));
        assert_eq!(parse_time("1767225600.25"), Some(at(1_767_225_600, 250)));
        assert_eq!(parse_time(".5"), None);
    }

    #[test]
    fn the_formatter_and_the_parser_agree_over_centuries() {
        // Every 7919th second-ish day from 1970 to about 2400, with milliseconds.
        let mut s = 0u64;
        while s < 13_000_000_000 {
            let t = at(s, s % 1000);
            assert_eq!(parse_time(&rfc3339(t)), Some(t), "{}", rfc3339(t));
            s += 86_400 * 37 + 7919;
        }
    }

    #[test]
    fn malformed_times_are_refused() {
        for bad in [
            "",
            "soon",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00.Z",
            "2026-01-01",
            "1e9",
            "-5",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
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
