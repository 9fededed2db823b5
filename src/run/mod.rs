//! The run: from a plan to printed reports. Checks the server, runs each test, prints each report
//! as soon as it is measured, and turns Ctrl-C and fatal errors into a [`Failure`] only after the
//! partial report is out.

mod cluster;
mod console;
mod context;
mod failover;
mod find_max;
mod live_metrics;
mod mode_seconds;
mod own_connections;
mod record_hook;
mod start;
mod test_probe;
mod verify;

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use self::cluster::ClusterCtx;
use self::console::Console;
pub use self::console::{ProgressFigures, ProgressLine};
pub use self::context::ModeContext;
pub use self::mode_seconds::ModeSeconds;
pub use self::own_connections::{Measured, OwnRun, OwnTest, own_test};
pub use self::test_probe::{Primaries, TestProbe, install as install_test_probe};
use crate::cli::Endpoint;
use crate::engine::control::{ControlConn, error_text};
use crate::engine::tls::TlsClient;
use crate::engine::{self, ConnSetup, EngineError, LoadSpec, Target, Transport};
use crate::metrics::TestResult;
use crate::plan::counters::CounterCheck;
use crate::plan::{Format, MixSource, MixSpec, RunPlan, Workload};
use crate::record::{RunRecord, TestExtras};
use crate::report::{self, Repetitions, ReportContext};
use crate::sentinel::SentinelRun;
use crate::workload::mix::{Mix, MixCommand};
use crate::workload::suite::{SuiteParams, build};
use crate::workload::template::parse_custom_command;
use crate::workload::{PayloadGenerator, Template};

/// Why a run did not end normally. `main` maps these to exit codes.
#[derive(Debug)]
pub enum Failure {
    /// A problem in respbench's own words: exit 1, printed after `respbench: `.
    Fatal(String),
    /// A server, connection or protocol problem that valkey-benchmark names too, in its words
    /// (see [`EngineError::is_reference_text`]): exit 1, printed as it is.
    Reference(String),
    /// A problem with how the run was asked for that only shows when it starts (a
    /// `--metrics-listen` port that is taken): exit 2, printed after `respbench: `.
    Usage(String),
    /// Ctrl-C: exit 130, after the partial report.
    Interrupted,
    /// stdout went away (e.g. `| head`): not an error.
    BrokenPipe,
}

impl Failure {
    /// The message with every secret the run sends hidden: a server's error reply in it may echo
    /// an argument (see `redact::scrub`).
    fn redacted(self, secrets: &[Vec<u8>]) -> Self {
        match self {
            Failure::Fatal(m) => Failure::Fatal(crate::redact::scrub(&m, secrets)),
            Failure::Reference(m) => Failure::Reference(crate::redact::scrub(&m, secrets)),
            other => other,
        }
    }
}

/// The secrets the run sends: the passwords (`-a`, a URI's, `REDISCLI_AUTH`,
/// `--sentinel-password`) and those the benchmarked commands carry (`-x`'s argument included).
fn secrets(plan: &RunPlan) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    out.extend(plan.auth.as_ref().and_then(|a| a.last()).cloned());
    out.extend(plan.sentinel.password.clone());
    match &plan.workload {
        Workload::Suite(_) => {}
        Workload::Custom { items, .. } => {
            for item in items {
                out.extend(crate::redact::secret_values(&item.args));
            }
        }
        Workload::Mix { commands, .. } => {
            for c in commands {
                if let MixSource::Line(args) = &c.source {
                    out.extend(crate::redact::secret_values(args));
                }
            }
        }
    }
    out
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        if e.is_reference_text() {
            Failure::Reference(e.to_string())
        } else {
            Failure::Fatal(e.to_string())
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Fatal(format!("cannot write the report: {e}"))
        }
    }
}
/// Where live figures go as the run goes: the `/metrics` endpoint's feed, the StatsD sink.
type Sinks = (Option<crate::live::Feed>, Option<crate::live::Statsd>);

/// Runs the whole plan in the mode `dispatch` runs (the registry's, `crate::modes`) and writes
/// its record (`--json`) however the run ends. `interrupted`: set by the first Ctrl-C or
/// SIGTERM; `terminated`: also set when it was SIGTERM.
pub fn run(
    plan: &RunPlan,
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
    dispatch: Dispatch<'_>,
) -> Result<(), Failure> {
    run_with(plan, (interrupted, terminated), None, dispatch).0
}

/// [`run`] for a caller that writes its own output from the record (memtier mode, `ab`'s
/// sides): the human report is silenced, every test is kept, and the document comes back however
/// the run ended. `line`: the caller's own progress line (memtier's), written once a second on
/// stderr instead of respbench's.
pub fn run_for_document(
    plan: &RunPlan,
    interrupted: Arc<AtomicBool>,
    terminated: Arc<AtomicBool>,
    line: Option<ProgressLine>,
) -> (Result<(), Failure>, crate::record::Document) {
    run_with(plan, (interrupted, terminated), Some(line), &engine_mode)
}

/// The run, and its document (`for_caller`: see [`run_for_document`], with its line).
fn run_with(
    plan: &RunPlan,
    (interrupted, terminated): (Arc<AtomicBool>, Arc<AtomicBool>),
    for_caller: Option<Option<ProgressLine>>,
    dispatch: Dispatch<'_>,
) -> (Result<(), Failure>, crate::record::Document) {
    let none = crate::record::Document::default;
    // Blocking connects (control, Sentinels, cluster nodes, set-up, the watch) give up on it.
    engine::connect::set_interrupt_flag(interrupted.clone());
    // Before the record's file is opened: a bad --metrics-listen leaves an earlier record be.
    let live = match live_metrics::listen(plan) {
        Ok(live) => live,
        Err(e) => return (Err(Failure::Usage(e)), none()),
    };
    let statsd = match live_metrics::statsd(plan) {
        Ok(s) => s,
        Err(e) => return (Err(Failure::Usage(e)), none()),
    };
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The --html path first: a refusal then leaves no journal behind.
    if let Err(f) = record_hook::check_html_path(plan) {
        return (Err(f), none());
    }
    let mut rec = match RunRecord::open(plan, &argv) {
        Ok(rec) => rec,
        Err(e) => return (Err(Failure::Fatal(e)), none()),
    };
    if for_caller.is_some() {
        rec.keep_for_caller();
    }
    let feed = live.as_ref().map(crate::live::Endpoint::feed);
    let sinks = (feed, statsd);
    let signals = (interrupted.clone(), terminated);
    let result = match prepare_and_run(
        plan,
        signals,
        &mut rec,
        sinks,
        for_caller.flatten(),
        dispatch,
    )
    .map_err(|f| f.redacted(&secrets(plan)))
    {
        // A signal during a blocking start-up step (connect, AUTH, CONFIG GET) ends that step
        // with EINTR: the run was interrupted, not failed. What it was doing goes to stderr.
        Err(Failure::Fatal(m) | Failure::Reference(m)) if interrupted.load(Ordering::Relaxed) => {
            eprintln!("respbench: interrupted while starting ({m})");
            Err(Failure::Interrupted)
        }
        other => other,
    };
    let ended = record_hook::finish(plan, &mut rec, result);
    live_metrics::finish(plan, live, &interrupted);
    (ended, rec.into_document())
}

/// Before anything connects: the plan's warnings, the open-files limit, the Sentinel watch (the
/// primary is found, then followed); then [`connect_and_run`], and the Sentinel's part of the
/// record however the run ended.
fn prepare_and_run(
    plan: &RunPlan,
    signals: (Arc<AtomicBool>, Arc<AtomicBool>),
    rec: &mut RunRecord,
    live: Sinks,
    line: Option<ProgressLine>,
    dispatch: Dispatch<'_>,
) -> Result<(), Failure> {
    for w in &plan.warnings {
        eprintln!("{w}");
    }
    engine::limits::ensure_open_files(u64::from(plan.load.clients)).map_err(Failure::Fatal)?;
    // --sentinel: the primary is found (and then followed) before anything else connects.
    let mut sentinel = failover::start_sentinel(plan)?;
    let result = connect_and_run(
        plan,
        signals,
        rec,
        sentinel.as_mut(),
        (live, line),
        dispatch,
    );
    if let Some(s) = sentinel {
        let (record, host, port) = s.finish();
        rec.set_sentinel(record, host, port);
    }
    result
}

/// The run once the server is known: the control connection (and cluster discovery), the
/// console, then the mode the registry chose, with the one context every mode gets.
fn connect_and_run<'a>(
    plan: &'a RunPlan,
    (interrupted, terminated): (Arc<AtomicBool>, Arc<AtomicBool>),
    rec: &'a mut RunRecord,
    sentinel: Option<&'a mut SentinelRun>,
    ((live, statsd), line): (Sinks, Option<ProgressLine>),
    dispatch: Dispatch<'_>,
) -> Result<(), Failure> {
    let setup = conn_setup(plan, sentinel.as_deref())?;

    // A control connection first: it fails fast and clearly on a wrong address or password, and
    // fetches the configuration the report shows.
    let mut control = ControlConn::connect_auth(&setup.target, plan.auth.as_deref())?;
    let mut load = plan.load.clone();
    let mut threads_shown = plan.threads_flag;
    let (cluster, server_config) = if plan.cluster {
        let c = ClusterCtx::discover(plan, &setup)?;
        if plan.threads_flag.is_none() {
            // As the reference: one worker thread per benchmark node.
            load.workers = c.bench_nodes.len().max(1);
            threads_shown = Some(load.workers as u32);
        }
        (Some(c), (None, None))
    } else {
        (None, fetch_config(&mut control, &setup.target)?)
    };

    // A caller that writes its own output (memtier's) may write its own progress line too.
    let signals = (interrupted, terminated);
    let console = Console::new(plan, load.workers, line, signals, (live, statsd));
    dispatch(ModeContext {
        plan,
        load,
        threads_shown,
        setup,
        control,
        cluster,
        server_config,
        console,
        rec,
        sentinel,
    })
}

/// How a run hands over to its mode once the server is known: the registry's dispatch
/// (`crate::modes`), or [`engine_mode`] for a caller that runs the engine's own modes only.
pub type Dispatch<'d> = &'d dyn Fn(ModeContext<'_>) -> Result<(), Failure>;

/// The engine's modes, for a caller without the registry (memtier mode): memtier's
/// `--verify-only`, else the benchmark.
pub fn engine_mode(ctx: ModeContext<'_>) -> Result<(), Failure> {
    if ctx.plan.verify.is_some_and(|v| v.only) {
        return verify_only(ctx);
    }
    benchmark(ctx)
}

/// The benchmark: every test of the workload (`-l`: over and over), each measured and reported
/// as soon as it ends (with `--find-max` a search, with `--memory-per-key` memory around each),
/// then the run's summary and memtier's `--data-verify`.
pub fn benchmark(mut ctx: ModeContext<'_>) -> Result<(), Failure> {
    let out = ctx.prepare()?;
    let plan = ctx.plan;
    let mut session = Session::new(ctx, out);
    let mut payload = PayloadGenerator::default();
    loop {
        session.pass(&mut payload)?;
        if !plan.loop_forever {
            return session.finish();
        }
    }
}

/// memtier's `--verify-only`: the keys read back, no test.
pub fn verify_only(mut ctx: ModeContext<'_>) -> Result<(), Failure> {
    ctx.prepare()?;
    let interrupted = ctx.interrupted();
    verify::run(ctx.plan, &ctx.setup, ctx.rec, &interrupted)
}

/// Where the load goes and what every connection sends first. TLS files are read once, here: a
/// missing or malformed file stops the run before any connection (exit 1).
fn conn_setup(plan: &RunPlan, sentinel: Option<&SentinelRun>) -> Result<ConnSetup, Failure> {
    let tls = match &plan.tls {
        Some(options) => Some(Arc::new(TlsClient::new(options).map_err(Failure::Fatal)?)),
        None => None,
    };
    let transport = Transport {
        tls,
        mptcp: plan.mptcp,
        family: plan.family,
        connect_timeout: plan.connect_timeout,
    };
    let target = match (sentinel, &plan.endpoint) {
        // Every connection (reopened ones too) goes where the Sentinels say the primary is now.
        (Some(s), _) => Target::following(s.primary(), transport),
        (None, Endpoint::Tcp { host, port }) => Target::tcp_with(host, *port, transport)?,
        (None, Endpoint::Unix(path)) => Target::Unix(path.clone()),
    };
    Ok(ConnSetup {
        target,
        prefix: plan.prefix.bytes.clone(),
        prefix_commands: plan.prefix.commands.clone(),
    })
}

/// What stays the same from test to test once the run has started.
struct Session<'a, W: Write> {
    plan: &'a RunPlan,
    /// The plan's load, with the worker count cluster mode chose.
    load: LoadSpec,
    setup: ConnSetup,
    /// For setup commands (functions), `COMMAND INFO` in cluster mode.
    control: ControlConn,
    cluster: Option<ClusterCtx>,
    ctx: ReportContext,
    console: Console,
    out: W,
    /// The `--json` record and the server watch, told about each test.
    rec: &'a mut RunRecord,
    /// `--sentinel`: the switches seen, placed in the test under way.
    sentinel: Option<&'a mut SentinelRun>,
}

impl<'a, W: Write> Session<'a, W> {
    /// The session of a mode that reports as the benchmark, writing to `out`.
    fn new(mc: ModeContext<'a>, out: W) -> Self {
        let plan = mc.plan;
        let (server_save, server_appendonly) = mc.server_config;
        let ctx = ReportContext {
            clients: plan.load.clients,
            payload_bytes: plan.data_size,
            keepalive: plan.keepalive_raw,
            server_save,
            server_appendonly,
            threads: mc.threads_shown,
            precision: plan.precision,
            cluster: mc.cluster.as_ref().map(|c| c.header.clone()),
            tracking: plan.tracking,
            operations: Default::default(),
        };
        Session {
            plan,
            load: mc.load,
            setup: mc.setup,
            control: mc.control,
            cluster: mc.cluster,
            ctx,
            console: mc.console,
            out,
            rec: mc.rec,
            sentinel: mc.sentinel,
        }
    }

    /// The end of a run that finished its passes: a multi-test run's text report ends with its
    /// answer, one line per test; then memtier's `--data-verify`.
    fn finish(self) -> Result<(), Failure> {
        let mut out = self.out;
        if self.plan.format == Format::Text {
            let summary = report::run_summary(self.rec.document(), self.plan.precision);
            out.write_all(summary.as_bytes())?;
            out.flush()?;
        }
        let interrupted = self.console.interrupted.clone();
        verify::run(self.plan, &self.setup, self.rec, &interrupted)
    }
}

impl<'a, W: Write> Session<'a, W> {
    /// One pass over the workload (`-l` repeats it).
    fn pass(&mut self, payload: &mut PayloadGenerator) -> Result<(), Failure> {
        let plan = self.plan;
        match &plan.workload {
            Workload::Suite(tests) => {
                // One value per pass, as the reference (regenerated on every -l pass).
                let data = payload.chunk(plan.data_size);
                let params = SuiteParams {
                    data: &data,
                    keyspace_given: plan.load.keyspace.is_some(),
                    num_functions: plan.num_functions,
                    num_keys_in_fcall: plan.num_keys_in_fcall,
                    cluster_tag: plan.cluster,
                    key_prefix: &plan.key_prefix,
                };
                for test in tests {
                    let work = build(test, &params);
                    for cmd in &work.setup {
                        self.setup_command(test.title, cmd)?;
                    }
                    self.run_test(test.title, &work.template)?;
                }
            }
            Workload::Mix { title, commands } => self.run_mix(payload, title, commands)?,
            Workload::Custom { title, items } => {
                let template = Template::encode(items, plan.load.keyspace.is_some());
                self.ctx.payload_bytes = match &plan.load.dataset {
                    Some(dataset) => dataset.mean_unit_len(),
                    None => template.unit.len(),
                };
                self.run_test(title, &template)?;
            }
        }
        if plan.format != Format::Csv {
            writeln!(self.out)?;
            self.out.flush()?;
        }
        Ok(())
    }

    /// `--ratio`/`--command`: the mix's commands encoded with this pass's data, as one test
    /// (`workload::mix`), each timed into its own histogram.
    fn run_mix(
        &mut self,
        payload: &mut PayloadGenerator,
        title: &str,
        specs: &[MixSpec],
    ) -> Result<(), Failure> {
        let plan = self.plan;
        let data = payload.chunk(plan.data_size);
        let keyspace_given = plan.load.keyspace.is_some();
        let params = SuiteParams {
            data: &data,
            keyspace_given,
            num_functions: plan.num_functions,
            num_keys_in_fcall: plan.num_keys_in_fcall,
            cluster_tag: plan.cluster,
            key_prefix: &plan.key_prefix,
        };
        let mut commands = Vec::with_capacity(specs.len());
        for spec in specs {
            let template = match &spec.source {
                MixSource::Suite(test) => build(test, &params).template,
                MixSource::Line(args) => {
                    let items = parse_custom_command(args, None, plan.data_size, payload)
                        .map_err(Failure::Fatal)?;
                    Template::encode(&items, keyspace_given)
                }
            };
            commands.push(MixCommand {
                name: spec.name.clone(),
                template,
                weight: spec.weight,
                keys: spec.keys,
            });
        }
        let mut mix = Mix::new(commands)
            .ok_or_else(|| Failure::Fatal("the mix has no command with a weight".to_string()))?;
        if self.plan.mix_in_order {
            mix = mix.in_order();
        }
        if let Some(shape) = &self.plan.memtier {
            // `--ratio`'s SET and GET come from the suite; `--command` lines do not.
            let ratio = (specs.iter()).any(|s| matches!(s.source, MixSource::Suite(_)));
            mix = mix.with_memtier(shape.clone(), ratio);
        }
        let first = mix.commands[0].template.clone();
        self.load.mix = Some(Arc::new(mix));
        let ended = self.run_test(title, &first);
        self.load.mix = None;
        ended
    }

    /// A suite test's setup command (`FUNCTION LOAD`), on the server or every primary.
    fn setup_command(&mut self, title: &str, cmd: &[Vec<u8>]) -> Result<(), Failure> {
        let failed = |e: String| Failure::Fatal(format!("preparing the {title} test failed: {e}"));
        match &self.cluster {
            // Functions live on each primary (replicas get them by replication).
            Some(c) => c.on_primaries(cmd).map_err(failed)?,
            None => {
                if let Some(e) = error_text(&self.control.call(cmd)?) {
                    return Err(failed(e));
                }
            }
        }
        Ok(())
    }

    /// Runs one test of the workload (once, `--repeat` times with their median, or as a
    /// `--find-max` search) and prints its report; a fatal error or Ctrl-C is returned after the
    /// report.
    fn run_test(&mut self, title: &str, template: &Template) -> Result<(), Failure> {
        if let Some(fm) = &self.plan.find_max {
            return self.find_max(title, template, fm);
        }
        let times = self.plan.repeat;
        if times <= 1 {
            return self.measure_and_report(title, template, None).map(drop);
        }
        let mut reps = Repetitions::default();
        let mut ended = Ok(());
        for n in 1..=times {
            match self.measure_and_report(title, template, Some(n)) {
                Ok((r, verdict)) => reps.add(&r, verdict),
                // A failed or interrupted repetition has printed its report; the run ends after
                // the median of those that completed.
                Err(e) => {
                    ended = Err(e);
                    break;
                }
            }
        }
        // CSV keeps one row per repetition and nothing else, so scripts can parse it.
        if self.plan.format != Format::Csv && reps.len() > 1 {
            reps.write_median(&mut self.out, title, self.ctx.precision)?;
            self.out.flush()?;
        }
        ended
    }

    /// One measured run of a test (`repetition`: which, under `--repeat`): the engine's run, its
    /// record, its report and the failover lines; its result and what limited it when it
    /// completed.
    fn measure_and_report(
        &mut self,
        title: &str,
        template: &Template,
        repetition: Option<u32>,
    ) -> Result<(TestResult, crate::verdict::Verdict), Failure> {
        let run = match self.cluster.as_mut() {
            Some(c) => Some(c.prepare(&mut self.control, template, self.plan, &self.load)?),
            None => None,
        };
        let counters = self.counters_before(title)?;
        let console = &mut self.console;
        if let Some(m) = &mut console.memtier {
            m.run = repetition.unwrap_or(1);
            m.shown_sec = None;
        }
        console.title.clear();
        console.title.push_str(title);
        let started = Instant::now();
        let memory_before = self.memory_before(template);
        let watch = self.rec.begin_test();
        let console = &mut self.console;
        live_metrics::test_started(console, title, watch.as_ref());
        let (result, fatal) = {
            // The console, and each completed second to the journal.
            let mut observer =
                record_hook::Journaled::new(console, self.rec, title, template, &self.load)
                    .in_cluster(run.as_ref());
            observer.repetition = repetition;
            engine::run_test(
                &self.setup,
                &self.load,
                title,
                template,
                run.as_ref(),
                &mut observer,
            )
        };
        live_metrics::test_ended(console, &result);
        let blocks = memory_before.and_then(|before| {
            let (sizes, timeout) = (self.load.value_sizes.as_ref(), self.load.reply_timeout);
            test_probe::probe().after(&mut self.control, before, template, sizes, timeout)
        });
        let extras = TestExtras {
            repetition,
            blocks: blocks.as_ref(),
            ..TestExtras::of(&result)
        };
        let test = self.rec.end_test(watch, template, &result, extras);
        let verdict = test.verdict.kind;
        self.console.clear();
        print_result(self.plan, &self.ctx, &result, &mut self.out)?;
        record_hook::print_server_notes(self.plan, &self.ctx, test, &mut self.out)?;
        if self.plan.memory_per_key && self.plan.format != Format::Csv {
            test_probe::probe().report(&mut self.out, &test.blocks)?;
        }
        let mut lines = match self.sentinel.as_mut() {
            Some(s) => s.after_test(title, started),
            None => Vec::new(),
        };
        if let Some((check, before)) = counters {
            // The test's own failure is the one to report when the counters cannot be read.
            match self.counters_after(check, before, &result) {
                Ok(line) => lines.push(line),
                Err(e) if fatal.is_none() => return Err(e),
                Err(_) => {}
            }
        }
        failover::print_lines(self.plan, &lines, &mut self.out)?;
        if let Some(e) = fatal {
            return Err(e.into());
        }
        if matches!(result.outcome, crate::metrics::Outcome::Interrupted(_)) {
            return Err(Failure::Interrupted);
        }
        Ok((result, verdict))
    }

    /// `--check-counters` on this test: the counters' sum before it runs, so that
    /// [`Self::counters_after`] can tell the writes the server lost.
    fn counters_before(&self, title: &str) -> Result<Option<(&'a CounterCheck, i64)>, Failure> {
        let plan = self.plan;
        let Some(check) = plan.counters.as_ref().filter(|c| c.test == title) else {
            return Ok(None);
        };
        let before = failover::counters_sum(&self.setup.target, plan.auth.as_deref(), check)?;
        Ok(Some((check, before)))
    }

    /// `--check-counters` after the test: the counters' sum again, compared with the writes the
    /// test saw acknowledged; the comparison goes to the record and its line is returned.
    fn counters_after(
        &mut self,
        check: &CounterCheck,
        before: i64,
        result: &TestResult,
    ) -> Result<String, Failure> {
        let after = failover::counters_sum(&self.setup.target, self.plan.auth.as_deref(), check)?;
        let (record, line) = failover::counter_result(check, result, before, after);
        self.rec.add_counters(record);
        Ok(line)
    }

    /// Memory per key: the servers' memory before the test (every primary in cluster mode), or
    /// `None` when it is not measured or the servers do not answer.
    fn memory_before(&mut self, template: &Template) -> Option<Option<Box<dyn std::any::Any>>> {
        if !self.plan.memory_per_key {
            return None;
        }
        let primaries = self
            .cluster
            .as_ref()
            .map(|c| move || c.primary_connections());
        let primaries = primaries.as_ref().map(|f| f as &Primaries<'_>);
        let probe = test_probe::probe();
        Some(probe.before(&mut self.control, primaries, self.plan.dbnum, template))
    }
}

fn print_result(
    plan: &RunPlan,
    ctx: &ReportContext,
    r: &TestResult,
    out: &mut impl Write,
) -> Result<(), Failure> {
    match plan.format {
        Format::Text => report::write_full(out, ctx, r)?,
        Format::Quiet => report::write_quiet(out, ctx, r)?,
        Format::Csv => report::write_csv_row(out, ctx, r)?,
    }
    out.flush()?;
    if plan.format != Format::Text {
        // stdout stays byte-compatible; what the reference format has no room for goes here.
        let notes = report::side_notes(r);
        if !notes.is_empty() {
            eprintln!("{notes}");
        }
    }
    Ok(())
}

/// How long the start-up `CONFIG GET`s may take.
const CONFIG_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `CONFIG GET save` and `appendonly`; a server that refuses (renamed or ACL-restricted CONFIG)
/// only costs the report two lines, but a missing password is fatal.
fn fetch_config(
    control: &mut ControlConn,
    target: &Target,
) -> Result<(Option<String>, Option<String>), Failure> {
    // A healthy server answers at once; one that accepted but does not answer (frozen, or not a
    // RESP server) must not hold the start for the control connection's 30 s.
    control.set_timeout(CONFIG_TIMEOUT)?;
    let mut get = |name: &str| -> Result<Option<String>, Failure> {
        let v = control.call(&[b"CONFIG".as_slice(), b"GET", name.as_bytes()])?;
        if let Some(e) = error_text(&v) {
            if e.starts_with("NOAUTH") {
                return Err(EngineError::Auth {
                    target: target.display(),
                    message: format!("{e} (pass the password with -a or REDISCLI_AUTH)"),
                }
                .into());
            }
            return Ok(None);
        }
        Ok(config_value(&v))
    };
    let save = get("save")?;
    let appendonly = get("appendonly")?;
    control.set_timeout(engine::control::CONTROL_TIMEOUT)?;
    if save.is_none() || appendonly.is_none() {
        eprintln!("WARNING: Could not fetch server CONFIG");
        return Ok((None, None));
    }
    Ok((save, appendonly))
}

/// The value of a one-parameter `CONFIG GET` reply (RESP2 array or RESP3 map).
fn config_value(v: &resp::Value) -> Option<String> {
    match v {
        resp::Value::Array(items) if items.len() == 2 => items[1].as_str().map(str::to_string),
        resp::Value::Map(pairs) if pairs.len() == 1 => pairs[0].1.as_str().map(str::to_string),
        _ => None,
    }
}

/// `-I`: idle connections until Ctrl-C (before the server watch).
pub fn idle(ctx: ModeContext<'_>) -> Result<(), Failure> {
    let plan = ctx.plan;
    println!(
        "Creating {} idle connections and waiting forever (Ctrl+C when done)",
        plan.load.clients
    );
    let _ = io::stdout().flush();
    let flag = ctx.interrupted();
    let progress = ctx.console.progress;
    let interrupted = move || flag.load(Ordering::Relaxed);
    let mut on_count = |n: usize| {
        if progress {
            eprint!("\r\x1b[2Kclients: {n}");
            let _ = io::stderr().flush();
        }
    };
    let result = engine::run_idle(&ctx.setup, plan.load.clients, &interrupted, &mut on_count);
    if progress {
        eprintln!();
    }
    result?;
    Err(Failure::Interrupted)
}
