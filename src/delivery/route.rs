//! Where a delivery test's names live (issue 26, `--cluster`): on one server, or in a cluster
//! on the primary that owns each name's hash slot — a sharded channel's `SSUBSCRIBE` and
//! `SPUBLISH`, and the stream's key (its consumer group lives with it). The slot map and the
//! key → slot function are the cluster module's (`cluster::slot`, `cluster::topology`), read
//! from the run's discovered topology (`engine::ClusterShared`).
//!
//! A publisher holds one connection per node ([`Router`]) and follows a `-MOVED` reply to the
//! node it names (a slot migrated during the test): the message is sent again there, counted
//! once, and the channel stays routed there; the redirects are counted for the record.

use std::time::Duration;

use resp::Value;

use crate::cluster::slot::key_slot;
use crate::cluster::topology::NO_OWNER;
use crate::engine::cluster::parse_redirect;
use crate::engine::control::ControlConn;
use crate::engine::{ClusterShared, ConnSetup, EngineError};

/// How many `MOVED` replies one message follows before it counts as failed.
const MAX_MOVES: u32 = 4;

/// The nodes a test uses and, per name, which.
#[derive(Clone, Debug)]
pub(crate) struct Nodes {
    /// How to open a connection to each node (the run's AUTH/HELLO prefix included).
    pub setups: Vec<ConnSetup>,
    /// `host:port` of each, as the record names it.
    pub names: Vec<String>,
    /// Name `k`'s node (index into `setups`).
    pub of_name: Vec<usize>,
}

impl Nodes {
    /// Every name on the one server.
    pub(crate) fn single(setup: &ConnSetup, names: usize) -> Self {
        Self {
            setups: vec![setup.clone()],
            names: vec![setup.target.display()],
            of_name: vec![0; names],
        }
    }

    /// Each name on the primary that owns its slot, as the run's topology says now.
    pub(crate) fn cluster(
        setup: &ConnSetup,
        shared: &ClusterShared,
        names: &[Vec<u8>],
    ) -> Result<Self, EngineError> {
        let topology = shared.topology();
        let owners = topology.slot_owners();
        let mut used: Vec<usize> = Vec::new();
        let mut of_name = Vec::with_capacity(names.len());
        for name in names {
            let slot = key_slot(name);
            let owner = owners[usize::from(slot)];
            if owner == NO_OWNER {
                return Err(EngineError::Other(format!(
                    "{}: slot {slot} (of {}) has no owner in the cluster",
                    setup.target.display(),
                    String::from_utf8_lossy(name)
                )));
            }
            let node = usize::from(owner);
            let at = match used.iter().position(|&n| n == node) {
                Some(at) => at,
                None => {
                    used.push(node);
                    used.len() - 1
                }
            };
            of_name.push(at);
        }
        let setups = used
            .iter()
            .map(|&n| ConnSetup {
                target: shared.target(n),
                ..setup.clone()
            })
            .collect();
        let names = used.iter().map(|&n| topology.nodes[n].display()).collect();
        Ok(Self {
            setups,
            names,
            of_name,
        })
    }

    /// How to reach `host:port` (a node a `MOVED` named): set up as the first node.
    pub(crate) fn setup_at(&self, host: &str, port: u16) -> Result<ConnSetup, EngineError> {
        let base = &self.setups[0];
        // An empty host (`MOVED 3999 :7001`): the node is where the others are.
        let host = match (host, self.names[0].rsplit_once(':')) {
            ("", Some((h, _))) => h.trim_matches(['[', ']']).to_string(),
            (h, _) => h.to_string(),
        };
        Ok(ConnSetup {
            target: base.target.at(&host, port)?,
            ..base.clone()
        })
    }

    /// A connection to `host:port`, set up as the first node's.
    pub(crate) fn open_at(&self, host: &str, port: u16) -> Result<ControlConn, EngineError> {
        super::connect::open(&self.setup_at(host, port)?)
    }

    /// The index of the node named `host:port`, if the test began with it.
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// The `host:port` a `-MOVED` error names.
pub(crate) fn moved_to(reply: &Value) -> Option<(String, u16)> {
    let Value::Error(e) = reply else { return None };
    if !e.starts_with(b"MOVED ") {
        return None;
    }
    parse_redirect(e).map(|(_, host, port)| (host, port))
}

/// One publisher's connections: one per node, the channel → connection map, and what each
/// connection's node had acknowledged.
pub(super) struct Router<'a> {
    nodes: &'a Nodes,
    conns: Vec<ControlConn>,
    /// `host:port` of each connection (the nodes' first, then any a `MOVED` named).
    pub addrs: Vec<String>,
    route: Vec<usize>,
    /// Acknowledged messages per connection.
    pub acked: Vec<u64>,
    /// `MOVED` replies followed.
    pub moved: u64,
}

impl<'a> Router<'a> {
    /// A connection to every node of `nodes`.
    pub(super) fn open(nodes: &'a Nodes) -> Result<Self, EngineError> {
        let conns = nodes
            .setups
            .iter()
            .map(super::connect::open)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            nodes,
            acked: vec![0; conns.len()],
            conns,
            addrs: nodes.names.clone(),
            route: nodes.of_name.clone(),
            moved: 0,
        })
    }

    /// Sends `args` for name `k` to its node, following `MOVED` (at most [`MAX_MOVES`]); the
    /// reply, and the connection that gave it. A connection that fails is an error.
    pub(super) fn call(&mut self, k: usize, args: &[&[u8]]) -> Result<(usize, Value), EngineError> {
        let mut at = self.route.get(k).copied().unwrap_or(0);
        let mut moves = 0;
        loop {
            let reply = self.conns[at].call(args)?;
            match moved_to(&reply) {
                Some((host, port)) if moves < MAX_MOVES => {
                    moves += 1;
                    self.moved += 1;
                    at = self.connection_to(&host, port)?;
                    if let Some(r) = self.route.get_mut(k) {
                        *r = at;
                    }
                }
                _ => return Ok((at, reply)),
            }
        }
    }

    /// Every connection opened again (after one failed: `-e`), each to the node it was to.
    /// Every connection's reply timeout (`--timeout`).
    pub(super) fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<(), EngineError> {
        match timeout {
            Some(t) => self.conns.iter_mut().try_for_each(|c| c.set_timeout(t)),
            None => Ok(()),
        }
    }

    pub(super) fn reopen(&mut self) -> Result<(), EngineError> {
        for (j, c) in self.conns.iter_mut().enumerate() {
            *c = match self.nodes.setups.get(j) {
                Some(setup) => super::connect::open(setup)?,
                None => {
                    let addr = &self.addrs[j];
                    let (host, port) = addr.rsplit_once(':').unwrap_or((addr, "0"));
                    let port = port.parse().unwrap_or(0);
                    self.nodes.open_at(host, port)?
                }
            };
        }
        Ok(())
    }

    /// The connection to `host:port`, opened when first named.
    fn connection_to(&mut self, host: &str, port: u16) -> Result<usize, EngineError> {
        let suffix = format!(":{port}");
        if let Some(at) = self
            .addrs
            .iter()
            .position(|a| a.ends_with(&suffix) && (host.is_empty() || a.contains(host)))
        {
            return Ok(at);
        }
        self.conns.push(self.nodes.open_at(host, port)?);
        self.addrs.push(format!("{host}{suffix}"));
        self.acked.push(0);
        Ok(self.conns.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_error_names_its_node_and_nothing_else_does() {
        let e = |s: &str| Value::Error(s.as_bytes().to_vec());
        assert_eq!(
            moved_to(&e("MOVED 3999 127.0.0.1:6381")),
            Some(("127.0.0.1".into(), 6381))
        );
        assert_eq!(moved_to(&e("ASK 3999 127.0.0.1:6381")), None);
        assert_eq!(moved_to(&e("ERR unknown")), None);
        assert_eq!(moved_to(&Value::Integer(1)), None);
    }

    #[test]
    fn names_spread_over_the_primaries_that_own_their_slots() {
        let slots = |ranges: &[(i64, i64, i64)]| {
            Value::Array(
                ranges
                    .iter()
                    .map(|&(a, b, port)| {
                        Value::Array(vec![
                            Value::Integer(a),
                            Value::Integer(b),
                            Value::Array(vec![
                                Value::BulkString(b"127.0.0.1".to_vec()),
                                Value::Integer(port),
                            ]),
                        ])
                    })
                    .collect(),
            )
        };
        let reply = slots(&[(0, 5460, 7000), (5461, 10922, 7001), (10923, 16383, 7002)]);
        let topology =
            crate::cluster::topology::Topology::from_cluster_slots(&reply, &[], "127.0.0.1")
                .unwrap();
        let entry = crate::engine::Target::tcp("127.0.0.1", 7000).unwrap();
        let shared = ClusterShared::new(topology, &entry, "127.0.0.1", None).unwrap();
        let setup = ConnSetup {
            target: entry,
            prefix: Vec::new(),
            prefix_commands: Vec::new(),
        };
        let names: Vec<Vec<u8>> = (0..12).map(|k| format!("p:{k}:ch").into_bytes()).collect();
        let nodes = Nodes::cluster(&setup, &shared, &names).unwrap();
        assert_eq!(nodes.of_name.len(), 12);
        for (name, &at) in names.iter().zip(&nodes.of_name) {
            let slot = key_slot(name);
            let port = match slot {
                0..=5460 => 7000,
                5461..=10922 => 7001,
                _ => 7002,
            };
            assert_eq!(nodes.names[at], format!("127.0.0.1:{port}"));
        }
        let single = Nodes::single(&setup, 3);
        assert_eq!((single.setups.len(), single.of_name), (1, vec![0, 0, 0]));
    }
}
