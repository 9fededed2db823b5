//! Header-line framing shared by the [`Scanner`](crate::Scanner) and [`Value::parse`](crate::Value::parse).
//!
//! Owns: recognising type bytes, finding the CRLF that ends a header line, and validating the
//! line's content (lengths, counts, integers, booleans, nulls).
//! Must not: allocate, look at bulk payloads, or keep state; both parsers call [`parse_header`] so
//! that they frame (and reject) byte streams identically.
//! Invariants: a header is only ever reported once its whole line, CRLF included, is in the buffer;
//! an unknown type byte is reported as soon as it is seen, without waiting for a line end.

use crate::{Kind, MAX_LEN, ProtocolError};

/// One decoded header line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Header {
    /// `+ - , (`: a value that is the line itself; `start..end` is its content in the buffer.
    Line {
        kind: Kind,
        start: usize,
        end: usize,
    },
    /// `:`
    Integer(i64),
    /// `#`
    Boolean(bool),
    /// `_`, `$-1`, `*-1`
    Null,
    /// `$ = !`: a payload of `len` bytes plus CRLF follows the header.
    Blob { kind: Kind, type_byte: u8, len: u64 },
    /// `* % ~ >`: `count` elements follow (already doubled for maps).
    Aggregate { kind: Kind, count: u64 },
    /// `|`: `count` elements (already doubled) follow, then the value the attribute decorates.
    Attribute { count: u64 },
}

/// Whether `b` starts a reply we understand.
#[inline]
fn is_type_byte(b: u8) -> bool {
    matches!(
        b,
        b'+' | b'-'
            | b':'
            | b'$'
            | b'*'
            | b'_'
            | b','
            | b'#'
            | b'('
            | b'='
            | b'!'
            | b'%'
            | b'~'
            | b'>'
            | b'|'
    )
}

/// Bytes checked one by one before handing the search to `memchr`: header lines are usually a
/// few bytes long, and a plain loop beats `memchr`'s setup cost on those.
const SHORT_LINE: usize = 16;

/// Index of the first `\n` in `hay`.
#[inline(always)]
pub(crate) fn find_lf(hay: &[u8]) -> Option<usize> {
    let short = hay.len().min(SHORT_LINE);
    if let Some(i) = hay[..short].iter().position(|&b| b == b'\n') {
        return Some(i);
    }
    if hay.len() > SHORT_LINE {
        memchr::memchr(b'\n', &hay[SHORT_LINE..]).map(|i| i + SHORT_LINE)
    } else {
        None
    }
}

/// Parses the header line starting at `buf[pos]` (`pos < buf.len()`).
///
/// Returns `Ok(None)` when the line is not complete yet (and its type byte is valid), otherwise the
/// header and the position just after its CRLF.
#[inline(always)]
pub(crate) fn parse_header(
    buf: &[u8],
    pos: usize,
) -> Result<Option<(Header, usize)>, ProtocolError> {
    let t = buf[pos];
    let start = pos + 1;
    let Some(i) = find_lf(&buf[start..]) else {
        return if is_type_byte(t) {
            Ok(None)
        } else {
            Err(ProtocolError::UnexpectedByte(t))
        };
    };
    let nl = start + i;
    // `nl > start` guarantees the `\r` we look at is not the type byte itself.
    if nl == start || buf[nl - 1] != b'\r' {
        return Err(if is_type_byte(t) {
            ProtocolError::LineNotTerminated
        } else {
            ProtocolError::UnexpectedByte(t)
        });
    }
    let end = nl - 1;
    let line = &buf[start..end];
    let header = match t {
        b'+' => Header::Line {
            kind: Kind::SimpleString,
            start,
            end,
        },
        b'-' => Header::Line {
            kind: Kind::Error,
            start,
            end,
        },
        b',' => Header::Line {
            kind: Kind::Double,
            start,
            end,
        },
        b'(' => Header::Line {
            kind: Kind::BigNumber,
            start,
            end,
        },
        b':' => Header::Integer(parse_i64(line).ok_or(ProtocolError::InvalidInteger)?),
        b'$' => match parse_len(line, t, true)? {
            Some(len) => Header::Blob {
                kind: Kind::BulkString,
                type_byte: t,
                len,
            },
            None => Header::Null,
        },
        b'*' => match parse_len(line, t, true)? {
            Some(count) => Header::Aggregate {
                kind: Kind::Array,
                count,
            },
            None => Header::Null,
        },
        b'=' => match parse_len(line, t, false)? {
            // "xxx:" is mandatory, so a verbatim payload is at least 4 bytes.
            Some(len) if len >= 4 => Header::Blob {
                kind: Kind::VerbatimString,
                type_byte: t,
                len,
            },
            _ => return Err(ProtocolError::InvalidLength(t)),
        },
        b'!' => Header::Blob {
            kind: Kind::BlobError,
            type_byte: t,
            len: count(line, t)?,
        },
        b'%' => Header::Aggregate {
            kind: Kind::Map,
            count: 2 * count(line, t)?,
        },
        b'~' => Header::Aggregate {
            kind: Kind::Set,
            count: count(line, t)?,
        },
        b'>' => Header::Aggregate {
            kind: Kind::Push,
            count: count(line, t)?,
        },
        b'|' => Header::Attribute {
            count: 2 * count(line, t)?,
        },
        b'#' => match line {
            b"t" => Header::Boolean(true),
            b"f" => Header::Boolean(false),
            _ => return Err(ProtocolError::InvalidBoolean),
        },
        b'_' => {
            if !line.is_empty() {
                return Err(ProtocolError::InvalidNull);
            }
            Header::Null
        }
        _ => return Err(ProtocolError::UnexpectedByte(t)),
    };
    Ok(Some((header, nl + 1)))
}

/// A length that must not be `-1`.
#[inline]
fn count(line: &[u8], t: u8) -> Result<u64, ProtocolError> {
    parse_len(line, t, false)?.ok_or(ProtocolError::InvalidLength(t))
}

/// Parses a non-negative decimal length, or `-1` (→ `None`) when `allow_null`.
///
/// `?` (a RESP3 streamed header) is [`ProtocolError::StreamedNotSupported`]; anything else that is
/// not a non-empty run of ASCII digits is [`ProtocolError::InvalidLength`]; a value above
/// [`MAX_LEN`] is [`ProtocolError::LengthTooLarge`].
#[inline(always)]
fn parse_len(line: &[u8], t: u8, allow_null: bool) -> Result<Option<u64>, ProtocolError> {
    if line.is_empty() {
        return Err(ProtocolError::InvalidLength(t));
    }
    let mut n: u64 = 0;
    for &b in line {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return match line {
                b"-1" if allow_null => Ok(None),
                b"?" => Err(ProtocolError::StreamedNotSupported),
                _ => Err(ProtocolError::InvalidLength(t)),
            };
        }
        // Clamping keeps `n * 10 + 9` far from overflow however many digits there are.
        n = (n * 10 + u64::from(d)).min(MAX_LEN + 1);
    }
    if n > MAX_LEN {
        return Err(ProtocolError::LengthTooLarge(t));
    }
    Ok(Some(n))
}

/// Parses `[+|-]digits` as an `i64`; `None` if malformed or out of range.
#[inline]
pub(crate) fn parse_i64(line: &[u8]) -> Option<i64> {
    let (neg, digits) = match line.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, line),
    };
    if digits.is_empty() {
        return None;
    }
    let mut mag: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        mag = mag.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    if neg {
        if mag > i64::MIN.unsigned_abs() {
            return None;
        }
        Some(0i64.wrapping_sub_unsigned(mag))
    } else {
        i64::try_from(mag).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i64_parsing() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-0"), Some(0));
        assert_eq!(parse_i64(b"+17"), Some(17));
        assert_eq!(parse_i64(b"-17"), Some(-17));
        assert_eq!(parse_i64(b"0009"), Some(9));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"99999999999999999999999"), None);
        for bad in [&b""[..], b"-", b"+", b"1a", b" 1", b"1 ", b"--1", b"1.0"] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn len_parsing() {
        assert_eq!(parse_len(b"0", b'$', true), Ok(Some(0)));
        assert_eq!(parse_len(b"600", b'$', true), Ok(Some(600)));
        assert_eq!(parse_len(b"-1", b'$', true), Ok(None));
        assert_eq!(
            parse_len(b"-1", b'!', false),
            Err(ProtocolError::InvalidLength(b'!'))
        );
        assert_eq!(
            parse_len(b"?", b'*', true),
            Err(ProtocolError::StreamedNotSupported)
        );
        assert_eq!(
            parse_len(b"", b'$', true),
            Err(ProtocolError::InvalidLength(b'$'))
        );
        assert_eq!(
            parse_len(b"-2", b'$', true),
            Err(ProtocolError::InvalidLength(b'$'))
        );
        assert_eq!(
            parse_len(b"+1", b'$', true),
            Err(ProtocolError::InvalidLength(b'$'))
        );
        assert_eq!(
            parse_len(b"1x", b'$', true),
            Err(ProtocolError::InvalidLength(b'$'))
        );
        assert_eq!(parse_len(b"1099511627776", b'$', true), Ok(Some(MAX_LEN)));
        assert_eq!(
            parse_len(b"1099511627777", b'*', true),
            Err(ProtocolError::LengthTooLarge(b'*'))
        );
        assert_eq!(
            parse_len(b"999999999999999999999999999999", b'*', true),
            Err(ProtocolError::LengthTooLarge(b'*'))
        );
        // A bad byte anywhere wins over the magnitude.
        assert_eq!(
            parse_len(b"999999999999999999999999999999x", b'*', true),
            Err(ProtocolError::InvalidLength(b'*'))
        );
    }

    #[test]
    fn find_lf_on_both_sides_of_the_short_scan() {
        for len in 0..40 {
            for at in 0..len {
                let mut hay = vec![b'x'; len];
                hay[at] = b'\n';
                if at + 1 < len {
                    hay[len - 1] = b'\n';
                }
                assert_eq!(find_lf(&hay), Some(at), "len {len} at {at}");
            }
            assert_eq!(find_lf(&vec![b'\r'; len]), None);
        }
    }

    #[test]
    fn header_waits_for_line_but_not_for_bad_type_byte() {
        assert_eq!(parse_header(b"$12", 0), Ok(None));
        assert_eq!(parse_header(b"$12\r", 0), Ok(None));
        assert_eq!(
            parse_header(b"A12", 0),
            Err(ProtocolError::UnexpectedByte(b'A'))
        );
        assert_eq!(
            parse_header(b"+\n", 0),
            Err(ProtocolError::LineNotTerminated)
        );
        assert_eq!(
            parse_header(b"+a\n", 0),
            Err(ProtocolError::LineNotTerminated)
        );
        assert_eq!(
            parse_header(b"\r\n", 0),
            Err(ProtocolError::UnexpectedByte(b'\r'))
        );
        assert_eq!(
            parse_header(b"xx+OK\r\n", 2),
            Ok(Some((
                Header::Line {
                    kind: Kind::SimpleString,
                    start: 3,
                    end: 5
                },
                7
            )))
        );
    }
}
