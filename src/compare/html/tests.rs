//! The page's structure from small inputs; the browser test (tests/integration/html.rs) checks
//! that it renders.

use super::*;
use crate::compare::input::{FileRun, input_of};

/// A respbench record with one test, a 3-second timeline, histograms and a server series.
fn record(rps: f64, errors: u64) -> FileRun {
    record_of(rps, errors, 3)
}

/// [`record`] with a timeline of `secs` seconds.
fn record_of(rps: f64, errors: u64, secs: u64) -> FileRun {
    let mut h = crate::metrics::LatencyHistogram::new();
    for i in 1..=2000u64 {
        h.record(50_000 + i * 37);
    }
    let hist = crate::record::hdr::encode(&h);
    let timeline: Vec<_> = (0..secs)
        .map(|s| {
            serde_json::json!({"second": s, "completed": 600 + s * 10, "failed": 0,
            "p50_us": 80.0, "p99_us": 120.0, "max_us": 130.0, "server": []})
        })
        .collect();
    let seconds: Vec<_> = (0..secs)
        .map(|t| {
            let t = t as f64;
            serde_json::json!({"t": t, "secs": 1.0, "cpu_pct": 55.0,
            "main_thread_cpu_pct": 50.0, "used_memory": 1_048_576, "used_memory_rss": 4_194_304})
        })
        .collect();
    let doc = serde_json::json!({
        "schema": "respbench/1",
        "servers": [{"address": "127.0.0.1:6379", "identity": {"name": "valkey", "version": "9.1.2"}}],
        "tests": [{
            "name": "MSET (10 keys)", "throughput_rps": rps,
            "latency_us": {"corrected": {"count": 2000, "avg": 87.0, "min": 50.0, "p50": 87.0,
                "p90": 120.0, "p95": 124.0, "p99": 123.0, "p99_9": 124.0, "p99_99": 124.0, "max": 124.0}},
            "requests": {"completed": 2000, "failed": errors, "redirects": {"MOVED": 2, "ASK": 0}},
            "histograms": {"corrected": hist, "uncorrected": hist},
            "timeline": timeline,
            "server": [{"address": "127.0.0.1:6379", "seconds": seconds}]
        }]
    });
    crate::compare::input::parse(&doc.to_string()).unwrap()
}

fn inputs(n: usize) -> Vec<Input> {
    (0..n)
        .map(|i| {
            input_of(
                format!("run<{i}>"),
                vec![format!("r{i}.json")],
                vec![record(1000.0 + i as f64, i as u64)],
            )
            .unwrap()
        })
        .collect()
}

#[test]
fn one_run_has_every_chart_and_no_comparison() {
    let inputs = inputs(1);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    for kind in [
        "throughput",
        "latency",
        "spectrum",
        "server-cpu",
        "server-memory",
    ] {
        assert!(
            html.contains(&format!(
                "data-chart=\"{kind}\" data-test=\"MSET (10 keys)\""
            )),
            "{kind}"
        );
    }
    assert!(
        !html.contains("cpu-80"),
        "a closed-loop test without trouble: no 80% line"
    );
    assert!(
        !html.contains("data-chart=\"errors\"") && html.contains("class=\"note no-errors\""),
        "no errors: one line, not a chart of zeros"
    );
    assert!(html.contains("id=\"summary\""));
    assert!(
        html.find("id=\"summary\"") < html.find("data-chart="),
        "the answer first"
    );
    assert!(html.contains("default-src 'none'"));
    assert!(!html.contains("id=\"comparison\""));
    assert!(html.contains("run&lt;0&gt;"), "labels are escaped");
    assert!(html.contains(r#"data-metric="rps" data-value="1000""#));
    assert!(html.contains("MOVED 2"), "redirect totals under the charts");
    assert!(html.contains("<script type=\"application/json\" id=\"respbench-data\">"));
    assert!(!html.contains("<script>") && !html.contains("http://") && !html.contains("https://"));
}

#[test]
fn several_runs_get_the_compare_table_and_overlaid_series() {
    let inputs = inputs(2);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    assert!(html.contains("id=\"comparison\""));
    assert!(html.contains("run&lt;1&gt; vs run&lt;0&gt;"));
    assert!(
        html.contains("data-series=\"run&lt;0&gt; p99\"")
            && html.contains("data-series=\"run&lt;1&gt; p99\"")
    );
    assert!(html.contains(crate::html::svg::PALETTE[1]));
    assert!(html.contains("data-chart=\"forest\""));
    // The answer opens the page: headline and forest under the title, before the runs.
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at("</h1>") < at("class=\"headline\""));
    assert!(at("class=\"headline\"") < at("data-chart=\"forest\""));
    assert!(at("data-chart=\"forest\"") < at("class=\"runs\""), "{html}");
    assert!(
        html.contains("data-metric=\"p99\" data-finding=\"false\""),
        "one run each: no finding in the forest plot"
    );
    assert!(!html.contains("data-finding=\"true\""));
    // One run each: every change is inconclusive, so grey, never coloured as a finding.
    assert!(
        html.contains("<td class=\"noise\">+0.10% better? (can"),
        "{html}"
    );
    assert!(!html.contains("class=\"better\"") && !html.contains("class=\"worse\""));
}

/// The side `label`: one GET test of three seconds, 500 replies each around 60 µs, each second
/// with its figures in `extra` (what a chart draws, or nothing).
fn three_seconds(label: &str, extra: [serde_json::Value; 3]) -> Vec<Input> {
    let mut h = crate::metrics::LatencyHistogram::new();
    h.record(60_000);
    let hist = crate::record::hdr::encode(&h);
    let timeline: Vec<_> = (extra.into_iter().enumerate())
        .map(|(i, extra)| {
            let mut second = serde_json::json!({"second": i, "completed": 500, "p50_us": 60.0,
                "p99_us": 90.0, "max_us": 99.0, "server": []});
            let fields = second.as_object_mut().unwrap();
            fields.extend(extra.as_object().unwrap().clone());
            second
        })
        .collect();
    let doc = serde_json::json!({"schema": "respbench/1", "tests": [{
        "name": "GET", "throughput_rps": 1000.0,
        "histograms": {"corrected": hist, "uncorrected": hist},
        "timeline": timeline}]});
    let file = crate::compare::input::parse(&doc.to_string()).unwrap();
    vec![input_of(label.into(), vec![format!("{label}.json")], vec![file]).unwrap()]
}

#[test]
fn the_client_delay_per_second_is_drawn_where_measured_and_left_out_where_not() {
    let inputs = inputs(1);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let chart = "data-chart=\"client-delay\"";
    assert!(!page(&inputs, &cmp).contains(chart), "no samples: no chart");
    let delay = |avg: f64, p50: f64, p99: f64| serde_json::json!({"client_delay_us": {"avg": avg, "p50": p50, "p99": p99, "samples": 8}});
    let no_samples = serde_json::json!({});
    let inputs = three_seconds(
        "delayed",
        [
            delay(12.0, 10.0, 40.0),
            no_samples,
            delay(300.0, 250.0, 900.0),
        ],
    );
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    assert!(html.contains(chart), "the chart is there");
    let charts = super::charts::for_test(&inputs, "GET");
    let delay = charts.iter().find(|c| c.kind == "client-delay").unwrap();
    let p99 = delay
        .series
        .iter()
        .find(|s| s.label.ends_with("p99"))
        .unwrap();
    // Two seconds with samples, the second without left out (not drawn as zero), in ms.
    assert_eq!(p99.points, [(0.5, 0.04), (2.5, 0.9)]);
}

#[test]
fn only_findings_are_coloured() {
    let side = |label: &str, rps: &[f64]| {
        let runs = rps.iter().map(|&r| record(r, 0)).collect();
        input_of(label.into(), vec![format!("{label}.json")], runs).unwrap()
    };
    let inputs = [
        side("a", &[1000.0, 1010.0, 990.0]),
        side("b", &[1100.0, 1110.0, 1090.0]),
    ];
    let cmp = Comparison::new(&inputs, &[Metric::Rps]);
    let html = page(&inputs, &cmp);
    assert!(
        html.contains("<td class=\"better\">+10.00% better ["),
        "{html}"
    );
}

#[test]
fn a_find_max_record_gets_the_latency_vs_throughput_curve() {
    let plain = inputs(1);
    let cmp = Comparison::new(&plain, &Metric::ALL);
    assert!(!page(&plain, &cmp).contains("data-chart=\"find-max\""));

    let mut run = record(1000.0, 0);
    let step = |rps: f64, p99: f64, met: bool| crate::compare::input::CurvePoint {
        offered_rps: rps as u64,
        achieved_rps: rps,
        p50_us: p99 / 4.0,
        p99_us: p99,
        met,
        saturated: false,
    };
    // Steps in the order they ran; the curve draws them by rate.
    run.find_max = Some(crate::compare::input::Curve {
        slo: "p99<1ms".into(),
        answer_rps: Some(3_100.0),
        end: "converged".into(),
        limit: None,
        no_growth_rps: None,
        points: vec![
            step(1_000.0, 200.0, true),
            step(4_000.0, 9_000.0, false),
            step(3_100.0, 800.0, true),
        ],
    });
    let inputs = vec![input_of("fm".into(), vec!["fm.json".into()], vec![run]).unwrap()];
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    assert!(
        html.contains("data-chart=\"find-max\""),
        "the curve is drawn"
    );
    assert!(html.contains("fm: max throughput with p99&lt;1ms: 3100 req/s (3 steps)"));
    assert!(
        html.contains(r#"data-rule="slo" data-y="1""#),
        "the SLO as a line at 1 ms"
    );
    assert_eq!(html.matches("class=\"dot\" data-ok=\"true\"").count(), 2);
    assert_eq!(html.matches("class=\"dot\" data-ok=\"false\"").count(), 1);
    assert!(html.contains("data-series=\"fm p99\"") && html.contains("data-series=\"fm p50\""));
    let chart = super::find_max::find_max(&inputs).unwrap();
    assert!(chart.y_log, "latencies span decades: a log axis");
    let xs: Vec<f64> = chart.series[1].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, [1_000.0, 3_100.0, 4_000.0]);
    assert_eq!(chart.series[1].points[2].1, 9.0, "p99 in ms");

    // A search that ended too noisy says so and why, never "no step met it".
    let mut noisy = inputs[0].clone();
    let curve = noisy.find_max.as_mut().unwrap();
    (curve.answer_rps, curve.end, curve.no_growth_rps) = (None, "too-noisy".into(), Some(8_000));
    let notes = super::find_max::find_max_notes(&[noisy.clone()]);
    assert!(
        notes[0].contains("too noisy to answer on that machine (the SLO broke by no more at 8000"),
        "{notes:?}"
    );
    noisy.find_max.as_mut().unwrap().no_growth_rps = None;
    let notes = super::find_max::find_max_notes(&[noisy]);
    assert!(notes[0].contains("(its windows disagreed)"), "{notes:?}");
}

#[test]
fn a_mix_gets_a_per_command_table_in_its_section() {
    use crate::compare::fixtures::{mix_record, side};
    let run = |p99: f64| {
        mix_record(
            "SET:GET 1:10",
            1100.0,
            &[("SET", 100, 200.0), ("GET", 1000, p99)],
        )
    };
    let one = vec![side("a", run(100.0))];
    let html = page(&one, &Comparison::new(&one, &Metric::ALL));
    assert!(html.contains("<h3>Per command</h3>"));
    // SET: 100 of 1100 requests, 100 rps, p50/p99/p99.9/max 0.1/0.2/0.3/0.6 ms.
    assert!(
        html.contains(
            "<td data-command=\"SET\">SET</td><td>9.1%</td><td>100</td><td>0</td><td>100.00</td>\
             <td>0.100</td><td>0.200</td><td>0.300</td><td>0.600</td>"
        ),
        "{html}"
    );
    assert!(html.contains("<td data-command=\"GET\">GET</td><td>90.9%</td><td>1000</td>"));
    assert!(!html.contains("<th>run</th>"), "one run: no run column");
    // The commands are in the test's section, not sections or overview rows of their own.
    assert_eq!(html.matches("<section").count(), 1);
    assert!(!html.contains("SET:GET 1:10 / GET</a>"), "no overview row");

    let two = vec![side("a", run(100.0)), side("b", run(150.0))];
    let html = page(&two, &Comparison::new(&two, &Metric::ALL));
    assert!(html.contains("<th>run</th>"));
    assert!(html.contains("<td>b</td><td data-command=\"GET\">GET</td>"));
    assert!(
        html.contains("<td>SET:GET 1:10 / GET</td>"),
        "the compare table has each command's rows"
    );
    assert_eq!(html.matches("<section").count(), 1);
    // A test without a mix has no table.
    let plain = inputs(1);
    assert!(!page(&plain, &Comparison::new(&plain, &Metric::ALL)).contains("Per command"));
}

#[test]
fn a_failed_or_cut_short_run_says_so_beside_its_name() {
    let mut run = record(1000.0, 0);
    run.problems
        .push("test SET was aborted (partial figures)".into());
    let inputs = vec![
        input_of("ok".into(), vec!["ok.json".into()], vec![record(1000.0, 0)]).unwrap(),
        input_of("bad".into(), vec!["bad<1>.json".into()], vec![run]).unwrap(),
    ];
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    assert_eq!(html.matches("class=\"problem\"").count(), 1);
    assert!(html.contains("bad&lt;1&gt;.json: test SET was aborted (partial figures)"));
}

/// A CSV of thousands of tests reads (every row, each its own test) and makes a page with charts
/// for the first `MAX_CHARTED_TESTS` only and table rows (and embedded data) for the first
/// `MAX_TABLED_TESTS`, saying how many it left out.
#[test]
fn thousands_of_tests_are_summarised() {
    let n = 20_000;
    let mut csv = String::from("\"test\",\"rps\",\"avg_latency_ms\",\"p99_latency_ms\"\n");
    for k in 0..n {
        csv.push_str(&format!("\"T{k}\",\"{}\",\"0.5\",\"1.25\"\n", 1000 + k));
    }
    let run = crate::compare::input::parse(&csv).unwrap();
    let input = input_of("big".into(), vec!["big.csv".into()], vec![run]).unwrap();
    assert_eq!(input.tests.len(), n);
    assert_eq!(input.tests[n - 1].name, format!("T{}", n - 1));
    assert_eq!(input.tests[n - 1].samples[0].rps, (1000 + n - 1) as f64);
    let inputs = [input];
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    assert_eq!(cmp.tests.len(), n);
    let html = page(&inputs, &cmp);
    assert_eq!(
        html.matches("<section class=\"test\"").count(),
        charts::MAX_CHARTED_TESTS
    );
    let tabled = charts::MAX_TABLED_TESTS;
    assert!(html.contains(&format!(
        "{n} tests: charts for the first {} only; the first {tabled} tests' figures",
        charts::MAX_CHARTED_TESTS
    )));
    // The last tabled test's row is in the overview, without a link to a section that is not
    // there; the next one's is not, and the page says how many it left out.
    assert!(
        html.contains(&format!("<tr><td>T{}</td>", tabled - 1)),
        "overview row"
    );
    assert!(!html.contains(&format!("href=\"#t{}\"", tabled - 1)));
    assert!(!html.contains(&format!("<td>T{tabled}</td>")));
    assert!(!html.contains(&format!("\"T{}\"", n - 1)));
    assert!(html.contains(&format!("… {} more tests: see", n - tabled)));
    // The embedded data has the tabled tests, without indentation.
    let from = html.find("id=\"respbench-data\">").unwrap() + "id=\"respbench-data\">".len();
    let to = from + html[from..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[from..to]).unwrap();
    assert_eq!(data["tests"].as_array().unwrap().len(), tabled);
    assert!(!html[from..to].contains('\n'));
}

/// The fixture record of a run through an outage (connections reset and closed at 1.2 s to 2.2 s).
fn outage_run() -> Vec<Input> {
    let text = include_str!("../../../tests/fixtures/records/outage.json");
    let run = crate::compare::input::parse(text).unwrap();
    vec![input_of("failover".into(), vec!["outage.json".into()], vec![run]).unwrap()]
}

#[test]
fn an_outage_is_a_band_a_list_entry_and_lost_requests_by_kind() {
    let inputs = outage_run();
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    assert!(
        html.contains(r#"data-band="outage" data-start="1.2" data-end="2.2""#),
        "the band spans the record's outage: {html}"
    );
    assert!(
        html.contains("from 1.2 s to 2.2 s: 1.0 s, 5 requests failed (5 lost without a reply)")
    );
    assert!(html.contains(r#"<li data-outage-start="1.2" data-outage-end="2.2">"#));
    assert!(html.contains("data-outages=\"1\""), "the summary counts it");
    // The 5 failures were lost connections, not error replies.
    assert!(html.contains("data-chart=\"lost\""));
    assert!(html.contains("data-series=\"failover lost: connection reset\""));
    assert!(
        !html.contains("data-chart=\"errors\""),
        "no error replies: no chart"
    );
    assert!(!html.contains("no-errors"), "but not \"no errors\" either");
    assert!(
        html.contains("data-rule=\"cpu-80\""),
        "an outage: the 80% line"
    );
}

#[test]
fn the_summary_shows_each_tests_verdict() {
    let mut run = record(1000.0, 0);
    run.tests[0].1.limited_by = Some("client-bound".into());
    let inputs = vec![input_of("v".into(), vec!["v.json".into()], vec![run]).unwrap()];
    let html = page(&inputs, &Comparison::new(&inputs, &Metric::ALL));
    assert!(html.contains("data-verdict=\"client-bound\""));
    assert!(html.contains("class=\"problem verdict-warning\""));
}

#[test]
fn seconds_without_server_figures_stay_a_gap() {
    let mut runs = inputs(1);
    let d = runs[0].tests[0].samples[0].detail.as_mut().unwrap();
    // The watch lost the server between 1 s and 4 s.
    d.servers[0].points.retain(|p| p.t < 1.5);
    let mut later = d.servers[0].points[0];
    later.t = 4.0;
    d.servers[0].points.push(later);
    let charts = charts::for_test(&runs, "MSET (10 keys)");
    let cpu = charts.iter().find(|c| c.kind == "server-cpu").unwrap();
    let svg = crate::html::svg::render(cpu);
    let path = svg
        .split("data-series=\"run&lt;0&gt; process\" d=\"")
        .nth(1)
        .unwrap();
    let d_attr = &path[..path.find('"').unwrap()];
    assert_eq!(d_attr.matches('M').count(), 2, "two pieces: {d_attr}");
}

#[test]
fn a_short_test_with_its_slots_is_drawn_at_a_tenth_of_a_second() {
    // A 1.5 s test: two seconds of slots, the last cut short at 1.5 s; each slot with its longest
    // latency (`max_us`), or without it as in a record of an earlier build.
    let charts_of = |slot_max: Option<f64>| {
        let mut slot = serde_json::json!({"completed": 100, "failed": 0, "lost": 0,
            "reconnect_attempts": 0, "reconnects": 0});
        if let Some(m) = slot_max {
            slot["max_us"] = m.into();
        }
        let row = |s: u64| {
            serde_json::json!({"second": s, "completed": 1000, "failed": 0, "p50_us": 80.0,
                "p99_us": 120.0, "max_us": slot_max.unwrap_or(130.0), "server": [],
                "slots": vec![slot.clone(); 10]})
        };
        let doc = serde_json::json!({"schema": "respbench/1", "tests": [{"name": "PING",
            "throughput_rps": 1000.0, "duration_s": 1.5, "timeline": [row(0), row(1)]}]});
        let run = crate::compare::input::parse(&doc.to_string()).unwrap();
        let inputs = vec![input_of("s".into(), vec!["s.json".into()], vec![run]).unwrap()];
        charts::for_test(&inputs, "PING")
    };
    let max_of = |charts: &[crate::html::svg::Chart]| {
        let lat = charts.iter().find(|c| c.kind == "latency").unwrap();
        let max = lat.series.iter().find(|s| s.label.ends_with("max"));
        (max.unwrap().points.clone(), lat.title.clone())
    };
    let charts = charts_of(None);
    let tp = charts.iter().find(|c| c.kind == "throughput").unwrap();
    assert_eq!(
        tp.series[0].points.len(),
        15,
        "15 slots of 0.1 s, none past the end"
    );
    assert!(
        tp.series[0]
            .points
            .iter()
            .all(|p| (p.1 - 1000.0).abs() < 1e-9)
    );
    assert!(tp.title.contains("0.1 s"));
    // A record of an earlier build: slots without their max, so the max stays per second.
    let (max, _) = max_of(&charts);
    assert_eq!(max.len(), 2, "{max:?}");
    // With each slot's longest latency: the max drawn at 0.1 s.
    let (max, title) = max_of(&charts_of(Some(2500.0)));
    assert_eq!(max.len(), 15, "one per slot, none past the end");
    assert!(max.iter().all(|p| (p.1 - 2.5).abs() < 1e-9));
    assert!(title.contains("max dotted per 0.1 s"), "{title}");
}

#[test]
fn a_paced_test_with_its_server_above_80_percent_is_flagged() {
    let mut runs = inputs(1);
    runs[0].facts.push(("--rps", "1000".into()));
    for p in &mut runs[0].tests[0].samples[0].detail.as_mut().unwrap().servers[0].points {
        p.main_thread_cpu_pct = Some(85.0);
    }
    let html = page(&runs, &Comparison::new(&runs, &Metric::ALL));
    assert!(html.contains("data-rule=\"cpu-80\""));
    assert!(html.contains("server CPU above 80% for 3 s"), "{html}");
}

#[test]
fn repetitions_are_a_median_with_its_spread() {
    let reps = vec![record(1000.0, 0), record(1100.0, 0), record(900.0, 0)];
    let inputs = vec![input_of("r".into(), vec!["r.json".into()], reps).unwrap()];
    let charts = charts::for_test(&inputs, "MSET (10 keys)");
    let tp = charts.iter().find(|c| c.kind == "throughput").unwrap();
    let labels: Vec<&str> = tp.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        ["r median of 3"],
        "one line, not one per repetition"
    );
    assert_eq!(tp.areas.len(), 1);
    assert!(tp.areas[0].label.contains("of 3 repetitions"));
    let lat = charts.iter().find(|c| c.kind == "latency").unwrap();
    assert_eq!(lat.series.len(), 2, "p50 and p99 medians");
    // The spectrum still has each repetition, named.
    let sp = charts.iter().find(|c| c.kind == "spectrum").unwrap();
    assert!(sp.series.iter().any(|s| s.label == "r #2 corrected"));
    let svg = crate::html::svg::render(tp);
    assert!(svg.contains("class=\"spread\""));
    // Beyond throughput and latency: the server's CPU as a band too, one point per second.
    let cpu = charts.iter().find(|c| c.kind == "server-cpu").unwrap();
    assert_eq!(cpu.areas.len(), 1);
    assert!(
        cpu.areas[0]
            .label
            .contains("server CPU: lowest to highest of 3 repetitions")
    );
    assert_eq!(
        cpu.areas[0].points,
        [(0.5, 55.0, 55.0), (1.5, 55.0, 55.0), (2.5, 55.0, 55.0)]
    );
}

#[test]
fn a_cluster_node_outage_is_its_own_band() {
    let mut runs = inputs(1);
    let d = runs[0].tests[0].samples[0].detail.as_mut().unwrap();
    d.node_outages.push(("127.0.0.1:7001".into(), 0.5, 1.7, 12));
    let html = page(&runs, &Comparison::new(&runs, &Metric::ALL));
    assert!(html.contains(r#"data-band="node-outage" data-start="0.5" data-end="1.7""#));
    assert!(html.contains(
        "cluster node 127.0.0.1:7001: connections lost from 0.5 s to 1.7 s, 12 requests lost"
    ));
}

#[test]
fn invalidations_per_second_are_drawn_only_for_a_test_that_received_some() {
    let inputs = inputs(1);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let chart = "data-chart=\"invalidations\"";
    assert!(
        !page(&inputs, &cmp).contains(chart),
        "none received: no chart"
    );
    let invalidations = |n: u64| serde_json::json!({"invalidations": n});
    let quiet = serde_json::json!({});
    let inputs = three_seconds("churn", [invalidations(12), quiet, invalidations(40)]);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    assert!(page(&inputs, &cmp).contains(chart), "the chart is there");
    let charts = super::charts::for_test(&inputs, "GET");
    let churn = charts.iter().find(|c| c.kind == "invalidations").unwrap();
    // Every second, a quiet one as zero (a count, not a missing figure).
    assert_eq!(
        churn.series[0].points,
        [(0.5, 12.0), (1.5, 0.0), (2.5, 40.0)]
    );
}

/// Sides of `rps` repetitions, each judged `kind` (the record's verdict).
fn judged(label: &str, rps: &[f64], kind: &str) -> Input {
    let runs = rps.iter().map(|&r| record(r, 0)).collect();
    let mut input = input_of(label.into(), vec![format!("{label}.json")], runs).unwrap();
    for s in input.tests.iter_mut().flat_map(|t| &mut t.samples) {
        s.limited_by = Some(kind.into());
    }
    input
}

#[test]
fn a_side_on_a_busy_machine_is_never_coloured_as_a_finding() {
    let page_of = |kind: &str| {
        let inputs = [
            judged("a", &[1000.0, 1010.0, 990.0], kind),
            judged("b", &[1100.0, 1110.0, 1090.0], kind),
        ];
        page(&inputs, &Comparison::new(&inputs, &Metric::ALL))
    };
    let quiet = page_of("neither");
    assert!(quiet.contains("<td class=\"better\">+10.00% better ["));
    assert!(quiet.contains("data-metric=\"rps\" data-finding=\"true\" data-verdict=\"finding\""));
    // The same figures, every repetition on a busy machine: shown, but neither green nor a
    // diamond, in the text output's words.
    let busy = page_of("machine-busy");
    assert!(!busy.contains("class=\"better\"") && !busy.contains("class=\"worse\""));
    assert!(
        busy.contains("<td class=\"unattributable\">+10.00% [+"),
        "{busy}"
    );
    assert!(
        busy.contains("data-metric=\"rps\" data-finding=\"false\" data-verdict=\"unattributable\"")
    );
    assert!(busy.contains("+10.0% can&#39;t tell: the machine was busy for a and b</text>"));
    assert!(busy.contains(
        "<p class=\"headline\">b vs a: MSET (10 keys) can&#39;t tell: the machine was busy for a and b</p>"
    ));
}

#[test]
fn the_forest_axis_is_a_ratio_in_percent_and_clips_wild_intervals() {
    let ticks = |html: &str| -> Vec<f64> {
        html.split("data-tick=\"")
            .skip(1)
            .map(|s| s[..s.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    // The trial's wild side: a repetition nine times another.
    let inputs = [
        judged("a", &[1000.0, 1010.0, 990.0], "neither"),
        judged("b", &[1000.0, 150.0, 9000.0], "neither"),
    ];
    let html = page(&inputs, &Comparison::new(&inputs, &[Metric::Rps]));
    let t = ticks(&html);
    assert_eq!(
        t,
        [-75.0, -50.0, 0.0, 100.0, 300.0],
        "a ratio of 4 either way"
    );
    assert!(html.contains(">-75%</text>") && html.contains(">+300%</text>"));
    assert!(html.contains("data-clip=\"lo\"") && html.contains("data-clip=\"hi\""));
    assert!(
        html.contains("too noisy to tell</text>"),
        "the text output's words"
    );
    // A quiet 10%: the axis spans a few percent, not hundreds.
    let inputs = [
        judged("a", &[1000.0, 1010.0, 990.0], "neither"),
        judged("b", &[1100.0, 1110.0, 1090.0], "neither"),
    ];
    let html = page(&inputs, &Comparison::new(&inputs, &[Metric::Rps]));
    let t = ticks(&html);
    assert!(t.contains(&0.0) && t.contains(&10.0), "{t:?}");
    assert!(t.iter().all(|&x| (-20.0..=20.0).contains(&x)), "{t:?}");
    assert!(!html.contains("data-clip="));
    assert!(html.contains("+10.0% better</text>"));
}

#[test]
fn a_long_report_is_navigable_and_its_overview_does_not_wrap_numbers() {
    let inputs = inputs(2);
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    // A table of contents under the runs, before the summary, linking each test's section.
    assert!(at("class=\"runs\"") < at("<nav class=\"toc\">"));
    assert!(at("<nav class=\"toc\">") < at("id=\"summary\""));
    let toc = &html[at("<nav class=\"toc\">")..];
    let toc = &toc[..toc.find("</nav>").unwrap()];
    assert!(toc.contains("href=\"#t0\">MSET (10 keys)</a>"), "{toc}");
    // Each test's section folded, its name the fold's summary.
    assert!(html.contains(
        "<section class=\"test\" id=\"t0\" data-test=\"MSET (10 keys)\"><details><summary><h2>"
    ));
    assert!(!html.contains("<details open"));
    // The overview's change: figure and judgement's first words, the rest as its tooltip.
    let overview = &html[at("<table class=\"overview\">")..];
    let overview = &overview[..overview.find("</table>").unwrap()];
    let cell = &overview[overview.find("chg\" title=\"").expect("a change cell")..];
    let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
    assert!(!text.contains(':') && !text.contains('('), "{text}");
    let fig = text
        .strip_prefix("<span class=\"fig\">")
        .expect("the figure first");
    let fig = &fig[..fig.find("</span>").unwrap()];
    assert!(fig.ends_with('%') && !fig.contains(' '), "{text}");
}

#[test]
fn a_test_under_a_second_has_figures_not_charts_of_one_dot() {
    let short = |i: u64| {
        input_of(
            format!("run{i}"),
            vec![format!("r{i}.json")],
            vec![record_of(1000.0, 0, 1)],
        )
        .unwrap()
    };
    let inputs = vec![short(0), short(1)];
    let cmp = Comparison::new(&inputs, &Metric::ALL);
    let html = page(&inputs, &cmp);
    for kind in ["server-cpu", "server-memory"] {
        assert!(
            !html.contains(&format!("<svg class=\"chart\" data-chart=\"{kind}\"")),
            "{kind} drawn as a chart"
        );
        assert!(
            html.contains(&format!(
                "<tr data-chart=\"{kind}\" data-test=\"MSET (10 keys)\">"
            )),
            "{kind} as figures"
        );
    }
    assert!(html.contains("Under a second: one figure per run"));
    // Its latency spectrum has points to draw: still a chart.
    assert!(html.contains("<svg class=\"chart\" data-chart=\"spectrum\""));
}
