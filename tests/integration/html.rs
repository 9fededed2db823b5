//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, which
//! `scripts/test.sh` installs) loads the page from disk. Checked: no console messages (the page
//! has no script, so any message is an error or a Content-Security-Policy violation), no network
//! request from the page (Chromium's NetLog, whose page requests carry the `file://` isolation
//! key), the charts present in the rendered DOM, one value against the record, and a screenshot.
//! A deliberately bad page first proves that the console and NetLog checks catch what they look
//! for. Every browser run is bounded in time.
//!
//! Without a browser the test is skipped with a note, unless `RESPBENCH_REQUIRE_BROWSER=1` (set
//! by `scripts/test.sh`, so CI never skips it).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{SUITE_TITLES, TempDir, run_respbench};
use crate::synthetic;

/// How long one browser run may take.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

fn browser() -> Option<PathBuf> {
    let candidates = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .flat_map(|name| {
                    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                        .map(move |d| d.join(name))
                        .collect::<Vec<_>>()
                }),
        );
    candidates.into_iter().find(|p| p.is_file())
}

/// What one headless load of `page` left: the DOM (or nothing with `screenshot`), the browser's
/// stderr, and the page's network requests from the NetLog.
struct Load {
    dom: String,
    stderr: String,
    requests: Vec<String>,
}

fn load(browser: &Path, dir: &Path, page: &Path, screenshot: Option<&Path>) -> Load {
    static RUN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = dir.join(format!("profile-{n}"));
    let netlog = dir.join(format!("netlog-{n}.json"));
    let (out, err) = (dir.join(format!("out-{n}")), dir.join(format!("err-{n}")));
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
    ])
    .args([
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ])
    .args([
        "--enable-logging=stderr",
        "--v=0",
        "--hide-scrollbars",
        "--window-size=1200,1900",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--log-net-log={}", netlog.display()));
    match screenshot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())),
        None => cmd.arg("--dump-dom"),
    };
    cmd.arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .process_group(0);
    let mut child = cmd.spawn().expect("start the browser");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            // The browser's own process group (it has helpers), started above.
            // SAFETY: kill(2) with a negative pid signals our child's process group only.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("the browser took longer than {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "browser failed ({status}):\n{stderr}");
    Load {
        dom: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr,
        requests: page_requests(&netlog),
    }
}

/// URLs the page asked for: NetLog events whose network isolation key is the `file://` page
/// (the browser's own background requests have other keys).
fn page_requests(netlog: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(netlog)
        .unwrap_or_else(|e| panic!("no NetLog {}: {e}", netlog.display()));
    let doc: Value = serde_json::from_str(&text).expect("NetLog is JSON");
    let mut urls: Vec<String> = doc["events"]
        .as_array()
        .expect("NetLog events")
        .iter()
        .filter(|e| {
            e["params"]["network_isolation_key"]
                .as_str()
                .is_some_and(|k| k.starts_with("file://"))
        })
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_string))
        .collect();
    urls.dedup();
    urls
}

fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

#[test]
fn report_renders_offline_in_a_real_browser() {
    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("RESPBENCH_REQUIRE_BROWSER").is_none(),
            "no chromium, and RESPBENCH_REQUIRE_BROWSER is set"
        );
        eprintln!("skipped: no chromium (scripts/test.sh installs it)");
        return;
    };
    let dir = TempDir::new();

    // The checks catch a page that logs, fails and fetches.
    let bad = dir.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('boom'); nope();</script></body></html>").unwrap();
    let l = load(&browser, dir.path(), &bad, None);
    assert_eq!(
        console_lines(&l.stderr).len(),
        2,
        "console check is blind:\n{}",
        l.stderr
    );
    assert_eq!(
        l.requests,
        ["http://127.0.0.1:9/x.png"],
        "NetLog check is blind"
    );

    // Two runs of the whole default suite: Redis the base, Valkey 10% faster.
    let tests: Vec<&str> = SUITE_TITLES.to_vec();
    let redis = synthetic::write(
        dir.path(),
        "redis.json",
        &synthetic::document("redis", &tests, &[1.0], 11),
    );
    let valkey = synthetic::write(
        dir.path(),
        "valkey.json",
        &synthetic::document("valkey", &tests, &[1.1], 12),
    );
    let page = dir.path().join("report.html");
    let args: Vec<String> = [
        "report",
        redis.to_str().unwrap(),
        valkey.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    run_respbench(&args, None).assert_success();
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(
        size < 1_000_000,
        "report of a default-suite run is {size} bytes"
    );
    eprintln!("report of two default-suite runs: {size} bytes");

    let l = load(&browser, dir.path(), &page, None);
    assert!(
        console_lines(&l.stderr).is_empty(),
        "console messages:\n{}",
        l.stderr
    );
    assert!(
        l.requests.is_empty(),
        "the page made requests: {:?}",
        l.requests
    );
    // Belt and braces: the policy that forbids requests, and no URL that could make one.
    assert!(
        l.dom
            .contains("content=\"default-src 'none'; style-src 'unsafe-inline'\"")
    );
    for attr in ["src=", "href=\"http", "href=\"//", "url("] {
        assert!(!l.dom.contains(attr), "{attr} in the page");
    }
    for kind in [
        "throughput",
        "latency",
        "spectrum",
        "errors",
        "server-cpu",
        "server-memory",
    ] {
        let n = l.dom.matches(&format!("data-chart=\"{kind}\"")).count();
        assert_eq!(n, SUITE_TITLES.len(), "{kind} charts in the rendered page");
    }
    assert!(l.dom.contains("id=\"comparison\""));
    // One value checked against the record: Valkey's SET throughput.
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&valkey).unwrap()).unwrap();
    let set = record["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "SET")
        .unwrap();
    let rps = set["throughput_rps"].as_f64().unwrap();
    let cell =
        format!("data-test=\"SET\" data-run=\"valkey\" data-metric=\"rps\" data-value=\"{rps}\"");
    assert!(l.dom.contains(&cell), "{cell} not in the page");

    // A screenshot of a two-test report, where the charts are in view (docs/compare.md's picture,
    // docs/report.png, is one of these; set RESPBENCH_SCREENSHOT=PATH to keep it).
    let small = dir.path().join("small.html");
    let two = |name: &str, server: &str, speed: f64, seed: u64| {
        synthetic::write(
            dir.path(),
            name,
            &synthetic::document(server, &["SET", "GET"], &[speed], seed),
        )
    };
    let (r2, v2) = (
        two("redis2.json", "redis", 1.0, 21),
        two("valkey2.json", "valkey", 1.1, 22),
    );
    let args: Vec<String> = [
        "report",
        r2.to_str().unwrap(),
        v2.to_str().unwrap(),
        "-o",
        small.to_str().unwrap(),
        "--label",
        "redis",
        "--label",
        "valkey",
    ]
    .map(String::from)
    .to_vec();
    run_respbench(&args, None).assert_success();
    let shot = dir.path().join("report.png");
    let l = load(&browser, dir.path(), &small, Some(&shot));
    assert!(l.requests.is_empty(), "{:?}", l.requests);
    assert!(console_lines(&l.stderr).is_empty(), "{}", l.stderr);
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    if let Some(keep) = std::env::var_os("RESPBENCH_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
