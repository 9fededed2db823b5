//! The text report of a connection storm (`--connect-storm`), from the record's `storm` block,
//! so a run and `respbench report` on its record print the same.

use std::io::{self, Write};

use super::block::{StageRecord, StormRecord};

/// Writes the storm's report: what ran, connects per second, the stage table (the stages add up
/// to the total), failures by stage and kind with the client's limits apart, the server's side.
pub fn write_storm(out: &mut dyn Write, s: &StormRecord, target: &str) -> io::Result<()> {
    writeln!(out, "====== CONNECT STORM ======")?;
    let pace = match s.target_rate {
        Some(r) => format!("at {r} connections/s"),
        None => "as fast as they can".into(),
    };
    let command = s.command.as_deref().unwrap_or("none");
    writeln!(
        out,
        "  {target}: {} openers {pace}; command per connection: {command}",
        s.openers
    )?;
    writeln!(
        out,
        "  {} connections in {:.3} s: {:.1} connects/s; {} completed, {} failed{}",
        s.attempted,
        s.duration_s,
        s.connects_per_s,
        s.completed,
        s.failed,
        if s.interrupted { " (interrupted)" } else { "" }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  {:<14} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "stage (ms)", "count", "avg", "p50", "p99", "p99.9", "max"
    )?;
    for stage in s.stages.iter().chain(std::iter::once(&s.total)) {
        stage_row(out, stage)?;
    }
    if s.completed > 0 {
        let sum: u64 = s.stages.iter().map(|x| x.sum_ns).sum();
        writeln!(
            out,
            "  (each connection's total is measured on its own; the stages add up to it: {:.3} ms \
             of {:.3} ms in all)",
            sum as f64 / 1e6,
            s.total.sum_ns as f64 / 1e6
        )?;
    }
    write_failures(out, s)?;
    write_outages(out, s)?;
    write_server(out, s)
}

/// The outages (the engine's rule over the storm's seconds) and the failures by kind in the
/// engine's words, as a test's report has them.
fn write_outages(out: &mut dyn Write, s: &StormRecord) -> io::Result<()> {
    if !s.errors.is_empty() {
        let kinds: Vec<String> = s.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        writeln!(out, "  failures by kind: {}", kinds.join(", "))?;
    }
    if s.outages.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\n  outages (no connection completed while some failed or waited; 0.1 s resolution): {}",
        s.outages.len()
    )?;
    for o in &s.outages {
        let end = match o.until_end {
            true => "the end of the storm".to_string(),
            false => format!("{:.1} s", o.end_s),
        };
        writeln!(
            out,
            "    from {:.1} s to {end} ({:.1} s): {} connections failed",
            o.start_s, o.duration_s, o.failed
        )?;
    }
    Ok(())
}

fn stage_row(out: &mut dyn Write, st: &StageRecord) -> io::Result<()> {
    let l = &st.latency_us;
    let ms = |us: f64| us / 1000.0;
    writeln!(
        out,
        "  {:<14} {:>9} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
        st.name,
        l.count,
        ms(l.avg),
        ms(l.p50),
        ms(l.p99),
        ms(l.p99_9),
        ms(l.max)
    )
}

fn write_failures(out: &mut dyn Write, s: &StormRecord) -> io::Result<()> {
    if s.failures.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "  failures by stage and kind:")?;
    for f in &s.failures {
        writeln!(
            out,
            "    {:<14} {:<12} {:>9}  ({} side){}",
            f.stage,
            f.kind,
            f.count,
            f.side,
            f.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        )?;
    }
    for l in &s.client_limits {
        writeln!(
            out,
            "  client-side limit, not the server: {} connections failed on {}: {}",
            l.failures, l.kind, l.figure
        )?;
    }
    Ok(())
}

fn write_server(out: &mut dyn Write, s: &StormRecord) -> io::Result<()> {
    let mut parts = Vec::new();
    if let Some(n) = s.connections_received {
        parts.push(format!("{n} connections received"));
    }
    for w in &s.server {
        parts.push(format!(
            "{}: rejected_connections {}",
            w.address, w.counters.rejected_connections
        ));
        if let Some(p) = w.connected_clients_peak {
            parts.push(format!("connected_clients peak {p}"));
        }
        if let Some(c) = w.cpu_pct {
            parts.push(format!("CPU {c:.1}%"));
        }
    }
    if let Some(c) = s.connected_clients_after {
        parts.push(format!("connected_clients after {c}"));
    }
    if !parts.is_empty() {
        writeln!(out)?;
        writeln!(out, "  server: {}", parts.join(", "))?;
    }
    Ok(())
}
