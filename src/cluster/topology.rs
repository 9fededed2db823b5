//! The cluster's shape: which nodes exist and which primary owns each slot, from `CLUSTER SLOTS`.
//!
//! Nodes get a stable index for the whole run (a registry that only grows), so per-node figures,
//! worker-local slot maps and connections can refer to them by number even as the topology
//! changes (a failover makes a replica a primary; a migration moves slots to a new node).

use std::collections::HashMap;

use resp::Value;

use super::slot::SLOTS;

/// A node as `CLUSTER SLOTS` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAddr {
    pub host: String,
    pub port: u16,
    /// The node ID (empty if the server did not send one).
    pub id: String,
}

impl NodeAddr {
    /// `host:port` (`[v6]:port`), as in the listing and in messages.
    pub fn display(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One slot range with its primary and replicas, as node indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    pub first: u16,
    pub last: u16,
    pub primary: usize,
    pub replicas: Vec<usize>,
}

/// A snapshot of the topology: the slot map plus every node known so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Every node ever seen in this run, by index (never shrinks).
    pub nodes: Vec<NodeAddr>,
    pub ranges: Vec<Range>,
}

/// The primary that owns no slot, in a slot map.
pub const NO_OWNER: u16 = u16::MAX;

impl Topology {
    /// Parses a `CLUSTER SLOTS` reply, adding unknown nodes after `known` (whose indexes stay).
    /// `entry_host` replaces an empty or `?` host (a node that does not know its own address).
    pub fn from_cluster_slots(
        reply: &Value,
        known: &[NodeAddr],
        entry_host: &str,
    ) -> Result<Self, String> {
        let Value::Array(ranges) = reply else {
            return Err(format!("CLUSTER SLOTS replied {}", describe(reply)));
        };
        let mut nodes = known.to_vec();
        let mut index: HashMap<(String, u16), usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| ((n.host.clone(), n.port), i))
            .collect();
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            let Value::Array(fields) = r else {
                return Err("CLUSTER SLOTS: a range is not an array".into());
            };
            if fields.len() < 3 {
                return Err("CLUSTER SLOTS: a range has no primary".into());
            }
            let slot = |v: &Value| match v {
                Value::Integer(n) if (0..SLOTS as i64).contains(n) => Ok(*n as u16),
                _ => Err(format!("CLUSTER SLOTS: bad slot number {}", describe(v))),
            };
            let (first, last) = (slot(&fields[0])?, slot(&fields[1])?);
            let mut members = Vec::with_capacity(fields.len() - 2);
            for node in &fields[2..] {
                let addr = parse_node(node, entry_host)?;
                let key = (addr.host.clone(), addr.port);
                let i = match index.get(&key) {
                    Some(&i) => {
                        if nodes[i].id.is_empty() {
                            nodes[i].id = addr.id;
                        }
                        i
                    }
                    None => {
                        nodes.push(addr);
                        index.insert(key, nodes.len() - 1);
                        nodes.len() - 1
                    }
                };
                members.push(i);
            }
            out.push(Range {
                first,
                last,
                primary: members[0],
                replicas: members[1..].to_vec(),
            });
        }
        if out.is_empty() {
            return Err("the cluster has no slots assigned (CLUSTER SLOTS is empty)".into());
        }
        Ok(Self { nodes, ranges: out })
    }

    /// The owner (node index) of every slot; [`NO_OWNER`] where no range covers it.
    pub fn slot_owners(&self) -> Vec<u16> {
        let mut owners = vec![NO_OWNER; SLOTS];
        for r in &self.ranges {
            for s in r.first..=r.last {
                owners[usize::from(s)] = r.primary as u16;
            }
        }
        owners
    }

    /// Primaries with at least one slot, in order of first appearance.
    pub fn primaries(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for r in &self.ranges {
            if !out.contains(&r.primary) {
                out.push(r.primary);
            }
        }
        out
    }

    /// Replicas of slot-owning primaries, in order of first appearance.
    pub fn replicas(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for r in &self.ranges {
            for &n in &r.replicas {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// The primary a node serves reads for: itself if it owns slots, its primary if it is a
    /// replica, `None` if it is neither (no slots, not replicating a slot owner).
    pub fn shard_primary(&self, node: usize) -> Option<usize> {
        self.ranges
            .iter()
            .find_map(|r| (r.primary == node || r.replicas.contains(&node)).then_some(r.primary))
    }

    /// The first slot a node (primary or replica) serves.
    pub fn first_slot(&self, node: usize) -> Option<u16> {
        let primary = self.shard_primary(node)?;
        self.ranges
            .iter()
            .filter(|r| r.primary == primary)
            .map(|r| r.first)
            .min()
    }
}

fn parse_node(v: &Value, entry_host: &str) -> Result<NodeAddr, String> {
    let Value::Array(f) = v else {
        return Err("CLUSTER SLOTS: a node is not an array".into());
    };
    let text = |v: &Value| match v {
        Value::BulkString(b) | Value::SimpleString(b) => Some(String::from_utf8_lossy(b).into()),
        _ => None,
    };
    let host: String = f.first().and_then(text).unwrap_or_default();
    let host = if host.is_empty() || host == "?" {
        entry_host.to_string()
    } else {
        host
    };
    let port = match f.get(1) {
        Some(Value::Integer(p)) if (1..=65535).contains(p) => *p as u16,
        other => {
            return Err(format!(
                "CLUSTER SLOTS: bad port {}",
                other.map_or("(missing)".to_string(), describe)
            ));
        }
    };
    let id = f.get(2).and_then(text).unwrap_or_default();
    Ok(NodeAddr { host, port, id })
}

fn describe(v: &Value) -> String {
    match v {
        Value::Error(e) => format!("an error: {}", String::from_utf8_lossy(e)),
        other => format!("{:?}", other.kind()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, port: i64, id: &str) -> Value {
        Value::Array(vec![
            Value::BulkString(host.into()),
            Value::Integer(port),
            Value::BulkString(id.into()),
        ])
    }

    fn range(first: i64, last: i64, nodes: Vec<Value>) -> Value {
        let mut v = vec![Value::Integer(first), Value::Integer(last)];
        v.extend(nodes);
        Value::Array(v)
    }

    fn sample() -> Value {
        Value::Array(vec![
            range(
                0,
                5460,
                vec![node("127.0.0.1", 7001, "a"), node("127.0.0.1", 7004, "d")],
            ),
            range(5461, 10922, vec![node("127.0.0.1", 7002, "b")]),
            range(
                10923,
                16383,
                vec![node("", 7003, "c"), node("127.0.0.1", 7006, "f")],
            ),
        ])
    }

    #[test]
    fn parses_ranges_nodes_and_roles() {
        let t = Topology::from_cluster_slots(&sample(), &[], "10.0.0.9").unwrap();
        assert_eq!(t.nodes.len(), 5);
        assert_eq!(t.nodes[3].host, "10.0.0.9", "empty host = the entry host");
        assert_eq!(t.primaries(), [0, 2, 3]);
        assert_eq!(t.replicas(), [1, 4]);
        assert_eq!(t.shard_primary(4), Some(3));
        assert_eq!(t.first_slot(1), Some(0));
        let owners = t.slot_owners();
        assert_eq!(owners[5460], 0);
        assert_eq!(owners[5461], 2);
        assert_eq!(owners[16383], 3);
    }

    #[test]
    fn known_nodes_keep_their_indexes() {
        let first = Topology::from_cluster_slots(&sample(), &[], "h").unwrap();
        // After a failover 7004 owns 0..5460 and a new node 7007 appears.
        let after = Value::Array(vec![
            range(0, 5460, vec![node("127.0.0.1", 7004, "d")]),
            range(5461, 16383, vec![node("127.0.0.1", 7007, "g")]),
        ]);
        let t = Topology::from_cluster_slots(&after, &first.nodes, "h").unwrap();
        assert_eq!(t.nodes[1].port, 7004);
        assert_eq!(t.nodes[5].port, 7007);
        assert_eq!(t.slot_owners()[0], 1);
        assert_eq!(t.primaries(), [1, 5]);
    }

    #[test]
    fn malformed_replies_are_errors_not_panics() {
        for bad in [
            Value::Error(b"ERR This instance has cluster support disabled".to_vec()),
            Value::Array(vec![]),
            Value::Array(vec![Value::Integer(1)]),
            Value::Array(vec![range(0, 99999, vec![node("h", 1, "x")])]),
            Value::Array(vec![range(0, 1, vec![node("h", 0, "x")])]),
            Value::Array(vec![range(0, 1, vec![])]),
        ] {
            assert!(
                Topology::from_cluster_slots(&bad, &[], "h").is_err(),
                "{bad:?}"
            );
        }
    }
}
