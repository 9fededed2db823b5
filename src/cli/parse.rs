//! argv → [`Invocation`]: valkey-benchmark's option table, lexed with `lexopt`, every value
//! validated.
//!
//! Owns: which spellings exist ([`FLAGS`]), where options end and the custom command begins, the
//! ranges of numeric values, and the cross-option checks. Must not: print, read stdin or touch the
//! network; resolve `-t` names or the command (that is `plan`/`workload`'s job).
//!
//! Rules (valkey-benchmark's, with numbers validated instead of `atoi`'d):
//! - each option's value is the next argv element, even if it starts with `-`; `-n100` and
//!   `--rps=10` are accepted too;
//! - later occurrences override earlier ones;
//! - options end at `--` or at the first argument that does not start with `-`; that argument and
//!   everything after it is the custom command, byte for byte;
//! - `--help` and `-v`/`--version` take effect where they appear, so an error before them wins
//!   and anything after them is not looked at.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use super::uri::{self, Uri};
use super::value::{MAX_DBNUM, invalid_value, path, seconds, signed, text, whole};
use super::workloads::WorkloadOpt;
use super::{Args, DEFAULT_HOST, DEFAULT_PORT, Endpoint, Invocation, ReadFromReplicas, UsageError};

/// What an option spelling means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Opt {
    Host,
    Port,
    Socket,
    Password,
    User,
    Uri,
    Clients,
    Requests,
    Duration,
    Warmup,
    DataSize,
    Dbnum,
    Resp3,
    Threads,
    Keepalive,
    Keyspace,
    Sequential,
    Pipeline,
    Quiet,
    Csv,
    Loop,
    Tests,
    Idle,
    StdinLastArg,
    ContinueOnError,
    Precision,
    Seed,
    Rps,
    NumFunctions,
    NumKeysInFcall,
    Cluster,
    Rfr,
    EnableTracking,
    Dataset,
    Maxdocs,
    Tls,
    Sni,
    Cacert,
    Cacertdir,
    Insecure,
    TlsVerifyName,
    Cert,
    Key,
    TlsCiphers,
    TlsCiphersuites,
    Mptcp,
    Json,
    Html,
    Repeat,
    NoServerStats,
    // Sentinel and lost writes (issue 11): respbench's own options.
    Sentinel,
    PrimaryName,
    SentinelUser,
    SentinelPassword,
    CheckCounters,
    // Sharded runs (issue 13): respbench's own options, not valkey-benchmark's.
    Shard,
    Shards,
    StartAt,
    // Failures (issue 11).
    Timeout,
    // `--find-max` (issue 12): the throughput an SLO allows.
    FindMax,
    StepDuration,
    Help,
    Version,
    /// Workload options (issue 12), parsed in `workloads.rs`; all take a value.
    Workload(WorkloadOpt),
    /// A valkey-benchmark option respbench does not implement yet: its value (if any) is consumed
    /// so the rest of the line still parses, then the invocation is refused.
    NotYet {
        takes_value: bool,
    },
    /// An option that only exists in some valkey-benchmark builds (RDMA).
    NotInThisBuild {
        takes_value: bool,
    },
}

impl Opt {
    /// Whether the next argv element (or an attached `=value`) belongs to this option.
    pub(super) fn takes_value(self) -> bool {
        match self {
            Opt::Host
            | Opt::Port
            | Opt::Socket
            | Opt::Password
            | Opt::User
            | Opt::Uri
            | Opt::Clients
            | Opt::Requests
            | Opt::Duration
            | Opt::Warmup
            | Opt::DataSize
            | Opt::Dbnum
            | Opt::Threads
            | Opt::Keepalive
            | Opt::Keyspace
            | Opt::Pipeline
            | Opt::Tests
            | Opt::Precision
            | Opt::Seed
            | Opt::Rps
            | Opt::NumFunctions
            | Opt::NumKeysInFcall
            | Opt::Rfr
            | Opt::Dataset
            | Opt::Maxdocs
            | Opt::Sni
            | Opt::Cacert
            | Opt::Cacertdir
            | Opt::Cert
            | Opt::Key
            | Opt::TlsCiphers
            | Opt::TlsCiphersuites
            | Opt::Json
            | Opt::Html
            | Opt::Repeat
            | Opt::Sentinel
            | Opt::PrimaryName
            | Opt::SentinelUser
            | Opt::SentinelPassword
            | Opt::Shard
            | Opt::Shards
            | Opt::StartAt
            | Opt::Timeout
            | Opt::FindMax
            | Opt::StepDuration
            | Opt::Workload(_) => true,
            Opt::Resp3
            | Opt::Sequential
            | Opt::Quiet
            | Opt::Csv
            | Opt::Loop
            | Opt::Idle
            | Opt::StdinLastArg
            | Opt::ContinueOnError
            | Opt::Cluster
            | Opt::EnableTracking
            | Opt::Tls
            | Opt::Insecure
            | Opt::TlsVerifyName
            | Opt::Mptcp
            | Opt::NoServerStats
            | Opt::CheckCounters
            | Opt::Help
            | Opt::Version => false,
            Opt::NotYet { takes_value } | Opt::NotInThisBuild { takes_value } => takes_value,
        }
    }
}

/// Every option spelling valkey-benchmark knows (exact match, case-sensitive), in its help order.
pub(super) const FLAGS: &[(&str, Opt)] = &[
    ("-h", Opt::Host),
    ("-p", Opt::Port),
    ("-s", Opt::Socket),
    ("-a", Opt::Password),
    ("--user", Opt::User),
    ("-u", Opt::Uri),
    ("-c", Opt::Clients),
    ("-n", Opt::Requests),
    ("--duration", Opt::Duration),
    ("--warmup", Opt::Warmup),
    ("-d", Opt::DataSize),
    ("--dbnum", Opt::Dbnum),
    ("-3", Opt::Resp3),
    ("--threads", Opt::Threads),
    ("--cluster", Opt::Cluster),
    ("--rfr", Opt::Rfr),
    ("--enable-tracking", Opt::EnableTracking),
    ("-k", Opt::Keepalive),
    ("-r", Opt::Keyspace),
    ("--sequential", Opt::Sequential),
    ("-P", Opt::Pipeline),
    ("-q", Opt::Quiet),
    ("--precision", Opt::Precision),
    ("--csv", Opt::Csv),
    ("-l", Opt::Loop),
    ("-t", Opt::Tests),
    ("-I", Opt::Idle),
    ("-x", Opt::StdinLastArg),
    ("-e", Opt::ContinueOnError),
    ("--seed", Opt::Seed),
    ("--rps", Opt::Rps),
    ("--num-functions", Opt::NumFunctions),
    ("--num-keys-in-fcall", Opt::NumKeysInFcall),
    ("--dataset", Opt::Dataset),
    ("--maxdocs", Opt::Maxdocs),
    ("--fuzz", Opt::NotYet { takes_value: false }),
    ("--fuzz-mode", Opt::NotYet { takes_value: true }),
    ("--fuzz-loglevel", Opt::NotYet { takes_value: true }),
    ("--tls", Opt::Tls),
    ("--sni", Opt::Sni),
    ("--cacert", Opt::Cacert),
    ("--cacertdir", Opt::Cacertdir),
    ("--insecure", Opt::Insecure),
    ("--tls-verify-name", Opt::TlsVerifyName),
    ("--cert", Opt::Cert),
    ("--key", Opt::Key),
    ("--tls-ciphers", Opt::TlsCiphers),
    ("--tls-ciphersuites", Opt::TlsCiphersuites),
    ("--rdma", Opt::NotInThisBuild { takes_value: false }),
    ("--mptcp", Opt::Mptcp),
    ("--json", Opt::Json),
    ("--html", Opt::Html),
    ("--repeat", Opt::Repeat),
    ("--no-server-stats", Opt::NoServerStats),
    ("--sentinel", Opt::Sentinel),
    ("--primary-name", Opt::PrimaryName),
    ("--master-name", Opt::PrimaryName),
    ("--sentinel-user", Opt::SentinelUser),
    ("--sentinel-password", Opt::SentinelPassword),
    ("--check-counters", Opt::CheckCounters),
    ("--shard", Opt::Shard),
    ("--shards", Opt::Shards),
    ("--start-at", Opt::StartAt),
    ("--timeout", Opt::Timeout),
    ("--find-max", Opt::FindMax),
    ("--step-duration", Opt::StepDuration),
    ("--help", Opt::Help),
    ("-v", Opt::Version),
    ("--version", Opt::Version),
    // Workload options (issue 12): memtier_benchmark's spellings, then respbench's own.
    ("--key-pattern", Opt::Workload(WorkloadOpt::KeyPattern)),
    ("--key-minimum", Opt::Workload(WorkloadOpt::KeyMinimum)),
    ("--key-maximum", Opt::Workload(WorkloadOpt::KeyMaximum)),
    ("--key-stddev", Opt::Workload(WorkloadOpt::KeyStddev)),
    ("--key-median", Opt::Workload(WorkloadOpt::KeyMedian)),
    ("--key-zipf-exp", Opt::Workload(WorkloadOpt::KeyZipfExp)),
    ("--key-prefix", Opt::Workload(WorkloadOpt::KeyPrefix)),
    (
        "--data-size-range",
        Opt::Workload(WorkloadOpt::DataSizeRange),
    ),
    ("--data-size-list", Opt::Workload(WorkloadOpt::DataSizeList)),
    ("--ratio", Opt::Workload(WorkloadOpt::Ratio)),
    ("--command", Opt::Workload(WorkloadOpt::Command)),
    ("--command-ratio", Opt::Workload(WorkloadOpt::CommandRatio)),
    (
        "--command-key-pattern",
        Opt::Workload(WorkloadOpt::CommandKeyPattern),
    ),
    ("--keys", Opt::Workload(WorkloadOpt::Keys)),
    ("--arrival", Opt::Workload(WorkloadOpt::Arrival)),
];

/// Whether the option spelled `name` (`-a`, `--rps`) takes a value; `None` for an unknown
/// spelling. `crate::redact` uses it to find option values in argv.
pub fn takes_value(name: &str) -> Option<bool> {
    FLAGS
        .iter()
        .find(|(spelling, _)| *spelling == name)
        .map(|(_, opt)| opt.takes_value())
}

/// Where a secret hides in an option's value, for `crate::redact`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretValue {
    /// The whole value is a password (`-a`, `--sentinel-password`).
    Password,
    /// A server URI whose userinfo may hold a password (`-u`).
    Uri,
    /// A command line whose arguments may hold one (`--command 'AUTH user PW'`).
    Command,
}

/// Where the option spelled `name` may carry a secret in its value (`None`: it never does, or
/// the spelling is unknown). From the option table, so a new secret option is covered where it
/// is added.
pub fn secret_value(name: &str) -> Option<SecretValue> {
    let (_, opt) = FLAGS.iter().find(|(spelling, _)| *spelling == name)?;
    match opt {
        Opt::Password | Opt::SentinelPassword => Some(SecretValue::Password),
        Opt::Uri => Some(SecretValue::Uri),
        Opt::Workload(WorkloadOpt::Command) => Some(SecretValue::Command),
        _ => None,
    }
}

/// Largest `-r`: 12-digit placeholders hold at most 999,999,999,999 (valkey #4252's cap).
const MAX_KEYSPACE: u64 = 999_999_999_999;

/// Parses the arguments (without the program name) into what the user asked for.
///
/// Returns [`Invocation::Help`] or [`Invocation::Version`] as soon as `--help` or
/// `-v`/`--version` is met among the options; otherwise the validated [`Args`]. Every mistake is
/// a one-line [`UsageError`] naming the option and, for a bad value, the value and what was
/// expected.
pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Invocation, UsageError> {
    parse_with_env(args, None)
}

/// The environment variable a password may come from when neither `-a` nor `-u` gives one: the
/// convention redis-cli and valkey-cli users know, which keeps the password out of `ps`.
pub const PASSWORD_ENV: &str = "REDISCLI_AUTH";

/// [`parse`], with the value of [`PASSWORD_ENV`] (read by the caller, so that parsing stays a
/// pure function): used when the command line gives no password; an empty value is none.
pub fn parse_with_env<I: IntoIterator<Item = OsString>>(
    args: I,
    env_password: Option<OsString>,
) -> Result<Invocation, UsageError> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut st = State {
        env_password: env_password.filter(|p| !p.is_empty()),
        ..State::default()
    };

    loop {
        // Look at the next whole argument before lexopt does: valkey-benchmark stops at the first
        // non-option (lexopt would skip positionals and keep lexing options after them) and at
        // `--`; a lone `-` is an unknown option there, not a positional.
        if let Some(mut raw) = parser.try_raw_args() {
            match raw.peek().map(OsStr::as_bytes) {
                None => break,
                Some(b"--") => {
                    raw.next();
                    st.args.command = raw.map(OsStringExt::into_vec).collect();
                    break;
                }
                Some(b"-") => return Err(invalid_option("-")),
                Some(arg) if !arg.starts_with(b"-") => {
                    st.args.command = raw.map(OsStringExt::into_vec).collect();
                    break;
                }
                Some(_) => {}
            }
        }

        let name = match parser.next().map_err(lex_error)? {
            None => break,
            Some(lexopt::Arg::Short(c)) => format!("-{c}"),
            Some(lexopt::Arg::Long(long)) => format!("--{long}"),
            // Unreachable given the peek above; treated like any first non-option.
            Some(lexopt::Arg::Value(first)) => {
                st.args.command.push(first.into_vec());
                let rest = parser.raw_args().map_err(lex_error)?;
                st.args.command.extend(rest.map(OsStringExt::into_vec));
                break;
            }
        };
        let Some(&(name, opt)) = FLAGS.iter().find(|(spelling, _)| *spelling == name) else {
            return Err(invalid_option(&name));
        };
        let value = if opt.takes_value() {
            parser.value().map_err(|_| missing_value(name))?
        } else {
            OsString::new()
        };
        if let Some(done) = st.apply(name, opt, &value)? {
            return Ok(done);
        }
    }

    st.finish().map(|args| Invocation::Run(Box::new(args)))
}

/// Everything seen so far; the endpoint is resolved at the end because `-s` wins over `-h`, `-p`
/// and `-u` whatever the order.
struct State {
    args: Args,
    host: String,
    port: u16,
    socket: Option<PathBuf>,
    /// `-n` was given (its default does not conflict with `--duration`).
    requests_given: bool,
    /// `--user` was given (a user from `-u` never needs checking: it always came with `:`).
    user_given: bool,
    /// The password from [`PASSWORD_ENV`], if set and not empty.
    env_password: Option<OsString>,
    /// The first recognised-but-unsupported option, refused once the whole line has parsed.
    unsupported: Option<UsageError>,
}

impl Default for State {
    fn default() -> Self {
        State {
            args: Args::default(),
            host: DEFAULT_HOST.to_owned(),
            port: DEFAULT_PORT,
            socket: None,
            requests_given: false,
            user_given: false,
            env_password: None,
            unsupported: None,
        }
    }
}

impl State {
    /// Applies one option; `Some` ends parsing (`--help`, `--version`).
    fn apply(
        &mut self,
        name: &'static str,
        opt: Opt,
        v: &OsStr,
    ) -> Result<Option<Invocation>, UsageError> {
        let a = &mut self.args;
        match opt {
            Opt::Host => {
                self.host = text(name, v)?;
                if self.host.is_empty() {
                    return Err(invalid_value(name, v, "a host name or address"));
                }
            }
            Opt::Port => self.port = whole(name, v, 0, u16::MAX.into())?,
            Opt::Socket => {
                if v.is_empty() {
                    return Err(invalid_value(name, v, "a socket path"));
                }
                self.socket = Some(PathBuf::from(v));
            }
            Opt::Password => a.password = Some(v.as_bytes().to_vec()),
            Opt::User => {
                a.user = Some(v.as_bytes().to_vec());
                self.user_given = true;
            }
            Opt::Uri => {
                let Uri {
                    user,
                    password,
                    host,
                    port,
                    db,
                    tls,
                } = uri::parse_uri(v)?;
                if tls {
                    a.tls.enabled = true;
                }
                if let Some(host) = host {
                    self.host = host;
                }
                if let Some(port) = port {
                    self.port = port;
                }
                if user.is_some() {
                    a.user = user;
                }
                if password.is_some() {
                    a.password = password;
                }
                if let Some(db) = db {
                    a.dbnum = db;
                }
            }
            Opt::Clients => a.clients = whole(name, v, 1, 1_000_000)?,
            Opt::Requests => {
                a.requests = whole(name, v, 1, u64::MAX)?;
                self.requests_given = true;
            }
            Opt::Duration => a.duration = Some(seconds(name, v)?),
            Opt::Warmup => a.warmup = Some(seconds(name, v)?),
            Opt::DataSize => a.data_size = whole(name, v, 1, 1 << 30)?,
            Opt::Dbnum => a.dbnum = whole(name, v, 0, MAX_DBNUM)?,
            Opt::Resp3 => a.resp3 = true,
            Opt::Threads => {
                let n: u32 = whole(name, v, 0, 500)?;
                a.threads = (n != 0).then_some(n);
            }
            Opt::Keepalive => a.keepalive = signed(name, v)?,
            Opt::Keyspace => a.keyspace = Some(whole(name, v, 0, MAX_KEYSPACE)?),
            Opt::Sequential => a.sequential = true,
            Opt::Pipeline => a.pipeline = whole(name, v, 1, 1_000_000)?,
            Opt::Quiet => a.quiet = true,
            Opt::Csv => a.csv = true,
            Opt::Loop => a.loop_forever = true,
            Opt::Tests => a.tests = Some(text(name, v)?),
            Opt::Idle => a.idle = true,
            Opt::StdinLastArg => a.stdin_last_arg = true,
            Opt::ContinueOnError => a.continue_on_error = true,
            Opt::Precision => a.precision = whole(name, v, 0, 6)?,
            Opt::Seed => a.seed = Some(whole(name, v, 0, u64::MAX)?),
            Opt::Rps => a.rps = Some(whole(name, v, 0, u64::MAX)?).filter(|&r| r > 0),
            Opt::NumFunctions => a.num_functions = whole(name, v, 1, 100_000)?,
            Opt::NumKeysInFcall => a.num_keys_in_fcall = whole(name, v, 0, 1_000_000)?,
            Opt::Cluster => a.cluster = true,
            Opt::Rfr => {
                a.rfr = match v.as_bytes() {
                    b"no" => ReadFromReplicas::No,
                    b"yes" => ReadFromReplicas::Yes,
                    b"all" => ReadFromReplicas::All,
                    _ => return Err(invalid_value(name, v, "no, yes or all")),
                }
            }
            Opt::EnableTracking => a.enable_tracking = true,
            Opt::Dataset => a.dataset = Some(path(name, v, "a dataset file")?),
            Opt::Maxdocs => {
                // The reference takes any integer and treats <= 0 as "no limit".
                let n = signed(name, v)?;
                a.maxdocs = u64::try_from(n).ok().filter(|&n| n > 0);
            }
            Opt::Tls => a.tls.enabled = true,
            Opt::Sni => {
                let sni = text(name, v)?;
                if sni.is_empty() {
                    return Err(invalid_value(name, v, "a server name"));
                }
                a.tls.sni = Some(sni);
            }
            Opt::Cacert => a.tls.cacert = Some(path(name, v, "a CA certificate file")?),
            Opt::Cacertdir => a.tls.cacertdir = Some(path(name, v, "a directory")?),
            Opt::Insecure => a.tls.insecure = true,
            Opt::TlsVerifyName => a.tls.verify_name = true,
            Opt::Cert => a.tls.cert = Some(path(name, v, "a certificate file")?),
            Opt::Key => a.tls.key = Some(path(name, v, "a private key file")?),
            Opt::TlsCiphers => a.tls.ciphers = Some(text(name, v)?),
            Opt::TlsCiphersuites => a.tls.ciphersuites = Some(text(name, v)?),
            Opt::Mptcp => a.mptcp = true,
            Opt::Json => a.json = Some(path(name, v, "a file path, or - for stdout")?),
            Opt::NoServerStats => a.no_server_stats = true,
            Opt::Html => a.html = Some(path(name, v, "a file path for the HTML report")?),
            Opt::Repeat => a.repeat = whole(name, v, 1, 1000)?,
            Opt::Sentinel => a.sentinel.nodes = super::sentinel::nodes(name, v)?,
            Opt::PrimaryName => {
                let n = text(name, v)?;
                if n.is_empty() {
                    return Err(invalid_value(name, v, "the primary's name"));
                }
                a.sentinel.primary_name = Some(n);
            }
            Opt::SentinelUser => a.sentinel.user = Some(v.as_bytes().to_vec()),
            Opt::SentinelPassword => a.sentinel.password = Some(v.as_bytes().to_vec()),
            Opt::CheckCounters => a.check_counters = true,
            Opt::Shard => {
                let text = text(name, v)?;
                a.shard = Some(super::value::shard(&text)?);
            }
            Opt::Shards => a.shards = Some(whole(name, v, 1, 1_000_000)?),
            Opt::StartAt => a.start_at = Some(text(name, v)?),
            Opt::Timeout => a.timeout = Some(seconds(name, v)?),
            Opt::FindMax => a.find_max = Some(text(name, v)?),
            Opt::StepDuration => a.step_duration = Some(seconds(name, v)?),
            Opt::Help => return Ok(Some(Invocation::Help)),
            Opt::Version => return Ok(Some(Invocation::Version)),
            Opt::Workload(w) => super::workloads::apply(&mut a.workload, name, w, v)?,
            Opt::NotYet { .. } => {
                self.unsupported
                    .get_or_insert_with(|| UsageError(format!("{name} is not supported yet")));
            }
            Opt::NotInThisBuild { .. } => {
                self.unsupported.get_or_insert_with(|| {
                    UsageError(format!("{name} is not supported by this build"))
                });
            }
        }
        Ok(None)
    }

    /// The checks that need the whole line: unsupported options first, then conflicts.
    fn finish(self) -> Result<Args, UsageError> {
        if let Some(err) = self.unsupported {
            return Err(err);
        }
        let mut args = self.args;
        super::workloads::check(&args.workload, args.sequential)?;
        if self.requests_given && args.duration.is_some() {
            return Err(UsageError(
                "options -n and --duration are mutually exclusive".to_owned(),
            ));
        }
        if self.requests_given && args.find_max.is_some() {
            return Err(UsageError(
                "--find-max measures each step for --step-duration seconds; -n does not apply"
                    .to_owned(),
            ));
        }
        if args.step_duration.is_some() && args.find_max.is_none() {
            return Err(UsageError(
                "--step-duration needs --find-max (it is the length of each search step)"
                    .to_owned(),
            ));
        }
        if args.password.is_none() {
            args.password = self.env_password.map(OsStringExt::into_vec);
        }
        if self.user_given && args.password.is_none() {
            return Err(UsageError(format!(
                "--user needs a password (-a, or the {PASSWORD_ENV} environment variable)"
            )));
        }
        match (&args.tls.cert, &args.tls.key) {
            (Some(_), None) => {
                return Err(UsageError(
                    "--cert needs --key (the private key of the client certificate)".to_owned(),
                ));
            }
            (None, Some(_)) => {
                return Err(UsageError(
                    "--key needs --cert (the client certificate it belongs to)".to_owned(),
                ));
            }
            _ => {}
        }
        super::sentinel::check(&args, self.socket.is_some())?;
        if self.socket.is_some() {
            // valkey-benchmark would try TLS over the unix socket and fail the handshake (servers
            // serve TLS on TCP ports), and refuses --mptcp with exit 1.
            if args.tls.enabled {
                return Err(UsageError(
                    "--tls works over TCP only (-h/-p or -u), not with a unix socket (-s)"
                        .to_owned(),
                ));
            }
            if args.mptcp {
                return Err(UsageError(
                    "--mptcp works over TCP only, not with a unix socket (-s)".to_owned(),
                ));
            }
        }
        args.endpoint = match self.socket {
            Some(path) => Endpoint::Unix(path),
            None => Endpoint::Tcp {
                host: self.host,
                port: self.port,
            },
        };
        Ok(args)
    }
}

fn invalid_option(arg: &str) -> UsageError {
    UsageError(format!("invalid option {arg:?} (see --help)"))
}

fn missing_value(name: &str) -> UsageError {
    if name == "-h" {
        // `-h` is the host, as in valkey-benchmark, but many users expect help from it.
        return UsageError("option -h needs a value (-h is the host; help is --help)".to_owned());
    }
    UsageError(format!("option {name} needs a value"))
}

/// lexopt's own errors: the only ones `next()` and `raw_args()` can give here are a value
/// attached to a flag (`--csv=1`, `-q=1`) and, defensively, anything else verbatim.
fn lex_error(err: lexopt::Error) -> UsageError {
    match err {
        lexopt::Error::UnexpectedValue { option, .. } => {
            UsageError(format!("option {option} takes no value"))
        }
        lexopt::Error::MissingValue {
            option: Some(option),
        } => missing_value(&option),
        lexopt::Error::UnexpectedOption(option) => invalid_option(&option),
        other => UsageError(other.to_string()),
    }
}
