//! A model caller of the scanner, shared by the integration tests: it follows the `Scan`
//! contract exactly as the engine does (drop what was consumed, keep the tail, append more) and
//! records every reply with its position in the *stream*, so results can be compared however the
//! stream was cut.

#![allow(dead_code)]

use std::ops::Range;

use resp::{Kind, ProtocolError, Scan, Scanner};

/// Where a reply's error text is, in stream coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorPos {
    /// The text's range in the stream.
    At(Range<usize>),
    /// A blob error reported `0..0`: its payload did not lie in the final call's buffer.
    Lost,
}

/// One reply as seen by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Stream offset just after the reply.
    pub end: usize,
    pub kind: Kind,
    pub error: Option<ErrorPos>,
}

/// Result of feeding a stream: the replies, plus how many bytes were left pending at the end.
#[derive(Debug, PartialEq, Eq)]
pub struct Fed {
    pub replies: Vec<Seen>,
    pub pending: usize,
    pub error: Option<ProtocolError>,
}

/// Feeds `chunks` one after the other through a fresh scanner, checking the contract on the way.
pub fn feed<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Fed {
    let mut sc = Scanner::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut base = 0usize;
    let mut replies = Vec::new();
    for chunk in chunks {
        pending.extend_from_slice(chunk);
        loop {
            match sc.scan(&pending) {
                Err(e) => {
                    return Fed {
                        replies,
                        pending: pending.len(),
                        error: Some(e),
                    };
                }
                Ok(Scan::Reply { consumed, info }) => {
                    assert!(
                        consumed > 0 && consumed <= pending.len(),
                        "consumed {consumed} of {}",
                        pending.len()
                    );
                    assert!(!sc.in_progress());
                    let error = info.error.clone().map(|r| {
                        assert!(
                            matches!(info.kind, Kind::Error | Kind::BlobError),
                            "{info:?}"
                        );
                        assert!(
                            r.start <= r.end && r.end <= consumed,
                            "{r:?} beyond {consumed}"
                        );
                        if info.kind == Kind::BlobError && r == (0..0) {
                            ErrorPos::Lost
                        } else {
                            ErrorPos::At(base + r.start..base + r.end)
                        }
                    });
                    if matches!(info.kind, Kind::Error | Kind::BlobError) {
                        assert!(error.is_some(), "{info:?}");
                    }
                    replies.push(Seen {
                        end: base + consumed,
                        kind: info.kind,
                        error,
                    });
                    pending.drain(..consumed);
                    base += consumed;
                }
                Ok(Scan::Partial { consumed }) => {
                    assert!(
                        consumed <= pending.len(),
                        "consumed {consumed} of {}",
                        pending.len()
                    );
                    pending.drain(..consumed);
                    base += consumed;
                    // What is left must be (part of) one header line: no line end in it.
                    assert!(
                        !pending.contains(&b'\n'),
                        "tail after Partial holds a line end: {pending:?}"
                    );
                    if consumed > 0 {
                        assert!(sc.in_progress());
                    }
                    break;
                }
            }
        }
    }
    Fed {
        replies,
        pending: pending.len(),
        error: None,
    }
}

/// `data` cut at the given (sorted, in-range) offsets.
pub fn cut<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut prev = 0;
    for &c in cuts {
        pieces.push(&data[prev..c]);
        prev = c;
    }
    pieces.push(&data[prev..]);
    pieces
}

/// `data` one byte at a time.
pub fn bytes(data: &[u8]) -> Vec<&[u8]> {
    data.chunks(1).collect()
}

/// Two replies' error positions agree, allowing a blob error to have lost its range.
pub fn same_modulo_lost(a: &Seen, b: &Seen) -> bool {
    a.end == b.end
        && a.kind == b.kind
        && (a.error == b.error
            || (a.kind == Kind::BlobError
                && (a.error == Some(ErrorPos::Lost) || b.error == Some(ErrorPos::Lost))))
}
