//! One test's record, from what the run has: the merged `TestResult`, the template (for the
//! command names), what the server watch saw, and what the engine will supply later (timeline,
//! per-thread CPU, requests issued).

use std::collections::BTreeMap;

use crate::machine::Load;
use crate::metrics::thread_cpu::ThreadCpuUsage;
use crate::metrics::{Outcome, RedirectKind, TestResult};
use crate::verdict::{self, MachineLoad, OwnDemand, ServerCpu};
use crate::watch::{ServerInterval, Watched};
use crate::workload::Template;

use super::document::{
    Histograms, LatencyPair, LatencySplit, LatencySummary, MachineRecord, MixBytes, MixRecord,
    MixUncorrected, NodeOutageRecord, NodeRecord, Pushes, Requests, ServerTestRecord, TestRecord,
    VerdictRecord,
};
use super::server::server_record;
use super::timeline::{SecondRows, Timeline};

/// What the engine measures beyond `TestResult`, once it is wired (all optional until then).
#[derive(Clone, Copy, Debug, Default)]
pub struct TestExtras<'a> {
    /// The merged per-second timeline of the measured phase.
    pub timeline: Option<&'a Timeline>,
    /// The seconds as rows and slots instead (the journal's reader keeps no timeline): the
    /// record's timeline and outages come from these when given.
    pub rows: Option<&'a SecondRows>,
    /// Each worker thread's CPU over the measured phase.
    pub client_threads: Option<&'a [ThreadCpuUsage]>,
    /// Requests sent (including those never answered).
    pub issued: Option<u64>,
    /// `--repeat`: which run of the test this is (1-based).
    pub repetition: Option<u32>,
    /// Leave the HDR histogram strings empty: the record is not written anywhere.
    pub skip_histograms: bool,
    /// The machine over the test (`RunRecord` measures it between `begin_test` and `end_test`).
    pub machine: Option<Load>,
    /// The modes' blocks of the test (`--memory-per-key`/`--fill`'s: what the test's keys cost
    /// the server; a `--pubsub`/`--stream` test's, in the test record from the start so the
    /// journal's copy has it too).
    pub blocks: Option<&'a super::block::Blocks<{ super::block::TEST }>>,
}

impl<'a> TestExtras<'a> {
    /// Everything the engine measured beside the totals: the timeline, each worker thread's CPU
    /// and the commands it wrote.
    pub fn of(r: &'a TestResult) -> Self {
        Self {
            timeline: Some(&r.timeline),
            rows: None,
            client_threads: Some(&r.client_threads),
            issued: Some(r.issued),
            repetition: None,
            skip_histograms: false,
            machine: None,
            blocks: None,
        }
    }
}

/// The commands a template sends, lower case, first occurrence order.
pub fn command_names(t: &Template) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &t.layout {
        let bytes = match c.args.first() {
            Some(r) => &t.unit[r.clone()],
            // An inline command: its first word.
            None => t.unit[c.bytes.clone()]
                .split(|b| b.is_ascii_whitespace())
                .find(|w| !w.is_empty())
                .unwrap_or_default(),
        };
        let name = String::from_utf8_lossy(bytes).to_ascii_lowercase();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The test's record.
pub fn test_record(
    r: &TestResult,
    commands: Vec<String>,
    watched: &[Watched],
    extras: TestExtras,
) -> TestRecord {
    let server: Vec<ServerTestRecord> = watched
        .iter()
        .filter(|w| !w.samples.is_empty())
        .map(|w| server_record(w, &commands))
        .collect();
    let client_pct: Option<Vec<f64>> = extras
        .client_threads
        .map(|t| t.iter().map(ThreadCpuUsage::percent).collect());
    let runqueue_pct: Option<Vec<f64>> = extras
        .client_threads
        .and_then(|t| t.iter().map(ThreadCpuUsage::runqueue_percent).collect());
    let machine = machine_record(extras.machine.as_ref(), runqueue_pct.as_deref(), &server);
    TestRecord {
        name: r.title.clone(),
        started_at: None,
        repetition: extras.repetition,
        commands,
        outcome: match r.outcome {
            Outcome::Completed => "completed",
            Outcome::Interrupted(_) => "interrupted",
            Outcome::Aborted => "aborted",
        }
        .into(),
        requests: requests(r, extras.issued),
        pushes: Pushes {
            invalidations: r.pushes.invalidations,
            messages: r.pushes.messages,
            other: r.pushes.other,
        },
        duration_s: r.elapsed.as_secs_f64(),
        throughput_rps: r.throughput(),
        target_rps: r.target_rps,
        latency_us: LatencyPair {
            corrected: LatencySummary::of(&r.latency),
            uncorrected: LatencySummary::of(&r.latency_uncorrected),
        },
        histograms: if extras.skip_histograms {
            Histograms::default()
        } else {
            Histograms::of(&r.latency, &r.latency_uncorrected)
        },
        nodes: node_records(r, extras.skip_histograms),
        mix: mix_records(r, extras.skip_histograms),
        timeline: timeline_rows(r, &extras, &server),
        outages: super::timeline::outage_records(&match extras.rows {
            Some(seconds) => seconds.outages(r.elapsed, r.unanswered),
            None => crate::metrics::outage::outages(&r.timeline, r.elapsed, r.unanswered),
        }),
        verdict: verdict_record(
            r,
            &server,
            client_pct.as_deref(),
            runqueue_pct.as_deref(),
            machine.as_ref(),
        ),
        client_threads_cpu_pct: client_pct,
        client_threads_runqueue_pct: runqueue_pct,
        machine,
        blocks: extras.blocks.cloned().unwrap_or_default(),
        latency_split: latency_split(r, &server),
        client_delay_us: (!r.client_delay.is_empty()).then(|| LatencySummary::of(&r.client_delay)),
        client_seconds: super::client_seconds::of(&r.timeline.connections),
        server,
    }
}

/// The test's request counts: issued, answered, failed by kind, redirected, reconnected.
fn requests(r: &TestResult, issued: Option<u64>) -> Requests {
    Requests {
        issued,
        completed: r.completed,
        failed: r.errors.total(),
        errors: r
            .errors
            .sorted()
            .into_iter()
            .map(|(w, n)| (w.to_string(), n))
            .collect(),
        redirects: r.cluster.as_ref().map(|c| {
            RedirectKind::ALL
                .iter()
                .map(|k| (k.name().to_string(), c.redirects[*k as usize]))
                .collect::<BTreeMap<_, _>>()
        }),
        unanswered: r.unanswered,
        reconnect_attempts: r.reconnect_attempts,
        reconnects: r.reconnects,
        reconnect_refusals: Some(r.reconnect_refusals),
    }
}

/// Each cluster node's figures. As the report: nodes that answered nothing (replicas without
/// --rfr) are left out, unless they lost requests.
fn node_records(r: &TestResult, skip_histograms: bool) -> Vec<NodeRecord> {
    r.cluster
        .iter()
        .flat_map(|c| &c.nodes)
        // As the report: nodes that answered nothing (replicas without --rfr) are left out,
        // unless they lost requests.
        .filter(|n| n.completed > 0 || n.lost > 0 || n.outage.is_some())
        .map(|n| NodeRecord {
            address: n.address.clone(),
            role: n.role.map_or("unknown", crate::metrics::Role::name).into(),
            completed: n.completed,
            latency_us: LatencySummary::of(&n.latency),
            histogram: if skip_histograms {
                String::new()
            } else {
                super::hdr::encode(&n.latency)
            },
            lost: n.lost,
            outage: n.outage.map(|o| NodeOutageRecord {
                start_s: o.start.as_secs_f64(),
                end_s: o.end.map(|e| e.as_secs_f64()),
                duration_s: o.duration(r.elapsed).as_secs_f64(),
            }),
        })
        .collect()
}

/// Each command of a mix: counts, rate, latency (corrected and as sent), hits, bytes.
fn mix_records(r: &TestResult, skip_histograms: bool) -> Vec<MixRecord> {
    r.commands
        .iter()
        .map(|c| MixRecord {
            name: c.name.clone(),
            completed: c.completed,
            failed: c.errors,
            throughput_rps: if r.elapsed.is_zero() {
                0.0
            } else {
                c.completed as f64 / r.elapsed.as_secs_f64()
            },
            latency_us: LatencySummary::of(&c.latency),
            histogram: if skip_histograms {
                String::new()
            } else {
                super::hdr::encode(&c.latency)
            },
            hits: Some(c.hits.unwrap_or(c.completed - c.nils.min(c.completed))),
            misses: Some(c.nils),
            // Both histograms hold the same replies; a journal of an earlier build kept
            // only the corrected one.
            uncorrected: (c.uncorrected.len() == c.latency.len()).then(|| MixUncorrected {
                latency_us: LatencySummary::of(&c.uncorrected),
                histogram: if skip_histograms {
                    String::new()
                } else {
                    super::hdr::encode(&c.uncorrected)
                },
            }),
            // Counted where replies were (every request has bytes); a mode that counts
            // none (replay) leaves them at 0: absent then, not "no bytes".
            bytes: (c.bytes)
                .filter(|&(tx, _)| tx > 0 || c.completed == 0)
                .map(|(tx, rx)| MixBytes { tx, rx }),
        })
        .collect()
}

/// The record's timeline: from the seconds as rows (the journal's reader) or the engine's
/// timeline, with the servers' intervals and the cluster's redirects per second.
fn timeline_rows(
    r: &TestResult,
    extras: &TestExtras,
    server: &[ServerTestRecord],
) -> Vec<super::timeline::TimelineRow> {
    let intervals: Vec<Vec<ServerInterval>> = server.iter().map(|s| s.seconds.clone()).collect();
    let mut rows = match (extras.rows, extras.timeline) {
        (Some(seconds), _) => seconds.rows(&intervals),
        (None, Some(t)) => super::timeline::rows(t, &intervals),
        (None, None) => Vec::new(),
    };
    if let Some(c) = &r.cluster {
        super::timeline::add_redirects(&mut rows, &c.timeline);
    }
    rows
}

/// The test's average latency split into the server's time per call (calls-weighted over every
/// watched server's commands), the client's sampled delay where measured, and the rest; `None`
/// without commandstats or calls.
fn latency_split(r: &TestResult, server: &[ServerTestRecord]) -> Option<LatencySplit> {
    let (calls, usec) = server
        .iter()
        .flat_map(|s| &s.commands)
        .fold((0u64, 0u64), |(c, u), t| (c + t.calls, u + t.usec));
    if calls == 0 || r.latency_uncorrected.is_empty() {
        return None;
    }
    let avg_us = r.latency_uncorrected.mean_ns() / 1e3;
    let client = (!r.client_delay.is_empty()).then(|| r.client_delay.mean_ns() / 1e3);
    Some(LatencySplit::of(avg_us, usec as f64 / calls as f64, client))
}

/// Whether a watched server runs on this machine: a unix socket, or a loopback address. Only
/// then do "other processes" mean the machine's CPU minus respbench's and the server's.
fn is_local(address: &str) -> bool {
    let host = match address.rsplit_once(':') {
        _ if address.starts_with('/') => return true,
        Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']'),
        None => address,
    };
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The record's machine block: the machine's figures, respbench's worst run-queue wait and,
/// when every watched server is local, the CPU other processes took.
fn machine_record(
    load: Option<&Load>,
    runqueue: Option<&[f64]>,
    server: &[ServerTestRecord],
) -> Option<MachineRecord> {
    let client_max_runqueue_pct = runqueue.and_then(|w| w.iter().copied().reduce(f64::max));
    if load.is_none() && client_max_runqueue_pct.is_none() {
        return None;
    }
    let l = load.copied().unwrap_or_default();
    let local = !server.is_empty() && server.iter().all(|s| is_local(&s.address));
    let servers_pct: Option<f64> = server.iter().map(|s| s.cpu_pct).sum();
    let others_cpu_pct = servers_pct.filter(|_| local).and_then(|s| l.others_pct(s));
    let mut m = MachineRecord {
        cpu_pressure_some_pct: l.cpu_pressure_some_pct,
        cpu_pressure_full_pct: l.cpu_pressure_full_pct,
        steal_pct: l.steal_pct,
        busy_pct: l.busy_pct.map(|b| b / l.cores.max(1) as f64),
        respbench_cpu_pct: l.respbench_pct,
        others_cpu_pct,
        client_max_runqueue_pct,
        cores: l.cores,
        respbench_cores: (l.respbench_cores > 0).then_some(l.respbench_cores),
        measured: Vec::new(),
    };
    for (name, known) in [
        ("cpu_pressure", m.cpu_pressure_some_pct.is_some()),
        ("steal", m.steal_pct.is_some()),
        ("busy", m.busy_pct.is_some()),
        ("respbench_cpu", m.respbench_cpu_pct.is_some()),
        ("others_cpu", m.others_cpu_pct.is_some()),
        ("client_runqueue", m.client_max_runqueue_pct.is_some()),
    ] {
        if known {
            m.measured.push(name.into());
        }
    }
    Some(m)
}

fn verdict_record(
    r: &TestResult,
    server: &[ServerTestRecord],
    client: Option<&[f64]>,
    runqueue: Option<&[f64]>,
    machine: Option<&MachineRecord>,
) -> VerdictRecord {
    let servers: Vec<ServerCpu> = server
        .iter()
        .map(|s| ServerCpu {
            steady_pct: s.steady_cpu_pct,
            main_thread_pct: s.main_thread_cpu_pct,
            process_pct: s.cpu_pct,
            busy_pct: s.command_busy_pct,
        })
        .collect();
    let rate = r.target_rps.map(|t| (t as f64, r.throughput()));
    let machine = machine.map_or_else(MachineLoad::default, |m| MachineLoad {
        client_runqueue_pct: m.client_max_runqueue_pct,
        cpu_pressure_some_pct: m.cpu_pressure_some_pct,
        steal_pct: m.steal_pct,
        others_pct: m.others_cpu_pct,
        machine_busy_pct: m.busy_pct,
        own: OwnDemand {
            runqueue_sum_pct: runqueue.map(|w| w.iter().sum()),
            respbench_cpu_pct: m.respbench_cpu_pct,
            local_server_cpu_pct: server
                .iter()
                .filter(|s| is_local(&s.address))
                .filter_map(|s| s.cpu_pct)
                .sum(),
            cores: m.cores,
            respbench_cores: m.respbench_cores.unwrap_or(0),
        },
    });
    let seconds = r.elapsed.as_secs_f64();
    let j = if seconds < verdict::slots::UNDER_SECONDS {
        let whole = verdict::slots::WholeTest {
            servers: &servers,
            client_threads_pct: client,
            rate,
            seconds,
            machine,
        };
        verdict::slots::judge(&whole, &slot_figures(&r.timeline))
    } else {
        verdict::judge(&servers, client, rate, seconds, machine)
    };
    VerdictRecord {
        kind: j.verdict,
        reason: j.reason,
        server_cpu_pct: j.server_cpu_pct,
        server_busy_pct: j.server_busy_pct,
        client_max_thread_cpu_pct: j.client_max_thread_cpu_pct,
    }
}

/// The timeline's slots that have respbench's CPU figures, in order (a sub-second test's
/// verdict is drawn from them).
fn slot_figures(t: &Timeline) -> Vec<verdict::slots::SlotFigures> {
    t.seconds
        .iter()
        .flat_map(|s| &s.slots)
        .filter_map(|s| {
            Some(verdict::slots::SlotFigures {
                client_cpu_pct: s.client_cpu_pct()?,
                runqueue_pct: s.client_runqueue_pct(),
                client_delay_us: s.client_delay_avg_ns().map(|ns| ns / 1000.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::template::parse_custom_command;

    fn template(line: &[&str]) -> Template {
        let args: Vec<Vec<u8>> = line.iter().map(|a| a.as_bytes().to_vec()).collect();
        let items = parse_custom_command(&args, None, 3, &mut Default::default()).unwrap();
        Template::encode(&items, false)
    }

    #[test]
    fn command_names_of_a_sequence() {
        let t = template(&["set", "k", "v", ";", "2", "GET", "k", ";", "set", "a", "b"]);
        assert_eq!(command_names(&t), ["set", "get"]);
    }

    #[test]
    fn verdict_uses_the_busiest_node_main_thread() {
        use crate::record::server::tests::sample;
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        r.completed = 1;
        r.elapsed = std::time::Duration::from_secs(2);
        let busy = Watched {
            address: "a".into(),
            samples: vec![sample(0, 0.0, 0), sample(1, 1.1, 0)],
            ..Watched::default()
        };
        let idle = Watched {
            address: "b".into(),
            samples: vec![sample(0, 0.0, 0), sample(1, 0.1, 0)],
            ..Watched::default()
        };
        let rec = test_record(&r, vec![], &[idle, busy], TestExtras::default());
        assert_eq!(rec.verdict.kind, crate::verdict::Verdict::ServerBound);
        assert!((rec.verdict.server_cpu_pct.unwrap() - 99.0).abs() < 1e-9);
        assert_eq!(rec.verdict.client_max_thread_cpu_pct, None);
        assert!(rec.timeline.is_empty());
        assert_eq!(rec.server.len(), 2);
    }
}
