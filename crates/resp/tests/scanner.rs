//! Scanner behaviour on a fixed set of wire-format replies: every type, every split point,
//! concatenations, malformed input, nesting limits; plus the command encoder.

mod common;

use std::ops::Range;

use common::{ErrorPos, Fed, Seen, bytes, cut, feed};
use resp::{Kind, MAX_DEPTH, ProtocolError, ReplyInfo, Scan, Scanner, Value};

struct Fixture {
    name: &'static str,
    wire: Vec<u8>,
    kind: Kind,
    /// Error text range within `wire` (Error and BlobError only).
    error: Option<Range<usize>>,
}

/// Range of the only occurrence of `text` in `wire`.
fn find(wire: &[u8], text: &[u8]) -> Range<usize> {
    let hits: Vec<usize> = (0..=wire.len() - text.len())
        .filter(|&i| &wire[i..i + text.len()] == text)
        .collect();
    assert_eq!(hits.len(), 1, "{text:?} in {wire:?}");
    hits[0]..hits[0] + text.len()
}

/// Deterministic pseudo-random payload, rich in CR, LF and type bytes.
fn noisy_payload(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678;
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            match x >> 29 {
                0 => b'\r',
                1 => b'\n',
                2 => b"$*%|:+-_"[(x >> 8) as usize % 8],
                _ => (x >> 16) as u8,
            }
        })
        .collect()
}

fn fixtures() -> Vec<Fixture> {
    fn f(name: &'static str, wire: &[u8], kind: Kind) -> Fixture {
        Fixture {
            name,
            wire: wire.to_vec(),
            kind,
            error: None,
        }
    }
    fn e(name: &'static str, wire: &[u8], kind: Kind, text: &[u8]) -> Fixture {
        let error = Some(find(wire, text));
        Fixture {
            name,
            wire: wire.to_vec(),
            kind,
            error,
        }
    }
    let mut large = b"$16411\r\n".to_vec();
    large.extend(noisy_payload(16411));
    large.extend_from_slice(b"\r\n");
    let mut large_in_attr = b"|1\r\n+blob\r\n$3000\r\n".to_vec();
    large_in_attr.extend(noisy_payload(3000));
    large_in_attr.extend_from_slice(b"\r\n*2\r\n=3004\r\ntxt:");
    large_in_attr.extend(noisy_payload(3000));
    large_in_attr.extend_from_slice(b"\r\n:1\r\n");
    let mut deepest = b"*1\r\n".repeat(MAX_DEPTH - 1);
    deepest.extend_from_slice(b"%1\r\n+k\r\n:1\r\n");

    vec![
        // RESP2
        f("simple string", b"+OK\r\n", Kind::SimpleString),
        f("empty simple string", b"+\r\n", Kind::SimpleString),
        f("simple string with bare CR", b"+a\rb\r\n", Kind::SimpleString),
        Fixture { name: "error", wire: b"-ERR unknown command 'x'\r\n".to_vec(), kind: Kind::Error, error: Some(1..24) },
        Fixture { name: "empty error", wire: b"-\r\n".to_vec(), kind: Kind::Error, error: Some(1..1) },
        f("integer", b":1000\r\n", Kind::Integer),
        f("integer min", b":-9223372036854775808\r\n", Kind::Integer),
        f("integer plus sign", b":+7\r\n", Kind::Integer),
        f("bulk", b"$5\r\nhello\r\n", Kind::BulkString),
        f("empty bulk", b"$0\r\n\r\n", Kind::BulkString),
        f("binary bulk", b"$13\r\nbin\r\n\0\r\n\r\nxyz\r\n", Kind::BulkString),
        Fixture { name: "large bulk", wire: large, kind: Kind::BulkString, error: None },
        f("null bulk", b"$-1\r\n", Kind::Null),
        f("null array", b"*-1\r\n", Kind::Null),
        f("empty array", b"*0\r\n", Kind::Array),
        f("array", b"*3\r\n:1\r\n$2\r\nab\r\n+c\r\n", Kind::Array),
        f("nested arrays", b"*2\r\n*2\r\n+a\r\n$1\r\nb\r\n*1\r\n*0\r\n", Kind::Array),
        f("nulls inside array", b"*3\r\n$-1\r\n*-1\r\n_\r\n", Kind::Array),
        f("errors inside array", b"*2\r\n-ERR a\r\n!1\r\nb\r\n", Kind::Array),
        // RESP3
        f("null", b"_\r\n", Kind::Null),
        f("double", b",3.14\r\n", Kind::Double),
        f("double inf", b",-inf\r\n", Kind::Double),
        f("boolean true", b"#t\r\n", Kind::Boolean),
        f("boolean false", b"#f\r\n", Kind::Boolean),
        f("big number", b"(3492890328409238509324850943850943825024385\r\n", Kind::BigNumber),
        f("verbatim", b"=15\r\ntxt:Some string\r\n", Kind::VerbatimString),
        f("verbatim with CRLF", b"=8\r\nmkd:a\r\nb\r\n", Kind::VerbatimString),
        e("blob error", b"!21\r\nSYNTAX invalid syntax\r\n", Kind::BlobError, b"SYNTAX invalid syntax"),
        Fixture { name: "empty blob error", wire: b"!0\r\n\r\n".to_vec(), kind: Kind::BlobError, error: Some(4..4) },
        f("map", b"%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", Kind::Map),
        f("empty map", b"%0\r\n", Kind::Map),
        f("set", b"~3\r\n+a\r\n:1\r\n#t\r\n", Kind::Set),
        f("empty set", b"~0\r\n", Kind::Set),
        f("push", b">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n", Kind::Push),
        f("empty push", b">0\r\n", Kind::Push),
        f(
            "mixed RESP3 nesting",
            b"~2\r\n%2\r\n$1\r\nk\r\n*2\r\n,1.5\r\n(12\r\n=5\r\ntxt:v\r\n~0\r\n>1\r\n_\r\n",
            Kind::Set,
        ),
        f(
            "attribute at top level",
            b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
            Kind::Array,
        ),
        f("empty attribute at top level", b"|0\r\n:1\r\n", Kind::Integer),
        f("attribute chain at top level", b"|1\r\n+a\r\n+b\r\n|0\r\n|1\r\n:1\r\n:2\r\n#f\r\n", Kind::Boolean),
        f("nested attribute", b"*3\r\n:1\r\n:2\r\n|1\r\n+ttl\r\n:3600\r\n:3\r\n", Kind::Array),
        f("attribute before empty array", b"*1\r\n|1\r\n+a\r\n+b\r\n*0\r\n", Kind::Array),
        f("attribute in attribute and map key", b"%1\r\n|1\r\n|1\r\n+x\r\n+y\r\n+a\r\n+b\r\n+k\r\n+v\r\n", Kind::Map),
        f("attribute ends aggregates", b"*1\r\n*1\r\n|1\r\n*1\r\n+a\r\n+b\r\n+c\r\n", Kind::Array),
        e("attribute then error", b"|1\r\n+a\r\n+b\r\n-ERR after attr\r\n", Kind::Error, b"ERR after attr"),
        e("attribute then blob error", b"|0\r\n!3\r\nbad\r\n", Kind::BlobError, b"bad"),
        f("push at top level with map", b">2\r\n+invalidate\r\n%1\r\n+k\r\n*1\r\n$3\r\nkey\r\n", Kind::Push),
        Fixture { name: "large payloads in attribute", wire: large_in_attr, kind: Kind::Array, error: None },
        Fixture { name: "deepest allowed nesting", wire: deepest, kind: Kind::Array, error: None },
    ]
}

fn expected(fx: &Fixture, base: usize) -> Seen {
    Seen {
        end: base + fx.wire.len(),
        kind: fx.kind,
        error: fx
            .error
            .clone()
            .map(|r| ErrorPos::At(base + r.start..base + r.end)),
    }
}

#[test]
fn fixture_names_are_unique_and_cover_every_kind() {
    let fxs = fixtures();
    let mut names: Vec<_> = fxs.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), fxs.len());
    for kind in [
        Kind::SimpleString,
        Kind::Error,
        Kind::Integer,
        Kind::BulkString,
        Kind::Null,
        Kind::Array,
        Kind::Map,
        Kind::Set,
        Kind::Push,
        Kind::Double,
        Kind::Boolean,
        Kind::BigNumber,
        Kind::VerbatimString,
        Kind::BlobError,
    ] {
        assert!(fxs.iter().any(|f| f.kind == kind), "{kind:?}");
    }
}

#[test]
fn each_fixture_in_one_piece() {
    for fx in fixtures() {
        let mut sc = Scanner::new();
        let got = sc.scan(&fx.wire);
        let want = Scan::Reply {
            consumed: fx.wire.len(),
            info: ReplyInfo {
                kind: fx.kind,
                error: fx.error.clone(),
            },
        };
        assert_eq!(got, Ok(want.clone()), "{}", fx.name);
        assert!(!sc.in_progress());
        // Bytes after the reply are not touched (here: the start of the next one, and garbage).
        let mut more = fx.wire.clone();
        more.extend_from_slice(b"+OK\r\n$3\r\nab");
        assert_eq!(
            sc.scan(&more),
            Ok(want.clone()),
            "{} followed by more",
            fx.name
        );
        let mut junk = fx.wire.clone();
        junk.extend_from_slice(b"\xff\xff");
        assert_eq!(
            Scanner::new().scan(&junk),
            Ok(want),
            "{} followed by junk",
            fx.name
        );
        // The owned parser frames it identically.
        let (v, n) = Value::parse(&fx.wire)
            .unwrap_or_else(|e| panic!("{}: {e}", fx.name))
            .expect(fx.name);
        assert_eq!((n, v.kind()), (fx.wire.len(), fx.kind), "{}", fx.name);
        let mut re = Vec::new();
        v.encode(&mut re);
        assert_eq!(Value::parse(&re), Ok(Some((v, re.len()))), "{}", fx.name);
    }
}

#[test]
fn each_fixture_split_at_every_point() {
    for fx in fixtures() {
        let whole = expected(&fx, 0);
        for k in 0..=fx.wire.len() {
            let got = feed(cut(&fx.wire, &[k]));
            let mut want = whole.clone();
            if let Some(r) = &fx.error
                && fx.kind == Kind::BlobError
                && k > r.start
                && k < fx.wire.len()
                && !r.is_empty()
            {
                // Part of the payload was consumed by the first call.
                want.error = Some(ErrorPos::Lost);
            }
            let ok = got.error.is_none()
                && got.pending == 0
                && got.replies.len() == 1
                && (got.replies[0] == want
                    || (fx.error.as_ref().is_some_and(|r| r.is_empty())
                        && common::same_modulo_lost(&got.replies[0], &want)));
            assert!(ok, "{} split at {k}: {got:?}, want {want:?}", fx.name);
        }
    }
}

#[test]
fn each_fixture_byte_by_byte() {
    for fx in fixtures() {
        let got = feed(bytes(&fx.wire));
        let mut want = expected(&fx, 0);
        if fx.kind == Kind::BlobError && fx.error.as_ref().is_some_and(|r| !r.is_empty()) {
            want.error = Some(ErrorPos::Lost);
        }
        assert_eq!(got.error, None, "{}", fx.name);
        assert_eq!(got.pending, 0, "{}", fx.name);
        assert_eq!(got.replies.len(), 1, "{}: {got:?}", fx.name);
        assert!(
            common::same_modulo_lost(&got.replies[0], &want),
            "{}: {got:?} want {want:?}",
            fx.name
        );
        if fx.error.as_ref().is_none_or(|r| !r.is_empty()) {
            assert_eq!(got.replies[0], want, "{}", fx.name);
        }
    }
}

/// All fixtures back to back, and what the replies should be.
fn concatenation() -> (Vec<u8>, Vec<Seen>) {
    let mut stream = Vec::new();
    let mut want = Vec::new();
    for fx in fixtures() {
        want.push(expected(&fx, stream.len()));
        stream.extend_from_slice(&fx.wire);
    }
    (stream, want)
}

#[test]
fn concatenated_fixtures_in_one_buffer() {
    let (stream, want) = concatenation();
    assert_eq!(
        feed([&stream[..]]),
        Fed {
            replies: want.clone(),
            pending: 0,
            error: None
        }
    );
    // Directly: each call returns the first reply in the buffer only.
    let mut sc = Scanner::new();
    let mut rest = &stream[..];
    let mut pos = 0;
    for w in &want {
        let Ok(Scan::Reply { consumed, .. }) = sc.scan(rest) else {
            panic!("at {pos}")
        };
        pos += consumed;
        assert_eq!(pos, w.end);
        rest = &rest[consumed..];
    }
    assert_eq!(sc.scan(rest), Ok(Scan::Partial { consumed: 0 }));
}

#[test]
fn concatenated_fixtures_in_chunks() {
    let (stream, want) = concatenation();
    for size in [1, 2, 3, 5, 7, 13, 64, 1000, 4096, 20000] {
        let got = feed(stream.chunks(size));
        assert_eq!(got.error, None, "chunk size {size}");
        assert_eq!(got.pending, 0, "chunk size {size}");
        assert_eq!(got.replies.len(), want.len(), "chunk size {size}");
        for (g, w) in got.replies.iter().zip(&want) {
            assert!(
                common::same_modulo_lost(g, w),
                "chunk size {size}: {g:?} want {w:?}"
            );
        }
    }
}

#[test]
fn concatenated_fixtures_split_at_every_point() {
    let (stream, want) = concatenation();
    for k in 0..=stream.len() {
        let got = feed(cut(&stream, &[k]));
        assert_eq!(
            (got.error.clone(), got.pending, got.replies.len()),
            (None, 0, want.len()),
            "split at {k}"
        );
        for (g, w) in got.replies.iter().zip(&want) {
            assert!(
                common::same_modulo_lost(g, w),
                "split at {k}: {g:?} want {w:?}"
            );
        }
    }
}

#[test]
fn partial_consumes_whole_header_lines_only() {
    let mut sc = Scanner::new();
    // Header lines are taken whole; the incomplete `$3` line is left.
    assert_eq!(
        sc.scan(b"*2\r\n:1\r\n$3"),
        Ok(Scan::Partial { consumed: 8 })
    );
    assert_eq!(sc.scan(b"$3\r"), Ok(Scan::Partial { consumed: 0 }));
    // Payload bytes are taken as they come.
    assert_eq!(sc.scan(b"$3\r\na"), Ok(Scan::Partial { consumed: 5 }));
    assert_eq!(sc.scan(b"b"), Ok(Scan::Partial { consumed: 1 }));
    assert_eq!(sc.scan(b"c\r"), Ok(Scan::Partial { consumed: 2 }));
    assert_eq!(
        sc.scan(b"\n+next\r\n"),
        Ok(Scan::Reply {
            consumed: 1,
            info: ReplyInfo {
                kind: Kind::Array,
                error: None
            }
        })
    );
}

#[test]
fn attributes_do_not_count_as_elements() {
    let mut sc = Scanner::new();
    // Two elements: the attribute is not one of them.
    assert_eq!(
        sc.scan(b"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n"),
        Ok(Scan::Partial { consumed: 20 })
    );
    assert_eq!(
        sc.scan(b":2\r\n"),
        Ok(Scan::Reply {
            consumed: 4,
            info: ReplyInfo {
                kind: Kind::Array,
                error: None
            }
        })
    );
    // A top-level attribute alone is not a reply.
    let mut sc = Scanner::new();
    assert_eq!(
        sc.scan(b"|1\r\n:1\r\n:2\r\n"),
        Ok(Scan::Partial { consumed: 12 })
    );
    assert!(sc.in_progress());
    assert_eq!(
        sc.scan(b">0\r\n"),
        Ok(Scan::Reply {
            consumed: 4,
            info: ReplyInfo {
                kind: Kind::Push,
                error: None
            }
        })
    );
}

#[test]
fn error_range_is_relative_to_the_final_buffer() {
    let mut sc = Scanner::new();
    assert_eq!(
        sc.scan(b"*1\r\n|1\r\n+a\r\n+b\r\n"),
        Ok(Scan::Partial { consumed: 16 })
    );
    // Nested: no range, kind is the array.
    assert_eq!(
        sc.scan(b"-ERR x\r\n"),
        Ok(Scan::Reply {
            consumed: 8,
            info: ReplyInfo {
                kind: Kind::Array,
                error: None
            }
        })
    );
    assert_eq!(
        sc.scan(b"|1\r\n+a\r\n+b\r\n-ER"),
        Ok(Scan::Partial { consumed: 12 })
    );
    assert_eq!(
        sc.scan(b"-ERR x\r\n"),
        Ok(Scan::Reply {
            consumed: 8,
            info: ReplyInfo {
                kind: Kind::Error,
                error: Some(1..6)
            }
        })
    );
}

#[test]
fn nesting_limit() {
    for open in [&b"*1\r\n"[..], b"%1\r\n", b"~1\r\n", b">1\r\n", b"|1\r\n"] {
        // MAX_DEPTH open aggregates and a scalar inside: fine (attributes need their value after).
        let mut ok = open.repeat(MAX_DEPTH);
        ok.extend_from_slice(b":1\r\n");
        let r = Scanner::new().scan(&ok).unwrap();
        match open[0] {
            b'*' | b'~' | b'>' => assert!(
                matches!(r, Scan::Reply { consumed, .. } if consumed == ok.len()),
                "{r:?}"
            ),
            // A map needs a value after the key; attributes need the value they decorate.
            _ => assert_eq!(r, Scan::Partial { consumed: ok.len() }, "{open:?}"),
        }
        assert!(Value::parse(&ok).is_ok());
        // One more level, even an empty one, is too deep.
        for inner in [&b"*1\r\n"[..], b"*0\r\n", b"|0\r\n", b"%0\r\n"] {
            let mut deep = open.repeat(MAX_DEPTH);
            deep.extend_from_slice(inner);
            deep.extend_from_slice(b":1\r\n");
            assert_eq!(
                Scanner::new().scan(&deep),
                Err(ProtocolError::TooDeep),
                "{open:?} {inner:?}"
            );
            assert_eq!(
                Value::parse(&deep),
                Err(ProtocolError::TooDeep),
                "{open:?} {inner:?}"
            );
            assert_eq!(feed(bytes(&deep)).error, Some(ProtocolError::TooDeep));
        }
    }
    // Depth is about open aggregates, not how many came before: siblings reuse the level.
    let mut wide = b"*3\r\n".to_vec();
    for _ in 0..3 {
        wide.extend(b"*1\r\n".repeat(MAX_DEPTH - 1));
        wide.extend_from_slice(b"_\r\n");
    }
    assert!(
        matches!(Scanner::new().scan(&wide), Ok(Scan::Reply { consumed, .. }) if consumed == wide.len())
    );
}

#[test]
fn malformed_input() {
    use ProtocolError as E;
    let too_deep = {
        let mut v = b"*1\r\n".repeat(MAX_DEPTH + 1);
        v.extend_from_slice(b":1\r\n");
        v
    };
    let cases: Vec<(&[u8], E)> = vec![
        // Type bytes: rejected at once, without waiting for a line end.
        (b"A", E::UnexpectedByte(b'A')),
        (b"\r\n", E::UnexpectedByte(b'\r')),
        (b"\n", E::UnexpectedByte(b'\n')),
        (b" +OK\r\n", E::UnexpectedByte(b' ')),
        (b";3\r\nabc\r\n", E::UnexpectedByte(b';')),
        (b"*2\r\n:1\r\n?", E::UnexpectedByte(b'?')),
        (b"x+OK\r\n", E::UnexpectedByte(b'x')),
        // Line endings.
        (b"+OK\n", E::LineNotTerminated),
        (b":1\n", E::LineNotTerminated),
        (b"*1\r\n$1\n", E::LineNotTerminated),
        // Integers.
        (b":\r\n", E::InvalidInteger),
        (b":-\r\n", E::InvalidInteger),
        (b":abc\r\n", E::InvalidInteger),
        (b":1.5\r\n", E::InvalidInteger),
        (b": 1\r\n", E::InvalidInteger),
        (b":9223372036854775808\r\n", E::InvalidInteger),
        (b":-9223372036854775809\r\n", E::InvalidInteger),
        // Lengths.
        (b"$\r\n", E::InvalidLength(b'$')),
        (b"$abc\r\n", E::InvalidLength(b'$')),
        (b"$-2\r\n", E::InvalidLength(b'$')),
        (b"$-0\r\n", E::InvalidLength(b'$')),
        (b"$+1\r\n", E::InvalidLength(b'$')),
        (b"$ 1\r\n", E::InvalidLength(b'$')),
        (b"$1 \r\n", E::InvalidLength(b'$')),
        (b"*-2\r\n", E::InvalidLength(b'*')),
        (b"*x\r\n", E::InvalidLength(b'*')),
        (b"%-1\r\n", E::InvalidLength(b'%')),
        (b"~-1\r\n", E::InvalidLength(b'~')),
        (b">-1\r\n", E::InvalidLength(b'>')),
        (b"|-1\r\n", E::InvalidLength(b'|')),
        (b"!-1\r\n", E::InvalidLength(b'!')),
        (b"=-1\r\n", E::InvalidLength(b'=')),
        (b"=3\r\nabc\r\n", E::InvalidLength(b'=')),
        (b"$1099511627777\r\n", E::LengthTooLarge(b'$')),
        (b"*99999999999999999999999\r\n", E::LengthTooLarge(b'*')),
        (b"%1099511627777\r\n", E::LengthTooLarge(b'%')),
        (b"$?\r\n", E::StreamedNotSupported),
        (b"*?\r\n", E::StreamedNotSupported),
        (b"%?\r\n", E::StreamedNotSupported),
        (b"~?\r\n", E::StreamedNotSupported),
        (b">?\r\n", E::StreamedNotSupported),
        (b"*1\r\n$?\r\n", E::StreamedNotSupported),
        // Payload terminators.
        (b"$3\r\nabcd\r\n", E::PayloadNotTerminated(b'$')),
        (b"$3\r\nabc\n\r", E::PayloadNotTerminated(b'$')),
        (b"$3\r\nabc\r\r", E::PayloadNotTerminated(b'$')),
        (b"$3\r\nabcX", E::PayloadNotTerminated(b'$')),
        (b"$3\r\nabcX\n", E::PayloadNotTerminated(b'$')),
        (b"$3\r\nabc\n\n+OK\r\n", E::PayloadNotTerminated(b'$')),
        (b"$0\r\nX", E::PayloadNotTerminated(b'$')),
        (b"*2\r\n$1\r\nab\r\n", E::PayloadNotTerminated(b'$')),
        (b"!1\r\nxy", E::PayloadNotTerminated(b'!')),
        (b"=4\r\ntxt:X", E::PayloadNotTerminated(b'=')),
        // RESP3 scalars.
        (b"#\r\n", E::InvalidBoolean),
        (b"#x\r\n", E::InvalidBoolean),
        (b"#T\r\n", E::InvalidBoolean),
        (b"#tt\r\n", E::InvalidBoolean),
        (b"_x\r\n", E::InvalidNull),
        (b"_ \r\n", E::InvalidNull),
        // Nesting.
        (&too_deep, E::TooDeep),
    ];
    for (input, want) in cases {
        assert_eq!(
            Scanner::new().scan(input),
            Err(want.clone()),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        // The same error whatever the fragmentation, and from the owned parser too.
        assert_eq!(
            feed(bytes(input)).error,
            Some(want.clone()),
            "{input:?} byte by byte"
        );
        for k in 0..=input.len() {
            assert_eq!(
                feed(cut(input, &[k])).error,
                Some(want.clone()),
                "{input:?} split at {k}"
            );
        }
        assert_eq!(Value::parse(input), Err(want), "{input:?} via Value::parse");
    }
}

#[test]
fn error_after_a_good_reply_is_reported_on_the_next_call() {
    let mut sc = Scanner::new();
    let buf = b"+OK\r\n#x\r\n";
    assert_eq!(
        sc.scan(buf),
        Ok(Scan::Reply {
            consumed: 5,
            info: ReplyInfo {
                kind: Kind::SimpleString,
                error: None
            }
        })
    );
    assert_eq!(sc.scan(&buf[5..]), Err(ProtocolError::InvalidBoolean));
}

#[test]
fn encode_command_exact_bytes() {
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["PING"]);
    assert_eq!(out, b"*1\r\n$4\r\nPING\r\n");
    out.clear();
    resp::encode_command::<&str>(&mut out, &[]);
    assert_eq!(out, b"*0\r\n");
    // Appends; does not clear.
    out.clear();
    out.extend_from_slice(b"prefix");
    resp::encode_command(&mut out, &[&b"GET"[..], b"key:000000000001"]);
    assert_eq!(out, b"prefix*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000001\r\n");
    // Binary-safe, empty arguments, owned arguments, ten or more arguments.
    out.clear();
    let args = vec![b"SET".to_vec(), b"k\r\n\0".to_vec(), Vec::new()];
    resp::encode_command(&mut out, &args);
    assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$4\r\nk\r\n\0\r\n$0\r\n\r\n");
    let many: Vec<String> = (0..12).map(|i| "x".repeat(i)).collect();
    out.clear();
    resp::encode_command(&mut out, &many);
    let mut want = b"*12\r\n".to_vec();
    for a in &many {
        want.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    assert_eq!(out, want);
}

#[test]
fn encoded_command_len_is_exact() {
    let big = vec![7u8; 123_456];
    let cases: Vec<Vec<&[u8]>> = vec![
        vec![],
        vec![b""],
        vec![b"PING"],
        vec![b"SET", b"key", &big],
        vec![b"\r\n"; 10],
        vec![b"a"; 100],
        vec![
            &big[..9],
            &big[..10],
            &big[..99],
            &big[..100],
            &big[..999],
            &big[..1000],
        ],
    ];
    for args in cases {
        let mut out = vec![1, 2, 3];
        resp::encode_command(&mut out, &args);
        assert_eq!(
            resp::encoded_command_len(&args),
            out.len() - 3,
            "{} args",
            args.len()
        );
        // And the result is one array of bulk strings holding the arguments.
        let (v, n) = Value::parse(&out[3..]).unwrap().unwrap();
        assert_eq!(n, out.len() - 3);
        let want = Value::Array(args.iter().map(|a| Value::BulkString(a.to_vec())).collect());
        assert_eq!(v, want);
    }
}
