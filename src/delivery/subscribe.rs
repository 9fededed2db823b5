//! How a subscriber connection gets subscribed: opened with the run's prefix, its `CLIENT ID`
//! asked (the monitor tells the server's drops by it), its `SUBSCRIBE`/`PSUBSCRIBE`/`SSUBSCRIBE`
//! confirmed, then handed to a subscriber thread's event loop (`subscribers.rs`). The same path
//! serves a subscriber reconnecting after its connection failed (`-e`), and a sharded subscriber
//! whose channel's slot moved (cluster mode): the node it was on sends `sunsubscribe` when it
//! loses the slot, and the subscriber asks that node again on a fresh connection (`SSUBSCRIBE`
//! there answers `-MOVED slot host:port` once the slot has gone, or confirms when it had not),
//! following the node named. Messages published between a drop or move and the new
//! subscription are owed and not delivered: they count as lost, as for any client that
//! re-subscribes.

use std::time::Duration;

use resp::Value;

use super::connect::refusal;
use super::route::{Nodes, moved_to};
use crate::engine::control::ControlConn;
use crate::engine::{ConnSetup, EngineError, is_maxclients};

/// How long a subscription's confirmation may take.
pub(super) const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The most `MOVED` replies a sharded subscriber follows to find its channel's node.
const MAX_MOVES: u32 = 4;

/// A subscriber's node (index into the test's nodes) and `CLIENT ID` there; `None` when the
/// server refused `CLIENT ID`, or while the subscriber is not connected.
pub(super) type SubscriberId = Option<(usize, u64)>;

/// What a subscriber subscribes to.
#[derive(Clone, Copy, Debug)]
pub(super) struct Subscription<'a> {
    /// `SUBSCRIBE`, `PSUBSCRIBE` or `SSUBSCRIBE`.
    pub verb: &'static [u8],
    /// The channel (or pattern).
    pub name: &'a [u8],
}

/// A subscriber connection on `setup`'s node: its `CLIENT ID` (`None` when the server refuses
/// it: then the monitor cannot tell the server dropped it) and the confirmation's outcome:
/// `Ok` subscribed, `Err` the error reply (a sharded channel's `-MOVED`).
type Attempt = (ControlConn, Option<u64>, Result<(), Value>);

fn attempt(setup: &ConnSetup, to: Subscription<'_>) -> Result<Attempt, EngineError> {
    let mut c = super::connect::open(setup)?;
    let id = match c.call(&[b"CLIENT".as_slice(), b"ID"])? {
        Value::Integer(n) => u64::try_from(n).ok(),
        // A server at `maxclients` answers a connection's first command so, then closes it: a
        // refused connection (the engine's rule), not a subscription that failed.
        Value::Error(e) if is_maxclients(&e) => return Err(refusal(setup, &e)),
        _ => None,
    };
    c.send(&[to.verb, to.name])?;
    c.set_timeout(SUBSCRIBE_TIMEOUT)?;
    // A few values at most: the confirmation, or the error that names the new node.
    for _ in 0..4 {
        match c.wait_next()? {
            Some(Value::Array(items) | Value::Push(items))
                if items
                    .first()
                    .and_then(Value::as_str)
                    .is_some_and(|w| w.eq_ignore_ascii_case(&String::from_utf8_lossy(to.verb))) =>
            {
                return Ok((c, id, Ok(())));
            }
            Some(e @ Value::Error(_)) => return Ok((c, id, Err(e))),
            // A message or an unsubscription pushed before the confirmation.
            Some(_) => {}
            None => break,
        }
    }
    Err(failed(setup, to, "no confirmation within 10 s".into()))
}

fn failed(setup: &ConnSetup, to: Subscription<'_>, what: String) -> EngineError {
    EngineError::Other(format!(
        "{}: {} {} failed: {what}",
        setup.target.display(),
        String::from_utf8_lossy(to.verb),
        String::from_utf8_lossy(to.name)
    ))
}

/// A subscriber connection for `to` starting at node `node` of `nodes` and following `-MOVED`
/// replies to the node that owns the channel now (sharded pub/sub; other subscriptions never
/// get one): the connection, its node (index into `nodes`, `None` for one the test did not
/// begin with), its `host:port`, and its `CLIENT ID`.
pub(super) fn subscribe_following(
    nodes: &Nodes,
    node: usize,
    to: Subscription<'_>,
) -> Result<(ControlConn, Option<usize>, String, Option<u64>), EngineError> {
    let mut setup = nodes.setups[node].clone();
    for _ in 0..=MAX_MOVES {
        let (c, id, outcome) = attempt(&setup, to)?;
        let name = setup.target.display();
        match outcome {
            Ok(()) => return Ok((c, nodes.index_of(&name), name, id)),
            Err(e) => match moved_to(&e) {
                Some((host, port)) => setup = nodes.setup_at(&host, port)?,
                None => return Err(failed(&setup, to, format!("{e:?}"))),
            },
        }
    }
    Err(failed(&setup, to, "too many MOVED replies".into()))
}

/// Whether `frame` (one whole reply, as `resp::Scanner` framed it) is the server's
/// `sunsubscribe` (RESP2 array or RESP3 push).
pub(super) fn is_sunsubscribe(frame: &[u8]) -> bool {
    bulk_items(frame)
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(b"sunsubscribe"))
}

/// The payload of a `message`/`smessage`/`pmessage` (array or push) framed whole in `frame`;
/// `None` for anything else.
///
/// Why read the frame in place rather than parse it into a `resp::Value`: this runs once per
/// delivery, and a `Value` of a message is four allocations and four frees (the array and its
/// three strings), most of a delivery's cost (`docs/performance.md`, "Each mode beside the
/// engine").
pub(super) fn message_payload(frame: &[u8]) -> Option<&[u8]> {
    let mut items = bulk_items(frame);
    let skip = match items.next()? {
        b"message" | b"smessage" => 1,
        b"pmessage" => 2,
        _ => return None,
    };
    items.nth(skip)
}

/// The leading bulk-string elements of an array or push framed whole in `frame`, in order, up
/// to the first element that is not one (an integer, a null, a nested aggregate).
fn bulk_items(frame: &[u8]) -> BulkItems<'_> {
    let left = match frame.first() {
        Some(b'*' | b'>') => line(&frame[1..]).and_then(|(n, rest)| Some((decimal(n)?, rest))),
        _ => None,
    };
    let (left, rest) = left.unwrap_or((0, &[]));
    BulkItems { rest, left }
}

struct BulkItems<'a> {
    rest: &'a [u8],
    left: u64,
}

impl<'a> Iterator for BulkItems<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = (|| {
            let (len, rest) = line(self.rest.strip_prefix(b"$")?)?;
            let len = usize::try_from(decimal(len)?).ok()?;
            let bytes = rest.get(..len)?;
            let after = rest.get(len..)?.strip_prefix(b"\r\n")?;
            Some((bytes, after))
        })();
        match item {
            Some((bytes, after)) => {
                self.rest = after;
                Some(bytes)
            }
            None => {
                self.left = 0;
                None
            }
        }
    }
}

/// A header line's text (up to its CRLF) and what follows it.
fn line(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let cr = buf.iter().position(|&b| b == b'\r')?;
    Some((&buf[..cr], buf[cr..].strip_prefix(b"\r\n")?))
}

/// A header's non-negative decimal count or length (`None` for a null's `-1` or anything else).
fn decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 19 {
        return None;
    }
    text.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// `v` as the server sends it.
    fn wire(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        v.encode(&mut out);
        out
    }

    #[test]
    fn the_servers_sunsubscribe_is_told_from_messages() {
        let push = Value::Push(vec![bulk("sunsubscribe"), bulk("ch"), Value::Integer(0)]);
        let array = Value::Array(vec![bulk("SUNSUBSCRIBE"), bulk("ch"), Value::Integer(0)]);
        let message = Value::Push(vec![bulk("smessage"), bulk("ch"), bulk("x")]);
        assert!(is_sunsubscribe(&wire(&push)) && is_sunsubscribe(&wire(&array)));
        assert!(!is_sunsubscribe(&wire(&message)));
        assert!(!is_sunsubscribe(&wire(&Value::Integer(0))));
    }

    #[test]
    fn message_payloads_are_found_in_every_shape() {
        let m = Value::Array(vec![bulk("message"), bulk("ch"), bulk("p1")]);
        let pm = Value::Push(vec![bulk("pmessage"), bulk("c*"), bulk("ch"), bulk("p2")]);
        let sm = Value::Push(vec![bulk("smessage"), bulk("ch"), bulk("p\r\n3")]);
        let sub = Value::Push(vec![bulk("subscribe"), bulk("ch"), Value::Integer(1)]);
        let odd = Value::Array(vec![bulk("message"), Value::Integer(1), bulk("p")]);
        assert_eq!(message_payload(&wire(&m)), Some(b"p1".as_slice()));
        assert_eq!(message_payload(&wire(&pm)), Some(b"p2".as_slice()));
        assert_eq!(message_payload(&wire(&sm)), Some(b"p\r\n3".as_slice()));
        assert_eq!(message_payload(&wire(&sub)), None);
        assert_eq!(message_payload(&wire(&odd)), None);
        assert_eq!(message_payload(&wire(&Value::Integer(1))), None);
        // A frame cut short or with a length past its end is not read beyond it.
        let whole = wire(&m);
        assert_eq!(message_payload(&whole[..whole.len() - 3]), None);
        assert_eq!(
            message_payload(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$99\r\np1\r\n"),
            None
        );
    }
}
