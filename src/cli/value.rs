//! One option's value: whole numbers, signed numbers, seconds, paths and text, each checked the
//! same way and refused with the same one-line message (`invalid value "<v>" for <flag>: expected
//! …`). Shared by the option tables' entries and the `-u` URI reader (`uri.rs`); this file
//! imports no other file of `cli` but the error type (paths are checked by the parser, which
//! knows the table).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use super::UsageError;

/// Largest `--duration`/`--warmup`, in seconds (about 115 days).
const MAX_SECONDS: u64 = 10_000_000;
/// Largest `--dbnum` and `-u` db: what the server's `SELECT` accepts.
pub(super) const MAX_DBNUM: u64 = i32::MAX as u64;

/// `invalid value "<v>" for <flag>: expected <expected>`, with the value escaped so the message
/// stays one printable line whatever the user typed.
pub fn invalid_value(flag: &str, value: &OsStr, expected: &str) -> UsageError {
    UsageError(format!(
        "invalid value {:?} for {flag}: expected {expected}",
        value.to_string_lossy()
    ))
}

/// A UTF-8 value (host names, test lists).
pub fn text(flag: &str, v: &OsStr) -> Result<String, UsageError> {
    v.to_str()
        .map(str::to_owned)
        .ok_or_else(|| invalid_value(flag, v, "UTF-8 text"))
}

/// A whole number in `min..=max`: ASCII digits only (no sign, no spaces, no `1e6`).
pub fn whole<T: TryFrom<u64>>(flag: &str, v: &OsStr, min: u64, max: u64) -> Result<T, UsageError> {
    let err = || invalid_value(flag, v, &format!("a whole number from {min} to {max}"));
    let digits = v.as_bytes();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(err());
    }
    let n: u64 = v.to_str().and_then(|s| s.parse().ok()).ok_or_else(err)?;
    if !(min..=max).contains(&n) {
        return Err(err());
    }
    T::try_from(n).map_err(|_| err())
}

/// Any `i64`, optionally negative (`-k` prints back whatever it was given).
pub(super) fn signed(flag: &str, v: &OsStr) -> Result<i64, UsageError> {
    let err = || {
        invalid_value(
            flag,
            v,
            &format!("a whole number from {} to {}", i64::MIN, i64::MAX),
        )
    };
    let bytes = v.as_bytes();
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(err());
    }
    v.to_str().and_then(|s| s.parse().ok()).ok_or_else(err)
}

/// Seconds as a plain decimal (`30`, `0.5`, `.25`, `2.`), greater than 0 and at most
/// [`MAX_SECONDS`]. Parsed exactly (no float rounding); digits past nanoseconds are dropped.
pub fn seconds(flag: &str, v: &OsStr) -> Result<Duration, UsageError> {
    let err = || {
        invalid_value(
            flag,
            v,
            &format!("a number of seconds above 0 and at most {MAX_SECONDS}, e.g. 30 or 0.5"),
        )
    };
    let s = v.to_str().ok_or_else(err)?;
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return Err(err());
    }
    let secs: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| err())?
    };
    let nanos = frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    let d = Duration::new(secs.min(MAX_SECONDS + 1), nanos);
    if d.is_zero() || d > Duration::from_secs(MAX_SECONDS) {
        return Err(err());
    }
    Ok(d)
}

/// `--shard I/N` (I counts from 0, below N): the index and the count.
pub fn shard(text: &str) -> Result<(u64, u64), UsageError> {
    let bad = || {
        UsageError(format!(
            "--shard {text:?}: expected I/N with 0 <= I < N, e.g. 0/4 for the first of four"
        ))
    };
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let index: u64 = i.trim().parse().map_err(|_| bad())?;
    let count: u64 = n.trim().parse().map_err(|_| bad())?;
    if count == 0 || index >= count {
        return Err(bad());
    }
    Ok((index, count))
}
