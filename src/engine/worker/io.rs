//! A worker's I/O on its connections: writing batches (the prefix gathered with the first),
//! reading until the socket is drained, `-k 0` reconnects and connections opened during a test.
//! What was read is framed and accounted in `reply.rs`.

use std::io::{self, IoSlice};
use std::time::Instant;

use mio::{Interest, Token};

use super::conn::{Conn, Placement, State};
use super::outage::FailKind;
use super::state::{Worker, loop_error};
use crate::engine::EngineError;
use crate::engine::cluster::SideQueue;
use crate::engine::conn::Stream;
use crate::engine::crash_board::{self, ConnState};
use crate::engine::error::io_reason;
use crate::workload::template::Gap;

/// At most this many pieces per gathered write (well under the kernel's `IOV_MAX` of 1024;
/// each piece of a large value is at least 64 KiB, so few calls are needed anyway).
const GATHER_MAX: usize = 64;

/// A batch as sent when its large values are left out of the buffer: the unsent prefix, then
/// the buffer with each gap's value (bytes of one of the test's value sources) in place.
struct Sent<'b> {
    prefix: &'b [u8],
    buf: &'b [u8],
    gaps: &'b [Gap],
    sources: &'b [&'b [u8]],
}

impl<'b> Sent<'b> {
    /// Fills `out` with the pieces from byte `written` of the batch (the prefix's rest first);
    /// returns how many.
    fn pieces(&self, written: usize, out: &mut [IoSlice<'b>]) -> usize {
        let mut n = 0;
        if !self.prefix.is_empty() {
            out[0] = IoSlice::new(self.prefix);
            n = 1;
        }
        // Batch bytes before `pos` are skipped (sent already).
        let mut pos = 0;
        let mut put = |bytes: &'b [u8], n: &mut usize| {
            let end = pos + bytes.len();
            if end > written && *n < out.len() {
                out[*n] = IoSlice::new(&bytes[written.saturating_sub(pos)..]);
                *n += 1;
            }
            pos = end;
        };
        let mut from = 0;
        for g in self.gaps.iter().take_while(|g| g.at < self.buf.len()) {
            put(&self.buf[from..g.at], &mut n);
            put(&self.sources[usize::from(g.src)][g.value.clone()], &mut n);
            from = g.at;
        }
        put(&self.buf[from..], &mut n);
        n
    }
}

/// The bytes a batch of `wlen` buffer bytes sends, its left-out values included.
fn sent_len(wlen: usize, gaps: &[Gap]) -> usize {
    let values: usize = (gaps.iter())
        .take_while(|g| g.at < wlen)
        .map(|g| g.value.len())
        .sum();
    wlen + values
}

/// A single RESP line longer than this is treated as a protocol error.
const MAX_LINE: usize = 64 * 1024 * 1024;

impl Worker<'_> {
    /// Writes what is left of the prefix and the batch; registers write interest only while the
    /// socket's buffer is full.
    pub(super) fn flush(&mut self, i: usize) -> Result<(), EngineError> {
        let prefix = &self.cfg.setup.prefix;
        let c = &mut self.conns[i];
        // The plain path's gaps are the same for every batch; a memtier mix notes its own per
        // batch.
        let gaps = if self.fill.gaps.is_empty() {
            &c.batch.units.gaps[..]
        } else {
            &self.fill.gaps[..]
        };
        let sources = &self.fill.value_sources[..];
        // With large values left out, `written` counts the bytes sent, values included.
        let wlen = if gaps.is_empty() {
            c.batch.wlen
        } else {
            sent_len(c.batch.wlen, gaps)
        };
        loop {
            let batch = &c.batch.wbuf[c.batch.written.min(c.batch.wlen)..c.batch.wlen];
            let res = if !gaps.is_empty() {
                if c.prefix_written == prefix.len() && c.batch.written == wlen {
                    break;
                }
                let mut pieces = [IoSlice::new(&[]); GATHER_MAX];
                let sent = Sent {
                    prefix: &prefix[c.prefix_written..],
                    buf: &c.batch.wbuf[..c.batch.wlen],
                    gaps,
                    sources,
                };
                let n = sent.pieces(c.batch.written, &mut pieces);
                c.stream.write_vectored(&pieces[..n])
            } else if c.prefix_written < prefix.len() {
                c.stream.write_vectored(&[
                    IoSlice::new(&prefix[c.prefix_written..]),
                    IoSlice::new(batch),
                ])
            } else if batch.is_empty() {
                break;
            } else {
                c.stream.write(batch)
            };
            match res {
                Ok(mut n) => {
                    let p = (prefix.len() - c.prefix_written).min(n);
                    c.prefix_written += p;
                    n -= p;
                    c.batch.written += n;
                    if c.prefix_written == prefix.len() && c.batch.written == wlen {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.want_write {
                        c.want_write = true;
                        self.poll
                            .registry()
                            .reregister(
                                &mut c.stream,
                                Token(i),
                                Interest::READABLE | Interest::WRITABLE,
                            )
                            .map_err(loop_error)?;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.write_failed(i, &e),
            }
        }
        let c = &mut self.conns[i];
        if c.want_write {
            c.want_write = false;
            self.poll
                .registry()
                .reregister(&mut c.stream, Token(i), Interest::READABLE)
                .map_err(loop_error)?;
        }
        Ok(())
    }

    /// A write failed. When the server closed the connection (reset, broken pipe) it may have
    /// said why first: a bulk longer than its `proto-max-bulk-len` (512 MB by default) is
    /// answered `-ERR Protocol error: invalid bulk length` and the connection closed while we are
    /// still writing the value. That reply sits in the socket ahead of the reset, so it is read
    /// (and handled as any reply: fatal without `-e`, counted with it) before the reset is
    /// blamed; a read that finds the close fails the connection itself.
    fn write_failed(&mut self, i: usize, e: &io::Error) -> Result<(), EngineError> {
        let closed = matches!(
            e.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
        );
        if closed && self.conns[i].state == State::Open {
            self.on_readable(i)?;
            if self.conns[i].state != State::Open {
                return Ok(());
            }
        }
        self.conn_failed(i, FailKind::of(e), self.io_error(i, e))
    }

    pub(super) fn on_writable(&mut self, i: usize) -> Result<(), EngineError> {
        let c = &mut self.conns[i];
        match c.state {
            State::Open => {
                if c.want_write {
                    self.flush(i)?;
                }
            }
            State::Connecting => {
                if let Err(e) = c.stream.finish_connect() {
                    if e.kind() == io::ErrorKind::NotConnected {
                        return Ok(()); // not yet
                    }
                    let err = self.target(self.conns[i].bind.node).connect_error(&e);
                    return self.conn_failed(i, FailKind::of(&e), err);
                }
                c.state = State::Open;
                crash_board::note(self.cfg.id, i, ConnState::Connected, c.batch.pending);
                // Registered for both while connecting; flush() settles the interest.
                c.want_write = true;
                c.batch.sent = Instant::now();
                if c.reopen.recovering {
                    let now = c.batch.sent;
                    return self.reconnected(i, now);
                }
                self.flush(i)?;
            }
            State::Down => {}
        }
        Ok(())
    }

    /// Reads until the socket is drained (a short read), accounting every complete reply; a
    /// completed batch frees the connection for the next one.
    pub(super) fn on_readable(&mut self, i: usize) -> Result<(), EngineError> {
        // Read once per read that returned bytes: a readable event that finds nothing (or only
        // an error) costs no clock read.
        let mut read_at: Option<Instant> = None;
        let mut batch_done = false;
        loop {
            let c = &mut self.conns[i];
            if c.state != State::Open {
                // A TLS handshake under way waits for the server's reply: readable moves it on.
                return self.on_writable(i);
            }
            let carry = c.carry.len();
            if carry == self.rbuf.len() {
                self.grow_rbuf(i)?;
            }
            let c = &mut self.conns[i];
            self.rbuf[..carry].copy_from_slice(&c.carry);
            c.carry.clear();
            // 1 read event in rx_delay::SAMPLE_EVERY: how long the queue head waited for us.
            if read_at.is_none() && self.rec.rx_delay.due() {
                self.sample_rx_delay(i);
            }
            let c = &mut self.conns[i];
            let n = match c.stream.read(&mut self.rbuf[carry..]) {
                Ok(0) => {
                    let err = EngineError::Io(format!(
                        "the server at {} closed the connection",
                        self.target(self.conns[i].bind.node).display()
                    ));
                    return self.read_failed(i, batch_done, FailKind::Closed, err);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.carry.extend_from_slice(&self.rbuf[..carry]);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    c.carry.extend_from_slice(&self.rbuf[..carry]);
                    continue;
                }
                Err(e) => {
                    let err = self.io_error(i, &e);
                    return self.read_failed(i, batch_done, FailKind::of(&e), err);
                }
            };
            let now = Instant::now();
            read_at = Some(now);
            let end = carry + n;
            let (pos, done) = self.scan_replies(i, end, now)?;
            batch_done |= done;
            let reopen = &self.conns[i].reopen;
            if reopen.refused | reopen.reopened && self.reopen_answered(i, batch_done, now)? {
                return Ok(());
            }
            let c = &mut self.conns[i];
            c.carry.extend_from_slice(&self.rbuf[pos..end]);
            if end < self.rbuf.len() {
                break; // a short read: the socket is drained
            }
        }
        if self.cluster.as_ref().is_some_and(|cl| cl.has_redirects()) {
            self.handle_redirects(read_at.unwrap_or_else(Instant::now))?;
        }
        if let Some(now) = read_at.filter(|_| batch_done) {
            self.flow.active -= 1;
            crash_board::note(self.cfg.id, i, ConnState::Connected, 0);
            if self.conns[i].bind.lost_on.is_some() {
                self.node_back(i, now);
            }
            self.on_free(i, now)?;
        }
        Ok(())
    }

    /// The read buffer is full of one unfinished reply line: doubled, up to [`MAX_LINE`]. Out of
    /// line (as the other rare steps of [`Worker::on_readable`]): the read loop stays small, so
    /// the compiler keeps its registers for the common path.
    #[cold]
    #[inline(never)]
    fn grow_rbuf(&mut self, i: usize) -> Result<(), EngineError> {
        if self.rbuf.len() >= MAX_LINE {
            return Err(EngineError::Protocol(format!(
                "protocol error: a reply line from {} is longer than {MAX_LINE} bytes",
                self.target(self.conns[i].bind.node).display()
            )));
        }
        let len = self.rbuf.len() * 2;
        self.rbuf.resize(len, 0);
        Ok(())
    }

    /// A sampled read (`rx_delay::SAMPLE_EVERY`): how long the head of connection `i`'s
    /// receive queue waited for us (TCP only).
    #[cold]
    #[inline(never)]
    fn sample_rx_delay(&mut self, i: usize) {
        if let Stream::Tcp(s) = &self.conns[i].stream {
            let fd = std::os::fd::AsRawFd::as_raw_fd(s);
            if let Some(ns) = self.rec.rx_delay.sample(fd) {
                let now = Instant::now();
                // A cluster worker's second goes with its per-node counts before anything of
                // it is counted (`Recorder::hand_over_at`).
                self.rec
                    .hand_over_at(now, self.cluster.as_ref().map(|cl| &cl.stats));
                self.rec.client_delay(now, ns);
            }
        }
    }

    /// A reopened connection's first answer (`Reopen::reopened`), or the refusal of a server
    /// at `maxclients` (`Reopen::refused`), read at `now`: a refusal fails the connection (true:
    /// the read ends), anything else means it is back.
    #[cold]
    #[inline(never)]
    fn reopen_answered(
        &mut self,
        i: usize,
        batch_done: bool,
        now: Instant,
    ) -> Result<bool, EngineError> {
        if self.conns[i].reopen.refused {
            let err = EngineError::Io(format!(
                "the server at {} refused the connection (max number of clients reached)",
                self.target(self.conns[i].bind.node).display()
            ));
            self.read_failed(i, batch_done, FailKind::Refused, err)?;
            return Ok(true);
        }
        let reopen = &mut self.conns[i].reopen;
        reopen.reopened = false;
        reopen.attempts = 0;
        self.rec
            .hand_over_at(now, self.cluster.as_ref().map(|cl| &cl.stats));
        self.rec.reconnected(now);
        Ok(false)
    }

    /// A read failed after `batch_done` may have completed the batch (a server that answers,
    /// then closes): that batch is settled before the failure is handled.
    fn read_failed(
        &mut self,
        i: usize,
        batch_done: bool,
        kind: FailKind,
        err: EngineError,
    ) -> Result<(), EngineError> {
        if batch_done {
            self.flow.active -= 1;
        }
        self.conn_failed(i, kind, err)
    }

    /// `-k 0`: replaces a used connection before its next batch. The batch's intended time is
    /// when the old connection became free, so the reconnect is charged to it (the uncorrected
    /// figure, from the actual write, leaves it out).
    pub(super) fn replace_stream(&mut self, i: usize) -> Result<(), EngineError> {
        // The old socket leaves the poll first: the new one takes its token.
        let _ = self.poll.registry().deregister(&mut self.conns[i].stream);
        // Read before connecting: a move during the connect leaves it stale, never wrongly fresh.
        let epoch = self.target(self.conns[i].bind.node).epoch();
        let stream = match self.connect_nonblocking(self.conns[i].bind.node, i) {
            Ok(s) => s,
            Err(e) => return self.conn_failed(i, FailKind::of_connect(&e), e),
        };
        let c = &mut self.conns[i];
        drop(std::mem::replace(&mut c.stream, stream));
        c.epoch = epoch;
        c.reopen.connect_started = Instant::now();
        c.state = State::Connecting;
        crash_board::note(self.cfg.id, i, ConnState::Connecting, c.batch.pending);
        c.prefix_written = 0;
        c.prefix_pending = self.cfg.setup.prefix_commands.len();
        c.want_write = true;
        c.carry.clear();
        c.scanner.reset();
        c.absorbed = 0;
        Ok(())
    }

    /// Starts a non-blocking connect to `place.node` and adds the connection (its index is its
    /// token); it sends once writable says it is connected.
    pub(super) fn open_conn(
        &mut self,
        place: Placement,
        wbuf: Vec<u8>,
        side: Option<SideQueue>,
        now: Instant,
    ) -> Result<usize, EngineError> {
        let i = self.conns.len();
        let stream = self.connect_nonblocking(place.node, i)?;
        let prefix = self.cfg.setup.prefix_commands.len();
        let route = place.node as u16;
        self.conns.push(Conn::new(
            stream, true, wbuf, prefix, place, route, side, now,
        ));
        crash_board::note(self.cfg.id, i, ConnState::Connecting, 0);
        Ok(i)
    }

    /// Starts a non-blocking connect to `node` for connection `i`, registered for both
    /// readiness kinds: writable says the connect finished, readable moves a TLS handshake on.
    pub(super) fn connect_nonblocking(&self, node: usize, i: usize) -> Result<Stream, EngineError> {
        let mut stream = self.target(node).connect_nonblocking()?;
        self.poll
            .registry()
            .register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(loop_error)?;
        Ok(stream)
    }

    pub(super) fn io_error(&self, i: usize, e: &io::Error) -> EngineError {
        EngineError::Io(format!(
            "connection to {} failed: {}",
            self.target(self.conns[i].bind.node).display(),
            io_reason(e)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces from any byte on are the batch as sent from that byte, however few pieces fit.
    #[test]
    fn gathered_pieces_resume_anywhere_and_put_values_in_place() {
        let values = b"VVVVWW".to_vec();
        let gaps = [
            Gap {
                at: 2,
                value: 0..4,
                src: 0,
            },
            Gap {
                at: 5,
                value: 4..6,
                src: 0,
            },
            Gap {
                at: 9,
                value: 0..4,
                src: 0,
            },
        ];
        let buf = b"ab|cd|ef|gh".to_vec();
        let whole = b"P!abVVVV|cdWW|ef|VVVVgh".to_vec();
        for wlen in [buf.len(), 6] {
            let expect: Vec<u8> = if wlen == 6 {
                b"P!abVVVV|cdWW|".to_vec()
            } else {
                whole.clone()
            };
            assert_eq!(sent_len(wlen, &gaps) + 2, expect.len());
            for written in 0..expect.len() - 2 {
                for cap in [1, 2, 8] {
                    let sent = Sent {
                        prefix: b"P!",
                        buf: &buf[..wlen],
                        gaps: &gaps,
                        sources: &[&values],
                    };
                    let mut out = [IoSlice::new(&[]); 8];
                    let n = sent.pieces(written, &mut out[..cap]);
                    let got: Vec<u8> = out[..n].iter().flat_map(|s| s.iter().copied()).collect();
                    let mut want = b"P!".to_vec();
                    want.extend_from_slice(&expect[2 + written..]);
                    assert!(want.starts_with(&got) && !got.is_empty(), "{written} {cap}");
                    if cap == 8 {
                        assert_eq!(got, want, "{written}");
                    }
                }
            }
        }
    }
}
