//! Crash and hang detection. A closed connection is not a crash: the server closes a client on a
//! protocol error (and malformed mode provokes that on purpose), and `CLIENT KILL`-like commands
//! exist. So the decision comes from a watch connection of its own that sends `PING` every
//! 100 ms, and, when that fails, from fresh connects: refused (or reset) means the server is gone,
//! connected but no reply to `PING` within the hang timeout means it hangs, a `PONG` (or any
//! reply: an error such as `-BUSY` is an answer too) means it is alive and only a connection was
//! lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::ConnSetup;
use crate::engine::control::ControlConn;

/// How often the watch pings.
pub const PING_EVERY: Duration = Duration::from_millis(100);
/// How long a fresh connect may take before it counts as refused.
const CONNECT_WITHIN: Duration = Duration::from_secs(2);

/// What the server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    Alive,
    /// Gone: connects are refused or reset (the reason).
    Crashed(String),
    /// Connected, but no reply to `PING` within the hang timeout.
    Hung(String),
}

impl Health {
    pub fn is_alive(&self) -> bool {
        matches!(self, Health::Alive)
    }
}

/// A connection with the run's prefix (AUTH, SELECT, HELLO) sent and answered.
pub fn connect(setup: &ConnSetup, timeout: Duration) -> Result<ControlConn, String> {
    let mut c = ControlConn::connect_within(&setup.target, CONNECT_WITHIN.min(timeout))
        .map_err(|e| e.to_string())?;
    c.set_timeout(timeout).map_err(|e| e.to_string())?;
    if let Some((_, e)) = c.send_prefix(setup).map_err(|e| e.to_string())? {
        return Err(e);
    }
    Ok(c)
}

/// Whether the server answers a fresh connection's `PING` within `hang`.
pub fn probe(setup: &ConnSetup, hang: Duration) -> Health {
    let mut c = match connect(setup, hang) {
        Ok(c) => c,
        Err(e) if e.contains("no reply within") => return Health::Hung(e),
        Err(e) => return Health::Crashed(e),
    };
    match c.call(&[b"PING"]) {
        Ok(_) => Health::Alive,
        Err(e) => {
            let e = e.to_string();
            match e.contains("no reply within") {
                true => Health::Hung(format!("no reply to PING within {} s", hang.as_secs_f64())),
                false => Health::Crashed(e),
            }
        }
    }
}

/// The watch thread and its verdict.
pub struct Watch {
    stop: Arc<AtomicBool>,
    verdict: Arc<Mutex<Option<Health>>>,
    handle: Option<JoinHandle<()>>,
}

impl Watch {
    /// Starts watching; `found` is set when the server crashed or hung (the clients stop on it).
    pub fn start(setup: Arc<ConnSetup>, hang: Duration, found: Arc<AtomicBool>) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let verdict = Arc::new(Mutex::new(None));
        let (s, v) = (stop.clone(), verdict.clone());
        let handle = thread::Builder::new()
            .name("fuzz-watch".into())
            .spawn(move || watch_loop(&setup, hang, &s, &v, &found))
            .ok();
        Watch {
            stop,
            verdict,
            handle,
        }
    }

    /// The verdict so far (`None`: nothing found).
    pub fn verdict(&self) -> Option<Health> {
        self.verdict
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the thread and returns the verdict.
    pub fn finish(mut self) -> Option<Health> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.verdict()
    }
}

fn watch_loop(
    setup: &ConnSetup,
    hang: Duration,
    stop: &AtomicBool,
    verdict: &Mutex<Option<Health>>,
    found: &AtomicBool,
) {
    let mut conn: Option<ControlConn> = None;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let ok = match conn.as_mut() {
            Some(c) => c.call(&[b"PING"]).is_ok(),
            None => false,
        };
        if !ok {
            match probe(setup, hang) {
                Health::Alive => conn = connect(setup, hang).ok(),
                bad => {
                    *verdict.lock().unwrap_or_else(|e| e.into_inner()) = Some(bad);
                    found.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
        if let Some(rest) = PING_EVERY.checked_sub(started.elapsed()) {
            thread::sleep(rest);
        }
    }
}
