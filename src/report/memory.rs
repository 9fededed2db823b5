//! The memory-per-key lines of a test's report (`--memory-per-key`, `--fill`), from the test
//! record's `memory` block.

use std::io::{self, Write};

use crate::record::memory::{MemoryFigure, MemoryRecord};

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
    Ok(())
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
