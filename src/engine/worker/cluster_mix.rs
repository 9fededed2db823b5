//! Cluster mode with a mix (`--ratio`, `--command`, memtier's lines): a batch for a connection
//! is written unit by unit, each unit's node read from its own keys (`UnitKeys`: a mix writes
//! units of their own lengths, so no template offset holds). A unit whose keys another node
//! holds is parked for that node's connections in this worker (`engine/park.rs`), and the
//! connection takes what was parked for its own node first, as memtier's cluster client does:
//! no key drawn is dropped, none is sent to the wrong node.

use super::cluster::MAX_DRAWS;
use super::state::Worker;
use crate::cluster::route::UnitSlot;
use crate::cluster::slot::TAG_PLACEHOLDER;
use crate::cluster::topology::NO_OWNER;
use crate::workload::mix::Mix;
use crate::workload::sizes::SizeDist;

impl Worker<'_> {
    /// Writes connection `i`'s next batch of `units` units of `mix`, each for the connection's
    /// node, and returns its length in bytes.
    pub(super) fn fill_cluster_mix(
        &mut self,
        i: usize,
        units: usize,
        mix: &Mix,
        sizes: Option<&SizeDist>,
    ) -> usize {
        let Some(cl) = self.cluster.as_mut() else {
            return 0;
        };
        let f = &mut self.fill;
        let keys = if f.mix_keys.is_empty() {
            std::slice::from_mut(&mut f.keys)
        } else {
            &mut f.mix_keys[..]
        };
        let c = &mut self.conns[i];
        let route = c.bind.route;
        let node = usize::from(route);
        let out = &mut c.batch.wbuf;
        let marks = &mut c.batch.units;
        out.clear();
        marks.gaps.clear();
        marks.reserve(units);
        // The parallel pattern's slice is the client's (one per node in a group of the
        // worker's connections, `runner.rs`), as memtier's client's slice feeds every node.
        let client = i / cl.run.serving.len().max(1);
        for k in keys.iter_mut() {
            k.select_conn(client);
        }
        let mut delta = 0i64;
        for u in 0..units {
            let base = out.len();
            let kind = match cl.parked.take(node, out) {
                Some(kind) => {
                    delta -= 1;
                    kind
                }
                None => {
                    let mut draws = 0;
                    loop {
                        let k = mix.append_one(
                            out,
                            &mut f.cluster_turn,
                            &mut f.size_rng,
                            sizes,
                            keys,
                            &mut f.size_scratch,
                        );
                        draws += 1;
                        if cl.run.mix_keys[k].tagged {
                            let slot = cl.pick_slot(route, || keys[0].random());
                            fill_tags(&mut out[base..], cl.run.tags.get(slot));
                        }
                        let owner = match cl.run.mix_keys[k].slot(&out[base..]) {
                            UnitSlot::Keyless => break k,
                            UnitSlot::One(s) if cl.serves(route, s) => break k,
                            UnitSlot::One(s) => cl.owners[usize::from(s)],
                            UnitSlot::Cross => NO_OWNER,
                        };
                        if draws >= MAX_DRAWS {
                            // Sent anyway: its node redirects it.
                            break k;
                        }
                        // A full queue: the unit is drawn again, its keys dropped.
                        if owner != NO_OWNER && cl.parked.park(usize::from(owner), k, &out[base..])
                        {
                            delta += 1;
                        }
                        out.truncate(base);
                    }
                }
            };
            marks.kinds[u] = kind as u8;
            marks.lens[u] = (out.len() - base) as u32;
        }
        f.park_delta = delta;
        out.len()
    }

    /// After a measured batch's fill: the quota counts the units drawn (parked ones included)
    /// rather than those sent, as memtier's `-n` does.
    pub(super) fn settle_parked(&mut self, warmup: bool) {
        let delta = std::mem::take(&mut self.fill.park_delta);
        if self.cfg.quota.is_some() && !warmup {
            // Units drawn past the quota in a batch's last draws stay counted: they are sent
            // after it, and none is drawn in their place.
            let used = self.flow.quota_used as i64 + delta;
            self.flow.quota_used = used.max(0) as u64;
        }
    }

    /// Once the quota is drawn: the units still parked for connection `i`'s node, up to a
    /// batch, sent beyond it (they were counted when drawn). `None` when there are none.
    pub(super) fn parked_leftovers(&mut self, i: usize) -> Option<usize> {
        let quota = self.cfg.quota?;
        if self.flow.quota_used < quota && !self.flow.exhausted {
            return None;
        }
        let cl = self.cluster.as_ref()?;
        let left = cl.parked.len(usize::from(self.conns[i].bind.route));
        (left > 0).then(|| left.min(self.cfg.load.pipeline as usize))
    }
}

/// Writes `tag` over every `{tag}` of a unit.
fn fill_tags(unit: &mut [u8], tag: &[u8; 5]) {
    let mut at = 0;
    while let Some(p) = unit[at..].windows(5).position(|w| w == TAG_PLACEHOLDER) {
        unit[at + p..at + p + 5].copy_from_slice(tag);
        at += p + 5;
    }
}
