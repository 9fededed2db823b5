//! The run: from a plan to printed reports. Checks the server, runs each test, prints each report
//! as soon as it is measured, and turns Ctrl-C and fatal errors into a [`Failure`] only after the
//! partial report is out.

use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cli::{Endpoint, ReadFromReplicas};
use crate::cluster::route::{Commands, UnitRoutes};
use crate::cluster::slot::TagTable;
use crate::cluster::topology::Topology;
use crate::engine::control::{ControlConn, error_text};
use crate::engine::tls::TlsClient;
use crate::engine::{
    self, ClusterRun, ClusterShared, ConnSetup, EngineError, LoadSpec, Observer, Snapshot, Stop,
    Target, Transport,
};
use crate::metrics::TestResult;
use crate::plan::{Format, RunPlan, Workload};
use crate::record::{Recorder, TestExtras};
use crate::report::{self, ClusterHeader, Progress, ProgressPhase, ReportContext};
use crate::workload::suite::{SuiteParams, build};
use crate::workload::{PayloadGenerator, Template};

mod record_hook;
mod start;

/// Why a run did not end normally. `main` maps these to exit codes.
#[derive(Debug)]
pub enum Failure {
    /// A problem in respbench's own words: exit 1, printed after `respbench: `.
    Fatal(String),
    /// A server, connection or protocol problem that valkey-benchmark names too, in its words
    /// (see [`EngineError::is_reference_text`]): exit 1, printed as it is.
    Reference(String),
    /// Ctrl-C: exit 130, after the partial report.
    Interrupted,
    /// stdout went away (e.g. `| head`): not an error.
    BrokenPipe,
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

/// Shows the live progress line on stderr when it is a terminal.
struct Console {
    interrupted: Arc<AtomicBool>,
    progress: bool,
    title: String,
    by_requests: bool,
    line: String,
    shown: bool,
}

impl Console {
    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

impl Observer for Console {
    fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    fn tick(&mut self, s: &Snapshot) {
        if !self.progress {
            return;
        }
        let avg = |sum: u64, n: u64| {
            if n > 0 {
                sum as f64 / n as f64 / 1e6
            } else {
                0.0
            }
        };
        let overall_rps = if s.measured_secs > 0.0 {
            s.measured_completed as f64 / s.measured_secs
        } else {
            0.0
        };
        let p = Progress {
            title: &self.title,
            interval_rps: if s.interval_secs > 0.0 {
                s.interval_completed as f64 / s.interval_secs
            } else {
                0.0
            },
            overall_rps,
            interval_avg_ms: avg(s.interval_latency_sum_ns, s.interval_completed),
            overall_avg_ms: avg(s.measured_latency_sum_ns, s.measured_completed),
            phase: if self.by_requests && !s.warming_up {
                ProgressPhase::Requests(s.measured_completed)
            } else {
                ProgressPhase::Seconds {
                    elapsed: s.measured_secs,
                    warming_up: s.warming_up,
                }
            },
        };
        self.line.clear();
        report::progress_line(&mut self.line, &p);
        eprint!("\r\x1b[2K{}", self.line);
        let _ = io::stderr().flush();
        self.shown = true;
    }
}

/// Runs the whole plan and writes its record (`--json`) however the run ends.
pub fn run(plan: &RunPlan, interrupted: Arc<AtomicBool>) -> Result<(), Failure> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut rec = Recorder::open(plan, &argv).map_err(Failure::Fatal)?;
    let result = run_tests(plan, interrupted, &mut rec);
    record_hook::finish(rec, result)
}

fn run_tests(
    plan: &RunPlan,
    interrupted: Arc<AtomicBool>,
    rec: &mut Recorder,
) -> Result<(), Failure> {
    for w in &plan.warnings {
        eprintln!("{w}");
    }
    engine::limits::ensure_open_files(u64::from(plan.load.clients)).map_err(Failure::Fatal)?;

    // TLS files are read once, here: a missing or malformed file stops the run before any
    // connection (exit 1).
    let tls = match &plan.tls {
        Some(options) => Some(Arc::new(TlsClient::new(options).map_err(Failure::Fatal)?)),
        None => None,
    };
    let transport = Transport {
        tls,
        mptcp: plan.mptcp,
    };
    let target = match &plan.endpoint {
        Endpoint::Tcp { host, port } => Target::tcp_with(host, *port, transport)?,
        Endpoint::Unix(path) => Target::Unix(path.clone()),
    };
    let setup = ConnSetup {
        target,
        prefix: plan.prefix.bytes.clone(),
        prefix_commands: plan.prefix.commands.clone(),
    };

    // A control connection first: it fails fast and clearly on a wrong address or password, and
    // fetches the configuration the report shows.
    let mut control = ControlConn::connect_auth(&setup.target, plan.auth.as_deref())?;
    let mut load = plan.load.clone();
    let mut threads_shown = plan.threads_flag;
    let (mut cluster, save, appendonly) = if plan.cluster {
        let c = ClusterCtx::discover(plan, &setup)?;
        if plan.threads_flag.is_none() {
            // As the reference: one worker thread per benchmark node.
            load.workers = c.bench_nodes.len().max(1);
            threads_shown = Some(load.workers as u32);
        }
        (Some(c), None, None)
    } else {
        let (save, appendonly) = fetch_config(&mut control, &setup.target)?;
        (None, save, appendonly)
    };

    let progress = io::stderr().is_terminal() && plan.format != Format::Csv;
    let mut console = Console {
        interrupted: interrupted.clone(),
        progress,
        title: String::new(),
        by_requests: matches!(plan.load.stop, Stop::Requests(_)),
        line: String::new(),
        shown: false,
    };

    if plan.idle {
        return run_idle(plan, &setup, &mut console);
    }
    for w in rec.watch_servers(record_hook::watch_targets(plan, &setup, cluster.as_ref())) {
        eprintln!("{w}");
    }

    // With `--json -` the record owns stdout; the human report goes to stderr.
    let mut out: Box<dyn Write> = if rec.owns_stdout() {
        Box::new(io::stderr().lock())
    } else {
        Box::new(io::stdout().lock())
    };
    if let Some(c) = &cluster {
        // On stdout in every format, as the reference prints it: stderr stays empty on a run
        // that succeeds.
        c.write_listing(&mut out)?;
        out.flush()?;
    }
    if plan.format == Format::Csv {
        report::write_csv_header(&mut out)?;
        out.flush()?;
    }
    let mut ctx = ReportContext {
        clients: plan.load.clients,
        payload_bytes: plan.data_size,
        keepalive: plan.keepalive_raw,
        server_save: save,
        server_appendonly: appendonly,
        threads: threads_shown,
        precision: plan.precision,
        cluster: cluster.as_ref().map(|c| c.header.clone()),
        tracking: plan.tracking,
    };
    if let (Some(dataset), Format::Text) = (&plan.load.dataset, plan.format) {
        writeln!(out, "{}", dataset.summary())?;
    }
    start::begin(plan, &interrupted, rec)?; // issue 13: --start-at, before the first test.
    let mut payload = PayloadGenerator::default();
    loop {
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
                };
                for test in tests {
                    let work = build(test, &params);
                    for cmd in &work.setup {
                        let failed = |e: String| {
                            Failure::Fatal(format!("preparing the {} test failed: {e}", test.title))
                        };
                        match &cluster {
                            // Functions live on each primary (replicas get them by replication).
                            Some(c) => c.on_primaries(cmd).map_err(failed)?,
                            None => {
                                if let Some(e) = error_text(&control.call(cmd)?) {
                                    return Err(failed(e));
                                }
                            }
                        }
                    }
                    let run = match cluster.as_mut() {
                        Some(c) => Some(c.prepare(&mut control, &work.template, plan)?),
                        None => None,
                    };
                    run_one(
                        plan,
                        &load,
                        &setup,
                        test.title,
                        &work.template,
                        run.as_ref(),
                        &ctx,
                        &mut console,
                        &mut out,
                        rec,
                    )?;
                }
            }
            Workload::Custom { title, items } => {
                let template = Template::encode(items, plan.load.keyspace.is_some());
                ctx.payload_bytes = match &plan.load.dataset {
                    Some(dataset) => dataset.mean_unit_len(),
                    None => template.unit.len(),
                };
                let run = match cluster.as_mut() {
                    Some(c) => Some(c.prepare(&mut control, &template, plan)?),
                    None => None,
                };
                run_one(
                    plan,
                    &load,
                    &setup,
                    title,
                    &template,
                    run.as_ref(),
                    &ctx,
                    &mut console,
                    &mut out,
                    rec,
                )?;
            }
        }
        if plan.format != Format::Csv {
            writeln!(out)?;
            out.flush()?;
        }
        if !plan.loop_forever {
            return Ok(());
        }
    }
}

/// Runs one test and prints its report; a fatal error or Ctrl-C is returned after the report.
#[allow(clippy::too_many_arguments)]
fn run_one(
    plan: &RunPlan,
    load: &LoadSpec,
    setup: &ConnSetup,
    title: &str,
    template: &Template,
    cluster: Option<&ClusterRun>,
    ctx: &ReportContext,
    console: &mut Console,
    out: &mut impl Write,
    rec: &mut Recorder,
) -> Result<(), Failure> {
    console.title.clear();
    console.title.push_str(title);
    let watch = rec.begin_test();
    let (result, fatal) = engine::run_test(setup, load, title, template, cluster, console);
    let test = rec.end_test(watch, template, &result, TestExtras::default());
    console.clear();
    print_result(plan, ctx, &result, out)?;
    record_hook::print_server_notes(plan, ctx, test, out)?;
    if let Some(e) = fatal {
        return Err(e.into());
    }
    if result.outcome == crate::metrics::Outcome::Interrupted {
        return Err(Failure::Interrupted);
    }
    Ok(())
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

/// `CONFIG GET save` and `appendonly`; a server that refuses (renamed or ACL-restricted CONFIG)
/// only costs the report two lines, but a missing password is fatal.
fn fetch_config(
    control: &mut ControlConn,
    target: &Target,
) -> Result<(Option<String>, Option<String>), Failure> {
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

fn run_idle(plan: &RunPlan, setup: &ConnSetup, console: &mut Console) -> Result<(), Failure> {
    println!(
        "Creating {} idle connections and waiting forever (Ctrl+C when done)",
        plan.load.clients
    );
    let _ = io::stdout().flush();
    let flag = console.interrupted.clone();
    let progress = console.progress;
    let interrupted = move || flag.load(Ordering::Relaxed);
    let mut on_count = |n: usize| {
        if progress {
            eprint!("\r\x1b[2Kclients: {n}");
            let _ = io::stderr().flush();
        }
    };
    let result = engine::run_idle(setup, plan.load.clients, &interrupted, &mut on_count);
    if progress {
        eprintln!();
    }
    result?;
    Err(Failure::Interrupted)
}

/// Cluster mode's run-wide state: the shared topology, the benchmark nodes, what the report
/// header says, and what the server told us about commands.
struct ClusterCtx {
    shared: Arc<ClusterShared>,
    tags: Arc<TagTable>,
    commands: Commands,
    /// Nodes listed and configured: primaries, replicas or both (`--rfr`).
    bench_nodes: Vec<usize>,
    kind: &'static str,
    header: ClusterHeader,
    auth: Option<Vec<Vec<u8>>>,
}

impl ClusterCtx {
    fn discover(plan: &RunPlan, setup: &ConnSetup) -> Result<Self, Failure> {
        let entry_host = match &plan.endpoint {
            Endpoint::Tcp { host, .. } => host.clone(),
            Endpoint::Unix(_) => String::new(),
        };
        let topology = engine::cluster::discover(&setup.target, &entry_host, plan.auth.as_deref())?;
        let (bench_nodes, kind) = match plan.rfr {
            ReadFromReplicas::No => (topology.primaries(), "primary"),
            ReadFromReplicas::Yes => (topology.replicas(), "replica"),
            ReadFromReplicas::All => {
                let mut all = topology.primaries();
                all.extend(topology.replicas());
                (all, "cluster")
            }
        };
        if bench_nodes.is_empty() {
            return Err(Failure::Fatal(format!(
                "--rfr {}: the cluster at {} has no replicas",
                if plan.rfr == ReadFromReplicas::Yes {
                    "yes"
                } else {
                    "all"
                },
                setup.target.display()
            )));
        }
        let shared = Arc::new(ClusterShared::new(
            topology.clone(),
            &setup.target,
            &entry_host,
            plan.auth.clone(),
        )?);
        let mut node_configs = Vec::with_capacity(bench_nodes.len());
        for &n in &bench_nodes {
            let target = shared.target(n);
            let config = ControlConn::connect_auth(&target, plan.auth.as_deref())
                .ok()
                .and_then(|mut c| fetch_config(&mut c, &target).ok())
                .unwrap_or((None, None));
            if config.0.is_none() {
                eprintln!(
                    "WARNING: Could not fetch node CONFIG {}",
                    topology.nodes[n].display()
                );
            }
            node_configs.push(config);
        }
        Ok(Self {
            shared,
            tags: Arc::new(TagTable::new()),
            commands: Commands::default(),
            header: ClusterHeader {
                count: bench_nodes.len(),
                kind,
                node_configs,
            },
            bench_nodes,
            kind,
            auth: plan.auth.clone(),
        })
    }

    fn write_listing(&self, out: &mut impl Write) -> io::Result<()> {
        let topo = self.shared.topology();
        let primaries = topo.primaries();
        let nodes: Vec<(&str, String, String)> = self
            .bench_nodes
            .iter()
            .map(|&n| {
                let role = if primaries.contains(&n) {
                    "Primary"
                } else {
                    "Replica"
                };
                (role, topo.nodes[n].id.clone(), topo.nodes[n].display())
            })
            .collect();
        report::write_cluster_listing(out, self.kind, &nodes)
    }

    /// Runs a setup command on every primary.
    fn on_primaries(&self, cmd: &[Vec<u8>]) -> Result<(), String> {
        let topo = self.shared.topology();
        for n in topo.primaries() {
            let target = self.shared.target(n);
            let mut c = ControlConn::connect_auth(&target, self.auth.as_deref())
                .map_err(|e| e.to_string())?;
            if let Some(e) = error_text(&c.call(cmd).map_err(|e| e.to_string())?) {
                return Err(format!("{}: {e}", topo.nodes[n].display()));
            }
        }
        Ok(())
    }

    /// Learns how `template` routes and which nodes its connections bind to.
    fn prepare(
        &mut self,
        control: &mut ControlConn,
        template: &Template,
        plan: &RunPlan,
    ) -> Result<ClusterRun, Failure> {
        let mut call = |args: &[&[u8]]| control.call(args).map_err(|e| e.to_string());
        let routes = self
            .commands
            .analyze(&mut call, template, plan.load.keyspace.is_some())
            .map_err(|e| Failure::Fatal(format!("cluster mode: {e}")))?;
        let topo = self.shared.topology();
        let serving = serving_nodes(&topo, &routes, plan.rfr)?;
        let all_primaries = serving == topo.primaries();
        Ok(ClusterRun {
            shared: self.shared.clone(),
            routes,
            serving,
            tags: self.tags.clone(),
            all_primaries,
        })
    }
}

/// The nodes load connections bind to: writes always go to primaries; reads follow `--rfr`; a
/// unit with fixed keys goes to the shard that owns them.
fn serving_nodes(
    topo: &Topology,
    routes: &UnitRoutes,
    rfr: ReadFromReplicas,
) -> Result<Vec<usize>, Failure> {
    let owners = topo.slot_owners();
    let mut primaries = topo.primaries();
    if !routes.fixed_slots.is_empty() {
        let mut shard: Vec<usize> = Vec::new();
        for &slot in &routes.fixed_slots {
            let o = owners[usize::from(slot)];
            if o == crate::cluster::topology::NO_OWNER {
                return Err(Failure::Fatal(format!(
                    "cluster mode: slot {slot} has no owner (is the cluster complete?)"
                )));
            }
            if !shard.contains(&usize::from(o)) {
                shard.push(usize::from(o));
            }
        }
        if shard.len() > 1 {
            return Err(Failure::Fatal(format!(
                "cluster mode: the command's fixed keys live on different nodes ({}); give them \
                 one hash tag, e.g. {{user1}}",
                shard
                    .iter()
                    .map(|&n| topo.nodes[n].display())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        primaries = shard;
    }
    let replicas_of = |ps: &[usize]| -> Vec<usize> {
        topo.ranges
            .iter()
            .filter(|r| ps.contains(&r.primary))
            .flat_map(|r| r.replicas.iter().copied())
            .fold(Vec::new(), |mut acc, n| {
                if !acc.contains(&n) {
                    acc.push(n);
                }
                acc
            })
    };
    Ok(match (routes.write, rfr) {
        (true, _) | (false, ReadFromReplicas::No) => primaries,
        (false, ReadFromReplicas::Yes) => {
            let r = replicas_of(&primaries);
            if r.is_empty() { primaries } else { r }
        }
        (false, ReadFromReplicas::All) => {
            let mut all = primaries.clone();
            all.extend(replicas_of(&primaries));
            all
        }
    })
}
