//! A delivery connection opened as the benchmark's own, with the run's prefix (AUTH, HELLO,
//! SELECT, the client name) checked: what every delivery connection — publisher, subscriber,
//! consumer, the monitor, a cluster node's — starts from. Apart from `conn.rs` (the publishers)
//! and `route.rs` (which node a name lives on), which both open connections.

use crate::engine::control::{ControlConn, error_text};
use crate::engine::{ConnSetup, EngineError, is_maxclients};

/// A connection prepared as the benchmark's own: the prefix's replies checked.
pub(super) fn open(setup: &ConnSetup) -> Result<ControlConn, EngineError> {
    let mut c = ControlConn::connect(&setup.target)?;
    if !setup.prefix_commands.is_empty() {
        let replies = c.call_raw(&setup.prefix, setup.prefix_commands.len())?;
        for (name, reply) in setup.prefix_commands.iter().zip(&replies) {
            if let Some(e) = error_text(reply) {
                if is_maxclients(e.as_bytes()) {
                    return Err(refusal(setup, e.as_bytes()));
                }
                return Err(EngineError::Other(format!(
                    "{}: {name} failed: {e}",
                    setup.target.display()
                )));
            }
        }
    }
    Ok(c)
}

/// A connection refused by a server at `maxclients`, as a refused connect is said.
pub(super) fn refusal(setup: &ConnSetup, text: &[u8]) -> EngineError {
    EngineError::Connect {
        target: setup.target.display(),
        reason: format!(
            "refused by the server's maxclients ({})",
            String::from_utf8_lossy(text)
        ),
    }
}

/// Whether `e` is a subscriber's connection refused by a server at `maxclients`: under `-e`
/// that subscriber is down and tries again, as a dropped one does.
pub(super) fn is_refusal(e: &EngineError) -> bool {
    matches!(e, EngineError::Connect { reason, .. } if reason.starts_with("refused by the server's maxclients"))
}
