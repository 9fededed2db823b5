//! Merging the shards' `delivery` blocks (`--pubsub`/`--stream` run as shards, each on its own
//! names, so no message is counted by two shards): counts add, exactly; per second, publishes
//! and deliveries add, the furthest behind and the largest output buffer are the largest of any
//! shard, pending entries and lag add (each shard has its own stream). The latency histograms are
//! the test's own and are added with every test's (`hist`).

use super::block::{DeliveryNode, DeliveryRecord, DeliverySecond};

/// The merged block of the shards' test (one per shard, by file name, in input order; `None`:
/// that shard's test has none): `None` when no shard has one, an error when only some do or
/// they ran different modes, or a count's sum does not fit (a corrupt record; `merge` names the
/// test and the block before the message).
pub(super) fn merge(
    shards: &[(&str, Option<&DeliveryRecord>)],
) -> Result<Option<DeliveryRecord>, String> {
    let blocks: Vec<&DeliveryRecord> = shards.iter().filter_map(|(_, b)| *b).collect();
    let Some(first) = blocks.first() else {
        return Ok(None);
    };
    if blocks.len() != shards.len() || blocks.iter().any(|b| b.mode != first.mode) {
        return Err("some shards ran a different delivery mode".into());
    }
    let sum = |f: fn(&DeliveryRecord) -> u64, name: &str| {
        let mut values = blocks.iter().map(|b| f(b));
        values.try_fold(0u64, u64::checked_add).ok_or_else(|| {
            format!("{name}: the shards' sum does not fit in 64 bits (a corrupt record)")
        })
    };
    let some_sum = |f: fn(&DeliveryRecord) -> Option<u64>| -> Option<u64> {
        blocks.iter().map(|b| f(b)).sum()
    };
    let mut seconds: Vec<DeliverySecond> = Vec::new();
    for b in &blocks {
        for s in &b.seconds {
            let at = s.second as usize;
            if seconds.len() <= at {
                seconds.resize_with(at + 1, DeliverySecond::default);
            }
            add_second(&mut seconds[at], s);
        }
    }
    for (i, s) in seconds.iter_mut().enumerate() {
        s.second = i as u32;
    }
    Ok(Some(DeliveryRecord {
        receivers: blocks.iter().map(|b| b.receivers).sum(),
        publishers: blocks.iter().map(|b| b.publishers).sum(),
        messages: sum(|b| b.messages, "messages")?,
        rate: some_sum(|b| b.rate),
        published: sum(|b| b.published, "published")?,
        publish_errors: sum(|b| b.publish_errors, "publish_errors")?,
        expected: sum(|b| b.expected, "expected")?,
        delivered: sum(|b| b.delivered, "delivered")?,
        duplicates: sum(|b| b.duplicates, "duplicates")?,
        lost: sum(|b| b.lost, "lost")?,
        foreign: sum(|b| b.foreign, "foreign")?,
        fanout: some_sum(|b| b.fanout),
        acked: some_sum(|b| b.acked),
        disconnects: blocks.iter().flat_map(|b| b.disconnects.clone()).collect(),
        buffer_limit_disconnections: some_sum(|b| b.buffer_limit_disconnections),
        seconds,
        nodes: nodes(&blocks),
        moved: blocks.iter().filter_map(|b| b.moved).reduce(|a, b| a + b),
        resubscribed: blocks
            .iter()
            .filter_map(|b| b.resubscribed)
            .reduce(|a, b| a + b),
        ..(*first).clone()
    }))
}

/// The shards' nodes, each node's figures added up (shards of one cluster share nodes).
fn nodes(blocks: &[&DeliveryRecord]) -> Vec<DeliveryNode> {
    let mut out: Vec<DeliveryNode> = Vec::new();
    for n in blocks.iter().flat_map(|b| &b.nodes) {
        match out.iter_mut().find(|o| o.node == n.node) {
            Some(o) => {
                o.channels += n.channels;
                o.receivers += n.receivers;
                o.published += n.published;
                o.delivered += n.delivered;
            }
            None => out.push(n.clone()),
        }
    }
    out
}

/// Adds one shard's second into the merged one.
fn add_second(into: &mut DeliverySecond, s: &DeliverySecond) {
    let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    into.published += s.published;
    into.delivered += s.delivered;
    into.max_latency_us = max(into.max_latency_us, s.max_latency_us);
    into.behind = into.behind.max(s.behind);
    into.output_buffer_bytes = into.output_buffer_bytes.max(s.output_buffer_bytes);
    into.pending = add(into.pending, s.pending);
    into.server_lag = add(into.server_lag, s.server_lag);
    into.pending_growth = match (into.pending_growth, s.pending_growth) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(delivered: u64, behind: u64) -> Option<DeliveryRecord> {
        Some(DeliveryRecord {
            mode: "pubsub".into(),
            receivers: 10,
            expected: 100,
            delivered,
            lost: 100 - delivered,
            fanout: Some(100),
            seconds: vec![DeliverySecond {
                second: 0,
                delivered,
                behind,
                output_buffer_bytes: Some(behind * 10),
                ..DeliverySecond::default()
            }],
            ..DeliveryRecord::default()
        })
    }

    /// The shards' blocks as `Block::merge` gets them.
    fn merge(blocks: &[&Option<DeliveryRecord>]) -> Result<Option<DeliveryRecord>, String> {
        let parts: Vec<(&str, Option<&DeliveryRecord>)> =
            blocks.iter().map(|b| ("shard", b.as_ref())).collect();
        super::merge(&parts)
    }

    #[test]
    fn shards_add_their_counts_and_keep_the_worst_backlog() {
        let (a, b) = (test(100, 0), test(90, 7));
        let m = merge(&[&a, &b]).unwrap().unwrap();
        assert_eq!(
            (m.receivers, m.expected, m.delivered, m.lost),
            (20, 200, 190, 10)
        );
        assert_eq!(m.fanout, Some(200));
        assert_eq!(m.seconds.len(), 1);
        assert_eq!(m.seconds[0].delivered, 190);
        assert_eq!(
            (m.seconds[0].behind, m.seconds[0].output_buffer_bytes),
            (7, Some(70))
        );
        let plain = None;
        assert!(merge(&[&a, &plain]).is_err());
        assert_eq!(merge(&[&plain]).unwrap(), None);
    }

    #[test]
    fn shards_of_one_cluster_add_their_nodes_by_name() {
        let node = |name: &str, published| DeliveryNode {
            node: name.into(),
            channels: 1,
            receivers: 2,
            published,
            delivered: 2 * published,
        };
        let (mut a, mut b) = (test(100, 0), test(100, 0));
        if let Some(d) = a.as_mut() {
            d.nodes = vec![node("n:1", 10), node("n:2", 20)];
            d.moved = Some(1);
            d.resubscribed = Some(0);
        }
        if let Some(d) = b.as_mut() {
            d.nodes = vec![node("n:2", 5), node("n:3", 7)];
            d.moved = Some(2);
            d.resubscribed = Some(2);
        }
        let m = merge(&[&a, &b]).unwrap().unwrap();
        let names: Vec<(&str, u64, u32)> = m
            .nodes
            .iter()
            .map(|n| (n.node.as_str(), n.published, n.receivers))
            .collect();
        assert_eq!(names, [("n:1", 10, 2), ("n:2", 25, 4), ("n:3", 7, 2)]);
        assert_eq!((m.moved, m.resubscribed), (Some(3), Some(2)));
        let (plain, other) = (test(100, 0), test(100, 0));
        let m = merge(&[&plain, &other]).unwrap().unwrap();
        assert!(m.nodes.is_empty() && m.moved.is_none());
    }
}
