//! One server watched during one test: a thread with its own control connection that takes an
//! `INFO` sample at the test's start, then once a second (aligned to the start), and a last one
//! when told to stop; `INFO commandstats` before and after.
//!
//! Rules: the measured connections are never used; nothing changes the server's state; a server
//! that stops answering costs at most [`IO_TIMEOUT`] per call (and per connect). The watch then
//! reconnects (AUTH again, as the first connection) on later sample times, after a doubling
//! wait capped at [`RETRY_MAX`], so figures resume after a restart; under `--sentinel` the
//! target follows the primary, so the reconnect reaches the new one (a primary switch also
//! makes the watch reconnect by itself). Samples are numbered by connection (`segment`):
//! intervals are never taken across a reconnect, so the seconds without an answer are missing,
//! not invented. Stopping is prompt (a condition variable, not a one-second sleep) and bounded
//! by [`STOP_WAIT`] even if the thread is stuck in a read.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::Target;
use crate::engine::control::ControlConn;

use super::commandstats::{self, CommandCounters};
use super::info::{Info, SAMPLE_SECTIONS, ServerInterval, ServerSample};
use super::{InfoError, fetch_info};

/// Read/write timeout of a watch connection: INFO answers in well under a millisecond on a
/// healthy server; one that takes a second is stalled, and the watch must not stall the run.
pub const IO_TIMEOUT: Duration = Duration::from_secs(1);
/// How long `stop` waits for the last sample and commandstats before giving up on them.
pub const STOP_WAIT: Duration = Duration::from_millis(2500);
/// Time between samples.
pub const PERIOD: Duration = Duration::from_secs(1);
/// The longest wait between two reconnect attempts of a watch that lost its server: the first
/// three attempts come one [`PERIOD`] apart (a restart takes seconds), then the waits double up
/// to this, so a server back after a restart has figures again within it.
pub const RETRY_MAX: Duration = Duration::from_secs(4);

/// How to reach one server for watching: the run's own address, TLS and AUTH.
#[derive(Clone, Debug)]
pub struct WatchTarget {
    /// `host:port` or the socket path, as the record shows it.
    pub address: String,
    pub target: Target,
    /// AUTH arguments (after the command name), as the run's control connection uses them.
    pub auth: Option<Vec<Vec<u8>>>,
}

impl WatchTarget {
    /// A connection with the short watch timeout (for the connect too).
    pub fn connect(&self) -> Result<ControlConn, InfoError> {
        let mut c =
            ControlConn::connect_auth_within(&self.target, self.auth.as_deref(), IO_TIMEOUT)
                .map_err(|e| InfoError::Failed(e.to_string()))?;
        c.set_timeout(IO_TIMEOUT)
            .map_err(|e| InfoError::Failed(e.to_string()))?;
        Ok(c)
    }
}

/// What watching one server during one test gave.
#[derive(Clone, Debug, Default)]
pub struct Watched {
    /// Where the watch is connected at the end (under `--sentinel`, the primary it followed).
    pub address: String,
    /// In time order; the first at the test's start, the last at its end (when the server kept
    /// answering). After a reconnect, `segment` goes up by one.
    pub samples: Vec<ServerSample>,
    pub commandstats_before: Option<Vec<CommandCounters>>,
    /// `None` when the watch reconnected during the test (the counters may have started again).
    pub commandstats_after: Option<Vec<CommandCounters>>,
    /// `INFO latencystats` at the end (cumulative: not a difference), unparsed; `None` when not
    /// read.
    pub latencystats: Option<String>,
    /// The server was not answering the watch at the end of the test: figures are partial.
    pub lost: bool,
    /// Times the watch lost the server and got it back during the test (the seconds between
    /// have no figures).
    pub gaps: u32,
    /// Commandstats read after each sample too ([`SampleFeed::follow_commandstats`]: a journal
    /// keeps them, so a killed test has the server's time per call); the latest here.
    pub follow_commandstats: bool,
    pub commandstats_latest: Option<Vec<CommandCounters>>,
}

/// The stop signal: a flag under a mutex, so the thread can sleep until the next sample time
/// and still wake at once.
type StopFlag = Arc<(Mutex<bool>, Condvar)>;

/// A running sampler; [`Sampler::stop`] ends it and returns what it saw.
pub struct Sampler {
    stop: StopFlag,
    shared: Arc<Mutex<Watched>>,
    done: Receiver<()>,
    handle: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Connects, reads commandstats and the first sample on the calling thread (so both are
    /// taken before the test starts), then samples on its own thread. `start` is the instant
    /// samples are aligned to. A server that cannot be reached now is tried again later.
    pub fn start(target: &WatchTarget, start: Instant) -> Sampler {
        let (tx, done) = mpsc::channel();
        let stop: StopFlag = Arc::new((Mutex::new(false), Condvar::new()));
        let mut watched = Watched {
            address: target.address.clone(),
            ..Watched::default()
        };
        let conn = target.connect().ok().and_then(|mut c| {
            watched.commandstats_before = fetch_info(&mut c, &["commandstats"])
                .ok()
                .map(|t| commandstats::parse(&t));
            let first = sample(&mut c, start)?;
            watched.samples.push(first);
            Some(c)
        });
        watched.lost = conn.is_none();
        let shared = Arc::new(Mutex::new(watched));
        let watch = Watch {
            target: target.clone(),
            epoch: target.target.epoch(),
            conn,
            segment: 0,
            failures: 0,
            retry_at: start + PERIOD,
            start,
        };
        let handle = {
            let (stop, shared) = (stop.clone(), shared.clone());
            thread::Builder::new()
                .name("respbench-watch".into())
                .spawn(move || {
                    watch.run(&stop, &shared);
                    let _ = tx.send(());
                })
                .ok()
        };
        Sampler {
            stop,
            shared,
            done,
            handle,
        }
    }

    /// A view of this sampler's figures as they come, for live metrics.
    pub fn feed(&self) -> SampleFeed {
        SampleFeed {
            address: lock(&self.shared).address.clone(),
            shared: self.shared.clone(),
        }
    }

    /// Stops sampling and returns the samples; waits at most [`STOP_WAIT`] for the last one.
    pub fn stop(mut self) -> Watched {
        {
            let (flag, cv) = &*self.stop;
            *lock(flag) = true;
            cv.notify_all();
        }
        if let Some(handle) = self.handle.take() {
            if self.done.recv_timeout(STOP_WAIT).is_ok() {
                let _ = handle.join();
            } else {
                // Stuck in a read: leave it to its own timeout, keep what it has.
                lock(&self.shared).lost = true;
            }
        }
        std::mem::take(&mut *lock(&self.shared))
    }
}

/// A running sampler's latest figures, read under its lock without I/O (`crate::live` serves
/// them between samples; nothing waits on the server).
#[derive(Clone, Debug)]
pub struct SampleFeed {
    /// `host:port` or the socket path, as the record shows it.
    pub address: String,
    shared: Arc<Mutex<Watched>>,
}

impl SampleFeed {
    /// The last interval between two samples of one watch connection (`None` before the second
    /// sample, or once the sampler stopped).
    pub fn latest(&self) -> Option<ServerInterval> {
        let w = lock(&self.shared);
        match w.samples.as_slice() {
            [.., a, b] if a.segment == b.segment => Some(ServerInterval::between(a, b)),
            _ => None,
        }
    }

    /// Reads commandstats and latencystats after each sample from now on (for the journal; one
    /// more `INFO` a second on the watch connection).
    pub fn follow_commandstats(&self) {
        lock(&self.shared).follow_commandstats = true;
    }

    /// Commandstats at the test's start and the latest read, and the latest latencystats lines
    /// ([`SampleFeed::follow_commandstats`]); `None` where not read (commandstats after a
    /// reconnect too: the counters may have started again).
    pub fn commandstats(&self) -> FollowedStats {
        let w = lock(&self.shared);
        FollowedStats {
            before: w.commandstats_before.clone(),
            latest: w.commandstats_latest.clone().filter(|_| w.gaps == 0),
            latencystats: w.latencystats.clone(),
        }
    }

    /// The samples taken so far from the `from`-th on (the journal keeps each once).
    pub fn samples_from(&self, from: usize) -> Vec<ServerSample> {
        lock(&self.shared)
            .samples
            .get(from..)
            .map(<[ServerSample]>::to_vec)
            .unwrap_or_default()
    }
}

/// What [`SampleFeed::commandstats`] gives.
#[derive(Clone, Debug, Default)]
pub struct FollowedStats {
    pub before: Option<Vec<CommandCounters>>,
    pub latest: Option<Vec<CommandCounters>>,
    pub latencystats: Option<String>,
}

/// The sampling thread's state.
struct Watch {
    target: WatchTarget,
    /// The followed primary's epoch when `conn` was opened (`--sentinel`): a switch since makes
    /// the watch reconnect, to the new primary.
    epoch: Option<u64>,
    /// `None` while the server is lost.
    conn: Option<ControlConn>,
    /// The current connection's number (see [`ServerSample::segment`]).
    segment: u32,
    /// Reconnect attempts failed in a row.
    failures: u32,
    /// When the next reconnect attempt may be made.
    retry_at: Instant,
    start: Instant,
}

/// The journal's read after a sample (`SampleFeed::follow_commandstats`): one request for both
/// the server's time per call and its own percentiles (cumulative; kept as their lines only, as
/// the stop's read would give them).
// Never inlined: once a second while a journal is written, and `bench/journal-cost.sh` counts
// it by name.
#[inline(never)]
fn follow_stats(c: &mut ControlConn, shared: &Mutex<Watched>) {
    let text = fetch_info(c, &["commandstats", "latencystats"]).ok();
    let mut w = lock(shared);
    w.commandstats_latest = text.as_deref().map(commandstats::parse);
    w.latencystats = text.map(|t| {
        t.lines()
            .filter(|l| l.starts_with("latency_percentiles_usec_"))
            .map(|l| format!("{l}\r\n"))
            .collect()
    });
}

impl Watch {
    /// A sample at every `start + k·PERIOD` until stopped, then a last sample and the
    /// commandstats after.
    fn run(mut self, stop: &StopFlag, shared: &Mutex<Watched>) {
        let mut next = self.start + PERIOD;
        loop {
            let stopped = wait_until(stop, next);
            if self.target.target.epoch() != self.epoch {
                self.conn = None; // the primary moved: watch the new one
            }
            if self.conn.is_none() && !stopped && Instant::now() >= self.retry_at {
                self.reconnect(shared);
            }
            let taken = self.conn.as_mut().and_then(|c| sample(c, self.start));
            let sampled = taken.is_some();
            let mut w = lock(shared);
            match taken {
                Some(mut s) => {
                    s.segment = self.segment;
                    w.samples.push(s);
                    w.lost = false;
                }
                None => {
                    if self.conn.take().is_some() {
                        self.failures = 0;
                        self.retry_at = Instant::now();
                    }
                    w.lost = true;
                }
            }
            // Only after a sample that worked: a server that stopped answering is not asked again.
            let follow = w.follow_commandstats && self.segment == 0 && sampled;
            drop(w);
            if follow
                && !stopped
                && let Some(c) = self.conn.as_mut()
            {
                follow_stats(c, shared);
            }
            if stopped {
                // The counters may have started again after a reconnect: no difference then.
                if self.segment == 0
                    && let Some(c) = self.conn.as_mut()
                {
                    let after = fetch_info(c, &["commandstats"])
                        .ok()
                        .map(|t| commandstats::parse(&t));
                    lock(shared).commandstats_after = after;
                }
                // Cumulative percentiles: true after a reconnect too. Servers before Redis 7
                // answer an empty section.
                if let Some(c) = self.conn.as_mut() {
                    let latency = fetch_info(c, &["latencystats"]).ok();
                    lock(shared).latencystats = latency;
                }
                return;
            }
            // A slow sample skips the slots it missed rather than bunching up.
            while next <= Instant::now() {
                next += PERIOD;
            }
        }
    }

    /// One reconnect attempt; on failure, the next one after 1, 1, 1, 2, 4 … periods (up to
    /// [`RETRY_MAX`]).
    fn reconnect(&mut self, shared: &Mutex<Watched>) {
        let epoch = self.target.target.epoch();
        match self.target.connect() {
            Ok(c) => {
                self.conn = Some(c);
                self.epoch = epoch;
                self.segment += 1;
                self.failures = 0;
                let mut w = lock(shared);
                w.gaps += 1;
                w.address = self.target.target.display();
            }
            Err(_) => {
                let wait = PERIOD.saturating_mul(1 << self.failures.saturating_sub(2).min(8));
                self.failures += 1;
                self.retry_at = Instant::now() + wait.min(RETRY_MAX);
            }
        }
    }
}

/// Sleeps until `next` or until stopped; whether stopped.
fn wait_until(stop: &StopFlag, next: Instant) -> bool {
    let (flag, cv) = &**stop;
    let mut stopped = lock(flag);
    while !*stopped {
        let now = Instant::now();
        if now >= next {
            break;
        }
        stopped = cv
            .wait_timeout(stopped, next - now)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    *stopped
}

/// One `INFO` sample, timestamped from `start`; `None` if the server did not answer with one.
fn sample(conn: &mut ControlConn, start: Instant) -> Option<ServerSample> {
    let text = fetch_info(conn, &SAMPLE_SECTIONS).ok()?;
    ServerSample::from_info(&Info::new(&text), start.elapsed())
}

/// Locks, ignoring poisoning (a panicked sampler thread leaves plain data behind).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A fake server on loopback: answers `answers` INFO commands (a CPU sample, or
    /// commandstats), then stops answering while keeping the connection open.
    fn fake_server(answers: usize) -> (WatchTarget, JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            serve(s, answers, false);
        });
        (target(port), handle)
    }

    fn target(port: u16) -> WatchTarget {
        WatchTarget {
            address: format!("127.0.0.1:{port}"),
            target: Target::tcp("127.0.0.1", port).unwrap(),
            auth: None,
        }
    }

    /// A "restarting" server: the first connection gets `answers` replies and is then closed;
    /// the next ones are answered until the client goes away (the CPU figure starts again).
    fn restarting_server(answers: usize) -> WatchTarget {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        thread::spawn(move || {
            let (first, _) = listener.accept().unwrap();
            serve(first, answers, true);
            // Bounded: a few reconnects at most in a test.
            for _ in 0..8 {
                let Ok((s, _)) = listener.accept() else {
                    return;
                };
                thread::spawn(move || serve(s, usize::MAX, false));
            }
        });
        target(port)
    }

    /// Answers `answers` INFO commands on `s`, then (`close`) closes it, or reads without
    /// answering until the client closes it.
    fn serve(mut s: std::net::TcpStream, answers: usize, close: bool) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut answered = 0;
        loop {
            while let Ok(Some((v, used))) = resp::Value::parse(&buf) {
                buf.drain(..used);
                if answered == answers {
                    continue;
                }
                answered += 1;
                let commandstats = matches!(&v, resp::Value::Array(args)
                    if args.iter().any(|a| a.as_str() == Some("commandstats")));
                let text = if commandstats {
                    format!("cmdstat_set:calls={answered},usec=7,usec_per_call=7.00\r\n")
                } else {
                    format!("used_cpu_user:{answered}.0\r\nused_cpu_sys:0.5\r\n")
                };
                let reply = format!("${}\r\n{text}\r\n", text.len());
                if s.write_all(reply.as_bytes()).is_err() || (close && answered == answers) {
                    return;
                }
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    #[test]
    fn a_lost_server_is_reconnected_and_the_gap_stays_a_gap() {
        // commandstats and the first sample on the first connection, then it is closed.
        let target = restarting_server(2);
        let sampler = Sampler::start(&target, Instant::now());
        let back = |w: &Watched| w.gaps >= 1 && w.samples.iter().any(|s| s.segment == 1);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !back(&lock(&sampler.shared)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let w = sampler.stop();
        assert!(back(&w), "{w:?}");
        assert!(!w.lost, "answering at the end: {w:?}");
        assert_eq!(w.samples[0].segment, 0);
        assert!(w.samples.windows(2).all(|p| p[0].segment <= p[1].segment));
        assert!(w.commandstats_before.is_some());
        assert!(w.commandstats_after.is_none(), "not across a reconnect");
        // The counters started again on the new connection: no interval spans the two.
        let series = crate::watch::ServerInterval::series(&w.samples);
        let first_back = w.samples.iter().position(|s| s.segment == 1).unwrap();
        assert_eq!(series.len(), w.samples.len() - 2, "one pair fewer: {w:?}");
        assert!(
            series
                .iter()
                .all(|i| i.t != w.samples[first_back - 1].at.as_secs_f64())
        );
    }

    #[test]
    fn stop_takes_a_last_sample_and_commandstats() {
        let (target, server) = fake_server(usize::MAX);
        let sampler = Sampler::start(&target, Instant::now());
        let w = sampler.stop();
        assert!(!w.lost);
        assert_eq!(w.address, target.address);
        // commandstats (1), first sample (2), last sample (3), commandstats (4).
        assert_eq!(w.samples.len(), 2, "{w:?}");
        assert_eq!(w.samples[0].cpu_user, 2.0);
        assert_eq!(w.samples[1].cpu_user, 3.0);
        assert!(w.samples[0].at <= w.samples[1].at);
        assert_eq!(w.commandstats_before.unwrap()[0].calls, 1);
        assert_eq!(w.commandstats_after.unwrap()[0].calls, 4);
        drop(server);
    }

    #[test]
    fn a_server_that_stops_answering_is_given_up_quietly() {
        // Answers the commandstats and the first sample, then nothing.
        let (target, _server) = fake_server(2);
        let sampler = Sampler::start(&target, Instant::now());
        let w = sampler.stop();
        assert!(w.lost, "{w:?}");
        assert_eq!(w.samples.len(), 1);
        assert!(w.commandstats_after.is_none());
    }

    #[test]
    fn an_unreachable_server_gives_no_data() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = WatchTarget {
            address: format!("127.0.0.1:{port}"),
            target: Target::tcp("127.0.0.1", port).unwrap(),
            auth: None,
        };
        let w = Sampler::start(&target, Instant::now()).stop();
        assert!(w.lost);
        assert!(w.samples.is_empty());
    }
}
