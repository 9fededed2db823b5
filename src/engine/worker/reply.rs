//! Replies and recording: what one reply means for its connection's batch, and where its latency
//! or error is counted.

use std::time::Instant;

use resp::Kind;

use super::cluster::{capture_redirect, side_reply};
use super::conn::Conn;
use crate::engine::cluster::ClusterWorker;
use crate::engine::push;
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

/// An error reply that is not a redirect: fatal, or counted with `-e`.
pub(super) fn record_error(
    rec: &mut Recorder,
    policy: ErrorPolicy,
    warmup: bool,
    text: &[u8],
) -> Result<(), EngineError> {
    match policy {
        ErrorPolicy::Abort => Err(EngineError::Server {
            message: String::from_utf8_lossy(text).into_owned(),
            hint: Some("use -e to count errors and go on"),
        }),
        ErrorPolicy::Count => {
            rec.error(warmup, text);
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
        record_error(rec, ctx.policy, c.warmup, text)?;
    } else {
        let latency = rec.success(c.intended, c.sent, c.warmup, now);
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
