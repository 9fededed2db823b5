//! The receivers' and publishers' figures put together into one [`DeliveryResult`].

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::conn::Published;
use super::monitor::SecondRow;
use super::tally::Tally;
use super::{DeliveryResult, Disconnect, Live};

/// `received`: each receiver's tally and how it ended (`None`: its thread panicked);
/// `expected`: the deliveries owed.
pub(super) fn finish(
    live: &Live,
    published: &[Published],
    received: Vec<Option<(Tally, Option<Disconnect>)>>,
    mut rows: Vec<SecondRow>,
    expected: u64,
) -> DeliveryResult {
    let mut all = Tally::new(0);
    let mut disconnects = Vec::new();
    for (t, d) in received.into_iter().flatten() {
        all.merge_figures(&t);
        disconnects.extend(d);
    }
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
    DeliveryResult {
        published: published.iter().map(|p| p.acked).sum(),
        publish_errors: published.iter().map(|p| p.errors).sum(),
        expected,
        delivered: all.delivered,
        duplicates: all.duplicates,
        lost: expected.saturating_sub(all.delivered),
        foreign: all.foreign,
        fanout: None,
        acked: None,
        latency: all.latency,
        elapsed: Duration::from_nanos(all.last_ns),
        seconds: rows,
        timeline: all.timeline,
        disconnects,
        buffer_limit_disconnections: None,
        interrupted: live.interrupted.load(Ordering::Relaxed),
    }
}
