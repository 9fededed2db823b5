//! A worker's connection and its I/O: writing batches (the prefix gathered with the first),
//! reading until the socket is drained, `-k 0` reconnects and connections opened during a test.
//! What was read is framed and accounted in `reply.rs`.

use std::io::{self, IoSlice};
use std::time::{Duration, Instant};

use mio::{Interest, Token};
use resp::Scanner;

use super::Placement;
use super::outage::{BACKOFF_START, FailKind};
use super::{MAX_LINE, Worker, loop_error};
use crate::engine::EngineError;
use crate::engine::cluster::SideQueue;
use crate::engine::conn::Stream;
use crate::engine::error::io_reason;
use crate::engine::push::PushKind;

/// Whether a connection can be written to yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Connected; a batch may be in flight.
    Open,
    /// A `-k 0` reconnect is under way; the decided batch waits for it. Also a connection
    /// being reopened after a failure (`recovering`), with no batch.
    Connecting,
    /// Failed (`-e`): closed, waiting for `retry_at` to be reopened (`outage.rs`).
    Down,
}

/// One connection of a worker and the batch it carries. At most one batch is in flight per
/// connection (as in the reference), so one set of batch fields is enough; every buffer is built
/// once and reused, so a request allocates nothing.
pub(super) struct Conn {
    pub(super) stream: Stream,
    pub(super) state: State,
    /// `-P` copies of the unit; placeholders patched before each send.
    pub(super) wbuf: Vec<u8>,
    /// Bytes of `wbuf` in this batch (fewer units for a final partial batch).
    pub(super) wlen: usize,
    /// Bytes of the batch already written (a partial write resumes here).
    pub(super) written: usize,
    /// Bytes of the prefix (AUTH/SELECT/HELLO…) written: it goes out with the first batch.
    pub(super) prefix_written: usize,
    /// Prefix replies still to come: the first replies on a connection are checked, not timed.
    pub(super) prefix_pending: usize,
    /// Registered for writability: only while a write is partial, to save `epoll_ctl` calls.
    pub(super) want_write: bool,
    /// Bytes of a reply line split across reads, put in front of the next read.
    pub(super) carry: Vec<u8>,
    /// Frames replies without building values; resumable across reads.
    pub(super) scanner: Scanner,
    /// Kind of the push being scanned (classified from its head before the scanner consumes it).
    pub(super) push_kind: PushKind,
    /// Replies outstanding in the current batch.
    pub(super) pending: u64,
    /// When the batch was meant to go: latency is measured from here (coordinated omission).
    pub(super) intended: Instant,
    /// When the batch was written: the uncorrected latency's start.
    pub(super) sent: Instant,
    /// The batch was intended before the measured phase: its replies are checked, not recorded.
    pub(super) warmup: bool,
    /// Has carried a batch (with `-k 0` it is replaced before the next one).
    pub(super) used: bool,
    /// Commands in the current batch.
    pub(super) batch_cmds: u64,
    /// A command mix: which command of the mix each unit of the batch is (reply `i` answers
    /// unit `i`); empty otherwise.
    pub(super) kinds: Vec<u8>,
    /// The node it is connected to (always 0 outside cluster mode).
    pub(super) node: usize,
    /// Cluster: the primary whose slots its units target (itself, or a replica's primary).
    pub(super) route: u16,
    /// Cluster: a slot of the shard it was bound to; after a failover it follows that slot's
    /// new primary (only connections bound to primaries do).
    pub(super) home: u16,
    /// Cluster: bound to a primary, so it follows its home slot to a new owner.
    pub(super) follow_primary: bool,
    /// Cluster: reconnect to this node before the next batch.
    pub(super) rebind: Option<usize>,
    /// Cluster: a side connection's queue of redirected requests (None for load connections).
    pub(super) side: Option<SideQueue>,
    /// When the current connect started (a connect that takes too long fails as a timeout).
    pub(super) connect_started: Instant,
    /// Down: when to try to reopen it.
    pub(super) retry_at: Instant,
    /// The wait before the next reopening attempt; doubles on each failure in a row, back to the
    /// start for a connection that stayed up a while (`outage.rs`).
    pub(super) backoff: Duration,
    /// Being reopened after a failure: success counts as a reconnect.
    pub(super) recovering: bool,
    /// `--sentinel`: the followed primary's epoch when this connection was opened; once the
    /// primary moves, the connection is reopened (to the new one) before its next batch.
    pub(super) epoch: Option<u64>,
    /// Cluster, `-e`: the node this connection lost requests on, until its next completed batch
    /// (which ends that node's outage: its slots are served again, by it or a new owner).
    pub(super) lost_on: Option<usize>,
}

impl Conn {
    /// A connection with nothing in flight; `connecting`: a non-blocking connect is under way
    /// (writable means connected). `route` is the primary whose slots its units target.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        stream: Stream,
        connecting: bool,
        wbuf: Vec<u8>,
        prefix_commands: usize,
        place: Placement,
        route: u16,
        side: Option<SideQueue>,
        now: Instant,
    ) -> Self {
        Conn {
            stream,
            state: if connecting {
                State::Connecting
            } else {
                State::Open
            },
            wbuf,
            wlen: 0,
            written: 0,
            prefix_written: 0,
            prefix_pending: prefix_commands,
            want_write: connecting,
            carry: Vec::with_capacity(64),
            scanner: Scanner::new(),
            push_kind: PushKind::Other,
            pending: 0,
            intended: now,
            sent: now,
            warmup: false,
            used: false,
            batch_cmds: 0,
            kinds: Vec::new(),
            node: place.node,
            route,
            home: place.home,
            follow_primary: place.follow_primary,
            rebind: None,
            side,
            connect_started: now,
            retry_at: now,
            backoff: BACKOFF_START,
            recovering: false,
            epoch: None,
            lost_on: None,
        }
    }
}

impl Worker<'_> {
    /// Writes what is left of the prefix and the batch; registers write interest only while the
    /// socket's buffer is full.
    pub(super) fn flush(&mut self, i: usize) -> Result<(), EngineError> {
        let prefix = &self.cfg.setup.prefix;
        let c = &mut self.conns[i];
        loop {
            let batch = &c.wbuf[c.written..c.wlen];
            let res = if c.prefix_written < prefix.len() {
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
                    c.written += n;
                    if c.prefix_written == prefix.len() && c.written == c.wlen {
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
                Err(e) => return self.conn_failed(i, FailKind::of(&e), self.io_error(i, &e)),
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
                    let err = self.target(self.conns[i].node).connect_error(&e);
                    return self.conn_failed(i, FailKind::of(&e), err);
                }
                c.state = State::Open;
                // Registered for both while connecting; flush() settles the interest.
                c.want_write = true;
                c.sent = Instant::now();
                if c.recovering {
                    let now = c.sent;
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
                if self.rbuf.len() >= MAX_LINE {
                    return Err(EngineError::Protocol(format!(
                        "protocol error: a reply line from {} is longer than {MAX_LINE} bytes",
                        self.target(self.conns[i].node).display()
                    )));
                }
                let len = self.rbuf.len() * 2;
                self.rbuf.resize(len, 0);
            }
            self.rbuf[..carry].copy_from_slice(&c.carry);
            c.carry.clear();
            // 1 read event in rx_delay::SAMPLE_EVERY: how long the queue head waited for us.
            if read_at.is_none()
                && let Stream::Tcp(s) = &c.stream
                && self.rec.rx_delay.due()
            {
                self.rec.rx_delay.sample(std::os::fd::AsRawFd::as_raw_fd(s));
            }
            let n = match c.stream.read(&mut self.rbuf[carry..]) {
                Ok(0) => {
                    let err = EngineError::Io(format!(
                        "the server at {} closed the connection",
                        self.target(self.conns[i].node).display()
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
            self.active -= 1;
            if self.conns[i].lost_on.is_some() {
                self.node_back(i, now);
            }
            self.on_free(i, now)?;
        }
        Ok(())
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
            self.active -= 1;
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
        let epoch = self.target(self.conns[i].node).epoch();
        let stream = match self.connect_nonblocking(self.conns[i].node, i) {
            Ok(s) => s,
            Err(e) => return self.conn_failed(i, FailKind::of_connect(&e), e),
        };
        let c = &mut self.conns[i];
        drop(std::mem::replace(&mut c.stream, stream));
        c.epoch = epoch;
        c.connect_started = Instant::now();
        c.state = State::Connecting;
        c.prefix_written = 0;
        c.prefix_pending = self.cfg.setup.prefix_commands.len();
        c.want_write = true;
        c.carry.clear();
        c.scanner.reset();
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
            self.target(self.conns[i].node).display(),
            io_reason(e)
        ))
    }
}
