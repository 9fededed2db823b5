//! memtier's `--hdr-file-prefix` files, per run: `PREFIX_FULL_RUN_N` and
//! `PREFIX_<CMD>_command_run_N`, each as `.txt` (HdrHistogram's percentile distribution, values
//! in ms) and `.hgrm` (a histogram log, version 1.2, one interval with the V2 compressed
//! histogram in µs), the names and contents memtier writes (shared/fixtures/memtier).
//!
//! Made from the record's histograms (nanoseconds): the Totals histogram is the time from send
//! to reply, memtier's meaning; a command's is its own (corrected) one.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::metrics::LatencyHistogram;
use crate::record::{TestRecord, atomic, hdr};

use super::stats::sent_latency;

/// The first file a run writes (run 1's `FULL_RUN` distribution), to check before the run that
/// its directory takes files.
pub fn first_path(prefix: &Path) -> PathBuf {
    PathBuf::from(format!("{}_FULL_RUN_1.txt", prefix.display()))
}

/// Writes the files of run `run` (from 1) of `t`, each whole or not at all (`record::atomic`: an
/// earlier file of that name stays until the new one replaces it); returns the lines memtier
/// prints on stderr.
pub fn write(prefix: &Path, run: usize, t: &TestRecord, start_s: f64) -> io::Result<Vec<String>> {
    let mut notes = Vec::new();
    let mut files = vec![(
        "Full Run".to_string(),
        format!("FULL_RUN_{run}"),
        t.histograms.uncorrected.as_str(),
    )];
    for m in &t.mix {
        let name = m.name.replace('#', "_");
        files.push((
            format!("{name} command"),
            format!("{name}_command_run_{run}"),
            sent_latency(m).1,
        ));
    }
    for (title, suffix, encoded) in files {
        let Some(ns) = hdr::decode(encoded).filter(|h| !h.is_empty()) else {
            continue;
        };
        let us = micros(&ns);
        let base = format!("{}_{suffix}", prefix.display());
        let txt = format!("{base}.txt");
        atomic::write(Path::new(&txt), distribution(us.raw()).as_bytes())
            .map_err(|e| atomic::naming(Path::new(&txt), e))?;
        notes.push(format!(
            "Writing {title} HDR latency histogram results to {txt}..."
        ));
        let hgrm = format!("{base}.hgrm");
        atomic::write(
            Path::new(&hgrm),
            log(&title, &us, start_s, t.duration_s).as_bytes(),
        )
        .map_err(|e| atomic::naming(Path::new(&hgrm), e))?;
        notes.push(format!(
            "Writing {title} HDR latency histogram results in HistogramLogProcessor format to {hgrm}..."
        ));
    }
    Ok(notes)
}

/// The same samples in microseconds, memtier's unit.
pub(super) fn micros(ns: &Histogram<u64>) -> LatencyHistogram {
    let mut us = LatencyHistogram::new();
    for v in ns.iter_recorded() {
        us.record_n(
            ns.highest_equivalent(v.value_iterated_to()) / 1000,
            v.count_at_value(),
        );
    }
    us
}

/// HdrHistogram's percentile distribution (5 ticks per half distance), values in ms.
fn distribution(h: &Histogram<u64>) -> String {
    let mut out = String::from("       Value   Percentile   TotalCount 1/(1-Percentile)\n\n");
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0;
        let inverse = if q < 1.0 {
            format!("{:12.2}", 1.0 / (1.0 - q))
        } else {
            format!("{:>12}", "inf")
        };
        let _ = writeln!(out, "{value:12.2} {q:12.6} {total:12} {inverse}");
    }
    let sub_buckets = (2 * 10u64.pow(u32::from(h.sigfig()))).next_power_of_two();
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / 1000.0,
        h.stdev() / 1000.0
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / 1000.0,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// A histogram log with one interval: the whole run.
fn log(title: &str, us: &LatencyHistogram, start_s: f64, duration_s: f64) -> String {
    format!(
        "#[{title} HDR latency histogram results]\n#[Histogram log format version 1.2]\n\
         #[StartTime: {start_s:.3} (seconds since epoch)]\n\
         \"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
         {start_s:.3},{:.3},{:.1},{}\n",
        start_s + duration_s,
        us.max_ns() as f64,
        crate::record::hdr::encode(us)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distribution_has_memtiers_columns_in_ms() {
        let mut ns = LatencyHistogram::new();
        for v in [30_000u64, 50_000, 50_000, 207_000] {
            ns.record(v);
        }
        let us = micros(ns.raw());
        let text = distribution(us.raw());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value   Percentile   TotalCount 1/(1-Percentile)"
        );
        assert_eq!(
            lines[2],
            "        0.03     0.000000            1         1.00"
        );
        assert!(text.contains("         inf\n"), "{text}");
        assert!(text.contains("Total count    =            4]"), "{text}");
        let log = log("Full Run", &us, 1.5, 2.0);
        assert!(log.contains("\n1.500,3.500,207.0,HISTF"), "{log}");
    }
}
