//! Sending: what a free connection does next (quota, deadline, the `--rps` schedule), and
//! writing its batch by the fill path chosen for the test.

use std::time::Instant;

use super::conn::State;
use super::state::{FillPath, Worker};
use crate::engine::EngineError;
use crate::engine::crash_board::{self, ConnState};
use crate::engine::scan_walk;
use crate::workload::sizes::fill_sized;
use crate::workload::template::fill;

/// What a free connection does next.
enum Decision {
    /// A batch of `units` units (fewer than `-P` for the last batch of a `-n` share), timed from
    /// `intended`.
    Send {
        units: usize,
        intended: Instant,
        warmup: bool,
    },
    /// `--rps`: the next send time is in the future.
    Wait,
    /// Nothing more to send in this test.
    Done,
}

impl Worker<'_> {
    /// Decides what connection `i`, free since `now`, does next, and does it.
    pub(super) fn on_free(&mut self, i: usize, now: Instant) -> Result<(), EngineError> {
        match self.decide(i, now) {
            Decision::Send {
                units,
                intended,
                warmup,
            } => self.send_batch(i, units, intended, warmup),
            Decision::Wait => {
                self.flow.free.push(i);
                self.arm_timer(now);
                Ok(())
            }
            Decision::Done => Ok(()),
        }
    }

    /// Closed loop: the request is intended for `now`, when its connection became free.
    /// `--rps`: for its scheduled send time, which may have passed.
    fn decide(&mut self, i: usize, now: Instant) -> Decision {
        if matches!(self.fill.path, FillPath::ClusterMix(..))
            && self.flow.pacer.is_none()
            && let Some(units) = self.parked_leftovers(i)
        {
            let warmup = now < self.cfg.measure_start;
            if !warmup {
                self.rec.issued += units as u64;
                // Counted when drawn: this balances `settle_parked`'s count of units taken.
                self.flow.quota_used += units as u64;
            }
            return Decision::Send {
                units,
                intended: now,
                warmup,
            };
        }
        if self.flow.exhausted {
            return Decision::Done;
        }
        let intended = match &self.flow.pacer {
            None => now,
            Some(p) => {
                let due = p.next_due();
                if due > now {
                    return Decision::Wait;
                }
                // A send time that passed while no connection was free keeps its time: the wait is
                // charged to the request (coordinated omission corrected).
                due
            }
        };
        let warmup = intended < self.cfg.measure_start;
        let mut units = self.cfg.load.pipeline as usize;
        if !warmup {
            if self.cfg.deadline.is_some_and(|d| intended >= d) {
                self.flow.exhausted = true;
                return Decision::Done;
            }
            if let Some(quota) = self.cfg.quota {
                // Cluster mode's parked units can draw past the quota (`cluster_mix.rs`).
                let remaining = quota.saturating_sub(self.flow.quota_used);
                if remaining == 0 {
                    self.flow.exhausted = true;
                    return Decision::Done;
                }
                units = units.min(remaining.div_ceil(self.fill.cmds_per_unit) as usize);
                if let Some(share) = self.conn_share(i, quota) {
                    let left = share.saturating_sub(self.conns[i].quota_used);
                    if left == 0 {
                        // This connection sent its share; the others send theirs.
                        return Decision::Done;
                    }
                    units = units.min(left.div_ceil(self.fill.cmds_per_unit) as usize);
                    self.conns[i].quota_used += units as u64 * self.fill.cmds_per_unit;
                }
                self.flow.quota_used =
                    quota.min(self.flow.quota_used + units as u64 * self.fill.cmds_per_unit);
            }
        }
        if self.cfg.allkeys.is_some() {
            // Every key once: the batch is what is left of the connection's node's share.
            match self.claim_keys(i, units) {
                Some(claimed) => units = claimed,
                None => return Decision::Done,
            }
        }
        if !warmup {
            self.rec.issued += units as u64 * self.fill.cmds_per_unit;
        }
        if let Some(p) = self.flow.pacer.as_mut() {
            p.advance(units as u64 * self.fill.cmds_per_unit);
        }
        Decision::Send {
            units,
            intended,
            warmup,
        }
    }

    /// memtier's `-n` per connection (`LoadSpec::quota_per_conn`): connection `i`'s share of
    /// the worker's `quota` (the first connections take the remainder); `None` when the
    /// connections share the quota as they come.
    fn conn_share(&self, i: usize, quota: u64) -> Option<u64> {
        let load = self.cfg.load;
        if !load.quota_per_conn || self.cfg.cluster.is_some() || load.ramp.is_some() {
            return None;
        }
        let n = self.conns.len().max(1) as u64;
        Some(quota / n + u64::from((i as u64) < quota % n))
    }

    /// `--rps`: hands due send times to waiting connections.
    pub(super) fn dispatch_due(&mut self, now: Instant) -> Result<(), EngineError> {
        while !self.flow.exhausted
            && !self.flow.free.is_empty()
            && self
                .flow
                .pacer
                .as_ref()
                .is_some_and(|p| p.next_due() <= now)
        {
            if let Some(i) = self.flow.free.pop()
                && self.conns[i].state != State::Down
            {
                self.on_free(i, now)?;
            }
        }
        if self.flow.exhausted {
            self.flow.free.clear();
        }
        self.arm_timer(now);
        Ok(())
    }

    fn arm_timer(&mut self, now: Instant) {
        if self.flow.free.is_empty() || self.flow.exhausted {
            return;
        }
        if let (Some(t), Some(p)) = (self.flow.timer.as_mut(), self.flow.pacer.as_ref()) {
            t.arm(p.next_due(), now);
        }
    }

    fn send_batch(
        &mut self,
        i: usize,
        units: usize,
        intended: Instant,
        warmup: bool,
    ) -> Result<(), EngineError> {
        // The batch is set up before a reconnect, so that a failed one counts its requests.
        let reconnect = if let Some(node) = self.conns[i].bind.rebind.take() {
            let c = &mut self.conns[i];
            c.bind.node = node;
            c.bind.route = node as u16;
            true
        } else {
            (!self.cfg.load.keepalive && self.conns[i].used)
                || self
                    .cfg
                    .load
                    .reconnect_interval
                    .is_some_and(|n| self.conns[i].since_open >= n)
                || self.stale(i)
        };
        // The parallel key pattern walks a slice per connection.
        self.fill.keys.select_conn(i);
        for k in &mut self.fill.mix_keys {
            k.select_conn(i);
        }
        let wlen = self.fill_batch(i, units);
        self.settle_parked(warmup);
        let c = &mut self.conns[i];
        c.used = true;
        if reconnect {
            c.since_open = 0;
        }
        c.since_open += units as u64 * self.fill.cmds_per_unit;
        c.batch.wlen = wlen;
        c.batch.written = 0;
        c.batch.pending = units as u64 * self.fill.cmds_per_unit;
        c.batch.commands = c.batch.pending;
        crash_board::note(self.cfg.id, i, ConnState::Connected, c.batch.pending);
        c.batch.intended = intended;
        c.batch.warmup = warmup;
        self.flow.active += 1;
        if reconnect {
            self.replace_stream(i)?;
        }
        let c = &mut self.conns[i];
        if c.state == State::Open {
            c.batch.sent = Instant::now();
            self.flush(i)?;
        }
        Ok(())
    }

    /// Writes connection `i`'s next batch of `units` units by the test's fill path
    /// (placeholders filled, values sized, a mix's commands drawn, or a dataset's records) and
    /// returns its length in bytes.
    fn fill_batch(&mut self, i: usize, units: usize) -> usize {
        let f = &mut self.fill;
        let wbuf = &mut self.conns[i].batch.wbuf;
        match f.path {
            FillPath::Plain => {
                let per_unit = f.placeholders_per_unit;
                fill(
                    wbuf,
                    &f.placeholders[..units * per_unit],
                    per_unit,
                    &mut f.keys,
                );
                units * f.unit_len
            }
            FillPath::Sized(dist) => fill_sized(
                wbuf,
                self.cfg.template,
                units,
                dist,
                &mut f.size_rng,
                &mut f.keys,
                &mut f.size_scratch,
            ),
            FillPath::Mix(mix, sizes) => {
                let keys = if f.mix_keys.is_empty() {
                    std::slice::from_mut(&mut f.keys)
                } else {
                    &mut f.mix_keys[..]
                };
                let c = &mut self.conns[i];
                mix.fill_batch(
                    &mut c.batch.wbuf,
                    &mut c.batch.units,
                    units,
                    &mut f.size_rng,
                    sizes,
                    keys,
                    &mut f.size_scratch,
                )
            }
            FillPath::Dataset(dataset) => dataset.fill_batch(wbuf, units, &mut f.keys),
            FillPath::ClusterMix(mix, sizes) => self.fill_cluster_mix(i, units, mix, sizes),
            FillPath::Cluster => {
                self.fill_cluster(i, units);
                units * self.fill.unit_len
            }
            FillPath::Scan { arg, .. } => {
                let unit = &self.cfg.template.unit;
                let c = &mut self.conns[i];
                let need = unit.len() + scan_walk::MAX_CURSOR_ARG;
                if c.batch.wbuf.len() < need {
                    // Once per connection: every later request fits.
                    c.batch.wbuf.resize(need, 0);
                }
                let len = scan_walk::write(&mut c.batch.wbuf, unit, &(arg.0..arg.1), c.walk.cursor);
                if let Some(mix) = &self.cfg.load.mix {
                    // memtier's `--command`: a cycle's first SCAN timed into the mix's first
                    // row, a continuation into its second (`plan/workloads.rs` adds it).
                    let last = mix.commands.len() - 1;
                    let kind = usize::from(c.walk.cursor != 0).min(last);
                    c.batch.units.one(kind as u8, len);
                }
                len
            }
        }
    }
}
