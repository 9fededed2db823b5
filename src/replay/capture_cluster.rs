//! `capture --cluster`: every primary of a cluster captured at once, into one trace.
//!
//! MONITOR is per node, so each primary gets its own capture (its MONITOR connection and its
//! backlog watch, `capture_node::monitor`) on a thread of its own, writing its own part file beside
//! the trace (`TRACE.part0`, `TRACE.part1`, …). When they end (`--duration`, Ctrl-C, or one of
//! them stopping at `--max-backlog`, which stops all), the parts are merged by time into the
//! trace by the one merge `replay` uses for several traces (`trace::Merge`: streaming, each
//! node's clients kept apart) and removed.
//!
//! Why parts and not a merge as the lines arrive: a node's lines reach the capture later than
//! another's by however far its connection is behind, so a live merge would have to hold lines
//! back for a guessed delay, in memory, and would still misorder a node that fell further
//! behind. Each part is in its node's order of execution, so merging whole parts is exact and
//! needs one entry per node in memory. A capture killed before the merge leaves its parts,
//! each a trace: `respbench replay --cluster TRACE.part*` replays them as one.

use std::ffi::OsString;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::engine::Target;
use crate::trace::{Entry, Merge, Writer};

use super::capture_node::{CaptureArgs, Ended, backlog_message, io, monitor, why};

/// `TRACE.partI`: primary `i`'s own trace until the merge.
fn part_path(out: &Path, i: usize) -> PathBuf {
    let mut p: OsString = out.as_os_str().to_owned();
    p.push(format!(".part{i}"));
    PathBuf::from(p)
}

/// The primaries of the cluster `entry` belongs to: `host:port` and how to reach each.
fn primaries(a: &CaptureArgs, entry: &Target) -> Result<Vec<(String, Target)>, (u8, String)> {
    let auth = super::connect::auth(&a.conn);
    let topology =
        crate::engine::cluster::discover(entry, a.conn.host(), auth.as_deref()).map_err(io)?;
    topology
        .primaries()
        .into_iter()
        .map(|i| {
            let n = &topology.nodes[i];
            Ok((n.display(), entry.at(&n.host, n.port).map_err(io)?))
        })
        .collect()
}

/// A new trace file at `path` (its format line written).
fn create(path: &Path) -> Result<Writer<BufWriter<File>>, (u8, String)> {
    let cannot = |e: std::io::Error| (1, format!("cannot write {}: {e}", path.display()));
    Writer::new(BufWriter::new(File::create(path).map_err(cannot)?)).map_err(cannot)
}

/// Every primary captured at once into `out` (see the module's comment).
pub(super) fn capture(
    a: &CaptureArgs,
    entry: &Target,
    out: &Path,
    stop: &AtomicBool,
) -> Result<String, (u8, String)> {
    let nodes = primaries(a, entry)?;
    // The trace's own file first: a path that cannot be written stops before any MONITOR.
    create(out)?;
    let parts: Vec<PathBuf> = (0..nodes.len()).map(|i| part_path(out, i)).collect();
    let writers = parts
        .iter()
        .map(|p| create(p))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!(
        "respbench capture: MONITOR on {} primaries ({}); it costs each of them throughput \
         (see docs/replay.md)",
        nodes.len(),
        names.join(", ")
    );
    let started = Instant::now();
    let ended: Vec<Result<(Ended, u64), (u8, String)>> = std::thread::scope(|s| {
        let handles: Vec<_> = nodes
            .iter()
            .zip(writers)
            .map(|((_, target), mut writer)| {
                s.spawn(move || {
                    let r = monitor(a, target, &mut writer, stop);
                    // One primary's capture ending early ends them all: the trace stays one
                    // time span of the whole cluster.
                    if !matches!(r, Ok((Ended::Stopped, _))) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err((1, "a capture thread panicked".into())))
            })
            .collect()
    });
    // What was captured is kept whatever ended it: merged into the trace, parts removed.
    let merged = merge_parts(&parts, &names, out)?;
    for p in &parts {
        let _ = std::fs::remove_file(p);
    }
    let kept = format!(
        "the {merged} commands captured on every primary until then were merged into {}",
        out.display()
    );
    for (r, name) in ended.iter().zip(&names) {
        match r {
            Err((code, message)) => return Err((*code, format!("{message}; {kept}"))),
            Ok((Ended::Backlog(omem), _)) => {
                return Err((1, backlog_message(name, *omem, a, &kept)));
            }
            Ok((Ended::Stopped, _)) => {}
        }
    }
    Ok(format!(
        "{merged} commands of {} primaries in {:.1} s merged by time into {} (stopped by {})",
        nodes.len(),
        started.elapsed().as_secs_f64(),
        out.display(),
        why(a, started)
    ))
}

/// The parts merged by time into `out`; the commands written.
fn merge_parts(parts: &[PathBuf], names: &[&str], out: &Path) -> Result<u64, (u8, String)> {
    let failed = |p: &Path, e: &dyn std::fmt::Display| (1, format!("{}: {e}", p.display()));
    let mut merge = Merge::open(parts).map_err(|e| failed(&parts[e.trace], &e.error))?;
    let mut w = create(out)?;
    let legend: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i} = {n}"))
        .collect();
    w.comment(&format!(
        "respbench capture --cluster: the primaries' MONITOR traces merged by time; client \
         I/ADDR is ADDR as primary I saw it ({})",
        legend.join(", ")
    ))
    .map_err(|e| failed(out, &e))?;
    let mut entry = Entry::empty();
    let mut n = 0;
    while merge
        .next_into(&mut entry)
        .map_err(|e| failed(&parts[e.trace], &e.error))?
    {
        w.write(&entry).map_err(|e| failed(out, &e))?;
        n += 1;
    }
    w.flush().map_err(|e| failed(out, &e))?;
    Ok(n)
}
