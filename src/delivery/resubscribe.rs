//! A sharded subscriber whose channel's slot moved (cluster mode, issue 26): the node it was on
//! sends `sunsubscribe` when it loses the slot, and the subscriber subscribes again where the
//! channel now lives. It asks its old node first (`SSUBSCRIBE` there answers `-MOVED slot
//! host:port` once the slot has gone, or confirms when it had not), then opens a connection to
//! the node named and subscribes there. Messages published between the move and the new
//! subscription are owed and not delivered: they count as lost, as for any client that
//! re-subscribes.

use std::sync::Mutex;
use std::sync::atomic::Ordering;

use resp::Value;

use super::Live;
use super::route::{Nodes, moved_to};
use super::subscribe::{POLL, SUBSCRIBE_TIMEOUT, SubscriberId, subscribe};
use crate::engine::EngineError;
use crate::engine::control::ControlConn;

/// What a sharded subscriber needs to follow its channel.
pub(super) struct Follow<'a> {
    pub nodes: &'a Nodes,
    pub channel: &'a [u8],
    /// Its node and `CLIENT ID`, as the monitor reads them (updated when it moves).
    pub id: &'a Mutex<SubscriberId>,
    /// Each node it moved to (`host:port`) with its first deliveries before the move, so the
    /// record's per-node deliveries follow it.
    pub moves: &'a Mutex<Vec<(String, u64)>>,
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

impl Follow<'_> {
    /// Subscribes again (see the module comment); `c` becomes the connection now subscribed.
    /// `delivered`: the subscriber's first deliveries so far.
    pub(super) fn resubscribe(
        &self,
        c: &mut ControlConn,
        live: &Live,
        delivered: u64,
    ) -> Result<(), EngineError> {
        let ssubscribe = b"SSUBSCRIBE".as_slice();
        c.set_timeout(SUBSCRIBE_TIMEOUT)?;
        c.send(&[ssubscribe, self.channel])?;
        // A few replies at most: a confirmation, or the error that names the new node.
        for _ in 0..4 {
            match c.wait_next()? {
                Some(v @ Value::Error(_)) => {
                    let Some((host, port)) = moved_to(&v) else {
                        return Err(EngineError::Other(format!(
                            "SSUBSCRIBE again after sunsubscribe: {v:?}"
                        )));
                    };
                    let setup = self.nodes.setup_at(&host, port)?;
                    let (moved, id) = subscribe(&setup, ssubscribe, self.channel)?;
                    // The monitor learns the new connection before the old one closes, so it
                    // never takes the move for the server dropping the subscriber.
                    let name = setup.target.display();
                    let node = self.nodes.index_of(&name);
                    *self.id.lock().unwrap_or_else(|e| e.into_inner()) = node.zip(id);
                    *c = moved;
                    let mut moves = self.moves.lock().unwrap_or_else(|e| e.into_inner());
                    moves.push((name, delivered));
                    live.resubscribed.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                Some(Value::Array(items) | Value::Push(items))
                    if items
                        .first()
                        .and_then(Value::as_str)
                        .is_some_and(|w| w.eq_ignore_ascii_case("ssubscribe")) =>
                {
                    c.set_timeout(POLL)?;
                    live.resubscribed.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                Some(_) => {}
                None => break,
            }
        }
        Err(EngineError::Other(
            "SSUBSCRIBE again after sunsubscribe: no reply within 10 s".into(),
        ))
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
}
