//! One second's full-precision latencies (3 significant figures, as the record's), for the
//! journal only: summed over a killed test's full seconds they are exactly the whole-test
//! histograms a Ctrl-C at its last full second would have written (`docs/journal.md`).
//!
//! Why the difference of the worker's whole-test figures between hand-overs, and not a second
//! pair of histograms recorded per reply: a histogram record costs about 50 instructions, so two
//! more per reply cost the worker about 10% (measured with callgrind, `docs/performance.md`);
//! the difference costs nothing per reply and, once a second per worker, a read of the buckets
//! in the band the second's replies fell in (`metrics::handed_over`: the band comes from the
//! second's coarse histogram, the difference is exact whatever the band). The parts are lists of
//! `(bucket, count)` pairs ([`SparseHistogram`]): the worker never clears or copies a whole
//! histogram, and the journal's writer (main thread) turns them into histograms. The timeline
//! keeps its own histograms coarse (2 significant figures, one per second for the whole test);
//! these are moved out of it when the second is handed over (`engine::seconds`), so memory holds
//! only the seconds not yet handed over.

use super::handed_over::HandedOver;
use super::{
    ClusterStats, CommandFigures, CommandTally, ErrorCounts, FAILURE_KINDS, LatencyHistogram,
    SparseHistogram,
};

/// A second's corrected and uncorrected latencies at full precision.
#[derive(Clone, Debug, Default)]
pub struct ExactSecond {
    pub corrected: SparseHistogram,
    pub uncorrected: SparseHistogram,
    /// The second's error replies by first word (requests lost without a reply are counted by
    /// kind in the second itself). Words with a count of 0 may be listed.
    pub errors: ErrorCounts,
    /// A mix's commands (`--ratio`), by their index in the mix: each one's second (empty
    /// otherwise).
    pub commands: Vec<ExactCommand>,
    /// Cluster mode: each node's part of the second, by node index (empty otherwise). Handed
    /// over only with the cluster's figures (`Recorder::hand_over_at`, which a cluster worker
    /// calls before it counts anything): what a node gained before a hand-over without them
    /// would go with the next second (the sums over the seconds are still every node's
    /// figures), and a run killed in between would lose it from its journal.
    pub nodes: Vec<NodeSecond>,
    /// Cluster mode: redirects by `RedirectKind` index, handed over as `nodes`.
    pub redirects: [u64; 4],
}

/// One cluster node's part of a second (as `NodeStats` counts it), its corrected latencies as
/// pairs, taken among the buckets of the second's corrected part (`HandedOver::take_among`): a
/// node's whole-histogram difference (reset, add, subtract, add back: four passes over 33,792
/// counts per node, worker and second, a 270 kB histogram per node for every second of the
/// timeline, deflated on the main thread) made a three-node run's journal about three times as
/// costly: 16 M instructions a second under callgrind, against 5.2 M now (`docs/performance.md`).
#[derive(Clone, Debug, Default)]
pub struct NodeSecond {
    pub completed: u64,
    pub lost: u64,
    pub latency: SparseHistogram,
}

/// One mix command's second: as [`CommandTally`], its latencies as pairs.
pub type ExactCommand = CommandFigures<SparseHistogram>;

impl ExactSecond {
    /// Empties every part, keeping the memory and the error words (a direct tally's part is
    /// refilled every second: `SecondTally::direct`).
    pub fn clear(&mut self) {
        self.corrected.clear();
        self.uncorrected.clear();
        self.errors.zero();
        for c in &mut self.commands {
            c.latency.clear();
            (c.completed, c.errors, c.nils) = (0, 0, 0);
        }
    }

    /// Adds another second's (another worker's part of the same second).
    // Never inlined: once a second per worker, and `bench/journal-cost.sh` counts it by name.
    #[inline(never)]
    pub fn add(&mut self, o: &ExactSecond) {
        if self.nodes.len() < o.nodes.len() {
            self.nodes.resize_with(o.nodes.len(), NodeSecond::default);
        }
        for (a, b) in self.redirects.iter_mut().zip(&o.redirects) {
            *a += b;
        }
        for (a, b) in self.nodes.iter_mut().zip(&o.nodes) {
            a.completed += b.completed;
            a.lost += b.lost;
            a.latency.add(&b.latency);
        }
        self.corrected.add(&o.corrected);
        self.uncorrected.add(&o.uncorrected);
        self.errors.merge(&o.errors);
        if self.commands.len() < o.commands.len() {
            self.commands
                .resize_with(o.commands.len(), ExactCommand::default);
        }
        for (a, b) in self.commands.iter_mut().zip(&o.commands) {
            a.latency.add(&b.latency);
            a.uncorrected.add(&b.uncorrected);
            a.completed += b.completed;
            a.errors += b.errors;
            a.hits += b.hits;
            a.nils += b.nils;
            a.tx_bytes += b.tx_bytes;
            a.rx_bytes += b.rx_bytes;
        }
    }
}

/// A worker's whole-test figures so far (its `Recorder`'s), to take a second's part of.
pub struct Whole<'a> {
    /// Latencies of replies that are not a mix command's (those are in `commands`).
    pub latency: &'a LatencyHistogram,
    pub uncorrected: &'a LatencyHistogram,
    pub errors: &'a ErrorCounts,
    pub commands: &'a [CommandTally],
    /// Cluster mode: the worker's redirect and per-node figures (`None` when the hand-over is
    /// not the cluster code's: their part then waits for the next one).
    pub cluster: Option<&'a ClusterStats>,
    /// Measured commands the worker wrote so far ([`Recorder::issued`](super::Recorder)): each
    /// second gets its part (`Second::issued`), so a journal's recovered test has `issued`.
    pub issued: u64,
    /// The worker's pushes (every kind, as the test's `pushes` counts them) and reconnects the
    /// server refused so far: handed over as `issued` (`Second::pushes`).
    pub pushes: super::PushCounts,
    pub reconnect_refusals: u64,
}

/// A worker's whole-test figures as of its last hand-over (what [`ExactSecond::take_delta`]
/// takes the next second's part against). Allocated once, when the test starts.
#[derive(Clone, Debug, Default)]
pub struct SecondBase {
    latency: HandedOver,
    uncorrected: HandedOver,
    errors: ErrorCounts,
    commands: Vec<CommandBase>,
    /// Cluster mode: each node's figures and the redirects at the last cluster hand-over.
    nodes: Vec<NodeBase>,
    redirects: [u64; 4],
}

/// A cluster node's figures at the last cluster hand-over.
#[derive(Clone, Debug, Default)]
struct NodeBase {
    latency: HandedOver,
    completed: u64,
    lost: u64,
}

#[derive(Clone, Debug, Default)]
struct CommandBase {
    latency: HandedOver,
    uncorrected: HandedOver,
    completed: u64,
    errors: u64,
    hits: u64,
    nils: u64,
    tx_bytes: u64,
    rx_bytes: u64,
}

impl ExactSecond {
    /// Sets `self` to what `whole` gained since `base`, and `base` to `whole`: the figures of
    /// the second that ended (each reply was counted in `whole` after its second's hand-over).
    /// `band` (`[low, high]` ns): the lowest and highest corrected latency of the second (its
    /// coarse histogram's), where its values are looked for first (`metrics::handed_over`).
    // Never inlined: once a second per worker, and `bench/journal-cost.sh` counts it by name.
    #[inline(never)]
    pub fn take_delta(&mut self, base: &mut SecondBase, whole: &Whole<'_>, band: (u64, u64)) {
        self.corrected.clear();
        self.uncorrected.clear();
        base.latency.take(whole.latency, band, &mut self.corrected);
        // A reply's uncorrected latency is at most its corrected one (it is timed from the
        // write, not from the intended send): the band's top holds, its bottom is the whole's.
        base.uncorrected
            .take(whole.uncorrected, (0, band.1), &mut self.uncorrected);
        self.errors.zero();
        // Error replies only: lost requests are counted by kind in the second itself.
        for (word, n) in whole.errors.iter() {
            let d = n - base.errors.count(word).min(n);
            if d > 0 && !FAILURE_KINDS.contains(&word) {
                self.errors.record_kind(word, d);
                base.errors.record_kind(word, d);
            }
        }
        if self.commands.len() < whole.commands.len() {
            self.commands
                .resize_with(whole.commands.len(), ExactCommand::default);
            base.commands
                .resize_with(whole.commands.len(), CommandBase::default);
        }
        for ((d, b), w) in self
            .commands
            .iter_mut()
            .zip(&mut base.commands)
            .zip(whole.commands)
        {
            d.latency.clear();
            b.latency.take(&w.latency, band, &mut d.latency);
            d.uncorrected.clear();
            b.uncorrected
                .take(&w.uncorrected, (0, band.1), &mut d.uncorrected);
            // The second's latencies include the mix commands'.
            self.corrected.add(&d.latency);
            self.uncorrected.add(&d.uncorrected);
            (d.completed, d.errors, d.nils) = (
                w.completed - b.completed,
                w.errors - b.errors,
                w.nils - b.nils,
            );
            (b.completed, b.errors, b.nils) = (w.completed, w.errors, w.nils);
            (d.tx_bytes, d.rx_bytes) = (w.tx_bytes - b.tx_bytes, w.rx_bytes - b.rx_bytes);
            (b.tx_bytes, b.rx_bytes) = (w.tx_bytes, w.rx_bytes);
            (d.hits, b.hits) = (w.hits - b.hits, w.hits);
        }
        self.take_cluster(base, whole.cluster);
    }

    /// The cluster part of [`ExactSecond::take_delta`]: none without `cluster` (the base stays,
    /// so the next hand-over with it takes what was gained meanwhile). A node's latencies are
    /// its worker's corrected ones, so each node's part is looked for in the buckets the
    /// second's corrected part gained (`self.corrected`, taken first): a few reads per bucket
    /// and node, not a read of the band per node (a node's reply that waited for a cluster
    /// hand-over lies elsewhere, and is found all the same: `HandedOver::take_among`).
    fn take_cluster(&mut self, base: &mut SecondBase, cluster: Option<&ClusterStats>) {
        for d in &mut self.nodes {
            d.latency.clear();
            (d.completed, d.lost) = (0, 0);
        }
        self.redirects = [0; 4];
        let Some(cluster) = cluster else {
            return;
        };
        for ((d, b), w) in self
            .redirects
            .iter_mut()
            .zip(&mut base.redirects)
            .zip(&cluster.redirects)
        {
            (*d, *b) = (w - *b, *w);
        }
        let nodes = &cluster.nodes;
        if self.nodes.len() < nodes.len() {
            self.nodes.resize_with(nodes.len(), NodeSecond::default);
            base.nodes.resize_with(nodes.len(), NodeBase::default);
        }
        for ((d, b), w) in self.nodes.iter_mut().zip(&mut base.nodes).zip(nodes) {
            b.latency
                .take_among(&w.latency, &self.corrected, &mut d.latency);
            (d.completed, d.lost) = (w.completed - b.completed, w.lost - b.lost);
            (b.completed, b.lost) = (w.completed, w.lost);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::NodeStats;

    #[test]
    fn the_cluster_part_waits_for_a_hand_over_that_has_it_and_adds_up() {
        let (latency, uncorrected, errors) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            ErrorCounts::default(),
        );
        let mut stats = ClusterStats {
            nodes: vec![NodeStats::new(), NodeStats::new()],
            ..ClusterStats::default()
        };
        let mut base = SecondBase::default();
        let mut sums = ExactSecond::default();
        for (second, with) in [(0u64, true), (1, false), (2, true), (3, true)] {
            stats.nodes[0].completed += 10;
            stats.nodes[0].latency.record(1_000 * (second + 1));
            stats.nodes[1].lost += 1;
            stats.redirects[0] += 2;
            let mut d = ExactSecond::default();
            let whole = Whole {
                latency: &latency,
                uncorrected: &uncorrected,
                errors: &errors,
                commands: &[],
                cluster: with.then_some(&stats),
                issued: 0,
                pushes: Default::default(),
                reconnect_refusals: 0,
            };
            d.take_delta(&mut base, &whole, (0, u64::MAX));
            if !with {
                assert!(d.nodes.iter().all(|n| n.completed == 0 && n.lost == 0));
                assert_eq!(d.redirects, [0; 4]);
            }
            sums.add(&d);
        }
        assert_eq!(sums.nodes[0].completed, 40);
        assert_eq!(sums.nodes[0].latency.len(), 4);
        assert_eq!(sums.nodes[1].lost, 4);
        assert_eq!(sums.redirects, [8, 0, 0, 0]);
    }
}
