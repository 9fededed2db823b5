//! respbench's own options (not valkey-benchmark's): the record and report files, repetitions,
//! sharded runs, request timeouts and the `--find-max` search; and `--help`/`--version`.

use std::path::PathBuf;

use super::super::flag::{Action, Flag, Value};
use super::super::state::State;
use super::super::value::{self, seconds, text, whole};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// What the run writes besides its report.
pub(in crate::cli) const RECORD: &[Flag<State>] = &[
    F::value(
        &["--json"],
        Value::File("a file path, or - for stdout"),
        "--json <file>",
        "Also write the run as one JSON document (schema\n\
         respbench/1: options, server identity, per-test counts,\n\
         latency summaries and full HDR histograms, server figures).\n\
         \"-\" writes it to stdout; the report then goes to stderr.",
        |st, _, v| {
            st.args.json = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--json", "run.json"]),
    F::value(
        &["--html"],
        Value::File("a file path for the HTML report"),
        "--html <file>",
        "Also write the run as one self-contained HTML report\n\
         (charts over time, latency spectrum; opens offline)",
        |st, _, v| {
            st.args.html = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--html", "run.html"]),
    F::value(
        &["--journal"],
        Value::File("a file path for the run's journal"),
        "--journal <file>",
        "Where the journal goes (default: beside --json FILE, as\n\
         FILE.partial; none with --json -): every second's figures\n\
         as JSON Lines, synced, removed when the run ends. After a\n\
         kill, compare/report/merge read it; recover turns it into\n\
         a record (respbench recover FILE.partial -o FILE)",
        |st, _, v| {
            st.args.journal = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--json", "-", "--journal", "run.partial"]),
    F::value(
        &["--repeat"],
        Value::Text,
        "--repeat <n>",
        "Run every test n times (1 to 1000); the report adds a\n\
         median line, the JSON keeps every repetition, and\n\
         respbench compare tells differences from noise with them",
        |st, name, v| {
            st.args.repeat = whole(name, v, 1, 1000)?;
            Ok(())
        },
    )
    .example(&["--repeat", "3"]),
    F::switch(
        &["--no-server-stats"],
        "--no-server-stats",
        "Do not sample the server's INFO during tests (no server\n\
         CPU, memory or time per call in the report and the JSON).",
        |st, _, _| {
            st.args.no_server_stats = true;
            Ok(())
        },
    ),
];

/// Sharded runs and failures.
pub(in crate::cli) const SHARDS: &[Flag<State>] = &[
    F::value(
        &["--shard"],
        Value::Text,
        "--shard <I/N>",
        "Run shard I (from 0) of N of this benchmark: -n and --rps\n\
         are divided exactly, each shard has its own seed and, with\n\
         --sequential, its own slice of the keys. Without it the\n\
         shard comes from Slurm or Open MPI variables, or from a\n\
         Kubernetes Indexed Job's JOB_COMPLETION_INDEX with --shards.",
        |st, name, v| {
            let text = text(name, v)?;
            st.args.shard = Some(value::shard(&text)?);
            Ok(())
        },
    )
    .example(&["--shard", "1/4"]),
    F::value(
        &["--shards"],
        Value::Text,
        "--shards <N>",
        "The shard count for a Kubernetes Indexed Job",
        |st, name, v| {
            st.args.shards = Some(whole(name, v, 1, 1_000_000)?);
            Ok(())
        },
    )
    .example(&["--shards", "4"]),
    F::value(
        &["--start-at"],
        Value::Text,
        "--start-at <time>",
        "Connect, then start measuring at this wall-clock time\n\
         (RFC 3339, e.g. 2026-01-02T03:04:05Z, or Unix seconds), so\n\
         shards on several machines start together (clocks via NTP)",
        |st, name, v| {
            st.args.start_at = Some(text(name, v)?);
            Ok(())
        },
    )
    .example(&["--start-at", "2026-01-02T03:04:05Z"]),
    F::value(
        &["--timeout"],
        Value::Text,
        "--timeout <sec>",
        "A request unanswered this long (e.g. 2 or 0.5) fails as\n\
         \"timeout\" and its connection is reopened (with -e the run\n\
         goes on; without, it stops with a partial report). Without\n\
         it, replies are awaited until --duration ends plus 5 s",
        |st, name, v| {
            st.args.timeout = Some(seconds(name, v)?);
            Ok(())
        },
    )
    .example(&["--timeout", "0.5"]),
];

/// `--find-max`, then help and version (last in the help, as in valkey-benchmark's).
pub(in crate::cli) const SEARCH: &[Flag<State>] = &[
    F::value(
        &["--find-max"],
        Value::Text,
        "--find-max <slo>",
        "Find the highest throughput that keeps an SLO, e.g.\n\
         'p99<1ms' or 'p99.9<5ms,errors<0.1%' (metrics p50, p90,\n\
         p99, p99.9, avg: us, ms or s; errors in %; all must hold).\n\
         Ramps --rps up (from --rps if given, else from a quarter\n\
         of a short closed-loop probe) until the SLO breaks, then\n\
         bisects to within 5%; prints one row per window (two or\n\
         more per rate) and the answer with its windows. One test\n\
         only (pick it with -t, or a command). At most 40\n\
         windows; Ctrl-C prints the best answer so far.",
        |st, name, v| {
            st.args.find_max = Some(text(name, v)?);
            Ok(())
        },
    )
    .example(&["--find-max", "p99<1ms"]),
    F::value(
        &["--step-duration"],
        Value::Text,
        "--step-duration <sec>",
        "Each --find-max step's measured window (default 5), after\n\
         a warmup of --warmup seconds (default 1) that is not counted",
        |st, name, v| {
            st.args.step_duration = Some(seconds(name, v)?);
            Ok(())
        },
    )
    .example(&["--find-max", "p99<1ms", "--step-duration", "2"]),
    F::long_help(),
    F::new(
        &["-v", "--version"],
        Value::None,
        "-v, --version",
        "Print the version and exit",
        Action::Version,
    ),
];
