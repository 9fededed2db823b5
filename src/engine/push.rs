//! RESP3 push messages: which kind a push is, from its first element, without allocating.
//!
//! Owns: [`classify`] and what each kind means for the request accounting ([`PushKind`]). A
//! push is classified from the start of its bytes *before* the scanner consumes it, because a
//! push split across reads would otherwise lose its first element: the scanner drops the bytes
//! it has absorbed. The classifier needs at most [`MAX_HEAD`] bytes, so the worker can hold them
//! back until they have arrived.
//!
//! Kinds (the first element, matched case-insensitively):
//! - `invalidate`: client-side caching (`CLIENT TRACKING`) invalidation;
//! - `message`, `pmessage`, `smessage`: pub/sub deliveries;
//! - `subscribe`, `psubscribe`, `ssubscribe`, `unsubscribe`, `punsubscribe`, `sunsubscribe`: in
//!   RESP3 these are the *replies* to the (un)subscribe commands, so they complete a request;
//! - anything else is an out-of-band push of another kind.

use crate::metrics::PushCounts;

/// What a push is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PushKind {
    /// `invalidate`.
    Invalidate,
    /// `message`, `pmessage`, `smessage`.
    Message,
    /// The RESP3 reply to an (un)subscribe command.
    SubscriptionReply,
    /// Anything else (or a push whose head could not be read).
    #[default]
    Other,
}

/// The result of looking at the start of a push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Peek {
    /// The first element has not fully arrived: look again with more bytes.
    Incomplete,
    Kind(PushKind),
}

/// The most bytes [`classify`] ever needs: the `>` header line and a bulk first element of up to
/// [`MAX_NAME`] bytes (a longer first element is [`PushKind::Other`] without reading it).
const MAX_HEAD: usize = 2 * (1 + MAX_DIGITS + 2) + MAX_NAME + 2;

/// Longest known kind name (`punsubscribe`, `sunsubscribe`).
const MAX_NAME: usize = 12;
/// Header lengths longer than this are not a known kind (nor sane).
const MAX_DIGITS: usize = 20;

/// Classifies the push starting at `buf[0]` (which must be `>`). Never reads past what the first
/// element needs; malformed input is [`PushKind::Other`] (the scanner reports the error).
pub(crate) fn classify(buf: &[u8]) -> Peek {
    debug_assert_eq!(buf.first(), Some(&b'>'));
    match head(buf) {
        // Cannot happen with the limits above; never ask the caller to hold back more.
        Peek::Incomplete if buf.len() >= MAX_HEAD => Peek::Kind(PushKind::Other),
        peek => peek,
    }
}

fn head(buf: &[u8]) -> Peek {
    let other = Peek::Kind(PushKind::Other);
    let (count, rest) = match line(&buf[1..]) {
        Line::Complete(count, rest) => (count, rest),
        Line::Incomplete => return Peek::Incomplete,
        Line::Malformed => return other,
    };
    if !matches!(parse_len(count), Some(n) if n > 0) {
        return other;
    }
    let name = match rest.first() {
        None => return Peek::Incomplete,
        Some(b'+') => match line(&rest[1..]) {
            Line::Complete(name, _) => name,
            Line::Incomplete => return Peek::Incomplete,
            Line::Malformed => return other,
        },
        Some(b'$') => {
            let (len, payload) = match line(&rest[1..]) {
                Line::Complete(len, payload) => (len, payload),
                Line::Incomplete => return Peek::Incomplete,
                Line::Malformed => return other,
            };
            match parse_len(len) {
                Some(len) if len <= MAX_NAME => {
                    if payload.len() < len {
                        return Peek::Incomplete;
                    }
                    &payload[..len]
                }
                _ => return other,
            }
        }
        Some(_) => return other,
    };
    Peek::Kind(kind_of(name))
}

/// The (un)subscribe commands. Their RESP3 replies are pushes named like the command (one per
/// channel or pattern argument), which is why `plan` checks their arguments with this same list.
pub const SUBSCRIPTION_COMMANDS: [&str; 6] = [
    "subscribe",
    "psubscribe",
    "ssubscribe",
    "unsubscribe",
    "punsubscribe",
    "sunsubscribe",
];

/// The kind a push's first element names.
fn kind_of(name: &[u8]) -> PushKind {
    const MESSAGES: [&[u8]; 3] = [b"message", b"pmessage", b"smessage"];
    let is = |list: &[&[u8]]| list.iter().any(|k| k.eq_ignore_ascii_case(name));
    if name.eq_ignore_ascii_case(b"invalidate") {
        PushKind::Invalidate
    } else if is(&MESSAGES) {
        PushKind::Message
    } else if SUBSCRIPTION_COMMANDS
        .iter()
        .any(|k| k.as_bytes().eq_ignore_ascii_case(name))
    {
        PushKind::SubscriptionReply
    } else {
        PushKind::Other
    }
}

/// A header line, as far as it has arrived.
enum Line<'a> {
    /// Its content (without CRLF) and what follows it.
    Complete(&'a [u8], &'a [u8]),
    /// No line end yet.
    Incomplete,
    /// Longer than any sane header, or LF without CR: not a known kind.
    Malformed,
}

fn line(buf: &[u8]) -> Line<'_> {
    match buf.iter().take(MAX_DIGITS + 2).position(|&b| b == b'\n') {
        Some(end) => match buf[..end].strip_suffix(b"\r") {
            Some(content) => Line::Complete(content, &buf[end + 1..]),
            None => Line::Malformed,
        },
        None if buf.len() >= MAX_DIGITS + 2 => Line::Malformed,
        None => Line::Incomplete,
    }
}

fn parse_len(digits: &[u8]) -> Option<usize> {
    if digits.is_empty() || digits.len() > MAX_DIGITS || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.iter().try_fold(0usize, |n, d| {
        n.checked_mul(10)?.checked_add(usize::from(d - b'0'))
    })
}

/// Whether a push of `kind` is the reply to the request in flight (so it completes it) rather
/// than an out-of-band message. Only (un)subscribe replies are, and only while a request waits:
/// an unsolicited one (e.g. `sunsubscribe` after a shard channel's slot moved) is counted as an
/// out-of-band push instead of being matched to an unrelated command.
#[inline]
pub(crate) fn is_reply(kind: PushKind, pending: u64, prefix_pending: usize) -> bool {
    kind == PushKind::SubscriptionReply && pending > 0 && prefix_pending == 0
}

/// Counts an out-of-band push.
#[inline]
pub(crate) fn count(counts: &mut PushCounts, kind: PushKind) {
    match kind {
        PushKind::Invalidate => counts.invalidations += 1,
        PushKind::Message => counts.messages += 1,
        PushKind::SubscriptionReply | PushKind::Other => counts.other += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(buf: &[u8]) -> PushKind {
        match classify(buf) {
            Peek::Kind(k) => k,
            Peek::Incomplete => panic!("incomplete: {:?}", String::from_utf8_lossy(buf)),
        }
    }

    #[test]
    fn known_kinds() {
        assert_eq!(
            kind(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"),
            PushKind::Invalidate
        );
        // A FLUSHALL invalidation has a null key list; only the head matters.
        assert_eq!(
            kind(b">2\r\n$10\r\ninvalidate\r\n_\r\n"),
            PushKind::Invalidate
        );
        assert_eq!(
            kind(b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"),
            PushKind::Message
        );
        assert_eq!(kind(b">4\r\n$8\r\npmessage\r\n"), PushKind::Message);
        assert_eq!(kind(b">3\r\n$8\r\nsmessage\r\n"), PushKind::Message);
        // Every (un)subscribe command's reply, as `plan` lists them.
        for name in SUBSCRIPTION_COMMANDS {
            let push = format!(">3\r\n${}\r\n{name}\r\n$2\r\nch\r\n:1\r\n", name.len());
            assert_eq!(kind(push.as_bytes()), PushKind::SubscriptionReply, "{name}");
        }
        // Simple-string heads and any case.
        assert_eq!(kind(b">3\r\n+Message\r\n"), PushKind::Message);
        assert_eq!(kind(b">2\r\n$10\r\nINVALIDATE\r\n"), PushKind::Invalidate);
    }

    #[test]
    fn other_kinds_and_odd_heads() {
        assert_eq!(kind(b">2\r\n$7\r\nmonitor\r\n:1\r\n"), PushKind::Other);
        assert_eq!(kind(b">0\r\n"), PushKind::Other);
        assert_eq!(kind(b">2\r\n:1\r\n:2\r\n"), PushKind::Other);
        assert_eq!(kind(b">1\r\n*1\r\n$1\r\na\r\n"), PushKind::Other);
        // A long first element is not a known kind, whatever follows.
        assert_eq!(kind(b">2\r\n$100\r\n"), PushKind::Other);
        // Garbage headers are left to the scanner.
        assert_eq!(kind(b">x\r\n"), PushKind::Other);
        assert_eq!(kind(b">2\r\n$-1\r\n"), PushKind::Other);
        assert_eq!(kind(&[b'>'; 40]), PushKind::Other);
        assert_eq!(kind(b">2\n$7\r\n"), PushKind::Other);
        assert_eq!(kind(b">2\r\n$7\n"), PushKind::Other);
    }

    #[test]
    fn every_prefix_of_a_head_is_incomplete() {
        // (push, bytes needed: up to the end of a bulk name, or of a simple-string line)
        for (push, head) in [
            (&b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"[..], 17),
            (b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n", 19),
            (b">3\r\n+message\r\n", 14),
        ] {
            let whole = kind(push);
            for cut in 1..head {
                assert_eq!(classify(&push[..cut]), Peek::Incomplete, "cut {cut}");
            }
            for cut in head..=push.len() {
                assert_eq!(classify(&push[..cut]), Peek::Kind(whole), "cut {cut}");
            }
            assert!(head <= MAX_HEAD);
        }
    }

    #[test]
    fn only_awaited_subscription_replies_complete_requests() {
        assert!(is_reply(PushKind::SubscriptionReply, 1, 0));
        assert!(!is_reply(PushKind::SubscriptionReply, 0, 0));
        assert!(!is_reply(PushKind::SubscriptionReply, 1, 1));
        assert!(!is_reply(PushKind::Invalidate, 1, 0));
        let mut c = PushCounts::default();
        for k in [
            PushKind::Invalidate,
            PushKind::Invalidate,
            PushKind::Message,
            PushKind::Other,
            PushKind::SubscriptionReply,
        ] {
            count(&mut c, k);
        }
        assert_eq!((c.invalidations, c.messages, c.other), (2, 1, 2));
    }
}
