//! Memory per key (issue 26 item 2): the server's `INFO memory` and `INFO keyspace` read before
//! and after a test that writes, the "after" read only once the server has finished rehashing
//! its tables (a rehash keeps two tables until it ends, so a figure read during one counts
//! buckets that are about to be freed).
//!
//! Owns: the snapshot (memory figures, keys per db, allocator and version), waiting for the
//! rehash to end, which data type a command writes, the sample of a db's keys by type for a test
//! that wrote several (`types`), the figures read around each test of the benchmark
//! (`per_test.rs`: `run` calls it, as memory per key is an option of the benchmark, not a mode
//! of its own). Must not: run the test (the engine does), or plan it (`--fill` is a load of the
//! engine's, `plan/fill.rs`: `plan` is below the modes, as `record` reads it), or format
//! anything (`block.rs` turns two snapshots into the record's block, `report` prints it).

pub mod block;
pub mod cli;
mod kind;
mod merge;
pub mod per_test;
pub mod probe;
pub mod record;
pub mod report;
mod tables;
pub mod types;

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant};

use crate::engine::control::ControlConn;
use crate::watch::fetch_info;
use crate::watch::info::Info;

/// How long to wait for the server to finish rehashing before reading anyway (and saying so).
pub const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// The pause between reads while waiting.
const SETTLE_STEP: Duration = Duration::from_millis(100);

/// The server's memory and keys at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub used_memory: u64,
    pub used_memory_rss: u64,
    /// `used_memory_dataset`, where the server gives it.
    pub used_memory_dataset: Option<u64>,
    /// Keys per db (`INFO keyspace`: `db0:keys=…`).
    pub keys: BTreeMap<u32, u64>,
    /// `mem_allocator` (`jemalloc-5.3.0`, `libc`).
    pub allocator: String,
    /// `valkey 9.1.2` or `redis 7.0.15`.
    pub version: String,
    /// `mem_overhead_db_hashtable_rehashing` where the server reports it (Valkey, Redis 7.4+):
    /// bytes held by tables being rehashed; 0 when none is.
    pub rehashing_bytes: Option<u64>,
}

impl Snapshot {
    /// Reads `INFO server memory keyspace`; `None` when the server refuses or does not answer.
    pub fn take(conn: &mut ControlConn) -> Option<Snapshot> {
        let text = fetch_info(conn, &["server", "memory", "keyspace"]).ok()?;
        Self::parse(&text)
    }

    /// The snapshot in `INFO` text; `None` without `used_memory`.
    pub fn parse(text: &str) -> Option<Snapshot> {
        let info = Info::new(text);
        let version = match info.get("valkey_version") {
            Some(v) => format!("valkey {v}"),
            None => format!("redis {}", info.get("redis_version").unwrap_or("?")),
        };
        let keys = text
            .lines()
            .filter_map(|l| {
                let (db, rest) = l.trim().split_once(':')?;
                let n: u32 = db.strip_prefix("db")?.parse().ok()?;
                let keys = rest
                    .split(',')
                    .find_map(|kv| kv.strip_prefix("keys="))?
                    .parse()
                    .ok()?;
                Some((n, keys))
            })
            .collect();
        Some(Snapshot {
            used_memory: info.u64("used_memory")?,
            used_memory_rss: info.u64("used_memory_rss").unwrap_or(0),
            used_memory_dataset: info.u64("used_memory_dataset"),
            keys,
            allocator: info.get("mem_allocator").unwrap_or("").to_string(),
            version,
            rehashing_bytes: info.u64("mem_overhead_db_hashtable_rehashing"),
        })
    }

    /// Keys in every db.
    pub fn total_keys(&self) -> u64 {
        self.keys.values().sum()
    }

    /// The figures of several servers together (a cluster's primaries): memory and keys added;
    /// the allocator and version are the first's, or each distinct one joined with ` | `.
    pub fn sum(snaps: &[Snapshot]) -> Option<Snapshot> {
        let (first, rest) = snaps.split_first()?;
        let mut out = first.clone();
        for s in rest {
            out.used_memory += s.used_memory;
            out.used_memory_rss += s.used_memory_rss;
            out.used_memory_dataset = out
                .used_memory_dataset
                .zip(s.used_memory_dataset)
                .map(|(a, b)| a + b);
            out.rehashing_bytes = out
                .rehashing_bytes
                .zip(s.rehashing_bytes)
                .map(|(a, b)| a + b);
            for (db, n) in &s.keys {
                *out.keys.entry(*db).or_default() += n;
            }
            for (mine, theirs) in [
                (&mut out.allocator, &s.allocator),
                (&mut out.version, &s.version),
            ] {
                if !mine.split(" | ").any(|v| v == theirs) {
                    mine.push_str(" | ");
                    mine.push_str(theirs);
                }
            }
        }
        Some(out)
    }
}

/// How the "after" snapshot was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The server said no table is being rehashed (`mem_overhead_db_hashtable_rehashing:0`).
    RehashDone,
    /// The server does not say (Redis before 7.4): `used_memory` stayed the same over two reads
    /// 100 ms apart (a rehash frees its old table when it ends, which changes it).
    Steady,
    /// Still rehashing (or changing) after [`SETTLE_LIMIT`]: read anyway.
    TimedOut,
}

impl Settled {
    /// The record's and the report's words.
    pub fn name(self) -> &'static str {
        match self {
            Settled::RehashDone => "after rehashing finished",
            Settled::Steady => {
                "after used_memory held steady for 100 ms (the server does not report rehashing)"
            }
            Settled::TimedOut => "still rehashing after 5 s: read anyway",
        }
    }
}

/// The snapshot once the server has finished rehashing (or [`SETTLE_LIMIT`] passed); `None`
/// when `INFO` fails.
pub fn settled(conn: &mut ControlConn) -> Option<(Snapshot, Settled)> {
    let deadline = Instant::now() + SETTLE_LIMIT;
    let mut last = Snapshot::take(conn)?;
    loop {
        if last.rehashing_bytes == Some(0) {
            return Some((last, Settled::RehashDone));
        }
        if Instant::now() >= deadline {
            return Some((last, Settled::TimedOut));
        }
        thread::sleep(SETTLE_STEP);
        let next = Snapshot::take(conn)?;
        if last.rehashing_bytes.is_none() && next.used_memory == last.used_memory {
            return Some((next, Settled::Steady));
        }
        last = next;
    }
}

/// The data type a command writes (`string` for `SET`, `hash` for `HSET`…); `other` for a
/// command this table does not know.
pub fn data_type(command: &str) -> &'static str {
    match command.to_ascii_uppercase().as_str() {
        "SET" | "MSET" | "SETNX" | "SETEX" | "PSETEX" | "GETSET" | "INCR" | "INCRBY" | "DECR"
        | "DECRBY" | "APPEND" | "SETRANGE" | "INCRBYFLOAT" | "MSETNX" => "string",
        "LPUSH" | "RPUSH" | "LPUSHX" | "RPUSHX" | "LINSERT" => "list",
        "SADD" | "SMOVE" => "set",
        "HSET" | "HMSET" | "HSETNX" | "HINCRBY" => "hash",
        "ZADD" | "ZINCRBY" => "zset",
        "XADD" => "stream",
        "PFADD" => "hyperloglog",
        "GEOADD" => "geo",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_memory_keys_allocator_and_version() {
        let text = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n\
                    # Memory\r\nused_memory:1116480\r\nused_memory_rss:6447104\r\n\
                    used_memory_dataset:117088\r\nmem_allocator:libc\r\n\
                    mem_overhead_db_hashtable_rehashing:0\r\n\
                    # Keyspace\r\ndb0:keys=60000,expires=0,avg_ttl=0\r\ndb3:keys=5,expires=1\r\n";
        let s = Snapshot::parse(text).unwrap();
        assert_eq!(s.used_memory, 1116480);
        assert_eq!(s.used_memory_rss, 6447104);
        assert_eq!(s.used_memory_dataset, Some(117088));
        assert_eq!(s.allocator, "libc");
        assert_eq!(s.version, "valkey 9.1.2");
        assert_eq!(s.rehashing_bytes, Some(0));
        assert_eq!(s.keys.get(&0), Some(&60000));
        assert_eq!(s.total_keys(), 60005);
        let redis = Snapshot::parse(
            "redis_version:7.0.15\r\nused_memory:10\r\nmem_allocator:jemalloc-5.3.0\r\n",
        )
        .unwrap();
        assert_eq!(redis.version, "redis 7.0.15");
        assert_eq!(redis.rehashing_bytes, None);
        assert_eq!(redis.total_keys(), 0);
        assert!(Snapshot::parse("nothing:1\r\n").is_none());
    }

    #[test]
    fn a_clusters_snapshots_add_up() {
        let node = |mem, keys, alloc: &str| {
            let mut s = Snapshot {
                used_memory: mem,
                used_memory_rss: mem * 2,
                used_memory_dataset: Some(mem / 2),
                allocator: alloc.into(),
                version: "valkey 9.1.2".into(),
                ..Snapshot::default()
            };
            s.keys.insert(0, keys);
            s
        };
        let sum = Snapshot::sum(&[node(100, 5, "libc"), node(300, 7, "jemalloc-5.3.0")]).unwrap();
        assert_eq!(sum.used_memory, 400);
        assert_eq!(sum.used_memory_rss, 800);
        assert_eq!(sum.used_memory_dataset, Some(200));
        assert_eq!(sum.total_keys(), 12);
        assert_eq!(sum.allocator, "libc | jemalloc-5.3.0");
        assert_eq!(sum.version, "valkey 9.1.2");
        assert!(Snapshot::sum(&[]).is_none());
    }

    #[test]
    fn commands_name_the_type_they_write() {
        assert_eq!(data_type("set"), "string");
        assert_eq!(data_type("HSET"), "hash");
        assert_eq!(data_type("lpush"), "list");
        assert_eq!(data_type("GET"), "other");
    }
}
