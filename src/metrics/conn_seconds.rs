//! One connection's measured phase second by second (memtier's `--client-stats`): how many
//! replies of each command kind it got in each second, their summed latency, reply bytes, nil
//! replies and errors. Kept by the worker in the connection's own state only when asked for
//! (`LoadSpec::conn_seconds`), so the usual run pays nothing; a row is added once per second a
//! connection gets a reply, never per request.

/// Command kinds kept apart: a mix's commands by their index (memtier's SET is 0, GET is 1, a
/// WAIT of `--wait-ratio` 2), later ones folded into the last; a test without a mix uses 0.
pub const CONN_KINDS: usize = 4;

/// What one connection's replies came to in one second of the measured phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnSecond {
    /// Seconds since the start of the measured phase.
    pub second: u64,
    /// Replies (errors included) by command kind.
    pub requests: [u64; CONN_KINDS],
    /// Their summed latency from the write of their batch, ns (memtier measures from the send).
    pub latency_ns: [u64; CONN_KINDS],
    /// Their bytes as received.
    pub rx_bytes: [u64; CONN_KINDS],
    /// Their requests' bytes as written (a mix's commands; 0 without a mix, whose batches are
    /// written whole).
    pub tx_bytes: [u64; CONN_KINDS],
    /// What the replies found (memtier's hits and misses): values and nils, an `MGET`'s one per
    /// key.
    pub hits: [u64; CONN_KINDS],
    pub nils: [u64; CONN_KINDS],
    /// Error replies.
    pub errors: [u64; CONN_KINDS],
}

/// One connection's seconds, in order; empty until its first measured reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnSeconds {
    /// The worker (memtier's thread) the connection belongs to.
    pub worker: usize,
    /// The connection's index in its worker (memtier's client).
    pub conn: usize,
    pub rows: Vec<ConnSecond>,
}

/// What one reply was, for [`ConnSeconds::count`].
#[derive(Clone, Copy, Debug)]
pub struct ConnReply {
    /// The mix command it answers (`None` without a mix).
    pub kind: Option<usize>,
    pub latency_ns: u64,
    /// The reply's bytes, and its request's (0 when not known: no mix).
    pub bytes: usize,
    pub tx_bytes: u32,
    /// Values and nils it held (see [`ConnSecond::hits`]).
    pub hits: u64,
    pub misses: u64,
    pub error: bool,
}

impl ConnSeconds {
    /// Counts one reply in `second` (replies of one connection come in time order, so only the
    /// last row can be the reply's second).
    #[inline]
    pub fn count(&mut self, second: u64, r: ConnReply) {
        if self.rows.last().is_none_or(|row| row.second != second) {
            self.rows.push(ConnSecond {
                second,
                ..ConnSecond::default()
            });
        }
        let Some(row) = self.rows.last_mut() else {
            return;
        };
        let k = r.kind.unwrap_or(0).min(CONN_KINDS - 1);
        row.requests[k] += 1;
        row.latency_ns[k] += r.latency_ns;
        row.rx_bytes[k] += r.bytes as u64;
        row.tx_bytes[k] += u64::from(r.tx_bytes);
        row.hits[k] += r.hits;
        row.nils[k] += r.misses;
        row.errors[k] += u64::from(r.error);
    }

    /// Replies of every kind over every second.
    pub fn total_requests(&self) -> u64 {
        self.rows.iter().flat_map(|r| r.requests).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(kind: Option<usize>, nil: bool) -> ConnReply {
        ConnReply {
            kind,
            latency_ns: 1_000,
            bytes: 5,
            tx_bytes: 30,
            hits: u64::from(!nil),
            misses: u64::from(nil),
            error: false,
        }
    }

    #[test]
    fn counts_by_second_and_kind() {
        let mut s = ConnSeconds::default();
        s.count(0, reply(Some(0), false));
        s.count(0, reply(Some(1), true));
        s.count(2, reply(Some(1), false));
        s.count(2, reply(Some(7), false));
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[0].second, 0);
        assert_eq!(s.rows[0].requests, [1, 1, 0, 0]);
        assert_eq!(s.rows[0].nils, [0, 1, 0, 0]);
        assert_eq!(s.rows[1].second, 2);
        // A kind past the last is folded into the last.
        assert_eq!(s.rows[1].requests, [0, 1, 0, 1]);
        assert_eq!(s.rows[1].latency_ns[1], 1_000);
        assert_eq!(s.rows[1].rx_bytes[1], 5);
        assert_eq!(s.rows[1].tx_bytes[1], 30);
        assert_eq!(s.total_requests(), 4);
    }

    #[test]
    fn without_a_mix_counts_as_kind_zero() {
        let mut s = ConnSeconds::default();
        s.count(3, reply(None, false));
        assert_eq!(s.rows[0].requests, [1, 0, 0, 0]);
    }
}
