//! One server's figures over a test (the record's `server` entries): CPU over the whole test,
//! its busiest second and its steady state, memory and clients, commandstats and latency
//! percentiles, from what the watch sampled. Apart from `build` because the storm's block and
//! the journal's reader build these too, and `build` needs the document they belong to.

use crate::watch::commandstats::{self, CommandTime};
use crate::watch::{ServerInterval, ServerSample, Watched};

use super::summary::{Range, ServerTestRecord};

/// Intervals at least this long count as full seconds (a sample may come a little early or
/// late; the last, cut-short interval is where the load winds down).
const FULL_INTERVAL_SECS: f64 = 0.9;

/// The limiting CPU over the full intervals, weighted by their length.
fn steady_cpu(seconds: &[ServerInterval]) -> Option<f64> {
    let full: Vec<&ServerInterval> = seconds
        .iter()
        .filter(|i| i.secs >= FULL_INTERVAL_SECS)
        .collect();
    let secs: f64 = full.iter().map(|i| i.secs).sum();
    (secs > 0.0).then(|| {
        full.iter()
            .map(|i| i.limiting_cpu_pct() * i.secs)
            .sum::<f64>()
            / secs
    })
}

/// One server's figures over a test from its samples and commandstats.
pub fn server_record(w: &Watched, commands: &[String]) -> ServerTestRecord {
    let s = &w.samples;
    let seconds = ServerInterval::series(s);
    let whole = ServerInterval::whole(s);
    let range = |f: fn(&ServerSample) -> u64| {
        let (first, last) = (s.first()?, s.last()?);
        Some(Range {
            start: f(first),
            peak: s.iter().map(f).max().unwrap_or(0),
            end: f(last),
        })
    };
    let times: Vec<CommandTime> = match (&w.commandstats_before, &w.commandstats_after) {
        (Some(b), Some(a)) => commandstats::diff(b, a, commands),
        _ => Vec::new(),
    };
    ServerTestRecord {
        address: w.address.clone(),
        cpu_pct: whole.map(|i| i.cpu_pct),
        main_thread_cpu_pct: whole.and_then(|i| i.main_thread_cpu_pct),
        peak_second_cpu_pct: seconds
            .iter()
            .map(ServerInterval::limiting_cpu_pct)
            .reduce(f64::max),
        steady_cpu_pct: steady_cpu(&seconds),
        used_memory: range(|x| x.used_memory),
        used_memory_rss: range(|x| x.used_memory_rss),
        connected_clients_peak: s.iter().map(|x| x.connected_clients).max(),
        counters: whole.map(|i| i.counters).unwrap_or_default(),
        fork_seen: s.iter().any(|x| x.fork_in_progress),
        partial: w.lost || w.gaps > 0,
        watch_gaps: w.gaps,
        command_busy_pct: match (s.first(), s.last()) {
            (Some(a), Some(b)) if b.at > a.at && !times.is_empty() => {
                let usec: u64 = times.iter().map(|t| t.usec).sum();
                Some(usec as f64 / 1e6 / (b.at - a.at).as_secs_f64() * 100.0)
            }
            _ => None,
        },
        usec_per_call: commandstats::usec_per_call(&times),
        latency_percentiles: w
            .latencystats
            .as_deref()
            .map(|t| commandstats::parse_latency(t, commands))
            .unwrap_or_default(),
        commands: times,
        seconds,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::watch::commandstats::CommandCounters;

    pub(crate) fn sample(at: u64, cpu: f64, mem: u64) -> ServerSample {
        ServerSample {
            at: Duration::from_secs(at),
            cpu_user: cpu,
            cpu_main: Some(cpu * 0.9),
            used_memory: mem,
            ..ServerSample::default()
        }
    }

    #[test]
    fn server_figures_over_a_test() {
        let counters = |calls, usec| {
            Some(vec![CommandCounters {
                name: "set".into(),
                calls,
                usec,
            }])
        };
        let w = Watched {
            address: "h:1".into(),
            samples: vec![
                sample(0, 1.0, 100),
                sample(1, 1.5, 300),
                sample(2, 2.5, 200),
            ],
            commandstats_before: counters(10, 100),
            commandstats_after: counters(1010, 2100),
            latencystats: Some("latency_percentiles_usec_set:p50=1.003,p99=2.007\r\n".into()),
            lost: false,
            gaps: 0,
            ..Watched::default()
        };
        let s = server_record(&w, &["set".to_string()]);
        assert!((s.cpu_pct.unwrap() - 75.0).abs() < 1e-9);
        assert_eq!(s.latency_percentiles[0].percentiles_usec["p99"], 2.007);
        assert!((s.main_thread_cpu_pct.unwrap() - 67.5).abs() < 1e-9);
        assert!((s.peak_second_cpu_pct.unwrap() - 90.0).abs() < 1e-9);
        // Both intervals are full seconds: (45 + 90) / 2.
        assert!((s.steady_cpu_pct.unwrap() - 67.5).abs() < 1e-9);
        // 2000 µs of SET in 2 s of wall time.
        assert!((s.command_busy_pct.unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(
            s.used_memory,
            Some(Range {
                start: 100,
                peak: 300,
                end: 200
            })
        );
        assert_eq!(s.seconds.len(), 2);
        assert_eq!(s.commands[0].calls, 1000);
        assert_eq!(s.usec_per_call, Some(2.0));
        assert!(!s.partial);
    }

    #[test]
    fn steady_cpu_leaves_out_the_cut_short_last_interval() {
        let seconds = [
            ServerInterval {
                secs: 1.0,
                cpu_pct: 95.0,
                ..ServerInterval::default()
            },
            ServerInterval {
                secs: 1.0,
                cpu_pct: 93.0,
                main_thread_cpu_pct: Some(91.0),
                ..ServerInterval::default()
            },
            ServerInterval {
                secs: 0.4,
                cpu_pct: 20.0,
                ..ServerInterval::default()
            },
        ];
        assert!((steady_cpu(&seconds).unwrap() - 93.0).abs() < 1e-9);
        assert_eq!(steady_cpu(&seconds[2..]), None, "no full second");
    }
}
