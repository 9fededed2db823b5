//! Refusing what must not be merged: records of different benchmarks.
//!
//! Shards of one benchmark share everything but their part: same schema, same tests (names and
//! commands, in order), same options except the ones sharding divides or varies (`requests`,
//! `rps`, `seed`), the same shard count, and distinct shard indices. Anything else means the
//! inputs are not parts of one run, and merging them would print numbers that describe nothing;
//! the error names the first difference in one line (exit 2).

use serde_json::Value;

use crate::record::document::{Document, SCHEMA};

/// Options a shard changes: its part of `-n` and `--rps`, and its seed (offset by the index, or
/// drawn per process when `--seed` is not given).
const SHARD_OPTIONS: &[&str] = &["requests", "rps", "seed"];

/// One input: its name (the path as given) and its record.
pub struct Input {
    pub name: String,
    pub doc: Document,
}

impl Input {
    /// Reads the JSON value of the file `name` as a record: another schema is named as such
    /// (before its shape is read, which may be anything), then the record's own reader.
    pub fn read(name: String, value: Value) -> Result<Self, String> {
        if let Some(schema) = value.get("schema").and_then(Value::as_str)
            && schema != SCHEMA
        {
            return Err(wrong_schema(&name, schema));
        }
        let doc = Document::read(value).map_err(|e| format!("{name}: {e}"))?;
        Ok(Self { name, doc })
    }
}

/// The error for a record of `schema` (empty: none).
fn wrong_schema(name: &str, schema: &str) -> String {
    format!(
        "{name}: schema {} is not {SCHEMA} (is it a respbench --json record?)",
        if schema.is_empty() {
            "missing".to_string()
        } else {
            format!("{schema:?}")
        }
    )
}

/// `Ok` when `inputs` are parts of one benchmark; else the first difference, in one line.
pub fn compatible(inputs: &[Input]) -> Result<(), String> {
    let first = inputs
        .first()
        .ok_or("nothing to merge: give the shard records")?;
    if let Some(i) = inputs.iter().find(|i| i.doc.schema != SCHEMA) {
        return Err(wrong_schema(&i.name, &i.doc.schema));
    }
    for other in &inputs[1..] {
        same_tests(first, other)?;
        same_options(first, other)?;
        same_shard_field(first, other, "count")?;
        same_shard_field(first, other, "requests_total")?;
        same_shard_field(first, other, "rps_total")?;
    }
    distinct_indices(inputs)
}

fn same_tests(a: &Input, b: &Input) -> Result<(), String> {
    let list = |i: &Input| -> Vec<(String, Vec<String>)> {
        i.doc
            .tests
            .iter()
            .map(|t| (t.name.clone(), t.commands.clone()))
            .collect()
    };
    let (ta, tb) = (list(a), list(b));
    if ta == tb {
        return Ok(());
    }
    let names = |t: &[(String, Vec<String>)]| {
        t.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if names(&ta) == names(&tb) {
        return Err(format!(
            "{} and {} are different benchmarks: the same tests send different commands",
            a.name, b.name
        ));
    }
    Err(format!(
        "{} and {} are different benchmarks: tests [{}] vs [{}]",
        a.name,
        b.name,
        names(&ta),
        names(&tb)
    ))
}

/// Compared as JSON, so the message names the option as the record does (`options.clients`)
/// and a field added to the options is compared without a line here.
fn same_options(a: &Input, b: &Input) -> Result<(), String> {
    let json = |i: &Input| match serde_json::to_value(&i.doc.options) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let (oa, ob) = (json(a), json(b));
    let mut keys: Vec<&String> = oa.keys().chain(ob.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        if SHARD_OPTIONS.contains(&k.as_str()) {
            continue;
        }
        let (va, vb) = (oa.get(k), ob.get(k));
        if va != vb {
            let show = |v: Option<&Value>| v.map_or("absent".to_string(), Value::to_string);
            return Err(format!(
                "{} and {} are different benchmarks: options.{k} is {} vs {}",
                a.name,
                b.name,
                show(va),
                show(vb)
            ));
        }
    }
    Ok(())
}

fn same_shard_field(a: &Input, b: &Input, field: &str) -> Result<(), String> {
    let (Some(sa), Some(sb)) = (&a.doc.shard, &b.doc.shard) else {
        return Ok(());
    };
    let json = |s| serde_json::to_value(s).unwrap_or_default();
    let (sa, sb) = (json(sa), json(sb));
    let (va, vb) = (&sa[field], &sb[field]);
    if va != vb {
        return Err(format!(
            "{} and {} are not shards of one benchmark: shard.{field} is {va} vs {vb}",
            a.name, b.name
        ));
    }
    Ok(())
}

fn distinct_indices(inputs: &[Input]) -> Result<(), String> {
    let index = |i: &Input| i.doc.shard.as_ref().map(|s| s.index);
    for (n, a) in inputs.iter().enumerate() {
        let Some(shard) = a.doc.shard.as_ref().filter(|s| s.source != "none") else {
            continue;
        };
        let ia = shard.index;
        if let Some(b) = inputs[n + 1..].iter().find(|b| index(b) == Some(ia)) {
            return Err(format!(
                "{} and {} are both shard {ia}: give each shard's record once",
                a.name, b.name
            ));
        }
    }
    Ok(())
}

/// The shard indices a complete set would have but `inputs` lack (empty when complete or when
/// the records do not say how many shards there were).
pub fn missing_shards(inputs: &[Input]) -> Vec<u64> {
    let Some(count) = inputs
        .first()
        .and_then(|i| i.doc.shard.as_ref())
        .map(|s| s.count)
    else {
        return Vec::new();
    };
    (0..count.min(100_000))
        .filter(|k| {
            !inputs
                .iter()
                .any(|i| i.doc.shard.as_ref().map(|s| s.index) == Some(*k))
        })
        .collect()
}
