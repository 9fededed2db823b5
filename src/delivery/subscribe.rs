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

/// Whether `v` is the server's `sunsubscribe` (RESP2 array or RESP3 push).
pub(super) fn is_sunsubscribe(v: &Value) -> bool {
    let (Value::Array(items) | Value::Push(items)) = v else {
        return false;
    };
    items
        .first()
        .and_then(Value::as_str)
        .is_some_and(|w| w.eq_ignore_ascii_case("sunsubscribe"))
}

/// The payload of a `message`/`smessage`/`pmessage` (array or push); `None` for anything else.
pub(super) fn message_payload(v: &Value) -> Option<&[u8]> {
    let (Value::Array(items) | Value::Push(items)) = v else {
        return None;
    };
    let at = match items.first()?.as_str()? {
        "message" | "smessage" => 2,
        "pmessage" => 3,
        _ => return None,
    };
    match items.get(at)? {
        Value::BulkString(b) => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_sunsubscribe_is_told_from_messages() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let push = Value::Push(vec![bulk("sunsubscribe"), bulk("ch"), Value::Integer(0)]);
        let array = Value::Array(vec![bulk("sunsubscribe"), bulk("ch"), Value::Integer(0)]);
        let message = Value::Push(vec![bulk("smessage"), bulk("ch"), bulk("x")]);
        assert!(is_sunsubscribe(&push) && is_sunsubscribe(&array));
        assert!(!is_sunsubscribe(&message) && !is_sunsubscribe(&Value::Integer(0)));
    }

    #[test]
    fn message_payloads_are_found_in_every_shape() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let m = Value::Array(vec![bulk("message"), bulk("ch"), bulk("p1")]);
        let pm = Value::Push(vec![bulk("pmessage"), bulk("c*"), bulk("ch"), bulk("p2")]);
        let sm = Value::Push(vec![bulk("smessage"), bulk("ch"), bulk("p3")]);
        let sub = Value::Push(vec![bulk("subscribe"), bulk("ch"), Value::Integer(1)]);
        assert_eq!(message_payload(&m), Some(b"p1".as_slice()));
        assert_eq!(message_payload(&pm), Some(b"p2".as_slice()));
        assert_eq!(message_payload(&sm), Some(b"p3".as_slice()));
        assert_eq!(message_payload(&sub), None);
        assert_eq!(message_payload(&Value::Integer(1)), None);
    }
}
