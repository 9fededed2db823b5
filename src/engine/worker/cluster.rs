//! A worker's cluster mode: filling a batch for its connection's node, acting on redirects over
//! side connections, adopting a new topology and rebinding connections to it. (Replies that are
//! redirects, and replies on side connections, are read in `reply.rs` with the others.)

use std::time::{Duration, Instant};

use super::conn::Placement;
use super::conn::{Conn, State};
use super::outage::FailKind;
use super::reply::record_error;
use super::state::Worker;
use crate::cluster::slot::{TAG_PLACEHOLDER, key_slot};
use crate::cluster::topology::NO_OWNER;
use crate::engine::cluster::{ClusterWorker, MAX_ATTEMPTS, Retry, SideItem, SideQueue};
use crate::engine::{EngineError, ErrorPolicy};
use crate::metrics::RedirectKind;
use crate::workload::keys::write_12_digits;
use crate::workload::template::fill_unit;

impl Worker<'_> {
    /// Cluster: fills a batch for connection `i`'s node: `{tag}` gets a tag of one of the
    /// node's slots, and a unit whose random keys land elsewhere is drawn again.
    pub(super) fn fill_cluster(&mut self, i: usize, units: usize) {
        let Some(cl) = self.cluster.as_ref() else {
            return;
        };
        if let Some(ak) = self.cfg.allkeys.as_deref() {
            // Every key once: the claimed requests' keys, all owned by the node.
            let (node, first) = self.fill.allkeys_claim;
            let (start, _) = self.fill.keys.sequential_part();
            let spu = self.fill.placeholders_per_unit;
            let wbuf = &mut self.conns[i].batch.wbuf;
            for u in 0..units {
                let at = self.fill.placeholders[u * spu].offset;
                write_12_digits(&mut wbuf[at..], start + ak.key(node, first + u as u64));
            }
            return;
        }
        let routes = &cl.run.routes;
        let spu = self.fill.placeholders_per_unit;
        let c = &mut self.conns[i];
        let route = c.bind.route;
        let serves_any = cl.counts.get(usize::from(route)).is_some_and(|&n| n > 0);
        for u in 0..units {
            let base = u * self.fill.unit_len;
            if !routes.tags.is_empty() {
                let keys = &mut self.fill.keys;
                let slot = cl.pick_slot(route, || keys.random());
                let tag = cl.run.tags.get(slot);
                for &off in &routes.tags {
                    c.batch.wbuf[base + off..base + off + TAG_PLACEHOLDER.len()]
                        .copy_from_slice(tag);
                }
            }
            let unit_placeholders = &self.fill.placeholders[u * spu..(u + 1) * spu];
            let mut draws = 0;
            loop {
                fill_unit(&mut c.batch.wbuf, unit_placeholders, &mut self.fill.keys);
                draws += 1;
                let stray = routes.random_keys.iter().find_map(|k| {
                    let slot = key_slot(&c.batch.wbuf[base + k.start..base + k.end]);
                    (!cl.serves(route, slot)).then_some(slot)
                });
                let Some(slot) = stray else {
                    break;
                };
                if !serves_any || draws >= MAX_DRAWS {
                    // This node holds none of the keys drawn (a small keyspace, or its slots
                    // migrated away): the unit goes anyway and is redirected, and a connection
                    // bound to a primary moves to where the keys are for its next batch.
                    let owner = cl.owners[usize::from(slot)];
                    if c.bind.follow_primary
                        && owner != NO_OWNER
                        && usize::from(owner) != c.bind.node
                    {
                        c.bind.rebind = Some(usize::from(owner));
                        c.bind.home = slot;
                    }
                    break;
                }
            }
        }
    }

    /// Every key once (`engine/allkeys.rs`): claims up to `units` of connection `i`'s node's
    /// requests for its next batch, building the per-node key lists on first use. `None` when
    /// the node has nothing left; once no node of this worker's connections has, the worker is
    /// done.
    pub(super) fn claim_keys(&mut self, i: usize, units: usize) -> Option<usize> {
        let (ak, cl) = (self.cfg.allkeys.as_deref()?, self.cluster.as_ref()?);
        if !ak.ready() {
            let (start, len) = self.fill.keys.sequential_part();
            let (p, key) = (
                self.cfg.template.placeholders[0],
                &cl.run.routes.random_keys[0],
            );
            let mut bytes = self.cfg.template.unit[key.clone()].to_vec();
            let at = p.offset - key.start;
            ak.prepare(cl.counts.len(), len, |k| {
                write_12_digits(&mut bytes[at..], start + k);
                let owner = cl.owners[usize::from(key_slot(&bytes))];
                (owner != NO_OWNER).then_some(usize::from(owner))
            });
        }
        let node_of = |c: &Conn| c.bind.rebind.unwrap_or(usize::from(c.bind.route));
        let node = node_of(&self.conns[i]);
        if let Some((first, n)) = ak.claim(node, units as u64) {
            self.fill.allkeys_claim = (node, first);
            return Some(n as usize);
        }
        let loads = self.conns.iter().filter(|c| c.bind.side.is_none());
        self.flow.exhausted = !loads.map(node_of).any(|n| ak.left(n));
        None
    }

    /// Cluster: adopts a new topology (connections bound to a primary follow their shard to its
    /// new primary) and sends delayed retries that are due.
    pub(super) fn cluster_tick(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        if cl.adopt_if_changed() {
            for c in self.conns.iter_mut().filter(|c| c.bind.side.is_none()) {
                rebind_if_needed(c, cl);
            }
            if cl.run.all_primaries {
                self.connect_new_primaries(now)?;
            }
        }
        if self.outages.down > 0 {
            self.cluster_down_tick(now);
        }
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        if cl.next_due().is_some_and(|due| due <= now) {
            for (_, node, retry) in cl.take_due(now) {
                self.enqueue(node, retry, false)?;
            }
        }
        Ok(())
    }

    /// Cluster: opens load connections to primaries that own slots but have none of this
    /// worker's connections (a node that slots were migrated to); they start sending at once.
    pub(super) fn connect_new_primaries(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_ref() else {
            return Ok(());
        };
        let missing: Vec<usize> = (0..cl.counts.len())
            .filter(|&n| cl.counts[n] > 0)
            .filter(|&n| {
                !self.conns.iter().any(|c| {
                    c.bind.side.is_none() && (c.bind.node == n || c.bind.rebind == Some(n))
                })
            })
            .collect();
        for node in missing {
            for _ in 0..self.cfg.new_node_conns {
                let Some(cl) = self.cluster.as_ref() else {
                    break;
                };
                let home = (0..cl.owners.len())
                    .find(|&s| usize::from(cl.owners[s]) == node)
                    .unwrap_or(0) as u16;
                let (wbuf, _) = self.cfg.template.batch(self.cfg.load.pipeline as usize);
                let place = Placement {
                    node,
                    home,
                    follow_primary: true,
                };
                let i = self.open_conn(place, wbuf, None, now)?;
                self.on_free(i, now)?;
            }
        }
        Ok(())
    }

    /// Acts on the redirects just received: re-sends each request to the right node.
    pub(super) fn handle_redirects(&mut self, now: Instant) -> Result<(), EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Ok(());
        };
        let mut list = cl.take_redirects();
        for r in list.drain(..) {
            let Some(cl) = self.cluster.as_mut() else {
                break;
            };
            if !r.retry.warmup {
                cl.count(r.kind, now, self.cfg.measure_start);
            }
            let target = match (r.kind, &r.to) {
                (RedirectKind::Moved | RedirectKind::Ask, Some((slot, host, port))) => {
                    let host = if host.is_empty() {
                        cl.run.shared.topology().nodes[r.from].host.clone()
                    } else {
                        host.clone()
                    };
                    let node = cl.resolve(&host, *port)?;
                    if r.kind == RedirectKind::Moved {
                        cl.moved(*slot, node);
                        for c in self.conns.iter_mut().filter(|c| c.bind.side.is_none()) {
                            rebind_if_needed(c, cl);
                        }
                    }
                    Some(node)
                }
                _ => None,
            };
            if r.retry.attempts > MAX_ATTEMPTS
                || (target.is_none() && matches!(r.kind, RedirectKind::Moved | RedirectKind::Ask))
            {
                let warmup = r.retry.warmup;
                cl.retire(r.retry.cmd);
                let text = format!(
                    "{} (a request was still redirected after {MAX_ATTEMPTS} attempts)",
                    r.kind.name()
                );
                record_error(
                    &mut self.rec,
                    self.cfg.load.on_error,
                    warmup,
                    text.as_bytes(),
                    now,
                )?;
                continue;
            }
            match r.kind {
                RedirectKind::Moved | RedirectKind::Ask => {
                    if let Some(node) = target {
                        self.enqueue(node, r.retry, r.kind == RedirectKind::Ask)?;
                    }
                }
                RedirectKind::TryAgain => {
                    let wait = Duration::from_millis(10 * u64::from(r.retry.attempts));
                    cl.delay(now + wait, r.from, r.retry);
                }
                RedirectKind::ClusterDown => {
                    cl.run.shared.request_refresh();
                    let wait = Duration::from_millis((100 * u64::from(r.retry.attempts)).min(1000));
                    let node = r
                        .retry
                        .slot
                        .map(|s| cl.owners[usize::from(s)])
                        .filter(|&o| o != NO_OWNER)
                        .map_or(r.from, usize::from);
                    cl.delay(now + wait, node, r.retry);
                }
            }
        }
        if let Some(cl) = self.cluster.as_mut() {
            cl.restore_redirects(list);
        }
        Ok(())
    }

    /// Queues a redirected request on the side connection to `node` (opened on first use). With
    /// `-e`, a node that cannot be reached fails the request at once (`cluster_fail.rs`).
    pub(super) fn enqueue(
        &mut self,
        node: usize,
        retry: Retry,
        asking: bool,
    ) -> Result<(), EngineError> {
        let i = match self.side_conn(node) {
            Ok(i) => i,
            Err(e) if self.cfg.load.on_error == ErrorPolicy::Count => {
                self.retry_unreachable(node, retry, FailKind::of_connect(&e));
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if self.conns[i].state == State::Down {
            self.retry_unreachable(node, retry, FailKind::Refused);
            return Ok(());
        }
        let c = &mut self.conns[i];
        if c.batch.written == c.batch.wlen {
            c.batch.wbuf.clear();
            c.batch.written = 0;
        }
        let q = c.bind.side.get_or_insert_with(SideQueue::new);
        if asking {
            c.batch.wbuf.extend_from_slice(b"*1\r\n$6\r\nASKING\r\n");
            q.push_back(SideItem::Asking);
        }
        c.batch.wbuf.extend_from_slice(&retry.cmd);
        q.push_back(SideItem::Retry(retry));
        c.batch.wlen = c.batch.wbuf.len();
        if c.state == State::Open {
            self.flush(i)?;
        }
        Ok(())
    }

    /// The side connection to `node`, connecting it (without blocking) on first use.
    pub(super) fn side_conn(&mut self, node: usize) -> Result<usize, EngineError> {
        let Some(cl) = self.cluster.as_mut() else {
            return Err(EngineError::Other("redirect outside cluster mode".into()));
        };
        if let Some(i) = cl.side[node] {
            return Ok(i);
        }
        let place = Placement {
            node,
            home: 0,
            follow_primary: false,
        };
        let i = self.open_conn(place, Vec::new(), Some(SideQueue::new()), Instant::now())?;
        if let Some(cl) = self.cluster.as_mut() {
            cl.side[node] = Some(i);
        }
        Ok(i)
    }
}

/// Cluster: most draws of a unit before sending it to its node anyway (a redirect then fixes
/// it); with one random key and N equal nodes a unit needs N draws on average, and 256 fail
/// with a chance of (1 - 1/N)^256 (below 1e-7 for 16 nodes).
pub(super) const MAX_DRAWS: u32 = 256;

/// Cluster: a connection bound to a primary moves to its home slot's owner when that changed;
/// a replica's connection targets its (possibly new) primary's slots.
pub(super) fn rebind_if_needed(c: &mut Conn, cl: &ClusterWorker) {
    if c.bind.follow_primary {
        let owner = cl.owners[usize::from(c.bind.home)];
        if owner != NO_OWNER && usize::from(owner) != c.bind.node {
            c.bind.rebind = Some(usize::from(owner));
        }
    } else if let Some(&p) = cl.shard_of.get(c.bind.node)
        && p != NO_OWNER
    {
        c.bind.route = p;
    }
}
