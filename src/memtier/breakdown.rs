//! `--command-stats-breakdown=command|line`: memtier's rows for `--command`s. By `command` (its
//! default) the lines of one command (`GET foo`, `GET bar`) are one row, their counts added and
//! their latencies from the added histograms; by `line` each keeps its own row (respbench names
//! the second `Get#2s`, as JSON keys must differ; memtier's table prints `Gets` twice).
//!
//! Only memtier's output is grouped: respbench's own record keeps every line's figures.

use std::borrow::Cow;

use crate::metrics::LatencyHistogram;
use crate::record::document::{LatencySummary, MixBytes, MixRecord};
use crate::record::{Document, hdr};

/// The document memtier's output is written from: `doc` itself by line, else with each test's
/// mix grouped by command name.
pub fn for_output(doc: &Document, by_line: bool) -> Cow<'_, Document> {
    let split = |t: &crate::record::TestRecord| t.mix.iter().any(|m| m.name.contains('#'));
    if by_line || !doc.tests.iter().any(split) {
        return Cow::Borrowed(doc);
    }
    let mut grouped = doc.clone();
    for t in &mut grouped.tests {
        t.mix = by_command(&t.mix);
    }
    Cow::Owned(grouped)
}

/// The command of a mix entry's name (`GET#2` → `GET`).
fn command(name: &str) -> &str {
    name.split('#').next().unwrap_or(name)
}

/// The mix with entries of one command merged, in first-seen order.
pub fn by_command(mix: &[MixRecord]) -> Vec<MixRecord> {
    let mut out: Vec<MixRecord> = Vec::new();
    // Per merged entry: its corrected and its uncorrected histogram (`None` once a line lacks it).
    let mut hists: Vec<[Option<LatencyHistogram>; 2]> = Vec::new();
    for m in mix {
        let name = command(&m.name);
        let uncorrected = || m.uncorrected.as_ref().and_then(|u| decoded(&u.histogram));
        let Some(i) = out.iter().position(|o| o.name == name) else {
            out.push(MixRecord {
                name: name.to_string(),
                ..m.clone()
            });
            hists.push([decoded(&m.histogram), uncorrected()]);
            continue;
        };
        let o = &mut out[i];
        o.completed += m.completed;
        o.failed += m.failed;
        o.throughput_rps += m.throughput_rps;
        o.hits = add(o.hits, m.hits);
        o.misses = add(o.misses, m.misses);
        o.bytes = o.bytes.zip(m.bytes).map(|(a, b)| MixBytes {
            tx: a.tx + b.tx,
            rx: a.rx + b.rx,
        });
        let [corrected, sent] = &mut hists[i];
        match (corrected.as_mut(), decoded(&m.histogram)) {
            (Some(h), Some(more)) => h.merge(&more),
            // A record without histograms: the busier line's summary stands for both.
            _ => {
                *corrected = None;
                if m.latency_us.count > o.latency_us.count {
                    o.latency_us = m.latency_us.clone();
                }
            }
        }
        match (sent.as_mut(), uncorrected()) {
            (Some(h), Some(more)) => h.merge(&more),
            _ => {
                *sent = None;
                o.uncorrected = None;
            }
        }
    }
    for (o, [corrected, sent]) in out.iter_mut().zip(hists) {
        if let Some(h) = corrected.filter(|h| !h.is_empty()) {
            o.latency_us = LatencySummary::of(&h);
            o.histogram = hdr::encode(&h);
        }
        if let (Some(u), Some(h)) = (o.uncorrected.as_mut(), sent.filter(|h| !h.is_empty())) {
            u.latency_us = LatencySummary::of(&h);
            u.histogram = hdr::encode(&h);
        }
    }
    out
}

fn decoded(text: &str) -> Option<LatencyHistogram> {
    let mut h = LatencyHistogram::new();
    (!text.is_empty() && hdr::add_encoded(&mut h, text, "mix").is_ok()).then_some(h)
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, latencies_us: &[u64], hits: u64) -> MixRecord {
        let mut h = LatencyHistogram::new();
        for &l in latencies_us {
            h.record(l * 1000);
        }
        MixRecord {
            name: name.into(),
            completed: latencies_us.len() as u64,
            throughput_rps: latencies_us.len() as f64,
            latency_us: LatencySummary::of(&h),
            histogram: hdr::encode(&h),
            hits: Some(hits),
            misses: Some(0),
            ..MixRecord::default()
        }
    }

    #[test]
    fn lines_of_one_command_are_one_row_with_the_added_histograms() {
        let mix = [
            entry("SET", &[10, 10], 0),
            entry("GET", &[100, 100], 2),
            entry("SET#2", &[30], 0),
            entry("GET#2", &[300, 300], 1),
        ];
        let grouped = by_command(&mix);
        let names: Vec<&str> = grouped.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["SET", "GET"]);
        let get = &grouped[1];
        assert_eq!(
            (get.completed, get.hits, get.throughput_rps),
            (4, Some(3), 4.0)
        );
        assert_eq!(get.latency_us.count, 4);
        assert!(
            (get.latency_us.avg - 200.0).abs() < 1.0,
            "{:?}",
            get.latency_us
        );
        assert!(get.latency_us.max >= 299.0 && get.latency_us.min <= 101.0);
        let mut back = LatencyHistogram::new();
        hdr::add_encoded(&mut back, &get.histogram, "get").unwrap();
        assert_eq!(back.len(), 4, "the histogram is the two lines' together");
    }
}
