//! Protocol errors reported by the reply scanner and the [`Value`](crate::Value) parser.
//!
//! Owns: the [`ProtocolError`] type and its one-line `Display`.
//! Must not: allocate to build or display an error, or carry borrowed data (errors outlive buffers).
//! Invariant: every variant is produced at the first byte (in stream order) that makes the input
//! invalid, so the scanner and `Value::parse` report the same variant for the same bad input
//! (except the variants documented as `Value::parse`-only).

use std::fmt;

use crate::MAX_DEPTH;

/// A violation of the RESP2/RESP3 wire format. After any of these the byte stream cannot be
/// framed any further: the connection should be dropped (and a [`Scanner`](crate::Scanner) reset).
///
/// Variants that carry a `u8` carry the *type byte* of the offending header (for example `b'$'`),
/// which `Display` turns into a name ("bulk string").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// A byte that is not a RESP type byte was found where a reply (or an element) must begin.
    UnexpectedByte(u8),
    /// A header line ended with a bare `\n` (no `\r` before it), or a header line was empty.
    LineNotTerminated,
    /// The length/count of a header (`$ * = ! % ~ > |`) is not a decimal integer, is negative
    /// (other than `-1` for `$` and `*`), or is below the type's minimum (`=` needs 4 bytes).
    InvalidLength(u8),
    /// The length/count of a header is larger than [`MAX_LEN`](crate::MAX_LEN).
    LengthTooLarge(u8),
    /// A `$?`/`*?`-style streamed string or aggregate header (RESP3 streaming is not supported).
    StreamedNotSupported,
    /// A bulk-like payload (`$ = !`) was not followed by `\r\n`.
    PayloadNotTerminated(u8),
    /// A `:` line that is not a valid `i64`.
    InvalidInteger,
    /// A `#` line other than `t` or `f`.
    InvalidBoolean,
    /// A `_` line with content.
    InvalidNull,
    /// Aggregates nested deeper than [`MAX_DEPTH`] levels.
    TooDeep,
    /// (`Value::parse` only) a `,` line that is not a floating-point number.
    InvalidDouble,
    /// (`Value::parse` only) a `=` payload that does not start with a 3-byte format and `:`.
    InvalidVerbatim,
}

/// Human-readable name of the header introduced by `type_byte`.
pub(crate) fn type_name(type_byte: u8) -> &'static str {
    match type_byte {
        b'+' => "simple string",
        b'-' => "error",
        b':' => "integer",
        b'$' => "bulk string",
        b'*' => "array",
        b'_' => "null",
        b',' => "double",
        b'#' => "boolean",
        b'(' => "big number",
        b'=' => "verbatim string",
        b'!' => "blob error",
        b'%' => "map",
        b'~' => "set",
        b'>' => "push",
        b'|' => "attribute",
        _ => "unknown",
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("protocol error: ")?;
        match *self {
            Self::UnexpectedByte(b) => {
                write!(
                    f,
                    "unexpected byte {b:#04x} where a reply type was expected"
                )
            }
            Self::LineNotTerminated => f.write_str("header line not terminated by CRLF"),
            Self::InvalidLength(t) => write!(f, "invalid length in {} header", type_name(t)),
            Self::LengthTooLarge(t) => write!(f, "length in {} header too large", type_name(t)),
            Self::StreamedNotSupported => f.write_str("streamed aggregates not supported"),
            Self::PayloadNotTerminated(t) => write!(f, "{} not terminated by CRLF", type_name(t)),
            Self::InvalidInteger => f.write_str("invalid integer reply"),
            Self::InvalidBoolean => f.write_str("invalid boolean reply"),
            Self::InvalidNull => f.write_str("invalid null reply"),
            Self::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
            Self::InvalidDouble => f.write_str("invalid double reply"),
            Self::InvalidVerbatim => f.write_str("verbatim string without a format prefix"),
        }
    }
}

impl std::error::Error for ProtocolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_messages() {
        let cases: [(ProtocolError, &str); 6] = [
            (
                ProtocolError::UnexpectedByte(0x41),
                "protocol error: unexpected byte 0x41 where a reply type was expected",
            ),
            (
                ProtocolError::InvalidLength(b'$'),
                "protocol error: invalid length in bulk string header",
            ),
            (
                ProtocolError::TooDeep,
                "protocol error: nesting deeper than 32 levels",
            ),
            (
                ProtocolError::PayloadNotTerminated(b'$'),
                "protocol error: bulk string not terminated by CRLF",
            ),
            (
                ProtocolError::UnexpectedByte(0x0a),
                "protocol error: unexpected byte 0x0a where a reply type was expected",
            ),
            (
                ProtocolError::LengthTooLarge(b'%'),
                "protocol error: length in map header too large",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }
}
