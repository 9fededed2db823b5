//! `replay --cluster`: a `-MOVED` or `-ASK` reply (slots moved while the trace was replayed) is
//! followed: the command is sent again to the node the reply names (after `ASKING` for an ASK),
//! and that node's reply is the command's. Counted in the record's `replay.cluster`.
//!
//! A `MOVED` also asks the shared slot map for a refresh (`ClusterShared::request_refresh`), so
//! the router sends the slot's later commands to its new owner directly.
//!
//! Why a blocking side connection per node and not the thread's event loop: redirects come only
//! while slots move, and once the map is refreshed only for the commands already handed to the
//! threads, so their cost is rare and short (the thread's other clients wait meanwhile); the
//! answer is needed before the thread accounts for the command; and the replayed clients' own
//! connections keep their order untouched.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use resp::Value;

use crate::engine::Target;
use crate::engine::cluster::{ClusterShared, parse_redirect};
use crate::engine::control::ControlConn;

/// How long a redirected command's answer is waited for.
const REDIRECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Redirects so many times in a row for one command are given up (a slot moving back and forth).
const MAX_HOPS: usize = 5;

/// Side connections by `host:port`, and the counts.
pub struct Redirects {
    /// Any node's target: others are reached the same way (`Target::at`: TLS, ...).
    base: Target,
    auth: Option<Vec<Vec<u8>>>,
    /// The slot map a `MOVED` asks to be refreshed.
    shared: Arc<ClusterShared>,
    conns: HashMap<(String, u16), ControlConn>,
    pub moved: u64,
    pub ask: u64,
}

/// What a followed command ended with: `Ok` a reply, `Err` the error's text.
pub type Answer = Result<(), Vec<u8>>;

/// Whether an error reply is a redirect: `MOVED` or `ASK`.
pub fn is_redirect(text: &[u8]) -> bool {
    text.starts_with(b"MOVED ") || text.starts_with(b"ASK ")
}

impl Redirects {
    pub fn new(base: Target, auth: Option<Vec<Vec<u8>>>, shared: Arc<ClusterShared>) -> Self {
        Self {
            base,
            auth,
            shared,
            conns: HashMap::new(),
            moved: 0,
            ask: 0,
        }
    }

    /// Follows the redirect `error` (a MOVED or ASK reply's text) for the command `bytes`
    /// (RESP-encoded), hop by hop up to [`MAX_HOPS`].
    pub fn follow(&mut self, error: &[u8], bytes: &[u8]) -> Answer {
        let mut error = error.to_vec();
        for _ in 0..MAX_HOPS {
            let ask = error.starts_with(b"ASK ");
            let Some((_, host, port)) = parse_redirect(&error) else {
                return Err(error);
            };
            match ask {
                true => self.ask += 1,
                false => {
                    self.moved += 1;
                    self.shared.request_refresh();
                }
            }
            let reply = self.call(&host, port, ask, bytes)?;
            match reply {
                Value::Error(e) if is_redirect(&e) => error = e,
                Value::Error(e) => return Err(e),
                _ => return Ok(()),
            }
        }
        Err(error)
    }

    /// One send on the side connection to `host:port`; an I/O failure drops the connection
    /// (the next redirect opens a new one) and is the command's error.
    fn call(&mut self, host: &str, port: u16, ask: bool, bytes: &[u8]) -> Result<Value, Vec<u8>> {
        let key = (host.to_string(), port);
        if !self.conns.contains_key(&key) {
            let opened = self
                .base
                .at(host, port)
                .and_then(|t| ControlConn::connect_auth(&t, self.auth.as_deref()))
                .and_then(|mut c| c.set_timeout(REDIRECT_TIMEOUT).map(|()| c));
            let c = opened.map_err(|e| format!("redirect to {host}:{port}: {e}").into_bytes())?;
            self.conns.insert(key.clone(), c);
        }
        let conn = self.conns.get_mut(&key).expect("inserted above");
        let result = if ask {
            let mut both = b"*1\r\n$6\r\nASKING\r\n".to_vec();
            both.extend_from_slice(bytes);
            conn.call_raw(&both, 2).map(|mut r| r.pop())
        } else {
            conn.call_raw(bytes, 1).map(|mut r| r.pop())
        };
        match result {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(b"no reply to a redirected command".to_vec()),
            Err(e) => {
                self.conns.remove(&key);
                Err(format!("redirect to {host}:{port}: {e}").into_bytes())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::topology::Topology;

    #[test]
    fn redirects_are_told_from_other_errors() {
        assert!(is_redirect(b"MOVED 3999 127.0.0.1:6381"));
        assert!(is_redirect(b"ASK 3999 127.0.0.1:6381"));
        assert!(!is_redirect(b"ERR MOVED"));
        assert!(!is_redirect(
            b"CROSSSLOT Keys in request don't hash to the same slot"
        ));
        // A reply that names no node is the command's own error, not followed.
        let base = Target::Unix("/nonexistent".into());
        let none = Topology {
            nodes: Vec::new(),
            ranges: Vec::new(),
        };
        let shared = ClusterShared::new(none, &base, "", None).unwrap();
        let mut r = Redirects::new(base, None, Arc::new(shared));
        assert_eq!(r.follow(b"MOVED x", b""), Err(b"MOVED x".to_vec()));
        assert_eq!((r.moved, r.ask), (0, 0));
    }
}
