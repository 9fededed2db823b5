//! Replies: framing what a read brought (pushes classified first), what one reply means for its
//! connection's batch (or, on a side connection, for a redirected request), where its latency
//! or error is counted.

use std::time::Instant;

use resp::{Kind, Scan};

use super::conn::Conn;
use super::state::{FillPath, Worker};
use crate::cluster::route::UnitSlot;
use crate::cluster::slot::key_slot;
use crate::engine::cluster::{ClusterWorker, Redirect, Retry, SideItem, parse_redirect};
use crate::engine::push::{self, Peek};
use crate::engine::scan_walk::{self, Peek as ScanPeek};
use crate::engine::{ConnSetup, EngineError, ErrorPolicy};
use crate::metrics::{ConnReply, Latency, Recorder, RedirectKind};
use crate::workload::template::Template;

/// What [`on_reply`] needs besides the connection and the recorder.
pub(super) struct ReplyCtx<'a> {
    pub(super) policy: ErrorPolicy,
    pub(super) setup: &'a ConnSetup,
    pub(super) template: &'a Template,
    pub(super) unit_len: usize,
    pub(super) cmds_per_unit: u64,
    /// The latencies of a reply to the connection's batch in this read (the same for each).
    pub(super) latency: Latency,
    /// memtier's `--client-stats`: the measured phase's start, from which each connection
    /// counts its replies' seconds; `None` keeps no per-connection seconds.
    pub(super) seconds_from: Option<Instant>,
}

/// The error reply of a server that has `maxclients` connections already.
const MAXCLIENTS: &[u8] = b"ERR max number of clients reached";

/// Whether an error reply's text (without the `-`) is a server at `maxclients` refusing the
/// connection it just took: the one rule every mode counts a refusal by (the workers here, a
/// replay's threads, the fuzzer's clients, the delivery modes' connections, a storm's stages),
/// so the server's refusal is `connection refused`, never an `ERR` reply.
pub(crate) fn is_maxclients(text: &[u8]) -> bool {
    text.starts_with(MAXCLIENTS)
}

/// With `-e`, whether a reply is a server at `maxclients` refusing the connection: it sends
/// [`MAXCLIENTS`] as soon as it accepts, before reading a command, then closes. So it is the
/// connection's first reply whatever is in flight (a prefix, a batch, or nothing: a reopened
/// connection with nothing to send yet), answers none of them, and is never a protocol error.
#[cold]
#[inline(never)]
fn refuses(policy: ErrorPolicy, info: &resp::ReplyInfo, reply: &[u8]) -> bool {
    policy == ErrorPolicy::Count
        && info
            .error
            .as_ref()
            .is_some_and(|r| is_maxclients(&reply[r.clone()]))
}

/// An error reply that is not a redirect: fatal, or counted with `-e` (by its first word). Also
/// a replay's rule.
pub(crate) fn record_error(
    rec: &mut Recorder,
    policy: ErrorPolicy,
    warmup: bool,
    text: &[u8],
    now: Instant,
) -> Result<(), EngineError> {
    match policy {
        ErrorPolicy::Abort => Err(EngineError::Server {
            message: String::from_utf8_lossy(text).into_owned(),
            hint: Some("use -e to count errors and go on"),
        }),
        ErrorPolicy::Count => {
            rec.error(warmup, text, now);
            Ok(())
        }
    }
}

/// What one reply did, for [`Worker::scan_replies`].
#[derive(Clone, Copy, Default)]
pub(super) struct Answered {
    /// It completed the connection's batch.
    pub(super) batch_done: bool,
    /// A success with the read's latency and nothing of its own to note (no mix command, no
    /// cluster node): left for the caller to record with the read's others in one step.
    pub(super) plain_success: bool,
}

/// Accounts one reply (a plain success is only reported back: see [`Answered`]).
#[inline]
pub(super) fn on_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cluster: Option<&mut ClusterWorker>,
    ctx: &ReplyCtx,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<Answered, EngineError> {
    let nothing = Answered::default();
    if let Some(cl) = cluster.as_deref()
        && !c.batch.warmup
    {
        // The second under way goes with the nodes' part before this reply (a push, an error,
        // a success) is counted (`Recorder::hand_over_at`).
        rec.hand_over_at(now, Some(&cl.stats));
    }
    if info.kind == Kind::Push {
        let kind = std::mem::take(&mut c.push_kind);
        if !push::is_reply(kind, c.batch.pending, c.prefix_pending) {
            push::count(&mut rec.pushes, kind);
            if kind == push::PushKind::Invalidate && !c.batch.warmup {
                rec.invalidation(now);
            }
            return Ok(nothing);
        }
    }
    if info.error.is_some() && refuses(ctx.policy, info, reply) {
        // The read that brought it fails the connection (`io.rs`): its requests count as
        // refused, and it is reopened after its backoff.
        c.reopen.refused = true;
        return Ok(nothing);
    }
    if c.prefix_pending > 0 {
        let index = ctx.setup.prefix_commands.len() - c.prefix_pending;
        c.prefix_pending -= 1;
        if let Some(range) = &info.error {
            return Err(EngineError::Setup {
                command: ctx.setup.prefix_commands[index],
                message: String::from_utf8_lossy(&reply[range.clone()]).into_owned(),
            });
        }
        return Ok(nothing);
    }
    if c.bind.side.is_some() {
        if let Some(cl) = cluster {
            side_reply(c, rec, cl, ctx, info, reply, now)?;
        }
        return Ok(nothing);
    }
    if c.batch.pending == 0 {
        return Err(unasked_reply());
    }
    // A mix: which command this reply answers (one command per unit, replies in order).
    let at = (c.batch.commands - c.batch.pending) as usize;
    let kind = c.batch.units.kinds.get(at).map(|&k| k as usize);
    c.batch.pending -= 1;
    if !c.batch.warmup {
        rec.last_reply = Some(now);
    }
    let batch_done = c.batch.pending == 0;
    let plain = kind.is_none() && cluster.is_none();
    if plain && info.error.is_none() && ctx.seconds_from.is_none() {
        // The commonest reply: recorded with the read's others (`Worker::scan_replies`).
        return Ok(Answered {
            batch_done,
            plain_success: true,
        });
    }
    let bytes = reply_bytes(c, kind, at, reply.len());
    if info.error.is_none() && ctx.seconds_from.is_some() {
        count_conn_second(c, ctx, kind, (bytes, found(c, info)), false, now);
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        on_error_reply(c, rec, cluster, ctx, (kind, bytes), text, now)?;
    } else if plain {
        return Ok(Answered {
            batch_done,
            plain_success: true,
        });
    } else {
        on_success(c, rec, cluster, ctx, (kind, bytes), found(c, info), now);
    }
    Ok(Answered {
        batch_done,
        ..nothing
    })
}

/// An error reply to a request: a cluster's redirection is captured (the request is sent again
/// to the node named), any other error counted by the `-e` policy, and for a mix against its
/// command.
#[inline]
fn on_error_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cluster: Option<&mut ClusterWorker>,
    ctx: &ReplyCtx,
    (kind, bytes): (Option<usize>, (usize, u32)),
    text: &[u8],
    now: Instant,
) -> Result<(), EngineError> {
    if let Some(cl) = cluster
        && let Some(redirect) = RedirectKind::of(text)
    {
        capture_redirect(c, cl, ctx, redirect, text);
        return Ok(());
    }
    count_conn_second(c, ctx, kind, (bytes, (0, 0)), true, now);
    record_error(rec, ctx.policy, c.batch.warmup, text, now)?;
    if let Some(k) = kind {
        rec.command_error(k, c.batch.warmup);
        rec.command_answered(k, bytes, (0, 0), c.batch.warmup);
    }
    Ok(())
}

/// A success with something of its own to note: a mix's command (its bytes, the keys found), a
/// cluster node's latency.
#[inline]
fn on_success(
    c: &mut Conn,
    rec: &mut Recorder,
    cluster: Option<&mut ClusterWorker>,
    ctx: &ReplyCtx,
    (kind, bytes): (Option<usize>, (usize, u32)),
    found: (u64, u64),
    now: Instant,
) {
    let latency = rec.success_with(kind, ctx.latency, c.batch.warmup, now);
    if let Some(k) = kind {
        rec.command_answered(k, bytes, found, c.batch.warmup);
    }
    if let Some(cl) = cluster
        && !c.batch.warmup
    {
        cl.record(c.bind.node, latency);
    }
}

/// The bytes of reply `at` of the batch (the whole reply: `len` and what earlier reads brought
/// of it) and of its request where a mix noted it (0 otherwise).
#[inline]
fn reply_bytes(c: &Conn, kind: Option<usize>, at: usize, len: usize) -> (usize, u32) {
    let tx = kind.and_then(|_| c.batch.units.lens.get(at).copied());
    (c.absorbed + len, tx.unwrap_or(0))
}

/// What a successful reply found, memtier's hits and misses of a read: a value is a hit, a nil
/// a miss, an array reply one of either per element (an `MGET`'s keys).
#[inline]
fn found(c: &Conn, info: &resp::ReplyInfo) -> (u64, u64) {
    match info.kind {
        Kind::Null => (0, 1),
        Kind::Array => {
            let (n, nulls) = c.scanner.top_elements();
            (n - nulls.min(n), nulls)
        }
        _ => (1, 0),
    }
}

/// memtier's `--client-stats`: one measured reply to the connection's batch counted in its own
/// second (one branch when not asked for); `counts`: the reply's and its request's bytes, and
/// what it found (hits, misses).
#[inline]
fn count_conn_second(
    c: &mut Conn,
    ctx: &ReplyCtx,
    kind: Option<usize>,
    counts: ((usize, u32), (u64, u64)),
    error: bool,
    now: Instant,
) {
    let ((bytes, tx_bytes), (hits, misses)) = counts;
    if let Some(from) = ctx.seconds_from
        && !c.batch.warmup
    {
        let second = now.saturating_duration_since(from).as_secs();
        c.seconds.count(
            second,
            ConnReply {
                kind,
                latency_ns: ctx.latency.uncorrected_ns,
                bytes,
                tx_bytes,
                hits,
                misses,
                error,
            },
        );
    }
}

/// A reply arrived on a connection with nothing outstanding.
pub(super) fn unasked_reply() -> EngineError {
    EngineError::Protocol("protocol error: the server sent a reply nobody asked for".to_string())
}

impl<'a> Worker<'a> {
    /// Frames and accounts the replies in `rbuf[..end]` for connection `i`; returns where the
    /// unconsumed bytes start (a partial reply, carried to the next read) and whether the
    /// connection's batch completed.
    ///
    /// Every reply of one read to one batch has the same latencies (the batch's intended and
    /// write times, the read's time), so they are worked out once, and the plain successes are
    /// recorded together afterwards, each histogram adding their count once: at `-P 16` that is
    /// three histogram records per read instead of per reply, with the same figures.
    #[inline]
    pub(super) fn scan_replies(
        &mut self,
        i: usize,
        end: usize,
        now: Instant,
    ) -> Result<(usize, bool), EngineError> {
        let c = &self.conns[i];
        let latency = Latency::between(c.batch.intended, c.batch.sent, now);
        let warmup = c.batch.warmup;
        let mut plain = 0;
        let framed = if self.fill.plain_replies {
            self.frame_plain(i, end, now, latency, &mut plain)
        } else {
            self.frame_replies(i, 0, end, now, latency, &mut plain)
        };
        if plain > 0 {
            if !warmup {
                self.rec.last_reply = Some(now);
            }
            // Before an error is passed on too: what was measured is reported.
            self.rec.successes(latency, plain, warmup, now);
        }
        framed
    }

    /// [`Worker::frame_replies`] for a test whose replies carry nothing of their own to note
    /// (`Fill::plain_replies`: no mix, no cluster, no per-connection seconds, no SCAN walk):
    /// a success to the batch only counts down its replies, with none of `on_reply`'s steps.
    /// Whatever else comes (a push's head, a prefix's reply, a reply nobody asked for) goes to
    /// the general loop from there, and an error reply (or a push whose head an earlier read
    /// brought) to `on_reply` itself, so the answers are the same; only the common reply is
    /// cheaper (callgrind: about 40 instructions a request less at `-P 1`).
    #[inline]
    fn frame_plain(
        &mut self,
        i: usize,
        end: usize,
        now: Instant,
        latency: Latency,
        plain: &mut u64,
    ) -> Result<(usize, bool), EngineError> {
        let mut batch_done = false;
        let mut pos = 0;
        while pos < end {
            let c = &mut self.conns[i];
            if c.prefix_pending != 0
                || c.batch.pending == 0
                || (self.rbuf[pos] == b'>' && !c.scanner.in_progress())
            {
                let (pos, done) = self.frame_replies(i, pos, end, now, latency, plain)?;
                return Ok((pos, batch_done | done));
            }
            match c.scanner.scan(&self.rbuf[pos..end]) {
                Ok(Scan::Reply { consumed, info }) => {
                    if info.error.is_none() && info.kind != Kind::Push {
                        c.batch.pending -= 1;
                        batch_done |= c.batch.pending == 0;
                        *plain += 1;
                        c.absorbed = 0;
                    } else {
                        let answered = self.reply_in_full(i, pos, consumed, &info, now, latency)?;
                        batch_done |= answered.batch_done;
                        *plain += u64::from(answered.plain_success);
                    }
                    pos += consumed;
                }
                Ok(Scan::Partial { consumed }) => {
                    c.absorbed += consumed;
                    return Ok((pos + consumed, batch_done));
                }
                Err(e) => return Err(self.framing_error(i, e)),
            }
        }
        Ok((pos, batch_done))
    }

    /// One reply that [`Worker::frame_plain`] framed but does not count itself (an error reply,
    /// a push), at `rbuf[pos..pos + consumed]`, through `on_reply`.
    #[cold]
    #[inline(never)]
    fn reply_in_full(
        &mut self,
        i: usize,
        pos: usize,
        consumed: usize,
        info: &resp::ReplyInfo,
        now: Instant,
        latency: Latency,
    ) -> Result<Answered, EngineError> {
        let ctx = self.reply_ctx(latency);
        let c = &mut self.conns[i];
        let reply = &self.rbuf[pos..pos + consumed];
        let cluster = self.cluster.as_mut();
        let answered = on_reply(c, &mut self.rec, cluster, &ctx, info, reply, now)?;
        c.absorbed = 0;
        Ok(answered)
    }

    /// What `on_reply` needs besides the connection, for a read whose replies to the batch
    /// have `latency`.
    #[inline]
    fn reply_ctx(&self, latency: Latency) -> ReplyCtx<'a> {
        ReplyCtx {
            policy: self.cfg.load.on_error,
            setup: self.cfg.setup,
            template: self.cfg.template,
            unit_len: self.fill.unit_len,
            cmds_per_unit: self.fill.cmds_per_unit,
            latency,
            seconds_from: self.cfg.load.conn_seconds.then_some(self.cfg.measure_start),
        }
    }

    /// A reply that cannot be framed, named with its server.
    #[cold]
    fn framing_error(&self, i: usize, e: resp::ProtocolError) -> EngineError {
        let from = match &self.cluster {
            Some(cl) => cl.targets[self.conns[i].bind.node].display(),
            None => self.cfg.setup.target.display(),
        };
        EngineError::Protocol(format!("{e} (from {from})"))
    }

    /// [`Worker::scan_replies`]'s loop: `plain` counts the plain successes it leaves to it.
    /// From byte `pos` on.
    #[inline]
    fn frame_replies(
        &mut self,
        i: usize,
        mut pos: usize,
        end: usize,
        now: Instant,
        latency: Latency,
        plain: &mut u64,
    ) -> Result<(usize, bool), EngineError> {
        let ctx = self.reply_ctx(latency);
        let c = &mut self.conns[i];
        let mut batch_done = false;
        while pos < end {
            if let FillPath::Scan { walk, .. } = self.fill.path
                && !c.scanner.in_progress()
                && c.prefix_pending == 0
                && c.batch.pending > 0
                && self.rbuf[pos] != b'>'
            {
                // The cursor is read from the reply's head before the scanner consumes it.
                match scan_walk::peek(&self.rbuf[pos..end]) {
                    ScanPeek::Cursor(cursor) => c.walk.follow(Some(cursor), walk),
                    ScanPeek::Other => c.walk.follow(None, walk),
                    ScanPeek::Incomplete => break,
                }
            }
            if self.rbuf[pos] == b'>' && !c.scanner.in_progress() {
                // Classify a push while its head is in hand; wait for more if it is not.
                match push::classify(&self.rbuf[pos..end]) {
                    Peek::Kind(kind) => c.push_kind = kind,
                    Peek::Incomplete => break,
                }
            }
            match c.scanner.scan(&self.rbuf[pos..end]) {
                Ok(Scan::Reply { consumed, info }) => {
                    let reply = &self.rbuf[pos..pos + consumed];
                    let cluster = self.cluster.as_mut();
                    let answered = on_reply(c, &mut self.rec, cluster, &ctx, &info, reply, now)?;
                    c.absorbed = 0;
                    batch_done |= answered.batch_done;
                    *plain += u64::from(answered.plain_success);
                    pos += consumed;
                }
                Ok(Scan::Partial { consumed }) => {
                    c.absorbed += consumed;
                    pos += consumed;
                    break;
                }
                Err(e) => return Err(self.framing_error(i, e)),
            }
        }
        Ok((pos, batch_done))
    }
}

/// A reply on a side connection: to `ASKING`, or to a redirected request.
pub(super) fn side_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cl: &mut ClusterWorker,
    ctx: &ReplyCtx,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<(), EngineError> {
    let item = c.bind.side.as_mut().and_then(|q| q.pop_front());
    let Some(item) = item else {
        return Err(unasked_reply());
    };
    let SideItem::Retry(mut retry) = item else {
        // ASKING's +OK (an error here shows up again on the command that follows).
        return Ok(());
    };
    if !retry.warmup {
        rec.last_reply = Some(now);
        // The second under way goes with the nodes' part before this reply is counted.
        rec.hand_over_at(now, Some(&cl.stats));
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        if let Some(kind) = RedirectKind::of(text) {
            retry.attempts += 1;
            cl.redirected_again(Redirect {
                kind,
                retry,
                to: parse_redirect(text),
                from: c.bind.node,
            });
            return Ok(());
        }
        let warmup = retry.warmup;
        if let Some(k) = retry.kind.map(usize::from) {
            rec.command_error(k, warmup);
            rec.command_answered(k, (reply.len(), retry.cmd.len() as u32), (0, 0), warmup);
        }
        cl.retire(retry.cmd);
        return record_error(rec, ctx.policy, warmup, text, now);
    }
    let kind = retry.kind.map(usize::from);
    let latency = rec.success_of(kind, retry.intended, retry.sent, retry.warmup, now);
    if let Some(k) = kind {
        let bytes = (reply.len(), retry.cmd.len() as u32);
        rec.command_answered(k, bytes, found(c, info), retry.warmup);
    }
    if !retry.warmup {
        cl.record(c.bind.node, latency);
    }
    cl.retire(retry.cmd);
    Ok(())
}

/// A redirect reply to a load connection's command: the command is copied out of the batch (the
/// template's layout gives its range) into a retry that keeps the original intended time.
pub(super) fn capture_redirect(
    c: &Conn,
    cl: &mut ClusterWorker,
    ctx: &ReplyCtx,
    kind: RedirectKind,
    text: &[u8],
) {
    // Which command of the batch this answers (the reply was just counted off `pending`).
    let index = (c.batch.commands - c.batch.pending - 1) as usize;
    let mut bytes = cl.retry_buffer();
    let (slot, unit_kind) = if cl.run.mix_keys.is_empty() {
        let per_unit = ctx.cmds_per_unit as usize;
        let base = (index / per_unit) * ctx.unit_len;
        let cmd = index % per_unit;
        let r = &ctx.template.layout[cmd].bytes;
        bytes.extend_from_slice(&c.batch.wbuf[base + r.start..base + r.end]);
        let slot = cl.run.routes.first_key.get(cmd).and_then(|k| {
            k.as_ref()
                .map(|k| key_slot(&c.batch.wbuf[base + k.start..base + k.end]))
        });
        (slot, None)
    } else {
        // A mix's units have lengths of their own (one command each): the batch's marks say
        // where this one is, and its bytes where its keys are.
        let units = &c.batch.units;
        let base: usize = units.lens[..index].iter().map(|&n| n as usize).sum();
        let unit = &c.batch.wbuf[base..base + units.lens[index] as usize];
        bytes.extend_from_slice(unit);
        let kind = units.kinds[index];
        let slot = match cl.run.mix_keys[usize::from(kind)].slot(unit) {
            UnitSlot::One(s) => Some(s),
            UnitSlot::Keyless | UnitSlot::Cross => None,
        };
        (slot, Some(kind))
    };
    cl.redirected(Redirect {
        kind,
        retry: Retry {
            cmd: bytes,
            intended: c.batch.intended,
            sent: c.batch.sent,
            warmup: c.batch.warmup,
            attempts: 1,
            slot,
            kind: unit_kind,
        },
        to: parse_redirect(text),
        from: c.bind.node,
    });
}
