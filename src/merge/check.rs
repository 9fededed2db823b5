//! Refusing what must not be merged: records of different benchmarks.
//!
//! Shards of one benchmark share everything but their part: same schema, same tests (names and
//! commands, in order), same options except the ones sharding divides or varies (`requests`,
//! `rps`, `seed`), the same shard count, and distinct shard indices. Anything else means the
//! inputs are not parts of one run, and merging them would print numbers that describe nothing;
//! the error names the first difference in one line (exit 2).

use serde_json::Value;

use crate::record::document::SCHEMA;

/// Options a shard changes: its part of `-n` and `--rps`, and its seed (offset by the index, or
/// drawn per process when `--seed` is not given).
const SHARD_OPTIONS: &[&str] = &["requests", "rps", "seed"];

/// One input: its name (the path as given) and its document.
pub struct Input {
    pub name: String,
    pub doc: Value,
}

/// `Ok` when `inputs` are parts of one benchmark; else the first difference, in one line.
pub fn compatible(inputs: &[Input]) -> Result<(), String> {
    let first = inputs
        .first()
        .ok_or("nothing to merge: give the shard records")?;
    for i in inputs {
        let schema = i.doc.get("schema").and_then(Value::as_str);
        if schema != Some(SCHEMA) {
            return Err(format!(
                "{}: schema {} is not {SCHEMA} (is it a respbench --json record?)",
                i.name,
                schema.map_or("missing".to_string(), |s| format!("{s:?}"))
            ));
        }
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
    let list = |i: &Input| -> Vec<(Value, Value)> {
        i.doc["tests"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| (t["name"].clone(), t["commands"].clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ta, tb) = (list(a), list(b));
    if ta == tb {
        return Ok(());
    }
    let names = |t: &[(Value, Value)]| {
        t.iter()
            .map(|(n, _)| n.as_str().unwrap_or("?").to_string())
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

fn same_options(a: &Input, b: &Input) -> Result<(), String> {
    let empty = serde_json::Map::new();
    let oa = a.doc["options"].as_object().unwrap_or(&empty);
    let ob = b.doc["options"].as_object().unwrap_or(&empty);
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
    let (va, vb) = (&a.doc["shard"][field], &b.doc["shard"][field]);
    if a.doc["shard"].is_object() && b.doc["shard"].is_object() && va != vb {
        return Err(format!(
            "{} and {} are not shards of one benchmark: shard.{field} is {va} vs {vb}",
            a.name, b.name
        ));
    }
    Ok(())
}

fn distinct_indices(inputs: &[Input]) -> Result<(), String> {
    for (n, a) in inputs.iter().enumerate() {
        let Some(ia) = a.doc["shard"]["index"].as_u64() else {
            continue;
        };
        if a.doc["shard"]["source"] == "none" {
            continue;
        }
        if let Some(b) = inputs[n + 1..]
            .iter()
            .find(|b| b.doc["shard"]["index"].as_u64() == Some(ia))
        {
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
        .and_then(|i| i.doc["shard"]["count"].as_u64())
    else {
        return Vec::new();
    };
    (0..count.min(100_000))
        .filter(|k| {
            !inputs
                .iter()
                .any(|i| i.doc["shard"]["index"].as_u64() == Some(*k))
        })
        .collect()
}
