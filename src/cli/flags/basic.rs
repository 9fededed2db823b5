//! valkey-benchmark's own options, in its help order: where the server is, how much load, how
//! the output looks (`-h` .. `--maxdocs`); the `--fuzz` options follow
//! (`fuzz/cli.rs`, installed by the registry at the table's `Place::Reference`).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::super::flag::{Flag, SecretValue, Value};
use super::super::state::State;
use super::super::uri::{self, Uri};
use super::super::value::{MAX_DBNUM, invalid_value, seconds, signed, text, whole};
use super::super::{ReadFromReplicas, UsageError};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// Largest `-r`: 12-digit placeholders hold at most 999,999,999,999 (valkey #4252's cap).
const MAX_KEYSPACE: u64 = 999_999_999_999;

/// `-h`'s value: a host name or an address; an IPv6 address may be bracketed as in a URI
/// (`[::1]`, how redis-cli users and `-u` write it), and loses its brackets here because the
/// address lookup wants them gone. The port is `-p`'s, never inside the brackets' value.
fn host(name: &str, v: &OsStr) -> Result<String, UsageError> {
    let s = text(name, v)?;
    let inner = match s.strip_prefix('[') {
        None => {
            return match s.is_empty() {
                true => Err(invalid_value(name, v, "a host name or address")),
                false => Ok(s),
            };
        }
        Some(rest) => rest.strip_suffix(']'),
    };
    match inner {
        Some(addr) if addr.contains(':') && !addr.contains(['[', ']']) => Ok(addr.to_owned()),
        _ => Err(invalid_value(
            name,
            v,
            "a host name or address; an IPv6 address alone in brackets, e.g. [::1] (the port \
             is -p)",
        )),
    }
}

/// Where the server is and who we are to it.
pub(in crate::cli) const ENDPOINT: &[Flag<State>] = &[
    F::value(
        &["-h"],
        Value::Text,
        "-h <hostname>",
        "Server hostname (default 127.0.0.1)",
        |st, name, v| {
            st.host = host(name, v)?;
            Ok(())
        },
    )
    .example(&["-h", "db.example"]),
    F::value(
        &["-p"],
        Value::Text,
        "-p <port>",
        "Server port (default 6379)",
        |st, name, v| {
            st.port = whole(name, v, 0, u16::MAX.into())?;
            Ok(())
        },
    )
    .example(&["-p", "7000"]),
    F::value(
        &["-s"],
        Value::Text,
        "-s <socket>",
        "Server unix socket path (overrides host and port)",
        |st, name, v| {
            // Any non-empty path, even one spelled like an option (valkey-benchmark's rule).
            if v.is_empty() {
                return Err(invalid_value(name, v, "a socket path"));
            }
            st.socket = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["-s", "/tmp/valkey.sock"]),
    F::value(
        &["-a"],
        Value::Text,
        "-a <password>",
        "Password to AUTH with",
        |st, _, v| {
            st.args.password = Some(v.as_bytes().to_vec());
            Ok(())
        },
    )
    .secret()
    .example(&["-a", "pw"]),
    F::value(
        &["--user"],
        Value::Text,
        "--user <username>",
        "Send ACL-style AUTH <username> <password>. Needs -a.",
        |st, _, v| {
            st.args.user = Some(v.as_bytes().to_vec());
            Ok(())
        },
    )
    .example(&["--user", "u", "-a", "pw"]),
    F::value(
        &["-u"],
        Value::Text,
        "-u <uri>",
        "Server URI: redis://[[user]:password@]host[:port][/dbnum]\n\
         (or valkey://...). User, password, port and dbnum are\n\
         optional; an IPv6 host goes in brackets: redis://[::1]:6380\n\
         For TLS, use the scheme rediss:// or valkeys://.",
        apply_uri,
    )
    .secret_as(SecretValue::Uri)
    .example(&["-u", "redis://h:7000/2"]),
];

/// `-u`: every part the URI gives overrides what came before.
fn apply_uri(st: &mut State, _: &'static str, v: &std::ffi::OsStr) -> Result<(), UsageError> {
    let uri: Uri = uri::parse_uri(v)?;
    let a = &mut st.args;
    a.tls.enabled |= uri.tls;
    if let Some(host) = uri.host {
        st.host = host;
    }
    if let Some(port) = uri.port {
        st.port = port;
    }
    if uri.user.is_some() {
        a.user = uri.user;
    }
    if uri.password.is_some() {
        a.password = uri.password;
    }
    if let Some(db) = uri.db {
        a.dbnum = db;
    }
    Ok(())
}

/// How much load, over which connections, against which keys.
pub(in crate::cli) const LOAD: &[Flag<State>] = &[
    F::value(
        &["-c"],
        Value::Text,
        "-c <clients>",
        "Number of parallel connections (default 50)",
        |st, name, v| {
            st.args.clients = whole(name, v, 1, 1_000_000)?;
            Ok(())
        },
    )
    .example(&["-c", "8"]),
    F::value(
        &["-n"],
        Value::Text,
        "-n <requests>",
        "Total number of requests per test (default 100000).\n\
         A ';' sequence of k commands counts as k requests.",
        |st, name, v| {
            st.args.requests = whole(name, v, 1, u64::MAX)?;
            Ok(())
        },
    )
    .example(&["-n", "10"]),
    F::value(
        &["--duration"],
        Value::Text,
        "--duration <sec>",
        "Run each test for <sec> seconds instead of -n requests\n\
         (decimals allowed, e.g. 0.5). Not together with -n.",
        |st, name, v| {
            st.args.duration = Some(seconds(name, v)?);
            Ok(())
        },
    )
    .example(&["--duration", "0.5"]),
    F::value(
        &["--warmup"],
        Value::Text,
        "--warmup <sec>",
        "Before each test, run it for <sec> seconds and discard\n\
         those results (default: no warmup)",
        |st, name, v| {
            st.args.warmup = Some(seconds(name, v)?);
            Ok(())
        },
    )
    .example(&["--warmup", "1"]),
    F::value(
        &["-d"],
        Value::Text,
        "-d <size>",
        "Data size of SET/GET values and of __data__ in bytes\n\
         (default 3)",
        |st, name, v| {
            st.args.data_size = whole(name, v, 1, 1 << 30)?;
            Ok(())
        },
    )
    .example(&["-d", "100"]),
    F::value(
        &["--dbnum"],
        Value::Text,
        "--dbnum <db>",
        "SELECT the given db number (default 0)",
        |st, name, v| {
            st.args.dbnum = whole(name, v, 0, MAX_DBNUM)?;
            Ok(())
        },
    )
    .example(&["--dbnum", "3"]),
    F::switch(
        &["-3"],
        "-3",
        "Start each connection in RESP3 mode (HELLO 3)",
        |st, _, _| {
            st.args.resp3 = true;
            Ok(())
        },
    ),
    F::value(
        &["--threads"],
        Value::Text,
        "--threads <num>",
        "Number of worker threads (default 1; with --cluster, one\n\
         per benchmark node)",
        |st, name, v| {
            let n: u32 = whole(name, v, 0, 500)?;
            st.args.threads = (n != 0).then_some(n);
            Ok(())
        },
    )
    .example(&["--threads", "2"]),
    F::switch(
        &["--cluster"],
        "--cluster",
        "Enable cluster mode: keys are routed to the node owning\n\
         their slot, redirects are followed. -c is connections per\n\
         node. {tag} in arguments becomes a hash tag of the\n\
         connection's node; the default tests use key:{tag}:...",
        |st, _, _| {
            st.args.cluster = true;
            Ok(())
        },
    ),
    F::value(
        &["--rfr"],
        Value::Choice(&["no", "yes", "all"]),
        "--rfr <mode>",
        "Enable read from replicas in cluster mode:\n\
         no: primaries only (default); yes: replicas; all: both.\n\
         Commands that write always go to primaries.",
        |st, name, v| {
            st.args.rfr = match v.as_bytes() {
                b"no" => ReadFromReplicas::No,
                b"yes" => ReadFromReplicas::Yes,
                b"all" => ReadFromReplicas::All,
                _ => return Err(invalid_value(name, v, "no, yes or all")),
            };
            Ok(())
        },
    )
    .example(&["--rfr", "yes"]),
    F::switch(
        &["--enable-tracking"],
        "--enable-tracking",
        "Send CLIENT TRACKING on before starting the benchmark.\n\
         With -3 the server's invalidation messages arrive on the\n\
         benchmark connections; they are counted and reported",
        |st, _, _| {
            st.args.enable_tracking = true;
            Ok(())
        },
    ),
    F::value(
        &["-k"],
        Value::Choice(&["1", "0"]),
        "-k <boolean>",
        "1 = keep alive, 0 = reconnect after every batch (default 1)",
        |st, name, v| {
            st.args.keepalive = signed(name, v)?;
            Ok(())
        },
    )
    .example(&["-k", "0"]),
    F::value(
        &["-r"],
        Value::Text,
        "-r <keyspacelen>",
        "Replace __rand_int__ and __rand_1st__ .. __rand_9th__ in\n\
         arguments with a 12-digit number from 0 to keyspacelen-1.\n\
         The default tests use it for random keys and values.\n\
         Without -r, every command uses the same key.",
        |st, name, v| {
            st.args.keyspace = Some(whole(name, v, 0, MAX_KEYSPACE)?);
            Ok(())
        },
    )
    .example(&["-r", "1000"]),
    F::switch(
        &["--sequential"],
        "--sequential",
        "With -r, use successive numbers instead of random ones",
        |st, _, _| {
            st.args.sequential = true;
            Ok(())
        },
    ),
    F::value(
        &["-P"],
        Value::Text,
        "-P <numreq>",
        "Pipeline <numreq> requests (default 1: no pipelining)",
        |st, name, v| {
            st.args.pipeline = whole(name, v, 1, 1_000_000)?;
            Ok(())
        },
    )
    .example(&["-P", "16"]),
];

/// What is printed, which tests run, and the run's other settings up to the dataset.
pub(in crate::cli) const OUTPUT: &[Flag<State>] = &[
    F::switch(
        &["-q"],
        "-q",
        "Quiet: print one summary line per test",
        |st, _, _| {
            st.args.quiet = true;
            Ok(())
        },
    ),
    F::value(
        &["--precision"],
        Value::Text,
        "--precision <n>",
        "Number of decimal places of latency figures (default 3,\n\
         at most 6)",
        |st, name, v| {
            st.args.precision = whole(name, v, 0, 6)?;
            Ok(())
        },
    )
    .example(&["--precision", "1"]),
    F::switch(&["--csv"], "--csv", "Output in CSV format", |st, _, _| {
        st.args.csv = true;
        Ok(())
    }),
    F::switch(&["-l"], "-l", "Loop: run the tests forever", |st, _, _| {
        st.args.loop_forever = true;
        Ok(())
    }),
    F::value(
        &["-t"],
        Value::Text,
        "-t <tests>",
        "Only run the comma-separated list of tests. The names are\n\
         the ones printed in the output. Ignored when a command is\n\
         given on the command line.",
        |st, name, v| {
            let list = text(name, v)?;
            // The reference runs nothing and exits 0 for these; a benchmark that measured
            // nothing should not look like one that passed.
            if list.split(',').all(str::is_empty) {
                return Err(invalid_value(
                    name,
                    v,
                    "test names separated by commas, e.g. set,get",
                ));
            }
            st.args.tests = Some(list);
            Ok(())
        },
    )
    .example(&["-t", "set,get"]),
    F::switch(
        &["-I"],
        "-I",
        "Idle mode: just open -c connections and wait",
        |st, _, _| {
            st.args.idle = true;
            Ok(())
        },
    ),
    F::switch(
        &["-x"],
        "-x",
        "Read the last argument of the command from stdin",
        |st, _, _| {
            st.args.stdin_last_arg = true;
            Ok(())
        },
    ),
    F::switch(
        &["-e"],
        "-e",
        "Keep going on error replies and count them (by default\n\
         an error reply stops the run); also on lost connections:\n\
         their requests fail by kind (connection reset, closed,\n\
         refused, timeout) and they are reopened with a backoff",
        |st, _, _| {
            st.args.continue_on_error = true;
            Ok(())
        },
    ),
    F::value(
        &["--seed"],
        Value::Text,
        "--seed <num>",
        "Seed for the random number generator (default: random)",
        |st, name, v| {
            st.args.seed = Some(whole(name, v, 0, u64::MAX)?);
            Ok(())
        },
    )
    .example(&["--seed", "7"]),
    F::value(
        &["--rps"],
        Value::Text,
        "--rps <requests>",
        "Target rate in requests per second for the whole run\n\
         (default 0: no limit). Latency is measured from each\n\
         request's scheduled send time, so time spent waiting to\n\
         be sent counts. With --pubsub/--stream it is the\n\
         publish rate, and a delivery's latency runs from the\n\
         message's actual send (the time it carries).",
        |st, name, v| {
            st.args.rps = Some(whole(name, v, 0, u64::MAX)?).filter(|&r| r > 0);
            Ok(())
        },
    )
    .example(&["--rps", "1000"]),
    F::value(
        &["--num-functions"],
        Value::Text,
        "--num-functions <num>",
        "Number of functions in the library loaded by the\n\
         function_load test (default 10)",
        |st, name, v| {
            st.args.num_functions = whole(name, v, 1, 100_000)?;
            Ok(())
        },
    )
    .example(&["--num-functions", "3"]),
    F::value(
        &["--num-keys-in-fcall"],
        Value::Text,
        "--num-keys-in-fcall <num>",
        "Number of keys passed to FCALL by the fcall test\n\
         (default 1)",
        |st, name, v| {
            st.args.num_keys_in_fcall = whole(name, v, 0, 1_000_000)?;
            Ok(())
        },
    )
    .example(&["--num-keys-in-fcall", "2"]),
    F::value(
        &["--dataset"],
        Value::File("a dataset file"),
        "--dataset <file>",
        "CSV, TSV (by a .tsv name) or XML (by a .xml name, with\n\
         --xml-root-element) file for __field:<name>__\n\
         placeholders; its first line (XML: the first document's\n\
         elements) names the fields and each command takes the\n\
         next record",
        |st, _, v| {
            st.args.dataset = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--dataset", "docs.csv"]),
    F::value(
        &["--maxdocs"],
        Value::Text,
        "--maxdocs <num>",
        "Maximum number of records to load from the dataset file\n\
         (default: all)",
        |st, name, v| {
            // The reference takes any integer and treats <= 0 as "no limit".
            let n = signed(name, v)?;
            st.args.maxdocs = u64::try_from(n).ok().filter(|&n| n > 0);
            Ok(())
        },
    )
    .example(&["--maxdocs", "10"]),
    F::value(
        &["--xml-root-element"],
        Value::Text,
        "--xml-root-element <name>",
        "The element that is one record of an XML --dataset (its\n\
         elements' names are the fields)",
        |st, _, v| {
            st.args.xml_root_element = Some(v.to_string_lossy().into_owned());
            Ok(())
        },
    )
    .example(&["--xml-root-element", "doc"]),
];
