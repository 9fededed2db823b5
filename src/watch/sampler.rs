//! One server watched during one test: a thread with its own control connection that takes an
//! `INFO` sample at the test's start, then once a second (aligned to the start), and a last one
//! when told to stop; `INFO commandstats` before and after.
//!
//! Rules: the measured connections are never used; nothing changes the server's state; a server
//! that stops answering costs at most [`IO_TIMEOUT`] per call and the sampler then gives up
//! quietly (the run goes on with the samples taken so far); stopping is prompt (a condition
//! variable, not a one-second sleep) and bounded by [`STOP_WAIT`] even if the thread is stuck in
//! a read.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::Target;
use crate::engine::control::ControlConn;

use super::commandstats::{self, CommandCounters};
use super::info::{Info, SAMPLE_SECTIONS, ServerSample};
use super::{InfoError, fetch_info};

/// Read/write timeout of a watch connection: INFO answers in well under a millisecond on a
/// healthy server; one that takes a second is stalled, and the watch must not stall the run.
pub const IO_TIMEOUT: Duration = Duration::from_secs(1);
/// How long `stop` waits for the last sample and commandstats before giving up on them.
pub const STOP_WAIT: Duration = Duration::from_millis(2500);
/// Time between samples.
pub const PERIOD: Duration = Duration::from_secs(1);

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
    /// A connection with the short watch timeout.
    pub fn connect(&self) -> Result<ControlConn, InfoError> {
        let mut c = ControlConn::connect_auth(&self.target, self.auth.as_deref())
            .map_err(|e| InfoError::Failed(e.to_string()))?;
        c.set_timeout(IO_TIMEOUT)
            .map_err(|e| InfoError::Failed(e.to_string()))?;
        Ok(c)
    }
}

/// What watching one server during one test gave.
#[derive(Clone, Debug, Default)]
pub struct Watched {
    pub address: String,
    /// In time order; the first at the test's start, the last at its end (when the server kept
    /// answering).
    pub samples: Vec<ServerSample>,
    pub commandstats_before: Option<Vec<CommandCounters>>,
    pub commandstats_after: Option<Vec<CommandCounters>>,
    /// The server stopped answering (or refused) during the test: figures are partial.
    pub lost: bool,
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
    /// samples are aligned to. A server that cannot be watched gives a sampler with no data.
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
        let handle = conn.and_then(|conn| {
            let (stop, shared) = (stop.clone(), shared.clone());
            thread::Builder::new()
                .name("respbench-watch".into())
                .spawn(move || {
                    run(conn, start, &stop, &shared);
                    let _ = tx.send(());
                })
                .ok()
        });
        Sampler {
            stop,
            shared,
            done,
            handle,
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

/// The thread: a sample at every `start + k·PERIOD` until stopped, then a last sample and the
/// commandstats after.
fn run(mut conn: ControlConn, start: Instant, stop: &StopFlag, shared: &Mutex<Watched>) {
    let mut next = start + PERIOD;
    loop {
        let stopped = {
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
        };
        let Some(s) = sample(&mut conn, start) else {
            lock(shared).lost = true;
            return;
        };
        lock(shared).samples.push(s);
        if stopped {
            let after = fetch_info(&mut conn, &["commandstats"])
                .ok()
                .map(|t| commandstats::parse(&t));
            lock(shared).commandstats_after = after;
            return;
        }
        // A slow sample skips the slots it missed rather than bunching up.
        while next <= Instant::now() {
            next += PERIOD;
        }
    }
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
            let (mut s, _) = listener.accept().unwrap();
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
                    s.write_all(reply.as_bytes()).unwrap();
                }
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        });
        let target = WatchTarget {
            address: format!("127.0.0.1:{port}"),
            target: Target::tcp("127.0.0.1", port).unwrap(),
            auth: None,
        };
        (target, handle)
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
