//! Writing every key of a range exactly once across threads, connections and cluster nodes
//! (`--cluster --sequential`). One shared counter with draws dropped when their key lives on
//! another node loses keys (a node's connections skip numbers other nodes never see), and
//! splitting `-n` by connection count cannot match how many keys each node owns. So request `t`
//! of the run stands for key `t % R`, and each node owns the requests whose keys it owns: its
//! share of `-n` is that count, claimed by its connections (in any worker) from one shared
//! cursor that walks only its keys. A connection whose node has nothing left is done.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cluster::route::UnitRoutes;
use crate::engine::LoadSpec;
use crate::workload::template::Template;

/// The largest range walked key by key: the lists hold 4 bytes per key (64 MiB here) and are
/// built with one CRC16 per key before the first send. A larger range keeps the shared counter.
pub const MAX_KEYS: u64 = 1 << 24;

/// Whether a test's units can be walked key by key: `--sequential` over a range of at most
/// [`MAX_KEYS`], one `__rand_int__` per unit, inside the unit's one key whose slot depends on it,
/// no `{tag}` and no fixed key. Other units keep the shared counter with draws for other nodes
/// skipped (docs/cluster.md says which).
pub fn applies(load: &LoadSpec, template: &Template, routes: &UnitRoutes) -> bool {
    let Some(keyspace) = load.keyspace else {
        return false;
    };
    let [p] = template.placeholders[..] else {
        return false;
    };
    let [key] = &routes.random_keys[..] else {
        return false;
    };
    load.sequential
        && load.mix.is_none()
        && keyspace.saturating_sub(load.key_min) <= MAX_KEYS
        && p.which == 0
        && routes.tags.is_empty()
        && routes.fixed_slots.is_empty()
        && key.start <= p.offset
        && p.offset + 12 <= key.end
}

/// The run's per-node key lists and cursors, built once (by the first worker to send) from the
/// slot map as it was then; keys that move later are still sent once and redirected.
#[derive(Debug)]
pub struct AllKeys {
    /// Units in the whole run (`-n` in units), or `None` (`--duration`: laps until the end).
    total: Option<u64>,
    nodes: OnceLock<Vec<NodeKeys>>,
}

/// One node's keys (offsets into the range, ascending; below [`MAX_KEYS`]), its share of the run, and its cursor.
#[derive(Debug, Default)]
struct NodeKeys {
    keys: Vec<u32>,
    share: u64,
    next: AtomicU64,
}

impl AllKeys {
    pub fn new(total: Option<u64>) -> Self {
        Self {
            total,
            nodes: OnceLock::new(),
        }
    }

    /// Builds the per-node lists on first call: `owner(k)` is the node owning the range's `k`th
    /// key (one CRC16 per key of the range), for `len` keys and `nodes` nodes.
    pub fn prepare(&self, nodes: usize, len: u64, mut owner: impl FnMut(u64) -> Option<usize>) {
        self.nodes.get_or_init(|| {
            let mut per: Vec<NodeKeys> = (0..nodes).map(|_| NodeKeys::default()).collect();
            for k in 0..len.min(MAX_KEYS) {
                if let Some(n) = owner(k).filter(|&n| n < nodes) {
                    per[n].keys.push(k as u32);
                }
            }
            for n in &mut per {
                n.share = share_of(&n.keys, len, self.total);
            }
            per
        });
    }

    /// Whether the per-node lists are built.
    pub fn ready(&self) -> bool {
        self.nodes.get().is_some()
    }

    /// Claims up to `units` of `node`'s requests: the first request's number within the node and
    /// how many were claimed, or `None` when the node has nothing left (or owns no key).
    pub fn claim(&self, node: usize, units: u64) -> Option<(u64, u64)> {
        let n = self.nodes.get()?.get(node)?;
        if n.keys.is_empty() {
            return None;
        }
        let first = n.next.fetch_add(units, Ordering::Relaxed);
        (first < n.share).then(|| (first, units.min(n.share - first)))
    }

    /// Whether `node` has requests left to claim.
    pub fn left(&self, node: usize) -> bool {
        self.nodes
            .get()
            .and_then(|v| v.get(node))
            .is_some_and(|n| !n.keys.is_empty() && n.next.load(Ordering::Relaxed) < n.share)
    }

    /// The key offset (within the range) of `node`'s request number `j`.
    #[inline]
    pub fn key(&self, node: usize, j: u64) -> u64 {
        match self.nodes.get().and_then(|v| v.get(node)) {
            Some(n) if !n.keys.is_empty() => u64::from(n.keys[(j % n.keys.len() as u64) as usize]),
            _ => 0,
        }
    }
}

/// A node's requests among run requests `0..total` (request `t` is key `t % len`): whole laps
/// of its keys, then those below the partial lap's end. Unbounded without `total`.
fn share_of(keys: &[u32], len: u64, total: Option<u64>) -> u64 {
    let Some(total) = total else {
        return u64::MAX;
    };
    let (laps, rest) = (total / len.max(1), total % len.max(1));
    laps * keys.len() as u64 + keys.partition_point(|&k| u64::from(k) < rest) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::template::Placeholder;

    fn load(args: &[&str]) -> LoadSpec {
        match crate::cli::parse(args.iter().map(Into::into)) {
            Ok(crate::cli::Invocation::Run(a)) => crate::plan::RunPlan::new(&a, None).unwrap().load,
            other => panic!("{other:?}"),
        }
    }

    /// A unit with `n` `__rand_int__`s, the first inside a key at `key`.
    fn unit(n: usize, key: std::ops::Range<usize>, tags: Vec<usize>) -> (Template, UnitRoutes) {
        let t = Template {
            unit: vec![b'x'; 64],
            placeholders: (0..n)
                .map(|i| Placeholder {
                    offset: 10 + 20 * i,
                    which: 0,
                })
                .collect(),
            commands_per_unit: 1,
            layout: Vec::new(),
            values: Vec::new(),
        };
        let routes = UnitRoutes {
            tags,
            random_keys: vec![key],
            ..UnitRoutes::default()
        };
        (t, routes)
    }

    /// Key by key only for `--sequential`, one placeholder in one key, no `{tag}`, a bounded
    /// range: anything else keeps the shared counter.
    #[test]
    fn applies_to_one_sequential_key_per_unit() {
        let seq = load(&["--sequential", "-r", "1000"]);
        let (t, r) = unit(1, 6..22, Vec::new());
        assert!(applies(&seq, &t, &r));
        assert!(!applies(&load(&["-r", "1000"]), &t, &r), "random keys");
        assert!(!applies(&load(&["--sequential"]), &t, &r), "no -r: literal");
        let huge = load(&["--sequential", "-r", "100000000"]);
        assert!(!applies(&huge, &t, &r), "range over MAX_KEYS");
        let (t2, r2) = unit(2, 6..22, Vec::new());
        assert!(!applies(&seq, &t2, &r2), "two placeholders");
        let (t3, r3) = unit(1, 30..40, Vec::new());
        assert!(!applies(&seq, &t3, &r3), "placeholder outside the key");
        let (t4, r4) = unit(1, 6..22, vec![2]);
        assert!(!applies(&seq, &t4, &r4), "{{tag}}");
    }

    /// Each key of the range is claimed exactly `laps` times (plus once below the partial lap's
    /// end), whatever the claim sizes, and the shares add up to the total.
    #[test]
    fn claims_cover_every_key_exactly() {
        for total in [0u64, 1, 999, 1000, 1001, 3000, 3500] {
            let ak = AllKeys::new(Some(total));
            ak.prepare(3, 1000, |k| Some(((k * 7919) % 3) as usize));
            let mut seen = vec![0u64; 1000];
            let mut sum = 0;
            for node in 0..3 {
                while let Some((first, count)) = ak.claim(node, 16) {
                    for j in first..first + count {
                        seen[ak.key(node, j) as usize] += 1;
                    }
                    sum += count;
                }
                assert!(!ak.left(node));
            }
            assert_eq!(sum, total);
            for (k, &s) in seen.iter().enumerate() {
                let want = total / 1000 + u64::from((k as u64) < total % 1000);
                assert_eq!(s, want, "key {k} with -n {total}");
            }
        }
    }

    #[test]
    fn a_node_without_keys_is_done_at_once() {
        let ak = AllKeys::new(Some(10));
        ak.prepare(2, 5, |_| Some(0));
        assert_eq!(ak.claim(1, 4), None);
        assert_eq!(ak.claim(0, 4), Some((0, 4)));
        assert_eq!(ak.claim(0, 8), Some((4, 6)));
        assert_eq!(ak.claim(0, 1), None);
    }
}
