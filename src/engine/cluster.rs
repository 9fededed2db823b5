//! Cluster mode in the engine: the shared topology (refreshed in the background), and each
//! worker's view of it — its slot map, its side connections that carry redirected requests, and
//! its redirect counts.
//!
//! A load connection is bound to one node and only sends units whose keys that node serves:
//! `{tag}` is overwritten with a tag of one of the node's slots, and units with random keys are
//! re-drawn until every key belongs to the node. A redirect (`MOVED`, `ASK`, `TRYAGAIN`,
//! `CLUSTERDOWN`) is never a completed request: the command is copied out of the batch and
//! re-sent on the worker's side connection to the right node (`ASKING` first for `ASK`), after a
//! short delay for `TRYAGAIN`/`CLUSTERDOWN`, and its latency runs from the original intended
//! send time to the final reply.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::EngineError;
use super::conn::Target;
use super::control::{ControlConn, error_text};
use super::park::Parked;
use crate::cluster::route::{UnitKeys, UnitRoutes};
use crate::cluster::slot::{SLOTS, TagTable};
use crate::cluster::topology::{NO_OWNER, NodeAddr, Topology};
use crate::metrics::{ClusterStats, NodeOutage, NodeStats, RedirectKind, Role};

/// How many times one request may be redirected before it counts as an error.
pub(crate) const MAX_ATTEMPTS: u32 = 16;

/// While a node is unreachable (`-e`), how often the topology is fetched again to see a replica
/// promoted in its place: an election takes at least `cluster-node-timeout` (commonly 1 s to
/// 15 s), so this places the new owner within a fifth of a second at the cost of five small
/// `CLUSTER SLOTS` calls a second.
const DOWN_REFRESH_EVERY: Duration = Duration::from_millis(200);

/// The topology every worker follows, and where to ask for a new one.
pub struct ClusterShared {
    view: Mutex<View>,
    version: AtomicU64,
    refresh: AtomicBool,
    refresh_down: AtomicBool,
    auth: Option<Vec<Vec<u8>>>,
    entry_host: String,
}

#[derive(Clone)]
struct View {
    topology: Topology,
    targets: Vec<Target>,
}

impl ClusterShared {
    /// Wraps a discovered topology; `entry` is how the entry node was reached (its TLS and
    /// MPTCP settings carry over to every node).
    pub fn new(
        topology: Topology,
        entry: &Target,
        entry_host: &str,
        auth: Option<Vec<Vec<u8>>>,
    ) -> Result<Self, EngineError> {
        let targets = topology
            .nodes
            .iter()
            .map(|n| entry.at(&n.host, n.port))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            view: Mutex::new(View { topology, targets }),
            version: AtomicU64::new(0),
            refresh: AtomicBool::new(false),
            refresh_down: AtomicBool::new(false),
            auth,
            entry_host: entry_host.to_string(),
        })
    }

    fn view(&self) -> View {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The current topology.
    pub fn topology(&self) -> Topology {
        self.view().topology
    }

    /// How to reach node `i`.
    pub fn target(&self, i: usize) -> Target {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).targets[i].clone()
    }

    /// The index of `host:port`, registering a node first seen in a redirect.
    fn node_index(&self, host: &str, port: u16) -> Result<(usize, Target), EngineError> {
        let mut v = self.view.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = v
            .topology
            .nodes
            .iter()
            .position(|n| n.host == host && n.port == port)
        {
            return Ok((i, v.targets[i].clone()));
        }
        let target = v.targets[0].at(host, port)?;
        v.topology.nodes.push(NodeAddr {
            host: host.to_string(),
            port,
            id: String::new(),
        });
        v.targets.push(target.clone());
        Ok((v.topology.nodes.len() - 1, target))
    }

    /// Bumped each time a refresh publishes a changed topology: a reader that saw this number
    /// has the current one.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Asks the refresher for a new `CLUSTER SLOTS` soon.
    pub fn request_refresh(&self) {
        self.refresh.store(true, Ordering::Relaxed);
    }

    /// Asks for a new `CLUSTER SLOTS` while a node is unreachable, to see its replica promoted:
    /// at most every [`DOWN_REFRESH_EVERY`] however often workers ask.
    pub fn request_refresh_down(&self) {
        self.refresh_down.store(true, Ordering::Relaxed);
    }

    /// Fetches `CLUSTER SLOTS` from the first node that answers and publishes it if it changed.
    /// Returns whether it did.
    pub fn refresh_now(&self) -> Result<bool, EngineError> {
        self.refresh.store(false, Ordering::Relaxed);
        self.refresh_down.store(false, Ordering::Relaxed);
        let view = self.view();
        let mut order: Vec<usize> = view.topology.primaries();
        order.extend(0..view.targets.len());
        let mut last_err = None;
        for i in order {
            match fetch(&view.targets[i], self.auth.as_deref()) {
                Ok(reply) => {
                    let mut v = self.view.lock().unwrap_or_else(|e| e.into_inner());
                    let fresh =
                        Topology::from_cluster_slots(&reply, &v.topology.nodes, &self.entry_host)
                            .map_err(EngineError::Other)?;
                    if fresh == v.topology {
                        return Ok(false);
                    }
                    for n in &fresh.nodes[v.targets.len()..] {
                        let t = v.targets[0].at(&n.host, n.port)?;
                        v.targets.push(t);
                    }
                    v.topology = fresh;
                    drop(v);
                    self.version.fetch_add(1, Ordering::Release);
                    return Ok(true);
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| EngineError::Other("no cluster node to ask".into())))
    }

    /// Whether a refresh is due, `since` the last one.
    fn wants_refresh(&self, since: Duration) -> bool {
        self.refresh.load(Ordering::Relaxed)
            || (self.refresh_down.load(Ordering::Relaxed) && since >= DOWN_REFRESH_EVERY)
    }
}

/// `CLUSTER SLOTS` over a fresh control connection (AUTH first when given).
fn fetch(target: &Target, auth: Option<&[Vec<u8>]>) -> Result<resp::Value, EngineError> {
    let mut c = ControlConn::connect_auth(target, auth)?;
    let reply = c.call(&[b"CLUSTER".as_slice(), b"SLOTS"])?;
    if let Some(e) = error_text(&reply) {
        return Err(EngineError::Other(format!(
            "CLUSTER SLOTS failed at {}: {e}",
            target.display()
        )));
    }
    Ok(reply)
}

/// Discovers the cluster from its entry node.
pub fn discover(
    entry: &Target,
    entry_host: &str,
    auth: Option<&[Vec<u8>]>,
) -> Result<Topology, EngineError> {
    let reply = fetch(entry, auth).map_err(|e| match e {
        EngineError::Other(m) if m.contains("cluster support disabled") => {
            EngineError::ClusterConfig {
                target: entry.display(),
                reason: "it is not a cluster node (cluster support disabled); drop --cluster"
                    .to_string(),
            }
        }
        EngineError::Other(reason) => EngineError::ClusterConfig {
            target: entry.display(),
            reason,
        },
        other => other,
    })?;
    Topology::from_cluster_slots(&reply, &[], entry_host).map_err(|reason| {
        EngineError::ClusterConfig {
            target: entry.display(),
            reason,
        }
    })
}

/// Refreshes the topology while a test runs: when a worker saw a redirect, and every second.
pub(crate) fn refresher(shared: &ClusterShared, done: &AtomicBool) {
    let mut last = Instant::now();
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        let since = last.elapsed();
        if shared.wants_refresh(since) || since >= Duration::from_secs(1) {
            // A failed refresh is retried on the next occasion; the redirects keep requests
            // flowing meanwhile.
            let _ = shared.refresh_now();
            last = Instant::now();
        }
    }
}

/// Starts the [`refresher`] for the length of a test's scope.
pub(crate) fn spawn_refresher<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    shared: &'scope ClusterShared,
    done: &'scope AtomicBool,
) {
    // Without it redirects still keep requests flowing, only slower.
    let _ = std::thread::Builder::new()
        .name("respbench-cluster".into())
        .spawn_scoped(scope, move || refresher(shared, done));
}

/// Cluster mode for one test.
pub struct ClusterRun {
    pub shared: Arc<ClusterShared>,
    pub routes: UnitRoutes,
    /// Node indexes that load connections bind to.
    pub serving: Vec<usize>,
    pub tags: Arc<TagTable>,
    /// Load goes to every primary: a primary that appears during the test (slots migrated to a
    /// new node) gets load connections too.
    pub all_primaries: bool,
    /// A mix (`--ratio`, `--command`): where each of its commands has its keys, by the mix's
    /// command index (empty without a mix).
    pub mix_keys: Vec<UnitKeys>,
}

impl ClusterRun {
    /// Each node's address and role as the topology says now, by node index: the labels of the
    /// per-node figures (the runner's at the test's end; the journal's at its start).
    pub fn node_labels(&self) -> Vec<(String, Role)> {
        let topo = self.shared.topology();
        let primaries = topo.primaries();
        topo.nodes
            .iter()
            .enumerate()
            .map(|(i, addr)| {
                let role = if primaries.contains(&i) {
                    Role::Primary
                } else {
                    Role::Replica
                };
                (addr.display(), role)
            })
            .collect()
    }
}

/// A request being re-sent after a redirect.
#[derive(Debug)]
pub(crate) struct Retry {
    pub cmd: Vec<u8>,
    pub intended: Instant,
    pub sent: Instant,
    pub warmup: bool,
    pub attempts: u32,
    /// The slot of its first key, if it has keys.
    pub slot: Option<u16>,
    /// A mix's command it is (its reply is counted for that command too).
    pub kind: Option<u8>,
}

/// A redirect reply waiting to be acted on.
#[derive(Debug)]
pub(crate) struct Redirect {
    pub kind: RedirectKind,
    pub retry: Retry,
    /// The node named by `MOVED`/`ASK` (an empty host means the replying node's host).
    pub to: Option<(u16, String, u16)>,
    /// The node that replied.
    pub from: usize,
}

/// What a side connection's next reply answers.
#[derive(Debug)]
pub(crate) enum SideItem {
    Asking,
    Retry(Retry),
}

/// Parses `MOVED 3999 127.0.0.1:6381` / `ASK ...` into slot, host, port.
pub(crate) fn parse_redirect(text: &[u8]) -> Option<(u16, String, u16)> {
    let text = std::str::from_utf8(text).ok()?;
    let mut parts = text.split(' ');
    parts.next()?;
    let slot: u16 = parts.next()?.parse().ok()?;
    let addr = parts.next()?;
    let (host, port) = addr.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((slot, host.to_string(), port.parse().ok()?))
}

/// One worker's view of the cluster.
pub(crate) struct ClusterWorker<'a> {
    pub run: &'a ClusterRun,
    pub version: u64,
    /// Slot → owning primary.
    pub owners: Vec<u16>,
    /// Slots owned, per node.
    pub counts: Vec<u32>,
    /// Per node: the primary whose slots it serves (itself, its primary, or [`NO_OWNER`]).
    pub shard_of: Vec<u16>,
    pub targets: Vec<Target>,
    /// Per node: its side connection (an index into the worker's connections).
    pub side: Vec<Option<usize>>,
    /// Retries waiting out a `TRYAGAIN`/`CLUSTERDOWN`: when, to which node.
    delayed: Vec<(Instant, usize, Retry)>,
    /// Redirects received in the current read, acted on after it.
    redirects: Vec<Redirect>,
    /// Redirected requests not yet answered: a test ends only when none is left.
    outstanding: usize,
    /// Command buffers of answered retries, reused for the next redirect.
    spare: Vec<Vec<u8>>,
    /// A mix's units written for another node, waiting for a connection to it.
    pub parked: Parked,
    pub stats: ClusterStats,
}

impl<'a> ClusterWorker<'a> {
    pub fn new(run: &'a ClusterRun) -> Self {
        let mut w = Self {
            run,
            version: u64::MAX,
            owners: Vec::new(),
            counts: Vec::new(),
            shard_of: Vec::new(),
            targets: Vec::new(),
            side: Vec::new(),
            delayed: Vec::new(),
            redirects: Vec::new(),
            outstanding: 0,
            spare: Vec::new(),
            parked: Parked::default(),
            stats: ClusterStats::default(),
        };
        w.adopt_if_changed();
        w
    }

    /// Takes the shared topology if it changed since the last look; returns whether it did.
    pub fn adopt_if_changed(&mut self) -> bool {
        let v = self.run.shared.version.load(Ordering::Acquire);
        if v == self.version {
            return false;
        }
        self.version = v;
        let view = self.run.shared.view();
        self.owners = view.topology.slot_owners();
        self.targets = view.targets;
        let n = self.targets.len();
        self.shard_of = (0..n)
            .map(|i| {
                view.topology
                    .shard_primary(i)
                    .map_or(NO_OWNER, |p| p as u16)
            })
            .collect();
        self.recount();
        self.side.resize(n, None);
        self.ensure_node(n.saturating_sub(1));
        true
    }

    fn recount(&mut self) {
        self.counts = vec![0; self.targets.len()];
        for &o in &self.owners {
            if o != NO_OWNER {
                self.counts[usize::from(o)] += 1;
            }
        }
    }

    /// Makes per-node vectors long enough for node `i`.
    fn ensure_node(&mut self, i: usize) {
        let n = i + 1;
        if self.side.len() < n {
            self.side.resize(n, None);
        }
        if self.counts.len() < n {
            self.counts.resize(n, 0);
        }
        if self.shard_of.len() < n {
            self.shard_of.resize(n, NO_OWNER);
        }
        while self.stats.nodes.len() < n {
            self.stats.nodes.push(NodeStats::new());
        }
    }

    /// The node index of `host:port`, registering it (and its target) if new.
    pub fn resolve(&mut self, host: &str, port: u16) -> Result<usize, EngineError> {
        let (i, target) = self.run.shared.node_index(host, port)?;
        if self.targets.len() <= i {
            self.targets.resize(i + 1, target.clone());
        }
        self.targets[i] = target;
        self.ensure_node(i);
        Ok(i)
    }

    /// `MOVED`: the slot now belongs to `node`.
    pub fn moved(&mut self, slot: u16, node: usize) {
        let s = usize::from(slot);
        if s >= SLOTS {
            return;
        }
        let old = self.owners[s];
        if old == node as u16 {
            return;
        }
        if old != NO_OWNER {
            self.counts[usize::from(old)] -= 1;
        }
        self.owners[s] = node as u16;
        self.counts[node] += 1;
        self.shard_of[node] = node as u16;
        self.run.shared.request_refresh();
    }

    /// Counts a redirect in the measured phase, by second.
    pub fn count(&mut self, kind: RedirectKind, now: Instant, measure_start: Instant) {
        let k = kind as usize;
        self.stats.redirects[k] += 1;
        let sec = now.saturating_duration_since(measure_start).as_secs() as usize;
        if self.stats.timeline.len() <= sec {
            self.stats.timeline.resize(sec + 1, [0; 4]);
        }
        self.stats.timeline[sec][k] += 1;
    }

    /// Records a completed request on `node`.
    pub fn record(&mut self, node: usize, latency_ns: u64) {
        self.ensure_node(node);
        let n = &mut self.stats.nodes[node];
        n.completed += 1;
        n.latency.record(latency_ns);
    }

    /// A random slot served by `route` (any slot if it serves none).
    pub fn pick_slot(&self, route: u16, mut rnd: impl FnMut() -> u64) -> u16 {
        let owned = self.counts.get(usize::from(route)).copied().unwrap_or(0);
        if owned == 0 {
            return (rnd() % SLOTS as u64) as u16;
        }
        loop {
            let s = (rnd() % SLOTS as u64) as usize;
            if self.owners[s] == route {
                return s as u16;
            }
        }
    }

    /// Whether `slot` is served by `route`.
    #[inline]
    pub fn serves(&self, route: u16, slot: u16) -> bool {
        self.owners[usize::from(slot)] == route
    }

    /// A cleared buffer for a redirected command's bytes (reused when one is spare).
    pub fn retry_buffer(&mut self) -> Vec<u8> {
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.clear();
        bytes
    }

    /// A request's first redirect: it is outstanding until its retry is answered.
    pub fn redirected(&mut self, r: Redirect) {
        self.outstanding += 1;
        self.redirects.push(r);
    }

    /// A retry redirected once more.
    pub fn redirected_again(&mut self, r: Redirect) {
        self.redirects.push(r);
    }

    /// Redirects received and not acted on yet.
    pub fn has_redirects(&self) -> bool {
        !self.redirects.is_empty()
    }

    /// Takes the redirects to act on (`restore_redirects` hands the emptied list back, so its
    /// capacity is kept).
    pub fn take_redirects(&mut self) -> Vec<Redirect> {
        std::mem::take(&mut self.redirects)
    }

    pub fn restore_redirects(&mut self, list: Vec<Redirect>) {
        self.redirects = list;
    }

    /// A redirected request is done (answered, or given up): its buffer becomes spare.
    pub fn retire(&mut self, cmd: Vec<u8>) {
        self.outstanding -= 1;
        self.spare.push(cmd);
    }

    /// Redirected requests not yet answered.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Holds `retry` for `node` until `due`.
    pub fn delay(&mut self, due: Instant, node: usize, retry: Retry) {
        self.delayed.push((due, node, retry));
    }

    /// Removes and returns the delayed retries due by `now`.
    pub fn take_due(&mut self, now: Instant) -> Vec<(Instant, usize, Retry)> {
        let mut due = Vec::new();
        let mut k = 0;
        while k < self.delayed.len() {
            if self.delayed[k].0 <= now {
                due.push(self.delayed.swap_remove(k));
            } else {
                k += 1;
            }
        }
        due
    }

    /// Measured retries waiting out a delay (unanswered if the test ends first).
    pub fn delayed_measured(&self) -> u64 {
        self.delayed.iter().filter(|d| !d.2.warmup).count() as u64
    }

    /// `-e`: `lost` measured requests went unanswered on `node`'s connections at `at` (from the
    /// start of the measured phase); `outage`: a load connection failed, so the node's outage
    /// begins (or goes on, if it had ended).
    pub fn node_lost(&mut self, node: usize, lost: u64, at: Duration, outage: bool) {
        self.ensure_node(node);
        let n = &mut self.stats.nodes[node];
        n.lost += lost;
        if outage {
            let o = n.outage.get_or_insert(NodeOutage {
                start: at,
                end: None,
            });
            o.end = None;
        }
    }

    /// `-e`: a connection that failed on `node` completed a batch again at `at`: the node's
    /// slots are served (by it, or by its new owner).
    pub fn node_back(&mut self, node: usize, at: Duration) {
        if let Some(o) = self
            .stats
            .nodes
            .get_mut(node)
            .and_then(|n| n.outage.as_mut())
            && o.end.is_none()
        {
            o.end = Some(at);
        }
    }

    /// The earliest delayed retry, if any.
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.iter().map(|d| d.0).min()
    }
}

/// The side-connection queue type.
pub(crate) type SideQueue = VecDeque<SideItem>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_text() {
        assert_eq!(
            parse_redirect(b"MOVED 3999 127.0.0.1:6381"),
            Some((3999, "127.0.0.1".into(), 6381))
        );
        assert_eq!(
            parse_redirect(b"ASK 1 [::1]:7000"),
            Some((1, "::1".into(), 7000))
        );
        assert_eq!(parse_redirect(b"MOVED 1 :7000"), Some((1, "".into(), 7000)));
        assert_eq!(parse_redirect(b"MOVED x y"), None);
        assert_eq!(parse_redirect(b"TRYAGAIN Multiple keys"), None);
    }
}
