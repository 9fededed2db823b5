//! Watching the server while tests run: its identity once per run, `INFO` once a second during
//! each test, and `INFO commandstats` before and after it — on separate control connections
//! (one per server; per node in cluster mode), never on the measured ones.
//!
//! Owns: reading `INFO` (`info`), commandstats differences (`commandstats`), the per-test
//! sampling threads (`sampler`), and the run-wide state: which servers refused `INFO` (one
//! warning, then no more attempts). Must not: change the server's state (no `CONFIG RESETSTAT`),
//! stop or slow the run when a server does not answer, or format output.

pub mod commandstats;
pub mod info;
pub mod sampler;

use std::time::Instant;

use crate::engine::control::{ControlConn, error_text};

pub use commandstats::CommandTime;
pub use info::{Info, ServerCounters, ServerIdentity, ServerInterval, ServerSample};
pub use sampler::{FollowedStats, SampleFeed, Sampler, WatchTarget, Watched};

/// Why `INFO` gave nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InfoError {
    /// An error reply (ACL `NOPERM`, a renamed command...): the text of the reply.
    Refused(String),
    /// No answer (connection, timeout, protocol).
    Failed(String),
}

/// `INFO <sections...>` as text.
pub fn fetch_info(conn: &mut ControlConn, sections: &[&str]) -> Result<String, InfoError> {
    let mut cmd: Vec<&[u8]> = vec![b"INFO"];
    cmd.extend(sections.iter().map(|s| s.as_bytes()));
    let v = conn
        .call(&cmd)
        .map_err(|e| InfoError::Failed(e.to_string()))?;
    if let Some(e) = error_text(&v) {
        return Err(InfoError::Refused(e));
    }
    match v {
        resp::Value::BulkString(b) | resp::Value::VerbatimString { text: b, .. } => {
            Ok(String::from_utf8_lossy(&b).into_owned())
        }
        other => Err(InfoError::Failed(format!(
            "unexpected INFO reply {:?}",
            other.kind()
        ))),
    }
}

/// A single-value `CONFIG GET` (`None` when refused or absent).
fn config_get(conn: &mut ControlConn, name: &str) -> Option<String> {
    let v = conn
        .call(&[b"CONFIG".as_slice(), b"GET", name.as_bytes()])
        .ok()?;
    match v {
        resp::Value::Array(items) if items.len() == 2 => items[1].as_str().map(str::to_string),
        resp::Value::Map(pairs) if pairs.len() == 1 => pairs[0].1.as_str().map(str::to_string),
        _ => None,
    }
}

/// The server's identity: `INFO server memory persistence stats`, `CONFIG GET io-threads` and
/// `save` (both may be refused; they are then left out).
pub fn identify(target: &WatchTarget) -> Result<ServerIdentity, InfoError> {
    let mut conn = target.connect()?;
    let text = fetch_info(&mut conn, &["server", "memory", "persistence", "stats"])?;
    let mut id = ServerIdentity::from_info(&Info::new(&text));
    id.io_threads = config_get(&mut conn, "io-threads").and_then(|v| v.parse().ok());
    id.rdb_save = config_get(&mut conn, "save");
    Ok(id)
}

/// One watched server for the whole run.
#[derive(Clone, Debug)]
pub struct WatchedServer {
    pub target: WatchTarget,
    /// `None` when `INFO` was refused or failed at the start.
    pub identity: Option<ServerIdentity>,
    /// Why there are no figures for this server (`INFO` refused...).
    pub unavailable: Option<String>,
}

/// The run-wide watch: the servers and whether each can be sampled.
#[derive(Debug)]
pub struct ServerWatch {
    pub servers: Vec<WatchedServer>,
    /// `--no-server-stats`: identities only, no sampling.
    sampling: bool,
}

impl ServerWatch {
    /// Identifies every server. Returns the watch and the warnings to print: one line when a
    /// server refuses `INFO` (then no figures for it, and no further attempts), nothing when it
    /// merely does not answer (its figures stay empty).
    pub fn new(targets: Vec<WatchTarget>, sampling: bool) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let servers = targets
            .into_iter()
            .map(|target| {
                let (identity, unavailable) = match identify(&target) {
                    Ok(id) => (Some(id), None),
                    Err(InfoError::Refused(e)) => {
                        warnings.push(format!(
                            "WARNING: {} refuses INFO ({e}): no server figures for it",
                            target.address
                        ));
                        (None, Some(format!("INFO refused: {e}")))
                    }
                    Err(InfoError::Failed(e)) => (None, Some(format!("INFO failed: {e}"))),
                };
                WatchedServer {
                    target,
                    identity,
                    unavailable,
                }
            })
            .collect();
        (Self { servers, sampling }, warnings)
    }

    /// Starts watching every server that answered `INFO`, aligned to `start`.
    pub fn begin_test(&self, start: Instant) -> TestWatch {
        let samplers = if self.sampling {
            self.servers
                .iter()
                .filter(|s| s.identity.is_some())
                .map(|s| Sampler::start(&s.target, start))
                .collect()
        } else {
            Vec::new()
        };
        TestWatch { samplers }
    }

    /// Whether server figures are being collected at all.
    pub fn sampling(&self) -> bool {
        self.sampling && self.servers.iter().any(|s| s.identity.is_some())
    }
}

/// The samplers of one test.
pub struct TestWatch {
    samplers: Vec<Sampler>,
}

impl TestWatch {
    /// Each sampler's live view (`crate::live`).
    pub fn feeds(&self) -> Vec<SampleFeed> {
        self.samplers.iter().map(Sampler::feed).collect()
    }

    /// Stops every sampler (concurrently bounded: each waits at most `sampler::STOP_WAIT`).
    pub fn end(self) -> Vec<Watched> {
        self.samplers.into_iter().map(Sampler::stop).collect()
    }
}
