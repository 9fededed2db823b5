//! The connections' state as a crash report reads it (memtier mode's crash handler,
//! `memtier::crash`): per worker its thread id, per connection whether it is connected and how
//! many replies its batch in flight awaits. Only atomics, written with plain relaxed stores by
//! the one worker that owns a slot and read without locks, so a signal handler can read it
//! (a lock could be held by the very thread the signal stopped).
//!
//! Absent unless memtier mode installed it ([`install`]): every note is then one atomic load.
//! The notes are taken where the state changes (connect, connected, down, a batch written, a
//! batch answered), never per request.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU8, AtomicU32, Ordering};

/// A connection's state as the report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ConnState {
    /// No connection opened in this slot yet (a staircase step not reached).
    Unopened = 0,
    Connecting = 1,
    Connected = 2,
    Disconnected = 3,
}

impl ConnState {
    fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::Connecting,
            2 => Self::Connected,
            3 => Self::Disconnected,
            _ => Self::Unopened,
        }
    }

    /// memtier's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unopened => "unopened",
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Disconnected => "disconnected",
        }
    }
}

#[derive(Default)]
struct Slot {
    state: AtomicU8,
    pending: AtomicU32,
}

struct Worker {
    /// The worker thread's kernel id (0 until it started).
    tid: AtomicI32,
    conns: Box<[Slot]>,
}

/// Every worker's slots, sized once.
pub struct Board {
    workers: Box<[Worker]>,
}

static BOARD: OnceLock<Board> = OnceLock::new();

/// Makes the board for `workers` workers of `conns` connections each (a second call keeps the
/// first board). Connections past `conns` (cluster mode's side connections) are not kept.
pub fn install(workers: usize, conns: usize) {
    let _ = BOARD.get_or_init(|| Board {
        workers: (0..workers)
            .map(|_| Worker {
                tid: AtomicI32::new(0),
                conns: (0..conns).map(|_| Slot::default()).collect(),
            })
            .collect(),
    });
}

/// The board when installed.
pub fn board() -> Option<&'static Board> {
    BOARD.get()
}

/// Worker `id` runs on the calling thread.
pub fn worker_started(id: usize) {
    if let Some(w) = BOARD.get().and_then(|b| b.workers.get(id)) {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        w.tid.store(tid, Ordering::Relaxed);
    }
}

/// Connection `conn` of worker `worker` is now `state`, its batch awaiting `pending` replies.
#[inline]
pub fn note(worker: usize, conn: usize, state: ConnState, pending: u64) {
    if let Some(s) = BOARD
        .get()
        .and_then(|b| b.workers.get(worker))
        .and_then(|w| w.conns.get(conn))
    {
        s.state.store(state as u8, Ordering::Relaxed);
        s.pending
            .store(pending.min(u64::from(u32::MAX)) as u32, Ordering::Relaxed);
    }
}

/// One connection as read by the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnView {
    pub worker: usize,
    pub conn: usize,
    pub state: ConnState,
    pub pending: u32,
}

impl Board {
    /// The workers' thread ids (0: not started), by worker.
    pub fn worker_tids(&self) -> impl Iterator<Item = (usize, i32)> + '_ {
        (self.workers.iter().enumerate()).map(|(i, w)| (i, w.tid.load(Ordering::Relaxed)))
    }

    /// Every connection opened so far, by worker then connection. Allocates nothing.
    pub fn conns(&self) -> impl Iterator<Item = ConnView> + '_ {
        self.workers.iter().enumerate().flat_map(|(wi, w)| {
            w.conns.iter().enumerate().filter_map(move |(ci, s)| {
                let state = ConnState::from_u8(s.state.load(Ordering::Relaxed));
                (state != ConnState::Unopened).then(|| ConnView {
                    worker: wi,
                    conn: ci,
                    state,
                    pending: s.pending.load(Ordering::Relaxed),
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_land_in_their_slot_and_unopened_ones_are_left_out() {
        install(2, 2);
        worker_started(1);
        note(0, 1, ConnState::Connected, 10);
        note(1, 0, ConnState::Disconnected, 0);
        note(5, 0, ConnState::Connected, 1); // no such worker: ignored
        note(0, 9, ConnState::Connected, 1); // a side connection: ignored
        let b = board().unwrap();
        let seen: Vec<_> = b.conns().collect();
        assert_eq!(
            seen,
            [
                ConnView {
                    worker: 0,
                    conn: 1,
                    state: ConnState::Connected,
                    pending: 10
                },
                ConnView {
                    worker: 1,
                    conn: 0,
                    state: ConnState::Disconnected,
                    pending: 0
                },
            ]
        );
        let tids: Vec<_> = b.worker_tids().collect();
        assert_eq!(tids[0].1, 0);
        assert!(tids[1].1 > 0);
    }
}
