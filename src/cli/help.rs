//! The `--help` and `--version` texts.
//!
//! Owns: their wording, laid out like valkey-benchmark's usage text (same option order and
//! spellings) so users of the reference find their way. Must not: claim behaviour respbench does
//! not have; tests check that every option of the parser's table is listed.

/// The text `--help` prints (to stdout, exit 0). Ends with a newline.
pub fn help_text() -> &'static str {
    HELP
}

/// The line `-v`/`--version` prints: `respbench <version>`, without a newline.
pub fn version_text() -> String {
    format!("respbench {}", env!("CARGO_PKG_VERSION"))
}

const HELP: &str = r#"Usage: respbench [OPTIONS] [--] [COMMAND ARGS...]

 -h <hostname>      Server hostname (default 127.0.0.1)
 -p <port>          Server port (default 6379)
 -s <socket>        Server unix socket path (overrides host and port)
 -a <password>      Password to AUTH with
 --user <username>  Send ACL-style AUTH <username> <password>. Needs -a.
 -u <uri>           Server URI: redis://[[user]:password@]host[:port][/dbnum]
                    (or valkey://...). User, password, port and dbnum are
                    optional; an IPv6 host goes in brackets: redis://[::1]:6380
                    For TLS, use the scheme rediss:// or valkeys://.
 -c <clients>       Number of parallel connections (default 50)
 -n <requests>      Total number of requests per test (default 100000).
                    A ';' sequence of k commands counts as k requests.
 --duration <sec>   Run each test for <sec> seconds instead of -n requests
                    (decimals allowed, e.g. 0.5). Not together with -n.
 --warmup <sec>     Before each test, run it for <sec> seconds and discard
                    those results (default: no warmup)
 -d <size>          Data size of SET/GET values and of __data__ in bytes
                    (default 3)
 --dbnum <db>       SELECT the given db number (default 0)
 -3                 Start each connection in RESP3 mode (HELLO 3)
 --threads <num>    Number of worker threads (default 1; with --cluster, one
                    per benchmark node)
 --cluster          Enable cluster mode: keys are routed to the node owning
                    their slot, redirects are followed. -c is connections per
                    node. {tag} in arguments becomes a hash tag of the
                    connection's node; the default tests use key:{tag}:...
 --rfr <mode>       Enable read from replicas in cluster mode:
                    no: primaries only (default); yes: replicas; all: both.
                    Commands that write always go to primaries.
 --enable-tracking  Send CLIENT TRACKING on before starting the benchmark.
                    With -3 the server's invalidation messages arrive on the
                    benchmark connections; they are counted and reported
 -k <boolean>       1 = keep alive, 0 = reconnect after every batch (default 1)
 -r <keyspacelen>   Replace __rand_int__ and __rand_1st__ .. __rand_9th__ in
                    arguments with a 12-digit number from 0 to keyspacelen-1.
                    The default tests use it for random keys and values.
                    Without -r, every command uses the same key.
 --sequential       With -r, use successive numbers instead of random ones
 -P <numreq>        Pipeline <numreq> requests (default 1: no pipelining)
 -q                 Quiet: print one summary line per test
 --precision <n>    Number of decimal places of latency figures (default 3,
                    at most 6)
 --csv              Output in CSV format
 -l                 Loop: run the tests forever
 -t <tests>         Only run the comma-separated list of tests. The names are
                    the ones printed in the output. Ignored when a command is
                    given on the command line.
 -I                 Idle mode: just open -c connections and wait
 -x                 Read the last argument of the command from stdin
 -e                 Keep going on error replies and count them (by default
                    an error reply stops the run); also on lost connections:
                    their requests fail by kind (connection reset, closed,
                    refused, timeout) and they are reopened with a backoff
 --seed <num>       Seed for the random number generator (default: random)
 --rps <requests>   Target rate in requests per second for the whole run
                    (default 0: no limit). Latency is measured from each
                    request's scheduled send time, so time spent waiting to
                    be sent counts.
 --num-functions <num>
                    Number of functions in the library loaded by the
                    function_load test (default 10)
 --num-keys-in-fcall <num>
                    Number of keys passed to FCALL by the fcall test
                    (default 1)
 --dataset <file>   CSV or TSV (by a .tsv name) file for __field:<name>__
                    placeholders; its first line names the fields and each
                    command takes the next record
 --maxdocs <num>    Maximum number of records to load from the dataset file
                    (default: all)
 --tls              Establish a secure TLS connection.
 --sni <host>       Server name indication for TLS (also the name checked
                    with --tls-verify-name).
 --cacert <file>    CA Certificate file to verify with.
 --cacertdir <dir>  Directory where trusted CA certificates are stored
                    (every PEM file in it is read).
                    If neither cacert nor cacertdir are specified, the default
                    system-wide trusted root certs configuration will apply.
 --insecure         Allow insecure TLS connection by skipping cert validation.
 --tls-verify-name  Also require the server's certificate to be valid for the
                    host name or address given with -h/-u (or for --sni).
                    By default only the chain is verified, as valkey-benchmark
                    does.
 --cert <file>      Client certificate to authenticate with (needs --key).
 --key <file>       Private key file to authenticate with (needs --cert).
 --tls-ciphers <list>
                    Sets the list of preferred ciphers (TLSv1.2)
                    in order of preference from highest to lowest separated
                    by colon (":"). See the ciphers(1ssl) manpage for more
                    information about the syntax of this string. respbench
                    has ECDHE-{ECDSA,RSA}-{AES256-GCM-SHA384,CHACHA20-POLY1305,
                    AES128-GCM-SHA256}.
 --tls-ciphersuites <list>
                    Sets the list of preferred ciphersuites (TLSv1.3)
                    in order of preference from highest to lowest separated
                    by colon (":"). See the ciphers(1ssl) manpage for more
                    information about the syntax of this string, and
                    specifically for TLSv1.3 ciphersuites. respbench has
                    TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256 and
                    TLS_AES_128_GCM_SHA256.
 --mptcp            Establish an MPTCP connection (Linux, TCP only).
 --json <file>      Also write the run as one JSON document (schema
                    respbench/1: options, server identity, per-test counts,
                    latency summaries and full HDR histograms, server figures).
                    "-" writes it to stdout; the report then goes to stderr.
 --html <file>      Also write the run as one self-contained HTML report
                    (charts over time, latency spectrum; opens offline)
 --repeat <n>       Run every test n times (1 to 1000); the report adds a
                    median line, the JSON keeps every repetition, and
                    respbench compare tells differences from noise with them
 --no-server-stats  Do not sample the server's INFO during tests (no server
                    CPU, memory or time per call in the report and the JSON).
 --sentinel <host:port[,host:port...]>
                    Ask these Sentinels (in turn) where the primary is, run
                    against it, and follow it when a failover moves it (the
                    switch is in the report and the JSON). Replaces -h/-p.
 --primary-name <name>
                    The name the Sentinels monitor the primary by (needed with
                    --sentinel; --master-name is the same).
 --sentinel-user <user>, --sentinel-password <password>
                    AUTH to the Sentinels (-a/--user stay for the primary).
 --check-counters   For an INCR test (-t incr, or a custom INCR key): count
                    the counters before and after it and report acknowledged
                    increments, what the server holds and how many were lost.
 --shard <I/N>      Run shard I (from 0) of N of this benchmark: -n and --rps
                    are divided exactly, each shard has its own seed and, with
                    --sequential, its own slice of the keys. Without it the
                    shard comes from Slurm or Open MPI variables, or from a
                    Kubernetes Indexed Job's JOB_COMPLETION_INDEX with --shards.
 --shards <N>       The shard count for a Kubernetes Indexed Job
 --start-at <time>  Connect, then start measuring at this wall-clock time
                    (RFC 3339, e.g. 2026-01-02T03:04:05Z, or Unix seconds), so
                    shards on several machines start together (clocks via NTP)
 --timeout <sec>    A request unanswered this long (e.g. 2 or 0.5) fails as
                    "timeout" and its connection is reopened (with -e the run
                    goes on; without, it stops with a partial report). Without
                    it, replies are awaited until --duration ends plus 5 s
 --keys <pattern>   How __rand_int__ and __rand_Nth__ values are drawn from the
                    key range: uniform (default), sequential, gaussian, zipf,
                    zipf:<exponent> or parallel (each connection walks its
                    own slice of the range, in order)
 --key-pattern <p>  The same in memtier_benchmark's letters: R, S, G, Z, P,
                    or a SET:GET pair (R:R; different halves need --ratio)
 --key-minimum <n>  Lowest key value (default 0)
 --key-maximum <n>  Highest key value (inclusive; replaces -r's keyspacelen-1)
 --key-median <n>   Gaussian pattern: the centre (default: the middle)
 --key-stddev <n>   Gaussian pattern: the spread (default: a sixth of the range)
 --key-zipf-exp <s> Zipf pattern: the exponent, above 0 and at most 5
                    (default 1). memtier spellings also take --opt=value.
 --key-prefix <p>   The default tests' and --command's __key__ keys start with
                    this instead of "key:" (e.g. memtier-)
 --data-size-range <min-max>
                    Value sizes uniform over min..max bytes (instead of -d)
 --data-size-list <size:weight,...>
                    Value sizes drawn with these relative weights
 --ratio <set:get>  Run one SET:GET mix test with these weights (e.g. 1:10)
                    instead of the default tests; each command is reported
                    on its own line, then the total
 --command <cmd>    A command of a weighted mix, as memtier_benchmark's
                    (repeatable; __key__ is key:__rand_int__, __data__ a value)
 --command-ratio <n>
                    The weight of the --command before it (default 1)
 --command-key-pattern <p>
                    The key pattern (R, S, G, Z, P) of the --command before it
 --arrival <a>      With --rps: uniform (evenly spaced sends, the default) or
                    poisson (exponential gaps with the same mean rate)
 --find-max <slo>   Find the highest throughput that keeps an SLO, e.g.
                    'p99<1ms' or 'p99.9<5ms,errors<0.1%' (metrics p50, p90,
                    p99, p99.9, avg: us, ms or s; errors in %; all must hold).
                    Ramps --rps up (from --rps if given, else from a quarter
                    of a short closed-loop probe) until the SLO breaks, then
                    bisects to within 5%; prints one row per window (two or
                    more per rate) and the answer with its windows. One test
                    only (pick it with -t, or a command). At most 40
                    windows; Ctrl-C prints the best answer so far.
 --step-duration <sec>
                    Each --find-max step's measured window (default 5), after
                    a warmup of --warmup seconds (default 1) that is not counted
 --help             Print this help and exit
 -v, --version      Print the version and exit

Not supported yet: --fuzz, --fuzz-mode, --fuzz-loglevel
Not supported by this build: --rdma (respbench has no RDMA transport).

Command:
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
