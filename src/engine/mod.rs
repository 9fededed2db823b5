//! The load engine: worker threads that own their connections, send pre-encoded batches, scan
//! replies and record each request's latency.
//!
//! Owns: sockets, pacing, in-flight accounting, latency recording. Must not: format output or
//! decide exit codes (it returns data and typed errors). Invariants: every request is timed on its
//! own reply from its intended send time; nothing is allocated per request in steady state; no
//! queue or lock sits between deciding to send and sending.
//!
//! Rooms: `spec` (what it executes), `runner` (`run_test`), `monitor` (the main thread during a
//! test), `worker/` (one thread's event loop: `conn` I/O, `reply` accounting, `cluster`), `pacer`
//! (`--rps`), `park` (cluster mode's units kept for another node), `cluster` (shared
//! topology, a worker's view), `conn`/`tls`/`control` (sockets), `connect` (blocking connects a
//! signal cuts short),
//! `follow` (a primary that moves: Sentinel), `scan_walk` (memtier's SCAN cursor following),
//! `error`. `docs/architecture.md` has the table.

mod allkeys;
pub mod cluster;
pub mod conn;
pub mod connect;
pub mod control;
mod error;
pub mod follow;
mod idle;
pub mod limits;
mod monitor;
mod observer;
mod pacer;
mod park;
mod push;
mod runner;
pub mod scan_walk;
pub mod seconds;
mod spec;
mod timer;
pub mod tls;
mod worker;

pub use cluster::{ClusterRun, ClusterShared};
pub use conn::{Family, Target, Transport};
pub use error::{EngineError, io_reason};
pub use follow::{FollowedPrimary, PrimaryAddr};
pub use idle::run_idle;
pub use observer::{Observer, Snapshot, TICK};
pub use pacer::Arrival;
pub use push::SUBSCRIPTION_COMMANDS;
pub use runner::run_test;
pub use scan_walk::ScanWalk;
pub use spec::{ConnSetup, ErrorPolicy, LoadSpec, Ramp, Stop};
/// The failure rules the other modes' loops share with the workers (one home: `worker/outage.rs`).
pub(crate) use worker::{
    BACKOFF_START, FailKind, backoff_step, is_maxclients, jitter_from, record_error, with_hint,
};
