//! The schedule: each entry of the trace becomes a command on a connection at an intended send
//! time, or a counted skip. One pass over the trace (per `--loop` lap), entry by entry, so a
//! trace of any length is scheduled in bounded memory; `--dry-run` and the live replay both
//! drive this one type, so the schedule a test reads is the one that is sent.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::trace::Entry;

use super::block::Filtered;
use super::filter::{Name, name_of, prefix_keys, selected_db, skip_reason, strip_hello_auth};
use super::options::{ReplayArgs, Speed};

/// The most command names counted apart; later names are counted as `OTHER`.
const MAX_NAMES: usize = 64;

/// The name index of a command the replay adds (a `SELECT`): no name, never measured.
pub const ADDED: u16 = u16::MAX;

/// One command to send.
pub struct Send<'a> {
    /// The entry's number in the trace (`0` for a `SELECT` the replay adds).
    pub seq: u64,
    /// Intended send time in ns from the replay's start (`None` at `--speed max`).
    pub due_ns: Option<u64>,
    pub conn: u32,
    /// `--cluster`: the node it goes to (`route.rs`); 0 otherwise (the one target).
    pub node: u16,
    pub db: u32,
    /// Outside `--warmup-from`'s prefix.
    pub measured: bool,
    /// Index of its name in [`Scheduler::names`].
    pub name: u16,
    pub args: &'a [Vec<u8>],
}

/// Where the schedule goes: printed (`--dry-run`) or sent.
pub trait Sink {
    fn send(&mut self, s: &Send<'_>, sched: &Scheduler) -> Result<(), String>;
    fn skip(&mut self, seq: u64, reason: &str);
    /// Waits until `s` is about to be due (the live replay holds a command back until shortly
    /// before its time), so what is decided about it next — its node, under `--cluster` — is
    /// decided with what is known then, not when the trace was read.
    fn wait(&mut self, _s: &Send<'_>, _sched: &Scheduler) -> Result<(), String> {
        Ok(())
    }
}

/// What the schedule did with the trace, for the report and the record.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// Entries read (every lap).
    pub entries: u64,
    pub sent: u64,
    /// Those not sent, by why, and the `SELECT`s added: as the record's block has them.
    pub filtered: Filtered,
    /// Quiet stretches longer than `--gap-warn` (first lap), and the trace time `--max-gap`
    /// took out of the first lap.
    pub long_gaps: u64,
    pub gap_cut_us: u64,
}

/// Long gaps named one by one on stderr; after these, only their number (a trace of many idle
/// hours should not bury the report).
const GAPS_NAMED: u64 = 10;

/// Quiet stretches of the trace: how long the last one was cut (`--max-gap`) and which are
/// named (`--gap-warn`). Why at all: a replay keeps the trace's timing, so a trace with a gap of
/// hours (a capture left open overnight, a clock step) would sleep through it without a word.
struct Gaps {
    max_us: Option<u64>,
    warn_us: u64,
    /// The previous in-window entry's offset (trace time), this lap.
    last_rel: Option<u64>,
    /// Trace time taken out by `--max-gap` so far this lap.
    cut_us: u64,
}

impl Gaps {
    /// The entry `seq` at `rel` µs into the trace: its offset with the gaps before it cut,
    /// naming the gap before it when it is long (`name`: the first lap only).
    fn place(&mut self, rel: u64, seq: u64, counts: &mut Counts, name: bool) -> u64 {
        let gap = self.last_rel.map_or(0, |last| rel.saturating_sub(last));
        self.last_rel = Some(rel);
        let cut = self.max_us.map_or(0, |max| gap.saturating_sub(max));
        self.cut_us += cut;
        if name {
            counts.gap_cut_us += cut;
            if gap > self.warn_us {
                counts.long_gaps += 1;
                if counts.long_gaps <= GAPS_NAMED {
                    let what = match self.max_us {
                        Some(max) if cut > 0 => {
                            format!("shortened to {} (--max-gap)", secs(max))
                        }
                        _ => "the replay waits through it (--max-gap shortens it)".into(),
                    };
                    eprintln!(
                        "respbench replay: warning: a gap of {} in the trace before entry {seq} \
                         ({} into it): {what}",
                        secs(gap),
                        secs(rel)
                    );
                } else if counts.long_gaps == GAPS_NAMED + 1 {
                    eprintln!(
                        "respbench replay: warning: more gaps longer than {} follow (not named; \
                         the report counts them)",
                        secs(self.warn_us)
                    );
                }
            }
        }
        rel - self.cut_us
    }
}

/// µs as seconds for a message: `12.5 s`.
fn secs(us: u64) -> String {
    format!("{} s", us as f64 / 1e6)
}

/// The schedule's state across the trace's entries and laps.
pub struct Scheduler {
    speed: Speed,
    start_us: u64,
    end_us: Option<u64>,
    warmup_us: u64,
    fold: Option<u32>,
    shard: Option<(u64, u64)>,
    allow: Vec<String>,
    prefix: Option<Vec<u8>>,
    /// The first entry's time: offsets are from it.
    first_us: Option<i64>,
    gaps: Gaps,
    /// The current lap and where it starts (µs into the schedule).
    lap: u32,
    lap_start_us: u64,
    /// The largest offset seen in the window (the trace's span).
    pub span_us: u64,
    clients: HashMap<String, u32, Fnv>,
    /// `--shard`: the clients of every shard (the record's `options.clients`, the same in each).
    all_clients: HashSet<String>,
    /// Each connection's database as the schedule left it.
    conn_db: Vec<u32>,
    pub names: Vec<String>,
    /// Entries of each name in the whole trace (every shard's): the record's mix weights.
    pub name_counts: Vec<u64>,
    name_index: HashMap<String, u16, Fnv>,
    pub counts: Counts,
    args: Vec<Vec<u8>>,
    scratch: Vec<usize>,
    select: [Vec<u8>; 2],
}

/// FNV-1a: a stable hash of a client's name, so `--shard` puts a client in the same share in
/// every process and every run.
pub fn client_hash(client: &str) -> u64 {
    fnv1a(FNV_BASIS, client.as_bytes())
}

const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The hasher of the maps looked up once per entry (its client's connection, its command's
/// name): FNV-1a. Why not std's SipHash: its defence against chosen keys buys nothing against
/// one's own trace, and it was a tenth of a replayed command's cost (`docs/performance.md`).
type Fnv = BuildHasherDefault<FnvHasher>;

struct FnvHasher(u64);

impl Default for FnvHasher {
    fn default() -> Self {
        Self(FNV_BASIS)
    }
}

impl Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv1a(self.0, bytes);
    }
}

impl Scheduler {
    pub fn new(a: &ReplayArgs) -> Self {
        Self {
            speed: a.speed,
            start_us: a.start_us,
            end_us: a.end_us,
            warmup_us: a.warmup_us,
            fold: a.connections,
            shard: a.shard,
            allow: a.allow.clone(),
            prefix: a.key_prefix.clone(),
            first_us: None,
            gaps: Gaps {
                max_us: a.max_gap_us,
                warn_us: a.gap_warn_us,
                last_rel: None,
                cut_us: 0,
            },
            lap: 0,
            lap_start_us: 0,
            span_us: 0,
            clients: HashMap::default(),
            all_clients: HashSet::new(),
            conn_db: Vec::new(),
            names: Vec::new(),
            name_counts: Vec::new(),
            name_index: HashMap::default(),
            counts: Counts::default(),
            args: Vec::new(),
            scratch: Vec::new(),
            select: [b"SELECT".to_vec(), Vec::new()],
        }
    }

    /// Connections the schedule has used so far.
    pub fn connections(&self) -> u32 {
        self.conn_db.len() as u32
    }

    /// Distinct clients of the trace scheduled so far.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// The connections of the whole replay: `--connections`, else one per client of the trace
    /// (of every shard's, under `--shard`).
    pub fn whole_connections(&self) -> u32 {
        let clients = if self.shard.is_some() {
            self.all_clients.len()
        } else {
            self.clients.len()
        };
        self.fold
            .unwrap_or(clients as u32)
            .min(clients as u32)
            .max(1)
    }

    /// Starts the next `--loop` lap: it begins 1 µs after the previous lap's span.
    pub fn next_lap(&mut self) {
        self.lap += 1;
        self.lap_start_us = u64::from(self.lap) * (self.span_us + 1);
        self.gaps.last_rel = None;
        self.gaps.cut_us = 0;
    }

    fn conn_of(&mut self, client: &str) -> u32 {
        if let Some(&c) = self.clients.get(client) {
            return c;
        }
        let n = self.clients.len() as u32;
        let c = match self.fold {
            Some(f) => n % f,
            None => n,
        };
        self.clients.insert(client.to_string(), c);
        if c as usize >= self.conn_db.len() {
            self.conn_db.push(0);
        }
        c
    }

    fn name_of(&mut self, args: &[Vec<u8>]) -> u16 {
        // Looked up without an allocation: a name is new only a few times in a trace.
        if let Some(&i) = Name::of(args).as_str().and_then(|n| self.name_index.get(n)) {
            return i;
        }
        let name = name_of(args);
        if let Some(&i) = self.name_index.get(&name) {
            return i;
        }
        let name = if self.names.len() + 1 >= MAX_NAMES {
            "OTHER".to_string()
        } else {
            name
        };
        let i = match self.name_index.get(&name) {
            Some(&i) => i,
            None => {
                self.names.push(name.clone());
                (self.names.len() - 1) as u16
            }
        };
        self.name_index.insert(name, i);
        i
    }

    /// A `SELECT` the trace does not have, before an entry in another database than its
    /// connection's: not measured (the figures are the trace's commands').
    fn add_select(
        &mut self,
        conn: u32,
        db: u32,
        due_ns: Option<u64>,
        sink: &mut impl Sink,
    ) -> Result<(), String> {
        self.select[1].clear();
        self.select[1].extend_from_slice(db.to_string().as_bytes());
        let select = std::mem::take(&mut self.select);
        let s = Send {
            seq: 0,
            due_ns,
            conn,
            node: 0,
            db,
            measured: false,
            name: ADDED,
            args: &select,
        };
        let sent = sink.send(&s, self);
        self.select = select;
        sent?;
        self.counts.filtered.selects_added += 1;
        self.conn_db[conn as usize] = db;
        Ok(())
    }

    /// Schedules one entry: sends it through `sink`, or counts why not.
    pub fn entry(&mut self, e: &Entry, sink: &mut impl Sink) -> Result<(), String> {
        self.counts.entries += 1;
        let first = *self.first_us.get_or_insert(e.time_us);
        let rel = (e.time_us - first).max(0) as u64;
        if rel < self.start_us || self.end_us.is_some_and(|end| rel >= end) {
            self.counts.filtered.outside_window += 1;
            return Ok(());
        }
        let offset = self.gaps.place(rel, e.seq, &mut self.counts, self.lap == 0) - self.start_us;
        if self.lap == 0 {
            self.span_us = self.span_us.max(offset);
        }
        if e.from_script() {
            self.counts.filtered.from_scripts += 1;
            return Ok(());
        }
        let Some(args) = e.args() else {
            self.counts.filtered.raw += 1;
            sink.skip(e.seq, "raw");
            return Ok(());
        };
        if let Some(reason) = skip_reason(args, &self.allow) {
            sink.skip(e.seq, &reason);
            *self.counts.filtered.skipped.entry(reason).or_default() += 1;
            return Ok(());
        }
        // Named before the shard is chosen, so every shard has the same command list in the
        // same order (`respbench merge` adds the shards' per-command figures by it).
        let name = self.name_of(args);
        if self.name_counts.len() <= name as usize {
            self.name_counts.resize(name as usize + 1, 0);
        }
        self.name_counts[name as usize] += 1;
        if self.shard.is_some() && !self.all_clients.contains(e.client.as_str()) {
            self.all_clients.insert(e.client.clone());
        }
        if let Some((i, n)) = self.shard
            && client_hash(&e.client) % n != i
        {
            self.counts.filtered.other_shards += 1;
            return Ok(());
        }
        let conn = self.conn_of(&e.client);
        let at = self.lap_start_us + offset;
        let due_ns = self.speed.due_ns(at);
        let measured = self.lap > 0 || offset >= self.warmup_us;
        // MONITOR shows a SELECT with the database it switched to: it needs no SELECT before.
        let select_to = selected_db(args);
        if select_to.is_none() && self.conn_db[conn as usize] != e.db {
            self.add_select(conn, e.db, due_ns, sink)?;
        }
        if let Some(db) = select_to {
            self.conn_db[conn as usize] = db;
        }
        // Copied only to be rewritten (`--key-prefix`, a `HELLO`'s `AUTH`): most entries are
        // sent as the trace has them.
        let rewrite = self.prefix.is_some()
            || args
                .first()
                .is_some_and(|a| a.eq_ignore_ascii_case(b"HELLO"));
        let mut copy = Vec::new();
        if rewrite {
            copy = std::mem::take(&mut self.args);
            copy.resize_with(args.len(), Vec::new);
            for (to, from) in copy.iter_mut().zip(args) {
                to.clear();
                to.extend_from_slice(from);
            }
            strip_hello_auth(&mut copy);
            if let Some(p) = &self.prefix {
                prefix_keys(&mut copy, p, &mut self.scratch);
            }
        }
        let s = Send {
            seq: e.seq,
            due_ns,
            conn,
            node: 0,
            db: e.db,
            measured,
            name,
            args: if rewrite { &copy } else { args },
        };
        let sent = sink.send(&s, self);
        if rewrite {
            self.args = copy;
        }
        sent?;
        self.counts.sent += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Payload;

    /// What the schedule sent, as `(seq, due_ns, conn, name, measured)`, and what it skipped.
    #[derive(Default)]
    struct Seen {
        sent: Vec<(u64, Option<u64>, u32, String, bool)>,
        skipped: Vec<(u64, String)>,
    }

    impl Sink for Seen {
        fn send(&mut self, s: &Send<'_>, _: &Scheduler) -> Result<(), String> {
            let words: Vec<String> = s
                .args
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            self.sent
                .push((s.seq, s.due_ns, s.conn, words.join(" "), s.measured));
            Ok(())
        }
        fn skip(&mut self, seq: u64, reason: &str) {
            self.skipped.push((seq, reason.to_string()));
        }
    }

    fn entry(seq: u64, ms: i64, client: &str, db: u32, words: &[&str]) -> Entry {
        Entry {
            seq,
            time_us: 1_700_000_000_000_000 + ms * 1000,
            client: client.into(),
            db,
            payload: Payload::Command(words.iter().map(|w| w.as_bytes().to_vec()).collect()),
        }
    }

    fn trace() -> Vec<Entry> {
        vec![
            entry(1, 0, "a", 0, &["SET", "k", "1"]),
            entry(2, 10, "b", 1, &["SELECT", "1"]),
            entry(3, 20, "b", 1, &["GET", "k"]),
            entry(4, 30, "lua", 0, &["SET", "x", "y"]),
            entry(5, 40, "a", 0, &["FLUSHALL"]),
            entry(6, 1040, "c", 2, &["INCR", "n"]),
        ]
    }

    fn run(args: &[&str], laps: u32) -> (Seen, Scheduler) {
        let mut argv: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        argv.push("t".into());
        let a = crate::replay::options::parse(argv).unwrap().unwrap();
        let mut s = Scheduler::new(&a);
        let mut seen = Seen::default();
        for lap in 0..laps {
            if lap > 0 {
                s.next_lap();
            }
            for e in trace() {
                s.entry(&e, &mut seen).unwrap();
            }
        }
        (seen, s)
    }

    #[test]
    fn offsets_scale_by_speed_and_scripts_and_destructive_commands_are_not_sent() {
        let (seen, s) = run(&["--speed", "2", "--key-prefix", "p:"], 1);
        let due: Vec<Option<u64>> = seen.sent.iter().map(|x| x.1).collect();
        // c's INCR needs a SELECT 2 first (its connection starts in db 0), at its own time.
        assert_eq!(
            due,
            [0, 5_000_000, 10_000_000, 520_000_000, 520_000_000].map(Some)
        );
        let words: Vec<&str> = seen.sent.iter().map(|x| x.3.as_str()).collect();
        assert_eq!(
            words,
            ["SET p:k 1", "SELECT 1", "GET p:k", "SELECT 2", "INCR p:n"]
        );
        assert_eq!(seen.skipped, [(5, "FLUSHALL".to_string())]);
        assert_eq!(s.counts.filtered.from_scripts, 1);
        assert_eq!(s.counts.filtered.selects_added, 1);
        assert_eq!(s.connections(), 3);
        assert_eq!(s.span_us, 1_040_000);
    }

    #[test]
    fn max_gap_shortens_long_gaps_in_every_lap_and_gap_warn_counts_them() {
        // The trace's one long gap: 1 s between entries 5 and 6 (c's SELECT and INCR).
        let (seen, s) = run(&["--max-gap", "0.1", "--gap-warn", "0.5", "--loop", "2"], 2);
        let due: Vec<Option<u64>> = seen.sent.iter().map(|x| x.1).collect();
        assert_eq!(due[3], Some(140_000_000), "1 s cut to 0.1 s");
        assert_eq!(s.span_us, 140_000);
        assert_eq!(due[8], Some(140_001_000 + 140_000_000), "lap 2 cut alike");
        assert_eq!((s.counts.long_gaps, s.counts.gap_cut_us), (1, 900_000));
        let (seen, s) = run(&[], 1);
        assert_eq!(
            seen.sent[3].1,
            Some(1_040_000_000),
            "kept without --max-gap"
        );
        assert_eq!(s.counts.long_gaps, 0, "below the 60 s default");
    }

    #[test]
    fn windows_warmup_folding_laps_and_shards() {
        let (seen, s) = run(
            &["--start", "0.01", "--end", "1", "--warmup-from", "0.005"],
            1,
        );
        let kept: Vec<(u64, Option<u64>, bool)> =
            seen.sent.iter().map(|x| (x.0, x.1, x.4)).collect();
        assert_eq!(kept, [(2, Some(0), false), (3, Some(10_000_000), true)]);
        assert_eq!(s.counts.filtered.outside_window, 2);

        let (seen, _) = run(&["--connections", "2"], 1);
        let conns: Vec<u32> = seen.sent.iter().map(|x| x.2).collect();
        // a → 0, b → 1, c → 0 again (with a SELECT 2 because connection 0 is in db 0).
        assert_eq!(conns, [0, 1, 1, 0, 0]);

        let (seen, _) = run(&["--speed", "max", "--loop", "2"], 2);
        assert_eq!(seen.sent.len(), 9, "lap 2 needs no added SELECT");
        assert!(seen.sent.iter().all(|x| x.1.is_none()));
        let (seen, _) = run(&["--loop", "2"], 2);
        // Lap 2 starts 1 µs after lap 1's span; c's connection is already in db 2.
        assert_eq!(seen.sent[5].1, Some(1_040_001_000));
        assert_eq!(seen.sent.len(), 9);

        let mut union = Vec::new();
        for i in 0..3 {
            let (seen, _) = run(&["--shard", &format!("{i}/3")], 1);
            union.extend(seen.sent.iter().filter(|x| x.0 > 0).map(|x| x.0));
        }
        union.sort();
        assert_eq!(union, [1, 2, 3, 6], "every client in exactly one shard");
    }
}
