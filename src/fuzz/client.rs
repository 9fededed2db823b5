//! A fuzz client: one thread, one connection, one command at a time (its reply read before the
//! next is sent, as the reference does), so the log's order is the order the server executed a
//! client's commands in. A lost connection is reopened with the reference's backoff (5 attempts
//! from 100 ms, doubling); whether the server is gone is the watch's decision, not the client's.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use resp::Value;

use super::cli::FuzzLogLevel;
use super::generate::Generator;
use super::log::Log;
use super::route::Routes;
use super::watch::connect;
use super::{Payload, Say, describe};
use crate::engine::control::ControlConn;
use crate::engine::{ConnSetup, is_maxclients};
use crate::metrics::{FAILURE_KINDS, SecondTally, SharedTimeline};

/// Reconnect attempts after a lost connection (the reference's).
const RECONNECT_ATTEMPTS: u32 = 5;
/// The first backoff; it doubles.
const RECONNECT_BASE: Duration = Duration::from_millis(100);
/// How long a malformed-framing connection waits for the server's answer (an incomplete command
/// gets none: the server waits for the rest).
const RAW_WAIT: Duration = Duration::from_millis(50);

/// What every client shares.
pub struct Common {
    pub setup: Arc<ConnSetup>,
    pub log: Arc<Log>,
    /// Set when the watch found a crash or hang, or on Ctrl-C: every client stops.
    pub stop: Arc<AtomicBool>,
    pub interrupted: Arc<AtomicBool>,
    /// Commands sent, all clients (the progress line).
    pub sent: AtomicU64,
    pub level: FuzzLogLevel,
    /// The reply timeout: above the hang timeout, so the watch decides first.
    pub reply_timeout: Duration,
    pub say: Say,
    /// `--cluster`: the slot map and the nodes.
    pub routes: Option<Arc<Routes>>,
    /// Where each client counts its commands by second, with their reply times
    /// (`FuzzRun::timeline`).
    pub timeline: Option<(SharedTimeline, Instant)>,
}

/// What a client did.
#[derive(Debug, Default)]
pub struct ClientResult {
    pub sent: u64,
    pub ok: u64,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`), plus `timeout` (no reply while the
    /// server answered the watch) and `disconnected` (connection lost, then reopened).
    pub errors: BTreeMap<String, u64>,
    /// Raw framing sent on its own connections.
    pub raw: u64,
    /// The last thing it sent, for the crash report.
    pub last: Option<(u64, String)>,
    /// The client could not (re)connect.
    pub failed: Option<String>,
}

/// Runs client `id` (1-based) for `count` commands.
pub fn run(id: u32, count: u64, mut generator: Generator, common: &Common) -> ClientResult {
    let mut r = ClientResult::default();
    let mut conn = match connect(&common.setup, common.reply_timeout) {
        Ok(c) => Some(c),
        Err(e) => {
            common
                .say
                .error(&format!("[Thread {id}] Connection error: {e}"));
            r.failed = Some(e);
            return r;
        }
    };
    let mut db = 0u32;
    // Counted one by one (`SecondTally::direct`): every command written, each reply by its
    // kind, so a killed run's journal rebuilds the record's block (`record::journal`).
    let mut seconds = common
        .timeline
        .as_ref()
        .map(|(t, start)| SecondTally::direct(*start, t.clone()));
    // --cluster: connections to the other nodes, opened when a command first goes there.
    let mut others: HashMap<usize, ControlConn> = HashMap::new();
    for _ in 0..count {
        if common.stop.load(Ordering::Relaxed) || common.interrupted.load(Ordering::Relaxed) {
            break;
        }
        let payload = generator.next_payload();
        let (seq, payload) = common.log.record(id, db, payload);
        r.sent += 1;
        common.sent.fetch_add(1, Ordering::Relaxed);
        if let Some(s) = seconds.as_mut() {
            s.written(Instant::now(), 1);
        }
        r.last = Some((seq, describe(&payload)));
        match payload {
            Payload::Raw(bytes) => {
                r.raw += 1;
                send_raw(&common.setup, &bytes);
            }
            Payload::Command(args) => {
                let node = common.routes.as_ref().and_then(|r| r.node_of(&args));
                let sent_at = Instant::now();
                let result = match node {
                    None => conn.as_mut().expect("connected").call(&args),
                    Some(n) => node_conn(&mut others, n, common).and_then(|c| c.call(&args)),
                };
                // A command lost without a reply: its kind, and what was said.
                let lost = match result {
                    // A server at `maxclients` took the connection and refused it (its first
                    // reply, then it closes): the command did not run. A refused connection,
                    // as the engine counts one, not an error reply.
                    Ok(v) if refuses(&v) => Some((REFUSED, REFUSED.to_owned())),
                    Ok(v) => {
                        let error = note_reply(&mut r, &v, &args, &mut db, common, id);
                        count_reply(seconds.as_mut(), sent_at, error.as_deref());
                        None
                    }
                    Err(e) => {
                        if common.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let e = e.to_string();
                        let kind = match e.contains("no reply within") {
                            true => "timeout",
                            false => "disconnected",
                        };
                        Some((kind, e))
                    }
                };
                let Some((kind, e)) = lost else {
                    continue;
                };
                *r.errors.entry(kind.to_owned()).or_default() += 1;
                count_lost(seconds.as_mut(), kind);
                common.say.debug(&format!("[Thread {id}] {kind}: {e}"));
                if let Some(n) = node {
                    // Reopened at its next command; the watch decides about the node.
                    others.remove(&n);
                    continue;
                }
                db = 0;
                conn = reconnect(id, common);
                if conn.is_none() {
                    r.failed = Some(e);
                    break;
                }
            }
        }
    }
    if let Some(s) = seconds.as_mut() {
        s.flush();
    }
    r
}

/// A reply's second: one that is not an error (`error`: its kind) completed its command, its
/// reply time the latency; an error reply by its kind, as the record's block counts it.
fn count_reply(seconds: Option<&mut SecondTally>, sent_at: Instant, error: Option<&str>) {
    let Some(s) = seconds else { return };
    let now = Instant::now();
    match error {
        Some(kind) => s.error_word(now, kind),
        None => s.success_exact(now, now.duration_since(sent_at).as_nanos() as u64),
    }
}

/// The block's kind of a command its connection's refusal lost (the engine's word).
const REFUSED: &str = "connection refused";

/// Whether a reply is a server at `maxclients` refusing the connection (the engine's rule).
fn refuses(v: &Value) -> bool {
    crate::engine::control::error_text(v).is_some_and(|t| is_maxclients(t.as_bytes()))
}

/// A command lost without a reply, by the block's kind (`timeout`, `connection refused`,
/// `disconnected`: counted as a connection closed, which the journal's reader names
/// `disconnected` again).
fn count_lost(seconds: Option<&mut SecondTally>, kind: &str) {
    let Some(s) = seconds else { return };
    let lost = match kind {
        "timeout" | REFUSED => kind,
        _ => "connection closed",
    };
    let at = FAILURE_KINDS.iter().position(|k| *k == lost).unwrap_or(0);
    s.lost(Instant::now(), at, 1);
}

/// Counts a reply by kind (returned for an error reply); follows `SELECT` (the log's database
/// column).
fn note_reply(
    r: &mut ClientResult,
    v: &Value,
    args: &[Vec<u8>],
    db: &mut u32,
    common: &Common,
    id: u32,
) -> Option<String> {
    if common.level >= FuzzLogLevel::Debug {
        common.say.debug(&format!(
            "[Thread {id}] {}: -> {}",
            String::from_utf8_lossy(&args[0]),
            brief(v)
        ));
    }
    match crate::engine::control::error_text(v) {
        Some(text) => {
            let kind = text.split_whitespace().next().unwrap_or("ERR").to_owned();
            *r.errors.entry(kind.clone()).or_default() += 1;
            Some(kind)
        }
        None => {
            r.ok += 1;
            if args.len() == 2
                && args[0].eq_ignore_ascii_case(b"SELECT")
                && let Some(n) = std::str::from_utf8(&args[1])
                    .ok()
                    .and_then(|s| s.parse().ok())
            {
                *db = n;
            }
            None
        }
    }
}

/// A reply in a few words, as the reference's debug level shows it.
fn brief(v: &Value) -> String {
    match v {
        Value::Array(a) | Value::Set(a) | Value::Push(a) => {
            format!("(array of {} elements)", a.len())
        }
        Value::Map(m) => format!("(map of {} pairs)", m.len()),
        Value::Integer(n) => n.to_string(),
        Value::Null => "(nil)".to_owned(),
        Value::Error(e) | Value::BlobError(e) => {
            String::from_utf8_lossy(e).chars().take(100).collect()
        }
        other => match other.as_str() {
            Some(s) => s.chars().take(100).collect(),
            None => "(value)".to_owned(),
        },
    }
}

/// The connection to cluster node `n`, opened if needed.
fn node_conn<'a>(
    others: &'a mut HashMap<usize, ControlConn>,
    n: usize,
    common: &Common,
) -> Result<&'a mut ControlConn, crate::engine::EngineError> {
    if let std::collections::hash_map::Entry::Vacant(v) = others.entry(n) {
        let setup = common
            .routes
            .as_ref()
            .and_then(|r| r.nodes[n].clone())
            .expect("a routed node has a setup");
        let c = connect(&setup, common.reply_timeout).map_err(crate::engine::EngineError::Io)?;
        v.insert(c);
    }
    Ok(others.get_mut(&n).expect("just inserted"))
}

/// Reopens the connection with backoff; `None` when every attempt failed or the run stops.
fn reconnect(id: u32, common: &Common) -> Option<ControlConn> {
    for attempt in 0..RECONNECT_ATTEMPTS {
        if common.stop.load(Ordering::Relaxed) {
            return None;
        }
        match connect(&common.setup, common.reply_timeout) {
            Ok(c) => return Some(c),
            Err(_) => {
                let delay = RECONNECT_BASE * (1 << attempt);
                common.say.info(&format!(
                    "[Thread {id}] Reconnection attempt {} failed, retrying in {} ms...",
                    attempt + 1,
                    delay.as_millis()
                ));
                thread::sleep(delay);
            }
        }
    }
    common.say.error(&format!(
        "[Thread {id}] Failed to reconnect after {RECONNECT_ATTEMPTS} attempts"
    ));
    None
}

/// Sends broken framing on a connection of its own and reads what the server says (usually a
/// protocol error, then it closes), for at most [`RAW_WAIT`].
pub fn send_raw(setup: &ConnSetup, bytes: &[u8]) {
    let Ok(mut c) = connect(setup, Duration::from_secs(2)) else {
        return;
    };
    if c.call_raw(bytes, 0).is_err() || c.set_timeout(RAW_WAIT).is_err() {
        return;
    }
    // An answer, a close, or nothing within the wait: all are fine.
    for _ in 0..4 {
        match c.wait_next() {
            Ok(Some(_)) => continue,
            _ => break,
        }
    }
}
