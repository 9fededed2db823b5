//! memtier's `--scan-incremental-iteration`: a connection's next `SCAN` carries the cursor its
//! last `SCAN` reply returned, until the cursor comes back 0 (or the cycle has sent its maximum
//! of continuations), then the walk starts again from `SCAN 0`.
//!
//! Why it fits the engine only at `-P 1`: a batch is written before its replies arrive, so only
//! a batch of one request can depend on the reply before it. At `-P 1` the reply is framed
//! anyway; its head (`*2\r\n$N\r\n<cursor>\r\n`) is read here before the scanner consumes it,
//! and the next request is written into the connection's own batch buffer (sized once for the
//! longest cursor), so following the cursor allocates nothing per request.
//!
//! The pieces are pure functions over byte slices, so the worker only calls them: [`split`] (at
//! setup: where the template's cursor argument is), [`write`] (per request), [`peek`] (per reply)
//! and [`Walk::follow`] (the cursor to send next).

use std::ops::Range;

/// The walk's one setting: how many continuation `SCAN`s a cycle sends at most (memtier's
/// `--scan-incremental-max-iterations`; `None` follows the cursor until it returns 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanWalk {
    pub max_continuations: Option<u64>,
}

/// The bytes a cursor argument takes at most: `$20\r\n` + 20 digits + `\r\n`.
pub(crate) const MAX_CURSOR_ARG: usize = 5 + 20 + 2;

/// Where the cursor argument (`$1\r\n0\r\n`) lies in a one-command `SCAN` unit, or `None` when
/// the unit is not `SCAN <cursor> …` (its first argument after the name).
pub fn split(unit: &[u8]) -> Option<Range<usize>> {
    let (count, mut at) = line(unit, 0, b'*')?;
    if count < 2 {
        return None;
    }
    let (len, body) = line(unit, at, b'$')?;
    let name = unit.get(body..body + len as usize)?;
    if !name.eq_ignore_ascii_case(b"SCAN") {
        return None;
    }
    at = body + len as usize + 2;
    let (len, body) = line(unit, at, b'$')?;
    let cursor = unit.get(body..body + len as usize)?;
    if cursor.is_empty() || !cursor.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(at..body + len as usize + 2)
}

/// Writes the unit with `cursor` in place of its cursor argument (`arg`, from [`split`]) into
/// `out` and returns the request's length. `out` must hold `unit.len() + MAX_CURSOR_ARG` bytes.
pub(crate) fn write(out: &mut [u8], unit: &[u8], arg: &Range<usize>, cursor: u64) -> usize {
    let mut digits = [0u8; 20];
    let n = decimal(cursor, &mut digits);
    let mut len_digits = [0u8; 20];
    let ln = decimal(n as u64, &mut len_digits);
    let mut at = 0;
    for part in [
        &unit[..arg.start],
        b"$",
        &len_digits[20 - ln..],
        b"\r\n",
        &digits[20 - n..],
        b"\r\n",
        &unit[arg.end..],
    ] {
        out[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    at
}

/// What the head of a reply says about the cursor.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Peek {
    /// A `SCAN` reply returning this cursor.
    Cursor(u64),
    /// Not a `SCAN` reply (an error, …): the walk starts again.
    Other,
    /// The head is not all in the buffer yet: wait for more bytes before scanning.
    Incomplete,
}

/// Reads the cursor from the head of the reply that starts `buf`.
pub(crate) fn peek(buf: &[u8]) -> Peek {
    match buf.first() {
        None => return Peek::Incomplete,
        Some(b'*') => {}
        Some(_) => return Peek::Other,
    }
    let Some(end) = find_crlf(buf, 0) else {
        return head_incomplete(buf);
    };
    if &buf[1..end] != b"2" {
        return Peek::Other;
    }
    let at = end + 2;
    match buf.get(at) {
        None => return Peek::Incomplete,
        Some(b'$') => {}
        Some(_) => return Peek::Other,
    }
    let Some(len_end) = find_crlf(buf, at) else {
        return head_incomplete(&buf[at..]);
    };
    let Some(len) = number(&buf[at + 1..len_end]).filter(|n| (1..=20).contains(n)) else {
        return Peek::Other;
    };
    let body = len_end + 2;
    let Some(digits) = buf.get(body..body + len as usize) else {
        return Peek::Incomplete;
    };
    number(digits).map_or(Peek::Other, Peek::Cursor)
}

/// A connection's place in its walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Walk {
    /// The cursor the next `SCAN` sends (0: a new cycle).
    pub(crate) cursor: u64,
    /// Continuations sent in this cycle.
    pub(crate) continuations: u64,
}

impl Walk {
    /// Takes the reply's cursor (`None`: not a `SCAN` reply) as the next one to send, or starts
    /// a new cycle when it is 0, the reply was not a cursor, or the cycle is at its maximum.
    pub(crate) fn follow(&mut self, reply: Option<u64>, walk: ScanWalk) {
        match reply {
            Some(c)
                if c != 0
                    && walk
                        .max_continuations
                        .is_none_or(|m| self.continuations < m) =>
            {
                self.cursor = c;
                self.continuations += 1;
            }
            _ => *self = Walk::default(),
        }
    }
}

/// A header line `<kind><number>\r\n` at `at`: its number and where the next line starts.
fn line(buf: &[u8], at: usize, kind: u8) -> Option<(u64, usize)> {
    if *buf.get(at)? != kind {
        return None;
    }
    let end = find_crlf(buf, at)?;
    Some((number(&buf[at + 1..end])?, end + 2))
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

/// A header line not ended yet: wait for it, unless it is already longer than a header can be.
fn head_incomplete(line: &[u8]) -> Peek {
    if line.len() > 24 {
        Peek::Other
    } else {
        Peek::Incomplete
    }
}

/// A decimal number of at most 20 digits, no sign.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(d - b'0')))
            .flatten()
    })
}

/// Writes `n`'s decimal digits at the end of `out`; returns how many.
fn decimal(mut n: u64, out: &mut [u8; 20]) -> usize {
    let mut i = 20;
    loop {
        i -= 1;
        out[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return 20 - i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: &[u8] = b"*4\r\n$4\r\nscan\r\n$1\r\n0\r\n$5\r\nCOUNT\r\n$2\r\n10\r\n";

    #[test]
    fn split_finds_the_cursor_argument_of_scan_only() {
        let arg = split(UNIT).unwrap();
        assert_eq!(&UNIT[arg], b"$1\r\n0\r\n");
        assert_eq!(split(b"*2\r\n$3\r\nGET\r\n$1\r\n0\r\n"), None);
        assert_eq!(split(b"*1\r\n$4\r\nSCAN\r\n"), None);
        assert_eq!(split(b"*2\r\n$4\r\nSCAN\r\n$1\r\nx\r\n"), None);
    }

    #[test]
    fn write_puts_any_cursor_in_place() {
        let arg = split(UNIT).unwrap();
        let mut out = vec![0; UNIT.len() + MAX_CURSOR_ARG];
        let n = write(&mut out, UNIT, &arg, 0);
        assert_eq!(&out[..n], UNIT);
        let n = write(&mut out, UNIT, &arg, u64::MAX);
        assert_eq!(
            &out[..n],
            &b"*4\r\n$4\r\nscan\r\n$20\r\n18446744073709551615\r\n$5\r\nCOUNT\r\n$2\r\n10\r\n"[..]
        );
    }

    #[test]
    fn peek_reads_the_cursor_or_waits_for_it() {
        let reply = b"*2\r\n$3\r\n176\r\n*1\r\n$3\r\nkey\r\n";
        assert_eq!(peek(reply), Peek::Cursor(176));
        for cut in 0..11 {
            assert_eq!(peek(&reply[..cut]), Peek::Incomplete, "cut at {cut}");
        }
        assert_eq!(peek(&reply[..11]), Peek::Cursor(176));
        assert_eq!(peek(b"-ERR invalid cursor\r\n"), Peek::Other);
        assert_eq!(peek(b"*3\r\n"), Peek::Other);
        assert_eq!(peek(b"*2\r\n:1\r\n"), Peek::Other);
    }

    #[test]
    fn follow_restarts_at_zero_at_the_maximum_and_after_other_replies() {
        let max = ScanWalk {
            max_continuations: Some(2),
        };
        let mut w = Walk::default();
        for c in [5, 9] {
            w.follow(Some(c), max);
            assert_eq!(w.cursor, c);
        }
        w.follow(Some(12), max);
        assert_eq!(w, Walk::default(), "two continuations, then SCAN 0");
        w.follow(Some(5), ScanWalk::default());
        w.follow(Some(0), ScanWalk::default());
        assert_eq!(w, Walk::default());
        w.follow(Some(5), ScanWalk::default());
        w.follow(None, ScanWalk::default());
        assert_eq!(w, Walk::default());
    }
}
