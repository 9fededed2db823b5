//! `--connect-storm` (issue 26 item 1): `-c` openers open connections, take each through the
//! stages the run's options imply, and close it, so the cost of connecting (after a deploy, a
//! failover, a client fleet's restart) is measured stage by stage instead of per request.
//!
//! Owns: the openers (`opener.rs`: one thread each, blocking sockets, an even share of the
//! count and of `--rps`), one connection's walk through its stages (`stages.rs`), what a failure
//! was (`failure.rs`: the stage, the kind, and whether the client ran out of something). Must
//! not: touch the request engine's workers (the storm is its own loop: a connection's stages are
//! sequential round trips, which blocking sockets measure most plainly), or format output.
//!
//! A connection's total is measured on its own (from before the socket is made to the last
//! stage's reply); each stage is the time from the previous stage's end to its own, so the
//! stages add up to the total exactly. Only connections that finish every stage are recorded in
//! the histograms (a failed one is counted by the stage it failed in), so that invariant holds
//! for the histograms' sums as well.

pub mod block;
pub mod cli;
mod failure;
#[cfg(test)]
mod journal_tests;
mod kind;
mod merge;
mod opener;
pub mod plan;
mod record;
mod recover;
mod report;
pub mod run;
mod stages;
mod tables;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

use crate::engine::{Stop, Target};
use crate::metrics::outage::{self, Outage};
use crate::metrics::{LatencyHistogram, SharedTimeline};

pub use failure::{ClientLimit, Side};
pub use stages::split_commands;

/// A stage of a connection, in the order they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// The TCP (or unix socket) connect.
    Connect,
    /// A full TLS handshake.
    TlsFull,
    /// A TLS handshake that resumed a session (`--tls-resume`).
    TlsResumed,
    /// `HELLO` or `AUTH` (the password, if any, travels here).
    HelloAuth,
    /// `SELECT` (`--dbnum`).
    Select,
    /// Another setup command (`CLIENT TRACKING`).
    Setup,
    /// `CLUSTER SLOTS` (`--cluster`): the topology fetch every cluster client does.
    ClusterSlots,
    /// The command given on the command line, once.
    Command,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 8] = [
        Stage::Connect,
        Stage::TlsFull,
        Stage::TlsResumed,
        Stage::HelloAuth,
        Stage::Select,
        Stage::Setup,
        Stage::ClusterSlots,
        Stage::Command,
    ];

    /// The record's and the report's name (the record's vocabulary: `block::STAGES`,
    /// in this order).
    pub fn name(self) -> &'static str {
        block::STAGES[self.index()]
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The stage of a setup command named `name` (`plan::Prefix::commands`).
    pub fn of_setup(name: &str) -> Stage {
        let first = name.split_whitespace().next().unwrap_or("");
        if first.eq_ignore_ascii_case("HELLO") || first.eq_ignore_ascii_case("AUTH") {
            Stage::HelloAuth
        } else if first.eq_ignore_ascii_case("SELECT") {
            Stage::Select
        } else {
            Stage::Setup
        }
    }
}

/// What the storm does.
#[derive(Clone, Debug)]
pub struct StormSpec {
    pub target: Target,
    /// Setup commands, one encoded command each, with the stage each is timed in.
    pub setup: Vec<(Stage, Vec<u8>)>,
    /// `--cluster`: `CLUSTER SLOTS` after the setup.
    pub cluster_slots: bool,
    /// The command to send once per connection, encoded.
    pub command: Option<Vec<u8>>,
    /// `-c`: concurrent openers.
    pub openers: u32,
    /// `-n` connections in all, or `--duration`.
    pub stop: Stop,
    /// `--rps`: connections per second over all openers; `None` is as fast as they can.
    pub rate: Option<u64>,
    /// How long one stage may take (the connect timeout, and each reply's).
    pub stage_timeout: Duration,
    /// Connections ended so far (finished or failed), for a progress line while it runs.
    pub ended: Arc<AtomicU64>,
    /// Of those, the ones that finished every stage and the ones that failed: each only grows,
    /// so the progress and live metrics read them without a race.
    pub tally: Arc<Tally>,
    /// The storm's seconds, as a test's (`metrics::Timeline`): each opener counts its
    /// connections in a `metrics::SecondTally` (a finished connection is a completed request
    /// with its total as latency, a failed one a failed request), so the run hands them to the
    /// journal and live metrics by the engine's one hand-over (`engine::seconds`).
    pub timeline: SharedTimeline,
    /// Second 0's start: the openers' pacing and the timeline's seconds count from it.
    pub start: Instant,
}

/// Connections finished and failed so far, while the storm runs.
#[derive(Debug, Default)]
pub struct Tally {
    pub completed: AtomicU64,
    pub failed: AtomicU64,
}

/// One stage's figures (or the whole connection's).
#[derive(Clone, Debug, Default)]
pub struct StageFigures {
    pub hist: LatencyHistogram,
    /// The exact sum of the recorded times, in ns (the histogram rounds).
    pub sum_ns: u128,
}

impl StageFigures {
    fn add(&mut self, ns: u64) {
        self.hist.record(ns);
        self.sum_ns += u128::from(ns);
    }

    fn merge(&mut self, o: &StageFigures) {
        self.hist.merge(&o.hist);
        self.sum_ns += o.sum_ns;
    }
}

/// A failure's place: the stage it happened in and its kind (`refused`, `reset`, `timeout`,
/// `closed`, `tls`, `maxclients`, `auth`, `err:<WORD>`, `local_ports`, `open_files`, `io`).
pub type FailureKey = (Stage, &'static str);

/// What a storm measured (merged over the openers).
#[derive(Clone, Debug, Default)]
pub struct StormResult {
    /// Connections begun.
    pub attempted: u64,
    /// Connections that finished every stage.
    pub completed: u64,
    /// Per stage, the connections that finished every stage (index: `Stage as usize`).
    pub stages: [StageFigures; 8],
    /// Each completed connection's total, measured on its own.
    pub total: StageFigures,
    /// Failures by stage and kind.
    pub failures: BTreeMap<FailureKey, u64>,
    /// The first failure's message for each stage and kind (what the server or the socket
    /// said); the run scrubs secrets from it before it goes anywhere.
    pub messages: BTreeMap<FailureKey, String>,
    /// The measured span, from the first opener's start to the last one's end.
    pub elapsed: Duration,
    /// Ended early by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// Client-side limits met, with the figure that ran out (read once, after the storm).
    pub client_limits: Vec<ClientLimit>,
    /// The outages in the storm's seconds, by the engine's rule (read once, after the storm).
    pub outages: Vec<Outage>,
}

impl StormResult {
    /// The figures of `stage`.
    pub fn stage(&self, stage: Stage) -> &StageFigures {
        &self.stages[stage.index()]
    }

    /// Connections that failed.
    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    /// Counts a failure of `stage` of kind `kind`; `message` (made only for the first of its
    /// kind) is kept as its example.
    fn fail(&mut self, stage: Stage, kind: &'static str, message: impl FnOnce() -> String) {
        *self.failures.entry((stage, kind)).or_default() += 1;
        self.messages.entry((stage, kind)).or_insert_with(message);
    }

    fn merge(&mut self, o: &StormResult) {
        self.attempted += o.attempted;
        self.completed += o.completed;
        for (a, b) in self.stages.iter_mut().zip(&o.stages) {
            a.merge(b);
        }
        self.total.merge(&o.total);
        for (k, v) in &o.failures {
            *self.failures.entry(*k).or_default() += v;
        }
        for (k, m) in &o.messages {
            self.messages.entry(*k).or_insert_with(|| m.clone());
        }
        self.interrupted |= o.interrupted;
    }
}

/// Runs the storm: `spec.openers` threads until the count is done, the duration is over or
/// `interrupted` is set.
pub fn run(spec: &StormSpec, interrupted: Arc<AtomicBool>) -> StormResult {
    let mut result = opener::run_openers(spec, interrupted);
    result.client_limits = failure::client_limits(&result.failures);
    // The openers' seconds (each connection counted in its 100 ms slot as it ended, a finished
    // one with its total as the time it waited) judged as a test's are: no connection
    // finishing while some fail (a server killed, refusing), or while one waits a second or
    // more (a server frozen), is an outage. Nothing is in flight once the openers have ended.
    let timeline = spec.timeline.lock().unwrap_or_else(|e| e.into_inner());
    result.outages = outage::outages(&timeline, result.elapsed, 0);
    drop(timeline);
    result
}
