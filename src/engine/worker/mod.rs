//! One worker thread: its connections, its event loop, its recorder.
//!
//! Per request in steady state (closed loop, `-P 1`): one `write`, one `read` (a short read means
//! the socket is drained, so no second read to see EAGAIN), a share of one `epoll_wait`, and two
//! clock reads (vDSO, no syscall). Write interest is registered only while a write is partial.
//!
//! The files, each importing only those before it (no file imports this one):
//! `conn.rs` (a connection's state, data only) ← `state.rs` (`Worker`, its config and result,
//! building and finishing it) ← `event_loop.rs`, `send.rs` (deciding and writing a batch),
//! `io.rs` (writes, reads, reconnects), `outage.rs` (failures), `reply.rs` (what a reply means),
//! `cluster.rs`, `cluster_fail.rs` and `cluster_mix.rs` (cluster mode), `ramp.rs` (memtier's
//! staircase ramp), each an `impl Worker` block of its own.

mod cluster;
mod cluster_fail;
mod cluster_mix;
mod conn;
mod event_loop;
mod io;
mod outage;
mod ramp;
mod reply;
mod send;
mod state;

pub(crate) use self::conn::{BACKOFF_START, Placement};
pub(crate) use self::event_loop::WAKER;
pub(crate) use self::outage::{FailKind, backoff_step, jitter_from, with_hint};
pub(crate) use self::reply::{is_maxclients, record_error};
pub(crate) use self::state::{Worker, WorkerConfig, WorkerResult};
