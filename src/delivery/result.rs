//! The receivers' and publishers' figures put together into one [`DeliveryResult`].

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::block::{DeliveryNode, DeliveryRecord, DeliverySecond, DisconnectRecord};
use super::route::Nodes;
use super::seconds::Published;
use super::tally::Tally;
use super::{DeliveryResult, DeliverySpec, Live};

/// `received`: each receiver's tally and how it ended (`None`: its thread panicked);
/// `expected`: the deliveries owed. The block is `spec`'s shape with the counts.
pub(super) fn finish(
    spec: &DeliverySpec,
    live: &Live,
    published: &[Published],
    received: Vec<Option<(Tally, Option<DisconnectRecord>)>>,
    mut rows: Vec<DeliverySecond>,
    expected: u64,
) -> DeliveryResult {
    let mut all = Tally::new(0);
    let mut disconnects = Vec::new();
    for (t, d) in received.into_iter().flatten() {
        all.merge_figures(&t);
        disconnects.extend(d);
    }
    // The test's timeline: every receiver handed its seconds to it (`Tally::hand_rest`) and
    // every publisher its publishes by send time (`seconds::hand_published`); the
    // full-precision parts were the journal's.
    all.timeline = std::mem::take(&mut *live.timeline.lock().unwrap_or_else(|e| e.into_inner()));
    all.timeline.drop_exact();
    for row in &mut rows {
        let at = row.second as usize;
        row.published = published.iter().filter_map(|p| p.per_second.get(at)).sum();
        if let Some(s) = all.timeline.seconds.get(row.second as usize)
            && s.completed > 0
        {
            let slowest = s.slots.iter().map(|slot| slot.waited_ns).max().unwrap_or(0);
            row.max_latency_us = Some(slowest as f64 / 1000.0);
        }
    }
    // A stream group's pending entries' growth over each second.
    let mut pending_before: Option<u64> = None;
    for row in &mut rows {
        row.pending_growth = row
            .pending
            .map(|p| p as i64 - pending_before.unwrap_or(0) as i64);
        pending_before = row.pending.or(pending_before);
    }
    let block = DeliveryRecord {
        published: published.iter().map(|p| p.acked).sum(),
        publish_errors: published.iter().map(|p| p.errors).sum(),
        expected,
        delivered: all.delivered,
        duplicates: all.duplicates,
        lost: expected.saturating_sub(all.delivered),
        foreign: all.foreign,
        seconds: rows,
        disconnects,
        // `--cluster` only (`delivery::run`).
        moved: Some(published.iter().map(|p| p.moved).sum()),
        resubscribed: Some(live.resubscribed.load(Ordering::Relaxed)),
        ..DeliveryRecord::shape(spec)
    };
    DeliveryResult {
        block,
        failures: published.iter().fold(Default::default(), |mut all, p| {
            all.merge(&p.failures);
            all
        }),
        reconnect_attempts: published.iter().map(|p| p.reconnect_attempts).sum(),
        reconnects: published.iter().map(|p| p.reconnects).sum(),
        latency: all.latency,
        elapsed: Duration::from_nanos(all.last_ns),
        timeline: all.timeline,
        interrupted: live.interrupted.load(Ordering::Relaxed),
        connection_failure: published.iter().find_map(|p| p.reason.clone()),
    }
}

/// Each node's figures: the names it owned, the receivers that began on it, what the
/// publishers' routers say it acknowledged (by `host:port`), and the first deliveries it made:
/// `receivers` holds, per receiver, the nodes it was subscribed on in turn with its deliveries
/// there (more than one when its channel's slot moved).
pub(super) fn per_node(
    nodes: &Nodes,
    published: &[Published],
    receivers: &[Vec<(String, u64)>],
) -> Vec<DeliveryNode> {
    let mut out: Vec<DeliveryNode> = nodes
        .names
        .iter()
        .enumerate()
        .map(|(n, name)| DeliveryNode {
            node: name.clone(),
            channels: nodes.of_name.iter().filter(|&&at| at == n).count() as u32,
            ..DeliveryNode::default()
        })
        .collect();
    fn at<'a>(out: &'a mut Vec<DeliveryNode>, name: &str) -> &'a mut DeliveryNode {
        match out.iter().position(|f| f.node == name) {
            Some(i) => &mut out[i],
            // A node a `MOVED` named, not one the test began with.
            None => {
                out.push(DeliveryNode {
                    node: name.to_string(),
                    ..DeliveryNode::default()
                });
                out.last_mut().expect("just pushed")
            }
        }
    }
    for parts in receivers {
        if let Some((first, _)) = parts.first() {
            at(&mut out, first).receivers += 1;
        }
        for (name, d) in parts {
            at(&mut out, name).delivered += d;
        }
    }
    for (name, n) in published.iter().flat_map(|p| &p.per_node) {
        at(&mut out, name).published += n;
    }
    out
}
