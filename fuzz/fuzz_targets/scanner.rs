//! Fuzzes the reply scanner against the owned parser.
//!
//! Input layout: two bytes choosing a split point (little-endian, taken modulo the rest's length
//! plus one), then the byte stream. The stream is fed to a `Scanner` in two pieces following the
//! `Scan::Partial` contract, exactly as the engine does, and the outcome is cross-checked against
//! a one-piece scan and against `Value::parse` on the whole stream.

#![no_main]

use libfuzzer_sys::fuzz_target;
use resp::{Kind, ProtocolError, Scan, Scanner, Value};

/// What scanning a stream produced: the first reply's total length and kind, "needs more", or an
/// error.
#[derive(Debug, PartialEq)]
enum Outcome {
    Reply(usize, Kind),
    Incomplete,
    Error(ProtocolError),
}

/// Feeds `pieces` in order, keeping the unconsumed tail as a caller must, until the first reply.
fn scan_pieces(pieces: &[&[u8]]) -> Outcome {
    let mut sc = Scanner::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut base = 0usize;
    for piece in pieces {
        pending.extend_from_slice(piece);
        match sc.scan(&pending) {
            Err(e) => return Outcome::Error(e),
            Ok(Scan::Reply { consumed, info }) => {
                assert!(consumed > 0 && consumed <= pending.len());
                assert!(!sc.in_progress());
                if let Some(r) = info.error {
                    assert!(matches!(info.kind, Kind::Error | Kind::BlobError));
                    assert!(r.start <= r.end && r.end <= consumed);
                }
                return Outcome::Reply(base + consumed, info.kind);
            }
            Ok(Scan::Partial { consumed }) => {
                assert!(consumed <= pending.len());
                pending.drain(..consumed);
                base += consumed;
                // The tail left to present again is (part of) one header line.
                assert!(!pending.contains(&b'\n'));
            }
        }
    }
    Outcome::Incomplete
}

fuzz_target!(|data: &[u8]| {
    let Some((split, input)) = data.split_first_chunk::<2>() else {
        return;
    };
    let split = usize::from(u16::from_le_bytes(*split)) % (input.len() + 1);
    let (a, b) = input.split_at(split);

    let split_outcome = scan_pieces(&[a, b]);
    let whole_outcome = scan_pieces(&[input]);
    assert_eq!(split_outcome, whole_outcome, "split at {split}");

    match (Value::parse(input), &whole_outcome) {
        // Checks only the owned parser makes (the scanner does not interpret these payloads).
        (Err(ProtocolError::InvalidDouble | ProtocolError::InvalidVerbatim), _) => {}
        (Ok(Some((value, consumed))), Outcome::Reply(n, kind)) => {
            assert_eq!(consumed, *n);
            assert_eq!(value.kind(), *kind);
            // Re-encoding is stable after one round (doubles and nulls may change spelling once).
            let mut once = Vec::new();
            value.encode(&mut once);
            let (again, len) = Value::parse(&once)
                .expect("re-encoded value parses")
                .expect("complete");
            assert_eq!(len, once.len());
            let mut twice = Vec::new();
            again.encode(&mut twice);
            assert_eq!(once, twice);
        }
        (Ok(None), Outcome::Incomplete) => {}
        (Err(e), Outcome::Error(f)) => assert_eq!(&e, f),
        (parsed, scanned) => panic!("parser {parsed:?} vs scanner {scanned:?}"),
    }
});
