//! The watcher thread: subscribed to `+switch-master` on one Sentinel, it moves the followed
//! primary when a failover names a new one, and notes when.
//!
//! Bounded: every read waits at most [`POLL`] before the stop flag is looked at again; a lost
//! Sentinel is replaced by the next one in the list after [`RETRY`]; [`Watcher::stop`] waits at
//! most [`STOP_WAIT`] for the thread (a connect under way may take longer: the thread is then
//! left to end by itself, holding nothing the run needs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use resp::Value;

use super::Sentinels;
use super::client::SentinelConn;
use crate::engine::{FollowedPrimary, PrimaryAddr};

/// How long one read of messages waits before the stop flag is checked.
const POLL: Duration = Duration::from_millis(200);
/// The pause before trying the next Sentinel after one failed.
const RETRY: Duration = Duration::from_millis(500);
/// How long [`Watcher::stop`] waits for the thread.
const STOP_WAIT: Duration = Duration::from_secs(3);
/// The channel Sentinels announce a new primary on.
const CHANNEL: &str = "+switch-master";

/// One failover as the watcher saw it.
#[derive(Clone, Debug)]
pub struct Switch {
    /// Wall clock, for the record.
    pub at: SystemTime,
    /// Monotonic, to place it in a test.
    pub when: Instant,
    pub from: String,
    pub to: String,
}

/// The running watcher.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    switches: Arc<Mutex<Vec<Switch>>>,
}

impl Watcher {
    /// Starts watching, first on Sentinel `first` (the one that answered discovery).
    pub fn start(cfg: Sentinels, first: usize, primary: Arc<FollowedPrimary>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let switches = Arc::new(Mutex::new(Vec::new()));
        let state = Loop {
            cfg,
            primary,
            stop: stop.clone(),
            switches: switches.clone(),
        };
        let handle = thread::Builder::new()
            .name("sentinel-watch".into())
            .spawn(move || state.run(first))
            .ok();
        Self {
            stop,
            handle,
            switches,
        }
    }

    /// The switches seen so far, from the `from`-th on.
    pub fn switches_since(&self, from: usize) -> Vec<Switch> {
        let all = self.switches.lock().unwrap_or_else(PoisonError::into_inner);
        all.get(from..).map(<[Switch]>::to_vec).unwrap_or_default()
    }

    /// Stops the thread (bounded: see the module's note).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let deadline = Instant::now() + STOP_WAIT;
            while !h.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread's state.
struct Loop {
    cfg: Sentinels,
    primary: Arc<FollowedPrimary>,
    stop: Arc<AtomicBool>,
    switches: Arc<Mutex<Vec<Switch>>>,
}

impl Loop {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Watches through one Sentinel after another until stopped.
    fn run(self, first: usize) {
        let n = self.cfg.nodes.len().max(1);
        let mut i = first % n;
        while !self.stopped() {
            // An error only means "try the next Sentinel": the run goes on with the primary it
            // has, and the record shows no switch that was not seen.
            let _ = self.watch_one(i);
            i = (i + 1) % n;
            let until = Instant::now() + RETRY;
            while !self.stopped() && Instant::now() < until {
                thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Subscribes on Sentinel `i` and handles its messages until it fails or the run ends.
    fn watch_one(&self, i: usize) -> Result<(), String> {
        let (host, port) = &self.cfg.nodes[i];
        let mut conn = SentinelConn::open(host, *port, self.cfg.auth.as_deref())?;
        // The primary may have moved while no Sentinel was watched (or before the first
        // subscription): ask first, so no switch between discovery and now is missed.
        if let Ok((h, p)) = super::ask(&mut conn, &self.cfg.name) {
            self.moved_to(&h, p);
        }
        conn.send(&["SUBSCRIBE", CHANNEL])?;
        conn.set_timeout(POLL)?;
        while !self.stopped() {
            if let Some(v) = conn.next()? {
                self.on_message(&v);
            }
        }
        Ok(())
    }

    /// `message +switch-master "<name> <old ip> <old port> <new ip> <new port>"`.
    fn on_message(&self, v: &Value) {
        let (Value::Array(items) | Value::Push(items)) = v else {
            return;
        };
        let [kind, channel, payload] = items.as_slice() else {
            return;
        };
        if kind.as_str() != Some("message") || channel.as_str() != Some(CHANNEL) {
            return;
        }
        let Some(text) = payload.as_str() else {
            return;
        };
        if let Some((host, port)) = parse_switch(text, &self.cfg.name) {
            self.moved_to(host, port);
        }
    }

    /// Moves the followed primary and notes the switch, unless it is already there.
    fn moved_to(&self, host: &str, port: u16) {
        let Ok(to) = PrimaryAddr::resolve(host, port) else {
            return;
        };
        let from = self.primary.current().display;
        let to_display = to.display.clone();
        if self.primary.set(to) {
            let switch = Switch {
                at: SystemTime::now(),
                when: Instant::now(),
                from,
                to: to_display,
            };
            self.switches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(switch);
        }
    }
}

/// The new address in a `+switch-master` payload, when it is about the primary named `name`.
fn parse_switch<'a>(text: &'a str, name: &str) -> Option<(&'a str, u16)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        [n, _old_host, _old_port, new_host, new_port] if *n == name => {
            Some((new_host, new_port.parse().ok()?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_message_names_the_new_primary_of_our_name_only() {
        assert_eq!(
            parse_switch("mymaster 127.0.0.1 7000 127.0.0.1 7001", "mymaster"),
            Some(("127.0.0.1", 7001))
        );
        assert_eq!(
            parse_switch("other 127.0.0.1 7000 127.0.0.1 7001", "mymaster"),
            None
        );
        assert_eq!(parse_switch("mymaster 127.0.0.1 7000", "mymaster"), None);
        assert_eq!(
            parse_switch("mymaster a 1 b notaport", "mymaster"),
            None,
            "a bad port is ignored, not a move"
        );
    }
}
