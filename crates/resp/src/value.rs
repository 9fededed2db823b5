//! The owned reply tree: [`Value`], its parser and its encoder.
//!
//! Owns: building and encoding whole values, for tests, fixtures and low-rate control connections
//! (`CONFIG GET`, `CLUSTER SLOTS`, ...).
//! Must not: be used on the benchmark's hot path (it allocates per element; use the
//! [`Scanner`](crate::Scanner) there), or frame bytes differently from the scanner: both go through
//! the same header parser, and `Value::parse` accepts a prefix of a stream exactly when the scanner
//! reports a reply of the same length there (modulo the two checks only this parser can make, see
//! [`ProtocolError::InvalidDouble`] and [`ProtocolError::InvalidVerbatim`]).
//! Invariants: parsing never recurses more than [`MAX_DEPTH`] levels (chains of attributes are
//! handled iteratively), and never pre-allocates more than the input could possibly hold.

use std::io::Write as _;

use crate::encode::{push_header, push_header_i64};
use crate::wire::{Header, parse_header};
use crate::{Kind, MAX_DEPTH, ProtocolError};

/// An owned RESP2/RESP3 value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `+text`
    SimpleString(Vec<u8>),
    /// `-text` (the whole line after `-`, error code included)
    Error(Vec<u8>),
    /// `:n`
    Integer(i64),
    /// `$len` + payload
    BulkString(Vec<u8>),
    /// `_`, `$-1` or `*-1`
    Null,
    /// `*n` + n values
    Array(Vec<Value>),
    /// `%n` + n key/value pairs
    Map(Vec<(Value, Value)>),
    /// `~n` + n values
    Set(Vec<Value>),
    /// `>n` + n values
    Push(Vec<Value>),
    /// `,double`
    Double(f64),
    /// `#t` / `#f`
    Boolean(bool),
    /// `(digits`, kept as the raw line
    BigNumber(Vec<u8>),
    /// `=len` + `fmt:text`
    VerbatimString {
        /// The three-byte format, e.g. `txt` or `mkd`.
        format: [u8; 3],
        /// The text after `fmt:`.
        text: Vec<u8>,
    },
    /// `!len` + payload
    BlobError(Vec<u8>),
    /// `|n` + n key/value pairs, decorating the value that follows them.
    Attribute {
        /// The attribute's key/value pairs.
        attributes: Vec<(Value, Value)>,
        /// The value the attribute decorates ([`Value::parse`] never nests an `Attribute` directly
        /// here; it merges a chain of attributes into one wrapper).
        value: Box<Value>,
    },
}

/// Pre-allocation cap for aggregates: a count from the wire is only trusted as far as the input
/// could hold that many elements (each takes at least 3 bytes).
#[inline]
fn capacity(count: u64, remaining: usize) -> usize {
    count.min((remaining / 3) as u64) as usize
}

impl Value {
    /// Parses one complete value from the start of `buf`: `Ok(None)` if `buf` holds only part of
    /// it, `Ok(Some((value, consumed)))` when complete. Attributes are kept as
    /// [`Value::Attribute`] wrappers; consecutive attributes before one value are merged into a
    /// single wrapper (so its `value` is never itself an `Attribute`).
    ///
    /// ```
    /// use resp::Value;
    /// let (v, n) = Value::parse(b"*2\r\n:1\r\n$1\r\na\r\nextra").unwrap().unwrap();
    /// assert_eq!(v, Value::Array(vec![Value::Integer(1), Value::BulkString(b"a".to_vec())]));
    /// assert_eq!(n, 15);
    /// assert_eq!(Value::parse(b"*2\r\n:1\r\n").unwrap(), None);
    /// ```
    pub fn parse(buf: &[u8]) -> Result<Option<(Value, usize)>, ProtocolError> {
        parse_at(buf, 0, 0)
    }

    /// Encodes as RESP3, using the RESP2 shapes where they exist (`+ - : $ *`). `Null` encodes as
    /// `_\r\n`. Strings are written as given: a simple string or error containing CR/LF produces
    /// output that does not parse back.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::SimpleString(s) => push_line(out, b'+', s),
            Value::Error(s) => push_line(out, b'-', s),
            Value::BigNumber(s) => push_line(out, b'(', s),
            Value::Integer(n) => push_header_i64(out, b':', *n),
            Value::BulkString(s) => push_blob(out, b'$', s),
            Value::BlobError(s) => push_blob(out, b'!', s),
            Value::Null => out.extend_from_slice(b"_\r\n"),
            Value::Boolean(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Value::Double(d) => {
                out.push(b',');
                if d.is_nan() {
                    out.extend_from_slice(b"nan");
                } else if d.is_infinite() {
                    out.extend_from_slice(if *d > 0.0 { b"inf" } else { b"-inf" });
                } else {
                    // `Debug` is the shortest representation that round-trips, with an exponent
                    // for very large or small magnitudes (writing to a Vec cannot fail).
                    let _ = write!(out, "{d:?}");
                }
                out.extend_from_slice(b"\r\n");
            }
            Value::VerbatimString { format, text } => {
                push_header(out, b'=', text.len() as u64 + 4);
                out.extend_from_slice(format);
                out.push(b':');
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
            Value::Array(items) => push_items(out, b'*', items),
            Value::Set(items) => push_items(out, b'~', items),
            Value::Push(items) => push_items(out, b'>', items),
            Value::Map(pairs) => push_pairs(out, b'%', pairs),
            Value::Attribute { attributes, value } => {
                push_pairs(out, b'|', attributes);
                value.encode(out);
            }
        }
    }

    /// The kind the [`Scanner`](crate::Scanner) reports for this value; for an attribute, the kind
    /// of the value it decorates.
    pub fn kind(&self) -> Kind {
        match self {
            Value::SimpleString(_) => Kind::SimpleString,
            Value::Error(_) => Kind::Error,
            Value::Integer(_) => Kind::Integer,
            Value::BulkString(_) => Kind::BulkString,
            Value::Null => Kind::Null,
            Value::Array(_) => Kind::Array,
            Value::Map(_) => Kind::Map,
            Value::Set(_) => Kind::Set,
            Value::Push(_) => Kind::Push,
            Value::Double(_) => Kind::Double,
            Value::Boolean(_) => Kind::Boolean,
            Value::BigNumber(_) => Kind::BigNumber,
            Value::VerbatimString { .. } => Kind::VerbatimString,
            Value::BlobError(_) => Kind::BlobError,
            Value::Attribute { value, .. } => value.kind(),
        }
    }

    /// Convenience for control connections: the bytes of a bulk string, simple string or verbatim
    /// string (its text, without the format) as `&str`, if they are UTF-8. `None` for other kinds
    /// (an attribute is not looked through).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::SimpleString(s) | Value::BulkString(s) => std::str::from_utf8(s).ok(),
            Value::VerbatimString { text, .. } => std::str::from_utf8(text).ok(),
            _ => None,
        }
    }
}

fn push_line(out: &mut Vec<u8>, type_byte: u8, s: &[u8]) {
    out.push(type_byte);
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

fn push_blob(out: &mut Vec<u8>, type_byte: u8, s: &[u8]) {
    push_header(out, type_byte, s.len() as u64);
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

fn push_items(out: &mut Vec<u8>, type_byte: u8, items: &[Value]) {
    push_header(out, type_byte, items.len() as u64);
    for v in items {
        v.encode(out);
    }
}

fn push_pairs(out: &mut Vec<u8>, type_byte: u8, pairs: &[(Value, Value)]) {
    push_header(out, type_byte, pairs.len() as u64);
    for (k, v) in pairs {
        k.encode(out);
        v.encode(out);
    }
}

type Parsed<T> = Result<Option<(T, usize)>, ProtocolError>;

/// Parses the value at `buf[pos..]` with `depth` aggregates already open around it.
fn parse_at(buf: &[u8], mut pos: usize, depth: usize) -> Parsed<Value> {
    // Attributes decorating this value. A chain of them is merged into one wrapper and read in a
    // loop: neither parsing nor dropping a long chain may exhaust the stack.
    let mut attributes: Option<Vec<(Value, Value)>> = None;
    let value = loop {
        if pos >= buf.len() {
            return Ok(None);
        }
        let Some((header, next)) = parse_header(buf, pos)? else {
            return Ok(None);
        };
        pos = next;
        let value = match header {
            Header::Line { kind, start, end } => {
                let line = &buf[start..end];
                match kind {
                    Kind::SimpleString => Value::SimpleString(line.to_vec()),
                    Kind::Error => Value::Error(line.to_vec()),
                    Kind::BigNumber => Value::BigNumber(line.to_vec()),
                    _ => Value::Double(parse_double(line)?),
                }
            }
            Header::Integer(n) => Value::Integer(n),
            Header::Boolean(b) => Value::Boolean(b),
            Header::Null => Value::Null,
            Header::Blob {
                kind,
                type_byte,
                len,
            } => {
                let Some((payload, next)) = payload(buf, pos, len, type_byte)? else {
                    return Ok(None);
                };
                pos = next;
                match kind {
                    Kind::BulkString => Value::BulkString(payload.to_vec()),
                    Kind::BlobError => Value::BlobError(payload.to_vec()),
                    _ => match payload {
                        [a, b, c, b':', text @ ..] => Value::VerbatimString {
                            format: [*a, *b, *c],
                            text: text.to_vec(),
                        },
                        _ => return Err(ProtocolError::InvalidVerbatim),
                    },
                }
            }
            Header::Aggregate { kind, count } => {
                if depth == MAX_DEPTH {
                    return Err(ProtocolError::TooDeep);
                }
                if kind == Kind::Map {
                    let Some((pairs, next)) = parse_pairs(buf, pos, count / 2, depth + 1)? else {
                        return Ok(None);
                    };
                    pos = next;
                    Value::Map(pairs)
                } else {
                    let mut items = Vec::with_capacity(capacity(count, buf.len() - pos));
                    for _ in 0..count {
                        let Some((v, next)) = parse_at(buf, pos, depth + 1)? else {
                            return Ok(None);
                        };
                        items.push(v);
                        pos = next;
                    }
                    match kind {
                        Kind::Set => Value::Set(items),
                        Kind::Push => Value::Push(items),
                        _ => Value::Array(items),
                    }
                }
            }
            Header::Attribute { count } => {
                if depth == MAX_DEPTH {
                    return Err(ProtocolError::TooDeep);
                }
                let Some((pairs, next)) = parse_pairs(buf, pos, count / 2, depth + 1)? else {
                    return Ok(None);
                };
                pos = next;
                attributes.get_or_insert_with(Vec::new).extend(pairs);
                continue;
            }
        };
        break value;
    };
    let value = match attributes {
        None => value,
        Some(attributes) => Value::Attribute {
            attributes,
            value: Box::new(value),
        },
    };
    Ok(Some((value, pos)))
}

fn parse_pairs(
    buf: &[u8],
    mut pos: usize,
    pairs: u64,
    depth: usize,
) -> Parsed<Vec<(Value, Value)>> {
    let mut out = Vec::with_capacity(capacity(pairs, (buf.len() - pos) / 2));
    for _ in 0..pairs {
        let Some((k, next)) = parse_at(buf, pos, depth)? else {
            return Ok(None);
        };
        let Some((v, next)) = parse_at(buf, next, depth)? else {
            return Ok(None);
        };
        out.push((k, v));
        pos = next;
    }
    Ok(Some((out, pos)))
}

/// The `len`-byte payload at `buf[pos..]` and the position after its CRLF. Like the scanner, a
/// wrong byte where the CR or LF belongs is an error even before the rest has arrived.
fn payload(buf: &[u8], pos: usize, len: u64, type_byte: u8) -> Parsed<&[u8]> {
    let avail = buf.len() - pos;
    if (avail as u64) <= len {
        return Ok(None);
    }
    let end = pos + len as usize;
    if buf[end] != b'\r' || buf.get(end + 1).is_some_and(|&b| b != b'\n') {
        return Err(ProtocolError::PayloadNotTerminated(type_byte));
    }
    if end + 1 == buf.len() {
        return Ok(None);
    }
    Ok(Some((&buf[pos..end], end + 2)))
}

fn parse_double(line: &[u8]) -> Result<f64, ProtocolError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(ProtocolError::InvalidDouble)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn parse_each_type() {
        let cases: Vec<(&[u8], Value)> = vec![
            (b"+OK\r\n", Value::SimpleString(b"OK".to_vec())),
            (b"-ERR x\r\n", Value::Error(b"ERR x".to_vec())),
            (b":-12\r\n", Value::Integer(-12)),
            (b"$3\r\na\r\n\r\n", Value::BulkString(b"a\r\n".to_vec())),
            (b"$0\r\n\r\n", bulk("")),
            (b"$-1\r\n", Value::Null),
            (b"*-1\r\n", Value::Null),
            (b"_\r\n", Value::Null),
            (b"*0\r\n", Value::Array(vec![])),
            (
                b"*2\r\n$1\r\na\r\n:1\r\n",
                Value::Array(vec![bulk("a"), Value::Integer(1)]),
            ),
            (
                b"%1\r\n+k\r\n#t\r\n",
                Value::Map(vec![(
                    Value::SimpleString(b"k".to_vec()),
                    Value::Boolean(true),
                )]),
            ),
            (b"~1\r\n#f\r\n", Value::Set(vec![Value::Boolean(false)])),
            (
                b">1\r\n+m\r\n",
                Value::Push(vec![Value::SimpleString(b"m".to_vec())]),
            ),
            (b",1.5\r\n", Value::Double(1.5)),
            (b",-inf\r\n", Value::Double(f64::NEG_INFINITY)),
            (b",1e3\r\n", Value::Double(1000.0)),
            (
                b"(123456789012345678901234567890\r\n",
                Value::BigNumber(b"123456789012345678901234567890".to_vec()),
            ),
            (
                b"=7\r\ntxt:abc\r\n",
                Value::VerbatimString {
                    format: *b"txt",
                    text: b"abc".to_vec(),
                },
            ),
            (
                b"=4\r\nmkd:\r\n",
                Value::VerbatimString {
                    format: *b"mkd",
                    text: vec![],
                },
            ),
            (b"!5\r\nERR x\r\n", Value::BlobError(b"ERR x".to_vec())),
            (
                b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
                Value::Attribute {
                    attributes: vec![(Value::SimpleString(b"ttl".to_vec()), Value::Integer(3))],
                    value: Box::new(bulk("v")),
                },
            ),
            (
                // Consecutive attributes are merged.
                b"|1\r\n+a\r\n:1\r\n|0\r\n|1\r\n+b\r\n:2\r\n_\r\n",
                Value::Attribute {
                    attributes: vec![
                        (Value::SimpleString(b"a".to_vec()), Value::Integer(1)),
                        (Value::SimpleString(b"b".to_vec()), Value::Integer(2)),
                    ],
                    value: Box::new(Value::Null),
                },
            ),
        ];
        for (wire, want) in cases {
            let got = Value::parse(wire).unwrap_or_else(|e| panic!("{wire:?}: {e}"));
            assert_eq!(got, Some((want.clone(), wire.len())), "{wire:?}");
            // Every proper prefix is incomplete.
            for cut in 0..wire.len() {
                assert_eq!(
                    Value::parse(&wire[..cut]),
                    Ok(None),
                    "{wire:?} cut at {cut}"
                );
            }
        }
        let (v, _) = Value::parse(b",nan\r\n").unwrap().unwrap();
        assert!(matches!(v, Value::Double(d) if d.is_nan()));
    }

    #[test]
    fn parse_only_errors() {
        assert_eq!(Value::parse(b",x\r\n"), Err(ProtocolError::InvalidDouble));
        assert_eq!(Value::parse(b",\r\n"), Err(ProtocolError::InvalidDouble));
        assert_eq!(
            Value::parse(b"=4\r\ntxt;\r\n"),
            Err(ProtocolError::InvalidVerbatim)
        );
        assert_eq!(
            Value::parse(b"$1\r\nab\r\n"),
            Err(ProtocolError::PayloadNotTerminated(b'$'))
        );
        assert_eq!(
            Value::parse(b"$1\r\na\rx"),
            Err(ProtocolError::PayloadNotTerminated(b'$'))
        );
    }

    #[test]
    fn huge_counts_do_not_preallocate() {
        // 2^40 elements announced, 4 bytes present: must just be incomplete.
        assert_eq!(Value::parse(b"*1099511627776\r\n:1\r\n"), Ok(None));
        assert_eq!(Value::parse(b"%1099511627776\r\n:1\r\n"), Ok(None));
        assert_eq!(Value::parse(b"$1099511627776\r\nabc"), Ok(None));
    }

    #[test]
    fn long_attribute_chain_does_not_recurse() {
        let mut wire = b"|0\r\n".repeat(200_000);
        wire.extend_from_slice(b"+x\r\n");
        let (v, n) = Value::parse(&wire).unwrap().unwrap();
        assert_eq!(n, wire.len());
        let want = Value::Attribute {
            attributes: vec![],
            value: Box::new(Value::SimpleString(b"x".to_vec())),
        };
        assert_eq!(v, want);
    }

    #[test]
    fn encode_each_type() {
        let cases: Vec<(Value, &[u8])> = vec![
            (Value::SimpleString(b"OK".to_vec()), b"+OK\r\n"),
            (Value::Error(b"ERR x".to_vec()), b"-ERR x\r\n"),
            (Value::Integer(i64::MIN), b":-9223372036854775808\r\n"),
            (bulk("ab"), b"$2\r\nab\r\n"),
            (Value::Null, b"_\r\n"),
            (Value::Array(vec![]), b"*0\r\n"),
            (
                Value::Map(vec![(bulk("k"), Value::Null)]),
                b"%1\r\n$1\r\nk\r\n_\r\n",
            ),
            (Value::Set(vec![Value::Integer(1)]), b"~1\r\n:1\r\n"),
            (Value::Push(vec![]), b">0\r\n"),
            (Value::Double(1.5), b",1.5\r\n"),
            (Value::Double(3.0), b",3.0\r\n"),
            (Value::Double(1e300), b",1e300\r\n"),
            (Value::Double(f64::INFINITY), b",inf\r\n"),
            (Value::Double(f64::NEG_INFINITY), b",-inf\r\n"),
            (Value::Double(f64::NAN), b",nan\r\n"),
            (Value::Boolean(true), b"#t\r\n"),
            (Value::BigNumber(b"-1".to_vec()), b"(-1\r\n"),
            (
                Value::VerbatimString {
                    format: *b"txt",
                    text: b"hi".to_vec(),
                },
                b"=6\r\ntxt:hi\r\n",
            ),
            (Value::BlobError(b"E".to_vec()), b"!1\r\nE\r\n"),
            (
                Value::Attribute {
                    attributes: vec![(Value::Integer(1), Value::Integer(2))],
                    value: Box::new(Value::Null),
                },
                b"|1\r\n:1\r\n:2\r\n_\r\n",
            ),
        ];
        for (v, want) in cases {
            let mut out = Vec::new();
            v.encode(&mut out);
            assert_eq!(out, want, "{v:?}: {:?}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn kind_and_as_str() {
        let attr = Value::Attribute {
            attributes: vec![],
            value: Box::new(Value::Push(vec![])),
        };
        assert_eq!(attr.kind(), Kind::Push);
        assert_eq!(attr.as_str(), None);
        assert_eq!(bulk("maxclients").as_str(), Some("maxclients"));
        assert_eq!(Value::SimpleString(b"OK".to_vec()).as_str(), Some("OK"));
        assert_eq!(
            Value::VerbatimString {
                format: *b"txt",
                text: b"t".to_vec()
            }
            .as_str(),
            Some("t")
        );
        assert_eq!(Value::BulkString(vec![0xff]).as_str(), None);
        assert_eq!(Value::Integer(1).as_str(), None);
        assert_eq!(Value::Error(b"ERR".to_vec()).as_str(), None);
    }
}
