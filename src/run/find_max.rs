//! `--find-max`: drives `slo::Search` over the engine. Each window is one `engine::run_test` of
//! the chosen test at an offered `--rps` (fresh connections, the warmup not counted, a measured
//! window of `--step-duration`); its figures go to the search, a row to the table as soon as it
//! ends, and the `find_max` block of the record. The decisions (next rate, how many windows a
//! rate needs, when to stop, the answer's wording) are `slo`'s; this file only measures and
//! prints.

use std::io::Write;
use std::time::Instant;

use super::{Failure, Session};
use crate::engine::{self, ClusterRun, EngineError, LoadSpec, Stop};
use crate::metrics::{Outcome, TestResult};
use crate::plan::find_max::{FindMaxPlan, PROBE, TIME_BUDGET};
use crate::record::{FindMaxBoundary, FindMaxRecord, FindMaxStep, TestExtras};
use crate::slo::search::{MAX_WINDOWS, start_from_probe};
use crate::slo::table::{self, Limit, Row, group};
use crate::slo::{Conclusion, Decision, End, Figures, Next, Search};
use crate::verdict::Verdict;
use crate::watch::TestWatch;
use crate::workload::Template;

/// One window's run: the result and a fatal error beside it.
struct Measured {
    result: TestResult,
    fatal: Option<EngineError>,
}

/// The search's progress: the rows printed, each window's verdict (what limited it), and which
/// windows' full records the document holds until the answer picks one.
struct Progress {
    rows: Vec<Row>,
    verdicts: Vec<Verdict>,
    /// The record's `tests`, in order: each kept window's offered rate and whether it met the
    /// SLO. At most the latest window that met it at each rate, and the latest window while
    /// none has (see [`Session::keep`]).
    kept: Vec<(u64, bool)>,
    record: FindMaxRecord,
}

impl<W: Write> Session<'_, W> {
    /// Runs the search for `title` and prints its table and answer. Ctrl-C or a fatal error
    /// prints the answer so far before returning.
    pub(super) fn find_max(
        &mut self,
        title: &str,
        template: &Template,
        fm: &FindMaxPlan,
    ) -> Result<(), Failure> {
        let began = Instant::now();
        // Cluster mode: routing is learned once; every step reuses it.
        let cluster = match self.cluster.as_mut() {
            Some(c) => Some(c.prepare(&mut self.control, template, self.plan, &self.load)?),
            None => None,
        };
        let cluster = cluster.as_ref();
        writeln!(
            self.out,
            "find-max: {} on {title}: {} connections, {} s steps after a {} s warmup",
            fm.slo,
            self.load.clients,
            fm.step.as_secs_f64(),
            fm.warmup.as_secs_f64()
        )?;
        let mut progress = Progress {
            rows: Vec::new(),
            verdicts: Vec::new(),
            kept: Vec::new(),
            record: FindMaxRecord {
                slo: fm.slo.text.clone(),
                step_duration_s: fm.step.as_secs_f64(),
                warmup_s: fm.warmup.as_secs_f64(),
                end: "running".into(),
                ..FindMaxRecord::default()
            },
        };
        let start = match fm.start_rps {
            Some(r) => r,
            None => {
                let probe = self.probe(title, template, cluster)?;
                progress.record.probe_rps = Some(probe);
                let start = start_from_probe(probe);
                writeln!(
                    self.out,
                    "probe: closed loop for {} s: {} req/s; the ramp starts at {} req/s",
                    PROBE.as_secs_f64(),
                    group(probe.round() as u64),
                    group(start)
                )?;
                start
            }
        };
        writeln!(self.out, "{}", table::header())?;
        self.out.flush()?;
        let mut search = Search::new(start, MAX_WINDOWS);
        let mut rate = search.first();
        let mut step = 0;
        let conclusion = loop {
            if began.elapsed() + fm.step + fm.warmup > TIME_BUDGET {
                break search.stop();
            }
            if progress.rows.last().is_none_or(|r| r.offered != rate) {
                step += 1;
            }
            let m = self.window(title, template, cluster, rate, fm, &mut progress);
            let ended = match (m.fatal, m.result.outcome) {
                (Some(e), _) => Some(Failure::from(e)),
                (None, Outcome::Interrupted(_)) => Some(Failure::Interrupted),
                _ => None,
            };
            if let Some(failure) = ended {
                // The unfinished window is not filed; what was measured before it is answered.
                self.conclude(fm, &search.stop(), &mut progress)?;
                return Err(failure);
            }
            let row = progress.rows.last_mut().unwrap_or_else(|| unreachable!());
            let next = search.record(row.as_window());
            let tally = *search.tally(rate).unwrap_or_else(|| unreachable!());
            row.step = step;
            row.window = tally.windows();
            row.decided = (tally.decision() != Decision::Open).then_some(tally);
            let row = *row;
            self.file(&row, &mut progress);
            match next {
                Next::Run(next) => rate = next,
                Next::Done(c) => break c,
            }
        };
        self.conclude(fm, &conclusion, &mut progress)
    }

    /// The closed-loop probe the ramp starts from: requests per second over [`PROBE`].
    fn probe(
        &mut self,
        title: &str,
        template: &Template,
        cluster: Option<&ClusterRun>,
    ) -> Result<f64, Failure> {
        let mut load = self.load.clone();
        load.rps = None;
        load.stop = Stop::After(PROBE);
        let m = self.measure(title, template, cluster, &load, ("probe", None));
        if let Some(e) = m.fatal {
            return Err(e.into());
        }
        if matches!(m.result.outcome, Outcome::Interrupted(_)) {
            return Err(Failure::Interrupted);
        }
        match m.result.throughput() {
            t if t > 0.0 => Ok(t),
            _ => Err(Failure::Fatal(
                "--find-max: the closed-loop probe completed no request".into(),
            )),
        }
    }

    /// Runs one window at `rate`; when it completed, adds its row (its step and window numbers
    /// are the search's, filled in by the caller) and keeps its test record for now.
    fn window(
        &mut self,
        title: &str,
        template: &Template,
        cluster: Option<&ClusterRun>,
        rate: u64,
        fm: &FindMaxPlan,
        progress: &mut Progress,
    ) -> Measured {
        let mut load = self.load.clone();
        load.rps = Some(rate);
        let watch = self.rec.begin_test();
        let what = format!("{} rps", group(rate));
        let m = self.measure(title, template, cluster, &load, (&what, watch.as_ref()));
        if m.fatal.is_some() || m.result.outcome != Outcome::Completed {
            drop(watch);
            return m;
        }
        let r = &m.result;
        // A window without a reply has no latency to hold against the SLO: it did not meet it
        // (its figures would read 0), and it broke it by more than any window that was answered.
        let figures = (r.completed + r.errors.total() > 0).then(|| figures(r));
        let row = Row {
            step: 0,
            window: 0,
            offered: rate,
            achieved: r.throughput(),
            p50_us: figures.map(|f| f.p50_us),
            p99_us: figures.map(|f| f.p99_us),
            p999_us: figures.map(|f| f.p999_us),
            errors: r.errors.total(),
            slo_met: figures.is_some_and(|f| fm.slo.met(&f)),
            slo_ratio: figures.map_or(f64::INFINITY, |f| fm.slo.ratio(&f)),
            decided: None,
        };
        let test = self.rec.end_test(watch, template, r, TestExtras::of(r));
        progress.verdicts.push(test.verdict.kind);
        progress.rows.push(row);
        self.keep(&row, progress);
        m
    }

    /// Files a window's row in the record's `find_max` block and prints it.
    fn file(&mut self, row: &Row, progress: &mut Progress) {
        progress.record.steps.push(FindMaxStep {
            offered_rps: row.offered,
            achieved_rps: row.achieved,
            p50_us: row.p50_us,
            p99_us: row.p99_us,
            p999_us: row.p999_us,
            errors: row.errors,
            met: row.slo_met,
            saturated: row.as_window().saturated(),
            step: Some(row.step),
            window: Some(row.window),
        });
        self.rec.set_find_max(progress.record.clone());
        // A write error ends the search at its next check; the row is in the record already.
        let _ = writeln!(self.out, "{}", table::row(row, self.ctx.precision))
            .and_then(|()| self.out.flush());
    }

    /// Runs the test once with `load`, the progress line titled `what`; live metrics get the
    /// server watch's samplers of a window (`watch`; the probe has none), so their server
    /// figures follow the window under way.
    fn measure(
        &mut self,
        title: &str,
        template: &Template,
        cluster: Option<&ClusterRun>,
        load: &LoadSpec,
        (what, watch): (&str, Option<&TestWatch>),
    ) -> Measured {
        let console = &mut self.console;
        console.title.clear();
        console.title.push_str(title);
        console.title.push_str(" @ ");
        console.title.push_str(what);
        super::live_metrics::test_started(console, title, watch);
        let (result, fatal) = {
            let mut observer =
                super::record_hook::Journaled::new(console, self.rec, title, template, load)
                    .in_cluster(cluster);
            engine::run_test(&self.setup, load, title, template, cluster, &mut observer)
        };
        super::live_metrics::test_ended(console, &result);
        console.clear();
        Measured { result, fatal }
    }

    /// Keeps the newest test record if it can still be the answer's: the latest window that
    /// met the SLO at its rate (replacing an older one there), or the latest window while none
    /// has met it. [`Session::conclude`] keeps only the answer's.
    fn keep(&mut self, row: &Row, progress: &mut Progress) {
        if !self.rec.keeps_tests() {
            return;
        }
        let passed = row.as_window().passed();
        let drop_old = |&(rate, kept_passed): &(u64, bool)| {
            if passed {
                !kept_passed || rate == row.offered
            } else {
                !kept_passed
            }
        };
        if !passed && progress.kept.iter().any(|&(_, p)| p) {
            self.rec.discard_test(progress.kept.len());
            return;
        }
        for i in (0..progress.kept.len()).rev() {
            if drop_old(&progress.kept[i]) {
                self.rec.discard_test(i);
                progress.kept.remove(i);
            }
        }
        progress.kept.push((row.offered, passed));
    }

    /// Drops every kept test record but the answer's (`best`: its rate), or with no answer the
    /// latest.
    fn keep_answer(&mut self, best: Option<u64>, progress: &mut Progress) {
        let keep = match best {
            Some(rate) => progress.kept.iter().rposition(|&(r, p)| p && r == rate),
            None => progress.kept.len().checked_sub(1),
        };
        for i in (0..progress.kept.len()).rev() {
            if Some(i) != keep {
                self.rec.discard_test(i);
                progress.kept.remove(i);
            }
        }
    }

    /// Prints the answer and files it in the record.
    fn conclude(
        &mut self,
        fm: &FindMaxPlan,
        c: &Conclusion,
        progress: &mut Progress,
    ) -> Result<(), Failure> {
        // What held back the failing bound's window, when it fell behind.
        let limit = c.upper.filter(|u| u.failing().saturated()).and_then(|u| {
            let i = progress
                .rows
                .iter()
                .rposition(|r| r.offered == u.offered && !r.as_window().passed())?;
            Some(limit_of(progress.verdicts[i]))
        });
        if self.rec.keeps_tests() {
            self.keep_answer(c.best.map(|b| b.offered), progress);
        }
        let rec = &mut progress.record;
        rec.answer_rps = match c.end {
            End::TooNoisy => None,
            _ => c.best.map(|b| b.achieved().round()),
        };
        rec.end = match c.end {
            End::Converged => "converged",
            End::NeverMet => "never-met",
            End::RateCap => "rate-cap",
            End::WindowLimit => "window-limit",
            End::TooNoisy => "too-noisy",
            End::Stopped => "stopped",
        }
        .into();
        rec.limit = limit.map(|l| l.name().into());
        rec.no_growth_rps = c.no_growth.map(|t| t.offered);
        rec.boundary = c.boundary.map(|b| FindMaxBoundary {
            low_rps: b.low,
            high_rps: b.high,
            pairs: b.pairs,
            change_pct: b.change.map(|e| e.pct),
            interval: b.change.map(|e| [e.lo, e.hi]),
        });
        self.rec.set_find_max(rec.clone());
        writeln!(self.out, "{}", table::answer(&fm.slo, c, limit))?;
        self.out.flush()?;
        Ok(())
    }
}

/// What the SLO is checked against: corrected latencies in µs, errors in percent of replies.
fn figures(r: &TestResult) -> Figures {
    let us = |p: f64| r.latency.value_at_percentile_ns(p) as f64 / 1000.0;
    let errors = r.errors.total();
    let replies = r.completed + errors;
    Figures {
        p50_us: us(50.0),
        p90_us: us(90.0),
        p99_us: us(99.0),
        p999_us: us(99.9),
        avg_us: r.latency.mean_ns() / 1000.0,
        error_pct: if replies > 0 {
            errors as f64 * 100.0 / replies as f64
        } else {
            0.0
        },
    }
}

/// The window's verdict (`record::TestRecord::verdict`) as the answer's "which side" word.
fn limit_of(verdict: Verdict) -> Limit {
    match verdict {
        Verdict::ServerBound => Limit::Server,
        Verdict::ClientBound => Limit::Client,
        Verdict::BothNearSaturation => Limit::Both,
        Verdict::MachineBusy => Limit::MachineBusy,
        Verdict::Neither => Limit::Connections,
        Verdict::CantTell => Limit::CantTell,
        // A window that fell behind did not reach its rate, so `rate-limited` cannot describe
        // it; a record without a verdict names nothing.
        Verdict::RateLimited | Verdict::Unknown => Limit::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_judged_outcome_names_its_own_limit() {
        let judged: Vec<Limit> = Verdict::ALL
            .into_iter()
            .filter(|v| !matches!(v, Verdict::RateLimited | Verdict::Unknown))
            .map(limit_of)
            .collect();
        assert!(!judged.contains(&Limit::Unknown), "{judged:?}");
        let mut distinct: Vec<&str> = judged.iter().map(|l| l.name()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), judged.len(), "one limit per outcome");
        assert_eq!(limit_of(Verdict::MachineBusy).name(), "machine-busy");
        assert_eq!(limit_of(Verdict::BothNearSaturation).name(), "both");
        assert_eq!(limit_of(Verdict::CantTell).name(), "cant-tell");
        assert_eq!(limit_of(Verdict::Neither).name(), "connections");
    }
}
