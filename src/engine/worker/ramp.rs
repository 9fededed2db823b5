//! memtier's staircase ramp (`--clients-start`, `--clients-step`, `--step-duration`): the
//! runner opens each worker's first step; every step after, the worker opens `step` more load
//! connections (non-blocking, through the one connect path `open_conn`, as cluster mode opens
//! connections to a new primary) until it has its share of `-c`. A new connection takes the
//! next batch as soon as it is connected. Nothing here runs per request: one comparison of the
//! loop's clock reading per loop turn while steps are left.

use std::time::{Duration, Instant};

use super::conn::Placement;
use super::state::Worker;
use crate::engine::EngineError;

impl Worker<'_> {
    /// Opens the next step's connections when its time has come (at most one step per call:
    /// a loop turn late by more than a step opens the steps one turn after another).
    pub(super) fn ramp_tick(&mut self, now: Instant) -> Result<(), EngineError> {
        let (Some(ramp), Some(state)) = (self.cfg.load.ramp, self.ramp.as_mut()) else {
            return Ok(());
        };
        if state.left == 0 || now < state.next_at || self.flow.exhausted {
            return Ok(());
        }
        let n = ramp.step.min(state.left);
        state.left -= n;
        state.opened += n;
        state.next_at += ramp.every;
        for _ in 0..n {
            let (wbuf, _) = self.cfg.template.batch(self.cfg.load.pipeline as usize);
            let i = self.open_conn(Placement::default(), wbuf, None, now)?;
            self.on_free(i, now)?;
        }
        Ok(())
    }

    /// How long the poll may wait before the next step is due (`None`: no step left).
    pub(super) fn ramp_timeout(&self, now: Instant) -> Option<Duration> {
        self.ramp
            .as_ref()
            .filter(|s| s.left > 0 && !self.flow.exhausted)
            .map(|s| s.next_at.saturating_duration_since(now))
    }
}
