//! The reply scanner: frames replies in a byte stream without building them.
//!
//! Owns: [`Scanner`], [`Scan`], [`ReplyInfo`] and [`Kind`]. The scanner tells the caller where each
//! top-level reply ends, its kind, and where an error reply's text is; nothing more.
//! Must not: allocate (its state is a fixed array), copy or UTF-8-check payloads, interpret doubles
//! or big numbers beyond "a line", or ever report more bytes consumed than it was given.
//! Invariants:
//! - header lines are consumed whole or not at all; only bulk-like payloads (`$ = !`) are consumed
//!   piecemeal, so after a `Partial` the unconsumed tail is empty or one incomplete header line;
//! - `depth <= MAX_DEPTH`, and `counts[..depth]` are all non-zero (a frame is popped as soon as
//!   its last element completes);
//! - between replies (`!in_progress()`) the state equals `Scanner::new()`.

use std::ops::Range;

use crate::wire::{Header, find_lf, parse_header};
use crate::{MAX_DEPTH, ProtocolError};

/// The type of a reply, as seen by the caller.
///
/// `Null` covers RESP3 `_` and the RESP2 nulls `$-1` and `*-1`. Attributes (`|`) are not a kind: the
/// scanner skips them and reports the value they decorate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `+`
    SimpleString,
    /// `-`
    Error,
    /// `:`
    Integer,
    /// `$`
    BulkString,
    /// `_`, `$-1`, `*-1`
    Null,
    /// `*`
    Array,
    /// `%`
    Map,
    /// `~`
    Set,
    /// `>` (out-of-band push data, e.g. pub/sub messages or invalidations)
    Push,
    /// `,`
    Double,
    /// `#`
    Boolean,
    /// `(`
    BigNumber,
    /// `=`
    VerbatimString,
    /// `!`
    BlobError,
}

/// What the scanner learned about one complete top-level reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyInfo {
    /// Kind of the top-level value (after any attributes).
    pub kind: Kind,
    /// For [`Kind::Error`]: byte range, within the buffer passed to the `scan()` call that returned
    /// this reply, of the error text (without the leading `-` and without CRLF). For
    /// [`Kind::BlobError`]: the payload's range if the whole payload lies in that buffer, else an
    /// empty range `0..0`. `None` for other kinds.
    pub error: Option<Range<usize>>,
}

/// Outcome of one [`Scanner::scan`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scan {
    /// A complete top-level reply ends at `buf[..consumed]` (counted from the start of this call's
    /// `buf`, so it includes whatever this call absorbed before the reply's last bytes).
    Reply {
        /// Bytes of this call's `buf` that belong to the reply (and to earlier parts of it).
        consumed: usize,
        /// Kind and error text of the reply.
        info: ReplyInfo,
    },
    /// No complete reply in `buf`. The first `consumed` bytes were absorbed into the scanner's
    /// state; the caller drops them and must present the rest of `buf` again (it is empty or starts
    /// with an incomplete header line), followed by more data, on the next call.
    Partial {
        /// Bytes of this call's `buf` absorbed into the scanner's state.
        consumed: usize,
    },
}

/// A resumable, allocation-free RESP2/RESP3 reply framer.
///
/// Feed it the received bytes with [`scan`](Self::scan); it returns at most one reply per call.
/// Its state is a fixed array of remaining element counts, one per open aggregate (at most
/// [`MAX_DEPTH`]), plus the number of bulk payload bytes still to skip, so it can be cloned and
/// kept per connection at no cost.
///
/// After a [`ProtocolError`] the stream cannot be re-synchronised; drop the connection and
/// [`reset`](Self::reset) the scanner before reusing it.
///
/// ```
/// use resp::{Kind, Scan, Scanner};
/// let mut sc = Scanner::new();
/// // A reply split across two reads.
/// let Scan::Partial { consumed } = sc.scan(b"*2\r\n$5\r\nhel").unwrap() else { panic!() };
/// assert_eq!(consumed, 11); // header lines and the payload bytes seen so far
/// let Scan::Reply { consumed, info } = sc.scan(b"lo\r\n:1\r\n+OK\r\n").unwrap() else { panic!() };
/// assert_eq!((consumed, info.kind), (8, Kind::Array));
/// ```
#[derive(Clone, Debug)]
pub struct Scanner {
    /// Remaining elements of each open aggregate; `counts[depth - 1]` is the innermost.
    counts: [u64; MAX_DEPTH],
    /// Number of open aggregates (attributes included).
    depth: usize,
    /// Bit `d` set: the aggregate at `counts[d]` is an attribute (it does not count as an element
    /// of its parent, and the value after it does).
    attr: u32,
    /// Bytes of bulk payload plus its CRLF still to skip; 0 when not inside a payload.
    bulk: u64,
    /// Type byte of the payload being skipped (for the error message).
    bulk_type: u8,
    /// A reply has begun (some header consumed) but not completed.
    started: bool,
    /// Kind of the current top-level value, once its header has been read.
    top: Kind,
    /// Payload length of a top-level blob error (to report its range).
    blob_len: u64,
    /// The last top-level aggregate's element count and how many of those elements were null
    /// (an `MGET`'s keys and misses): see [`Scanner::top_elements`].
    top_len: u64,
    top_nulls: u64,
}

/// The length of a complete simple string (`+OK\r\n`) at the start of `buf`: the commonest reply
/// to a benchmark's writes, answered here without the general loop, which gives the same answer
/// at several times the cost. `None` for anything else, an incomplete or malformed line included
/// (the general loop waits for it or reports it).
#[inline(always)]
fn simple_string(buf: &[u8]) -> Option<usize> {
    if buf.first() != Some(&b'+') {
        return None;
    }
    let nl = 1 + find_lf(&buf[1..])?;
    (nl > 1 && buf[nl - 1] == b'\r').then_some(nl + 1)
}

// The attribute bitmask has one bit per level.
const _: () = assert!(MAX_DEPTH <= 32);

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// A scanner positioned at the start of a reply.
    pub const fn new() -> Self {
        Self {
            counts: [0; MAX_DEPTH],
            depth: 0,
            attr: 0,
            bulk: 0,
            bulk_type: 0,
            started: false,
            top: Kind::Null,
            blob_len: 0,
            top_len: 0,
            top_nulls: 0,
        }
    }

    /// Forgets any reply in progress (use after a protocol error or a reconnect).
    #[inline]
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// After a [`Scan::Reply`] of an aggregate kind (`Array`, `Set`, `Map`, `Push`): its element
    /// count (pairs for a map) and how many of its own elements were null (an `MGET`'s misses;
    /// nested values are not looked into). Meaningless after a reply of another kind.
    #[inline]
    pub fn top_elements(&self) -> (u64, u64) {
        (self.top_len, self.top_nulls)
    }

    /// True when a reply has begun (bytes of it were consumed) but not completed.
    #[inline]
    pub fn in_progress(&self) -> bool {
        self.started
    }

    /// Scans `buf` for the end of the current top-level reply.
    ///
    /// Returns [`Scan::Reply`] as soon as one reply completes (later replies in `buf` are left for
    /// the next call), or [`Scan::Partial`] when `buf` ends first. Never allocates and never
    /// reports `consumed > buf.len()`. See [`Scan`] for what the caller must do with the bytes.
    #[inline]
    pub fn scan(&mut self, buf: &[u8]) -> Result<Scan, ProtocolError> {
        // Inlined into the caller, so the commonest reply costs no call of the general loop.
        if !self.started
            && let Some(consumed) = simple_string(buf)
        {
            return Ok(Scan::Reply {
                consumed,
                info: ReplyInfo {
                    kind: Kind::SimpleString,
                    error: None,
                },
            });
        }
        self.scan_any(buf)
    }

    /// [`Scanner::scan`] for any reply: the general loop.
    fn scan_any(&mut self, buf: &[u8]) -> Result<Scan, ProtocolError> {
        let mut pos = 0usize;
        let mut error: Option<Range<usize>> = None;
        loop {
            if self.bulk != 0 {
                let (start, bulk_before) = (pos, self.bulk);
                if !self.skip_payload(buf, &mut pos)? {
                    return Ok(Scan::Partial { consumed: pos });
                }
                if self.depth == 0 {
                    if self.top == Kind::BlobError {
                        // The whole payload is in this buffer iff none of it was consumed before.
                        error = Some(if bulk_before == self.blob_len + 2 {
                            start..start + self.blob_len as usize
                        } else {
                            0..0
                        });
                    }
                    return Ok(self.finish(pos, error));
                }
                if self.element_done() {
                    return Ok(self.finish(pos, error));
                }
                continue;
            }
            if pos >= buf.len() {
                return Ok(Scan::Partial { consumed: pos });
            }
            let Some((header, next)) = parse_header(buf, pos)? else {
                return Ok(Scan::Partial { consumed: pos });
            };
            let at_top = self.depth == 0;
            match header {
                Header::Line { kind, start, end } => {
                    if at_top {
                        self.top = kind;
                        if kind == Kind::Error {
                            error = Some(start..end);
                        }
                    }
                }
                Header::Integer(_) => self.set_top(at_top, Kind::Integer),
                Header::Boolean(_) => self.set_top(at_top, Kind::Boolean),
                Header::Null => {
                    self.set_top(at_top, Kind::Null);
                    // An element of the top-level aggregate (not of an attribute before it).
                    if self.depth == 1 && self.attr & 1 == 0 {
                        self.top_nulls += 1;
                    }
                }
                Header::Blob {
                    kind,
                    type_byte,
                    len,
                } => {
                    self.set_top(at_top, kind);
                    self.blob_len = len;
                    self.bulk = len + 2;
                    self.bulk_type = type_byte;
                    self.started = true;
                    pos = next;
                    continue;
                }
                Header::Aggregate { kind, count } => {
                    if self.depth == MAX_DEPTH {
                        return Err(ProtocolError::TooDeep);
                    }
                    self.set_top(at_top, kind);
                    if at_top {
                        (self.top_len, self.top_nulls) = (count, 0);
                    }
                    if count != 0 {
                        self.push(count, false);
                        pos = next;
                        continue;
                    }
                }
                Header::Attribute { count } => {
                    if self.depth == MAX_DEPTH {
                        return Err(ProtocolError::TooDeep);
                    }
                    // An attribute is not a value: an empty one is simply skipped.
                    if count != 0 {
                        self.push(count, true);
                    }
                    self.started = true;
                    pos = next;
                    continue;
                }
            }
            // A scalar or an empty aggregate completed.
            pos = next;
            // (No need to set `started`: a scalar that does not end the reply is inside an
            // aggregate, whose header set it.)
            if self.element_done() {
                return Ok(self.finish(pos, error));
            }
        }
    }

    #[inline(always)]
    fn set_top(&mut self, at_top: bool, kind: Kind) {
        if at_top {
            self.top = kind;
        }
    }

    #[inline(always)]
    fn push(&mut self, count: u64, attribute: bool) {
        self.counts[self.depth] = count;
        self.attr |= u32::from(attribute) << self.depth;
        self.depth += 1;
        self.started = true;
    }

    /// Records that one value completed at the current level, popping every aggregate this
    /// completes. Returns true when the top-level value is complete.
    #[inline(always)]
    fn element_done(&mut self) -> bool {
        loop {
            let Some(d) = self.depth.checked_sub(1) else {
                return true;
            };
            self.counts[d] -= 1;
            if self.counts[d] != 0 {
                return false;
            }
            self.depth = d;
            let bit = 1u32 << d;
            if self.attr & bit != 0 {
                // A finished attribute does not count as an element of its parent: the value that
                // follows it does.
                self.attr &= !bit;
                return false;
            }
        }
    }

    /// Ends the current top-level reply and returns it.
    #[inline(always)]
    fn finish(&mut self, consumed: usize, error: Option<Range<usize>>) -> Scan {
        debug_assert!(self.depth == 0 && self.bulk == 0 && self.attr == 0);
        self.started = false;
        let kind = self.top;
        self.top = Kind::Null;
        Scan::Reply {
            consumed,
            info: ReplyInfo { kind, error },
        }
    }

    /// Skips payload bytes (and the CRLF after them). Returns true when the payload is finished,
    /// false when `buf` ran out first (everything available was consumed).
    #[inline(always)]
    fn skip_payload(&mut self, buf: &[u8], pos: &mut usize) -> Result<bool, ProtocolError> {
        let avail = buf.len() - *pos;
        if avail as u64 >= self.bulk {
            let end = *pos + self.bulk as usize;
            // Bytes still owed are the tail of "payload\r\n": check whichever of CR/LF are among them.
            let ok = if self.bulk >= 2 {
                buf[end - 2] == b'\r' && buf[end - 1] == b'\n'
            } else {
                buf[end - 1] == b'\n'
            };
            if !ok {
                return Err(ProtocolError::PayloadNotTerminated(self.bulk_type));
            }
            *pos = end;
            self.bulk = 0;
            return Ok(true);
        }
        if avail == 0 {
            return Ok(false);
        }
        // avail < bulk: consume everything. If exactly the LF is left owed, the last byte taken
        // was the CR.
        self.bulk -= avail as u64;
        *pos = buf.len();
        if self.bulk == 1 && buf[buf.len() - 1] != b'\r' {
            return Err(ProtocolError::PayloadNotTerminated(self.bulk_type));
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(input: &[u8]) -> (usize, ReplyInfo) {
        let mut sc = Scanner::new();
        match sc.scan(input) {
            Ok(Scan::Reply { consumed, info }) => {
                assert!(!sc.in_progress());
                (consumed, info)
            }
            other => panic!("{input:?}: {other:?}"),
        }
    }

    #[test]
    fn state_is_fresh_after_each_reply() {
        let mut sc = Scanner::new();
        let input = b"|1\r\n+a\r\n*1\r\n:1\r\n*2\r\n$3\r\nabc\r\n!2\r\nxy\r\n";
        let Ok(Scan::Reply { consumed, .. }) = sc.scan(input) else {
            panic!()
        };
        assert_eq!(consumed, input.len());
        assert_eq!(sc.depth, 0);
        assert_eq!(sc.attr, 0);
        assert_eq!(sc.bulk, 0);
        assert!(!sc.started);
    }

    #[test]
    fn blob_error_range_when_header_came_earlier() {
        let mut sc = Scanner::new();
        assert_eq!(sc.scan(b"!3\r\n"), Ok(Scan::Partial { consumed: 4 }));
        assert!(sc.in_progress());
        let (consumed, info) = match sc.scan(b"bad\r\n") {
            Ok(Scan::Reply { consumed, info }) => (consumed, info),
            other => panic!("{other:?}"),
        };
        assert_eq!(consumed, 5);
        assert_eq!(info.error, Some(0..3));
        // Now with part of the payload consumed in the first call: no range.
        assert_eq!(sc.scan(b"!3\r\nb"), Ok(Scan::Partial { consumed: 5 }));
        let Ok(Scan::Reply { info, .. }) = sc.scan(b"ad\r\n") else {
            panic!()
        };
        assert_eq!(info.error, Some(0..0));
        // Payload in this buffer but its CRLF only in the next: no range either.
        assert_eq!(sc.scan(b"!3\r\nbad"), Ok(Scan::Partial { consumed: 7 }));
        let Ok(Scan::Reply { info, .. }) = sc.scan(b"\r\n") else {
            panic!()
        };
        assert_eq!(info.error, Some(0..0));
    }

    #[test]
    fn nested_error_has_no_range() {
        let (_, info) = one(b"*1\r\n-ERR x\r\n");
        assert_eq!(
            info,
            ReplyInfo {
                kind: Kind::Array,
                error: None
            }
        );
        let (_, info) = one(b"*1\r\n!1\r\nx\r\n");
        assert_eq!(
            info,
            ReplyInfo {
                kind: Kind::Array,
                error: None
            }
        );
    }

    #[test]
    fn simple_strings_take_the_short_way_with_the_general_answers() {
        let mut sc = Scanner::new();
        let Ok(Scan::Reply { consumed, info }) = sc.scan(b"+OK\r\n+\r\n") else {
            panic!()
        };
        assert_eq!(
            (consumed, info.kind, info.error),
            (5, Kind::SimpleString, None)
        );
        assert!(!sc.in_progress());
        let Ok(Scan::Reply { consumed, .. }) = sc.scan(b"+\r\n") else {
            panic!()
        };
        assert_eq!(consumed, 3, "an empty simple string");
        // Incomplete: nothing consumed, nothing begun (the general loop's answer).
        assert!(matches!(
            sc.scan(b"+OK\r"),
            Ok(Scan::Partial { consumed: 0 })
        ));
        assert!(!sc.in_progress());
        // Malformed: left to the general loop, which reports it.
        assert_eq!(
            Scanner::new().scan(b"+OK\n").unwrap_err(),
            ProtocolError::LineNotTerminated
        );
        // Inside an aggregate a simple string is an element, not a reply.
        let mut sc = Scanner::new();
        assert!(matches!(
            sc.scan(b"*2\r\n"),
            Ok(Scan::Partial { consumed: 4 })
        ));
        assert!(matches!(
            sc.scan(b"+a\r\n"),
            Ok(Scan::Partial { consumed: 4 })
        ));
        let Ok(Scan::Reply { info, .. }) = sc.scan(b"+b\r\n") else {
            panic!()
        };
        assert_eq!(info.kind, Kind::Array);
    }

    #[test]
    fn empty_input_is_partial_and_not_in_progress() {
        let mut sc = Scanner::default();
        assert_eq!(sc.scan(b""), Ok(Scan::Partial { consumed: 0 }));
        assert!(!sc.in_progress());
        assert_eq!(sc.scan(b"+O"), Ok(Scan::Partial { consumed: 0 }));
        assert!(!sc.in_progress());
    }

    #[test]
    fn reset_forgets_progress() {
        let mut sc = Scanner::new();
        assert_eq!(sc.scan(b"*2\r\n:1\r\n"), Ok(Scan::Partial { consumed: 8 }));
        assert!(sc.in_progress());
        sc.reset();
        assert!(!sc.in_progress());
        assert_eq!(one(b":2\r\n").0, 4);
        let Ok(Scan::Reply { consumed: 4, .. }) = sc.scan(b":2\r\n") else {
            panic!()
        };
    }

    #[test]
    fn top_elements_count_an_mgets_keys_and_misses_across_reads() {
        let mut sc = Scanner::new();
        // MGET of four keys, two missing (RESP2 `$-1`, RESP3 `_`), nested nulls not counted.
        let reply = b"*4\r\n$1\r\na\r\n$-1\r\n*2\r\n_\r\n:1\r\n_\r\n";
        let Ok(Scan::Partial { consumed }) = sc.scan(&reply[..13]) else {
            panic!()
        };
        let Ok(Scan::Reply { info, .. }) = sc.scan(&reply[consumed..]) else {
            panic!()
        };
        assert_eq!(info.kind, Kind::Array);
        assert_eq!(sc.top_elements(), (4, 2));
        // The next aggregate starts again; an attribute's nulls are not its elements.
        let Ok(Scan::Reply { .. }) = sc.scan(b"|1\r\n+k\r\n_\r\n*1\r\n$1\r\nb\r\n") else {
            panic!()
        };
        assert_eq!(sc.top_elements(), (1, 0));
    }

    #[test]
    fn attribute_only_so_far_is_in_progress() {
        let mut sc = Scanner::new();
        assert_eq!(
            sc.scan(b"|1\r\n+a\r\n+b\r\n"),
            Ok(Scan::Partial { consumed: 12 })
        );
        assert!(sc.in_progress());
        let mut sc = Scanner::new();
        assert_eq!(sc.scan(b"|0\r\n"), Ok(Scan::Partial { consumed: 4 }));
        assert!(sc.in_progress());
    }
}
