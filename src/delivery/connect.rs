//! The delivery modes' connections: a blocking connection with the run's prefix (AUTH, SELECT,
//! HELLO 3 as every benchmark connection), its replies checked. A file of its own because the
//! publisher loop (`conn`), the router (`route`), the subscribers and the monitor all open one.

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
