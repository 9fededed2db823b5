//! The run plan: everything the command line asked for, resolved into what will run.
//!
//! Owns: cross-flag decisions (which tests, which prefix commands, which warnings), the custom
//! command's sequence. Must not: open sockets (the server address is resolved when the run
//! starts). `main` builds it once; nothing changes it afterwards.

mod conflicts;
pub mod counters;
pub mod dataset;
mod drift;
mod fill;
pub mod find_max;
pub mod import;
mod mix;
mod pushes;
pub mod shape;
pub mod shard;
pub mod start_at;
mod wait;
mod workloads;

use std::time::{SystemTime, UNIX_EPOCH};

use crate::cli::{AddrFamily, Args, Endpoint, ReadFromReplicas};
use crate::engine::tls::{ClientCert, TlsOptions, Verify, check_cipher_lists};
use crate::engine::{ErrorPolicy, Family, LoadSpec, Stop};
use crate::workload::template::{SequenceItem, parse_custom_command};
use crate::workload::{PayloadGenerator, SuiteTest, select_tests, suite};

/// Which report format goes to stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Quiet,
    Csv,
}

/// What runs.
#[derive(Clone, Debug)]
pub enum Workload {
    /// Tests of the default suite, in suite order.
    Suite(Vec<&'static SuiteTest>),
    /// A custom command (sequence) with its title.
    Custom {
        title: String,
        items: Vec<SequenceItem>,
    },
    /// `--ratio SET:GET` or memtier's `--command`s: one test mixing these commands by weight
    /// (`plan/workloads.rs` builds it).
    Mix {
        title: String,
        commands: Vec<MixSpec>,
    },
}

pub use mix::{MixSource, MixSpec};

/// Prefix commands sent before the first batch of every connection, in the reference's order.
#[derive(Clone, Debug, Default)]
pub struct Prefix {
    pub bytes: Vec<u8>,
    pub commands: Vec<&'static str>,
}

/// Why a plan could not be built; `main` maps these to exit codes.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The command line, or a `--dataset` file's content, is wrong (exit 2).
    Usage(String),
    /// A file the plan needs could not be read (exit 1, like a failed `-x` stdin read).
    Io(String),
}

impl From<String> for PlanError {
    fn from(message: String) -> Self {
        PlanError::Usage(message)
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Usage(m) | PlanError::Io(m) => f.write_str(m),
        }
    }
}

/// The resolved run.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub endpoint: Endpoint,
    /// `--tls` (or a `rediss://`/`valkeys://` URI) with its options; `None` is plain TCP.
    pub tls: Option<TlsOptions>,
    /// `--mptcp`.
    pub mptcp: bool,
    /// memtier's `-4`/`-6` and `--connection-timeout`, carried into every connection's
    /// `Transport`.
    pub family: Option<crate::engine::Family>,
    pub connect_timeout: Option<std::time::Duration>,
    pub prefix: Prefix,
    /// AUTH arguments (after the command name) for the control connection.
    pub auth: Option<Vec<Vec<u8>>>,
    pub load: LoadSpec,
    pub workload: Workload,
    pub format: Format,
    pub precision: usize,
    pub loop_forever: bool,
    pub data_size: usize,
    pub num_functions: u32,
    pub num_keys_in_fcall: u32,
    /// The default tests' key prefix (`key:`, or `--key-prefix`).
    pub key_prefix: Vec<u8>,
    /// `-k` as typed, for the report.
    pub keepalive_raw: i64,
    /// `--threads` as typed, for the report.
    pub threads_flag: Option<u32>,
    /// `--cluster`.
    pub cluster: bool,
    /// `--rfr`.
    pub rfr: ReadFromReplicas,
    /// `--enable-tracking`, for the report.
    pub tracking: bool,
    /// One-line warnings for stderr.
    pub warnings: Vec<String>,
    /// `--json` file (`-` = stdout) and `--no-server-stats`, for `record` and `watch`.
    pub json: Option<std::path::PathBuf>,
    pub server_stats: bool,
    /// `--html`: the self-contained report written when the run ends.
    pub html: Option<std::path::PathBuf>,
    /// The run's journal (`record::journal`): `--journal`, else `FILE.partial` beside a `--json`
    /// file; `None` with `--json -` or without `--json`.
    pub journal: Option<std::path::PathBuf>,
    /// `--metrics-listen` and `--metrics-linger` (zero when not given): live metrics.
    pub metrics_listen: Option<std::net::SocketAddr>,
    pub metrics_linger: std::time::Duration,
    /// `--repeat`: how many times each test runs (at least 1).
    pub repeat: u32,
    /// A mix's commands in their weights' cycle (memtier's order), not drawn.
    pub mix_in_order: bool,
    /// `respbench memtier`: the mix's request shapes (its keys, `-R`, `--expiry-range`, …).
    pub memtier: Option<std::sync::Arc<crate::workload::shape::MemtierShape>>,
    /// memtier's `--data-verify`: the keys read back after the test (or instead of it).
    pub verify: Option<import::VerifyPlan>,
    /// memtier's `--statsd-host` and its options: real-time metrics sent as the run goes.
    pub statsd: Option<crate::cli::StatsdArgs>,
    /// A sharded run (`--shard`, or the scheduler's environment); `None` runs the whole benchmark.
    pub shard: Option<shard::ShardPlan>,
    /// `--start-at`: when the measured run begins (after connecting and preparing).
    pub start_at: Option<SystemTime>,
    /// `--find-max`: search the highest rate that keeps the SLO instead of running the test once.
    pub find_max: Option<find_max::FindMaxPlan>,
    /// `--sentinel` and its options (no nodes: the primary is `endpoint`).
    pub sentinel: crate::cli::SentinelArgs,
    /// `--check-counters`: the INCR test to check for lost writes.
    pub counters: Option<counters::CounterCheck>,
    /// `--memory-per-key` (or `--fill`): memory per key around every test.
    pub memory_per_key: bool,
    /// `--dbnum`: the db the tests write, whose keys memory per key samples by type.
    pub dbnum: u32,
}

impl RunPlan {
    /// Resolves `args`; `stdin` is the `-x` argument if it was read. The plan is complete when
    /// built: a `--dataset` file is read and its records attached here (after every other check).
    pub fn new(args: &Args, stdin: Option<Vec<u8>>) -> Result<Self, PlanError> {
        // memtier's --data-import: the file's items can be the key range, so it is read first.
        let import = import::import(args)?;
        let args = import.as_ref().map_or(args, |i| &i.args);
        let mut warnings = Vec::new();
        // Variable value sizes: templates are encoded at the largest size (`workload::sizes`).
        let data_size = workloads::data_size(args);
        let workload = workload(args, data_size, stdin, &mut warnings)?;
        connection_warnings(args, &mut warnings);
        pushes::check(args, &workload, &mut warnings)?;
        let tls = tls_options(args, &mut warnings)?;

        let (prefix, auth) = prefix(args)?;
        check_cluster(args)?;

        let counters = counters::check(args, &workload)?;
        let mut load = load_spec(args);
        workloads::apply(args, &mut load, &mut warnings)?;
        let find_max = find_max::plan(args, &workload, &mut load)?;
        conflicts::check(args, &workload)?;
        let memory_per_key = fill::apply(args, &mut load)?;
        // Sharding (issue 13): the shard's part of -n/--rps, its seed and its --json path.
        let mut json = args.json.clone();
        let flag = args.shard.map(|(i, n)| shard::Shard::flag(i, n));
        let shard = shard::Shard::resolve(flag, args.shards, |k| std::env::var(k).ok())?
            .map(|s| shard::apply(s, &mut load, &mut json))
            .transpose()?;
        warnings.extend(shard.as_ref().map(shard::ShardPlan::note));
        if find_max.is_some() && shard.is_some() {
            return Err(
                "--find-max cannot run as a shard (its steps depend on each other)"
                    .to_string()
                    .into(),
            );
        }
        let (html, journal) = html_and_journal(args, shard.as_ref(), json.as_ref());
        let start_at = args
            .start_at
            .as_deref()
            .map(|t| start_at::parse_start_at(t, SystemTime::now()))
            .transpose()?;
        load.dataset = dataset::load(args, &workload, load.keyspace.is_some(), &mut warnings)?;
        if args.metrics_linger.is_some() && args.metrics_listen.is_none() {
            return Err("--metrics-linger needs --metrics-listen".to_string().into());
        }
        drift::apply(args, &mut load)?;
        load.scan_walk = shape::scan_walk(args);
        let imported = import.as_ref().map(|i| import::imported(i, &load));
        let memtier = shape::shape(args, &load, data_size, imported);
        let verify = import::verify(import.as_ref(), &load);
        Ok(Self {
            endpoint: args.endpoint.clone(),
            tls,
            mptcp: args.mptcp,
            family: args.conn.family.map(|f| match f {
                AddrFamily::V4 => Family::V4,
                AddrFamily::V6 => Family::V6,
            }),
            connect_timeout: args.conn.connect_timeout,
            prefix,
            auth,
            load,
            workload,
            format: Format::of(args),
            precision: args.precision,
            loop_forever: args.loop_forever,
            data_size,
            num_functions: args.num_functions,
            num_keys_in_fcall: args.num_keys_in_fcall,
            key_prefix: workloads::key_prefix(args).to_vec(),
            keepalive_raw: args.keepalive,
            threads_flag: args.threads,
            cluster: args.cluster,
            rfr: args.rfr,
            tracking: args.enable_tracking,
            warnings,
            json,
            html,
            journal,
            metrics_listen: args.metrics_listen,
            metrics_linger: args.metrics_linger.unwrap_or_default(),
            repeat: args.repeat,
            mix_in_order: args.workload.in_order,
            memtier,
            verify,
            statsd: args.statsd.clone(),
            server_stats: !args.no_server_stats,
            shard,
            start_at,
            find_max,
            sentinel: args.sentinel.clone(),
            counters,
            memory_per_key,
            dbnum: args.dbnum,
        })
    }
}

impl Format {
    /// `--csv`, else `-q`, else the full text report.
    fn of(args: &Args) -> Self {
        if args.csv {
            Format::Csv
        } else if args.quiet {
            Format::Quiet
        } else {
            Format::Text
        }
    }
}

/// Warnings about connections that work but cost more than the user may think.
fn connection_warnings(args: &Args, warnings: &mut Vec<String>) {
    if args.keepalive == 0 {
        warnings.push(
            "WARNING: -k 0 opens a new connection for every batch; with many requests you may \
             run out of local ports (on Linux: sysctl -w net.ipv4.tcp_tw_reuse=1)"
                .to_string(),
        );
    }
    if args.sequential && args.keyspace.is_none() && args.workload.key_maximum.is_none() {
        warnings.push("WARNING: --sequential has no effect without -r".to_string());
    }
}

/// What `--cluster` cannot do yet, or cannot be given.
fn check_cluster(args: &Args) -> Result<(), String> {
    if args.cluster && args.dataset.is_some() {
        return Err("--dataset with --cluster is not supported yet".to_string());
    }
    if args.cluster && matches!(args.endpoint, Endpoint::Unix(_)) {
        return Err("--cluster needs a TCP entry node (-h/-p or -u), not -s".to_string());
    }
    Ok(())
}

/// The `--html` path and the journal's, named after the shard like the record
/// (`report-{shard}.html`); the journal is `--journal`, else `FILE.partial` beside a `--json`
/// file (`json`: the shard's), else none.
fn html_and_journal(
    args: &Args,
    shard: Option<&shard::ShardPlan>,
    json: Option<&std::path::PathBuf>,
) -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>) {
    let named = |p: &std::path::PathBuf| match shard {
        Some(s) => std::path::PathBuf::from(s.shard.name_path(&p.to_string_lossy())),
        None => p.clone(),
    };
    let html = args.html.as_ref().map(named);
    let journal = match (&args.journal, json) {
        (Some(p), _) => Some(named(p)),
        (None, Some(j)) if !crate::cli::is_stdout(j) => {
            let mut p = j.clone().into_os_string();
            p.push(".partial");
            Some(p.into())
        }
        (None, _) => None,
    };
    (html, journal)
}

/// Which tests run, or the custom command's sequence; `stdin` is the `-x` argument.
fn workload(
    args: &Args,
    data_size: usize,
    stdin: Option<Vec<u8>>,
    warnings: &mut Vec<String>,
) -> Result<Workload, String> {
    if let Some(mix) = workloads::mix(args, data_size)? {
        if !args.command.is_empty() {
            return Err(
                "--ratio/--command run their own mixed test; they cannot be combined with a \
                 custom command"
                    .to_string(),
            );
        }
        if args.tests.is_some() {
            warnings.push("WARNING: Option -t is ignored with --ratio/--command.".to_string());
        }
        return Ok(mix);
    }
    let workload = if args.command.is_empty() {
        if args.stdin_last_arg {
            warnings.push("WARNING: -x has no effect without a custom command".to_string());
        }
        if let Some(list) = &args.tests {
            let unknown: Vec<&str> = list
                .split(',')
                .filter(|n| !n.is_empty() && !suite::known_name(n))
                .collect();
            if !unknown.is_empty() {
                warnings.push(format!(
                    "WARNING: -t: no test named {} (names: see --help)",
                    unknown.join(", ")
                ));
            }
        }
        Workload::Suite(select_tests(args.tests.as_deref()))
    } else {
        if args.tests.is_some() {
            warnings.push("WARNING: Option -t is ignored.".to_string());
        }
        // The test's name in every output (report, progress line, record, HTML, compare):
        // redacted here, once, so none of them shows a password the command carries.
        let title = crate::redact::command(&args.command);
        let items = parse_custom_command(
            &args.command,
            stdin,
            data_size,
            &mut PayloadGenerator::default(),
        )?;
        Workload::Custom { title, items }
    };
    Ok(workload)
}

/// AUTH's arguments after the command name: `[username,] password`.
type AuthArgs = Vec<Vec<u8>>;

/// The commands every connection sends before its first batch, in the reference's order, and
/// the AUTH arguments for the control connection.
fn prefix(args: &Args) -> Result<(Prefix, Option<AuthArgs>), String> {
    let mut prefix = Prefix::default();
    let mut auth = None;
    if let Some(password) = &args.password {
        let mut a: Vec<Vec<u8>> = Vec::new();
        if let Some(user) = &args.user {
            a.push(user.clone());
        }
        a.push(password.clone());
        let mut cmd = vec![b"AUTH".to_vec()];
        cmd.extend(a.iter().cloned());
        resp::encode_command(&mut prefix.bytes, &cmd);
        prefix.commands.push("AUTH");
        auth = Some(a);
    }
    if args.enable_tracking {
        resp::encode_command(
            &mut prefix.bytes,
            &[b"CLIENT".as_slice(), b"TRACKING", b"on"],
        );
        prefix.commands.push("CLIENT TRACKING");
    }
    if args.dbnum != 0 {
        resp::encode_command(
            &mut prefix.bytes,
            &[b"SELECT".to_vec(), args.dbnum.to_string().into_bytes()],
        );
        prefix.commands.push("SELECT");
    }
    if args.resp3 {
        resp::encode_command(&mut prefix.bytes, &[b"HELLO".as_slice(), b"3"]);
        prefix.commands.push("HELLO 3");
    }
    if args.rfr != ReadFromReplicas::No {
        if !args.cluster {
            return Err("--rfr needs --cluster".to_string());
        }
        resp::encode_command(&mut prefix.bytes, &[b"READONLY".as_slice()]);
        prefix.commands.push("READONLY");
    }
    Ok((prefix, auth))
}

/// How the load is applied (the same for every test).
fn load_spec(args: &Args) -> LoadSpec {
    let seed = args.seed.unwrap_or_else(|| {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        t ^ u64::from(std::process::id())
    });
    LoadSpec {
        clients: args.clients,
        workers: args.threads.unwrap_or(1) as usize,
        pipeline: args.pipeline,
        stop: match args.duration {
            Some(d) => Stop::After(d),
            None => Stop::Requests(args.requests),
        },
        warmup: args.warmup.unwrap_or_default(),
        rps: args.rps,
        keepalive: args.keepalive != 0,
        reconnect_interval: args.conn.reconnect_interval,
        conn_start_jitter_us: args.conn.start_jitter_us,
        backoff_factor: args.conn.backoff_factor,
        max_reconnect_attempts: args.conn.max_reconnect_attempts,
        ramp: args
            .conn
            .ramp
            .map(|(start, step, secs)| crate::engine::Ramp {
                start,
                step,
                every: std::time::Duration::from_secs(secs),
            }),
        keyspace: args.keyspace,
        sequential: args.sequential,
        seed,
        on_error: if args.continue_on_error {
            ErrorPolicy::Count
        } else {
            ErrorPolicy::Abort
        },
        dataset: None,
        reply_timeout: args.timeout,
        key_pattern: crate::workload::distribution::KeyPattern::Uniform,
        key_min: 0,
        arrival: crate::engine::Arrival::Uniform,
        value_sizes: None,
        mix: None,
        shard: crate::workload::split::Share::WHOLE,
        key_drift: None,
        scan_walk: None,
        conn_seconds: args.conn.client_stats,
        quota_per_conn: args.workload.memtier.is_some(),
    }
}

/// The TLS options when TLS is on, with the cipher lists checked (a list that leaves no suite
/// respbench has is a usage error). TLS options without `--tls` do nothing, as in valkey-benchmark: a
/// warning says so.
///
/// `cli::TlsArgs` (the flags as given) and `engine::tls::TlsOptions` (what TLS set-up takes,
/// typed) stay two types on purpose: `cli` imports nothing of the crate and the engine nothing
/// of `cli`, so the one place that knows both resolves the one into the other, here.
pub fn tls_options(args: &Args, warnings: &mut Vec<String>) -> Result<Option<TlsOptions>, String> {
    let t = &args.tls;
    if !t.enabled {
        let mut given = t.given_flags();
        if args.conn.tls_versions.is_some() {
            given.push("--tls-protocols");
        }
        if !given.is_empty() {
            warnings.push(format!(
                "WARNING: {} {} no effect without --tls (or a rediss:// URI)",
                given.join(", "),
                if given.len() == 1 { "has" } else { "have" }
            ));
        }
        if t.resume {
            warnings.push("WARNING: --tls-resume has no effect without --tls".into());
        }
        return Ok(None);
    }
    check_cipher_lists(t.ciphers.as_deref(), t.ciphersuites.as_deref())?;
    let verify = if t.insecure {
        Verify::Nothing
    } else {
        Verify::Chain {
            cacert: t.cacert.clone(),
            cacertdir: t.cacertdir.clone(),
            name: t.verify_name,
        }
    };
    let client_cert = match (&t.cert, &t.key) {
        (Some(cert), Some(key)) => Some(ClientCert {
            cert: cert.clone(),
            key: key.clone(),
        }),
        (None, None) => None,
        // The command line refuses one without the other; defensive.
        _ => return Err("--cert and --key go together".to_string()),
    };
    Ok(Some(TlsOptions {
        sni: t.sni.clone(),
        verify,
        client_cert,
        ciphers: t.ciphers.clone(),
        ciphersuites: t.ciphersuites.clone(),
        versions: args.conn.tls_versions.map(|v| (v.tls12, v.tls13)),
        resume: t.resume,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(argv: &[&str]) -> RunPlan {
        let args = match crate::cli::parse(argv.iter().map(|s| s.into())).unwrap() {
            crate::cli::Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        RunPlan::new(&args, None).unwrap()
    }

    #[test]
    fn prefix_has_auth_select_hello_in_order() {
        let p = plan(&["-a", "pw", "--user", "bob", "--dbnum", "3", "-3"]);
        assert_eq!(p.prefix.commands, ["AUTH", "SELECT", "HELLO 3"]);
        let text = String::from_utf8(p.prefix.bytes).unwrap();
        assert!(text.starts_with(
            "*3\r\n$4\r\nAUTH\r\n$3\r\nbob\r\n$2\r\npw\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n"
        ));
        assert!(text.ends_with("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"));
        assert_eq!(p.auth, Some(vec![b"bob".to_vec(), b"pw".to_vec()]));
    }

    #[test]
    fn custom_command_title_and_t_warning() {
        let p = plan(&["-t", "set", "set", "foo", "bar"]);
        match &p.workload {
            Workload::Custom { title, items } => {
                assert_eq!(title, "set foo bar");
                assert_eq!(items.len(), 1);
            }
            w => panic!("{w:?}"),
        }
        assert!(p.warnings.iter().any(|w| w.contains("-t is ignored")));
    }

    #[test]
    fn defaults_are_the_reference_ones() {
        let p = plan(&[]);
        assert_eq!(p.load.clients, 50);
        assert_eq!(p.load.stop, Stop::Requests(100_000));
        assert_eq!(p.load.pipeline, 1);
        assert!(p.load.keepalive);
        assert_eq!(p.load.workers, 1);
        assert!(p.prefix.commands.is_empty());
        assert_eq!(p.format, Format::Text);
        match p.workload {
            Workload::Suite(t) => assert_eq!(t.len(), 24),
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn tls_options_travel_and_are_checked() {
        let p = plan(&[
            "--tls",
            "--sni",
            "redis.test",
            "--cacert",
            "ca.pem",
            "--mptcp",
        ]);
        let tls = p.tls.expect("TLS on");
        assert_eq!(tls.sni.as_deref(), Some("redis.test"));
        let chain = Verify::Chain {
            cacert: Some("ca.pem".into()),
            cacertdir: None,
            name: false,
        };
        assert_eq!(tls.verify, chain);
        assert!(p.mptcp);
        // What contradicts the verification is resolved here: --insecure verifies nothing.
        let insecure = plan(&[
            "--tls",
            "--insecure",
            "--tls-verify-name",
            "--cacert",
            "ca.pem",
        ]);
        assert_eq!(insecure.tls.unwrap().verify, Verify::Nothing);
        let cert = plan(&["--tls", "--cert", "c.crt", "--key", "c.key"])
            .tls
            .unwrap();
        assert_eq!(
            cert.client_cert,
            Some(ClientCert {
                cert: "c.crt".into(),
                key: "c.key".into()
            })
        );
        assert!(plan(&["-u", "rediss://h:6380"]).tls.is_some());
        assert!(plan(&[]).tls.is_none());

        let args = |argv: &[&str]| match crate::cli::parse(argv.iter().map(|s| s.into())) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            other => panic!("{other:?}"),
        };
        let e = RunPlan::new(&args(&["--tls", "--tls-ciphers", "NOPE"]), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--tls-ciphers \"NOPE\""), "{e}");
        let e = RunPlan::new(&args(&["--tls", "--tls-ciphersuites", "NOPE"]), None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--tls-ciphersuites \"NOPE\""), "{e}");
    }

    #[test]
    fn tls_options_without_tls_warn() {
        let p = plan(&["--cacert", "ca.pem", "--insecure"]);
        assert!(p.tls.is_none());
        assert!(
            p.warnings.contains(
                &"WARNING: --cacert, --insecure have no effect without --tls (or a rediss:// URI)"
                    .to_string()
            ),
            "{:?}",
            p.warnings
        );
        // Not checked either: the reference ignores them.
        assert!(plan(&["--tls-ciphers", "NOPE"]).tls.is_none());
    }

    #[test]
    fn same_seed_is_kept_and_modes_map() {
        let p = plan(&["--seed", "9", "-e", "--rps", "100", "--csv", "-q"]);
        assert_eq!(p.load.seed, 9);
        assert_eq!(p.load.on_error, ErrorPolicy::Count);
        assert_eq!(p.load.rps, Some(100));
        assert_eq!(p.format, Format::Csv, "--csv wins over -q");
    }
}
