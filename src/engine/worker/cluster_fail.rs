//! Cluster mode with `-e` when a node dies: what its connections carried is lost (counted by
//! kind, and charged to the node), redirected requests queued for it fail rather than wait, the
//! topology is fetched again until a replica owns its slots, and its connections then reopen to
//! that new owner at once instead of knocking at the dead node. Beside `outage.rs`, which does
//! the part every mode shares (counting, closing, backoff, reopening).

use std::time::Instant;

use super::conn::BACKOFF_START;
use super::conn::State;
use super::outage::FailKind;
use super::state::Worker;
use crate::engine::cluster::{Retry, SideItem};

impl Worker<'_> {
    /// Cluster: connection `i` failed under `kind` (its load batch is counted by `conn_failed`):
    /// its node is charged with what it lost, a side connection's queued retries fail, and a
    /// new topology is asked for.
    pub(super) fn cluster_conn_failed(&mut self, i: usize, kind: FailKind, now: Instant) {
        let at = now.saturating_duration_since(self.cfg.measure_start);
        let Some(cl) = self.cluster.as_mut() else {
            return;
        };
        cl.run.shared.request_refresh_down();
        let c = &mut self.conns[i];
        let node = c.bind.node;
        if let Some(queue) = c.bind.side.as_mut() {
            // Redirected requests waiting for this node's replies will get none.
            let mut lost = 0;
            while let Some(item) = queue.pop_front() {
                if let SideItem::Retry(retry) = item {
                    if !retry.warmup {
                        self.rec.failed(kind as usize, 1, now);
                        lost += 1;
                    }
                    cl.retire(retry.cmd);
                }
            }
            cl.node_lost(node, lost, at, false);
            return;
        }
        let lost = if c.batch.warmup { 0 } else { c.batch.pending };
        cl.node_lost(node, lost, at, true);
        c.bind.lost_on.get_or_insert(node);
    }

    /// Cluster: connection `i`, which lost requests on a node, completed a batch: that node's
    /// outage is over.
    pub(super) fn node_back(&mut self, i: usize, now: Instant) {
        let at = now.saturating_duration_since(self.cfg.measure_start);
        if let (Some(node), Some(cl)) = (self.conns[i].bind.lost_on.take(), self.cluster.as_mut()) {
            cl.node_back(node, at);
        }
    }

    /// Cluster, while connections are down: keep asking for the topology (a replica's election
    /// is what ends a primary's outage), and send connections whose slots have a new owner there
    /// now rather than after their backoff.
    pub(super) fn cluster_down_tick(&mut self, now: Instant) {
        let Some(cl) = self.cluster.as_ref() else {
            return;
        };
        cl.run.shared.request_refresh_down();
        for c in &mut self.conns {
            if c.state == State::Down
                && let Some(node) = c.bind.rebind.take()
            {
                c.bind.node = node;
                c.bind.route = node as u16;
                c.reopen.retry_at = now;
                c.reopen.backoff = BACKOFF_START;
            }
        }
    }

    /// A redirected request for a node that cannot be reached (its side connection is down or
    /// could not be opened): it fails now, counted under `kind`, rather than wait.
    pub(super) fn retry_unreachable(&mut self, node: usize, retry: Retry, kind: FailKind) {
        let now = Instant::now();
        let at = now.saturating_duration_since(self.cfg.measure_start);
        let Some(cl) = self.cluster.as_mut() else {
            return;
        };
        if !retry.warmup {
            self.rec.hand_over_at(now, Some(&cl.stats));
            self.rec.failed(kind as usize, 1, now);
            cl.node_lost(node, 1, at, false);
        }
        cl.retire(retry.cmd);
    }

    /// Measured redirected requests still queued or delayed when the worker stops: unanswered.
    pub(super) fn retries_unanswered(&self) -> u64 {
        let Some(cl) = self.cluster.as_ref() else {
            return 0;
        };
        let queued = self
            .conns
            .iter()
            .filter_map(|c| c.bind.side.as_ref())
            .flatten()
            .filter(|item| matches!(item, SideItem::Retry(r) if !r.warmup))
            .count() as u64;
        queued + cl.delayed_measured()
    }
}
