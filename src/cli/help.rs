//! The `--help` and `--version` texts.
//!
//! Owns: their layout, like valkey-benchmark's usage text (same option order and spellings) so
//! users of the reference find their way; each option's words are its table entry's (`flags/`).
//! Must not: claim behaviour respbench does not have; a golden file holds the whole text.

use std::sync::OnceLock;

use super::flag::{Action, Doc, help_block};
use super::flags;
use super::state::State;

/// The text `--help` prints (to stdout, exit 0). Ends with a newline. Built once from the option
/// table: the usage line, every option's help, the unsupported ones, then the fixed sections.
pub fn help_text() -> &'static str {
    static HELP: OnceLock<String> = OnceLock::new();
    HELP.get_or_init(|| {
        let mut out = String::from("Usage: respbench [OPTIONS] [--] [COMMAND ARGS...]\n\n");
        out.push_str(&help_block(flags::docs(), 1, 20));
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
        out.push_str(&format!("\nNot supported yet: {}\n", names(&not_yet)));
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
