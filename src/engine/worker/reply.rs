//! Replies: framing what a read brought (pushes classified first), what one reply means for its
//! connection's batch (or, on a side connection, for a redirected request), where its latency
//! or error is counted.

use std::time::Instant;

use resp::{Kind, Scan};

use super::Worker;
use super::conn::Conn;
use crate::cluster::slot::key_slot;
use crate::engine::cluster::{ClusterWorker, Redirect, Retry, SideItem, parse_redirect};
use crate::engine::push::{self, Peek};
use crate::engine::{ConnSetup, EngineError, ErrorPolicy};
use crate::metrics::{Recorder, RedirectKind};
use crate::workload::template::Template;

/// What [`on_reply`] needs besides the connection and the recorder.
pub(super) struct ReplyCtx<'a> {
    pub(super) policy: ErrorPolicy,
    pub(super) setup: &'a ConnSetup,
    pub(super) template: &'a Template,
    pub(super) unit_len: usize,
    pub(super) cmds_per_unit: u64,
}

/// The error reply of a server that has `maxclients` connections already.
const MAXCLIENTS: &[u8] = b"ERR max number of clients reached";

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
            .is_some_and(|r| reply[r.clone()].starts_with(MAXCLIENTS))
}

/// An error reply that is not a redirect: fatal, or counted with `-e` (by its first word).
pub(super) fn record_error(
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

/// Accounts one reply; returns whether it completed the connection's batch.
#[inline]
pub(super) fn on_reply(
    c: &mut Conn,
    rec: &mut Recorder,
    cluster: Option<&mut ClusterWorker>,
    ctx: &ReplyCtx,
    info: &resp::ReplyInfo,
    reply: &[u8],
    now: Instant,
) -> Result<bool, EngineError> {
    if info.kind == Kind::Push {
        let kind = std::mem::take(&mut c.push_kind);
        if !push::is_reply(kind, c.pending, c.prefix_pending) {
            push::count(&mut rec.pushes, kind);
            return Ok(false);
        }
    }
    if info.error.is_some() && refuses(ctx.policy, info, reply) {
        // The read that brought it fails the connection (`conn.rs`): its requests count as
        // refused, and it is reopened after its backoff.
        c.refused = true;
        return Ok(false);
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
        return Ok(false);
    }
    if c.side.is_some() {
        if let Some(cl) = cluster {
            side_reply(c, rec, cl, ctx, info, reply, now)?;
        }
        return Ok(false);
    }
    if c.pending == 0 {
        return Err(unasked_reply());
    }
    // A mix: which command this reply answers (one command per unit, replies in order).
    let kind = c
        .kinds
        .get((c.batch_cmds - c.pending) as usize)
        .map(|&k| k as usize);
    c.pending -= 1;
    if !c.warmup {
        rec.last_reply = Some(now);
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        if let Some(cl) = cluster
            && let Some(kind) = RedirectKind::of(text)
        {
            capture_redirect(c, cl, ctx, kind, text);
            return Ok(c.pending == 0);
        }
        record_error(rec, ctx.policy, c.warmup, text, now)?;
        if let Some(k) = kind {
            rec.command_error(k, c.warmup);
        }
    } else {
        let latency = rec.success_of(kind, c.intended, c.sent, c.warmup, now);
        if let Some(cl) = cluster
            && !c.warmup
        {
            cl.record(c.node, latency);
        }
    }
    Ok(c.pending == 0)
}

/// A reply arrived on a connection with nothing outstanding.
pub(super) fn unasked_reply() -> EngineError {
    EngineError::Protocol("protocol error: the server sent a reply nobody asked for".to_string())
}

impl Worker<'_> {
    /// Frames and accounts the replies in `rbuf[..end]` for connection `i`; returns where the
    /// unconsumed bytes start (a partial reply, carried to the next read) and whether the
    /// connection's batch completed.
    #[inline]
    pub(super) fn scan_replies(
        &mut self,
        i: usize,
        end: usize,
        now: Instant,
    ) -> Result<(usize, bool), EngineError> {
        let c = &mut self.conns[i];
        let mut batch_done = false;
        let mut pos = 0;
        while pos < end {
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
                    let ctx = ReplyCtx {
                        policy: self.cfg.load.on_error,
                        setup: self.cfg.setup,
                        template: self.cfg.template,
                        unit_len: self.unit_len,
                        cmds_per_unit: self.cmds_per_unit,
                    };
                    if on_reply(
                        c,
                        &mut self.rec,
                        self.cluster.as_mut(),
                        &ctx,
                        &info,
                        reply,
                        now,
                    )? {
                        batch_done = true;
                    }
                    pos += consumed;
                }
                Ok(Scan::Partial { consumed }) => {
                    pos += consumed;
                    break;
                }
                Err(e) => {
                    let from = match &self.cluster {
                        Some(cl) => cl.targets[c.node].display(),
                        None => self.cfg.setup.target.display(),
                    };
                    return Err(EngineError::Protocol(format!("{e} (from {from})")));
                }
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
    let item = c.side.as_mut().and_then(|q| q.pop_front());
    let Some(item) = item else {
        return Err(unasked_reply());
    };
    let SideItem::Retry(mut retry) = item else {
        // ASKING's +OK (an error here shows up again on the command that follows).
        return Ok(());
    };
    if !retry.warmup {
        rec.last_reply = Some(now);
    }
    if let Some(range) = &info.error {
        let text = &reply[range.clone()];
        if let Some(kind) = RedirectKind::of(text) {
            retry.attempts += 1;
            cl.redirected_again(Redirect {
                kind,
                retry,
                to: parse_redirect(text),
                from: c.node,
            });
            return Ok(());
        }
        let warmup = retry.warmup;
        cl.retire(retry.cmd);
        return record_error(rec, ctx.policy, warmup, text, now);
    }
    let latency = rec.success(retry.intended, retry.sent, retry.warmup, now);
    if !retry.warmup {
        cl.record(c.node, latency);
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
    let index = (c.batch_cmds - c.pending - 1) as usize;
    let per_unit = ctx.cmds_per_unit as usize;
    let base = (index / per_unit) * ctx.unit_len;
    let cmd = index % per_unit;
    let r = &ctx.template.layout[cmd].bytes;
    let mut bytes = cl.retry_buffer();
    bytes.extend_from_slice(&c.wbuf[base + r.start..base + r.end]);
    let slot = cl.run.routes.first_key.get(cmd).and_then(|k| {
        k.as_ref()
            .map(|k| key_slot(&c.wbuf[base + k.start..base + k.end]))
    });
    cl.redirected(Redirect {
        kind,
        retry: Retry {
            cmd: bytes,
            intended: c.intended,
            sent: c.sent,
            warmup: c.warmup,
            attempts: 1,
            slot,
        },
        to: parse_redirect(text),
        from: c.node,
    });
}
