//! The memory-per-key lines of a test's report (`--memory-per-key`, `--fill`), from the test
//! record's `memory` block.

use std::io::{self, Write};

use super::block::{MemoryFigure, MemoryRecord, TypeMemory};

/// Writes keys added, bytes per key and overhead over the payload for each figure, the allocator
/// and version beside them, and how the figures were read.
pub fn write_memory(out: &mut dyn Write, m: &MemoryRecord) -> io::Result<()> {
    writeln!(
        out,
        "Memory per key ({}; {}, allocator {}; read {}):",
        m.data_type, m.server_version, m.allocator, m.read
    )?;
    writeln!(
        out,
        "  keys {} -> {} ({:+}), payload {} bytes per key (key and value)",
        m.keys_before, m.keys_after, m.keys_added, m.payload_bytes_per_key
    )?;
    let dataset = m.used_memory_dataset.as_ref();
    for (name, f) in [
        ("used_memory", Some(&m.used_memory)),
        ("used_memory_rss", Some(&m.used_memory_rss)),
        ("used_memory_dataset", dataset),
    ] {
        if let Some(f) = f {
            figure_line(out, name, f)?;
        }
    }
    if !m.by_type.is_empty() {
        writeln!(
            out,
            "  by type (keys estimated from {}; the change shared in proportion to each type's \
             MEMORY USAGE):",
            m.type_sample.as_deref().unwrap_or("a sample")
        )?;
        for t in &m.by_type {
            type_line(out, t)?;
        }
    }
    Ok(())
}

/// One type's keys and used_memory share, e.g. `hash ~10012 keys added, payload 125 bytes:
/// used_memory 190.3 bytes per key, +65.3 over the payload (MEMORY USAGE 176.0)`.
fn type_line(out: &mut dyn Write, t: &TypeMemory) -> io::Result<()> {
    let figure = match (t.used_memory.bytes_per_key, t.used_memory.overhead_per_key) {
        (Some(per), Some(over)) => {
            format!("used_memory {per:.1} bytes per key, {over:+.1} over the payload")
        }
        _ if t.memory_usage.is_none() => "no figure (MEMORY USAGE not answered)".into(),
        _ => "no figure (no key of it added)".into(),
    };
    let usage = t
        .memory_usage
        .map(|u| format!(" (MEMORY USAGE {u:.1})"))
        .unwrap_or_default();
    writeln!(
        out,
        "    {:<10} ~{} keys added, payload {} bytes: {figure}{usage}",
        t.data_type, t.keys_added, t.payload_bytes_per_key
    )
}

fn figure_line(out: &mut dyn Write, name: &str, f: &MemoryFigure) -> io::Result<()> {
    match (f.bytes_per_key, f.overhead_per_key) {
        (Some(per), Some(over)) => writeln!(
            out,
            "  {name:<20} {} -> {}: {per:.1} bytes per key, {over:+.1} over the payload",
            f.before, f.after
        ),
        _ => writeln!(
            out,
            "  {name:<20} {} -> {} (no key added)",
            f.before, f.after
        ),
    }
}
