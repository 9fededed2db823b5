//! Which data types a db's keys are, for a test that wrote several (a unit `SET … ; HSET …`).
//! `INFO keyspace` and `DBSIZE` count keys, not keys per type, so the keys a test added cannot
//! be split by type from them. Counting the commands of each type would assume each wrote a new
//! key, which a command that updates an existing key, one refused with `WRONGTYPE`, or two
//! commands sharing a key (`__rand_1st__`) all break. So the server is asked: a sample of its
//! keys (`SCAN` from cursor 0 until [`SAMPLE_KEYS`] keys; the whole db when it holds fewer, which
//! is then a census), each key's `TYPE` and `MEMORY USAGE`, and the db's keys of each type
//! estimated as its share of the sample. `SCAN` walks the table's buckets, where keys lie by
//! their hash, so the first keys it returns are an even sample of the db whatever their names.
//!
//! Owns: taking the sample (bounded: at most [`SCAN_CALLS`] `SCAN`s and [`SAMPLE_KEYS`] keys,
//! pipelined in chunks) and adding up several servers'. Must not: decide when to sample (the
//! run does, only for a test that wrote several types) or apportion memory (`block.rs`).

use std::collections::BTreeMap;

use resp::Value;

use crate::engine::control::ControlConn;

/// At most this many keys are sampled per server (the whole db when it holds fewer).
pub const SAMPLE_KEYS: usize = 2000;
/// `SCAN`'s `COUNT` hint per call.
const SCAN_COUNT: &str = "500";
/// At most this many `SCAN` calls per sample (a sparse table returns few keys per call).
const SCAN_CALLS: usize = 64;
/// Keys per pipelined round of `TYPE` and `MEMORY USAGE`.
const CHUNK: usize = 250;

/// One server's (or several added up) sample of a db's keys by type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Census {
    /// Keys sampled.
    pub sampled: u64,
    /// Keys in the db (`INFO keyspace`) the sample stands for.
    pub keys: u64,
    pub types: BTreeMap<String, TypeTally>,
}

/// One type's part of a [`Census`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeTally {
    /// Sampled keys of this type.
    pub sampled: u64,
    /// The db's keys of this type: its share of the sample times the db's keys.
    pub estimated: f64,
    /// `MEMORY USAGE` of the sampled keys of this type that answered: summed, and how many.
    pub usage_sum: u64,
    pub usage_n: u64,
}

impl TypeTally {
    /// The mean `MEMORY USAGE` of this type's sampled keys, where any answered.
    pub fn usage(&self) -> Option<f64> {
        (self.usage_n > 0).then(|| self.usage_sum as f64 / self.usage_n as f64)
    }
}

impl Census {
    /// Samples db `db` of the server behind `conn`, which holds `keys` keys (none asked when
    /// it holds none). The connection is left on db 0, where the control connection works.
    /// `None` when the server refuses `SCAN` or `TYPE` or stops answering.
    pub fn take(conn: &mut ControlConn, db: u32, keys: u64) -> Option<Census> {
        let mut out = Census {
            keys,
            ..Census::default()
        };
        if keys == 0 {
            return Some(out);
        }
        let select = |conn: &mut ControlConn, db: u32| -> Option<()> {
            let v = conn.call(&[b"SELECT".to_vec(), db.to_string().into_bytes()]);
            matches!(v, Ok(Value::SimpleString(_))).then_some(())
        };
        if db != 0 {
            select(conn, db)?;
        }
        let sample = sample_keys(conn);
        let tallied = sample.and_then(|k| out.tally(conn, &k));
        if db != 0 {
            select(conn, 0)?;
        }
        tallied?;
        for t in out.types.values_mut() {
            t.estimated = keys as f64 * t.sampled as f64 / out.sampled.max(1) as f64;
        }
        Some(out)
    }

    /// Each key's `TYPE` and `MEMORY USAGE`, added to the tallies.
    fn tally(&mut self, conn: &mut ControlConn, keys: &[Vec<u8>]) -> Option<()> {
        let mut bytes = Vec::new();
        for chunk in keys.chunks(CHUNK) {
            bytes.clear();
            for k in chunk {
                resp::encode_command(&mut bytes, &[b"TYPE".as_slice(), k]);
                resp::encode_command(&mut bytes, &[b"MEMORY".as_slice(), b"USAGE", k]);
            }
            let replies = conn.call_raw(&bytes, 2 * chunk.len()).ok()?;
            for pair in replies.chunks(2) {
                let Some(kind) = pair[0].as_str().filter(|t| *t != "none") else {
                    // A key gone since SCAN named it, or TYPE refused: not a sample.
                    continue;
                };
                let t = self.types.entry(kind.to_string()).or_default();
                t.sampled += 1;
                self.sampled += 1;
                if let Value::Integer(n) = pair[1] {
                    t.usage_sum += n.max(0) as u64;
                    t.usage_n += 1;
                }
            }
        }
        (self.sampled > 0).then_some(())
    }

    /// Several servers' censuses as one (a cluster's primaries): counts and estimates added.
    pub fn sum(parts: &[Census]) -> Census {
        let mut out = Census::default();
        for p in parts {
            out.sampled += p.sampled;
            out.keys += p.keys;
            for (kind, t) in &p.types {
                let o = out.types.entry(kind.clone()).or_default();
                o.sampled += t.sampled;
                o.estimated += t.estimated;
                o.usage_sum += t.usage_sum;
                o.usage_n += t.usage_n;
            }
        }
        out
    }

    /// The estimated keys of `kind` (0 when none was sampled).
    pub fn estimated(&self, kind: &str) -> f64 {
        self.types.get(kind).map_or(0.0, |t| t.estimated)
    }
}

/// Up to [`SAMPLE_KEYS`] keys, from `SCAN 0` on (bounded by [`SCAN_CALLS`]).
fn sample_keys(conn: &mut ControlConn) -> Option<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    let mut cursor = b"0".to_vec();
    for _ in 0..SCAN_CALLS {
        let reply = conn
            .call(&[b"SCAN".as_slice(), &cursor, b"COUNT", SCAN_COUNT.as_bytes()])
            .ok()?;
        let (next, page) = scan_page(reply)?;
        keys.extend(page);
        cursor = next;
        if cursor == b"0" || keys.len() >= SAMPLE_KEYS {
            break;
        }
    }
    keys.truncate(SAMPLE_KEYS);
    Some(keys)
}

/// A `SCAN` reply's next cursor and keys; `None` for anything else (an error reply).
fn scan_page(reply: Value) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let Value::Array(mut parts) = reply else {
        return None;
    };
    if parts.len() != 2 {
        return None;
    }
    let keys = match parts.pop()? {
        Value::Array(k) | Value::Set(k) => k,
        _ => return None,
    };
    let cursor = match parts.pop()? {
        Value::BulkString(c) | Value::SimpleString(c) => c,
        _ => return None,
    };
    let keys = keys
        .into_iter()
        .filter_map(|k| match k {
            Value::BulkString(b) | Value::SimpleString(b) => Some(b),
            _ => None,
        })
        .collect();
    Some((cursor, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_page_is_its_cursor_and_keys() {
        let reply = Value::Array(vec![
            Value::BulkString(b"17".to_vec()),
            Value::Array(vec![
                Value::BulkString(b"a".to_vec()),
                Value::BulkString(b"b".to_vec()),
            ]),
        ]);
        assert_eq!(
            scan_page(reply),
            Some((b"17".to_vec(), vec![b"a".to_vec(), b"b".to_vec()]))
        );
        assert_eq!(scan_page(Value::Error(b"ERR no".to_vec())), None);
    }

    #[test]
    fn censuses_add_up_and_estimate_by_share() {
        let node = |s: u64, h: u64, keys: u64| {
            let mut c = Census {
                sampled: s + h,
                keys,
                ..Census::default()
            };
            for (kind, n, usage) in [("string", s, 100), ("hash", h, 200)] {
                c.types.insert(
                    kind.into(),
                    TypeTally {
                        sampled: n,
                        estimated: keys as f64 * n as f64 / (s + h) as f64,
                        usage_sum: n * usage,
                        usage_n: n,
                    },
                );
            }
            c
        };
        let sum = Census::sum(&[node(30, 10, 400), node(10, 30, 800)]);
        assert_eq!((sum.sampled, sum.keys), (80, 1200));
        assert_eq!(sum.estimated("string"), 300.0 + 200.0);
        assert_eq!(sum.estimated("hash"), 100.0 + 600.0);
        assert_eq!(sum.estimated("list"), 0.0);
        assert_eq!(sum.types["hash"].usage(), Some(200.0));
    }
}
