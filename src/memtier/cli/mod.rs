//! memtier_benchmark's command line (issue 23): its own option table, with memtier's spellings,
//! meanings and defaults, turned into the main command line's [`Args`] so the run, the record,
//! the verdicts and the reports are respbench's own.
//!
//! Why a table of its own: memtier's letters mean other things than valkey-benchmark's (`-s` is
//! the server, `-P` the protocol, `-t` threads, `-c` clients *per thread*, `-n` requests *per
//! client*), so its line cannot be parsed by the main table. Where an option means the same as
//! a main-table option (`--key-pattern`, `--ratio`, `--command`, `--tls`, `--cacert`, …) the
//! entry applies the main entry's setter ([`via`]), so values are checked by one parser and the
//! cross-option checks of the main line (`parse::finish`) run on the result too. `--help`, the
//! completions and the man page are laid out from this table like every subcommand's.
//!
//! Owns: the table, [`MemtierOptions`] (what only memtier mode uses: output files, run count,
//! the raw values its JSON `configuration` block repeats) and the translation into [`Args`].
//! Must not: open files or sockets.

mod conn;
#[cfg(test)]
mod conn_tests;
mod data;
mod import;
mod scan;
mod statsd;
mod table;
#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::cli::flag::{Action, Doc, Flag, help_block};
use crate::cli::state::State;
use crate::cli::{Args, UsageError};

pub use statsd::sanitize_label;
pub use table::TABLE;

/// memtier's defaults that differ from valkey-benchmark's.
pub mod defaults {
    pub const THREADS: u32 = 4;
    pub const CLIENTS: u32 = 50;
    pub const REQUESTS: u64 = 10_000;
    pub const DATA_SIZE: usize = 32;
    pub const KEY_PREFIX: &str = "memtier-";
    pub const KEY_MAXIMUM: u64 = 10_000_000;
    pub const RATIO: (u32, u32) = (1, 10);
    pub const PERCENTILES: &[f64] = &[50.0, 99.0, 99.9];
    /// A constant seed unless `--randomize`, as memtier: the same line draws the same keys.
    pub const SEED: u64 = 0x6d65_6d74;
}

/// `-n`: a count per client, or `allkeys` (every key of the range once, across all clients).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requests {
    PerClient(u64),
    AllKeys,
}

/// What only memtier mode uses, beside the [`Args`] the run gets.
#[derive(Clone, Debug, PartialEq)]
pub struct MemtierOptions {
    pub threads: u32,
    /// Per thread, as memtier counts them.
    pub clients: u32,
    pub requests: Requests,
    pub test_time: Option<u64>,
    pub run_count: u32,
    /// `--rate-limiting`: per connection per second.
    pub rate_limiting: Option<u64>,
    pub hide_histogram: bool,
    pub print_percentiles: Vec<f64>,
    pub print_all_runs: bool,
    pub out_file: Option<PathBuf>,
    pub json_out_file: Option<PathBuf>,
    /// `--hdr-file-prefix`: HDR histogram files per run and command.
    pub hdr_file_prefix: Option<PathBuf>,
    /// `--client-stats`: a CSV file per run and connection, `PREFIX-RUN-THREAD-CLIENT.csv`.
    pub client_stats: Option<PathBuf>,
    /// `--monitor-input`: a `MONITOR` trace whose commands `__monitor_lineN__` names.
    pub monitor_input: Option<PathBuf>,
    /// `--monitor-pattern R`: `__monitor_line@__` draws at random (else in order).
    pub monitor_random: bool,
    /// `--command-stats-breakdown=line`: a row per `--command` line (else per command name).
    pub command_stats_by_line: bool,
    /// `--show-config`: the configuration values printed before the run.
    pub show_config: bool,
    /// `-D`: what the line became printed on stderr before the run.
    pub debug: bool,
    /// Every option as given, by its first spelling, with its raw value (the JSON's
    /// `configuration` block repeats them; secrets are redacted there by `crate::redact`).
    pub given: Vec<(&'static str, OsString)>,
}

impl Default for MemtierOptions {
    fn default() -> Self {
        MemtierOptions {
            threads: defaults::THREADS,
            clients: defaults::CLIENTS,
            requests: Requests::PerClient(defaults::REQUESTS),
            test_time: None,
            run_count: 1,
            rate_limiting: None,
            hide_histogram: false,
            print_percentiles: defaults::PERCENTILES.to_vec(),
            print_all_runs: false,
            out_file: None,
            json_out_file: None,
            hdr_file_prefix: None,
            client_stats: None,
            monitor_input: None,
            monitor_random: false,
            command_stats_by_line: false,
            show_config: false,
            debug: false,
            given: Vec::new(),
        }
    }
}

impl MemtierOptions {
    /// The raw value of the option whose first spelling is `name`, the last one given.
    pub fn raw(&self, name: &str) -> Option<&OsStr> {
        self.given
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_os_str())
    }
}

/// The parser's state: the main line's (for the entries that share a meaning) and memtier's own.
#[derive(Default)]
pub struct MemtierState {
    pub(in crate::memtier) main: State,
    pub(in crate::memtier) opts: MemtierOptions,
    /// `-a user:pass` (applied at the end: `--uri` may come after it).
    pub(in crate::memtier) authenticate: Option<Vec<u8>>,
    /// The imported-data options, checked together at the end.
    pub(in crate::memtier) import: import::ImportFlags,
    /// The StatsD options, checked together at the end.
    pub(in crate::memtier) statsd: statsd::StatsdFlags,
}

/// What a memtier command line asks for.
#[derive(Debug)]
pub enum MemtierInvocation {
    Run(Box<Args>, Box<MemtierOptions>),
    Help,
    Version,
}

/// Applies the main table's entry spelled `main` (the same meaning) under memtier's spelling
/// `name`, so its value is checked by the one parser of that option.
pub(in crate::memtier) fn via(
    main: &str,
    st: &mut MemtierState,
    name: &'static str,
    v: &OsStr,
) -> Result<(), UsageError> {
    let Some((_, flag)) = crate::cli::flags::find(main) else {
        unreachable!("{main} is an entry of the main table")
    };
    let Action::Set(set) = flag.action else {
        unreachable!("{main} sets something")
    };
    set(&mut st.main, name, v)?;
    st.main.given.push(flag.doc.names[0]);
    Ok(())
}

/// The one-line refusal of an option memtier has and respbench does not apply (exit 2).
pub(in crate::memtier) fn refused(name: &str, why: &str) -> UsageError {
    UsageError(format!(
        "{name} is not supported by respbench memtier: {why}"
    ))
}

/// Every entry's description, in help order (completions, man page).
pub fn docs() -> impl Iterator<Item = &'static Doc> {
    TABLE.iter().flat_map(|part| part.iter()).map(|f| &f.doc)
}

fn find(name: &str) -> Option<(&'static str, &'static Flag<MemtierState>)> {
    crate::cli::flag::find(TABLE, name)
}

/// Whether memtier's option spelled `name` takes a value (`None`: not memtier's), for
/// `crate::redact` finding values in a memtier command line.
pub fn takes_value(name: &str) -> Option<bool> {
    find(name).map(|(_, f)| f.doc.value.taken())
}

/// Where memtier's option spelled `name` may carry a secret.
pub fn secret_value(name: &str) -> Option<crate::cli::SecretValue> {
    find(name).and_then(|(_, f)| f.doc.secret)
}

/// `respbench memtier --help`: memtier's sections, laid out from the table.
pub fn help_text() -> String {
    let mut out = String::from(HELP_HEAD);
    for (title, part) in table::SECTIONS.iter().zip(TABLE) {
        out.push_str(title);
        out.push_str(":\n");
        out.push_str(&help_block(part.iter().map(|f| &f.doc), 2, 33));
        out.push('\n');
    }
    out.push_str(HELP_TAIL);
    out
}

const HELP_HEAD: &str = "\
Usage: respbench memtier [options]
       memtier_benchmark [options]   (respbench started under that name: ln -s)
memtier_benchmark's command line, meanings and defaults, with memtier's output
(progress line, ALL STATS table, --json-out-file) and respbench's record,
corrected latency and verdicts underneath (--json, --html).

";

const HELP_TAIL: &str = "\
Options marked \"not supported\" are refused in one line (exit 2), never
ignored; docs/memtier.md lists every memtier_benchmark option and its status.
";

/// Parses memtier's arguments (after `memtier` or the program name). Long options take
/// `--opt=value` or `--opt value`; short ones `-c 5` or `-c5`, as memtier's getopt.
pub fn parse<I: IntoIterator<Item = OsString>>(
    argv: I,
    env_password: Option<OsString>,
) -> Result<MemtierInvocation, UsageError> {
    let mut p = lexopt::Parser::from_args(argv);
    let mut st = MemtierState::default();
    st.main.env_password = env_password.filter(|p| !p.is_empty());
    while let Some(arg) = p.next().map_err(|e| UsageError(e.to_string()))? {
        let spelling = match &arg {
            lexopt::Arg::Short(c) => format!("-{c}"),
            lexopt::Arg::Long(l) => format!("--{l}"),
            lexopt::Arg::Value(v) => {
                return Err(UsageError(format!(
                    "unexpected argument {:?}: memtier_benchmark takes options only (a command \
                     goes in --command)",
                    v.to_string_lossy()
                )));
            }
        };
        let Some((name, flag)) = find(&spelling) else {
            return Err(UsageError(format!(
                "unrecognized option {spelling}; see respbench memtier --help"
            )));
        };
        match flag.action {
            Action::Set(set) => {
                let value = if flag.doc.value.taken() {
                    p.value()
                        .map_err(|_| UsageError(format!("option {name} requires an argument")))?
                } else {
                    OsString::new()
                };
                set(&mut st, name, &value)?;
                st.opts.given.push((flag.doc.names[0], value));
            }
            Action::Help => return Ok(MemtierInvocation::Help),
            Action::Version => return Ok(MemtierInvocation::Version),
            Action::NotYet | Action::NotInThisBuild => {
                return Err(refused(name, "not implemented"));
            }
        }
    }
    let (args, opts) = finish(st)?;
    Ok(MemtierInvocation::Run(Box::new(args), Box::new(opts)))
}

/// memtier's meanings turned into the main line's: clients and requests multiplied out, its
/// defaults where the main line's differ, then the main line's own cross-option checks.
fn finish(mut st: MemtierState) -> Result<(Args, MemtierOptions), UsageError> {
    let o = &st.opts;
    let total_clients = o
        .clients
        .checked_mul(o.threads)
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| UsageError("--clients × --threads is above 1000000 connections".into()))?;
    if let Some(cred) = st.authenticate.take() {
        // memtier: USER:PASSWORD for ACL users, else the password alone.
        let a = &mut st.main.args;
        match cred.iter().position(|b| *b == b':') {
            Some(i) => {
                a.user = Some(cred[..i].to_vec());
                a.password = Some(cred[i + 1..].to_vec());
            }
            None => a.password = Some(cred),
        }
    }
    let size_given = st.main.was_given("-d");
    let a = &mut st.main.args;
    a.clients = total_clients;
    a.threads = Some(o.threads);
    a.repeat = o.run_count;
    a.seed = a.seed.or(Some(defaults::SEED));
    let w = &mut a.workload;
    // With the import file's keys the plan sets the range (its items).
    if !st.import.file_keys() {
        if w.key_prefix.is_none() {
            w.key_prefix = Some(defaults::KEY_PREFIX.as_bytes().to_vec());
        }
        if w.key_maximum.is_none() {
            w.key_maximum = Some(defaults::KEY_MAXIMUM);
        }
        if w.key_minimum.is_none() {
            w.key_minimum = Some(0);
        }
    }
    if w.ratio.is_none() && w.commands.is_empty() {
        w.ratio = Some(defaults::RATIO);
    }
    // memtier's keys (`memtier-123`, no padding) and data options: the mix's own shapes.
    let sized_by_range = matches!(w.data_sizes, Some(crate::cli::DataSizes::Range(..)));
    if w.memtier.get_or_insert_default().size_pattern_s && !sized_by_range {
        return Err(UsageError(
            "--data-size-pattern S spreads --data-size-range over the key range: give \
             --data-size-range MIN-MAX"
                .into(),
        ));
    }
    // memtier sends a mix in its weights' order: `--ratio 1:10` is exactly 1 SET in 11
    // (`--monitor-pattern R` draws instead).
    w.in_order = !o.monitor_random;
    // memtier counts error replies per command and goes on (a command the server lacks, a
    // `RESTORE` payload of another version); it has no `-e` to ask for it.
    a.continue_on_error = true;
    // memtier sends the server nothing but the load: no INFO sampling, whose `INFO
    // commandstats` would show in the server's counts (and ends memtier's suite's MONITOR
    // readers, which stop at it). respbench's own record (`--json`) asks for the server's
    // figures, and keeps them.
    a.no_server_stats = o.raw("--json").is_none();
    if !size_given {
        a.data_size = defaults::DATA_SIZE;
    }
    match (o.test_time, o.requests) {
        (Some(secs), _) => a.duration = Some(std::time::Duration::from_secs(secs)),
        (None, Requests::PerClient(n)) => {
            a.requests = n
                .checked_mul(u64::from(total_clients))
                .ok_or_else(|| UsageError("--requests × --clients × --threads overflows".into()))?;
        }
        (None, Requests::AllKeys) => {
            // Every key of the range exactly once, across all connections: one shared
            // sequential walk (with --cluster-mode, `engine/allkeys.rs` per node).
            let (min, max) = (w.key_minimum.unwrap_or(0), w.key_maximum.unwrap_or(0));
            a.requests = max.saturating_sub(min) + 1;
            w.key_dist = Some(crate::cli::KeyDist::Sequential);
            w.get_key_dist = None;
        }
    }
    check_conn(&mut a.conn, !a.workload.commands.is_empty())?;
    scan::check(a)?;
    check_ramp(a.conn.ramp, o.clients, o.test_time.is_some(), a.cluster)?;
    if let Some(rate) = o.rate_limiting {
        a.rps = Some(rate.saturating_mul(u64::from(total_clients)));
    }
    import::finish(&mut st)?;
    statsd::finish(&mut st)?;
    unused_pattern_parameters(&mut st.main.args.workload);
    let opts = st.opts;
    let args = crate::cli::parse::finish(st.main)?;
    Ok((args, opts))
}

/// memtier takes `--key-zipf-exp`, `--key-median` and `--key-stddev` whatever the key patterns
/// (`--key-pattern R:R --key-zipf-exp 1` runs, the exponent unused); respbench's own line
/// refuses the contradiction, so memtier mode drops a parameter no pattern of the line uses.
fn unused_pattern_parameters(w: &mut crate::cli::WorkloadArgs) {
    let patterns: Vec<crate::cli::KeyDist> = [w.key_dist, w.get_key_dist]
        .into_iter()
        .chain(w.commands.iter().map(|c| c.key_dist))
        .flatten()
        .collect();
    if !patterns
        .iter()
        .any(|d| matches!(d, crate::cli::KeyDist::Zipf(_)))
    {
        w.key_zipf_exp = None;
    }
    if !patterns.contains(&crate::cli::KeyDist::Gaussian) {
        (w.key_median, w.key_stddev) = (None, None);
    }
}

/// The connection options' cross-checks: the jitter range in order (a minimum alone is the
/// pause), WAIT only in the `--ratio` mix.
fn check_conn(c: &mut crate::cli::ConnArgs, commands: bool) -> Result<(), UsageError> {
    let (min, max) = c.start_jitter_us;
    if max == 0 {
        c.start_jitter_us.1 = min;
    } else if min > max {
        return Err(UsageError(format!(
            "--thread-conn-start-min-jitter-micros ({min}) is above \
             --thread-conn-start-max-jitter-micros ({max})"
        )));
    }
    if let Some(w) = c.wait
        && w.waits > 0
        && commands
    {
        return Err(UsageError(
            "--wait-ratio adds WAIT to the SET:GET mix of --ratio, not to --command lines \
             (add --command=\"WAIT 0 0\" instead)"
                .into(),
        ));
    }
    if c.wait.is_some_and(|w| w.waits > 0 && w.sets == 0) {
        return Err(UsageError(
            "--wait-ratio 0:N sends no SETs for the WAITs to follow; give at least 1:N".into(),
        ));
    }
    Ok(())
}

/// The staircase ramp's checks: all three options, a start below `--clients`, a run by time
/// (memtier's steps are seconds), not in cluster mode (connections are per node there).
fn check_ramp(
    ramp: Option<(u32, u32, u64)>,
    clients: u32,
    by_time: bool,
    cluster: bool,
) -> Result<(), UsageError> {
    let Some((start, step, secs)) = ramp else {
        return Ok(());
    };
    let missing: Vec<&str> = [
        ("--clients-start", start == 0),
        ("--clients-step", step == 0),
        ("--step-duration", secs == 0),
    ]
    .into_iter()
    .filter_map(|(n, m)| m.then_some(n))
    .collect();
    if !missing.is_empty() {
        return Err(UsageError(format!(
            "the staircase ramp needs --clients-start, --clients-step and --step-duration \
             (missing {})",
            missing.join(", ")
        )));
    }
    if start >= clients {
        return Err(UsageError(format!(
            "--clients-start ({start}) must be less than --clients ({clients})"
        )));
    }
    if !by_time {
        return Err(UsageError(
            "the staircase ramp needs --test-time (its steps are seconds)".into(),
        ));
    }
    if cluster {
        return Err(UsageError(
            "the staircase ramp is not supported with --cluster-mode".into(),
        ));
    }
    Ok(())
}
