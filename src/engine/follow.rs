//! A server address that can move while the run goes on: the primary a Sentinel names.
//!
//! Why here and not in the engine's callers: every connection the engine opens — setup,
//! `-k 0` replacements, and reopening a lost connection — goes through [`super::Target`]'s one
//! connect path. A [`FollowedPrimary`] carried by the target is read there, so whoever learns of
//! a failover (the Sentinel watcher, `src/sentinel/`) only has to call [`FollowedPrimary::set`]:
//! every later connect goes to the new primary without the worker knowing why.
//!
//! Cost: a connect takes one uncontended read lock (connects are rare). A worker that wants to
//! know whether its *open* connections point at a stale primary compares [`FollowedPrimary::epoch`]
//! (one relaxed atomic load) with the epoch it noted when it connected ([`super::Target::epoch`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use super::error::EngineError;

/// Where the primary is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimaryAddr {
    /// Resolved once per change, so reconnects do no DNS work.
    pub addr: SocketAddr,
    /// The host as the Sentinel gave it: the TLS server name unless `--sni`.
    pub host: String,
    /// `host:port` for messages and the report.
    pub display: String,
}

impl PrimaryAddr {
    /// Resolves `host:port` (the first address; Sentinels announce addresses, rarely names).
    pub fn resolve(host: &str, port: u16) -> Result<Self, EngineError> {
        let display = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| EngineError::Connect {
                target: display.clone(),
                reason: e.to_string(),
            })?
            .next()
            .ok_or_else(|| EngineError::Connect {
                target: display.clone(),
                reason: "the host name has no address".into(),
            })?;
        Ok(Self {
            addr,
            host: host.to_string(),
            display,
        })
    }
}

/// The shared, changing address of a primary. Written rarely (a failover), read at every connect.
#[derive(Debug)]
pub struct FollowedPrimary {
    /// Bumped by every change: a connection opened at epoch `e` points at a stale primary when
    /// the epoch is no longer `e`.
    epoch: AtomicU64,
    current: RwLock<PrimaryAddr>,
}

impl FollowedPrimary {
    pub fn new(first: PrimaryAddr) -> Self {
        Self {
            epoch: AtomicU64::new(0),
            current: RwLock::new(first),
        }
    }

    /// The primary's address now.
    pub fn current(&self) -> PrimaryAddr {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many times the primary has moved (cheap: one relaxed load).
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Moves the primary; returns false (and changes nothing) when it is already there.
    pub fn set(&self, to: PrimaryAddr) -> bool {
        let mut cur = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if *cur == to {
            return false;
        }
        *cur = to;
        // Under the write lock, so a reader that sees the new epoch and then reads the address
        // gets the new address.
        self.epoch.fetch_add(1, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_bumps_the_epoch_once() {
        let p = FollowedPrimary::new(PrimaryAddr::resolve("127.0.0.1", 7000).unwrap());
        assert_eq!(p.epoch(), 0);
        assert!(!p.set(PrimaryAddr::resolve("127.0.0.1", 7000).unwrap()));
        assert_eq!(p.epoch(), 0, "the same address is no move");
        assert!(p.set(PrimaryAddr::resolve("127.0.0.1", 7001).unwrap()));
        assert_eq!(p.epoch(), 1);
        assert_eq!(p.current().display, "127.0.0.1:7001");
        assert_eq!(p.current().addr.port(), 7001);
        assert_eq!(
            PrimaryAddr::resolve("::1", 7002).unwrap().display,
            "[::1]:7002"
        );
    }
}
