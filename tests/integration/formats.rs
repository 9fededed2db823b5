//! Output shapes against a real server ("golden-ish": the numbers vary, the layout does not).

use crate::harness::{SUITE_TITLES, Server, ServerOptions, is_decimal, quoted_csv_fields};

/// Checks a `-q` line: `<title>: <rps .2> requests per second, p50=<ms .precision> msec`.
#[track_caller]
fn assert_quiet_line(line: &str, title: &str, precision: usize) {
    let rest = line
        .strip_prefix(title)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or_else(|| panic!("{line:?} does not start with {title:?}"));
    let (rps, rest) = rest
        .split_once(" requests per second, p50=")
        .unwrap_or_else(|| panic!("bad -q line {line:?}"));
    let p50 = rest
        .strip_suffix(" msec")
        .unwrap_or_else(|| panic!("bad -q line {line:?}"));
    assert!(is_decimal(rps, 2), "rps {rps:?} in {line:?}");
    assert!(is_decimal(p50, precision), "p50 {p50:?} in {line:?}");
}

/// Checks a CSV data row and returns its title.
#[track_caller]
fn assert_csv_row(line: &str, precision: usize) -> String {
    let fields = quoted_csv_fields(line).unwrap_or_else(|| panic!("not quoted CSV: {line:?}"));
    assert_eq!(fields.len(), 8, "{line:?}");
    assert!(is_decimal(&fields[1], 2), "rps in {line:?}");
    for f in &fields[2..] {
        assert!(is_decimal(f, precision), "latency {f:?} in {line:?}");
    }
    fields[0].clone()
}

/// `needles` occur in `text` in this order.
#[track_caller]
fn assert_in_order(text: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match text[from..].find(needle) {
            Some(i) => from += i + needle.len(),
            None => panic!("{needle:?} missing (or out of order) in:\n{text}"),
        }
    }
}

const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\
                          \"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

#[test]
fn default_suite_runs_cleanly_in_quiet_mode() {
    let server = Server::start();
    let out = server.bench(&["-n", "2000", "-q"]);
    out.assert_success().assert_no_progress_line();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 24, "{}", out.stdout);
    for (line, title) in lines.iter().zip(SUITE_TITLES) {
        assert_quiet_line(line, title, 3);
    }
    assert!(out.stdout.ends_with("\n\n"), "a blank line ends the pass");
    // The suite really ran on the server (spot checks across it).
    let mut c = server.client();
    for cmd in [
        "set", "get", "incr", "lpush", "lrange", "mset", "mget", "xadd", "fcall",
    ] {
        assert!(c.calls(cmd) >= 2000, "{cmd}: {} calls", c.calls(cmd));
    }
    assert_eq!(c.calls("lpush"), 4000, "LPUSH and the LRANGE prep");
    assert_eq!(c.calls("lrange"), 4 * 2000);
}

#[test]
fn default_suite_csv_has_header_and_24_rows() {
    let server = Server::start();
    let out = server.bench(&["-n", "1000", "--csv"]);
    out.assert_success().assert_no_progress_line();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        25,
        "header + 24 rows, no blank line:\n{}",
        out.stdout
    );
    assert_eq!(lines[0], CSV_HEADER);
    for (line, title) in lines[1..].iter().zip(SUITE_TITLES) {
        assert_eq!(assert_csv_row(line, 3), title);
    }
}

#[test]
fn full_report_has_the_reference_layout() {
    let server = Server::start();
    let out = server.bench(&["-n", "1000", "-t", "set"]);
    out.assert_success().assert_no_progress_line();
    let s = &out.stdout;
    assert!(s.starts_with("====== SET ======\n"), "{s}");
    assert_in_order(
        s,
        &[
            "====== SET ======\n",
            "  1000 requests completed in ",
            " seconds\n  50 parallel clients\n",
            "  3 bytes payload\n",
            "  keep alive: 1\n",
            // The server's real configuration: started with --save '' --appendonly no.
            "  host configuration \"save\": \n",
            "  host configuration \"appendonly\": no\n",
            "  multi-thread: no\n",
            "\nLatency by percentile distribution:\n",
            "\nCumulative distribution of latencies:\n",
            "\nSummary:\n",
            "  throughput summary: ",
            " requests per second\n",
            "  latency summary (msec):\n",
            "          avg       min       p50       p95       p99       max\n",
        ],
    );
    assert!(!s.contains("threads:"), "no threads line without --threads");

    // Distribution lines: "<pct .3>% <= <ms .3> milliseconds (cumulative count <n>)".
    let dist: Vec<&str> = s.lines().filter(|l| l.contains("% <= ")).collect();
    assert!(dist.len() >= 4, "{s}");
    for line in &dist {
        let (pct, rest) = line.split_once("% <= ").unwrap();
        let (ms, rest) = rest.split_once(" milliseconds (cumulative count ").unwrap();
        let count = rest.strip_suffix(')').unwrap_or_else(|| panic!("{line:?}"));
        assert!(is_decimal(pct, 3) && is_decimal(ms, 3), "{line:?}");
        assert!(count.parse::<u64>().is_ok_and(|n| n <= 1000), "{line:?}");
    }
    assert!(
        dist.iter()
            .any(|l| l.starts_with("100.000% <= ") && l.ends_with("(cumulative count 1000)")),
        "both distributions end at 100% of the 1000 requests:\n{s}"
    );

    // The six figures under the summary header.
    let figures = s
        .lines()
        .skip_while(|l| !l.starts_with("  latency summary (msec):"))
        .nth(2)
        .unwrap_or_else(|| panic!("no figures line:\n{s}"));
    let values: Vec<&str> = figures.split_whitespace().collect();
    assert_eq!(values.len(), 6, "{figures:?}");
    assert!(values.iter().all(|v| is_decimal(v, 3)), "{figures:?}");
    assert!(figures.starts_with("    "), "{figures:?}");
    assert!(out.throughput() > 0.0);
}

#[test]
fn full_report_shows_threads() {
    let server = Server::start();
    let out = server.bench(&["-n", "1000", "-t", "set", "--threads", "2"]);
    out.assert_success();
    assert_in_order(
        &out.stdout,
        &[
            "====== SET ======\n",
            "  multi-thread: yes\n  threads: 2\n",
            "\nSummary:\n",
        ],
    );
}

#[test]
fn quiet_line_shape_and_precision() {
    let server = Server::start();
    let out = server.bench(&["-n", "1000", "-t", "set", "-q"]);
    out.assert_success();
    assert_quiet_line(out.stdout.lines().next().unwrap(), "SET", 3);
    assert_eq!(out.stdout.lines().filter(|l| !l.is_empty()).count(), 1);

    let out = server.bench(&["-n", "1000", "-t", "set", "-q", "--precision", "1"]);
    out.assert_success();
    assert_quiet_line(out.stdout.lines().next().unwrap(), "SET", 1);

    let out = server.bench(&["-n", "1000", "-t", "set", "--csv", "--precision", "5"]);
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert_eq!(assert_csv_row(lines[1], 5), "SET");
}

#[test]
fn custom_command_title_payload_and_csv_escaping() {
    let server = Server::start();
    let args = ["set", "k\"q", "v"];
    let unit_len = resp::encoded_command_len(&args);

    let out = server.bench(&["-n", "100", "set", "k\"q", "v"]);
    out.assert_success();
    out.assert_stdout_contains("====== set k\"q v ======\n");
    out.assert_stdout_contains(&format!("\n  {unit_len} bytes payload\n"));

    let out = server.bench(&["-n", "100", "--csv", "set", "k\"q", "v"]);
    out.assert_success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert_eq!(lines[0], CSV_HEADER);
    assert!(
        lines[1].starts_with("\"set k\"\"q v\",\""),
        "quote doubled: {}",
        lines[1]
    );
    assert_eq!(assert_csv_row(lines[1], 3), "set k\"q v");

    let out = server.bench(&["-n", "100", "-q", "set", "k\"q", "v"]);
    out.assert_success();
    assert_quiet_line(out.stdout.lines().next().unwrap(), "set k\"q v", 3);

    assert_eq!(
        server.client().bulk(&["GET", "k\"q"]).as_deref(),
        Some(&b"v"[..])
    );
}

#[test]
fn unknown_test_names_run_nothing() {
    let server = Server::start();
    let out = server.bench(&["-n", "100", "-t", "nosuchtest", "-q"]);
    out.assert_success();
    assert!(out.stdout.trim().is_empty(), "{:?}", out.stdout);
    out.assert_stderr_contains("nosuchtest");
    assert_eq!(server.client().calls("set"), 0);
}

#[test]
fn host_configuration_lines_show_the_servers_settings() {
    let server = Server::start_with(ServerOptions {
        extra: ["--save", "900 1", "--appendonly", "yes"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    });
    let out = server.bench(&["-n", "100", "-t", "set"]);
    out.assert_success();
    assert_in_order(
        &out.stdout,
        &[
            "  keep alive: 1\n",
            "  host configuration \"save\": 900 1\n",
            "  host configuration \"appendonly\": yes\n",
            "  multi-thread: no\n",
        ],
    );
}

#[test]
fn without_config_access_the_host_configuration_lines_are_left_out() {
    let server = Server::start_with(ServerOptions {
        extra: ["--rename-command", "CONFIG", ""]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    });
    let out = server.bench(&["-n", "100", "-t", "set"]);
    out.assert_success();
    assert_eq!(
        out.single_stderr_line(),
        "WARNING: Could not fetch server CONFIG"
    );
    assert!(!out.stdout.contains("host configuration"), "{}", out.stdout);
    assert_in_order(
        &out.stdout,
        &["  keep alive: 1\n  multi-thread: no\n", "\nSummary:\n"],
    );
    assert_eq!(server.client().calls("set"), 100);
}
