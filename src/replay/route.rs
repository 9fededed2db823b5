//! `replay --cluster`: each scheduled command goes to the primary that owns its keys' slot.
//!
//! The slot map is the benchmark's own shared one (`engine::cluster::ClusterShared`): read at the
//! start, and read again while the replay runs by the engine's refresher — every second, and at
//! once when a thread follows a `-MOVED` (`redirect.rs`) — so a slot that moves during the replay
//! costs the redirects of the commands already handed to the threads, not one per command until
//! the end. A command's keys are found by the server's own key specs (`cluster::route::Commands`:
//! `COMMAND INFO`, and `COMMAND GETKEYS` for commands whose keys move, such as EVAL), so every
//! command the server knows is routed as the server would. Each client of the trace gets one
//! connection per node it touches, so its order is kept per node (order across nodes is not
//! the trace's: two servers answer independently). A keyless command follows the client's last
//! node (its `PING` goes where its work goes).
//!
//! What a cluster would refuse is not sent, and counted with its reason in the record's
//! `replay.cluster`: a command whose keys fall in several slots (the server's CROSSSLOT), and a
//! MULTI/EXEC block whose keys do (held until its EXEC or DISCARD, then sent whole to one node,
//! or skipped whole). `-MOVED`/`-ASK` replies, when slots move during the replay, are followed
//! by the threads (`redirect.rs`).
//!
//! Node indexes (`Send::node`) are the shared map's, which only ever appends a node (one a slot
//! moved to), so an index the router handed out stays the same node for the whole replay.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;

use super::block::ReplayCluster;
use crate::cluster::route::Commands;
use crate::cluster::slot::key_slot;
use crate::cluster::topology::NO_OWNER;
use crate::engine::Target;
use crate::engine::cluster::{ClusterShared, refresher};
use crate::engine::control::ControlConn;

use super::schedule::{ADDED, Scheduler, Send, Sink};

/// The longest MULTI block held for routing; a longer one is skipped (its memory is bounded).
const MAX_BLOCK: usize = 10_000;

/// A command held in a MULTI block until its EXEC.
struct Held {
    seq: u64,
    due_ns: Option<u64>,
    conn: u32,
    db: u32,
    measured: bool,
    name: u16,
    args: Vec<Vec<u8>>,
}

impl Held {
    fn of(s: &Send<'_>) -> Self {
        Self {
            seq: s.seq,
            due_ns: s.due_ns,
            conn: s.conn,
            db: s.db,
            measured: s.measured,
            name: s.name,
            args: s.args.to_vec(),
        }
    }
}

/// Where a command's keys are.
enum Slots {
    None,
    One(u16),
    Many,
}

/// The routing state across the trace.
pub struct Router {
    /// The slot map the threads and the refresher share.
    shared: Arc<ClusterShared>,
    /// The shared map's version `owners` and `names` are of.
    version: u64,
    owners: Vec<u16>,
    /// Every node's `host:port`, by topology index.
    names: Vec<String>,
    first_primary: u16,
    control: ControlConn,
    commands: Commands,
    /// `(schedule connection, node)` → the connection it is sent on.
    routed: HashMap<(u32, u16), u32>,
    /// Each schedule connection's last node.
    home: HashMap<u32, u16>,
    blocks: HashMap<u32, Vec<Held>>,
    /// Commands the schedule counted as sent that routing did not send.
    pub not_sent: u64,
    pub record: ReplayCluster,
}

fn is(args: &[Vec<u8>], name: &str) -> bool {
    args.first()
        .is_some_and(|a| a.eq_ignore_ascii_case(name.as_bytes()))
}

impl Router {
    /// The record's cluster block with the threads' redirections (`MOVED`, `ASK`) counted, and
    /// the commands not sent.
    pub fn into_record(self, (moved, ask): (u64, u64)) -> (ReplayCluster, u64) {
        let mut c = self.record;
        (c.moved, c.ask) = (moved, ask);
        (c, self.not_sent)
    }

    /// Reads the slot map from the entry node `entry` (whose host is `host`).
    pub fn new(entry: &Target, host: &str, auth: Option<&[Vec<u8>]>) -> Result<Self, String> {
        let topology =
            crate::engine::cluster::discover(entry, host, auth).map_err(|e| e.to_string())?;
        let shared = ClusterShared::new(topology, entry, host, auth.map(<[_]>::to_vec))
            .map_err(|e| e.to_string())?;
        let control = ControlConn::connect_auth(entry, auth).map_err(|e| e.to_string())?;
        let mut router = Self {
            shared: Arc::new(shared),
            version: u64::MAX,
            owners: Vec::new(),
            names: Vec::new(),
            first_primary: 0,
            control,
            commands: Commands::default(),
            routed: HashMap::new(),
            home: HashMap::new(),
            blocks: HashMap::new(),
            not_sent: 0,
            record: ReplayCluster::default(),
        };
        router.adopt();
        Ok(router)
    }

    /// The slot map the replay threads reach nodes by (`ClusterShared::target`).
    pub fn shared(&self) -> &Arc<ClusterShared> {
        &self.shared
    }

    /// Starts the engine's refresher on the shared map; it stops when the handle is dropped.
    pub fn refresher(&self) -> Refresher {
        let shared = Arc::clone(&self.shared);
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let handle = std::thread::Builder::new()
            .name("respbench-cluster".into())
            .spawn(move || refresher(&shared, &stop))
            .ok();
        Refresher { done, handle }
    }

    /// Takes the shared map if a refresh changed it since the last look.
    fn adopt(&mut self) {
        let v = self.shared.version();
        if v == self.version {
            return;
        }
        self.version = v;
        let topology = self.shared.topology();
        self.owners = topology.slot_owners();
        self.names = topology.nodes.iter().map(|n| n.display()).collect();
        self.first_primary = topology.primaries().first().map_or(0, |&p| p as u16);
    }

    /// Every node's `host:port`, by node index (`Send::node`).
    pub fn node_names(&self) -> &[String] {
        &self.names
    }

    /// The slots of a command's keys, by the server's key specs. A command whose keys cannot
    /// be found (GETKEYS refused its arguments) is taken as keyless: the server answers it.
    fn slots(&mut self, args: &[Vec<u8>]) -> Slots {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let control = &mut self.control;
        let mut call = |a: &[&[u8]]| control.call(a).map_err(|e| e.to_string());
        let keys = match self.commands.keys_of(&mut call, &refs) {
            Ok((_, keys)) => keys,
            Err(_) => return Slots::None,
        };
        let mut slots = keys
            .iter()
            .filter_map(|&i| args.get(i))
            .map(|k| key_slot(k));
        let Some(first) = slots.next() else {
            return Slots::None;
        };
        match slots.all(|s| s == first) {
            true => Slots::One(first),
            false => Slots::Many,
        }
    }

    fn home(&self, conn: u32) -> u16 {
        self.home.get(&conn).copied().unwrap_or(self.first_primary)
    }

    fn node_of(&self, conn: u32, slots: &Slots) -> u16 {
        match slots {
            Slots::One(slot) => match self.owners[usize::from(*slot)] {
                NO_OWNER => self.home(conn),
                owner => owner,
            },
            _ => self.home(conn),
        }
    }

    /// Sends `s` to `node` on the client's connection to it.
    fn emit(
        &mut self,
        s: &Send<'_>,
        node: u16,
        sched: &Scheduler,
        inner: &mut impl Sink,
    ) -> Result<(), String> {
        let next = self.routed.len() as u32;
        let conn = *self.routed.entry((s.conn, node)).or_insert(next);
        self.home.insert(s.conn, node);
        if s.name != ADDED {
            let name = &self.names[usize::from(node)];
            *self.record.routed.entry(name.clone()).or_default() += 1;
        }
        inner.send(&Send { conn, node, ..*s }, sched)
    }

    /// Routes one scheduled command (see the module's comment).
    pub fn send(
        &mut self,
        s: &Send<'_>,
        sched: &Scheduler,
        inner: &mut impl Sink,
    ) -> Result<(), String> {
        self.adopt();
        if s.name == ADDED {
            return self.emit(s, self.home(s.conn), sched, inner);
        }
        if let Some(block) = self.blocks.get_mut(&s.conn) {
            block.push(Held::of(s));
            if is(s.args, "EXEC") || is(s.args, "DISCARD") || block.len() >= MAX_BLOCK {
                let block = self.blocks.remove(&s.conn).unwrap_or_default();
                return self.release(block, sched, inner);
            }
            return Ok(());
        }
        if is(s.args, "MULTI") {
            self.blocks.insert(s.conn, vec![Held::of(s)]);
            return Ok(());
        }
        let slots = self.slots(s.args);
        if let Slots::Many = slots {
            let name = sched
                .names
                .get(usize::from(s.name))
                .cloned()
                .unwrap_or_default();
            *self.record.crossslot.entry(name).or_default() += 1;
            self.not_sent += 1;
            inner.skip(s.seq, "CROSSSLOT");
            return Ok(());
        }
        let node = self.node_of(s.conn, &slots);
        self.emit(s, node, sched, inner)
    }

    /// A held MULTI block: whole to the node of its keys, or skipped whole when they span
    /// slots.
    fn release(
        &mut self,
        block: Vec<Held>,
        sched: &Scheduler,
        inner: &mut impl Sink,
    ) -> Result<(), String> {
        let Some(conn) = block.first().map(|h| h.conn) else {
            return Ok(());
        };
        let mut slot = None;
        let mut across = block.len() >= MAX_BLOCK;
        for h in &block {
            match self.slots(&h.args) {
                Slots::None => {}
                Slots::Many => across = true,
                Slots::One(s) if *slot.get_or_insert(s) != s => across = true,
                Slots::One(_) => {}
            }
        }
        if across {
            self.record.multi_across_slots += 1;
            self.record.multi_commands_skipped += block.len() as u64;
            self.not_sent += block.len() as u64;
            for h in &block {
                inner.skip(h.seq, "MULTI/EXEC across slots");
            }
            return Ok(());
        }
        let node = self.node_of(conn, &slot.map_or(Slots::None, Slots::One));
        for h in &block {
            let s = Send {
                seq: h.seq,
                due_ns: h.due_ns,
                conn: h.conn,
                node: 0,
                db: h.db,
                measured: h.measured,
                name: h.name,
                args: &h.args,
            };
            self.emit(&s, node, sched, inner)?;
        }
        Ok(())
    }

    /// At the trace's end: blocks never closed are sent as they are (the server queues them).
    pub fn finish(&mut self, sched: &Scheduler, inner: &mut impl Sink) -> Result<(), String> {
        let mut open: Vec<(u32, Vec<Held>)> = self.blocks.drain().collect();
        open.sort_by_key(|(c, _)| *c);
        for (_, block) in open {
            self.release(block, sched, inner)?;
        }
        Ok(())
    }
}

/// The refresher of a replay's slot map: stopped and joined when dropped.
pub struct Refresher {
    done: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Refresher {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A sink whose commands are routed first (`--cluster`).
pub struct Routed<'a, S: Sink> {
    pub router: &'a mut Router,
    pub inner: &'a mut S,
}

impl<S: Sink> Sink for Routed<'_, S> {
    fn send(&mut self, s: &Send<'_>, sched: &Scheduler) -> Result<(), String> {
        // Routed when it is about to be sent, by the slot map as it is then.
        self.inner.wait(s, sched)?;
        self.router.send(s, sched, self.inner)
    }

    fn skip(&mut self, seq: u64, reason: &str) {
        self.inner.skip(seq, reason);
    }
}
