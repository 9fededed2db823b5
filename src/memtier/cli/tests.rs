use std::ffi::OsString;

use super::*;
use crate::cli::{Endpoint, KeyDist};

/// The line parsed (a test of `conn_tests.rs` too).
pub(super) fn run(argv: &[&str]) -> (Args, MemtierOptions) {
    match parse(argv.iter().map(OsString::from), None) {
        Ok(MemtierInvocation::Run(a, o)) => (*a, *o),
        Ok(_) => panic!("help or version from {argv:?}"),
        Err(e) => panic!("{argv:?}: {}", e.0),
    }
}

/// The line's one-line refusal.
pub(super) fn err(argv: &[&str]) -> String {
    match parse(argv.iter().map(OsString::from), None) {
        Err(e) => e.0,
        Ok(_) => panic!("{argv:?} parsed"),
    }
}

#[test]
fn every_example_parses() {
    for part in TABLE {
        for f in part.iter() {
            if !f.doc.example.is_empty() {
                run(f.doc.example);
            }
        }
    }
}

#[test]
fn memtier_defaults_multiply_out() {
    let (a, o) = run(&[]);
    assert_eq!(a.clients, 200, "-c 50 per thread × -t 4");
    assert_eq!(a.threads, Some(4));
    assert_eq!(a.requests, 200 * 10_000, "-n is per client");
    assert_eq!(a.data_size, 32);
    assert_eq!(a.workload.ratio, Some((1, 10)));
    assert_eq!(a.workload.key_prefix.as_deref(), Some(&b"memtier-"[..]));
    assert_eq!(a.workload.key_maximum, Some(10_000_000));
    assert_eq!(o.run_count, 1);
    assert_eq!(
        a.seed,
        Some(defaults::SEED),
        "a constant seed unless --randomize"
    );
    assert_eq!(o.print_percentiles, vec![50.0, 99.0, 99.9]);
}

#[test]
fn the_azure_line_translates() {
    let line = "-h cache.example -p 10000 -a secretkey --hide-histogram --pipeline=10 -c 50 -t 6 \
                -d 1024 --key-maximum=1000 --key-pattern=P:P --ratio=0:1 --distinct-client-seed \
                --randomize --test-time=600 --json-out-file=test_results.json --tls \
                --tls-skip-verify";
    let argv: Vec<&str> = line.split_whitespace().collect();
    let (a, o) = run(&argv);
    assert_eq!(
        a.endpoint,
        Endpoint::Tcp {
            host: "cache.example".into(),
            port: 10000
        }
    );
    assert_eq!(a.password.as_deref(), Some(&b"secretkey"[..]));
    assert_eq!(a.user, None);
    assert_eq!(a.pipeline, 10);
    assert_eq!(a.clients, 300);
    assert_eq!(a.data_size, 1024);
    assert_eq!(a.workload.ratio, Some((0, 1)));
    assert_eq!(a.workload.key_dist, Some(KeyDist::Parallel));
    assert_eq!(a.duration, Some(std::time::Duration::from_secs(600)));
    assert!(a.tls.enabled && a.tls.insecure);
    assert!(a.seed.is_some(), "--randomize draws a seed");
    assert!(o.hide_histogram);
    assert_eq!(
        o.json_out_file.as_deref(),
        Some(std::path::Path::new("test_results.json"))
    );
}

#[test]
fn user_and_password_split_at_the_first_colon() {
    let (a, _) = run(&["-a", "alice:pw:with:colons"]);
    assert_eq!(a.user.as_deref(), Some(&b"alice"[..]));
    assert_eq!(a.password.as_deref(), Some(&b"pw:with:colons"[..]));
}

#[test]
fn allkeys_walks_the_range_once() {
    let (a, _) = run(&[
        "-n",
        "allkeys",
        "--key-pattern=P:P",
        "--key-minimum=1",
        "--key-maximum=500",
        "--ratio=1:0",
    ]);
    assert_eq!(a.requests, 500);
    assert_eq!(a.workload.key_dist, Some(KeyDist::Sequential));
}

#[test]
fn rate_limiting_is_per_connection() {
    let (a, _) = run(&["-c", "2", "-t", "3", "--rate-limiting", "100"]);
    assert_eq!(a.rps, Some(600));
}

#[test]
fn memtier_letters_mean_memtiers_things() {
    let (a, _) = run(&["-S", "/tmp/v.sock", "-P", "resp3", "--select-db", "3"]);
    assert_eq!(a.endpoint, Endpoint::Unix("/tmp/v.sock".into()));
    assert!(a.resp3);
    assert_eq!(a.dbnum, 3);
    let (a, o) = run(&[
        "--run-count=3",
        "--command=GET __key__",
        "-n",
        "7",
        "-c",
        "1",
        "-t",
        "1",
    ]);
    assert_eq!(a.repeat, 3);
    assert_eq!(o.run_count, 3);
    assert_eq!(a.requests, 7);
    assert_eq!(
        a.workload.ratio, None,
        "--command replaces the default SET:GET mix"
    );
}

#[test]
fn refusals_are_one_line_naming_the_option() {
    let e = err(&["--protocol", "memcache_text"]);
    assert!(
        e.starts_with("--protocol is not supported") && e.contains("memcache"),
        "{e}"
    );
    let e = err(&["--tls-protocols=TLSv1.1"]);
    assert!(e.starts_with("--tls-protocols is not supported"), "{e}");
    let e = err(&["--no-such"]);
    assert!(e.contains("--no-such"), "{e}");
    let e = err(&["GET", "x"]);
    assert!(e.contains("--command"), "{e}");
    assert!(!err(&["-c", "0"]).is_empty());
}

#[test]
fn help_lists_every_section_and_the_table_knows_secrets() {
    let h = help_text();
    for s in table::SECTIONS {
        assert!(h.contains(s), "{s}");
    }
    assert!(h.contains("--json-out-file=FILE"));
    assert_eq!(
        secret_value("--authenticate"),
        Some(crate::cli::SecretValue::Password)
    );
    assert_eq!(secret_value("--uri"), Some(crate::cli::SecretValue::Uri));
    assert_eq!(takes_value("--hide-histogram"), Some(false));
    assert_eq!(takes_value("-c"), Some(true));
}

#[test]
fn import_options_follow_memtiers_rules() {
    for (args, says) in [
        (
            &["--data-verify"][..],
            "--data-verify needs --data-import FILE",
        ),
        (
            &["--verify-only"][..],
            "--verify-only needs --data-import FILE",
        ),
        (
            &["--generate-keys"][..],
            "--generate-keys needs --data-import FILE",
        ),
        (&["--no-expiry"][..], "--no-expiry needs --data-import FILE"),
        (&["--data-import=d.csv", "-d", "8"][..], "no -d"),
        (
            &["--data-import=d.csv", "--data-size-range=1-9"][..],
            "no -d",
        ),
        (&["--data-import=d.csv", "-R"][..], "no --random-data"),
        (
            &["--data-import=d.csv", "--cluster-mode"][..],
            "--cluster-mode",
        ),
        (
            &["--data-import=d.csv", "--command=GET __key__"][..],
            "not --command",
        ),
        (
            &["--data-import=d.csv", "--key-maximum=9"][..],
            "need --generate-keys",
        ),
        (
            &["--data-import=d.csv", "--key-prefix=k"][..],
            "need --generate-keys",
        ),
    ] {
        let e = err(args);
        assert!(e.contains(says) && !e.contains('\n'), "{args:?}: {e}");
    }
    // The file's keys: SETs walk the items in order, GETs keep their pattern; the plan sets
    // the range.
    let (a, _) = run(&["--data-import=d.csv", "--data-verify", "--key-pattern=R:G"]);
    let imp = a.workload.memtier.as_ref().unwrap().import.clone().unwrap();
    assert_eq!(imp.path, std::path::PathBuf::from("d.csv"));
    assert!(imp.verify && !imp.verify_only && !imp.generate_keys && !imp.all_items);
    assert_eq!(a.workload.key_dist, Some(KeyDist::Sequential));
    assert_eq!(a.workload.get_key_dist, Some(KeyDist::Gaussian));
    assert_eq!(
        (a.workload.key_maximum, a.workload.key_prefix),
        (None, None)
    );
    let (a, _) = run(&["--data-import=d.csv", "--verify-only", "-n", "allkeys"]);
    let imp = a.workload.memtier.as_ref().unwrap().import.clone().unwrap();
    assert!(imp.verify && imp.verify_only && imp.all_items);
    // --generate-keys: memtier's keys, the key options allowed.
    let (a, _) = run(&[
        "--data-import=d.csv",
        "--generate-keys",
        "--no-expiry",
        "--key-maximum=99",
        "--key-pattern=R:R",
    ]);
    let imp = a.workload.memtier.as_ref().unwrap().import.clone().unwrap();
    assert!(imp.generate_keys && imp.no_expiry);
    assert_eq!(a.workload.key_maximum, Some(99));
    assert_eq!(a.workload.key_prefix.as_deref(), Some(&b"memtier-"[..]));
    assert_eq!(a.workload.key_dist, Some(KeyDist::Uniform));
}

#[test]
fn statsd_options_take_memtiers_defaults_and_need_a_host() {
    let (a, _) = run(&["--statsd-host=127.0.0.1", "--print-percentiles=50,99.99"]);
    let s = a.statsd.unwrap();
    assert_eq!(
        (s.host.as_str(), s.port, s.prefix.as_str(), s.label.as_str()),
        ("127.0.0.1", 8125, "memtier", "default")
    );
    assert_eq!(s.graphite_port, 8080);
    assert_eq!(s.percentiles, [50.0, 99.99]);
    let (a, _) = run(&[
        "--statsd-host=stats.example",
        "--statsd-port=9125",
        "--statsd-prefix=team.bench",
        "--statsd-run-label=after upgrade/7.2",
        "--graphite-port=80",
    ]);
    let s = a.statsd.unwrap();
    assert_eq!((s.port, s.graphite_port), (9125, 80));
    assert_eq!(s.prefix, "team.bench");
    assert_eq!(s.label, "after_upgrade_7_2", "sanitized as memtier's");
    for (args, says) in [
        (
            &["--statsd-port=9125"][..],
            "--statsd-port needs --statsd-host",
        ),
        (
            &["--graphite-port=80"][..],
            "--graphite-port needs --statsd-host",
        ),
        (
            &["--statsd-host=h", "--statsd-prefix=a b"][..],
            "--statsd-prefix",
        ),
        (&["--statsd-host=h", "--statsd-port=0"][..], "--statsd-port"),
    ] {
        let e = err(args);
        assert!(e.contains(says) && !e.contains('\n'), "{args:?}: {e}");
    }
    assert_eq!(run(&[]).0.statsd, None);
}

#[test]
fn scan_iteration_needs_one_scan_command_and_pipeline_one() {
    let scan = "--command=SCAN 0 COUNT 10";
    let on = "--scan-incremental-iteration";
    for (args, says) in [
        (&[on][..], "exactly one --command"),
        (&["--command=GET __key__", on][..], "exactly one --command"),
        (&["--command=SCAN __key__", on][..], "exactly one --command"),
        (&[scan, "--command=SCAN 0", on][..], "exactly one --command"),
        (&[scan, "--pipeline=2", on][..], "--pipeline 1"),
        (&[scan, "--cluster-mode", on][..], "--cluster-mode"),
        (
            &[scan, "--scan-incremental-max-iterations=3"][..],
            "needs --scan-incremental-iteration",
        ),
    ] {
        let e = err(args);
        assert!(e.contains(says) && !e.contains('\n'), "{args:?}: {e}");
    }
    let (a, _) = run(&[scan, on, "--scan-incremental-max-iterations=3"]);
    let d = a.workload.memtier.unwrap();
    assert!(d.scan_incremental);
    assert_eq!(d.scan_max_iterations, 3);
}

#[test]
fn data_options_set_memtiers_data() {
    let (a, _) = run(&[
        "-R",
        "--expiry-range=5-9",
        "--data-offset=3",
        "--multi-key-get=4",
        "--data-size-range=10-20",
        "--data-size-pattern=S",
    ]);
    let d = a.workload.memtier.clone().expect("memtier data");
    assert!(d.random_data && d.size_pattern_s);
    assert_eq!(
        (d.expiry, d.data_offset, d.multi_key_get),
        (Some((5, 9)), 3, 4)
    );
    let e = err(&["--data-size-pattern=S"]);
    assert!(e.contains("--data-size-range"), "{e}");
    assert!(err(&["--expiry-range=9-3"]).contains("--expiry-range"));
}
