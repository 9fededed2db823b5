//! What a respbench record says about the circumstances of its figures, besides the figures:
//! the server's build and configuration, the client's host and options. `compare` lists the ones
//! that differ between sides, because a difference there (an allocator, io-threads, `-c`) can be
//! the cause of a difference in the numbers.
//!
//! Read from the record as JSON values, leniently: a field a record lacks (older records have no
//! `mem_allocator`) is simply not a fact of that side.

use serde_json::Value;

/// A named fact and its value as shown (`("allocator", "jemalloc-5.3.0")`).
pub type Fact = (&'static str, String);

/// The facts of a `respbench/1` record, in the order `compare` lists them.
pub fn of_record(doc: &Value) -> Vec<Fact> {
    let mut out = Vec::new();
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        _ => None,
    };
    let id = doc.get("servers").and_then(Value::as_array).and_then(|s| {
        s.iter()
            .find_map(|s| s.get("identity").filter(|i| i.is_object()))
    });
    if let Some(id) = id {
        let get = |k: &str| id.get(k).and_then(text);
        if let (Some(n), Some(v)) = (get("name"), get("version")) {
            out.push(("version", format!("{n} {v}")));
        }
        if let Some(a) = get("mem_allocator") {
            out.push(("allocator", a));
        }
        if let Some(m) = get("mode") {
            out.push(("mode", m));
        }
        match (get("io_threads"), get("io_threads_active")) {
            (None, None) => {}
            (t, a) => out.push((
                "io-threads",
                format!(
                    "{} (active: {})",
                    t.unwrap_or_else(|| "?".into()),
                    a.unwrap_or_else(|| "?".into())
                ),
            )),
        }
        match (get("aof_enabled"), get("rdb_save")) {
            (None, None) => {}
            (aof, save) => out.push((
                "persistence",
                format!(
                    "aof {}, save \"{}\"",
                    aof.unwrap_or_else(|| "?".into()),
                    save.unwrap_or_else(|| "?".into())
                ),
            )),
        }
        if let Some(m) = get("maxmemory") {
            let policy = get("maxmemory_policy").unwrap_or_else(|| "?".into());
            out.push(("maxmemory", format!("{m} ({policy})")));
        }
        if let Some(os) = get("os") {
            let bits = get("arch_bits")
                .map(|b| format!(", {b}-bit"))
                .unwrap_or_default();
            out.push(("server OS", format!("{os}{bits}")));
        }
    }
    if let Some(c) = doc.get("client") {
        let host = c.get("hostname").and_then(text);
        let cores = c.get("cores").and_then(text);
        if host.is_some() || cores.is_some() {
            out.push((
                "client host",
                format!(
                    "{} ({} cores)",
                    host.unwrap_or_else(|| "?".into()),
                    cores.unwrap_or_else(|| "?".into())
                ),
            ));
        }
    }
    if let Some(o) = doc.get("options") {
        for (key, name) in [
            ("clients", "-c"),
            ("threads", "--threads"),
            ("pipeline", "-P"),
            ("data_size", "-d"),
            ("keyspace", "-r"),
            ("requests", "-n"),
            ("duration_s", "--duration"),
            ("rps", "--rps"),
            ("tls", "--tls"),
            ("cluster", "--cluster"),
        ] {
            if let Some(v) = o.get(key).and_then(text) {
                out.push((name, v));
            }
        }
    }
    out
}

/// Each test entry's verdict kind (`client-bound`, …), in the record's order.
pub fn verdicts(doc: &Value) -> Vec<Option<String>> {
    doc.get("tests")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .map(|t| {
                    t.pointer("/verdict/kind")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_of_a_record() {
        let doc = serde_json::json!({
            "client": {"hostname": "bench1", "cores": 2},
            "servers": [{"address": "x", "identity": {"name": "valkey", "version": "9.1.2",
                "mem_allocator": "libc", "io_threads": 1, "io_threads_active": false,
                "aof_enabled": false, "rdb_save": "", "maxmemory": 0,
                "maxmemory_policy": "noeviction", "os": "Linux 6.1.0 x86_64", "arch_bits": 64}}],
            "options": {"clients": 50, "threads": 1, "pipeline": 1, "data_size": 3,
                "keyspace": null, "requests": 100000, "duration_s": null, "rps": null,
                "tls": false, "cluster": false},
            "tests": [{"verdict": {"kind": "client-bound"}}, {}]
        });
        let f = of_record(&doc);
        let get = |k: &str| f.iter().find(|x| x.0 == k).map(|x| x.1.as_str());
        assert_eq!(get("version"), Some("valkey 9.1.2"));
        assert_eq!(get("allocator"), Some("libc"));
        assert_eq!(get("io-threads"), Some("1 (active: no)"));
        assert_eq!(get("persistence"), Some("aof no, save \"\""));
        assert_eq!(get("maxmemory"), Some("0 (noeviction)"));
        assert_eq!(get("server OS"), Some("Linux 6.1.0 x86_64, 64-bit"));
        assert_eq!(get("client host"), Some("bench1 (2 cores)"));
        assert_eq!(get("-c"), Some("50"));
        assert_eq!(get("-r"), None, "null is not a fact");
        assert_eq!(verdicts(&doc), [Some("client-bound".to_string()), None]);
        assert!(of_record(&serde_json::json!({})).is_empty());
    }
}
