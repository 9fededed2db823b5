//! Cluster mode with a mix: units written for another node than the connection's, kept for
//! that node's next batch in the same worker (memtier's way: a key drawn is sent, to the node
//! that holds it, never dropped or redirected, so `--key-pattern P:P` still writes every key and
//! the mix keeps its split).
//!
//! Bounded: a node's queue holds at most [`PARK_UNITS`] units and [`PARK_BYTES`] bytes (one unit
//! whatever its size), so a worker without a connection to a node, or a node that takes units
//! slower than they are drawn for it, costs a fixed amount of memory; a unit that finds its
//! node's queue full is drawn again. Buffers of units sent are kept for the next parked ones: no
//! allocation per request once the queues have reached their size.

use std::collections::VecDeque;

/// Units a node's queue holds at most (memtier keeps up to 1000 keys per connection too).
pub(crate) const PARK_UNITS: usize = 1000;

/// Bytes of units a node's queue holds at most (one unit is always let in).
pub(crate) const PARK_BYTES: usize = 1 << 20;

/// One parked unit: which command of the mix, and its bytes.
#[derive(Debug)]
struct Unit {
    kind: u8,
    bytes: Vec<u8>,
}

/// Per node, the units waiting for one of this worker's connections to it.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    queues: Vec<(VecDeque<Unit>, usize)>,
    spare: Vec<Vec<u8>>,
}

impl Parked {
    /// Keeps `unit` (command `kind`) for `node`; false when its queue is full.
    pub(crate) fn park(&mut self, node: usize, kind: usize, unit: &[u8]) -> bool {
        if self.queues.len() <= node {
            self.queues.resize_with(node + 1, Default::default);
        }
        let (q, bytes) = &mut self.queues[node];
        if !q.is_empty() && (q.len() >= PARK_UNITS || *bytes + unit.len() > PARK_BYTES) {
            return false;
        }
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b.extend_from_slice(unit);
        *bytes += unit.len();
        q.push_back(Unit {
            kind: kind as u8,
            bytes: b,
        });
        true
    }

    /// Appends `node`'s oldest parked unit to `out` and returns its command, if it has one.
    pub(crate) fn take(&mut self, node: usize, out: &mut Vec<u8>) -> Option<usize> {
        let (q, bytes) = self.queues.get_mut(node)?;
        let u = q.pop_front()?;
        *bytes -= u.bytes.len();
        out.extend_from_slice(&u.bytes);
        let kind = usize::from(u.kind);
        if u.bytes.capacity() <= PARK_BYTES {
            // A huge unit's buffer is let go rather than kept for small ones.
            self.spare.push(u.bytes);
        }
        Some(kind)
    }

    /// Units parked for `node`.
    pub(crate) fn len(&self, node: usize) -> usize {
        self.queues.get(node).map_or(0, |q| q.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_wait_in_order_and_the_queue_is_bounded() {
        let mut p = Parked::default();
        assert!(p.park(2, 1, b"first"));
        assert!(p.park(2, 0, b"second"));
        let mut out = Vec::new();
        assert_eq!(p.take(0, &mut out), None);
        assert_eq!(p.take(2, &mut out), Some(1));
        assert_eq!(p.take(2, &mut out), Some(0));
        assert_eq!(out, b"firstsecond");
        assert_eq!(p.take(2, &mut out), None);
        let big = vec![0u8; PARK_BYTES];
        assert!(p.park(1, 0, &big), "one unit always fits");
        assert!(!p.park(1, 0, b"x"), "then the bytes are used up");
        for _ in 0..PARK_UNITS {
            assert!(p.park(3, 0, b"k"));
        }
        assert!(!p.park(3, 0, b"k"));
        assert_eq!(p.len(3), PARK_UNITS);
    }
}
