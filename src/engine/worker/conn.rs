//! A worker's connection: its socket and what goes with it, grouped by what uses it: the batch
//! in flight, reopening after a failure, the cluster binding. Data only: the I/O that drives it
//! is `io.rs`, failures are `outage.rs`.

use std::time::{Duration, Instant};

use resp::Scanner;

use crate::engine::cluster::SideQueue;
use crate::engine::conn::Stream;
use crate::engine::push::PushKind;
use crate::engine::scan_walk::Walk;
use crate::metrics::ConnSeconds;
use crate::workload::mix::BatchUnits;

/// The first wait before reopening a failed connection; it doubles on every failure in a row
/// (`outage.rs`).
pub(crate) const BACKOFF_START: Duration = Duration::from_millis(10);

/// Where a load connection goes (cluster mode; node 0 otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Placement {
    /// The node index in the cluster's topology.
    pub node: usize,
    /// A slot of the node's shard, followed after a failover.
    pub home: u16,
    /// Bound to a primary (follows the shard's primary) rather than to a replica.
    pub follow_primary: bool,
}

/// Whether a connection can be written to yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Connected; a batch may be in flight.
    Open,
    /// A `-k 0` reconnect is under way; the decided batch waits for it. Also a connection
    /// being reopened after a failure (`recovering`), with no batch.
    Connecting,
    /// Failed (`-e`): closed, waiting for `retry_at` to be reopened (`outage.rs`).
    Down,
}

/// The batch a connection carries. At most one is in flight per connection (as in the
/// reference), so one is enough; its buffers are built once and reused, so a request allocates
/// nothing.
pub(super) struct Batch {
    /// `-P` copies of the unit; placeholders patched before each send.
    pub(super) wbuf: Vec<u8>,
    /// Bytes of `wbuf` in this batch (fewer units for a final partial batch).
    pub(super) wlen: usize,
    /// Bytes of the batch already written (a partial write resumes here).
    pub(super) written: usize,
    /// Commands in the batch.
    pub(super) commands: u64,
    /// Replies outstanding.
    pub(super) pending: u64,
    /// When the batch was meant to go: latency is measured from here (coordinated omission).
    pub(super) intended: Instant,
    /// When the batch was written: the uncorrected latency's start.
    pub(super) sent: Instant,
    /// Intended before the measured phase: its replies are checked, not recorded.
    pub(super) warmup: bool,
    /// A command mix: which command of the mix each unit is and its bytes (reply `i` answers
    /// unit `i`); empty otherwise.
    pub(super) units: BatchUnits,
}

/// Reopening a connection: when its connect started, and after a failure (`-e`) when and how
/// it is tried again (`outage.rs`).
pub(super) struct Reopen {
    /// When the current connect started (a connect that takes too long fails as a timeout).
    pub(super) connect_started: Instant,
    /// Down: when to try to reopen it.
    pub(super) retry_at: Instant,
    /// The wait before the next reopening attempt; doubles on each failure in a row, back to the
    /// start for a connection that stayed up a while.
    pub(super) backoff: Duration,
    /// Being reopened after a failure (the connect is under way).
    pub(super) recovering: bool,
    /// Reopened and connected, not answered yet: the server's first bytes make it a reconnect,
    /// unless they are a refusal (a server at `maxclients` accepts, then refuses).
    pub(super) reopened: bool,
    /// With `-e`: its first reply was the server's `ERR max number of clients reached` (the
    /// server closes it next), so the read that brought it fails the connection as refused.
    pub(super) refused: bool,
    /// Reopening attempts since it was last up (memtier's `--max-reconnect-attempts`).
    pub(super) attempts: u32,
}

/// Which node a connection serves and, in cluster mode, how it follows the topology.
pub(super) struct Binding {
    /// The node it is connected to (always 0 outside cluster mode).
    pub(super) node: usize,
    /// Cluster: the primary whose slots its units target (itself, or a replica's primary).
    pub(super) route: u16,
    /// Cluster: a slot of the shard it was bound to; after a failover it follows that slot's
    /// new primary (only connections bound to primaries do).
    pub(super) home: u16,
    /// Cluster: bound to a primary, so it follows its home slot to a new owner.
    pub(super) follow_primary: bool,
    /// Cluster: reconnect to this node before the next batch.
    pub(super) rebind: Option<usize>,
    /// Cluster: a side connection's queue of redirected requests (None for load connections).
    pub(super) side: Option<SideQueue>,
    /// Cluster, `-e`: the node this connection lost requests on, until its next completed batch
    /// (which ends that node's outage: its slots are served again, by it or a new owner).
    pub(super) lost_on: Option<usize>,
}

/// One connection of a worker.
pub(super) struct Conn {
    pub(super) stream: Stream,
    pub(super) state: State,
    /// Registered for writability: only while a write is partial, to save `epoll_ctl` calls.
    pub(super) want_write: bool,
    /// Bytes of the prefix (AUTH/SELECT/HELLO…) written: it goes out with the first batch.
    pub(super) prefix_written: usize,
    /// Prefix replies still to come: the first replies on a connection are checked, not timed.
    pub(super) prefix_pending: usize,
    /// Bytes of a reply line split across reads, put in front of the next read.
    pub(super) carry: Vec<u8>,
    /// Frames replies without building values; resumable across reads.
    pub(super) scanner: Scanner,
    /// Bytes of the reply under way that earlier reads brought (the scanner absorbed them), so
    /// a reply's size is whole when it completes in a later read (memtier's KB/sec and
    /// `--client-stats` bytes).
    pub(super) absorbed: usize,
    /// Kind of the push being scanned (classified from its head before the scanner consumes it).
    pub(super) push_kind: PushKind,
    /// Has carried a batch (with `-k 0` it is replaced before the next one).
    pub(super) used: bool,
    /// Commands of the `-n` quota this connection sent (`LoadSpec::quota_per_conn` only).
    pub(super) quota_used: u64,
    /// Commands sent on this stream since it was opened (`--reconnect-interval`: it is replaced
    /// before the batch that would go past the interval).
    pub(super) since_open: u64,
    /// `--sentinel`: the followed primary's epoch when this connection was opened; once the
    /// primary moves, the connection is reopened (to the new one) before its next batch.
    pub(super) epoch: Option<u64>,
    pub(super) batch: Batch,
    pub(super) reopen: Reopen,
    pub(super) bind: Binding,
    /// `--scan-incremental-iteration`: the cursor its next `SCAN` sends.
    pub(super) walk: Walk,
    /// memtier's `--client-stats`: this connection's seconds (empty, never grown, otherwise).
    pub(super) seconds: ConnSeconds,
}

impl Conn {
    /// A connection with nothing in flight; `connecting`: a non-blocking connect is under way
    /// (writable means connected). `route` is the primary whose slots its units target.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        stream: Stream,
        connecting: bool,
        wbuf: Vec<u8>,
        prefix_commands: usize,
        place: Placement,
        route: u16,
        side: Option<SideQueue>,
        now: Instant,
    ) -> Self {
        Conn {
            stream,
            state: if connecting {
                State::Connecting
            } else {
                State::Open
            },
            want_write: connecting,
            prefix_written: 0,
            prefix_pending: prefix_commands,
            carry: Vec::with_capacity(64),
            scanner: Scanner::new(),
            absorbed: 0,
            push_kind: PushKind::Other,
            used: false,
            quota_used: 0,
            since_open: 0,
            epoch: None,
            batch: Batch {
                wbuf,
                wlen: 0,
                written: 0,
                commands: 0,
                pending: 0,
                intended: now,
                sent: now,
                warmup: false,
                units: BatchUnits::default(),
            },
            reopen: Reopen {
                connect_started: now,
                retry_at: now,
                backoff: BACKOFF_START,
                recovering: false,
                reopened: false,
                refused: false,
                attempts: 0,
            },
            bind: Binding {
                node: place.node,
                route,
                home: place.home,
                follow_primary: place.follow_primary,
                rebind: None,
                side,
                lost_on: None,
            },
            walk: Walk::default(),
            seconds: ConnSeconds::default(),
        }
    }
}
