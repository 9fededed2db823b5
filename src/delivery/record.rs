//! The delivery test's spec as its record block's shape (`block.rs`): what the journal's
//! `begin` line holds, and what the runtime's counts are added to (`result.rs`).

use super::block::DeliveryRecord;
use super::{DeliverySpec, Mode};

impl DeliveryRecord {
    /// The block's shape for `spec` (mode, receivers, publishers, channels, messages, rate,
    /// payload), without counts: what the journal's `begin` line holds, so a killed test's
    /// block is rebuilt from its seconds (`record::journal`).
    pub fn shape(spec: &DeliverySpec) -> Self {
        let (mode, channels, subscribe, slow) = match &spec.mode {
            Mode::PubSub {
                channels,
                patterns,
                sharded,
                slow,
                ..
            } => {
                let how = match (patterns, sharded) {
                    (true, _) => "pattern",
                    (_, true) => "sharded",
                    _ => "channel",
                };
                ("pubsub", Some(*channels), Some(how.to_string()), *slow)
            }
            Mode::Stream { .. } => ("stream", None, None, None),
        };
        Self {
            mode: mode.into(),
            receivers: spec.receivers(),
            publishers: spec.publishers,
            channels,
            subscribe,
            slow_subscribers: slow.map(|s| s.0),
            slow_pause_ms: slow.map(|s| s.1.as_millis() as u64),
            messages: spec.messages,
            rate: spec.rate,
            payload_bytes: spec.payload as u64,
            ..Self::default()
        }
    }
}
