//! Sentinel (`--sentinel`, `--primary-name`): finding the primary through Sentinels, following it
//! through failovers, and the switches seen, for the report and the record.
//!
//! Owns: asking Sentinels (`SENTINEL GET-MASTER-ADDR-BY-NAME`, each in turn, bounded by the
//! connect and reply timeouts), the watcher thread (`watcher.rs`, `+switch-master`), placing each
//! switch in the test under way. Must not: touch the engine's connections — it only moves the
//! [`FollowedPrimary`] that the engine's connect path reads (`engine::follow`), so every
//! connection opened (or reopened) after a switch goes to the new primary.

mod client;
mod watcher;

use std::sync::Arc;
use std::time::Instant;

use resp::Value;

use self::client::SentinelConn;
use self::watcher::Watcher;
use crate::cli::SentinelArgs;
use crate::engine::control::error_text;
use crate::engine::{FollowedPrimary, PrimaryAddr};
use crate::record::failover::{SentinelRecord, SwitchRecord};

/// Who to ask, for which primary, with which credentials.
#[derive(Clone, Debug)]
pub struct Sentinels {
    pub nodes: Vec<(String, u16)>,
    pub name: String,
    /// AUTH arguments for the Sentinels (`[password]` or `[user, password]`).
    pub auth: Option<Vec<Vec<u8>>>,
}

impl Sentinels {
    /// From the options; `None` without `--sentinel`.
    pub fn of(args: &SentinelArgs) -> Option<Self> {
        let name = args.primary_name.clone()?;
        if args.nodes.is_empty() {
            return None;
        }
        let auth = args.password.as_ref().map(|p| match &args.user {
            Some(u) => vec![u.clone(), p.clone()],
            None => vec![p.clone()],
        });
        Some(Self {
            nodes: args.nodes.clone(),
            name,
            auth,
        })
    }

    fn display(&self, i: usize) -> String {
        let (h, p) = &self.nodes[i];
        if h.contains(':') {
            format!("[{h}]:{p}")
        } else {
            format!("{h}:{p}")
        }
    }

    /// Asks each Sentinel in turn; the first that names the primary wins (with its index). The
    /// error is one line naming every Sentinel's problem.
    pub fn discover(&self) -> Result<(String, u16, usize), String> {
        let mut problems = Vec::new();
        let mut unknown = 0;
        for i in 0..self.nodes.len() {
            let (host, port) = &self.nodes[i];
            let asked = SentinelConn::open(host, *port, self.auth.as_deref())
                .and_then(|mut c| ask(&mut c, &self.name));
            match asked {
                Ok((h, p)) => return Ok((h, p, i)),
                Err(e) => {
                    if e == UNKNOWN {
                        unknown += 1;
                    }
                    problems.push(format!("{}: {e}", self.display(i)));
                }
            }
        }
        if unknown == self.nodes.len() {
            return Err(format!(
                "no Sentinel knows a primary named '{}' (asked {}): check --primary-name",
                self.name,
                (0..self.nodes.len())
                    .map(|i| self.display(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Err(format!(
            "no Sentinel could say where the primary '{}' is: {}",
            self.name,
            problems.join("; ")
        ))
    }
}

/// What a Sentinel says of a name it does not monitor.
const UNKNOWN: &str = "does not know this primary name";

/// `SENTINEL GET-MASTER-ADDR-BY-NAME name` on one connection.
fn ask(conn: &mut SentinelConn, name: &str) -> Result<(String, u16), String> {
    let v = conn.call(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", name])?;
    if let Some(e) = error_text(&v) {
        return Err(e);
    }
    match v {
        Value::Null => Err(UNKNOWN.to_string()),
        Value::Array(items) if items.len() == 2 => {
            let host = items[0].as_str().ok_or("a malformed reply")?.to_string();
            let port = items[1]
                .as_str()
                .and_then(|p| p.parse().ok())
                .ok_or("a malformed reply")?;
            Ok((host, port))
        }
        _ => Err("a malformed reply".to_string()),
    }
}

/// A Sentinel run: the followed primary, the watcher, and the switches placed in tests so far.
pub struct SentinelRun {
    cfg: Sentinels,
    primary: Arc<FollowedPrimary>,
    initial: PrimaryAddr,
    watcher: Watcher,
    run_start: Instant,
    /// How many of the watcher's switches are placed already.
    placed: usize,
    switches: Vec<SwitchRecord>,
}

impl SentinelRun {
    /// Discovers the primary and starts watching for failovers.
    pub fn start(cfg: Sentinels) -> Result<Self, String> {
        let (host, port, first) = cfg.discover()?;
        let initial = PrimaryAddr::resolve(&host, port).map_err(|e| e.to_string())?;
        let primary = Arc::new(FollowedPrimary::new(initial.clone()));
        let watcher = Watcher::start(cfg.clone(), first, primary.clone());
        Ok(Self {
            cfg,
            primary,
            initial,
            watcher,
            run_start: Instant::now(),
            placed: 0,
            switches: Vec::new(),
        })
    }

    /// The shared address the engine's connections follow.
    pub fn primary(&self) -> Arc<FollowedPrimary> {
        self.primary.clone()
    }

    /// After a test that began at `start`: places the switches seen since the last call (those
    /// before `start` happened between tests) and returns the report's lines for this test's.
    pub fn after_test(&mut self, title: &str, start: Instant) -> Vec<String> {
        let mut lines = Vec::new();
        for s in self.watcher.switches_since(self.placed) {
            self.placed += 1;
            let during = s.when >= start;
            let offset = s
                .when
                .saturating_duration_since(if during { start } else { self.run_start })
                .as_secs_f64();
            if during {
                lines.push(format!(
                    "primary switched from {} to {} at +{offset:.1} s",
                    s.from, s.to
                ));
            }
            self.switches.push(SwitchRecord {
                at: crate::timestamp::rfc3339_micros(s.at),
                offset_s: offset,
                test: during.then(|| title.to_string()),
                from: s.from,
                to: s.to,
            });
        }
        lines
    }

    /// Stops the watcher and returns the record's block, with the initial primary's host and
    /// port (the record's target).
    pub fn finish(mut self) -> (SentinelRecord, String, u16) {
        self.watcher.stop();
        // Switches after the last test: placed from the run's start.
        let never = Instant::now() + std::time::Duration::from_secs(3600);
        self.after_test("", never);
        let record = SentinelRecord {
            primary_name: self.cfg.name.clone(),
            sentinels: (0..self.cfg.nodes.len())
                .map(|i| self.cfg.display(i))
                .collect(),
            initial: self.initial.display.clone(),
            switches: self.switches,
        };
        (record, self.initial.host, self.initial.addr.port())
    }
}
