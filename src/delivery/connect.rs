//! A delivery connection opened as the benchmark's own, with the run's prefix (AUTH, HELLO,
//! SELECT, the client name) checked: what every delivery connection — publisher, subscriber,
//! consumer, the monitor, a cluster node's — starts from. Apart from `conn.rs` (the publishers)
//! and `route.rs` (which node a name lives on), which both open connections.

use crate::engine::control::{ControlConn, error_text};
use crate::engine::{ConnSetup, EngineError};

/// A connection prepared as the benchmark's own: the prefix's replies checked.
pub(super) fn open(setup: &ConnSetup) -> Result<ControlConn, EngineError> {
    let mut c = ControlConn::connect(&setup.target)?;
    if !setup.prefix_commands.is_empty() {
        let replies = c.call_raw(&setup.prefix, setup.prefix_commands.len())?;
        for (name, reply) in setup.prefix_commands.iter().zip(&replies) {
            if let Some(e) = error_text(reply) {
                return Err(EngineError::Other(format!(
                    "{}: {name} failed: {e}",
                    setup.target.display()
                )));
            }
        }
    }
    Ok(c)
}
