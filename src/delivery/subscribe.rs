//! A subscriber's connection: opened, its `CLIENT ID` asked, its subscription confirmed. Apart
//! from `pubsub` because the first subscription (`pubsub`), a sharded subscriber's new one after
//! its slot moved (`resubscribe`) and the monitor (which reads the ids) all need it.

use std::time::Duration;

use resp::Value;

use super::connect;
use crate::engine::control::ControlConn;
use crate::engine::{ConnSetup, EngineError};

/// How long a subscription's confirmation may take.
pub(super) const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);
/// A subscriber's read timeout: how often it looks at the stop flags while nothing arrives.
pub(super) const POLL: Duration = Duration::from_millis(100);

/// A subscriber's node (index into the test's nodes) and `CLIENT ID` there; `None` when the
/// server refused `CLIENT ID`.
pub(super) type SubscriberId = Option<(usize, u64)>;

/// A subscriber connection, its subscription confirmed, and its `CLIENT ID` (`None` when the
/// server refuses it: then the monitor cannot tell the server dropped it).
pub(super) fn subscribe(
    setup: &ConnSetup,
    verb: &[u8],
    name: &[u8],
) -> Result<(ControlConn, Option<u64>), EngineError> {
    let mut c = connect::open(setup)?;
    let id = match c.call(&[b"CLIENT".as_slice(), b"ID"])? {
        Value::Integer(n) => u64::try_from(n).ok(),
        _ => None,
    };
    c.send(&[verb, name])?;
    c.set_timeout(SUBSCRIBE_TIMEOUT)?;
    let failed = |what: String| {
        EngineError::Other(format!(
            "{}: {} {} failed: {what}",
            setup.target.display(),
            String::from_utf8_lossy(verb),
            String::from_utf8_lossy(name)
        ))
    };
    match c.wait_next()? {
        Some(Value::Array(items) | Value::Push(items))
            if items
                .first()
                .and_then(Value::as_str)
                .is_some_and(|w| w.eq_ignore_ascii_case(&String::from_utf8_lossy(verb))) => {}
        Some(Value::Error(e)) => return Err(failed(String::from_utf8_lossy(&e).into_owned())),
        Some(other) => return Err(failed(format!("unexpected reply {other:?}"))),
        None => return Err(failed("no confirmation within 10 s".into())),
    }
    c.set_timeout(POLL)?;
    Ok((c, id))
}
