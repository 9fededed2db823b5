//! memtier_benchmark's `--json-out-file`: `"ALL STATS"` holds one object per command kind
//! (`Sets`, `Gets`, `Waits`, ...) and `Totals`, each with `Ops/sec`, latencies in milliseconds and
//! `Percentile Latencies` (`p50.00`, `p99.00`, `p99.90`; p95 only when memtier wrote its
//! histogram). A run maps to tests named by the kind in upper case without the plural `s`
//! (`SET`, `GET`, `WAIT`, in that order, others after them) and `TOTALS` last; kinds with no
//! requests are left out.
//!
//! Reading a peer tool's file is `compare`'s own job (as valkey-benchmark's CSV is, `csv.rs`):
//! this reads the JSON memtier_benchmark — the other program — writes (respbench's memtier mode
//! writes the same), and imports nothing of the mode; so it is named for what it reads, a peer
//! tool's JSON, and stays below the modes.

use serde_json::Value;

use super::spectrum;
use super::{Detail, FileRun, Format, Sample, SecondRow};

/// Reads the whole document.
pub fn read(doc: &Value) -> Result<FileRun, String> {
    let all = results(doc).ok_or("memtier JSON: \"ALL STATS\" is not an object")?;
    let mut tests = Vec::new();
    for (key, stats) in all {
        if stats.get("Ops/sec").is_none() {
            continue; // `Runtime`, and the per-command percentile lists (`SET`: [...]).
        }
        let count = num(stats, "Count").unwrap_or(0.0);
        if count <= 0.0 {
            continue;
        }
        tests.push((test_name(key), sample(key, stats, count)?));
    }
    // JSON objects come back sorted by key; memtier's own order is Sets, Gets, Waits, Totals.
    let rank = |n: &str| {
        ["SET", "GET", "WAIT"]
            .iter()
            .position(|k| *k == n)
            .unwrap_or(if n == "TOTALS" { 4 } else { 3 })
    };
    tests.sort_by_key(|t| rank(&t.0));
    if tests.is_empty() {
        return Err("memtier JSON without any requests in \"ALL STATS\"".into());
    }
    Ok(FileRun::of_tests(Format::Memtier, tests))
}

/// The results block: `ALL STATS`, or with `--run-count` the `AGGREGATED AVERAGE RESULTS (N
/// runs)` block (memtier writes no `ALL STATS` then).
pub fn results(doc: &Value) -> Option<&serde_json::Map<String, Value>> {
    let all = doc.get("ALL STATS").or_else(|| {
        let obj = doc.as_object()?;
        obj.iter()
            .find(|(k, _)| k.starts_with("AGGREGATED AVERAGE RESULTS"))
            .map(|(_, v)| v)
    });
    all.and_then(Value::as_object)
}

/// `Sets` → `SET`, `Totals` → `TOTALS`.
fn test_name(key: &str) -> String {
    let upper = key.to_ascii_uppercase();
    match upper.strip_suffix('S') {
        Some(stem) if upper != "TOTALS" && !stem.is_empty() => stem.to_string(),
        _ => upper,
    }
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// One kind's figures, in microseconds.
fn sample(key: &str, stats: &Value, count: f64) -> Result<Sample, String> {
    let ms = |k: &str| num(stats, k).map(|v| v * 1000.0);
    let pct = stats.get("Percentile Latencies");
    let pms = |k: &str| pct.and_then(|p| num(p, k)).map(|v| v * 1000.0);
    // memtier 2.x writes `Average Latency` 0 for Totals; its accumulated latency is right.
    let avg = ms("Average Latency")
        .filter(|&v| v > 0.0)
        .or_else(|| ms("Accumulated Latency").map(|acc| acc / count));
    // memtier records its histogram in microseconds.
    let hist = pct
        .and_then(|p| p.get("Histogram log format"))
        .and_then(|h| h.get("Compressed Histogram"))
        .and_then(Value::as_str)
        .and_then(crate::record::hdr::decode);
    let rps = num(stats, "Ops/sec")
        .ok_or_else(|| format!("memtier JSON: \"{key}\" has no number \"Ops/sec\""))?;
    Ok(Sample {
        rps,
        avg,
        min: ms("Min Latency"),
        p50: pms("p50.00"),
        p95: hist.as_ref().map(|h| h.value_at_quantile(0.95) as f64),
        p99: pms("p99.00"),
        max: ms("Max Latency"),
        detail: Some(Box::new(Detail {
            timeline: timeline(stats),
            spectrum_corrected: hist
                .as_ref()
                .map(|h| spectrum::points(h, 1.0))
                .unwrap_or_default(),
            ..Detail::default()
        })),
        mix: Vec::new(),
        limited_by: None,
        sent: None,
    })
}

/// `Time-Serie`: one object per second (`"0"`, `"1"`, ...), latencies in milliseconds; the last
/// one is often an empty second after the run, which is dropped.
fn timeline(stats: &Value) -> Vec<SecondRow> {
    let Some(series) = stats.get("Time-Serie").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut rows: Vec<SecondRow> = series
        .iter()
        .filter_map(|(k, v)| {
            let ms = |key: &str| num(v, key).unwrap_or(0.0) * 1000.0;
            Some(SecondRow {
                span: 1.0,
                second: k.parse().ok()?,
                completed: num(v, "Count")? as u64,
                failed: 0,
                p50: ms("p50.00"),
                p99: ms("p99.00"),
                max: ms("Max Latency"),
                ..SecondRow::default()
            })
        })
        .collect();
    rows.sort_by(|a, b| a.second.total_cmp(&b.second));
    while rows.last().is_some_and(|r| r.completed == 0) {
        rows.pop();
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_ratio_run_becomes_set_get_and_totals() {
        let run = read(&fixture("memtier-ratio-1-10.json")).unwrap();
        let names: Vec<_> = run.tests.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["SET", "GET", "TOTALS"], "Waits has no requests");
        let set = &run.tests[0].1;
        assert_eq!(set.rps, 3984.19);
        assert_eq!(set.avg, Some(115.0));
        assert_eq!(set.min, Some(24.0));
        assert_eq!(set.p50, Some(103.0));
        assert_eq!(set.p99, Some(359.0));
        // --hide-histogram hides memtier's stdout listing only; the file has the histogram.
        let p95 = set.p95.unwrap();
        assert!(p95 > 103.0 && p95 < 359.0, "{p95}");
        assert_eq!(set.max, Some(4543.0));
        let totals = &run.tests[2].1;
        let avg = totals.avg.unwrap();
        assert!((avg - 14864.0 / 131472.0 * 1000.0).abs() < 1e-9, "{avg}");
        let tl = &set.detail.as_ref().unwrap().timeline;
        assert_eq!(tl.len(), 3, "the empty 4th second is dropped");
        assert_eq!(tl[1].completed, 3656);
    }

    #[test]
    fn the_histogram_gives_p95_and_a_spectrum() {
        let run = read(&fixture("memtier-ratio-1-1-histogram.json")).unwrap();
        let set = &run.tests[0].1;
        let p95 = set.p95.unwrap();
        assert!(
            p95 > set.p50.unwrap() && p95 < set.p99.unwrap() * 1.01,
            "{p95}"
        );
        let spectrum = &set.detail.as_ref().unwrap().spectrum_corrected;
        assert!(!spectrum.is_empty());
        let (q, max) = *spectrum.last().unwrap();
        assert_eq!(q, 1.0);
        assert!((max - 3327.0).abs() / 3327.0 < 0.01, "{max}");
    }

    #[test]
    fn a_run_count_file_reads_its_aggregate() {
        let path = format!(
            "{}/tests/fixtures/memtier/memtier-run-count-3.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let run = read(&doc).unwrap();
        let names: Vec<&str> = run.tests.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["SET", "GET", "TOTALS"]);
    }

    #[test]
    fn names() {
        assert_eq!(test_name("Sets"), "SET");
        assert_eq!(test_name("Totals"), "TOTALS");
        assert_eq!(test_name("Scan"), "SCAN");
    }
}
