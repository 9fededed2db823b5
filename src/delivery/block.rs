//! The record's `delivery` block of a `--pubsub` or `--stream` test (issue 26 item 3): the mode's
//! shape, the message counts (published, owed, delivered, lost, duplicate), fan-out or acks, the
//! receivers the server disconnected, and one row per second (how far receivers were behind,
//! the server's largest subscriber output buffer, the group's pending entries and lag). The
//! delivery latency itself is the test's ordinary histograms and summaries (send → first
//! delivery), so `compare`, `report` and `merge` read it as any test's latency.
//!
//! Every field defaults, so records written before the block existed still read. The runtime
//! counts into this shape (`DeliveryResult::block`); `record.rs` gives it the test's spec.

use serde::{Deserialize, Serialize};

/// A delivery test's own figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeliveryRecord {
    /// `pubsub` or `stream`.
    pub mode: String,
    /// Subscriber connections (`--pubsub`) or consumers of the group (`--stream`).
    pub receivers: u32,
    pub publishers: u32,
    /// Pub/sub: channels the messages went round; `null` for streams.
    pub channels: Option<u32>,
    /// Pub/sub: `channel`, `pattern` or `sharded`; `null` for streams.
    pub subscribe: Option<String>,
    /// `--slow-subscribers`: how many, and their pause between reads (ms).
    pub slow_subscribers: Option<u32>,
    pub slow_pause_ms: Option<u64>,
    /// Messages asked for, and the rate (`null`: as fast as the publishers went).
    pub messages: u64,
    pub rate: Option<u64>,
    pub payload_bytes: u64,
    /// Publishes (or `XADD`s) acknowledged, and those that failed.
    pub published: u64,
    pub publish_errors: u64,
    /// Deliveries owed: per acknowledged message, each receiver it was for.
    pub expected: u64,
    /// First deliveries; duplicates; owed but never delivered (`expected − delivered`); messages
    /// that were not this run's.
    pub delivered: u64,
    pub duplicates: u64,
    pub lost: u64,
    pub foreign: u64,
    /// Pub/sub: the receivers the server counted (sum of the publish replies).
    pub fanout: Option<u64>,
    /// Streams: entries acknowledged (sum of `XACK` replies).
    pub acked: Option<u64>,
    /// Receivers whose connection ended during the test.
    pub disconnects: Vec<DisconnectRecord>,
    /// The server's `client_output_buffer_limit_disconnections` over the test (`null` when it
    /// does not report it): the disconnections above that were the buffer limit's.
    pub buffer_limit_disconnections: Option<u64>,
    pub seconds: Vec<DeliverySecond>,
    /// `--cluster`: each node the test used (absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<DeliveryNode>,
    /// `--cluster`: `MOVED` replies the publishers followed (a slot migrated during the test).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<u64>,
    /// `--cluster`: sharded subscribers that subscribed again after the server's
    /// `sunsubscribe` (their channel's slot moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resubscribed: Option<u64>,
}

/// One cluster node's part of a delivery test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeliveryNode {
    /// `host:port`.
    pub node: String,
    /// Channels (or the stream) whose slot it owned when the test began.
    pub channels: u32,
    /// Receivers connected to it.
    pub receivers: u32,
    /// Messages it acknowledged.
    pub published: u64,
    /// First deliveries to its receivers.
    pub delivered: u64,
}

/// A receiver whose connection ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DisconnectRecord {
    pub receiver: u32,
    /// Seconds since the test's start.
    pub at_s: f64,
    pub reason: String,
    /// Seen from the server's side (gone from `CLIENT LIST` while still subscribed): the server
    /// closed it (with Redis 7.0, which has no counter for it, the only sign of its buffer
    /// limit).
    pub by_server: bool,
    /// Its output buffer on the server when last seen, bytes.
    pub output_buffer_bytes: Option<u64>,
    /// `-e`: seconds since the test's start when it was subscribed again (absent: it was not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconnected_at_s: Option<f64>,
}

/// One second of a delivery test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeliverySecond {
    pub second: u32,
    pub published: u64,
    pub delivered: u64,
    /// The slowest delivery of the second, µs.
    pub max_latency_us: Option<f64>,
    /// At the second's end, the furthest a receiver was behind, in messages.
    pub behind: u64,
    /// Pub/sub: the largest subscriber output buffer on the server, bytes.
    pub output_buffer_bytes: Option<u64>,
    /// Streams: the group's pending entries, and their growth over the second.
    pub pending: Option<u64>,
    pub pending_growth: Option<i64>,
    /// Streams: the group's lag as the server counts it.
    pub server_lag: Option<u64>,
}
