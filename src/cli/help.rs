//! The `--help` and `--version` texts.
//!
//! Owns: their layout. `--help` opens with the usage and the most used options (one screen),
//! then every option under a heading a user scans for (connection, load shape, workload, output,
//! failures, cluster, TLS, modes), then the custom command, subcommands and examples. Each
//! option's words are its table entry's (`flags/`); this file only says where each entry goes
//! ([`GROUPS`], [`MOST_USED`]), and a test holds every entry to exactly one group.
//! valkey-benchmark's help text is not part of the drop-in contract (the spec pins only that
//! `--help` prints a usage text and exits 0; respbench's usage line and options already differ),
//! so the layout is free; the option spellings are the reference's.
//! Must not: claim behaviour respbench does not have; a golden file holds the whole text.

use std::sync::OnceLock;

use super::flag::{Action, Doc, Flag, help_block};
use super::flags;
use super::mode_args::{self, Place};
use super::state::State;

/// The options a first run needs, shown on the first screen with their help's opening phrase.
/// Each is named by its first spelling; each is also listed in full in its group.
pub(super) const MOST_USED: &[&str] = &[
    "-h",
    "-p",
    "-a",
    "-c",
    "-n",
    "--duration",
    "-P",
    "-d",
    "-t",
    "--rps",
    "-q",
    "--csv",
    "--json",
    "--html",
    "--cluster",
];

/// Options under one heading: those named (by first spelling), then every described entry of
/// the table parts given (a part that is wholly one topic: TLS), then of the installed modes'
/// parts at the places given (the modes among valkey-benchmark's options: the fuzzer).
pub(super) struct Group {
    pub heading: &'static str,
    pub names: &'static [&'static str],
    pub parts: &'static [&'static [Flag<State>]],
    pub places: &'static [Place],
}

impl Group {
    /// Its entries, in the order shown. An entry without a usage of its own (described with
    /// the one before it, or listed as unsupported) is not one.
    pub fn members(&self) -> impl Iterator<Item = &'static Doc> + '_ {
        let modes = mode_args::kinds()
            .iter()
            .filter(|k| self.places.contains(&k.place))
            .map(|k| k.flags);
        let parts = self.parts.iter().copied().chain(modes);
        let parts = parts.flat_map(|p| p.iter()).map(|f| &f.doc);
        self.names
            .iter()
            .map(|n| doc(n))
            .chain(parts.filter(|d| !d.usage.is_empty()))
    }
}

/// Every described option under its heading, in the order shown.
pub(super) const GROUPS: &[Group] = &[
    Group {
        heading: "Connection",
        names: &[
            "-h",
            "-p",
            "-s",
            "-u",
            "-a",
            "--user",
            "--dbnum",
            "-3",
            "-k",
            "--enable-tracking",
        ],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "Load shape",
        names: &[
            "-c",
            "-n",
            "--duration",
            "--warmup",
            "-P",
            "--threads",
            "--rps",
            "--arrival",
            "-l",
            "-I",
            "--repeat",
        ],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "Workload and keys",
        names: &[
            "-t",
            "-d",
            "-r",
            "--sequential",
            "--seed",
            "-x",
            "--keys",
            "--key-pattern",
            "--key-minimum",
            "--key-maximum",
            "--key-median",
            "--key-stddev",
            "--key-zipf-exp",
            "--key-drift",
            "--key-prefix",
            "--data-size-range",
            "--data-size-list",
            "--ratio",
            "--command",
            "--command-ratio",
            "--command-key-pattern",
            "--dataset",
            "--maxdocs",
            "--xml-root-element",
            "--num-functions",
            "--num-keys-in-fcall",
        ],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "Output and records",
        names: &[
            "-q",
            "--csv",
            "--precision",
            "--json",
            "--html",
            "--journal",
            "--no-server-stats",
            "--metrics-listen",
            "--metrics-linger",
        ],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "Failures and failover",
        names: &[
            "-e",
            "--timeout",
            "--sentinel",
            "--primary-name",
            "--sentinel-user",
            "--check-counters",
        ],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "Cluster and sharded runs",
        names: &["--cluster", "--rfr", "--shard", "--shards", "--start-at"],
        parts: &[],
        places: &[],
    },
    Group {
        heading: "TLS and transport",
        names: &[],
        parts: &[flags::TRANSPORT],
        places: &[],
    },
    Group {
        heading: "Modes (instead of the default tests)",
        names: &[
            "--find-max",
            "--step-duration",
            "--pubsub",
            "--stream",
            "--publishers",
            "--channels",
            "--psubscribe",
            "--sharded",
            "--slow-subscribers",
            "--connect-storm",
            "--tls-resume",
            "--fill",
            "--memory-per-key",
        ],
        parts: &[],
        places: &[Place::Reference],
    },
    Group {
        heading: "Help",
        names: &["--help", "-v"],
        parts: &[],
        places: &[],
    },
];

/// The entry whose first spelling is `name` (the groups' names are checked by a test).
fn doc(name: &str) -> &'static Doc {
    flags::docs()
        .find(|d| d.names.first() == Some(&name))
        .unwrap_or_else(|| panic!("help group names unknown option {name}"))
}

/// The opening phrase of an option's help, for the most-used list: its first line up to the
/// first sentence or clause break, without a parenthesis that line leaves open.
fn gist(help: &str) -> &str {
    let line = help.lines().next().unwrap_or("");
    let end = [". ", ": ", "; "]
        .iter()
        .filter_map(|p| line.find(p))
        .min()
        .unwrap_or(line.len());
    let mut s = &line[..end];
    if let Some(open) = s.rfind(" (")
        && !s[open..].contains(')')
    {
        s = &s[..open];
    }
    s.trim_end_matches('.')
}

/// The text `--help` prints (to stdout, exit 0). Ends with a newline. Built once from the option
/// table: the usage line, the most used options, every option by group, the unsupported ones,
/// then the fixed sections.
pub fn help_text() -> &'static str {
    static HELP: OnceLock<String> = OnceLock::new();
    HELP.get_or_init(|| {
        let mut out = String::from(INTRO);
        out.push_str("Most used:\n");
        for name in MOST_USED {
            let d = doc(name);
            out.push_str(&format!(" {:<19}{}\n", d.usage, gist(d.help)));
        }
        for g in GROUPS {
            out.push_str(&format!("\n{}:\n", g.heading));
            out.push_str(&help_block(g.members(), 1, 20));
        }
        let refused = |kind: fn(&Action<State>) -> bool| -> Vec<&'static Doc> {
            flags::all()
                .filter(|f| kind(&f.action))
                .map(|f| &f.doc)
                .collect()
        };
        let names = |docs: &[&Doc]| -> String {
            let names: Vec<&str> = docs.iter().flat_map(|d| d.names.iter().copied()).collect();
            names.join(", ")
        };
        let not_yet = refused(|a| matches!(a, Action::NotYet));
        if not_yet.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("\nNot supported yet: {}\n", names(&not_yet)));
        }
        let other = refused(|a| matches!(a, Action::NotInThisBuild));
        let why: Vec<&str> = other.iter().map(|d| d.help).collect();
        out.push_str(&format!(
            "Not supported by this build: {} ({}).\n\n",
            names(&other),
            why.join("; ")
        ));
        out.push_str(SECTIONS);
        out
    })
}

/// The usage line and what the page holds, before the most used options.
const INTRO: &str = "Usage: respbench [OPTIONS] [--] [COMMAND ARGS...]

Benchmark a RESP server (Valkey, Redis) like valkey-benchmark, with the same
options. The most used options first, then every option by topic, commands
and examples. The manual: respbench man | man -l -

";

/// The line `-v`/`--version` prints: `respbench <version>`, without a newline.
pub fn version_text() -> String {
    format!("respbench {}", env!("CARGO_PKG_VERSION"))
}

/// The sections after the options: the custom command, the subcommands, examples.
const SECTIONS: &str = r#"Command:
 Arguments after the options (or after --) are one command to benchmark, sent
 as given. Separate several commands with ';' (quoted for the shell) to send
 them as one sequence; a number N before a command repeats it N times.
 These placeholders are replaced in its arguments:
 __rand_int__       A random 12-digit number from 0 to keyspacelen-1, new
                    for every occurrence (needs -r)
 __rand_1st__ .. __rand_9th__
                    Like __rand_int__, but every occurrence of the same token
                    within one sequence gets the same number (needs -r)
 __data__           -d bytes of data
 __field:<name>__   The field <name> of a dataset record (needs --dataset;
                    all commands of a sequence use the same record)

Subcommands (only as the first argument):
 respbench compare BASE.json OTHER.json...
                    Compare runs (respbench records, valkey-/redis-benchmark
                    CSV, memtier JSON), with a noise test and a CI gate
                    (see respbench compare --help)
 respbench report RUN.json... -o REPORT.html
                    A self-contained HTML report of one or more runs
 respbench merge -o ALL.json SHARD.json...
                    Merge the --json records of a sharded run into one
                    (see respbench merge --help)
 respbench recover RUN.json.partial -o RUN.json
                    A killed run's journal as a --json record
 respbench capture -o TRACE [--duration SEC]
                    Record a server's traffic (MONITOR) into a trace
 respbench replay TRACE
                    Send a trace with its own timing, as a measured run
                    (see respbench replay --help)
 respbench memtier [memtier_benchmark options]
                    memtier_benchmark's command line and output (also when
                    started as memtier_benchmark; see respbench memtier --help)
 respbench completions bash|zsh|fish
                    Shell completions for every command and option
 respbench man      The manual page (respbench man | man -l -)

Examples:

 Run the default tests against 127.0.0.1:6379:
   respbench

 Use 20 parallel clients, pipelines of 10 requests, 2 threads, less output:
   respbench -c 20 -P 10 --threads 2 -q

 Use 20 parallel clients for 100k requests against 192.168.1.1:
   respbench -h 192.168.1.1 -p 6379 -n 100000 -c 20

 How much GET load fits under p99 < 1 ms:
   respbench -t get --find-max 'p99<1ms'

 Fill 127.0.0.1:6379 with about 1 million keys using only the SET test:
   respbench -t set -n 1000000 -r 100000000

 Run a few tests with CSV output:
   respbench -t ping,set,get -n 100000 --csv

 Benchmark a specific command:
   respbench -r 10000 -n 10000 eval 'return redis.call("ping")' 0

 Fill a list with 10000 random elements:
   respbench -r 10000 -n 10000 lpush mylist __rand_int__

 Benchmark a transaction:
   respbench -- multi ';' set key:__rand_int__ __data__ ';' \
                incr counter ';' exec

 Store every record of a CSV file (header: id,name,body) in a hash:
   respbench --dataset docs.csv -n 1000 -- \
                hset doc:__field:id__ name __field:name__ body __field:body__
"#;
