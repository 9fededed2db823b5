//! Tests for `parse`, the defaults and the help text: one per flag, one per error.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use super::flag::Action;
use super::flags;
use super::*;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn run(args: &[&str]) -> Args {
    match parse(os(args)) {
        Ok(Invocation::Run(a)) => *a,
        other => panic!("{args:?}: expected Run, got {other:?}"),
    }
}

fn err(args: &[&str]) -> String {
    match parse(os(args)) {
        Err(UsageError(msg)) => msg,
        other => panic!("{args:?}: expected an error, got {other:?}"),
    }
}

fn cmd(args: &Args) -> Vec<String> {
    args.command
        .iter()
        .map(|a| String::from_utf8(a.clone()).unwrap())
        .collect()
}

fn tcp(host: &str, port: u16) -> Endpoint {
    Endpoint::Tcp {
        host: host.to_owned(),
        port,
    }
}

// ---- defaults ---------------------------------------------------------------------------------

#[test]
fn empty_line_gives_defaults() {
    assert_eq!(run(&[]), Args::default());
}

#[test]
fn defaults_are_valkey_benchmarks() {
    let a = Args::default();
    assert_eq!(a.endpoint, tcp("127.0.0.1", 6379));
    assert_eq!(a.password, None);
    assert_eq!(a.user, None);
    assert_eq!(a.clients, 50);
    assert_eq!(a.requests, 100_000);
    assert_eq!(a.duration, None);
    assert_eq!(a.warmup, None);
    assert_eq!(a.data_size, 3);
    assert_eq!(a.dbnum, 0);
    assert!(!a.resp3);
    assert_eq!(a.threads, None);
    assert_eq!(a.keepalive, 1);
    assert_eq!(a.keyspace, None);
    assert!(!a.sequential);
    assert_eq!(a.pipeline, 1);
    assert!(!a.quiet);
    assert!(!a.csv);
    assert!(!a.loop_forever);
    assert_eq!(a.tests, None);
    assert!(!a.idle);
    assert!(!a.stdin_last_arg);
    assert!(!a.continue_on_error);
    assert_eq!(a.precision, 3);
    assert_eq!(a.seed, None);
    assert_eq!(a.rps, None);
    assert_eq!(a.num_functions, 10);
    assert_eq!(a.num_keys_in_fcall, 1);
    assert!(a.command.is_empty());
}

// ---- one test per flag ------------------------------------------------------------------------

#[test]
fn flag_host() {
    assert_eq!(run(&["-h", "10.1.2.3"]).endpoint, tcp("10.1.2.3", 6379));
}

#[test]
fn flag_port() {
    assert_eq!(run(&["-p", "7000"]).endpoint, tcp("127.0.0.1", 7000));
    assert_eq!(run(&["-p", "0"]).endpoint, tcp("127.0.0.1", 0));
    assert_eq!(run(&["-p", "65535"]).endpoint, tcp("127.0.0.1", 65535));
}

#[test]
fn flag_socket() {
    assert_eq!(
        run(&["-s", "/tmp/valkey.sock"]).endpoint,
        Endpoint::Unix(PathBuf::from("/tmp/valkey.sock"))
    );
}

#[test]
fn flag_password_is_raw_bytes() {
    assert_eq!(run(&["-a", "pw"]).password, Some(b"pw".to_vec()));
    let raw = vec![OsString::from("-a"), OsString::from_vec(b"p\xffw".to_vec())];
    match parse(raw) {
        Ok(Invocation::Run(a)) => assert_eq!(a.password, Some(b"p\xffw".to_vec())),
        other => panic!("{other:?}"),
    }
}

#[test]
fn flag_password_may_start_with_dash() {
    let a = run(&["-a", "-secret", "-q"]);
    assert_eq!(a.password, Some(b"-secret".to_vec()));
    assert!(a.quiet);
}

#[test]
fn flag_user() {
    let a = run(&["--user", "alice", "-a", "pw"]);
    assert_eq!(a.user, Some(b"alice".to_vec()));
    assert_eq!(a.password, Some(b"pw".to_vec()));
}

#[test]
fn flag_uri() {
    let a = run(&["-u", "redis://bob:p%40ss@db.example:6390/5"]);
    assert_eq!(a.endpoint, tcp("db.example", 6390));
    assert_eq!(a.user, Some(b"bob".to_vec()));
    assert_eq!(a.password, Some(b"p@ss".to_vec()));
    assert_eq!(a.dbnum, 5);
}

#[test]
fn flag_uri_ipv6_and_default_port() {
    assert_eq!(run(&["-u", "valkey://[::1]"]).endpoint, tcp("::1", 6379));
}

#[test]
fn flag_uri_password_only_satisfies_user() {
    let a = run(&["--user", "carol", "-u", "redis://pw@h"]);
    assert_eq!(a.user, Some(b"carol".to_vec()));
    assert_eq!(a.password, Some(b"pw".to_vec()));
}

#[test]
fn flag_uri_keeps_earlier_values_it_does_not_set() {
    let a = run(&["-a", "pw", "--dbnum", "3", "-p", "7000", "-u", "redis://h"]);
    assert_eq!(a.password, Some(b"pw".to_vec()));
    assert_eq!(a.dbnum, 3);
    // A URI without a port keeps the earlier -p, as the reference does.
    assert_eq!(a.endpoint, tcp("h", 7000));
    // And one without a host keeps the earlier -h.
    let a = run(&["-h", "g", "-u", "redis://:7001/2"]);
    assert_eq!((a.endpoint, a.dbnum), (tcp("g", 7001), 2));
}

#[test]
fn later_host_and_port_override_uri_parts() {
    assert_eq!(
        run(&["-u", "redis://h:7000", "-p", "7001"]).endpoint,
        tcp("h", 7001)
    );
    assert_eq!(
        run(&["-u", "redis://h:7000", "-h", "g"]).endpoint,
        tcp("g", 7000)
    );
}

#[test]
fn uri_overrides_earlier_host_and_port() {
    assert_eq!(
        run(&["-h", "g", "-p", "1", "-u", "redis://h:7000"]).endpoint,
        tcp("h", 7000)
    );
}

#[test]
fn flag_clients() {
    assert_eq!(run(&["-c", "1"]).clients, 1);
    assert_eq!(run(&["-c", "1000000"]).clients, 1_000_000);
}

#[test]
fn flag_requests() {
    assert_eq!(run(&["-n", "1"]).requests, 1);
    assert_eq!(run(&["-n", "18446744073709551615"]).requests, u64::MAX);
}

#[test]
fn flag_duration() {
    assert_eq!(
        run(&["--duration", "30"]).duration,
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        run(&["--duration", "0.5"]).duration,
        Some(Duration::from_millis(500))
    );
    assert_eq!(
        run(&["--duration", ".25"]).duration,
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        run(&["--duration", "0.000000001"]).duration,
        Some(Duration::from_nanos(1))
    );
    assert_eq!(
        run(&["--duration", "10000000"]).duration,
        Some(Duration::from_secs(10_000_000))
    );
}

#[test]
fn flag_warmup() {
    assert_eq!(run(&["--warmup", "2"]).warmup, Some(Duration::from_secs(2)));
    assert_eq!(
        run(&["--warmup", "1.5"]).warmup,
        Some(Duration::from_millis(1500))
    );
}

#[test]
fn warmup_with_requests_is_fine() {
    let a = run(&["--warmup", "1", "-n", "5"]);
    assert_eq!(a.requests, 5);
    assert_eq!(a.warmup, Some(Duration::from_secs(1)));
}

#[test]
fn flag_data_size() {
    assert_eq!(run(&["-d", "1"]).data_size, 1);
    assert_eq!(run(&["-d", "1073741824"]).data_size, 1 << 30);
}

#[test]
fn flag_dbnum() {
    assert_eq!(run(&["--dbnum", "9"]).dbnum, 9);
    assert_eq!(run(&["--dbnum", "2147483647"]).dbnum, 2_147_483_647);
}

#[test]
fn flag_resp3() {
    assert!(run(&["-3"]).resp3);
}

#[test]
fn flag_threads() {
    assert_eq!(run(&["--threads", "4"]).threads, Some(4));
    assert_eq!(run(&["--threads", "500"]).threads, Some(500));
}

#[test]
fn flag_threads_zero_means_not_set() {
    assert_eq!(run(&["--threads", "4", "--threads", "0"]).threads, None);
}

#[test]
fn flag_keepalive() {
    assert_eq!(run(&["-k", "0"]).keepalive, 0);
    assert_eq!(run(&["-k", "-1"]).keepalive, -1);
    assert_eq!(run(&["-k", "7"]).keepalive, 7);
}

#[test]
fn flag_keyspace() {
    assert_eq!(run(&["-r", "0"]).keyspace, Some(0));
    assert_eq!(run(&["-r", "999999999999"]).keyspace, Some(999_999_999_999));
}

#[test]
fn flag_sequential() {
    let a = run(&["-r", "10", "--sequential"]);
    assert!(a.sequential);
    assert_eq!(a.keyspace, Some(10));
}

#[test]
fn sequential_without_keyspace_is_allowed() {
    let a = run(&["--sequential"]);
    assert!(a.sequential);
    assert_eq!(a.keyspace, None);
}

#[test]
fn flag_pipeline() {
    assert_eq!(run(&["-P", "16"]).pipeline, 16);
    assert_eq!(run(&["-P", "1000000"]).pipeline, 1_000_000);
}

#[test]
fn flag_quiet() {
    assert!(run(&["-q"]).quiet);
}

#[test]
fn flag_csv() {
    assert!(run(&["--csv"]).csv);
}

#[test]
fn flag_loop() {
    assert!(run(&["-l"]).loop_forever);
}

#[test]
fn flag_tests_kept_raw() {
    assert_eq!(
        run(&["-t", "SET,get ,lpush"]).tests.as_deref(),
        Some("SET,get ,lpush")
    );
}

#[test]
fn flag_tests_with_custom_command_is_fine() {
    let a = run(&["-t", "set", "ping"]);
    assert_eq!(a.tests.as_deref(), Some("set"));
    assert_eq!(cmd(&a), ["ping"]);
}

#[test]
fn flag_idle() {
    assert!(run(&["-I"]).idle);
}

#[test]
fn flag_stdin_last_arg() {
    assert!(run(&["-x", "set", "k"]).stdin_last_arg);
}

#[test]
fn flag_continue_on_error() {
    assert!(run(&["-e"]).continue_on_error);
}

#[test]
fn flag_precision() {
    assert_eq!(run(&["--precision", "0"]).precision, 0);
    assert_eq!(run(&["--precision", "6"]).precision, 6);
}

#[test]
fn flag_seed() {
    assert_eq!(run(&["--seed", "42"]).seed, Some(42));
    assert_eq!(
        run(&["--seed", "18446744073709551615"]).seed,
        Some(u64::MAX)
    );
}

#[test]
fn flag_rps() {
    assert_eq!(run(&["--rps", "5000"]).rps, Some(5000));
    assert_eq!(
        run(&["--rps", "0"]).rps,
        None,
        "0 is unlimited, as in the reference"
    );
}

#[test]
fn flag_num_functions() {
    assert_eq!(run(&["--num-functions", "100000"]).num_functions, 100_000);
}

#[test]
fn flag_num_keys_in_fcall() {
    assert_eq!(run(&["--num-keys-in-fcall", "0"]).num_keys_in_fcall, 0);
    assert_eq!(
        run(&["--num-keys-in-fcall", "1000000"]).num_keys_in_fcall,
        1_000_000
    );
}

#[test]
fn attached_values_are_accepted() {
    let a = run(&["-n100", "--rps=10", "-c=5", "--threads=2"]);
    assert_eq!(a.requests, 100);
    assert_eq!(a.rps, Some(10));
    assert_eq!(a.clients, 5);
    assert_eq!(a.threads, Some(2));
}

#[test]
fn bundled_short_flags_are_accepted() {
    let a = run(&["-qlI"]);
    assert!(a.quiet && a.loop_forever && a.idle);
}

// ---- overriding -------------------------------------------------------------------------------

#[test]
fn later_occurrence_overrides_earlier() {
    let a = run(&[
        "-n", "5", "-n", "6", "-c", "2", "-c", "3", "-a", "x", "-a", "y", "-t", "get", "-t", "set",
    ]);
    assert_eq!(a.requests, 6);
    assert_eq!(a.clients, 3);
    assert_eq!(a.password, Some(b"y".to_vec()));
    assert_eq!(a.tests.as_deref(), Some("set"));
}

#[test]
fn later_host_overrides_earlier() {
    assert_eq!(run(&["-h", "a", "-h", "b"]).endpoint, tcp("b", 6379));
}

#[test]
fn socket_overrides_host_and_port_in_any_order() {
    let want = Endpoint::Unix(PathBuf::from("/s"));
    assert_eq!(run(&["-h", "a", "-p", "1", "-s", "/s"]).endpoint, want);
    assert_eq!(run(&["-s", "/s", "-h", "a", "-p", "1"]).endpoint, want);
    assert_eq!(run(&["-s", "/s", "-u", "redis://h:2"]).endpoint, want);
}

// ---- where options end ------------------------------------------------------------------------

#[test]
fn first_non_option_starts_the_command() {
    let a = run(&["-n", "10", "set", "foo", "-1"]);
    assert_eq!(a.requests, 10);
    assert_eq!(cmd(&a), ["set", "foo", "-1"]);
}

#[test]
fn options_after_the_command_belong_to_it() {
    let a = run(&["get", "k", "-n", "5", "--help", "--", "-v"]);
    assert_eq!(a.requests, 100_000);
    assert_eq!(cmd(&a), ["get", "k", "-n", "5", "--help", "--", "-v"]);
}

#[test]
fn double_dash_ends_options() {
    let a = run(&["-q", "--", "-x", "--help", "-n"]);
    assert!(a.quiet);
    assert!(!a.stdin_last_arg);
    assert_eq!(cmd(&a), ["-x", "--help", "-n"]);
}

#[test]
fn double_dash_only_first_is_removed() {
    assert_eq!(cmd(&run(&["--", "--", "a"])), ["--", "a"]);
}

#[test]
fn double_dash_alone_gives_empty_command() {
    assert!(run(&["-q", "--"]).command.is_empty());
}

#[test]
fn command_is_verbatim_bytes() {
    let raw = vec![
        OsString::from("set"),
        OsString::from_vec(b"k\xff".to_vec()),
        OsString::from(";"),
        OsString::from(""),
    ];
    match parse(raw) {
        Ok(Invocation::Run(a)) => {
            assert_eq!(
                a.command,
                [b"set".to_vec(), b"k\xff".to_vec(), b";".to_vec(), vec![]]
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn empty_argument_starts_the_command() {
    assert_eq!(run(&["", "x"]).command, [b"".to_vec(), b"x".to_vec()]);
}

// ---- help and version -------------------------------------------------------------------------

#[test]
fn help_anywhere_among_options() {
    assert_eq!(parse(os(&["--help"])), Ok(Invocation::Help));
    assert_eq!(
        parse(os(&["-c", "5", "--help", "-q"])),
        Ok(Invocation::Help)
    );
    // Ends parsing: what follows is not looked at, nor are deferred checks.
    assert_eq!(parse(os(&["--help", "-z"])), Ok(Invocation::Help));
    assert_eq!(parse(os(&["--cluster", "--help"])), Ok(Invocation::Help));
    assert_eq!(
        parse(os(&["-n", "1", "--duration", "1", "--help"])),
        Ok(Invocation::Help)
    );
}

#[test]
fn version_short_and_long() {
    assert_eq!(parse(os(&["-v"])), Ok(Invocation::Version));
    assert_eq!(parse(os(&["--version"])), Ok(Invocation::Version));
    assert_eq!(
        parse(os(&["-q", "--version", "-n", "x"])),
        Ok(Invocation::Version)
    );
}

#[test]
fn error_before_help_wins() {
    assert_eq!(err(&["-z", "--help"]), "invalid option \"-z\" (see --help)");
}

#[test]
fn help_inside_command_is_not_help() {
    assert_eq!(cmd(&run(&["ping", "--help"])), ["ping", "--help"]);
    assert_eq!(cmd(&run(&["--", "--version"])), ["--version"]);
}

#[test]
fn h_is_host_not_help() {
    assert_eq!(run(&["-h", "--help"]).endpoint, tcp("--help", 6379));
}

#[test]
fn version_text_names_the_crate_version() {
    assert_eq!(
        version_text(),
        format!("respbench {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_text_shape() {
    let help = help_text();
    assert!(help.starts_with("Usage: respbench [OPTIONS] [--] [COMMAND ARGS...]\n"));
    assert!(help.ends_with('\n'));
    for line in help.lines() {
        assert!(line.chars().count() <= 80, "help line too long: {line:?}");
    }
    for example in [
        "respbench -c 20 -P 10 --threads 2 -q",
        "respbench -t set -n 1000000 -r 100000000",
        "respbench -t ping,set,get -n 100000 --csv",
        "respbench -r 10000 -n 10000 eval 'return redis.call(\"ping\")' 0",
        "respbench -r 10000 -n 10000 lpush mylist __rand_int__",
        "respbench -- multi ';' set key:__rand_int__ __data__ ';' \\\n                incr counter ';' exec",
        "__rand_int__",
        "__rand_1st__ .. __rand_9th__",
        "__data__",
    ] {
        assert!(help.contains(example), "help lacks {example:?}");
    }
}

#[test]
fn help_lists_every_option() {
    let help = help_text();
    let words: Vec<&str> = help
        .split(|c: char| c.is_whitespace() || c == ',')
        .collect();
    for name in flags::docs().flat_map(|d| d.names) {
        assert!(words.contains(name), "help lacks {name}");
    }
}

#[test]
fn help_is_in_sections_with_the_usage_and_most_used_options_on_the_first_screen() {
    let help = help_text();
    let headings: Vec<&str> = help
        .lines()
        .filter(|l| l.ends_with(':') && !l.starts_with(' '))
        .collect();
    for heading in [
        "Most used:",
        "Connection:",
        "Load shape:",
        "Workload and keys:",
        "Output and records:",
        "Failures and failover:",
        "Cluster and sharded runs:",
        "TLS and transport:",
        "Modes (instead of the default tests):",
        "Subcommands (only as the first argument):",
    ] {
        assert!(headings.contains(&heading), "{heading} in {headings:?}");
    }
    // A 24-line terminal shows the usage and every most-used option, one line each.
    let screen: Vec<&str> = help.lines().take(24).collect();
    assert!(screen[0].starts_with("Usage: respbench "));
    for name in help::MOST_USED {
        let line = screen.iter().find(|l| l.starts_with(&format!(" {name} ")));
        let line = line.unwrap_or_else(|| panic!("{name} not on the first screen"));
        // The opening phrase, not a clause cut open: no dangling parenthesis or comma.
        assert_eq!(
            line.matches('(').count(),
            line.matches(')').count(),
            "{line}"
        );
        assert!(!line.ends_with(',') && !line.ends_with(' '), "{line}");
    }
}

#[test]
fn every_described_option_is_in_exactly_one_help_group() {
    let grouped: Vec<&str> = help::GROUPS
        .iter()
        .flat_map(|g| g.members().map(|d| d.names[0]))
        .collect();
    for flag in flags::all().filter(|f| !f.doc.usage.is_empty()) {
        let first = flag.doc.names[0];
        let times = grouped.iter().filter(|n| **n == first).count();
        assert_eq!(times, 1, "{first} is in {times} help groups");
    }
    for name in grouped.iter().chain(help::MOST_USED) {
        let entry = flags::all().find(|f| f.doc.names[0] == *name);
        assert!(
            entry.is_some_and(|f| !f.doc.usage.is_empty()),
            "{name} is not a described option's first spelling"
        );
    }
}

#[test]
fn help_lists_unsupported_options_as_such() {
    let help = help_text();
    // Every option respbench lacks is listed after the options ("Not supported yet:", when
    // there are any, and "Not supported by this build:"), and no other.
    let (_, not_yet) = help.split_once("\nNot supported").unwrap();
    let not_yet = not_yet.split("\n\n").next().unwrap();
    for flag in flags::all() {
        let supported = !matches!(flag.action, Action::NotYet | Action::NotInThisBuild);
        for name in flag.doc.names {
            let listed = not_yet
                .split(|c: char| c.is_whitespace() || c == ',')
                .any(|w| w == *name);
            assert_eq!(listed, !supported, "{name}");
        }
    }
}

#[test]
fn help_states_the_truthful_defaults() {
    let help = help_text();
    assert!(help.contains("decimal places of latency figures (default 3"));
    assert!(help.contains("Number of worker threads (default 1;"));
    assert!(help.contains("Keep going on error replies and count them"));
    assert!(help.contains("scheduled send time"));
}

// ---- errors -----------------------------------------------------------------------------------

#[test]
fn unknown_option() {
    assert_eq!(err(&["-z"]), "invalid option \"-z\" (see --help)");
    assert_eq!(err(&["--nope"]), "invalid option \"--nope\" (see --help)");
    assert_eq!(err(&["--nope=1"]), "invalid option \"--nope\" (see --help)");
    assert_eq!(err(&["-q", "-"]), "invalid option \"-\" (see --help)");
}

#[test]
fn unknown_option_after_double_dash_is_command() {
    assert_eq!(cmd(&run(&["--", "-z"])), ["-z"]);
}

#[test]
fn options_are_case_sensitive_and_not_abbreviated() {
    assert_eq!(err(&["--CSV"]), "invalid option \"--CSV\" (see --help)");
    assert_eq!(
        err(&["--thread", "2"]),
        "invalid option \"--thread\" (see --help)"
    );
}

#[test]
fn missing_value() {
    assert_eq!(err(&["-n"]), "option -n needs a value");
    assert_eq!(err(&["-q", "--rps"]), "option --rps needs a value");
    assert_eq!(
        err(&["--num-functions"]),
        "option --num-functions needs a value"
    );
    assert_eq!(err(&["--rfr"]), "option --rfr needs a value");
}

#[test]
fn missing_host_hints_at_help() {
    assert_eq!(
        err(&["-h"]),
        "option -h needs a value (-h is the host; help is --help)"
    );
}

#[test]
fn value_given_to_a_flag() {
    assert_eq!(err(&["--csv=1"]), "option --csv takes no value");
    assert_eq!(err(&["-q=1"]), "option -q takes no value");
}

#[test]
fn bad_number_names_flag_value_and_range() {
    assert_eq!(
        err(&["-n", "abc"]),
        "invalid value \"abc\" for -n: expected a whole number from 1 to 18446744073709551615"
    );
}

#[test]
fn bad_requests() {
    let want = |v: &str| {
        format!(
            "invalid value {v:?} for -n: expected a whole number from 1 to 18446744073709551615"
        )
    };
    for v in ["0", "-1", "+5", "1e6", " 5", "18446744073709551616", ""] {
        assert_eq!(err(&["-n", v]), want(v), "{v:?}");
    }
}

#[test]
fn bad_port() {
    let want =
        |v: &str| format!("invalid value {v:?} for -p: expected a whole number from 0 to 65535");
    assert_eq!(err(&["-p", "65536"]), want("65536"));
    assert_eq!(err(&["-p", "-1"]), want("-1"));
    assert_eq!(err(&["-p", "http"]), want("http"));
}

#[test]
fn bad_clients() {
    let want =
        |v: &str| format!("invalid value {v:?} for -c: expected a whole number from 1 to 1000000");
    assert_eq!(err(&["-c", "0"]), want("0"));
    assert_eq!(err(&["-c", "1000001"]), want("1000001"));
}

#[test]
fn bad_duration() {
    let want = |v: &str| {
        format!(
            "invalid value {v:?} for --duration: expected a number of seconds above 0 and at most 10000000, e.g. 30 or 0.5"
        )
    };
    for v in [
        "0",
        "0.0",
        "-1",
        "abc",
        ".",
        "",
        "1.2.3",
        "1e3",
        "10000000.1",
        "inf",
        "99999999999999999999999",
    ] {
        assert_eq!(err(&["--duration", v]), want(v), "{v:?}");
    }
}

#[test]
fn bad_warmup() {
    assert_eq!(
        err(&["--warmup", "0"]),
        "invalid value \"0\" for --warmup: expected a number of seconds above 0 and at most 10000000, e.g. 30 or 0.5"
    );
}

#[test]
fn bad_data_size() {
    let want = |v: &str| {
        format!("invalid value {v:?} for -d: expected a whole number from 1 to 1073741824")
    };
    assert_eq!(err(&["-d", "0"]), want("0"));
    assert_eq!(err(&["-d", "1073741825"]), want("1073741825"));
}

#[test]
fn bad_dbnum() {
    assert_eq!(
        err(&["--dbnum", "2147483648"]),
        "invalid value \"2147483648\" for --dbnum: expected a whole number from 0 to 2147483647"
    );
}

#[test]
fn bad_threads() {
    assert_eq!(
        err(&["--threads", "501"]),
        "invalid value \"501\" for --threads: expected a whole number from 0 to 500"
    );
}

#[test]
fn bad_keepalive() {
    let want = |v: &str| {
        format!(
            "invalid value {v:?} for -k: expected a whole number from -9223372036854775808 to 9223372036854775807"
        )
    };
    for v in ["yes", "-", "--1", "9223372036854775808", ""] {
        assert_eq!(err(&["-k", v]), want(v), "{v:?}");
    }
}

#[test]
fn bad_keyspace() {
    let want = |v: &str| {
        format!("invalid value {v:?} for -r: expected a whole number from 0 to 999999999999")
    };
    assert_eq!(err(&["-r", "1000000000000"]), want("1000000000000"));
    assert_eq!(err(&["-r", "-5"]), want("-5"));
}

#[test]
fn bad_pipeline() {
    let want =
        |v: &str| format!("invalid value {v:?} for -P: expected a whole number from 1 to 1000000");
    assert_eq!(err(&["-P", "0"]), want("0"));
    assert_eq!(err(&["-P", "1000001"]), want("1000001"));
}

#[test]
fn bad_precision() {
    assert_eq!(
        err(&["--precision", "7"]),
        "invalid value \"7\" for --precision: expected a whole number from 0 to 6"
    );
}

#[test]
fn bad_seed() {
    assert_eq!(
        err(&["--seed", "-1"]),
        "invalid value \"-1\" for --seed: expected a whole number from 0 to 18446744073709551615"
    );
}

#[test]
fn bad_rps() {
    assert_eq!(
        err(&["--rps", "1.5"]),
        "invalid value \"1.5\" for --rps: expected a whole number from 0 to 18446744073709551615"
    );
}

#[test]
fn bad_num_functions() {
    let want = |v: &str| {
        format!("invalid value {v:?} for --num-functions: expected a whole number from 1 to 100000")
    };
    assert_eq!(err(&["--num-functions", "0"]), want("0"));
    assert_eq!(err(&["--num-functions", "100001"]), want("100001"));
}

#[test]
fn bad_num_keys_in_fcall() {
    assert_eq!(
        err(&["--num-keys-in-fcall", "1000001"]),
        "invalid value \"1000001\" for --num-keys-in-fcall: expected a whole number from 0 to 1000000"
    );
}

#[test]
fn bad_attached_value_names_the_flag() {
    assert_eq!(
        err(&["--rps=x"]),
        "invalid value \"x\" for --rps: expected a whole number from 0 to 18446744073709551615"
    );
}

#[test]
fn empty_host() {
    assert_eq!(
        err(&["-h", ""]),
        "invalid value \"\" for -h: expected a host name or address"
    );
}

#[test]
fn empty_socket() {
    assert_eq!(
        err(&["-s", ""]),
        "invalid value \"\" for -s: expected a socket path"
    );
}

#[test]
fn non_utf8_text_values() {
    let raw = vec![OsString::from("-h"), OsString::from_vec(b"h\xff".to_vec())];
    assert_eq!(
        parse(raw),
        Err(UsageError(
            "invalid value \"h\u{fffd}\" for -h: expected UTF-8 text".into()
        ))
    );
    let raw = vec![OsString::from("-t"), OsString::from_vec(b"\xff".to_vec())];
    assert_eq!(
        parse(raw),
        Err(UsageError(
            "invalid value \"\u{fffd}\" for -t: expected UTF-8 text".into()
        ))
    );
}

#[test]
fn error_messages_are_one_line() {
    let msg = err(&["-n", "a\nb"]);
    assert!(!msg.contains('\n'), "{msg}");
    assert_eq!(
        msg,
        "invalid value \"a\\nb\" for -n: expected a whole number from 1 to 18446744073709551615"
    );
}

#[test]
fn requests_and_duration_conflict() {
    let want = "options -n and --duration are mutually exclusive";
    assert_eq!(err(&["-n", "10", "--duration", "5"]), want);
    assert_eq!(err(&["--duration", "5", "-n", "10"]), want);
}

#[test]
fn duration_alone_keeps_default_requests() {
    let a = run(&["--duration", "5"]);
    assert_eq!(a.duration, Some(Duration::from_secs(5)));
    assert_eq!(a.requests, 100_000);
}

#[test]
fn user_needs_password() {
    let needs = "--user needs a password (-a, or the REDISCLI_AUTH environment variable)";
    assert_eq!(err(&["--user", "alice"]), needs);
    assert_eq!(err(&["--user", "alice", "-u", "redis://h"]), needs);
}

#[test]
fn password_from_the_environment_when_the_line_gives_none() {
    let with_env =
        |args: &[&str], env: &str| match super::parse_with_env(os(args), Some(env.into())) {
            Ok(Invocation::Run(a)) => *a,
            other => panic!("{args:?}: expected Run, got {other:?}"),
        };
    let a = with_env(&["--user", "alice"], "envpw");
    assert_eq!(
        (a.user, a.password),
        (Some(b"alice".to_vec()), Some(b"envpw".to_vec()))
    );
    // -a and a URI's password win over the environment.
    assert_eq!(
        with_env(&["-a", "cli"], "envpw").password,
        Some(b"cli".to_vec())
    );
    assert_eq!(
        with_env(&["-u", "redis://:uri@h"], "envpw").password,
        Some(b"uri".to_vec())
    );
    // An empty variable is no password.
    assert_eq!(with_env(&[], "").password, None);
    assert_eq!(run(&[]).password, None);
}

#[test]
fn uri_errors_propagate() {
    assert_eq!(
        err(&["-u", "mysql://h"]),
        "invalid URI for -u: unknown scheme \"mysql\" (expected redis://, valkey://, rediss:// or valkeys://)"
    );
}

#[test]
fn uri_db_out_of_range() {
    assert_eq!(
        err(&["-u", "redis://h/99999999999"]),
        "invalid value \"99999999999\" for the -u db: expected a whole number from 0 to 2147483647"
    );
}

// ---- unsupported options ----------------------------------------------------------------------

fn unsupported(args: &[&str], want: &str) {
    assert_eq!(err(args), want, "{args:?}");
}

#[test]
fn cluster_and_rfr() {
    let a = run(&["--cluster", "--rfr", "all", "-q"]);
    assert!(a.cluster && a.quiet);
    assert_eq!(a.rfr, crate::cli::ReadFromReplicas::All);
    assert_eq!(
        run(&["--rfr", "yes"]).rfr,
        crate::cli::ReadFromReplicas::Yes
    );
}

#[test]
fn rfr_values() {
    assert_eq!(
        err(&["--rfr", "maybe"]),
        "invalid value \"maybe\" for --rfr: expected no, yes or all"
    );
    // `--rfr no` is the default and needs nothing unbuilt.
    assert_eq!(run(&["--rfr", "no"]).rfr, crate::cli::ReadFromReplicas::No);
}

#[test]
fn enable_tracking() {
    assert!(run(&["--enable-tracking"]).enable_tracking);
    assert!(!run(&[]).enable_tracking);
}

// ---- TLS and MPTCP ---------------------------------------------------------------------------

#[test]
fn tls_options_parse() {
    let a = run(&[
        "--tls",
        "--sni",
        "redis.test",
        "--cacert",
        "ca.pem",
        "--cacertdir",
        "/etc/ssl/certs",
        "--insecure",
        "--tls-verify-name",
        "--cert",
        "c.pem",
        "--key",
        "k.pem",
        "--tls-ciphers",
        "HIGH:!aNULL",
        "--tls-ciphersuites",
        "TLS_AES_128_GCM_SHA256",
        "--mptcp",
    ]);
    assert_eq!(
        a.tls,
        TlsArgs {
            enabled: true,
            sni: Some("redis.test".into()),
            cacert: Some("ca.pem".into()),
            cacertdir: Some("/etc/ssl/certs".into()),
            insecure: true,
            verify_name: true,
            cert: Some("c.pem".into()),
            key: Some("k.pem".into()),
            ciphers: Some("HIGH:!aNULL".into()),
            ciphersuites: Some("TLS_AES_128_GCM_SHA256".into()),
            resume: false,
        }
    );
    assert!(a.mptcp);
    assert_eq!(Args::default().tls, TlsArgs::default());
    assert!(!Args::default().mptcp);
}

#[test]
fn tls_uri_schemes_turn_tls_on() {
    for uri in ["rediss://h:6380", "valkeys://h:6380", "REDISS://h:6380"] {
        let a = run(&["-u", uri]);
        assert!(a.tls.enabled, "{uri}");
        assert_eq!(a.endpoint, tcp("h", 6380));
    }
    assert!(!run(&["-u", "redis://h"]).tls.enabled);
}

#[test]
fn cert_and_key_go_together() {
    assert_eq!(
        err(&["--tls", "--cert", "c.pem"]),
        "--cert needs --key (the private key of the client certificate)"
    );
    assert_eq!(
        err(&["--tls", "--key", "k.pem"]),
        "--key needs --cert (the client certificate it belongs to)"
    );
}

#[test]
fn tls_and_mptcp_need_tcp() {
    assert_eq!(
        err(&["--tls", "-s", "/tmp/redis.sock"]),
        "--tls works over TCP only (-h/-p or -u), not with a unix socket (-s)"
    );
    assert_eq!(
        err(&["-u", "rediss://h", "-s", "/tmp/redis.sock"]),
        "--tls works over TCP only (-h/-p or -u), not with a unix socket (-s)"
    );
    assert_eq!(
        err(&["-s", "/tmp/redis.sock", "--mptcp"]),
        "--mptcp works over TCP only, not with a unix socket (-s)"
    );
}

#[test]
fn sni_value_starting_with_dash_is_consumed() {
    // "-z" is --sni's value, not an unknown option.
    assert_eq!(run(&["--sni", "-z"]).tls.sni.as_deref(), Some("-z"));
}

#[test]
fn unsupported_rdma() {
    unsupported(&["--rdma"], "--rdma is not supported by this build");
}

#[test]
fn dataset_and_maxdocs() {
    let a = run(&["--dataset", "d.csv", "--maxdocs", "10", "-q"]);
    assert_eq!(a.dataset, Some(PathBuf::from("d.csv")));
    assert_eq!(a.maxdocs, Some(10));
    // The reference's <= 0 means no limit.
    assert_eq!(run(&["--maxdocs", "0"]).maxdocs, None);
    assert_eq!(run(&["--maxdocs", "-5"]).maxdocs, None);
    assert_eq!(
        err(&["--dataset", ""]),
        "invalid value \"\" for --dataset: expected a dataset file"
    );
    assert!(err(&["--maxdocs", "ten"]).starts_with("invalid value \"ten\" for --maxdocs"));
}

#[test]
fn fuzz_mode_unknown_is_the_reference_message() {
    assert_eq!(
        err(&["--fuzz", "--fuzz-mode", "aggressive"]),
        "Invalid fuzz mode: aggressive"
    );
}

#[test]
fn fuzz_own_options_need_fuzz() {
    assert_eq!(err(&["--fuzz-log", "d"]), "--fuzz-log needs --fuzz");
    assert_eq!(
        err(&["--fuzz-restart", "true"]),
        "--fuzz-restart needs --fuzz"
    );
    assert!(err(&["--fuzz", "--fuzz-loglevel", "loud"]).contains("--fuzz-loglevel"));
    assert_eq!(
        err(&["--fuzz", "--duration", "3"]),
        "--fuzz sends -n commands in all; --duration does not apply"
    );
}

#[test]
fn first_unsupported_flag_is_reported() {
    unsupported(
        &["--tls", "--rdma", "--mptcp"],
        "--rdma is not supported by this build",
    );
}

#[test]
fn unsupported_reported_before_conflicts() {
    unsupported(
        &["-n", "1", "--duration", "1", "--rdma"],
        "--rdma is not supported by this build",
    );
}

#[test]
fn parse_errors_still_reported_after_unsupported() {
    assert_eq!(
        err(&["--cluster", "-z"]),
        "invalid option \"-z\" (see --help)"
    );
}

/// Each entry's own test: its example parses and changes what the defaults would give (so the
/// entry's setter does something), help and version stop parsing, and an unsupported option is
/// refused by its name. Every spelling of an entry is tried.
#[test]
fn every_table_entry_parses() {
    let defaults = run(&[]);
    for flag in flags::all() {
        for name in flag.doc.names {
            let example: Vec<&str> = flag
                .doc
                .example
                .iter()
                .map(|a| if *a == flag.doc.names[0] { *name } else { *a })
                .collect();
            let argv = if example.is_empty() {
                let mut argv = vec![*name];
                if flag.doc.value.taken() {
                    argv.push("1");
                }
                argv
            } else {
                example
            };
            let result = parse(argv.iter().map(OsString::from));
            match flag.action {
                Action::Help => assert_eq!(result, Ok(Invocation::Help)),
                Action::Version => assert_eq!(result, Ok(Invocation::Version)),
                Action::NotYet | Action::NotInThisBuild => {
                    assert!(result.unwrap_err().0.starts_with(name), "{name}");
                }
                Action::Set(_) => match result {
                    Ok(Invocation::Run(args)) => assert_ne!(*args, defaults, "{argv:?}"),
                    other => panic!("{argv:?}: {other:?}"),
                },
            }
        }
    }
}

#[test]
fn help_is_the_golden_text() {
    assert_eq!(help_text(), include_str!("help.golden"));
}

#[test]
fn the_table_marks_every_option_that_can_carry_a_secret() {
    let secret: Vec<(&str, SecretValue)> = flags::docs()
        .filter_map(|d| d.secret.map(|k| d.names.iter().map(move |n| (*n, k))))
        .flatten()
        .collect();
    assert_eq!(
        secret,
        [
            ("-a", SecretValue::Password),
            ("-u", SecretValue::Uri),
            ("--fuzz-restart", SecretValue::Shell),
            ("--sentinel-password", SecretValue::Password),
            ("--command", SecretValue::Command),
        ]
    );
    assert_eq!(secret_value("-a"), Some(SecretValue::Password));
    assert_eq!(secret_value("-q"), None);
    assert_eq!(secret_value("--nope"), None);
}

// ---- the record (--json, --no-server-stats) ---------------------------------------------------

#[test]
fn flag_json() {
    assert_eq!(Args::default().json, None);
    assert_eq!(
        run(&["--json", "run.json"]).json,
        Some(PathBuf::from("run.json"))
    );
    // `-` is stdout; it is a value, not an option.
    assert_eq!(run(&["--json", "-", "-q"]).json, Some(PathBuf::from("-")));
    assert!(run(&["--json", "-", "-q"]).quiet);
    assert_eq!(
        err(&["--json", ""]),
        "invalid value \"\" for --json: expected a file path, or - for stdout"
    );
    assert_eq!(err(&["--json"]), "option --json needs a value");
}

#[test]
fn flag_no_server_stats() {
    assert!(!Args::default().no_server_stats);
    assert!(run(&["--no-server-stats"]).no_server_stats);
    assert_eq!(
        err(&["--no-server-stats=1"]),
        "option --no-server-stats takes no value"
    );
}

#[test]
fn takes_value_follows_the_table() {
    assert_eq!(takes_value("-a"), Some(true));
    assert_eq!(takes_value("--json"), Some(true));
    assert_eq!(takes_value("-q"), Some(false));
    assert_eq!(takes_value("--no-server-stats"), Some(false));
    assert_eq!(takes_value("--nope"), None);
}

// ---- sharded runs (--shard, --shards, --start-at) ----------------------------------------------

#[test]
fn flags_of_sharded_runs() {
    let a = run(&[
        "--shard",
        "2/4",
        "--shards",
        "4",
        "--start-at",
        "1767225600",
    ]);
    assert_eq!(a.shard, Some((2, 4)));
    assert_eq!(a.shards, Some(4));
    assert_eq!(a.start_at.as_deref(), Some("1767225600"));
    for bad in ["3/2", "0/0"] {
        let e = err(&["--shard", bad]);
        assert!(e.starts_with(&format!("--shard \"{bad}\"")), "{e}");
    }
    assert!(err(&["--shards", "0"]).contains("for --shards"));
}

// ---- --find-max --------------------------------------------------------------------------------

#[test]
fn find_max_and_its_step_duration() {
    let a = run(&[
        "--find-max",
        "p99<1ms",
        "--step-duration",
        "0.5",
        "-t",
        "get",
    ]);
    assert_eq!(a.find_max.as_deref(), Some("p99<1ms"));
    assert_eq!(a.step_duration, Some(Duration::from_millis(500)));
    assert_eq!(
        err(&["--step-duration", "2"]),
        "--step-duration needs --find-max (it is the length of each search step)"
    );
    assert!(err(&["--find-max", "p99<1ms", "--step-duration", "0"]).contains("--step-duration"));
    assert!(err(&["--find-max", "p99<1ms", "-n", "1000"]).contains("-n does not apply"));
}

#[test]
fn a_path_option_followed_by_another_option_is_refused() {
    assert_eq!(
        err(&["--json", "-q"]),
        "--json needs a file path, or - for stdout, not the option -q (for a file of that name, \
         write ./-q)"
    );
    assert!(err(&["--html", "--json", "x.json"]).contains("not the option --json"));
    assert!(err(&["--cacert", "--tls"]).contains("not the option --tls"));
    // `-` (stdout) and file names that merely start with a dash are paths.
    assert_eq!(run(&["--json", "-"]).json, Some("-".into()));
    assert_eq!(run(&["--json", "-out.json"]).json, Some("-out.json".into()));
}

#[test]
fn bracketed_ipv6_host_loses_its_brackets() {
    assert_eq!(run(&["-h", "[::1]"]).endpoint, tcp("::1", 6379));
    assert_eq!(
        run(&["-h", "[fe80::1]", "-p", "7000"]).endpoint,
        tcp("fe80::1", 7000)
    );
    assert_eq!(run(&["-h", "::1"]).endpoint, tcp("::1", 6379));
    for bad in ["[::1]:6379", "[::1", "[]", "[db.example]", "[[::1]]"] {
        let e = err(&["-h", bad]);
        assert!(
            e.starts_with(&format!("invalid value {bad:?} for -h")),
            "{e}"
        );
        assert!(e.contains("the port is -p"), "{e}");
    }
}

#[test]
fn a_test_list_without_names_is_refused() {
    for list in ["", ",", ",,"] {
        let e = err(&["-t", list]);
        assert!(
            e.starts_with(&format!("invalid value {list:?} for -t")),
            "{e}"
        );
    }
    assert_eq!(run(&["-t", "set,,get"]).tests.as_deref(), Some("set,,get"));
}

#[test]
fn run_outputs_follow_the_output_rule() {
    let e = err(&["--html", "-"]);
    assert!(e.starts_with("--html needs a file"), "{e}");
    let e = err(&["--json", "r.out", "--html", "./r.out"]);
    assert!(e.starts_with("--json and --html both name"), "{e}");
    let e = err(&[
        "--dataset",
        "docs.csv",
        "--json",
        "docs.csv",
        "get",
        "__field:a__",
    ]);
    assert!(
        e.starts_with("--json docs.csv is the --dataset file"),
        "{e}"
    );
    let e = err(&["--cacert", "ca.pem", "--tls", "--html", "ca.pem"]);
    assert!(e.contains("is the --cacert file"), "{e}");
    let a = run(&["--json", "-", "--html", "r.html"]);
    assert_eq!(a.html, Some(PathBuf::from("r.html")));
}
