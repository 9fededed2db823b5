//! The command line: valkey-benchmark's option table, parsed and validated, with no I/O.
//!
//! Owns: spelling, defaults and validation of every flag (one table entry per option,
//! `flags/`; the entry type `flag.rs`, which the subcommands' tables use too); the help and
//! version texts. Must not:
//! read stdin, open sockets or resolve anything (see `plan`). Every mistake is a [`UsageError`]
//! with a one-line message; `main` turns it into exit code 2.

use std::path::PathBuf;
use std::time::Duration;

/// A command-line mistake: one line, printed as `respbench: <message>`; exit code 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Invocation {
    Run(Box<Args>),
    Help,
    Version,
}

/// Where the server is, as `-h/-p`, `-s` or `-u` said (later flags override earlier ones, as in
/// the reference; `-s` overrides host and port).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// Every option, typed and validated. Defaults are valkey-benchmark's.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// `-h`/`-p`/`-s`/`-u` (default 127.0.0.1:6379).
    pub endpoint: Endpoint,
    /// `-a`, or the password part of `-u`.
    pub password: Option<Vec<u8>>,
    /// `--user`, or the user part of `-u` (only used together with a password).
    pub user: Option<Vec<u8>>,
    /// `-c` (default 50, at least 1).
    pub clients: u32,
    /// `-n` (default 100000, at least 1). Counts commands.
    pub requests: u64,
    /// `--duration` seconds (mutually exclusive with an explicit `-n`).
    pub duration: Option<Duration>,
    /// `--warmup` seconds.
    pub warmup: Option<Duration>,
    /// `-d` (default 3, 1 ..= 1 GiB).
    pub data_size: usize,
    /// `--dbnum` (default 0; non-zero sends SELECT), or the db part of `-u`.
    pub dbnum: u32,
    /// `-3`: HELLO 3.
    pub resp3: bool,
    /// `--threads` if given (1 ..= 500); `None` = one worker thread, "multi-thread: no".
    pub threads: Option<u32>,
    /// `-k` as given (default 1); 0 = reconnect after every batch.
    pub keepalive: i64,
    /// memtier's connection options (`--reconnect-interval`, `-4`/`-6`, `--tls-protocols`, …).
    pub conn: ConnArgs,
    /// `-r` keyspace length (0 ..= 999_999_999_999).
    pub keyspace: Option<u64>,
    /// `--sequential`.
    pub sequential: bool,
    /// `-P` (default 1, at least 1).
    pub pipeline: u32,
    /// `-q`.
    pub quiet: bool,
    /// `--csv`.
    pub csv: bool,
    /// `-l`.
    pub loop_forever: bool,
    /// `-t` as given (matched later against the suite).
    pub tests: Option<String>,
    /// `-I`.
    pub idle: bool,
    /// `-x`: append stdin as the last argument of the custom command.
    pub stdin_last_arg: bool,
    /// `-e`: keep going on error replies and count them.
    pub continue_on_error: bool,
    /// `--precision` decimal places of latency figures (default 3, 0 ..= 6).
    pub precision: usize,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--rps`; `None` = unlimited (`--rps 0`, as the reference, or no option).
    pub rps: Option<u64>,
    /// `--num-functions` (default 10, at least 1).
    pub num_functions: u32,
    /// `--num-keys-in-fcall` (default 1).
    pub num_keys_in_fcall: u32,
    /// `--cluster`.
    pub cluster: bool,
    /// `--rfr` (default `no`).
    pub rfr: ReadFromReplicas,
    /// `--enable-tracking`: CLIENT TRACKING on.
    pub enable_tracking: bool,
    /// `--dataset` file (CSV; TSV by its `.tsv` name; XML by `.xml`).
    pub dataset: Option<PathBuf>,
    /// `--maxdocs`: at most this many dataset records (`None`: all; the reference's <= 0).
    pub maxdocs: Option<u64>,
    /// `--xml-root-element`: the element that is one record of an XML dataset.
    pub xml_root_element: Option<String>,
    /// `--tls` and its options (also turned on by `rediss://` / `valkeys://`).
    pub tls: TlsArgs,
    /// `--mptcp`: open TCP connections as Multipath TCP.
    pub mptcp: bool,
    /// `--json`: write the run's record (JSON) to this file; `-` is stdout (the human report then
    /// goes to stderr).
    pub json: Option<PathBuf>,
    /// `--no-server-stats`: do not sample the server's `INFO` during tests.
    pub no_server_stats: bool,
    /// `--sentinel` and its options: find (and follow) the primary through Sentinels.
    pub sentinel: SentinelArgs,
    /// `--check-counters`: after an `INCR` test, compare acknowledged increments with the
    /// counters' values (lost writes).
    pub check_counters: bool,
    /// `--html`: also write the run as a self-contained HTML report to this file.
    pub html: Option<PathBuf>,
    /// `--journal`: where the run's journal goes (`record::journal`); default beside `--json`.
    pub journal: Option<PathBuf>,
    /// `--metrics-listen`: serve live metrics on this address (`crate::live`).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--metrics-linger`: keep serving them this long after the run.
    pub metrics_linger: Option<Duration>,
    /// memtier's `--statsd-host` and its options: real-time metrics over UDP (`crate::live`).
    pub statsd: Option<StatsdArgs>,
    /// `--repeat N`: run every test N times (1: once, the default).
    pub repeat: u32,
    /// `--shard I/N`: run shard I of N, as (I, N) (the plan makes the shard: `plan::shard`).
    pub shard: Option<(u64, u64)>,
    /// `--shards N`: the shard count when the environment gives only an index (Kubernetes).
    pub shards: Option<u64>,
    /// `--start-at TIME` as typed; resolved against the clock by the plan.
    pub start_at: Option<String>,
    /// `--timeout SECS`: a request unanswered this long fails (kind `timeout`) and its
    /// connection is reopened; `None` waits for replies as long as the test lasts.
    pub timeout: Option<Duration>,
    /// `--find-max SLO` as typed (`p99<1ms`); parsed by the plan (`slo::Slo`).
    pub find_max: Option<String>,
    /// `--step-duration`: each `--find-max` step's measured window.
    pub step_duration: Option<Duration>,
    /// The trailing custom command, raw bytes, `--` removed. Empty = the default suite.
    pub command: Vec<Vec<u8>>,
    /// Key distributions, value sizes, `--ratio`, `--arrival` (`workloads.rs`).
    pub workload: WorkloadArgs,
    /// Each mode's own options (`--connect-storm`, `--fuzz`, …), by their type, filled by the
    /// entries the registry installed (`mode_args.rs`); read with [`Args::mode`].
    modes: ModeSlots,
}

impl Args {
    /// The options of the mode whose options' type is `A` (`args.mode::<StormArgs>()`).
    pub fn mode<A: ModeArgs>(&self) -> &A {
        self.modes.get()
    }

    /// The same, to change (the mode's entries' setters).
    pub fn mode_mut<A: ModeArgs>(&mut self) -> &mut A {
        self.modes.get_mut()
    }

    /// Whether the option spelled `name` asked for a mode or one of its switches
    /// (`--connect-storm`, `--fill`): for the layers below the modes, which do not name them.
    pub fn asks(&self, name: &str) -> bool {
        self.modes.asks(name)
    }
}

/// `--rfr`: which cluster nodes serve reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadFromReplicas {
    /// Primaries only (default).
    #[default]
    No,
    /// Replicas only (writes still go to primaries).
    Yes,
    /// Primaries and replicas (writes still go to primaries).
    All,
}

/// The TLS options, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsArgs {
    /// `--tls`, or a `rediss://`/`valkeys://` URI.
    pub enabled: bool,
    /// `--sni`.
    pub sni: Option<String>,
    /// `--cacert`.
    pub cacert: Option<PathBuf>,
    /// `--cacertdir`.
    pub cacertdir: Option<PathBuf>,
    /// `--insecure`: do not verify the server's certificate.
    pub insecure: bool,
    /// `--tls-verify-name`: also require the certificate to name the host (or `--sni`).
    pub verify_name: bool,
    /// `--cert`: client certificate.
    pub cert: Option<PathBuf>,
    /// `--key`: client private key.
    pub key: Option<PathBuf>,
    /// `--tls-ciphers` (TLS 1.2, OpenSSL cipher-list syntax).
    pub ciphers: Option<String>,
    /// `--tls-ciphersuites` (TLS 1.3, OpenSSL syntax).
    pub ciphersuites: Option<String>,
    /// `--tls-resume`: resume sessions from the tickets of earlier connections (its entry is
    /// the connection storm's, which times resumed handshakes apart).
    pub resume: bool,
}

impl TlsArgs {
    /// The TLS options given, by flag name (for the warning when TLS is off).
    pub fn given_flags(&self) -> Vec<&'static str> {
        [
            ("--sni", self.sni.is_some()),
            ("--cacert", self.cacert.is_some()),
            ("--cacertdir", self.cacertdir.is_some()),
            ("--insecure", self.insecure),
            ("--tls-verify-name", self.verify_name),
            ("--cert", self.cert.is_some()),
            ("--key", self.key.is_some()),
            ("--tls-ciphers", self.ciphers.is_some()),
            ("--tls-ciphersuites", self.ciphersuites.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect()
    }
}

mod conn_args;
pub mod connection;
mod drift;
pub mod flag;
pub(crate) mod flags;
mod help;
mod mode_args;
pub(crate) mod parse;
mod paths;
mod sentinel;
pub mod state;
mod statsd;
#[cfg(test)]
mod tests;
mod uri;
pub mod value;
mod words;
mod workloads;

pub use conn_args::{AddrFamily, ConnArgs, TlsVersionsArg, WaitArgs};
pub use drift::KeyDriftArg;
pub use flag::SecretValue;
pub use flags::{docs, metrics_address, secret_value, takes_value};
pub use help::{help_text, version_text};
use mode_args::ModeSlots;
pub use mode_args::{ArgsKind, ModeArgs, Place, install};
pub use parse::{PASSWORD_ENV, parse, parse_with_env};
pub use paths::{STDOUT, check_output, check_outputs, is_stdout};
pub use sentinel::SentinelArgs;
pub use state::State;
pub use statsd::StatsdArgs;
pub use uri::{Uri, parse_uri};
pub(crate) use value::seconds as parse_seconds;
pub use value::shard as parse_shard;
pub use words::{QuoteError, Word, split_words};
pub use workloads::{
    ArrivalArg, CommandArg, DataSizes, ImportArgs, KeyDist, MemtierData, WorkloadArgs,
};

/// The host `-h` defaults to.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// The port `-p` (and a `-u` URI without a port) defaults to.
pub const DEFAULT_PORT: u16 = 6379;

impl Default for Args {
    /// valkey-benchmark's defaults: 127.0.0.1:6379, 50 clients, 100000 requests, 3-byte values,
    /// keep-alive, no pipelining, precision 3, 10 functions with 1 key per FCALL, the default suite.
    fn default() -> Self {
        Args {
            endpoint: Endpoint::Tcp {
                host: DEFAULT_HOST.to_owned(),
                port: DEFAULT_PORT,
            },
            password: None,
            user: None,
            clients: 50,
            requests: 100_000,
            duration: None,
            warmup: None,
            data_size: 3,
            dbnum: 0,
            resp3: false,
            threads: None,
            keepalive: 1,
            conn: ConnArgs::default(),
            keyspace: None,
            sequential: false,
            pipeline: 1,
            quiet: false,
            csv: false,
            loop_forever: false,
            tests: None,
            idle: false,
            stdin_last_arg: false,
            continue_on_error: false,
            precision: 3,
            seed: None,
            rps: None,
            num_functions: 10,
            num_keys_in_fcall: 1,
            cluster: false,
            rfr: ReadFromReplicas::No,
            enable_tracking: false,
            dataset: None,
            maxdocs: None,
            xml_root_element: None,
            tls: TlsArgs::default(),
            mptcp: false,
            json: None,
            no_server_stats: false,
            sentinel: SentinelArgs::default(),
            check_counters: false,
            html: None,
            journal: None,
            metrics_listen: None,
            metrics_linger: None,
            statsd: None,
            repeat: 1,
            shard: None,
            shards: None,
            start_at: None,
            timeout: None,
            find_max: None,
            step_duration: None,
            command: Vec::new(),
            workload: WorkloadArgs::default(),
            modes: ModeSlots::default(),
        }
    }
}
