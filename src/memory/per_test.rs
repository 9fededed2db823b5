//! `--memory-per-key`/`--fill`'s part of each test: the server's memory and keys before a test,
//! and after it once the server finished rehashing, turned into the test record's `memory`
//! block. Read on the control connection, outside the measured phase. A test whose unit writes
//! several data types also has its keyspace sampled by type before and after
//! (`memory::types`), and the block split by type.

use std::time::Duration;

use super::block::{MemoryRecord, TypeCount};
use super::types::{Census, SAMPLE_KEYS};
use super::{SETTLE_LIMIT, Settled, Snapshot, data_type, settled};
use crate::engine::control::{CONTROL_TIMEOUT, ControlConn};
use crate::workload::Template;
use crate::workload::sizes::SizeDist;

/// What was read before a test: the figures, and with `--cluster` a connection to every
/// primary (their figures are added up); for a test writing several types, the census of its
/// db's keys by type.
pub struct Before {
    snap: Snapshot,
    primaries: Option<Vec<ControlConn>>,
    db: u32,
    census: Option<Census>,
}

pub use crate::run::Primaries;

/// The snapshot before a test (called when memory per key is measured), if the servers answer;
/// `dbnum` is `--dbnum`, the db the test writes (a cluster has db 0 only).
pub fn before(
    control: &mut ControlConn,
    cluster: Option<&Primaries<'_>>,
    dbnum: u32,
    template: &Template,
) -> Option<Before> {
    let several = unit_writes(template, None).len() > 1;
    let db = if cluster.is_some() { 0 } else { dbnum };
    let before = snapshot_before(control, cluster, db, several)?;
    let held = db_keys(&before.snap, db);
    if held > 0 {
        // The figures are the change from this point, but a key that was there already and is
        // written again adds no key and little memory: the per-key figures read low (once
        // "RSS -24.1 bytes over the payload", with no word of why).
        eprintln!(
            "respbench: warning: db {db} already held {held} keys before this test: memory per \
             key is measured from there, and keys the test writes again count as no new key; \
             use an empty database (FLUSHDB, or another -n DB) for exact figures"
        );
    }
    Some(before)
}

/// The servers' figures before a test (each primary's, summed, in a cluster).
fn snapshot_before(
    control: &mut ControlConn,
    cluster: Option<&Primaries<'_>>,
    db: u32,
    several: bool,
) -> Option<Before> {
    match cluster {
        None => {
            let snap = Snapshot::take(control)?;
            let census = several
                .then(|| Census::take(control, db, db_keys(&snap, db)))
                .flatten();
            Some(Before {
                snap,
                primaries: None,
                db,
                census,
            })
        }
        Some(connect) => {
            let mut conns = connect().ok()?;
            let snaps: Vec<Snapshot> = conns
                .iter_mut()
                .map(Snapshot::take)
                .collect::<Option<_>>()?;
            let census = several.then(|| census_of(&mut conns, &snaps)).flatten();
            Some(Before {
                snap: Snapshot::sum(&snaps)?,
                primaries: Some(conns),
                db,
                census,
            })
        }
    }
}

/// The test's memory block: the "before" figures against those read once the servers have
/// settled (the slowest node's way of settling is the one named), split by type when the unit
/// writes several. `reply_timeout` is the run's `--timeout`: each read after the test waits at
/// most that, and never more than the settle limit, so a server that stopped answering (a test
/// that ended on it) costs the run a few seconds, not the control connection's 30 s a read.
pub fn after(
    control: &mut ControlConn,
    before: Option<Before>,
    template: &Template,
    sizes: Option<&SizeDist>,
    reply_timeout: Option<Duration>,
) -> Option<MemoryRecord> {
    let within = reply_timeout.map_or(SETTLE_LIMIT, |t| t.min(SETTLE_LIMIT));
    control.set_timeout(within).ok()?;
    let m = read_after(control, before, template, sizes, within);
    // The control connection's own bound again for what follows (its next test's "before").
    let _ = control.set_timeout(CONTROL_TIMEOUT);
    m
}

fn read_after(
    control: &mut ControlConn,
    before: Option<Before>,
    template: &Template,
    sizes: Option<&SizeDist>,
    within: Duration,
) -> Option<MemoryRecord> {
    let Before {
        snap,
        primaries,
        db,
        census: census_before,
    } = before?;
    let mut primaries = primaries;
    for c in primaries.iter_mut().flatten() {
        c.set_timeout(within).ok()?;
    }
    let writes = unit_writes(template, sizes);
    let several = writes.len() > 1;
    let (after, how, census) = match primaries {
        None => {
            let (s, how) = settled(control)?;
            let census = several
                .then(|| Census::take(control, db, db_keys(&s, db)))
                .flatten();
            (s, how, census)
        }
        Some(mut conns) => {
            let mut snaps = Vec::new();
            let mut how = Settled::RehashDone;
            for c in &mut conns {
                let (s, h) = settled(c)?;
                if h != Settled::RehashDone && how != Settled::TimedOut {
                    how = h;
                }
                snaps.push(s);
            }
            let census = several.then(|| census_of(&mut conns, &snaps)).flatten();
            (Snapshot::sum(&snaps)?, how, census)
        }
    };
    let types: Vec<&str> = writes.iter().map(|w| w.0).collect();
    let payload = mean(writes.iter().flat_map(|w| w.1.iter().copied()));
    let mut m = super::record::block(&snap, &after, how, &types.join(", "), payload);
    if let (true, Some(census)) = (several, census) {
        let counts: Vec<TypeCount> = writes
            .iter()
            .map(|(kind, payloads)| TypeCount {
                data_type: (*kind).to_string(),
                keys_before: census_before
                    .as_ref()
                    .map_or(0.0, |c| c.estimated(kind))
                    .round() as u64,
                keys_after: census.estimated(kind).round() as u64,
                payload: mean(payloads.iter().copied()),
                memory_usage: census.types.get(*kind).and_then(|t| t.usage()),
            })
            .collect();
        m.split_by_type(&counts, sample_note(db, census_before.as_ref(), &census));
    }
    Some(m)
}

/// The keys in db `db` of a snapshot.
fn db_keys(s: &Snapshot, db: u32) -> u64 {
    s.keys.get(&db).copied().unwrap_or(0)
}

/// Every primary's census added up (each over its own db 0 keys); `None` if one fails.
fn census_of(conns: &mut [ControlConn], snaps: &[Snapshot]) -> Option<Census> {
    let parts: Vec<Census> = conns
        .iter_mut()
        .zip(snaps)
        .map(|(c, s)| Census::take(c, 0, db_keys(s, 0)))
        .collect::<Option<_>>()?;
    Some(Census::sum(&parts))
}

/// The record's words for how the keys per type were counted.
fn sample_note(db: u32, before: Option<&Census>, after: &Census) -> String {
    let one = |c: &Census| {
        if c.keys == 0 {
            "no key".to_string()
        } else if c.sampled >= c.keys {
            format!("all {} keys", c.keys)
        } else {
            format!("a sample of {} of {} keys", c.sampled, c.keys)
        }
    };
    format!(
        "db {db}: before {}, after {} (SCAN, then TYPE and MEMORY USAGE of each; at most {} \
         per server)",
        before.map_or("not sampled".to_string(), one),
        one(after),
        SAMPLE_KEYS
    )
}

/// The mean of `values`, rounded (0 for none).
fn mean(values: impl Iterator<Item = f64>) -> u64 {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0
    } else {
        (sum / f64::from(n)).round() as u64
    }
}

/// The data types the unit writes, in the order they first appear, each with the key and value
/// bytes of every command of it (its arguments after the name, each value argument at the
/// mean size of `sizes` rather than the largest the template is encoded at). Commands of no
/// known type (reads, a module's commands) count only when the unit has no other, as `other`.
fn unit_writes(t: &Template, sizes: Option<&SizeDist>) -> Vec<(&'static str, Vec<f64>)> {
    let mut known: Vec<(&'static str, Vec<f64>)> = Vec::new();
    let mut other = Vec::new();
    for c in &t.layout {
        let name = c
            .args
            .first()
            .and_then(|r| t.unit.get(r.clone()))
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let mut bytes: f64 = c.args.iter().skip(1).map(|r| r.len() as f64).sum();
        if let Some(d) = sizes {
            // Each data chunk of a value argument in this command is `max` bytes in the
            // template and the drawn size on the wire: on average, the mean.
            let shrink = d.max() as f64 - d.mean();
            for v in t.values.iter().filter(|v| c.bytes.contains(&v.body.start)) {
                bytes -= v.data_at.len() as f64 * shrink;
            }
        }
        match data_type(&name) {
            "other" => other.push(bytes),
            kind => match known.iter_mut().find(|k| k.0 == kind) {
                Some(k) => k.1.push(bytes),
                None => known.push((kind, vec![bytes])),
            },
        }
    }
    if known.is_empty() {
        // Only the first command, as a unit of one unknown command is written per key.
        other.truncate(1);
        known.push(("other", other));
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PayloadGenerator;
    use crate::workload::template::parse_custom_command;

    fn template(line: &str, size: usize) -> Template {
        let words: Vec<Vec<u8>> = line
            .split_whitespace()
            .map(|w| w.as_bytes().to_vec())
            .collect();
        let items =
            parse_custom_command(&words, None, size, &mut PayloadGenerator::default()).unwrap();
        Template::encode(&items, true)
    }

    #[test]
    fn a_value_counts_at_the_mean_of_its_sizes() {
        // SET key:<12 digits> <value>: 4 + 12 key bytes, and the value.
        let t = template("SET key:__rand_int__ __data__", 100);
        assert_eq!(unit_writes(&t, None), [("string", vec![116.0])]);
        let range = SizeDist::Range { min: 10, max: 100 };
        let t = template("SET key:__rand_int__ __data__", range.max());
        assert_eq!(
            unit_writes(&t, Some(&range)),
            [("string", vec![16.0 + 55.0])]
        );
        let list = SizeDist::list(&[(10, 3), (90, 1)]).unwrap();
        let t = template("SET key:__rand_int__ __data__", list.max());
        assert_eq!(
            unit_writes(&t, Some(&list)),
            [("string", vec![16.0 + 30.0])]
        );
    }

    #[test]
    fn each_written_type_has_its_commands_and_reads_do_not_count() {
        let t = template(
            "GET k ; SET s:__rand_int__ __data__ ; HSET h:__rand_int__ f __data__ ; SET x y",
            10,
        );
        assert_eq!(
            unit_writes(&t, None),
            [
                ("string", vec![2.0 + 12.0 + 10.0, 2.0]),
                ("hash", vec![2.0 + 12.0 + 1.0 + 10.0])
            ]
        );
        let t = template("GET k ; STRLEN k", 10);
        assert_eq!(unit_writes(&t, None), [("other", vec![1.0])]);
        assert_eq!(mean([24.0, 2.0].into_iter()), 13);
    }
}
