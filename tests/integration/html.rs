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

/// What one headless load of `page` left: the DOM (or nothing with `screenshot`, a PNG or, named
/// `.pdf`, the page printed), the browser's
/// stderr, and the page's network requests from the NetLog.
struct Load {
    dom: String,
    stderr: String,
    requests: Vec<String>,
}

fn load(browser: &Path, dir: &Path, page: &Path, screenshot: Option<&Path>) -> Load {
    load_at(browser, dir, page, screenshot, 1200)
}

/// [`load`] in a window `width` CSS pixels wide.
fn load_at(browser: &Path, dir: &Path, page: &Path, screenshot: Option<&Path>, width: u32) -> Load {
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
    .args(["--enable-logging=stderr", "--v=0", "--hide-scrollbars"])
    .arg(format!("--window-size={width},1900"))
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--log-net-log={}", netlog.display()));
    match screenshot {
        Some(p) if p.extension().is_some_and(|e| e == "pdf") => cmd
            .arg("--no-pdf-header-footer")
            .arg(format!("--print-to-pdf={}", p.display())),
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
        let mut n = l.dom.matches(&format!("data-chart=\"{kind}\"")).count();
        if kind == "errors" {
            // A test without errors has the one line instead of a chart of zeros.
            n += l.dom.matches("class=\"note no-errors\"").count();
        }
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

/// A copy of `page` that measures itself once rendered: the policy relaxed for one inline script
/// (the report itself has none), which writes the viewport, the page's width and each table's
/// and scroll box's widths into a `<pre id="measured">` for `--dump-dom` to carry out.
fn measured_copy(page: &Path) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let script = "<script>(function(){var out={viewport:window.innerWidth,\
        page:document.documentElement.scrollWidth,tables:[]};\
        document.querySelectorAll('table').forEach(function(t){var box=t.closest('.scroll');\
        out.tables.push({cls:t.className,width:t.scrollWidth,\
        box:box?box.getBoundingClientRect().width:t.getBoundingClientRect().width});});\
        out.ticks=[];document.querySelectorAll('svg.forest text.tk').forEach(function(t){\
        var r=t.getBoundingClientRect();out.ticks.push({text:t.textContent,left:r.left,right:r.right});});\
        var p=document.createElement('pre');p.id='measured';p.textContent=JSON.stringify(out);\
        document.body.appendChild(p);})();</script>";
    let html = html
        .replace(
            "default-src 'none'; style-src 'unsafe-inline'",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
        )
        .replace("</body>", &format!("{script}</body>"));
    assert!(html.contains("id='measured'") || html.contains("p.id='measured'"));
    let copy = page.with_extension("measured.html");
    std::fs::write(&copy, html).unwrap();
    copy
}

/// The widths `measured_copy`'s script wrote, from a dumped DOM.
fn measurements(dom: &str) -> Value {
    let start = dom
        .find("<pre id=\"measured\">")
        .expect("the measuring script ran")
        + 19;
    let end = start + dom[start..].find("</pre>").unwrap();
    serde_json::from_str(&dom[start..end].replace("&quot;", "\"")).unwrap()
}

/// The forest plot's axis labels as the browser laid them out (`measurements`): `0%` among
/// them, each a change above −100%, in increasing order left to right, none overlapping the
/// next. A linear axis of percents once labelled `-267%` on top of `0%`.
fn assert_forest_axis_reads(m: &Value, name: &str) -> Vec<f64> {
    let ticks = m["ticks"].as_array().expect("tick labels measured");
    assert!(ticks.len() >= 3, "{name}: {ticks:?}");
    let mut values = Vec::new();
    for pair in ticks.windows(2) {
        assert!(
            pair[0]["right"].as_f64().unwrap() <= pair[1]["left"].as_f64().unwrap(),
            "{name}: axis labels overlap: {pair:?}"
        );
    }
    for t in ticks {
        let text = t["text"].as_str().unwrap();
        let v: f64 = text
            .strip_suffix('%')
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: label {text:?}"));
        assert!(v > -100.0, "{name}: a change below -100%: {text}");
        values.push(v);
    }
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{name}: {values:?}");
    assert!(values.contains(&0.0), "{name}: no 0%: {values:?}");
    values
}

/// Loads `page` at 1400 and 390 px: a screenshot of each (kept under `RESPBENCH_SCREENSHOTS`
/// when set), and at each width neither the page nor any table's box wider than the viewport.
/// Returns the DOM at 1400 px and the table measurements there.
fn at_both_widths(browser: &Path, dir: &Path, page: &Path, name: &str) -> (String, Value) {
    let keep = std::env::var_os("RESPBENCH_SCREENSHOTS").map(PathBuf::from);
    let copy = measured_copy(page);
    let mut wide = None;
    for width in [1400u32, 390] {
        let shot = dir.join(format!("{name}-{width}.png"));
        let l = load_at(browser, dir, page, Some(&shot), width);
        assert!(l.requests.is_empty(), "{:?}", l.requests);
        assert!(console_lines(&l.stderr).is_empty(), "{}", l.stderr);
        let png = std::fs::read(&shot).expect("screenshot written");
        assert!(png.starts_with(b"\x89PNG"), "{name} at {width}");
        if let Some(k) = &keep {
            std::fs::create_dir_all(k).unwrap();
            std::fs::copy(&shot, k.join(format!("{name}-{width}.png"))).unwrap();
        }
        let l = load_at(browser, dir, &copy, None, width);
        let m = measurements(&l.dom);
        let viewport = m["viewport"].as_f64().unwrap();
        assert!(
            m["page"].as_f64().unwrap() <= viewport,
            "{name} at {width}: the page scrolls sideways: {m}"
        );
        for t in m["tables"].as_array().unwrap() {
            assert!(
                t["box"].as_f64().unwrap() <= viewport,
                "{name} at {width}: a table wider than the viewport: {t}"
            );
        }
        if width == 1400 {
            wide = Some((l.dom, m));
        }
    }
    wide.unwrap()
}

fn report(dir: &Path, out: &str, runs: &[&Path]) -> PathBuf {
    let page = dir.join(out);
    let mut args = vec!["report".to_string()];
    args.extend(runs.iter().map(|p| p.to_str().unwrap().to_string()));
    args.extend(["-o".to_string(), page.to_str().unwrap().to_string()]);
    run_respbench(&args, None).assert_success();
    page
}

/// The answer is on the page: a failover run's outage band (spanning the record's outage) and
/// Sentinel switch marker, its verdict; a compare of three runs of 3 repetitions that fits; a
/// `--find-max` run's SLO line. At 1400 and 390 px, nothing wider than the viewport.
#[test]
fn report_shows_the_answer_at_both_widths() {
    let Some(browser) = browser() else {
        assert!(
            std::env::var_os("RESPBENCH_REQUIRE_BROWSER").is_none(),
            "no chromium, and RESPBENCH_REQUIRE_BROWSER is set"
        );
        eprintln!("skipped: no chromium (scripts/test.sh installs it)");
        return;
    };
    let dir = TempDir::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records");

    // A failover: the fixture's outage, and a Sentinel switch during it.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("outage.json")).unwrap())
            .unwrap();
    let test = doc["tests"][0]["name"].as_str().unwrap().to_string();
    let outage = doc["tests"][0]["outages"][0].clone();
    doc["sentinel"] = serde_json::json!({"primary_name": "mymaster",
        "sentinels": ["127.0.0.1:26379"], "initial": "127.0.0.1:6379",
        "switches": [{"at": "2026-01-01T00:00:01.700000Z", "offset_s": 1.7, "test": test,
            "from": "127.0.0.1:6379", "to": "127.0.0.1:6380"}]});
    // What a cluster run adds: a node whose slots were served again at 2.5 s (a failover), a
    // MOVED burst in second 2, and the client's delay per second.
    doc["tests"][0]["nodes"] = serde_json::json!([{"address": "127.0.0.1:7001",
        "role": "primary", "completed": 10, "lost": 3,
        "outage": {"start_s": 1.2, "end_s": 2.5, "duration_s": 1.3}}]);
    doc["tests"][0]["timeline"][2]["redirects"] = serde_json::json!({"MOVED": 120, "ASK": 3});
    for (i, p99) in [(0, 40.0), (1, 90.0), (2, 700.0), (3, 55.0)] {
        doc["tests"][0]["timeline"][i]["client_delay_us"] =
            serde_json::json!({"avg": p99 / 4.0, "p50": p99 / 5.0, "p99": p99, "samples": 30});
    }
    // The machine it was judged on: a respbench pinned to one of two cores (`taskset -c 1`).
    doc["tests"][0]["machine"] = serde_json::json!({"cpu_pressure_some_pct": 99.0,
        "cpu_pressure_full_pct": null, "steal_pct": 0.0, "busy_pct": 100.0,
        "respbench_cpu_pct": 9.0, "others_cpu_pct": 181.0, "client_max_runqueue_pct": 60.0,
        "cores": 2, "respbench_cores": 1,
        "measured": ["cpu_pressure", "steal", "busy", "respbench_cpu", "others_cpu",
            "client_runqueue"]});
    let failover = dir.path().join("failover.json");
    std::fs::write(&failover, doc.to_string()).unwrap();
    let page = report(dir.path(), "failover.html", &[&failover]);
    let (dom, _) = at_both_widths(&browser, dir.path(), &page, "failover");
    let band = format!(
        "data-band=\"outage\" data-start=\"{}\" data-end=\"{}\"",
        outage["start_s"], outage["end_s"]
    );
    assert!(
        dom.contains(&band),
        "{band}: the band spans the record's outage"
    );
    assert!(dom.contains("data-marker=\"switch\" data-x=\"1.7\""));
    assert!(dom.contains("data-marker=\"failover\" data-x=\"2.5\""));
    assert!(dom.contains("data-marker=\"moved-burst\" data-x=\"2\""));
    // The fixture's reopened connections (63 and 15 attempts in seconds 1 and 2): one storm.
    assert!(dom.contains("data-marker=\"reconnect-storm\" data-x=\"1\""));
    assert!(dom.contains("reconnect storm: 78 attempts"));
    assert!(dom.contains("data-chart=\"client-delay\""));
    assert!(dom.contains("127.0.0.1:6379 → 127.0.0.1:6380"));
    let verdict = doc["tests"][0]["verdict"]["kind"].as_str().unwrap();
    assert!(dom.contains(&format!("data-verdict=\"{verdict}\"")));
    // The test's section says what limited it in text, not only in the summary's tooltip, with
    // the machine's figures beside it.
    let reason = doc["tests"][0]["verdict"]["reason"].as_str().unwrap();
    let section = &dom[dom.find("<section class=\"test\"").expect("a test section")..];
    let at = section
        .find("<p class=\"verdict-reason\"")
        .expect("the verdict in the test's section");
    let paragraph = &section[at..at + section[at..].find("</p>").unwrap()];
    assert!(
        paragraph.contains(&format!("data-verdict=\"{verdict}\""))
            && paragraph.ends_with(&format!("</b>: limited by {verdict} ({reason})")),
        "the verdict and its reason as text: {paragraph}"
    );
    assert!(section.contains("<table class=\"machine\">"));
    assert!(
        section.contains(
            "<td>99%</td><td>0%</td><td>100% of 2 cores</td><td>9% of a core (it may run on 1 \
             of the 2 cores)</td><td>181% of a core</td><td>60%</td>"
        ),
        "the machine's figures"
    );
    assert!(dom.contains("Outages") && dom.contains("data-chart=\"lost\""));
    printed(&browser, dir.path(), &page, "failover");

    // Three runs of 3 repetitions each.
    let sides: Vec<PathBuf> = [("redis", 1.0, 41), ("valkey", 1.1, 42), ("valkey", 1.2, 43)]
        .iter()
        .enumerate()
        .map(|(i, &(server, speed, seed))| {
            let d = synthetic::document(
                server,
                &["SET", "GET", "PING_INLINE"],
                &[speed, speed * 0.98, speed * 1.02],
                seed,
            );
            synthetic::write(dir.path(), &format!("side{i}.json"), &d)
        })
        .collect();
    let refs: Vec<&Path> = sides.iter().map(PathBuf::as_path).collect();
    let page = report(dir.path(), "compare.html", &refs);
    let (dom, m) = at_both_widths(&browser, dir.path(), &page, "compare");
    assert!(dom.contains("id=\"comparison\""));
    // The answer opens the page: the headline and the forest plot under the title.
    let at = |needle: &str| {
        dom.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing"))
    };
    assert!(at("class=\"headline\"") < at("class=\"runs\""));
    assert!(at("data-chart=\"forest\"") < at("class=\"runs\""));
    // 10% and 20% faster at 3 repetitions each: findings, drawn as such, on an axis of a few
    // tens of percent (not hundreds).
    assert!(dom.contains("data-test=\"SET\" data-metric=\"rps\" data-finding=\"true\""));
    let axis = assert_forest_axis_reads(&m, "compare");
    assert!(axis.iter().all(|v| v.abs() <= 50.0), "{axis:?}");
    for t in m["tables"].as_array().unwrap() {
        if t["cls"] == "overview" || t["cls"] == "summary" {
            assert!(
                t["width"].as_f64() <= t["box"].as_f64(),
                "at 1400 px the {} table fits without scrolling: {t}",
                t["cls"]
            );
        }
    }

    // A wild side (a repetition at an eighth of the others', as on a busy machine): the axis is
    // a ratio, clipped at a factor of 4 with arrows, its labels apart and in the text's words.
    let wild: Vec<PathBuf> = [("redis", [1.0, 1.01, 0.99]), ("valkey", [1.0, 0.12, 1.05])]
        .iter()
        .enumerate()
        .map(|(i, (server, speeds))| {
            let d = synthetic::document(server, &["SET", "GET"], speeds, 50 + i as u64);
            synthetic::write(dir.path(), &format!("wild{i}.json"), &d)
        })
        .collect();
    let refs: Vec<&Path> = wild.iter().map(PathBuf::as_path).collect();
    let page = report(dir.path(), "wild.html", &refs);
    let (dom, m) = at_both_widths(&browser, dir.path(), &page, "wild");
    let axis = assert_forest_axis_reads(&m, "wild");
    assert_eq!(axis, [-75.0, -50.0, 0.0, 100.0, 300.0]);
    assert!(
        dom.contains("data-clip=\"lo\""),
        "a clipped interval's arrow"
    );
    assert!(dom.contains("too noisy to tell</text>"));
    assert!(!dom.contains("(too-noisy)") && !dom.contains("(noise)"));

    // --find-max: the SLO as a line, judged steps.
    let page = report(
        dir.path(),
        "find-max.html",
        &[&fixtures.join("find-max.json")],
    );
    let (dom, _) = at_both_widths(&browser, dir.path(), &page, "find-max");
    assert!(dom.contains("data-rule=\"slo\""));
    assert!(dom.contains("class=\"dot\" data-ok=\"true\""));
    assert!(dom.contains("max throughput with"));

    // A replay (issue 25): its section, table and slip chart, at both widths.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("outage.json")).unwrap())
            .unwrap();
    doc["replay"] = serde_json::json!({"trace": "prod.trace", "span_s": 2.0, "speed": 3.0,
        "loops": 1, "entries": 500, "sent": 480, "connections": 12, "clients": 12,
        "skipped": {"FLUSHALL": 2}, "max_slip_ms": 3.5,
        "seconds": [{"due": 240, "sent": 240, "slip_max_ms": 1.5, "slip_mean_ms": 0.2},
                    {"due": 240, "sent": 240, "slip_max_ms": 3.5, "slip_mean_ms": 0.4}],
        "cluster": {"routed": {"127.0.0.1:7001": 300, "127.0.0.1:7002": 180},
            "crossslot": {"MSET": 14}, "multi_across_slots": 1, "multi_commands_skipped": 4,
            "moved": 0, "ask": 2}});
    let replayed = dir.path().join("replay.json");
    std::fs::write(&replayed, doc.to_string()).unwrap();
    let page = report(dir.path(), "replay.html", &[&replayed]);
    let (dom, m) = at_both_widths(&browser, dir.path(), &page, "replay");
    assert!(dom.contains("id=\"replay\"") && dom.contains("prod.trace"));
    assert!(dom.contains("data-chart=\"replay-slip\""));
    assert!(
        dom.contains("<td>MSET 14</td>"),
        "the cluster routing table"
    );
    assert!(
        m["tables"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["cls"] == "replay"),
        "{m}"
    );
}

/// Prints `page` to PDF and renders its pages as images with `pdftoppm` (kept under
/// `RESPBENCH_SCREENSHOTS`): the page prints, onto at least one page, each page an image of the
/// A4/Letter width (nothing sized for the screen forces a wider page). Skipped with a note
/// without `pdftoppm`, unless `RESPBENCH_REQUIRE_BROWSER` is set.
fn printed(browser: &Path, dir: &Path, page: &Path, name: &str) {
    let pdf = dir.join(format!("{name}.pdf"));
    let l = load_at(browser, dir, page, Some(&pdf), 1400);
    assert!(l.requests.is_empty(), "{:?}", l.requests);
    let bytes = std::fs::read(&pdf).expect("PDF written");
    assert!(bytes.starts_with(b"%PDF"), "{name}: not a PDF");
    let prefix = dir.join(format!("{name}-page"));
    let out = match Command::new("pdftoppm")
        .args(["-png", "-r", "40"])
        .arg(&pdf)
        .arg(&prefix)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            assert!(
                std::env::var_os("RESPBENCH_REQUIRE_BROWSER").is_none(),
                "no pdftoppm ({e}), and RESPBENCH_REQUIRE_BROWSER is set"
            );
            eprintln!("skipped the PDF pages: no pdftoppm (scripts/test.sh installs it)");
            return;
        }
    };
    assert!(
        out.status.success(),
        "pdftoppm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{name}-page")) && n.ends_with(".png"))
        })
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "{name}: no printed page");
    for p in &pages {
        let png = std::fs::read(p).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        // The IHDR width: A4 or Letter at 40 dpi is 331 or 340 px; a page sized to a wide
        // table would be wider.
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert!(
            width <= 345,
            "{}: printed page {width} px wide",
            p.display()
        );
        if let Some(k) = std::env::var_os("RESPBENCH_SCREENSHOTS") {
            let k = PathBuf::from(k);
            std::fs::create_dir_all(&k).unwrap();
            std::fs::copy(p, k.join(p.file_name().unwrap())).unwrap();
        }
    }
}
