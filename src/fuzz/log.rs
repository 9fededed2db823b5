//! The fuzz log: one sequence-numbered trace of every byte sent, in the order it went out, with
//! the client it went out on (`fuzz.trace`, the one trace format of `crate::trace`, which replay
//! reads too), and each client's commands as pure RESP (`client-N.resp`, for
//! `valkey-cli --pipe`; malformed framing is only in the trace, since it went out on a
//! connection of its own and would break a pipe).
//!
//! An entry is written *before* its bytes are sent, under one lock that also hands out the
//! sequence number, so the trace's order is the order the server could have seen, and the
//! command that killed the server is in the log even when the crash takes the process's
//! attention first. Fuzzing keeps nothing of what was sent in memory (the files are
//! buffered writers), so `-n` does not bound memory; the reducer reads the trace back afterwards.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::trace::{Entry, Payload, Writer};

/// The trace's file name inside the log directory.
pub const TRACE_FILE: &str = "fuzz.trace";

/// The client token of fuzz client `id` in the trace (`c1`, `c2`, …).
pub fn client_name(id: u32) -> String {
    format!("c{id}")
}

/// The per-client RESP stream's file name.
pub fn stream_file(id: u32) -> String {
    format!("client-{id}.resp")
}

struct Inner {
    seq: u64,
    trace: Option<Writer<BufWriter<File>>>,
    streams: Vec<BufWriter<File>>,
    entry: Entry,
    body: Vec<u8>,
    /// The first write error: the log stops there, the fuzzing goes on, the report says so.
    error: Option<String>,
}

/// The log of a fuzz run; without a directory it only numbers what is sent.
pub struct Log {
    dir: Option<PathBuf>,
    inner: Mutex<Inner>,
}

impl Log {
    /// Creates the directory (if needed) and the files for `clients` clients.
    pub fn create(dir: Option<&Path>, clients: u32, header: &str) -> io::Result<Log> {
        let mut trace = None;
        let mut streams = Vec::new();
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            let open = |name: &str| {
                let path = dir.join(name);
                File::create(&path)
                    .map(BufWriter::new)
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
            };
            let mut w = Writer::new(open(TRACE_FILE)?)?;
            w.comment(header)?;
            trace = Some(w);
            for id in 1..=clients {
                streams.push(open(&stream_file(id))?);
            }
        }
        Ok(Log {
            dir: dir.map(Path::to_path_buf),
            inner: Mutex::new(Inner {
                seq: 0,
                trace,
                streams,
                entry: Entry::empty(),
                body: Vec::new(),
                error: None,
            }),
        })
    }

    /// The trace file, when there is a log directory.
    pub fn trace_path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(TRACE_FILE))
    }

    /// The log directory.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Numbers and writes what client `id` (1-based) is about to send in database `db`, and
    /// hands the payload back.
    pub fn record(&self, id: u32, db: u32, payload: Payload) -> (u64, Payload) {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let inner = &mut *guard;
        inner.seq += 1;
        let seq = inner.seq;
        if inner.trace.is_none() || inner.error.is_some() {
            return (seq, payload);
        }
        inner.entry.seq = seq;
        inner.entry.time_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        inner.entry.client.clear();
        inner.entry.client.push_str(&client_name(id));
        inner.entry.db = db;
        inner.entry.payload = payload;
        let result = write_entry(inner, id);
        if let Err(e) = result {
            inner.error = Some(e.to_string());
        }
        let payload = std::mem::replace(&mut inner.entry.payload, Payload::Raw(Vec::new()));
        (seq, payload)
    }

    /// Flushes every file; the first error met while logging, if any.
    pub fn finish(&self) -> Result<(), String> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = inner.trace.as_mut()
            && let Err(e) = t.flush()
        {
            inner.error.get_or_insert(e.to_string());
        }
        for i in 0..inner.streams.len() {
            if let Err(e) = inner.streams[i].flush() {
                inner.error.get_or_insert(e.to_string());
            }
        }
        match inner.error.clone() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The entry into the trace and, if it is a command, into the client's RESP stream (with the
/// same redaction as the trace: a log never holds a password).
fn write_entry(inner: &mut Inner, id: u32) -> io::Result<()> {
    if let Some(t) = inner.trace.as_mut() {
        t.write(&inner.entry)?;
    }
    if let (Payload::Command(args), Some(stream)) =
        (&inner.entry.payload, inner.streams.get_mut(id as usize - 1))
    {
        inner.body.clear();
        match crate::redact::command_words(args) {
            Some(hidden) => resp::encode_command(&mut inner.body, &hidden),
            None => resp::encode_command(&mut inner.body, args),
        }
        stream.write_all(&inner.body)?;
    }
    Ok(())
}
