//! The reducer: delta debugging (Zeller's ddmin) of the fuzz log down to a short sequence of
//! entries that still crashes or hangs the server. Each attempt starts from a fresh server —
//! `SHUTDOWN NOSAVE` to the one running (it was started by `--fuzz-restart`, or it is the one that
//! just died), then the user's restart command — and replays the candidate entries in their log
//! order, each on its own client's connection (so a crash that needs command A on one client and
//! B on another, in that order, is kept as such), malformed framing on a connection of its own.
//! Then a fresh connect decides, as the watch does, whether the server is gone or hangs.
//!
//! Bounded: at most `--fuzz-reduce-attempts` replays and `--fuzz-reduce-time`; when a bound is
//! hit the smallest reproducer found so far is the answer (and says it may not be minimal).

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::Say;
use super::client::send_raw;
use super::watch::{Health, connect, probe};
use crate::engine::ConnSetup;
use crate::engine::control::ControlConn;
use crate::trace::{Entry, Payload, Reader};
use crate::workload::split::even_part;

/// How long a restarted server may take to answer `PING`.
const START_WITHIN: Duration = Duration::from_secs(10);
/// How long a stopped or crashed server may take to go away (a crash report with its memory
/// test takes seconds).
const STOP_WITHIN: Duration = Duration::from_secs(30);
/// Commands written before their replies are read: one, as the fuzz clients sent them (a server
/// may behave differently on a pipeline: `SCRIPT DEBUG` refuses to run inside one).
const PIPELINE: usize = 1;
/// The most entries the reducer reads from a log.
const MAX_ENTRIES: usize = 5_000_000;

/// The reducer's settings.
pub struct Reducer {
    pub setup: Arc<ConnSetup>,
    pub restart: String,
    pub hang: Duration,
    pub max_attempts: u32,
    pub max_time: Duration,
    pub say: Say,
    /// Ctrl-C: the reducer stops as at a bound, with what it found so far.
    pub interrupted: Arc<std::sync::atomic::AtomicBool>,
    /// Processes the restart command started (reaped when they exit).
    children: Vec<Child>,
    attempts: u32,
    started: Instant,
}

/// What the reducer found.
#[derive(Debug)]
pub struct Reduced {
    /// The smallest reproducer found (empty: the full log did not reproduce).
    pub entries: Vec<Entry>,
    /// Entries in the log.
    pub from: usize,
    pub attempts: u32,
    pub elapsed: Duration,
    /// A bound was hit: `entries` is the smallest found so far, maybe not minimal.
    pub bounded: bool,
    /// How the reproducer breaks the server.
    pub health: Option<Health>,
}

/// Reads every entry of a trace (bounded by [`MAX_ENTRIES`]).
pub fn read_log(path: &Path) -> Result<Vec<Entry>, String> {
    let mut reader = Reader::open(path).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    loop {
        let mut e = Entry::empty();
        match reader.next_into(&mut e) {
            Ok(true) if out.len() < MAX_ENTRIES => out.push(e),
            Ok(true) => return Err(format!("more than {MAX_ENTRIES} entries")),
            Ok(false) => return Ok(out),
            // A log cut short by the crash: what was written is what counts.
            Err(crate::trace::TraceError::Truncated { .. }) => return Ok(out),
            Err(e) => return Err(e.to_string()),
        }
    }
}

impl Reducer {
    pub fn new(
        setup: Arc<ConnSetup>,
        restart: String,
        hang: Duration,
        say: Say,
        interrupted: Arc<std::sync::atomic::AtomicBool>,
    ) -> Reducer {
        Reducer {
            setup,
            restart,
            hang,
            max_attempts: 200,
            max_time: Duration::from_secs(300),
            say,
            interrupted,
            children: Vec::new(),
            attempts: 0,
            started: Instant::now(),
        }
    }

    fn out_of_bounds(&self) -> bool {
        self.attempts >= self.max_attempts
            || self.started.elapsed() >= self.max_time
            || self.interrupted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Reduces `log` (in log order) to a minimal reproducer, within the bounds.
    pub fn reduce(&mut self, log: Vec<Entry>) -> Result<Reduced, String> {
        self.started = Instant::now();
        let from = log.len();
        let all: Vec<usize> = (0..log.len()).collect();
        let full = self.attempt(&log, &all)?;
        if full.is_alive() {
            let _ = self.fresh_server();
            return Ok(self.result(Vec::new(), from, false, None));
        }
        let mut health = full;
        // A restart that fails mid-way ends the reduction like a bound: the smallest reproducer
        // found so far is the answer.
        let mut failed = false;
        let mut best = match self.bisect(&log, &mut health) {
            Ok(b) => b,
            Err(e) => {
                self.say.error(&format!("reducer stopped: {e}"));
                failed = true;
                (0..log.len()).collect()
            }
        };
        let mut n: u64 = 2;
        while !failed && best.len() >= 2 && !self.out_of_bounds() {
            match self.one_round(&log, &best, n, &mut health) {
                Ok(Some((smaller, next_n))) => {
                    best = smaller;
                    n = next_n;
                }
                Ok(None) if n >= best.len() as u64 => break,
                Ok(None) => n = (n * 2).min(best.len() as u64),
                Err(e) => {
                    self.say.error(&format!("reducer stopped: {e}"));
                    failed = true;
                }
            }
        }
        let bounded = (failed || self.out_of_bounds()) && best.len() >= 2;
        let entries = best.iter().map(|&i| log[i].clone()).collect();
        // Leave a live server behind, as found before the crash.
        let _ = self.fresh_server();
        Ok(self.result(entries, from, bounded, Some(health)))
    }

    /// The cheap first pass, for a long log: the crash is caused by the last entries (each
    /// client's last few: the clients stop within moments of it) together with a few earlier
    /// ones. With that tail kept, the earliest prefix of the rest that still breaks the server is
    /// found by bisection, its last entry is kept, and the search repeats on what lies before
    /// it, until the kept entries and the tail break the server on their own. Each bisection
    /// replays prefixes that halve, so the whole pass replays about twice the log, where plain
    /// delta debugging would replay it many times over for a culprit of two entries. Returns the
    /// smallest set known to break the server (the whole log if a bound cut the pass short).
    fn bisect(&mut self, log: &[Entry], health: &mut Health) -> Result<Vec<usize>, String> {
        let clients: std::collections::HashSet<&str> =
            log.iter().map(|e| e.client.as_str()).collect();
        let k = (2 * clients.len()).clamp(1, log.len());
        let body_len = log.len() - k;
        let tail: Vec<usize> = (body_len..log.len()).collect();
        let mut found: Vec<usize> = Vec::new();
        let mut hi = body_len;
        let join = |prefix: usize, found: &[usize]| -> Vec<usize> {
            let mut v: Vec<usize> = (0..prefix).chain(found.iter().copied()).collect();
            v.sort_unstable();
            v.extend(&tail);
            v
        };
        loop {
            if self.out_of_bounds() {
                return Ok(join(hi, &found));
            }
            let h = self.attempt(log, &join(0, &found))?;
            if !h.is_alive() {
                *health = h;
                return Ok(join(0, &found));
            }
            if hi == 0 {
                // Not monotone (the tail alone does not break it): leave it to delta debugging.
                return Ok((0..log.len()).collect());
            }
            // body[0..lo] ∪ found ∪ tail survives, body[0..hi] ∪ found ∪ tail breaks.
            let mut lo = 0;
            while hi - lo > 1 {
                if self.out_of_bounds() {
                    return Ok(join(hi, &found));
                }
                let mid = lo + (hi - lo) / 2;
                let h = self.attempt(log, &join(mid, &found))?;
                match h.is_alive() {
                    true => lo = mid,
                    false => {
                        *health = h;
                        hi = mid;
                    }
                }
            }
            found.push(hi - 1);
            hi -= 1;
        }
    }

    fn result(
        &self,
        entries: Vec<Entry>,
        from: usize,
        bounded: bool,
        health: Option<Health>,
    ) -> Reduced {
        Reduced {
            entries,
            from,
            attempts: self.attempts,
            elapsed: self.started.elapsed(),
            bounded,
            health,
        }
    }

    /// One ddmin round at granularity `n`: a part that still fails, else a complement; the new
    /// candidate and granularity, or `None` when neither fails.
    fn one_round(
        &mut self,
        log: &[Entry],
        best: &[usize],
        n: u64,
        health: &mut Health,
    ) -> Result<Option<(Vec<usize>, u64)>, String> {
        let total = best.len() as u64;
        let part = |i: u64| {
            let p = even_part(total, i, n);
            (p.start as usize, (p.start + p.len) as usize)
        };
        for i in 0..n {
            if self.out_of_bounds() {
                return Ok(None);
            }
            let (a, b) = part(i);
            let subset = best[a..b].to_vec();
            let h = self.attempt(log, &subset)?;
            if !h.is_alive() {
                *health = h;
                return Ok(Some((subset, 2)));
            }
        }
        if n == 2 {
            return Ok(None);
        }
        for i in 0..n {
            if self.out_of_bounds() {
                return Ok(None);
            }
            let (a, b) = part(i);
            let subset: Vec<usize> = best[..a].iter().chain(&best[b..]).copied().collect();
            let h = self.attempt(log, &subset)?;
            if !h.is_alive() {
                *health = h;
                return Ok(Some((subset, (n - 1).max(2))));
            }
        }
        Ok(None)
    }

    /// Replays `subset` of `log` against a fresh server: how the server is afterwards.
    fn attempt(&mut self, log: &[Entry], subset: &[usize]) -> Result<Health, String> {
        self.attempts += 1;
        self.fresh_server()?;
        let health = self.replay(log, subset);
        self.say.debug(&format!(
            "reducer attempt {}: {} entries -> {:?}",
            self.attempts,
            subset.len(),
            health
        ));
        Ok(health)
    }

    /// Replays in log order, one command at a time on its client's connection.
    fn replay(&mut self, log: &[Entry], subset: &[usize]) -> Health {
        let mut conns: HashMap<&str, ControlConn> = HashMap::new();
        let mut i = 0;
        let mut bytes = Vec::new();
        while i < subset.len() {
            let e = &log[subset[i]];
            let args = match &e.payload {
                Payload::Raw(raw) => {
                    send_raw(&self.setup, raw);
                    i += 1;
                    continue;
                }
                Payload::Command(args) => args,
            };
            bytes.clear();
            resp::encode_command(&mut bytes, args);
            let mut n = 1;
            while i + n < subset.len() && n < PIPELINE {
                let next = &log[subset[i + n]];
                match &next.payload {
                    Payload::Command(a) if next.client == e.client => {
                        resp::encode_command(&mut bytes, a);
                        n += 1;
                    }
                    _ => break,
                }
            }
            i += n;
            let conn = match conns.entry(e.client.as_str()) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    match connect(&self.setup, self.hang) {
                        Ok(c) => v.insert(c),
                        Err(_) => return probe(&self.setup, self.hang),
                    }
                }
            };
            if conn.call_raw(&bytes, n).is_err() {
                conns.remove(e.client.as_str());
                let h = probe(&self.setup, self.hang);
                if !h.is_alive() {
                    return h;
                }
            }
        }
        probe(&self.setup, self.hang)
    }

    /// Stops the server if it runs (`SHUTDOWN NOSAVE`), waits until it is gone (connects
    /// refused: a crashed server may hold its port for a while, resetting connections, while it
    /// writes its crash report), starts it with the restart command (up to three times, for a
    /// start that lost the port to a dying predecessor) and waits until it answers.
    fn fresh_server(&mut self) -> Result<(), String> {
        self.children
            .retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
        if probe(&self.setup, self.hang).is_alive()
            && let Ok(mut c) = connect(&self.setup, self.hang)
        {
            let _ = c.call(&[b"SHUTDOWN".as_slice(), b"NOSAVE"]);
        }
        let until = Instant::now() + STOP_WITHIN;
        loop {
            match probe(&self.setup, self.hang) {
                Health::Crashed(reason) if reason.contains("refused") => break,
                _ if Instant::now() > until => {
                    return Err(format!(
                        "the server did not go away within {} s (SHUTDOWN NOSAVE, or its crash)",
                        STOP_WITHIN.as_secs()
                    ));
                }
                _ => thread::sleep(Duration::from_millis(20)),
            }
        }
        for _ in 0..3 {
            let child = Command::new("sh")
                .arg("-c")
                .arg(&self.restart)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("--fuzz-restart: cannot run sh: {e}"))?;
            self.children.push(child);
            let until = Instant::now() + START_WITHIN;
            while Instant::now() < until {
                thread::sleep(Duration::from_millis(20));
                if probe(&self.setup, self.hang).is_alive() {
                    return Ok(());
                }
            }
        }
        Err(format!(
            "the server did not answer within {} s of --fuzz-restart (3 tries)",
            START_WITHIN.as_secs()
        ))
    }
}
