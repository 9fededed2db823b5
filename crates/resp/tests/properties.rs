//! Property tests: random `Value` trees through encode → parse and encode → fragmented scanning,
//! and arbitrary bytes through the scanner (no panics, consistent with `Value::parse`).

mod common;

use common::{Seen, cut, feed};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use resp::{Kind, MAX_DEPTH, ProtocolError, Scan, Scanner, Value};

/// Bytes for a line-based value: anything but CR and LF.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    vec(
        any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'),
        0..12,
    )
}

/// Payload bytes: mostly short, sometimes large (filled from a seed: generating thousands of
/// bytes one by one makes the tests slow), biased towards CR/LF and type bytes.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        any::<u8>(),
        Just(b'\r'),
        Just(b'\n'),
        Just(b'$'),
        Just(b'*')
    ];
    prop_oneof![
        8 => vec(byte, 0..24),
        1 => (200usize..3000, any::<u64>()).prop_map(|(len, mut x)| {
            (0..len)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    b"\r\n$*:abc"[(x >> 61) as usize]
                })
                .collect()
        }),
    ]
}

/// Wraps `value` in attributes, merging with an existing wrapper the way `Value::parse` does.
fn with_attributes(mut attributes: Vec<(Value, Value)>, value: Value) -> Value {
    match value {
        Value::Attribute {
            attributes: inner,
            value,
        } => {
            attributes.extend(inner);
            Value::Attribute { attributes, value }
        }
        value => Value::Attribute {
            attributes,
            value: Box::new(value),
        },
    }
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        line_bytes().prop_map(Value::SimpleString),
        line_bytes().prop_map(Value::Error),
        any::<i64>().prop_map(Value::Integer),
        payload().prop_map(Value::BulkString),
        Just(Value::Null),
        // NaN is excluded: it never compares equal (its encoding is tested separately).
        any::<f64>()
            .prop_filter("not NaN", |d| !d.is_nan())
            .prop_map(Value::Double),
        any::<bool>().prop_map(Value::Boolean),
        "-?[0-9]{1,40}".prop_map(|s| Value::BigNumber(s.into_bytes())),
        (any::<[u8; 3]>(), payload())
            .prop_map(|(format, text)| Value::VerbatimString { format, text }),
        payload().prop_map(Value::BlobError),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 48, 6, |inner| {
        let pairs = vec((inner.clone(), inner.clone()), 0..4);
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            pairs.clone().prop_map(Value::Map),
            vec(inner.clone(), 0..6).prop_map(Value::Set),
            vec(inner.clone(), 0..6).prop_map(Value::Push),
            (pairs, inner).prop_map(|(a, v)| with_attributes(a, v)),
        ]
    })
}

fn encode(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.encode(&mut out);
    out
}

/// Sorted, de-duplicated cut points into `len` bytes.
fn cuts(len: usize, picks: &[Index]) -> Vec<usize> {
    let mut c: Vec<usize> = picks.iter().map(|i| i.index(len + 1)).collect();
    c.sort_unstable();
    c.dedup();
    c
}

proptest! {
    // No failure persistence: proptest cannot locate a source root for files under tests/, and
    // failures print their minimal input anyway.
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_parse_round_trips(v in value()) {
        let wire = encode(&v);
        prop_assert_eq!(Value::parse(&wire), Ok(Some((v.clone(), wire.len()))));
        // Any proper prefix is incomplete, never an error or a shorter value.
        let cut = wire.len() / 2;
        prop_assert_eq!(Value::parse(&wire[..cut]), Ok(None));
    }

    #[test]
    fn scanner_frames_encoded_value_under_fragmentation(v in value(), picks in vec(any::<Index>(), 0..10)) {
        let wire = encode(&v);
        let got = feed(cut(&wire, &cuts(wire.len(), &picks)));
        prop_assert_eq!(got.error, None);
        prop_assert_eq!(got.pending, 0);
        prop_assert_eq!(got.replies.len(), 1);
        prop_assert_eq!(got.replies[0].end, wire.len());
        prop_assert_eq!(got.replies[0].kind, v.kind());
        // In one piece, the error text is exactly the value's.
        let Ok(Scan::Reply { consumed, info }) = Scanner::new().scan(&wire) else {
            return Err(TestCaseError::fail("not one reply"));
        };
        prop_assert_eq!(consumed, wire.len());
        let mut inner = &v;
        while let Value::Attribute { value, .. } = inner {
            inner = value;
        }
        match inner {
            Value::Error(text) | Value::BlobError(text) => {
                let r = info.error.clone().expect("error range");
                prop_assert_eq!(&wire[r], &text[..]);
            }
            _ => prop_assert_eq!(info.error, None),
        }
    }

    #[test]
    fn scanner_frames_concatenated_values(vs in vec(value(), 1..6), picks in vec(any::<Index>(), 0..12)) {
        let mut wire = Vec::new();
        let mut want = Vec::new();
        for v in &vs {
            v.encode(&mut wire);
            want.push((wire.len(), v.kind()));
        }
        let got = feed(cut(&wire, &cuts(wire.len(), &picks)));
        prop_assert_eq!(got.error, None);
        prop_assert_eq!(got.pending, 0);
        let got: Vec<(usize, Kind)> = got.replies.iter().map(|s: &Seen| (s.end, s.kind)).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn scanner_survives_arbitrary_bytes(data in vec(any::<u8>(), 0..256), picks in vec(any::<Index>(), 0..6)) {
        // `feed` asserts consumed <= len on every call and the Partial tail contract.
        let _ = feed(cut(&data, &cuts(data.len(), &picks)));
        let mut sc = Scanner::new();
        if let Ok(Scan::Reply { consumed, .. } | Scan::Partial { consumed }) = sc.scan(&data) {
            prop_assert!(consumed <= data.len());
        }
    }

    #[test]
    fn scanner_agrees_with_parser_on_token_soup(tokens in vec(token(), 0..24), picks in vec(any::<Index>(), 0..6)) {
        let data = tokens.concat();
        let whole = Scanner::new().scan(&data);
        let parsed = Value::parse(&data);
        match (&whole, &parsed) {
            // Checks only the owned parser makes.
            (_, Err(ProtocolError::InvalidDouble | ProtocolError::InvalidVerbatim)) => {}
            (Ok(Scan::Reply { consumed, info }), Ok(Some((v, n)))) => {
                prop_assert_eq!(consumed, n);
                prop_assert_eq!(info.kind, v.kind());
            }
            (Ok(Scan::Partial { consumed }), Ok(None)) => prop_assert!(*consumed <= data.len()),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => return Err(TestCaseError::fail(format!("scanner {whole:?} vs parser {parsed:?}"))),
        }
        // Fragmented scanning agrees with the one-piece scan on the first reply or error.
        let fed = feed(cut(&data, &cuts(data.len(), &picks)));
        match whole {
            Ok(Scan::Reply { consumed, info }) => {
                prop_assert_eq!(fed.replies.first().map(|s| (s.end, s.kind)), Some((consumed, info.kind)));
            }
            Ok(Scan::Partial { .. }) => {
                prop_assert!(fed.replies.is_empty());
                prop_assert_eq!(fed.error, None);
            }
            Err(e) => {
                prop_assert!(fed.replies.is_empty());
                prop_assert_eq!(fed.error, Some(e));
            }
        }
    }
}

/// Pieces of plausible and implausible RESP, so random inputs get past the first header.
fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec![
            &b"*1\r\n"[..], b"*2\r\n", b"*0\r\n", b"*-1\r\n", b"%1\r\n", b"~2\r\n", b">1\r\n", b"|1\r\n", b"|0\r\n",
            b"$3\r\nabc\r\n", b"$0\r\n\r\n", b"$-1\r\n", b"$2\r\n", b"+OK\r\n", b"-ERR e\r\n", b":12\r\n",
            b"_\r\n", b",1.5\r\n", b",x\r\n", b"#t\r\n", b"(9\r\n", b"=5\r\ntxt:a\r\n", b"=4\r\nab", b"!1\r\nE\r\n",
            b"\r\n", b"\r", b"\n", b"$", b"*", b"1", b"-1", b"?", b"$?\r\n", b"#x\r\n", b":x\r\n",
        ])
        .prop_map(<[u8]>::to_vec),
        1 => vec(any::<u8>(), 1..4),
    ]
}

#[test]
fn nan_encodes_and_parses() {
    let wire = encode(&Value::Double(f64::NAN));
    assert_eq!(wire, b",nan\r\n");
    let (v, n) = Value::parse(&wire).unwrap().unwrap();
    assert_eq!(n, wire.len());
    assert!(matches!(v, Value::Double(d) if d.is_nan()));
    assert!(matches!(
        Scanner::new().scan(&wire),
        Ok(Scan::Reply { consumed: 6, .. })
    ));
}

#[test]
fn deep_values_round_trip() {
    let mut v = Value::Integer(1);
    for i in 0..MAX_DEPTH {
        v = if i % 2 == 0 {
            Value::Array(vec![v])
        } else {
            with_attributes(vec![], Value::Push(vec![v]))
        };
    }
    let wire = encode(&v);
    assert_eq!(Value::parse(&wire), Ok(Some((v.clone(), wire.len()))));
    let got = feed(common::bytes(&wire));
    assert_eq!(got.replies.len(), 1);
    let mut too_deep = b"*1\r\n".to_vec();
    too_deep.extend_from_slice(&wire);
    assert_eq!(Value::parse(&too_deep), Err(ProtocolError::TooDeep));
    assert_eq!(Scanner::new().scan(&too_deep), Err(ProtocolError::TooDeep));
}
