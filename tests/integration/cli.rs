//! Command-line handling that needs no server: usage errors, help, version.

use crate::harness::respbench;

/// Exit 2 and exactly one stderr line starting with `respbench:`; nothing on stdout.
#[track_caller]
fn assert_usage_error(args: &[&str]) -> String {
    let out = respbench(args);
    out.assert_code(2);
    let line = out.single_stderr_line().to_string();
    assert!(line.starts_with("respbench: "), "{args:?}: {line}");
    assert!(out.stdout.is_empty(), "{args:?}: stdout {:?}", out.stdout);
    line
}

#[test]
fn unknown_option_is_a_usage_error() {
    let line = assert_usage_error(&["--nope"]);
    assert!(line.contains("--nope"), "{line}");
}

#[test]
fn bad_values_are_usage_errors() {
    let line = assert_usage_error(&["-n", "abc"]);
    assert!(line.contains("abc") && line.contains("-n"), "{line}");
    assert_usage_error(&["-n", "0"]);
    assert_usage_error(&["-c", "-5"]);
    assert_usage_error(&["-P", "1.5"]);
    assert_usage_error(&["--precision", "7"]);
    assert_usage_error(&["--duration", "0"]);
    assert_usage_error(&["-p"]);
}

#[test]
fn n_and_duration_are_mutually_exclusive() {
    let line = assert_usage_error(&["-n", "5", "--duration", "3"]);
    assert!(line.contains("-n") && line.contains("--duration"), "{line}");
}

#[test]
fn contradicting_options_and_outputs_are_usage_errors() {
    for (args, needle) in [
        (
            &["--json", "r.out", "--html", "r.out"][..],
            "both name r.out",
        ),
        (&["--html", "-"], "--html needs a file"),
        (&["-r", "10", "--key-zipf-exp", "1.1"], "Zipf key pattern"),
        (
            &["-d", "8", "--data-size-list", "8:1"],
            "both set the value size",
        ),
        (&["-t", ""], "for -t"),
        (&["--command", "SET 'a"], "a quote is not closed"),
    ] {
        let line = assert_usage_error(args);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}

#[test]
fn user_without_password_is_a_usage_error() {
    assert_usage_error(&["--user", "bob"]);
}

#[test]
fn unsupported_reference_options_are_refused() {
    let line = assert_usage_error(&["--rdma"]);
    assert!(
        line.contains("--rdma") && line.contains("not supported by this build"),
        "{line}"
    );
}

#[test]
fn help_prints_usage_and_exits_0() {
    let out = respbench(&["--help"]);
    out.assert_success();
    assert!(out.stdout.starts_with("Usage:"), "{}", out.stdout);
    for flag in ["-h <hostname>", "--rps", "--duration", "-x", "--sequential"] {
        out.assert_stdout_contains(flag);
    }
    assert!(out.stderr.is_empty(), "{:?}", out.stderr);
}

#[test]
fn version_prints_name_and_version() {
    let out = respbench(&["--version"]);
    out.assert_success();
    assert!(out.stdout.starts_with("respbench "), "{:?}", out.stdout);
    assert_eq!(
        out.stdout.trim_end(),
        format!("respbench {}", env!("CARGO_PKG_VERSION"))
    );
    let short = respbench(&["-v"]);
    short.assert_success();
    assert_eq!(short.stdout, out.stdout);
}

#[test]
fn completions_and_man_are_subcommands_with_usage_errors_as_exit_2() {
    for (shell, head) in [
        ("bash", "# bash completion for respbench"),
        ("zsh", "#compdef respbench\n"),
        ("fish", "# fish completion for respbench"),
    ] {
        let out = respbench(&["completions", shell]);
        out.assert_success();
        assert!(out.stdout.starts_with(head), "{shell}: {}", out.stdout);
        out.assert_stdout_contains("tls-verify-name");
    }
    let out = respbench(&["man"]);
    out.assert_success();
    assert!(out.stdout.starts_with(".TH RESPBENCH 1 "), "{}", out.stdout);
    out.assert_stdout_contains(&format!("respbench {}", env!("CARGO_PKG_VERSION")));
    for args in [
        &["completions"][..],
        &["completions", "tcsh"],
        &["completions", "bash", "zsh"],
        &["completions", "--nope"],
        &["man", "extra"],
    ] {
        let line = assert_usage_error(args);
        assert!(line.contains("--help"), "{args:?}: {line}");
    }
    respbench(&["completions", "--help"]).assert_success();
    respbench(&["man", "--help"]).assert_success();
}
