//! Several traces read as one, in time order: the traces of a cluster's primaries, each captured
//! on its own node (MONITOR is per node), replayed together.
//!
//! Why a streaming merge and not a sort: each trace is already in time order (a MONITOR stream
//! is the server's order of execution), so the next entry of the whole is the earliest of the
//! traces' next entries. The merge holds one entry per trace, read ahead into buffers that are
//! reused, so traces of any length merge in memory bounded by their number.
//!
//! With more than one trace, two things change so the merged entries mean what they did apart:
//! each client name is prefixed with its trace's place (`0/127.0.0.1:5000`, `1/127.0.0.1:5000`:
//! two applications on two hosts may have the same address, and a client of one node is not the
//! client of another's), except a script's (`lua` stays `lua`, never replayed); and entries are
//! numbered again from 1 in the merged order (each trace numbers its own from 1). One trace reads
//! exactly as the reader gives it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::{Entry, Reader, TraceError};

/// One trace of the merge and its entry read ahead.
struct Source<R: BufRead> {
    reader: Reader<R>,
    next: Entry,
    state: State,
    /// `"{i}/"`: what its clients' names get in front (only when there are several traces).
    prefix: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Its next entry must be read before the merge can choose.
    Empty,
    /// `next` holds its next entry.
    Ready,
    /// It has ended (or failed: the caller was told once).
    Done,
}

/// Traces read as one, entry by entry, earliest first.
pub struct Merge<R: BufRead> {
    sources: Vec<Source<R>>,
    /// The merged order's numbering (several traces only).
    seq: u64,
}

/// Why a merge could not go on: which trace (its place in the list) and why.
#[derive(Debug, PartialEq, Eq)]
pub struct MergeError {
    pub trace: usize,
    pub error: TraceError,
}

impl Merge<BufReader<File>> {
    /// Opens every trace and tells its format; the first that cannot be read is the error.
    pub fn open<P: AsRef<Path>>(paths: &[P]) -> Result<Self, MergeError> {
        let readers = paths
            .iter()
            .enumerate()
            .map(|(trace, p)| Reader::open(p.as_ref()).map_err(|error| MergeError { trace, error }))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Merge::new(readers))
    }
}

impl<R: BufRead> Merge<R> {
    pub fn new(readers: Vec<Reader<R>>) -> Self {
        let several = readers.len() > 1;
        let sources = readers
            .into_iter()
            .enumerate()
            .map(|(i, reader)| Source {
                reader,
                next: Entry::empty(),
                state: State::Empty,
                prefix: if several {
                    format!("{i}/")
                } else {
                    String::new()
                },
            })
            .collect();
        Merge { sources, seq: 0 }
    }

    /// The next entry of the whole into `entry` (its buffers reused): `Ok(false)` when every
    /// trace has ended. An error names its trace, which is then taken as ended: after a
    /// [`TraceError::Truncated`] (a trace cut short by a killed writer) the caller may go on
    /// with the others.
    pub fn next_into(&mut self, entry: &mut Entry) -> Result<bool, MergeError> {
        for (i, s) in self.sources.iter_mut().enumerate() {
            if s.state != State::Empty {
                continue;
            }
            match s.reader.next_into(&mut s.next) {
                Ok(true) => s.state = State::Ready,
                Ok(false) => s.state = State::Done,
                Err(error) => {
                    s.state = State::Done;
                    return Err(MergeError { trace: i, error });
                }
            }
        }
        // The earliest; on a tie, the trace given first (so a merge is deterministic).
        let earliest = self
            .sources
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state == State::Ready)
            .min_by_key(|(i, s)| (s.next.time_us, *i))
            .map(|(i, _)| i);
        let Some(i) = earliest else {
            return Ok(false);
        };
        let s = &mut self.sources[i];
        std::mem::swap(entry, &mut s.next);
        s.state = State::Empty;
        if !s.prefix.is_empty() {
            self.seq += 1;
            entry.seq = self.seq;
            if !entry.from_script() {
                entry.client.insert_str(0, &s.prefix);
            }
        }
        Ok(true)
    }
}
