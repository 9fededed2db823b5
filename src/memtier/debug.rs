//! memtier's `-D`/`--debug` and `--show-config` (issue 23), printed before the run.
//!
//! memtier's `-D` logs its connections' events as they happen; respbench's workers do not log
//! from the hot path, so `-D` says instead what the memtier line became in respbench's terms
//! (connections, threads, requests, the mix's commands and weights, reconnect and connect
//! settings, the prefix commands) — what a user debugging a translated script needs. Secrets are
//! never in it: the prefix is named by command (`AUTH`), not written out.

use crate::cli::Endpoint;
use crate::engine::Stop;
use crate::plan::{MixSource, RunPlan, Workload};

/// The `-D` lines (each starts with `debug: `).
pub fn lines(plan: &RunPlan) -> String {
    let l = &plan.load;
    let target = match &plan.endpoint {
        Endpoint::Tcp { host, port } => format!("{host}:{port}"),
        Endpoint::Unix(p) => p.display().to_string(),
    };
    let mut out = vec![
        format!(
            "target {target}{}{}",
            if plan.tls.is_some() { " over TLS" } else { "" },
            match plan.family {
                Some(crate::engine::Family::V4) => " (IPv4 only)",
                Some(crate::engine::Family::V6) => " (IPv6 only)",
                None => "",
            }
        ),
        format!(
            "{} connections on {} threads, pipeline {}",
            l.clients, l.workers, l.pipeline
        ),
        match l.stop {
            Stop::Requests(n) => format!("{n} requests in all"),
            Stop::After(d) => format!("for {} s", d.as_secs()),
        },
        format!(
            "prefix commands on each connection: {}",
            if plan.prefix.commands.is_empty() {
                "none".to_string()
            } else {
                plan.prefix.commands.join(", ")
            }
        ),
    ];
    if let Some(rps) = l.rps {
        out.push(format!("paced at {rps} requests/s in all"));
    }
    if let Some(n) = l.reconnect_interval {
        out.push(format!("each connection reopened after {n} requests"));
    }
    if let Some(t) = plan.connect_timeout {
        out.push(format!("connect timeout {} s", t.as_secs()));
    }
    if l.conn_start_jitter_us.1 > 0 {
        let (lo, hi) = l.conn_start_jitter_us;
        out.push(format!(
            "pause of {lo}-{hi} µs before each connection's set-up"
        ));
    }
    if let Workload::Mix { commands, .. } = &plan.workload {
        for c in commands {
            let what = match &c.source {
                MixSource::Suite(t) => t.name.to_string(),
                MixSource::Line(args) => crate::redact::command(args),
            };
            out.push(format!("mix: {} weight {} ({what})", c.name, c.weight));
        }
    }
    out.iter().map(|l| format!("debug: {l}\n")).collect()
}
