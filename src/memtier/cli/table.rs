//! memtier_benchmark 2.x's options, in its `--help` sections and order, each applied with
//! memtier's meaning or refused in one line naming it (exit 2). docs/memtier.md lists them with
//! their tests.

use std::path::PathBuf;

use super::{MemtierState, Requests, conn, refused, via};
use crate::cli::flag::{Action, Flag, SecretValue, Value};
use crate::cli::value::{invalid_value, text, whole};

type M = Flag<MemtierState>;

/// The section titles of memtier's help, one per part of [`TABLE`].
pub(super) const SECTIONS: &[&str] = &[
    "Connection and General Options",
    "Results Output Options",
    "Test Options",
    "Arbitrary command",
    "Object Options",
    "Imported Data Options",
    "Key Options",
    "WAIT Options",
    "respbench's own",
];

/// The table, by section.
pub const TABLE: &[&[M]] = &[
    CONNECTION, OUTPUT, TEST, COMMAND, OBJECT, IMPORT, KEYS, WAIT, OWN,
];

const MEMCACHE: &str =
    "respbench speaks RESP (redis, resp2, resp3) only, not the memcache protocols";

const CONNECTION: &[M] = &[
    M::value(
        &["-h", "--host", "-s", "--server"],
        Value::Text,
        "-s, --server=ADDR",
        "The server's host name or address (localhost); also -h, --host",
        |st, n, v| via("-h", st, n, v),
    )
    .example(&["-s", "db.example"]),
    M::value(
        &["-p", "--port"],
        Value::Text,
        "-p, --port=PORT",
        "The server's TCP port (6379)",
        |st, n, v| via("-p", st, n, v),
    )
    .example(&["-p", "7000"]),
    M::value(
        &["-S", "--unix-socket"],
        Value::File("a unix socket path"),
        "-S, --unix-socket=SOCKET",
        "Connect over this unix socket instead of TCP",
        |st, n, v| via("-s", st, n, v),
    )
    .example(&["-S", "/tmp/valkey.sock"]),
    conn::IPV4,
    conn::IPV6,
    M::value(
        &["-P", "--protocol"],
        Value::Choice(&["redis", "resp2", "resp3"]),
        "-P, --protocol=PROTOCOL",
        "redis (default), resp2 or resp3 (HELLO 3); memcache_text and\nmemcache_binary are refused",
        |st, n, v| match v.as_encoded_bytes() {
            b"redis" | b"resp2" => {
                st.main.args.resp3 = false;
                Ok(())
            }
            b"resp3" => {
                st.main.args.resp3 = true;
                Ok(())
            }
            b"memcache_text" | b"memcache_binary" => Err(refused(n, MEMCACHE)),
            _ => Err(invalid_value(n, v, "redis, resp2 or resp3")),
        },
    )
    .example(&["--protocol=resp3"]),
    M::value(
        &["-a", "--authenticate"],
        Value::Text,
        "-a, --authenticate=CREDENTIALS",
        "AUTH with this password, or USER:PASSWORD for an ACL user",
        |st, _, v| {
            st.authenticate = Some(v.as_encoded_bytes().to_vec());
            Ok(())
        },
    )
    .secret()
    .example(&["-a", "user:pw"]),
    M::value(
        &["-u", "--uri"],
        Value::Text,
        "-u, --uri=URI",
        "The server as redis://[user:password@]host[:port][/db];\nrediss:// turns TLS on",
        |st, n, v| via("-u", st, n, v),
    )
    .secret_as(SecretValue::Uri)
    .example(&["--uri", "redis://u:pw@h:7000/2"]),
    M::switch(&["--tls"], "--tls", "Connect over TLS", |st, n, v| {
        via("--tls", st, n, v)
    })
    .example(&["--tls"]),
    M::value(
        &["--cert"],
        Value::File("a certificate file"),
        "--cert=FILE",
        "Client certificate to present (with --key)",
        |st, n, v| via("--cert", st, n, v),
    )
    .example(&["--tls", "--cert", "c.crt", "--key", "c.key"]),
    M::value(
        &["--key"],
        Value::File("a private key file"),
        "--key=FILE",
        "Private key of the client certificate",
        |st, n, v| via("--key", st, n, v),
    )
    .example(&["--tls", "--key", "c.key", "--cert", "c.crt"]),
    M::value(
        &["--cacert"],
        Value::File("a CA bundle file"),
        "--cacert=FILE",
        "CA bundle the server's certificate must chain to",
        |st, n, v| via("--cacert", st, n, v),
    )
    .example(&["--tls", "--cacert", "ca.crt"]),
    M::switch(
        &["--tls-skip-verify"],
        "--tls-skip-verify",
        "Accept any server certificate (no verification)",
        |st, n, v| via("--insecure", st, n, v),
    )
    .example(&["--tls", "--tls-skip-verify"]),
    conn::TLS_PROTOCOLS,
    M::value(
        &["--sni"],
        Value::Text,
        "--sni=STRING",
        "Server name sent in the TLS handshake",
        |st, n, v| via("--sni", st, n, v),
    )
    .example(&["--tls", "--sni", "cache.example"]),
    M::value(
        &["-x", "--run-count"],
        Value::Text,
        "-x, --run-count=NUMBER",
        "Run the whole test this many times, then the best,\nworst and average runs",
        |st, n, v| {
            st.opts.run_count = whole(n, v, 1, 1000)?;
            Ok(())
        },
    )
    .example(&["--run-count", "3"]),
    conn::DEBUG,
    M::switch(
        &["--cluster-mode"],
        "--cluster-mode",
        "Route each key to its cluster node",
        |st, n, v| via("--cluster", st, n, v),
    )
    .example(&["--cluster-mode"]),
    M::new(
        &["--help"],
        Value::None,
        "--help",
        "Print this help and exit",
        Action::Help,
    ),
    M::new(
        &["-v", "--version"],
        Value::None,
        "-v, --version",
        "Print the version and exit",
        Action::Version,
    ),
];

const OUTPUT: &[M] = &[
    M::value(
        &["-o", "--out-file"],
        Value::File("a file path"),
        "-o, --out-file=FILE",
        "Write the results tables to this file instead of stdout",
        |st, _, v| {
            st.opts.out_file = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["-o", "out.txt"]),
    M::value(
        &["--json-out-file"],
        Value::File("a file path"),
        "--json-out-file=FILE",
        "Write the results as memtier's JSON to this file\n(passwords redacted)",
        |st, _, v| {
            st.opts.json_out_file = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--json-out-file", "out.json"]),
    M::value(
        &["--client-stats"],
        Value::File("a path prefix"),
        "--client-stats=FILE",
        "Write each connection's per-second figures to\nPREFIX-RUN-THREAD-CLIENT.csv",
        |st, _, v| {
            st.opts.client_stats = Some(PathBuf::from(v));
            st.main.args.conn.client_stats = true;
            Ok(())
        },
    )
    .example(&["--client-stats", "cs"]),
    M::value(&["--hdr-file-prefix"], Value::File("a path prefix"), "--hdr-file-prefix=FILE",
        "Write each run's HDR histograms (all requests and each\ncommand) to PREFIX_*.txt and PREFIX_*.hgrm",
        |st, _, v| { st.opts.hdr_file_prefix = Some(PathBuf::from(v)); Ok(()) })
        .example(&["--hdr-file-prefix", "hdr"]),
    conn::SHOW_CONFIG,
    M::switch(
        &["--hide-histogram"],
        "--hide-histogram",
        "Leave out the latency distribution listing",
        |st, _, _| {
            st.opts.hide_histogram = true;
            Ok(())
        },
    )
    .example(&["--hide-histogram"]),
    M::value(
        &["--print-percentiles"],
        Value::Text,
        "--print-percentiles=LIST",
        "Percentile columns of the tables (50,99,99.9)",
        |st, n, v| {
            st.opts.print_percentiles = percentiles(n, v)?;
            Ok(())
        },
    )
    .example(&["--print-percentiles", "50,90,99.99"]),
    M::switch(
        &["--print-all-runs"],
        "--print-all-runs",
        "With --run-count, also show each run's table",
        |st, _, _| {
            st.opts.print_all_runs = true;
            Ok(())
        },
    )
    .example(&["--print-all-runs"]),
    super::data::STATS_BREAKDOWN,
    super::statsd::HOST,
    super::statsd::PORT,
    super::statsd::PREFIX,
    super::statsd::RUN_LABEL,
    super::statsd::GRAPHITE_PORT,
];

const TEST: &[M] = &[
    M::value(&["-n", "--requests"], Value::Text, "-n, --requests=NUMBER",
        "Requests each connection sends (10000); allkeys:\nevery key of the range once over all connections",
        |st, n, v| {
            st.opts.requests = match v.as_encoded_bytes() {
                b"allkeys" => Requests::AllKeys,
                _ => Requests::PerClient(whole(n, v, 1, u64::MAX)?),
            };
            Ok(())
        }).example(&["--requests=allkeys", "--key-pattern=P:P"]),
    M::value(&["--rate-limiting"], Value::Text, "--rate-limiting=NUMBER",
        "Requests per second per connection, paced",
        |st, n, v| { st.opts.rate_limiting = Some(whole(n, v, 1, 100_000_000)?); Ok(()) })
        .example(&["--rate-limiting", "100"]),
    M::value(&["-c", "--clients"], Value::Text, "-c, --clients=NUMBER",
        "Connections per thread (50)",
        |st, n, v| { st.opts.clients = whole(n, v, 1, 100_000)?; Ok(()) }).example(&["-c", "5"]),
    M::value(&["-t", "--threads"], Value::Text, "-t, --threads=NUMBER",
        "Worker threads (4)",
        |st, n, v| { st.opts.threads = whole(n, v, 1, 500)?; Ok(()) }).example(&["-t", "2"]),
    M::value(&["--test-time"], Value::Text, "--test-time=SECS", "Run for this many seconds instead of a request count",
        |st, n, v| { st.opts.test_time = Some(whole(n, v, 1, 10_000_000)?); Ok(()) })
        .example(&["--test-time", "10"]),
    conn::CLIENTS_START,
    conn::CLIENTS_STEP,
    conn::STEP_DURATION,
    M::value(&["--ratio"], Value::Text, "--ratio=RATIO", "Weights of SET and GET in the mix (1:10)",
        |st, n, v| via("--ratio", st, n, v)).example(&["--ratio=0:1"]),
    M::value(&["--pipeline"], Value::Text, "--pipeline=NUMBER",
        "Requests in flight per connection (1)",
        |st, n, v| via("-P", st, n, v)).example(&["--pipeline=10"]),
    conn::RECONNECT_INTERVAL,
    conn::RECONNECT_ON_ERROR,
    conn::MAX_RECONNECT_ATTEMPTS,
    conn::RECONNECT_BACKOFF_FACTOR,
    conn::CONNECTION_TIMEOUT,
    conn::JITTER_MIN,
    conn::JITTER_MAX,
    super::data::MULTI_KEY_GET,
    M::value(&["--select-db"], Value::Text, "--select-db=DB", "SELECT this database first",
        |st, n, v| via("--dbnum", st, n, v)).example(&["--select-db", "2"]),
    M::switch(&["--distinct-client-seed"], "--distinct-client-seed",
        "Accepted: respbench's workers always draw from\nseeds of their own",
        |_, _, _| Ok(())).example(&["--distinct-client-seed"]),
    M::switch(&["--randomize"], "--randomize", "Seed the generators from the clock (else a fixed seed)",
        |st, _, _| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            st.main.args.seed = Some(now.map(|d| d.as_nanos() as u64).unwrap_or(1));
            Ok(())
        }).example(&["--randomize"]),
];

const COMMAND: &[M] = &[
    M::value(
        &["--command"],
        Value::Text,
        "--command=COMMAND",
        "A command of the mix (repeatable); __key__ and\n__data__ are filled in",
        |st, n, v| via("--command", st, n, v),
    )
    .secret_as(SecretValue::Command)
    .example(&["--command=SET __key__ __data__"]),
    M::value(
        &["--command-ratio"],
        Value::Text,
        "--command-ratio",
        "Weight of the --command before it (1)",
        |st, n, v| via("--command-ratio", st, n, v),
    )
    .example(&["--command=GET __key__", "--command-ratio=2"]),
    M::value(
        &["--command-key-pattern"],
        Value::Choice(&["G", "R", "Z", "S", "P"]),
        "--command-key-pattern",
        "Key pattern of the --command before it (R, S, G, P, Z)",
        |st, n, v| via("--command-key-pattern", st, n, v),
    )
    .example(&["--command=GET __key__", "--command-key-pattern=G"]),
    M::value(&["--monitor-input"], Value::File("a MONITOR output file"), "--monitor-input=FILE",
        "Commands from valkey-cli/redis-cli MONITOR output:\n--command=__monitor_line3__ sends its third command,\n__monitor_line@__ any of them",
        |st, _, v| { st.opts.monitor_input = Some(PathBuf::from(v)); Ok(()) })
        .example(&["--monitor-input=monitor.txt", "--command=__monitor_line1__"]),
    M::value(&["--monitor-pattern"], Value::Choice(&["S", "R"]), "--monitor-pattern=S|R",
        "How __monitor_line@__ picks: S in order (default) or R\nat random",
        |st, n, v| {
            st.opts.monitor_random = match v.as_encoded_bytes() {
                b"S" => false,
                b"R" => true,
                _ => return Err(invalid_value(n, v, "S or R")),
            };
            Ok(())
        }).example(&["--monitor-pattern=R"]),
    super::scan::ITERATION,
    super::scan::MAX_ITERATIONS,
];

const OBJECT: &[M] = &[
    M::value(
        &["-d", "--data-size"],
        Value::Text,
        "-d, --data-size=SIZE",
        "Value size in bytes (32)",
        |st, n, v| via("-d", st, n, v),
    )
    .example(&["-d", "1024"]),
    super::data::DATA_OFFSET,
    super::data::RANDOM_DATA,
    M::value(
        &["--data-size-range"],
        Value::Text,
        "--data-size-range=RANGE",
        "Value sizes uniform over MIN-MAX",
        |st, n, v| via("--data-size-range", st, n, v),
    )
    .example(&["--data-size-range=32-1024"]),
    M::value(
        &["--data-size-list"],
        Value::Text,
        "--data-size-list=LIST",
        "Value sizes by weight: SIZE:WEIGHT,...",
        |st, n, v| via("--data-size-list", st, n, v),
    )
    .example(&["--data-size-list=32:1,1024:3"]),
    super::data::SIZE_PATTERN,
    super::data::EXPIRY_RANGE,
];

const IMPORT: &[M] = &[
    super::import::DATA_IMPORT,
    super::import::DATA_VERIFY,
    super::import::VERIFY_ONLY,
    super::import::GENERATE_KEYS,
    super::import::NO_EXPIRY,
];

const KEYS: &[M] = &[
    M::value(
        &["--key-prefix"],
        Value::Text,
        "--key-prefix=PREFIX",
        "Keys start with this (memtier-)",
        |st, n, v| via("--key-prefix", st, n, v),
    )
    .example(&["--key-prefix=bench-"]),
    M::value(
        &["--key-minimum"],
        Value::Text,
        "--key-minimum=NUMBER",
        "Lowest key number (0)",
        |st, n, v| via("--key-minimum", st, n, v),
    )
    .example(&["--key-minimum=10"]),
    M::value(
        &["--key-maximum"],
        Value::Text,
        "--key-maximum=NUMBER",
        "Highest key number (10000000)",
        |st, n, v| via("--key-maximum", st, n, v),
    )
    .example(&["--key-maximum=1000"]),
    M::value(
        &["--key-pattern"],
        Value::Text,
        "--key-pattern=PATTERN",
        "Key patterns of SET:GET (R:R); R, S, G, P or Z",
        |st, n, v| via("--key-pattern", st, n, v),
    )
    .example(&["--key-pattern=P:P"]),
    M::value(
        &["--key-stddev"],
        Value::Text,
        "--key-stddev",
        "Spread of the G pattern, in keys",
        |st, n, v| via("--key-stddev", st, n, v),
    )
    .example(&["--key-pattern=G:G", "--key-stddev=100"]),
    M::value(
        &["--key-median"],
        Value::Text,
        "--key-median",
        "Centre of the G pattern, a key number",
        |st, n, v| via("--key-median", st, n, v),
    )
    .example(&["--key-pattern=G:G", "--key-median=500"]),
    M::value(
        &["--key-zipf-exp"],
        Value::Text,
        "--key-zipf-exp",
        "Skew of the Z pattern, in (0, 5)",
        |st, n, v| via("--key-zipf-exp", st, n, v),
    )
    .example(&["--key-pattern=Z:Z", "--key-zipf-exp=0.9"]),
];

const WAIT: &[M] = &[conn::WAIT_RATIO, conn::NUM_SLAVES, conn::WAIT_TIMEOUT];

const OWN: &[M] = &[
    M::value(
        &["--json"],
        Value::File("a file path, or - for stdout"),
        "--json=FILE",
        "Also write respbench's record (corrected latency, verdicts)",
        |st, n, v| via("--json", st, n, v),
    )
    .example(&["--json", "run.json"]),
    M::value(
        &["--html"],
        Value::File("a file path for the HTML report"),
        "--html=FILE",
        "Also write respbench's HTML report",
        |st, n, v| via("--html", st, n, v),
    )
    .example(&["--html", "run.html"]),
    M::value(
        &["--metrics-listen"],
        Value::Text,
        "--metrics-listen=ADDR:PORT",
        "Serve respbench's live metrics on http://ADDR:PORT/metrics",
        |st, n, v| via("--metrics-listen", st, n, v),
    )
    .example(&["--metrics-listen", "127.0.0.1:9100"]),
    M::value(
        &["--metrics-linger"],
        Value::Text,
        "--metrics-linger=SEC",
        "Keep serving /metrics this long after the run",
        |st, n, v| via("--metrics-linger", st, n, v),
    )
    .example(&[
        "--metrics-listen",
        "127.0.0.1:9100",
        "--metrics-linger",
        "5",
    ]),
];

/// `--print-percentiles 50,99,99.9`: each in [0, 100] (memtier takes 0: the minimum).
fn percentiles(name: &str, v: &std::ffi::OsStr) -> Result<Vec<f64>, super::UsageError> {
    let s = text(name, v)?;
    s.split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
            _ => Err(invalid_value(
                name,
                v,
                "percentiles in [0, 100] separated by commas",
            )),
        })
        .collect()
}
