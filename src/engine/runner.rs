//! The test runner: places and opens the connections, starts the workers, watches them, and
//! merges what they measured into one `TestResult`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::allkeys::{self, AllKeys};
use super::cluster::{self, ClusterRun};
use super::monitor::{Live, Monitor, Watched, stop_workers};
use super::observer::Observer;
use super::worker::{self, Placement, WorkerResult};
use super::{ConnSetup, EngineError, LoadSpec, Stop, Target, conn};
use crate::metrics::{
    ClusterStats, CommandResult, NodeStats, Outcome, Role, SharedTimeline, TestResult,
};
use crate::workload::Template;
use crate::workload::keys::SequentialCounters;
use crate::workload::split::even_part;

/// A worker's connections, opened before it starts, with where each goes.
type WorkerStreams = Vec<(conn::Stream, Placement)>;

/// Runs one test: opens `clients` fresh connections, drives them from `workers` threads until the
/// stop condition, Ctrl-C or a fatal error, and returns the merged result. The error, if any, is
/// returned beside the partial result so that nothing measured is lost.
pub fn run_test(
    setup: &ConnSetup,
    load: &LoadSpec,
    title: &str,
    template: &Template,
    cluster: Option<&ClusterRun>,
    observer: &mut dyn Observer,
) -> (TestResult, Option<EngineError>) {
    let empty = |outcome| TestResult::empty(title, load.rps, outcome);
    let places = places(setup, load, cluster);
    let total_conns = places.len();
    let workers = load.workers.clamp(1, total_conns);
    let per_worker = match connect_all(
        places,
        workers,
        group(load, cluster, workers),
        load,
        observer,
    ) {
        Ok(p) => p,
        Err((outcome, e)) => return (empty(outcome), e),
    };
    let (polls, wakers) = match event_loops(workers) {
        Ok(p) => p,
        Err(e) => return (empty(Outcome::Aborted), Some(e)),
    };
    let shared = Shared::new(load, template, cluster, workers, total_conns);
    shared
        .timeline
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .exact = observer.exact_seconds();
    let monitor = Monitor {
        lives: &shared.lives,
        stop: &shared.stop,
        wakers: &wakers,
        start: shared.start,
        measure_start: shared.measure_start,
        sample_rate: load.rps.is_some(),
        connections: shared.total_conns,
        timeline: &shared.timeline,
    };

    let mut spawn_error = None;
    let refresher_done = AtomicBool::new(false);
    let (watched, results) = std::thread::scope(|scope| {
        if let Some(run) = cluster {
            cluster::spawn_refresher(scope, &run.shared, &refresher_done);
        }
        let config = |id, share| shared.worker_config(id, share, setup, load, template, cluster);
        let handles;
        (handles, spawn_error) = spawn_workers(
            scope,
            per_worker,
            polls,
            config,
            (&shared.stop, &wakers[..]),
        );
        if spawn_error.is_some() {
            stop_workers(&shared.stop, &wakers);
        }

        // The main thread watches: progress ticks, Ctrl-C, a worker's fatal error.
        let watched = monitor.watch(|| handles.iter().all(|h| h.is_finished()), observer);
        let (results, panicked) = join_workers(handles);
        if spawn_error.is_none() {
            spawn_error = panicked;
        }
        refresher_done.store(true, Ordering::Relaxed);
        (watched, results)
    });

    let (mut result, fatal) = finish(
        title,
        load,
        shared.measure_start,
        cluster,
        watched,
        results,
        spawn_error,
    );
    result.timeline =
        std::mem::take(&mut *shared.timeline.lock().unwrap_or_else(|e| e.into_inner()));
    result.timeline.drop_exact();
    (result, fatal)
}

/// How many connections in a row go to one worker. Cluster mode with a mix: whole groups of one
/// per node (a unit drawn for another node waits for this worker's connection to it:
/// `engine/park.rs`), while there are groups enough for every worker; otherwise one.
fn group(load: &LoadSpec, cluster: Option<&ClusterRun>, workers: usize) -> usize {
    match cluster {
        Some(run) if load.mix.is_some() && load.clients as usize >= workers => {
            run.serving.len().max(1)
        }
        _ => 1,
    }
}

/// What a test's workers share, made once before they start (after the connects, so the clock
/// starts with the load): the stop flag, each worker's progress figures, the key counters, the
/// clock and the timeline they add their seconds to.
struct Shared {
    stop: AtomicBool,
    lives: Vec<Live>,
    /// `--sequential`: the counters all workers draw keys from.
    sequential: Option<Arc<SequentialCounters>>,
    /// `--cluster --sequential` with one key per unit: every key once, per node.
    allkeys: Option<Arc<AllKeys>>,
    start: Instant,
    measure_start: Instant,
    deadline: Option<Instant>,
    timeline: SharedTimeline,
    /// Every load connection of the test: `-n` and `--rps` are split in proportion to these.
    total_conns: u64,
    workers: usize,
}

impl Shared {
    fn new(
        load: &LoadSpec,
        template: &Template,
        cluster: Option<&ClusterRun>,
        workers: usize,
        total_conns: usize,
    ) -> Self {
        let (start, measure_start, deadline) = clock(load);
        Shared {
            stop: AtomicBool::new(false),
            lives: (0..workers).map(|_| Live::default()).collect(),
            sequential: (load.sequential).then(|| Arc::new(SequentialCounters::default())),
            allkeys: cluster
                .filter(|run| allkeys::applies(load, template, &run.routes))
                .map(|_| Arc::new(AllKeys::new(total_units(load, template)))),
            start,
            measure_start,
            deadline,
            timeline: SharedTimeline::default(),
            total_conns: total_conns as u64,
            workers,
        }
    }

    /// Worker `id`'s configuration: its share (`share` connections of the test's) of `-n`,
    /// `--rps` and a staircase ramp, and its handles on what the workers share.
    fn worker_config<'a>(
        &'a self,
        id: usize,
        share: u64,
        setup: &'a ConnSetup,
        load: &'a LoadSpec,
        template: &'a Template,
        cluster: Option<&'a ClusterRun>,
    ) -> worker::WorkerConfig<'a> {
        let (workers, total) = (self.workers, self.total_conns);
        worker::WorkerConfig {
            id,
            setup,
            load,
            template,
            // Walking every key once: each node's share is claimed from `allkeys` instead.
            quota: quota(load, template, id, workers, total).filter(|_| self.allkeys.is_none()),
            start: self.start,
            measure_start: self.measure_start,
            deadline: self.deadline,
            rate_per_sec: load.rps.map(|r| r as f64 * share as f64 / total as f64),
            live: &self.lives[id],
            timeline: self.timeline.clone(),
            stop: &self.stop,
            sequential: self.sequential.clone(),
            allkeys: self.allkeys.clone(),
            cluster,
            new_node_conns: (load.clients as usize).div_ceil(workers),
            ramp_target: even_part(u64::from(load.clients), id as u64, workers as u64).len as usize,
        }
    }
}

/// Starts a worker thread per connection group (`per_worker`, with its event loop), each with
/// the configuration `config` makes from its index and its number of connections. A thread that
/// cannot start ends the spawning with the error (the caller stops those already started).
fn spawn_workers<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    per_worker: Vec<WorkerStreams>,
    polls: Vec<mio::Poll>,
    config: impl Fn(usize, u64) -> worker::WorkerConfig<'env>,
    (stop, wakers): (&'env AtomicBool, &'env [mio::Waker]),
) -> (
    Vec<std::thread::ScopedJoinHandle<'scope, WorkerResult>>,
    Option<EngineError>,
) {
    let mut handles = Vec::with_capacity(per_worker.len());
    for (id, (streams, poll)) in per_worker.into_iter().zip(polls).enumerate() {
        let cfg = config(id, streams.len() as u64);
        let handle = std::thread::Builder::new()
            .name(format!("respbench-worker-{id}"))
            .spawn_scoped(scope, move || {
                stopping_all_on_panic(stop, wakers, || {
                    worker::Worker::new(cfg, streams, poll).run()
                })
            });
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                let e = EngineError::Other(format!("cannot start a worker thread: {e}"));
                return (handles, Some(e));
            }
        }
    }
    (handles, None)
}

/// Runs a worker's body; if it panics, stops every worker before the panic goes on to its
/// join. A worker stopped by a bug must not leave the others running to the end of the test
/// (or for ever, when nothing else would end them) while its share is lost in silence.
fn stopping_all_on_panic<T>(
    stop: &AtomicBool,
    wakers: &[mio::Waker],
    body: impl FnOnce() -> T,
) -> T {
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        stop_workers(stop, wakers);
        std::panic::resume_unwind(payload)
    })
}

/// The workers' results, and the error that ends the run when one of them panicked (a bug:
/// its figures are gone with it, so the test cannot be reported as complete; the others'
/// figures are kept as measured so far).
fn join_workers<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, T>>,
) -> (Vec<T>, Option<EngineError>) {
    let mut results = Vec::with_capacity(handles.len());
    let mut panicked = None;
    for (id, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(r) => results.push(r),
            Err(payload) => {
                let what = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no message".into());
                panicked.get_or_insert(EngineError::Other(format!(
                    "internal error: worker thread {id} stopped ({what}); its part of the test \
                     is missing and the others were stopped (a bug: please report it)"
                )));
            }
        }
    }
    (results, panicked)
}

/// The test's result from what the monitor saw and what the workers hand back: merged figures,
/// the elapsed time (when the test ran to its end: until its last request was answered or failed,
/// and at least until the `--duration` deadline) and the outcome.
fn finish(
    title: &str,
    load: &LoadSpec,
    measure_start: Instant,
    cluster: Option<&ClusterRun>,
    watched: Watched,
    results: Vec<WorkerResult>,
    spawn_error: Option<EngineError>,
) -> (TestResult, Option<EngineError>) {
    let mut result = TestResult::empty(title, load.rps, Outcome::Completed);
    result.rps_samples = watched.rps_samples;
    if let Some(mix) = &load.mix {
        result.commands = mix
            .commands
            .iter()
            .map(|c| CommandResult::new(&c.name))
            .collect();
    }
    let interrupted = watched.interrupted;
    let (last_settled, worker_fatal) = merge(&mut result, results);
    let fatal = spawn_error.or(worker_fatal);
    let now = Instant::now();
    // Requests still unanswered (a server that stopped answering, cut off by the grace after
    // --duration) mean the test lasted until now, not until its last reply.
    let end = if interrupted.is_some() || fatal.is_some() || result.unanswered > 0 {
        now
    } else {
        // Ran to its end: until its last request was answered or failed, and with --duration
        // at least until the deadline (a partition that never heals leaves no reply after it
        // began, yet the test went on: its throughput is over the test, not up to the partition).
        let deadline = match load.stop {
            Stop::After(d) => Some(measure_start + d),
            Stop::Requests(_) => None,
        };
        last_settled.max(deadline).unwrap_or(now).min(now)
    };
    result.elapsed = end.saturating_duration_since(measure_start);
    result.started_at = std::time::SystemTime::now().checked_sub(measure_start.elapsed());
    if let (Some(run), Some(stats)) = (cluster, result.cluster.as_mut()) {
        label_nodes(run, stats);
    }
    result.outcome = match (&fatal, interrupted) {
        (Some(_), _) => Outcome::Aborted,
        (None, Some(signal)) => Outcome::Interrupted(signal),
        (None, None) => Outcome::Completed,
    };
    (result, fatal)
}

/// The test's clock, started now: the start, the start of the measured phase (after
/// `--warmup`), and the `--duration` deadline.
fn clock(load: &LoadSpec) -> (Instant, Instant, Option<Instant>) {
    let start = Instant::now();
    let measure_start = start + load.warmup;
    let deadline = match load.stop {
        Stop::After(d) => Some(measure_start + d),
        Stop::Requests(_) => None,
    };
    (start, measure_start, deadline)
}

/// Where each connection goes: the server, or in cluster mode `-c` connections per serving node,
/// interleaved so that workers get a mix.
fn places(
    setup: &ConnSetup,
    load: &LoadSpec,
    cluster: Option<&ClusterRun>,
) -> Vec<(Target, Placement)> {
    let mut places: Vec<(Target, Placement)> = Vec::new();
    match cluster {
        None => {
            // A staircase ramp opens its first step here, the rest as the test goes (workers).
            let first = load.ramp.map_or(load.clients, |r| {
                r.start
                    .saturating_mul(load.workers.max(1) as u32)
                    .clamp(1, load.clients)
            });
            places.extend((0..first).map(|_| (setup.target.clone(), Placement::default())))
        }
        Some(run) => {
            let topo = run.shared.topology();
            let primaries = topo.primaries();
            let per_node: Vec<(Target, Placement)> = run
                .serving
                .iter()
                .map(|&node| {
                    let place = Placement {
                        node,
                        home: topo.first_slot(node).unwrap_or(0),
                        follow_primary: primaries.contains(&node),
                    };
                    (run.shared.target(node), place)
                })
                .collect();
            for _ in 0..load.clients {
                places.extend(per_node.iter().cloned());
            }
        }
    }
    places
}

/// Connects everything first (connect time is not part of the measured phase, as in the
/// reference), spreading connections round-robin over the workers (in groups of `group`). Stops at Ctrl-C
/// (`Interrupted`) or the first failure (`Aborted`). With memtier's connection start jitter,
/// each connect waits a pause drawn from the range first (the connects are made one after
/// another here, so the pauses add up over all connections, not per thread).
fn connect_all(
    places: Vec<(Target, Placement)>,
    workers: usize,
    group: usize,
    load: &LoadSpec,
    observer: &mut dyn Observer,
) -> Result<Vec<WorkerStreams>, (Outcome, Option<EngineError>)> {
    let mut per_worker: Vec<WorkerStreams> = (0..workers).map(|_| Vec::new()).collect();
    let mut jitter = Jitter::new(load.conn_start_jitter_us, load.seed);
    for (i, (target, place)) in places.into_iter().enumerate() {
        if observer.interrupted() {
            return Err((Outcome::Interrupted(observer.signal()), None));
        }
        jitter.pause();
        match target.connect_for_worker() {
            Ok(s) => per_worker[(i / group) % workers].push((s, place)),
            Err(e) => return Err((Outcome::Aborted, Some(e))),
        }
    }
    Ok(per_worker)
}

/// One poller per worker, and the wakers that interrupt its wait when the test is stopped.
fn event_loops(workers: usize) -> Result<(Vec<mio::Poll>, Vec<mio::Waker>), EngineError> {
    let mut polls = Vec::with_capacity(workers);
    let mut wakers = Vec::with_capacity(workers);
    for _ in 0..workers {
        let (p, w) = mio::Poll::new()
            .and_then(|p| {
                let w = mio::Waker::new(p.registry(), worker::WAKER)?;
                Ok((p, w))
            })
            .map_err(|e| EngineError::Other(format!("cannot create an event loop: {e}")))?;
        polls.push(p);
        wakers.push(w);
    }
    Ok((polls, wakers))
}

/// `-n` in whole units (`None` with `--duration`).
fn total_units(load: &LoadSpec, template: &Template) -> Option<u64> {
    match load.stop {
        Stop::Requests(n) => Some(n.div_ceil(u64::from(template.commands_per_unit.max(1)))),
        Stop::After(_) => None,
    }
}

/// Worker `id`'s share of `-n` in commands (`None` with `--duration`).
fn quota(
    load: &LoadSpec,
    template: &Template,
    id: usize,
    workers: usize,
    total_conns: u64,
) -> Option<u64> {
    match load.stop {
        // Split -n in proportion to each worker's connections; the first workers take
        // the remainder so the total is exact.
        // Split in whole units (a `;` sequence is sent whole), so the total is the
        // same as with one worker: -n rounded up to a whole number of units.
        Stop::Requests(n) => {
            let per_unit = u64::from(template.commands_per_unit.max(1));
            let units = quota_of(id as u64, workers as u64, total_conns, n.div_ceil(per_unit));
            Some(units.saturating_mul(per_unit))
        }
        Stop::After(_) => None,
    }
}

/// Adds every worker's figures to `result`; returns when the last measured request was answered
/// or failed, and the first worker's fatal error.
fn merge(
    result: &mut TestResult,
    results: Vec<WorkerResult>,
) -> (Option<Instant>, Option<EngineError>) {
    let mut fatal = None;
    let mut last_settled: Option<Instant> = None;
    for r in results {
        let rec = &r.recorder;
        result.add_recorded(rec);
        if let Some(c) = &r.cluster {
            result
                .cluster
                .get_or_insert_with(ClusterStats::default)
                .merge(c);
        }
        last_settled = last_settled.max(rec.last_reply).max(rec.last_failure);
        result.client_threads.push(r.cpu);
        result.client_delay.merge(&rec.rx_delay.waits);
        result.issued += r.issued;
        result.unanswered += rec.unanswered;
        result.reconnect_attempts += rec.reconnect_attempts;
        result.reconnects += rec.reconnects;
        result.reconnect_refusals += rec.reconnect_refusals;
        if fatal.is_none() {
            fatal = r.fatal;
        }
    }
    (last_settled, fatal)
}

/// Cluster: gives every node of the topology a row in the per-node figures, with its address
/// and role.
fn label_nodes(run: &ClusterRun, stats: &mut ClusterStats) {
    let labels = run.node_labels();
    while stats.nodes.len() < labels.len() {
        stats.nodes.push(NodeStats::new());
    }
    for (i, n) in stats.nodes.iter_mut().enumerate() {
        let (address, role) = match labels.get(i) {
            Some((a, r)) => (Some(a), *r),
            // A node past the topology (as before: named by nothing, a replica).
            None => (None, Role::Replica),
        };
        if let Some(a) = address {
            n.address.clone_from(a);
        }
        n.role = Some(role);
    }
}

/// Worker `w`'s share of `-n`: in proportion to its connections, the remainder going one each to
/// the first workers, so the shares add up to exactly `n`.
fn quota_of(w: u64, workers: u64, total_conns: u64, n: u64) -> u64 {
    let share = |w: u64| {
        (u128::from(n) * u128::from(conns_of(w, workers, total_conns)) / u128::from(total_conns))
            as u64
    };
    let assigned: u64 = (0..workers).map(share).sum();
    // Fewer than `workers` left over (each share lost less than one): one more each for the first.
    share(w) + even_part(n - assigned, w, workers).len
}

/// Connections of worker `w` under round-robin assignment of `total` connections.
fn conns_of(w: u64, workers: u64, total: u64) -> u64 {
    even_part(total, w, workers).len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_add_up_to_n_exactly() {
        for (workers, conns, n) in [
            (1, 50, 100_000),
            (3, 50, 100_001),
            (7, 10, 3),
            (2, 3, u64::MAX),
        ] {
            let total: u128 = (0..workers)
                .map(|w| u128::from(quota_of(w, workers, conns, n)))
                .sum();
            assert_eq!(
                total,
                u128::from(n),
                "{workers} workers, {conns} conns, n={n}"
            );
        }
    }

    #[test]
    fn round_robin_counts_add_up() {
        for total in 1..40u64 {
            for workers in 1..=total.min(7) {
                let sum: u64 = (0..workers).map(|w| conns_of(w, workers, total)).sum();
                assert_eq!(sum, total);
            }
        }
    }

    /// A worker that panics stops the others (which would otherwise run on: here, for ever)
    /// and the join turns the panic into the run's error, keeping the others' results.
    #[test]
    fn a_panicking_worker_stops_the_others_and_fails_the_run() {
        let stop = AtomicBool::new(false);
        let poll = mio::Poll::new().unwrap();
        let wakers = [mio::Waker::new(poll.registry(), mio::Token(0)).unwrap()];
        let (stop, wakers) = (&stop, &wakers[..]);
        let (results, error) = std::thread::scope(|scope| {
            let waiter = scope.spawn(move || {
                stopping_all_on_panic(stop, wakers, || {
                    let begun = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        // Bounded, so a broken build fails here instead of hanging.
                        assert!(begun.elapsed().as_secs() < 60, "never told to stop");
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    7
                })
            });
            let failing = scope.spawn(move || {
                stopping_all_on_panic(stop, wakers, || -> u32 { panic!("a check failed") })
            });
            join_workers(vec![waiter, failing])
        });
        assert_eq!(results, vec![7]);
        let line = error.expect("the panic is the run's error").to_string();
        assert!(
            line.contains("worker thread 1 stopped (a check failed)"),
            "{line}"
        );
    }
}

/// memtier's pause before each connection's set-up: uniform over `[min, max]` µs from a
/// seeded xorshift (set-up time, not the hot path).
struct Jitter {
    min: u64,
    span: u64,
    state: u64,
}

impl Jitter {
    fn new((min, max): (u64, u64), seed: u64) -> Self {
        Jitter {
            min,
            span: max.saturating_sub(min),
            state: seed | 1,
        }
    }

    /// The next pause in µs.
    fn next_us(&mut self) -> u64 {
        if self.span == 0 {
            return self.min;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.min + self.state % (self.span + 1)
    }

    fn pause(&mut self) {
        let us = self.next_us();
        if us > 0 {
            std::thread::sleep(std::time::Duration::from_micros(us));
        }
    }
}

#[cfg(test)]
mod jitter_tests {
    use super::Jitter;

    #[test]
    fn pauses_stay_in_the_range_and_vary() {
        let mut j = Jitter::new((100, 200), 42);
        let draws: Vec<u64> = (0..1000).map(|_| j.next_us()).collect();
        assert!(draws.iter().all(|d| (100..=200).contains(d)), "{draws:?}");
        assert!(draws.iter().any(|d| *d < 130) && draws.iter().any(|d| *d > 170));
        assert_eq!(Jitter::new((0, 0), 1).next_us(), 0);
        assert_eq!(Jitter::new((7, 7), 1).next_us(), 7);
    }
}
