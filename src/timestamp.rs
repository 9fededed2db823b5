//! Wall-clock instants as text and back: RFC 3339 UTC text from `SystemTime` (what the record, the
//! `--start-at` messages and the report's outage times say about when something happened), and
//! RFC 3339 or Unix-seconds text to `SystemTime` (`--start-at`, and `merge` reading records).
//!
//! Why hand-written: the record needs one format (`2026-01-02T03:04:05.678Z`, UTC, milliseconds,
//! or microseconds where shards compare start times) and `--start-at` a few input forms; the
//! civil-date conversions both ways are a few lines of integer arithmetic (Howard Hinnant's
//! published `civil_from_days` and `days_from_civil`), not worth a date-time dependency. Both
//! directions live here so a format and its reader cannot drift apart.
//!
//! Accepted input forms: RFC 3339 with `Z` or a numeric offset, fractional seconds allowed
//! (`2026-01-02T03:04:05.250Z`, `2026-01-02T04:04:05+01:00`, a space instead of `T`), or Unix
//! seconds, integer or fractional (`1767323045`, `1767323045.5`; what `date +%s` prints).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// RFC 3339 with microseconds: start times are compared across shards, where milliseconds are
/// coarse next to a few-ms NTP skew.
pub fn rfc3339_micros(t: SystemTime) -> String {
    let ms = rfc3339(t);
    let micros = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_micros() % 1000);
    // `…SS.mmmZ` → `…SS.mmmuuuZ`.
    format!("{}{micros:03}Z", &ms[..ms.len() - 1])
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
fn parse_rfc3339(t: &str) -> Option<SystemTime> {
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

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    fn text_at(secs: u64, millis: u64) -> String {
        rfc3339(at(secs, millis))
    }

    #[test]
    fn known_instants() {
        assert_eq!(text_at(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
        assert_eq!(text_at(951_827_696, 789), "2000-02-29T12:34:56.789Z");
        // The last second of 1999, and 2100-03-01 (2100 is not a leap year).
        assert_eq!(text_at(946_684_799, 999), "1999-12-31T23:59:59.999Z");
        assert_eq!(text_at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        assert_eq!(text_at(1_767_225_600, 5), "2026-01-01T00:00:00.005Z");
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
    fn micros_extend_the_millisecond_text() {
        let t = UNIX_EPOCH + Duration::from_micros(1_767_225_600_123_456);
        assert_eq!(rfc3339_micros(t), "2026-01-01T00:00:00.123456Z");
        let back = parse_time(&rfc3339_micros(t));
        assert_eq!(back, Some(t));
    }
}
