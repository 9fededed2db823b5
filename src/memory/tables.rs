//! Memory per key's table in `compare` and the HTML report (`record::block::Block::tables`): a
//! row per test and side, and per data type of a test that wrote several.

use super::block::{MemoryRecord, TypeMemory};
use crate::record::block::{Side, Table};

/// The memory per key table (a row per test, side and, for a test that wrote several data
/// types, per type after the test's own row), when some side measured it.
pub fn table(sides: &[(Side, &MemoryRecord)]) -> Option<Table> {
    let mut memory = Vec::new();
    for (side, m) in sides {
        memory.push(memory_row(&side.test, &side.label, m));
        for t in &m.by_type {
            memory.push(type_row(&side.test, &side.label, m, t));
        }
    }
    if memory.is_empty() {
        return None;
    }
    // Stable: a test's per-type rows stay under its own.
    memory.sort_by(|a, b| a[0].cmp(&b[0]));
    Some(Table {
        title: "Memory per key",
        note: "bytes per key added; overhead = used_memory per key less the key and value bytes; \
               a test that wrote several types has a row per type (·; its keys estimated from a \
               sample of the keyspace, the change shared in proportion to MEMORY USAGE)",
        head: vec![
            "test",
            "side",
            "type",
            "keys added",
            "used_memory",
            "overhead",
            "rss",
            "dataset",
            "allocator",
            "server",
            "read",
        ],
        rows: memory,
    })
}

/// How the "after" figures were read, in a word.
fn read_word(read: &str) -> String {
    if read.starts_with("after rehashing") {
        "rehashed".into()
    } else if read.starts_with("after used_memory") {
        "steady".into()
    } else {
        "still rehashing".into()
    }
}

fn per(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.1}"))
}

fn memory_row(test: &str, label: &str, m: &MemoryRecord) -> Vec<String> {
    vec![
        test.to_string(),
        label.to_string(),
        m.data_type.clone(),
        m.keys_added.to_string(),
        per(m.used_memory.bytes_per_key),
        per(m.used_memory.overhead_per_key),
        per(m.used_memory_rss.bytes_per_key),
        per(m.used_memory_dataset.as_ref().and_then(|d| d.bytes_per_key)),
        m.allocator.clone(),
        m.server_version.clone(),
        read_word(&m.read),
    ]
}

/// One data type's row of a test that wrote several: its estimated keys and its share.
fn type_row(test: &str, label: &str, m: &MemoryRecord, t: &TypeMemory) -> Vec<String> {
    vec![
        test.to_string(),
        label.to_string(),
        format!("· {}", t.data_type),
        format!("~{}", t.keys_added),
        per(t.used_memory.bytes_per_key),
        per(t.used_memory.overhead_per_key),
        per(t.used_memory_rss.bytes_per_key),
        per(t.used_memory_dataset.as_ref().and_then(|d| d.bytes_per_key)),
        m.allocator.clone(),
        m.server_version.clone(),
        read_word(&m.read),
    ]
}
