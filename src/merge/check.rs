//! Refusing what must not be merged: records of different benchmarks.
//!
//! Shards of one benchmark share everything but their part: same schema, same tests (names and
//! commands, in order), same target, same options except the ones sharding divides or varies
//! (`requests`, `rps`, `seed`, each shard's being its exact part), the same shard count, and
//! distinct shard indices; none is already a merge, and each one's counts agree with each other
//! (`counts`). Anything else means the
//! inputs are not parts of one run, and merging them would print numbers that describe nothing;
//! the error names the first difference in one line (exit 2).

use serde_json::Value;

use crate::record::document::{Document, SCHEMA};
use crate::workload::split::Share;

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
    for i in inputs {
        a_shard(i, inputs.len())?;
        own_part(i)?;
        super::counts::sane(&i.name, &i.doc)?;
    }
    for other in &inputs[1..] {
        same_tests(first, other)?;
        same_target(first, other)?;
        same_options(first, other)?;
        same_shard_field(first, other, "count")?;
        same_shard_field(first, other, "requests_total")?;
        same_shard_field(first, other, "rps_total")?;
    }
    distinct_indices(inputs)
}

/// A record that can be one of several shards: not already a merge (merging it again would count
/// its requests twice: `merge -o all.json *.json` run a second time picks up `all.json`), and,
/// when there are several inputs, one with a shard block (a whole run given twice would double
/// its requests).
fn a_shard(i: &Input, inputs: usize) -> Result<(), String> {
    if i.doc.ab.is_some() {
        return Err(format!(
            "{} is an A/B record (respbench ab): its blocks are two sides' runs, not shards",
            i.name
        ));
    }
    if !i.doc.shards.is_empty() || i.doc.merge.is_some() {
        return Err(format!(
            "{} is already a merged record (of {} shards): merge the shards' own records, once",
            i.name,
            i.doc.shards.len()
        ));
    }
    if inputs > 1 && i.doc.shard.is_none() {
        return Err(format!(
            "{} is a whole run (no shard block), not a shard: only the records of one sharded run \
             (--shard I/N, or a scheduler's shards) merge",
            i.name
        ));
    }
    Ok(())
}

/// A shard's `options.requests`/`rps` are its part of the benchmark's (`shard.requests_total`,
/// `rps_total`), as `--shard` divides them: anything else is not what the shard block says ran.
fn own_part(i: &Input) -> Result<(), String> {
    let Some(s) = i
        .doc
        .shard
        .as_ref()
        .filter(|s| s.count > 0 && s.index < s.count)
    else {
        return match &i.doc.shard {
            Some(s) => Err(format!(
                "{}: shard.index {} of shard.count {} is not a shard (a corrupt record)",
                i.name, s.index, s.count
            )),
            None => Ok(()),
        };
    };
    // The one even split `--shard` divides `-n` and `--rps` with.
    let shard = Share {
        index: s.index,
        count: s.count,
    };
    let o = &i.doc.options;
    for (what, total, own) in [
        ("requests", s.requests_total, o.requests),
        ("rps", s.rps_total, o.rps),
    ] {
        if let (Some(total), Some(own)) = (total, own)
            && shard.of(total).len != own
        {
            return Err(format!(
                "{}: options.{what} is {own}, but shard {} of {} of {total} is {} (a corrupt record)",
                i.name,
                s.index,
                s.count,
                shard.of(total).len
            ));
        }
    }
    Ok(())
}

/// The server the shards loaded: the same address, transport and mode (cluster nodes aside: each
/// shard discovers them itself). The merged record names one target, so shards of another
/// server's run must not be added to it.
fn same_target(a: &Input, b: &Input) -> Result<(), String> {
    let json = |i: &Input| {
        let mut t = serde_json::to_value(&i.doc.target).unwrap_or_default();
        if let Some(m) = t.as_object_mut() {
            m.remove("nodes");
        }
        t
    };
    let (ta, tb) = (json(a), json(b));
    if ta == tb {
        return Ok(());
    }
    let show = |i: &Input| {
        let t = &i.doc.target;
        match (&t.host, t.port, &t.socket) {
            (_, _, Some(s)) => Some(s.clone()),
            (Some(h), Some(p), _) => Some(format!("{h}:{p}")),
            _ => None,
        }
    };
    let (sa, sb) = match (show(a), show(b)) {
        (Some(x), Some(y)) if x != y => (x, y),
        _ => (ta.to_string(), tb.to_string()),
    };
    Err(format!(
        "{} and {} are different benchmarks: target {sa} vs {sb}",
        a.name, b.name
    ))
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
    // A shard that stopped early has fewer tests: say so, rather than "different benchmarks".
    for (short, long) in [(a, &tb), (b, &ta)] {
        let o = short.doc.outcome.as_str();
        if !o.is_empty() && o != "completed" && short.doc.tests.len() < long.len() {
            return Err(format!(
                "{} was {} after {} of {} tests: a shard that did not finish cannot be merged",
                short.name,
                if o == "failed" {
                    "stopped by an error"
                } else {
                    o
                },
                short.doc.tests.len(),
                long.len()
            ));
        }
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
        let Some(shard) = a.doc.shard.as_ref() else {
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
