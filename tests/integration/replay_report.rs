//! A replay's record in the HTML report and `compare` (issue 25), on Valkey 9.1 and Redis 7.0:
//! `replay --html`, and `respbench report` of its `--json`, both have the replay section (the
//! trace's name, what was skipped, the slip-per-second chart), and `compare` reads two replay
//! records as any runs.

use std::fmt::Write as _;

use super::harness::{Server, TempDir, respbench};

/// A MONITOR-text trace of two clients over 1.2 s: SETs and GETs, and one FLUSHALL (skipped).
fn trace_text() -> String {
    let mut t = String::new();
    for i in 0..40u32 {
        let at = 1_700_000_000.0 + f64::from(i) * 0.03;
        let client = if i % 2 == 0 {
            "127.0.0.1:5001"
        } else {
            "127.0.0.1:5002"
        };
        let _ = writeln!(t, "{at:.6} [0 {client}] \"SET\" \"r:{i}\" \"v\"");
        let _ = writeln!(t, "{at:.6} [0 {client}] \"GET\" \"r:{i}\"");
    }
    t.push_str("1700000001.200000 [0 127.0.0.1:5001] \"FLUSHALL\"\n");
    t
}

fn report_and_compare(server: Server) {
    let dir = TempDir::new();
    let trace = dir.path().join("shop.trace");
    std::fs::write(&trace, trace_text()).unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let port = server.port().to_string();
    let out = respbench(&[
        "replay",
        trace.to_str().unwrap(),
        "-p",
        &port,
        "--speed",
        "4",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(out.code == Some(0), "replay: {out:?}");
    assert_eq!(server.client().calls("set"), 40);
    assert_eq!(server.client().calls("flushall"), 0);
    let from_report = dir.path().join("report.html");
    let out = respbench(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        from_report.to_str().unwrap(),
    ]);
    assert!(out.code == Some(0), "report: {out:?}");
    for page in [&html, &from_report] {
        let text = std::fs::read_to_string(page).unwrap();
        assert!(
            text.contains("<section class=\"replay\" id=\"replay\">"),
            "{page:?}"
        );
        assert!(text.contains("<td>shop.trace</td>"), "{page:?}");
        assert!(text.contains("<td>FLUSHALL 1</td>"), "{page:?}");
        assert!(text.contains("data-chart=\"replay-slip\""), "{page:?}");
    }
    let out = respbench(&["compare", json.to_str().unwrap(), json.to_str().unwrap()]);
    assert!(out.code == Some(0), "compare: {out:?}");
    assert!(out.stdout.contains("REPLAY"), "{}", out.stdout);
}

#[test]
fn replay_section_and_compare_on_valkey() {
    report_and_compare(Server::start_valkey());
}

#[test]
fn replay_section_and_compare_on_redis() {
    report_and_compare(Server::start());
}
