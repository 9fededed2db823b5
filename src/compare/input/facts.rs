//! What a respbench record says about the circumstances of its figures, besides the figures:
//! the server's build and configuration, the client's host and options. `compare` lists the ones
//! that differ between sides, because a difference there (an allocator, io-threads, `-c`) can be
//! the cause of a difference in the numbers.
//!
//! Read from the record's own types (`record::document`), so this list cannot drift from what the
//! writer writes. A field an older record lacks (`mem_allocator`) reads as `None` and is simply
//! not a fact of that side; parts the record model defaults when absent (a record built outside a
//! run, with no `client` or `options`) are told by values no run writes (no host name and no
//! cores; no connection and no thread).

use crate::record::document::{ClientHost, Document, Options, ServerRecord};
use crate::record::workload::KeyDriftRecord;

/// A named fact and its value as shown (`("allocator", "jemalloc-5.3.0")`).
pub type Fact = (&'static str, String);

/// The facts of a `respbench/1` record, in the order `compare` lists them.
pub fn of_record(doc: &Document) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(s) = doc.servers.iter().find(|s| s.identity.is_some()) {
        server(&mut out, s);
    }
    client(&mut out, &doc.client);
    options(&mut out, &doc.options);
    out
}

/// Each test entry's verdict kind (`client-bound`, `unknown`, …), in the record's order; `None`
/// where the record has no verdict (a record of a build before verdicts: the record model reads
/// it as the default, `unknown` with no reason, where a run that could not tell gives its reason).
pub fn verdicts(doc: &Document) -> Vec<Option<String>> {
    doc.tests
        .iter()
        .map(|t| &t.verdict)
        .map(|v| {
            let recorded = v.kind != Default::default() || !v.reason.is_empty();
            recorded.then(|| v.kind.name().to_string())
        })
        .collect()
}

/// A number as the record writes it (`10.0`, not `10`), so a fact reads as in the JSON file.
fn num(x: f64) -> String {
    serde_json::Number::from_f64(x).map_or_else(|| x.to_string(), |n| n.to_string())
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// `value` or `?` for a part not recorded.
fn or_unknown(value: Option<String>) -> String {
    value.unwrap_or_else(|| "?".into())
}

fn server(out: &mut Vec<Fact>, s: &ServerRecord) {
    let Some(id) = &s.identity else { return };
    if !id.name.is_empty() && !id.version.is_empty() {
        out.push(("version", format!("{} {}", id.name, id.version)));
    }
    if let Some(a) = &id.mem_allocator {
        out.push(("allocator", a.clone()));
    }
    if let Some(m) = &id.mode {
        out.push(("mode", m.clone()));
    }
    let threads = id.io_threads.map(|t| t.to_string());
    let active = id.io_threads_active.map(yes_no);
    if threads.is_some() || active.is_some() {
        let (t, a) = (or_unknown(threads), or_unknown(active));
        out.push(("io-threads", format!("{t} (active: {a})")));
    }
    let aof = id.aof_enabled.map(yes_no);
    if aof.is_some() || id.rdb_save.is_some() {
        let (aof, save) = (or_unknown(aof), or_unknown(id.rdb_save.clone()));
        out.push(("persistence", format!("aof {aof}, save \"{save}\"")));
    }
    if let Some(m) = id.maxmemory {
        let policy = or_unknown(id.maxmemory_policy.clone());
        out.push(("maxmemory", format!("{m} ({policy})")));
    }
    if let Some(os) = &id.os {
        let bits = id
            .arch_bits
            .map(|b| format!(", {b}-bit"))
            .unwrap_or_default();
        out.push(("server OS", format!("{os}{bits}")));
    }
}

fn client(out: &mut Vec<Fact>, c: &ClientHost) {
    let host = (!c.hostname.is_empty()).then(|| c.hostname.clone());
    // `cores` is what respbench may run on (affinity and cgroup limits), not the machine's:
    // "(1 cores)" under `taskset -c 1` on a two-core machine read as the machine's.
    let cores = (c.cores > 0).then(|| {
        let s = if c.cores == 1 { "" } else { "s" };
        format!("{} core{s}", c.cores)
    });
    if host.is_some() || cores.is_some() {
        let (host, cores) = (or_unknown(host), or_unknown(cores));
        out.push(("client host", format!("{host} (respbench may use {cores})")));
    }
}

fn options(out: &mut Vec<Fact>, o: &Options) {
    // A run has at least one connection and one thread: both 0 is a record without options.
    if o.clients == 0 && o.threads == 0 {
        return;
    }
    let facts = [
        ("-c", Some(o.clients.to_string())),
        ("--threads", Some(o.threads.to_string())),
        ("-P", Some(o.pipeline.to_string())),
        ("-d", Some(o.data_size.to_string())),
        ("-r", o.keyspace.map(|k| k.to_string())),
        ("-n", o.requests.map(|n| n.to_string())),
        ("--duration", o.duration_s.map(num)),
        ("--rps", o.rps.map(|r| r.to_string())),
        ("--tls", Some(yes_no(o.tls))),
        ("--cluster", Some(yes_no(o.cluster))),
        (
            "--key-drift",
            Some(key_drift(o.workload.key_drift.as_ref())),
        ),
    ];
    out.extend(facts.into_iter().filter_map(|(k, v)| Some((k, v?))));
}

/// `--key-drift` as given on the command line (`STEP:SECS`, `hot:H:SECS`), or `none`: a
/// record of a build before it never moved its hot spot.
fn key_drift(d: Option<&KeyDriftRecord>) -> String {
    let Some(d) = d else {
        return "none".into();
    };
    match (d.kind.as_str(), d.step, d.keys) {
        ("shift", Some(step), _) => format!("{step}:{}", d.every_s),
        ("hot_set", _, Some(keys)) => format!("hot:{keys}:{}", d.every_s),
        (kind, _, _) => format!("{kind} every {} s", d.every_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(v: serde_json::Value) -> Document {
        Document::read(v).unwrap()
    }

    #[test]
    fn facts_of_a_record() {
        let d = doc(serde_json::json!({
            "client": {"hostname": "bench1", "cores": 2},
            "servers": [{"address": "x", "identity": {"name": "valkey", "version": "9.1.2",
                "mem_allocator": "libc", "io_threads": 1, "io_threads_active": false,
                "aof_enabled": false, "rdb_save": "", "maxmemory": 0,
                "maxmemory_policy": "noeviction", "os": "Linux 6.1.0 x86_64", "arch_bits": 64}}],
            "options": {"clients": 50, "threads": 1, "pipeline": 1, "data_size": 3,
                "keyspace": null, "requests": 100000, "duration_s": 10.0, "rps": null,
                "tls": false, "cluster": false},
            "tests": [{"verdict": {"kind": "client-bound"}}, {}]
        }));
        let f = of_record(&d);
        let get = |k: &str| f.iter().find(|x| x.0 == k).map(|x| x.1.as_str());
        assert_eq!(get("version"), Some("valkey 9.1.2"));
        assert_eq!(get("allocator"), Some("libc"));
        assert_eq!(get("io-threads"), Some("1 (active: no)"));
        assert_eq!(get("persistence"), Some("aof no, save \"\""));
        assert_eq!(get("maxmemory"), Some("0 (noeviction)"));
        assert_eq!(get("server OS"), Some("Linux 6.1.0 x86_64, 64-bit"));
        assert_eq!(
            get("client host"),
            Some("bench1 (respbench may use 2 cores)")
        );
        assert_eq!(get("-c"), Some("50"));
        assert_eq!(
            get("--duration"),
            Some("10.0"),
            "as the JSON file writes it"
        );
        assert_eq!(get("--tls"), Some("no"));
        assert_eq!(get("-r"), None, "null is not a fact");
        assert_eq!(get("--key-drift"), Some("none"), "no drift recorded: none");
        assert_eq!(verdicts(&d), [Some("client-bound".to_string()), None]);
        let empty = doc(serde_json::json!({"tests": []}));
        assert!(of_record(&empty).is_empty());
    }

    #[test]
    fn records_of_earlier_builds_give_the_facts_their_json_holds() {
        // Each record of an earlier build (tests/fixtures/records), read through the record's
        // types, gives what its JSON text says: the facts are shown as the file writes them.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let raw: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let d = doc(raw.clone());
            let f = of_record(&d);
            let get = |k: &str| f.iter().find(|x| x.0 == k).map(|x| x.1.clone());
            let at = |p: &str| {
                raw.pointer(p)
                    .filter(|v| !v.is_null())
                    .map(|v| v.to_string())
            };
            let name = path.display();
            assert_eq!(get("-c"), at("/options/clients"), "{name}");
            assert_eq!(get("-P"), at("/options/pipeline"), "{name}");
            assert_eq!(get("-n"), at("/options/requests"), "{name}");
            assert_eq!(get("--duration"), at("/options/duration_s"), "{name}");
            let id = raw["servers"].as_array().and_then(|s| {
                s.iter()
                    .find_map(|s| s.get("identity").filter(|i| i.is_object()))
            });
            if let Some(id) = id {
                let version = format!(
                    "{} {}",
                    id["name"].as_str().unwrap(),
                    id["version"].as_str().unwrap()
                );
                assert_eq!(get("version"), Some(version), "{name}");
            }
            let kinds: Vec<Option<String>> = raw["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.pointer("/verdict/kind").and_then(|k| k.as_str()))
                .map(|k| k.map(str::to_string))
                .collect();
            assert_eq!(verdicts(&d), kinds, "{name}");
            checked += 1;
        }
        assert!(checked >= 8, "{checked} records");
    }

    #[test]
    fn key_drift_is_a_fact_as_the_command_line_spells_it() {
        let drift = |d: serde_json::Value| {
            let doc = doc(serde_json::json!({
                "options": {"clients": 1, "threads": 1, "key_drift": d},
                "tests": []
            }));
            of_record(&doc)
                .into_iter()
                .find(|f| f.0 == "--key-drift")
                .map(|f| f.1)
        };
        let hot = serde_json::json!({"kind": "hot_set", "keys": 1000, "every_s": 10.0});
        assert_eq!(drift(hot).as_deref(), Some("hot:1000:10"));
        let shift = serde_json::json!({"kind": "shift", "step": 500, "every_s": 2.5});
        assert_eq!(drift(shift).as_deref(), Some("500:2.5"));
        assert_eq!(drift(serde_json::Value::Null).as_deref(), Some("none"));
    }

    #[test]
    fn an_older_record_lacks_what_it_did_not_write() {
        // No allocator, no io-threads: those are not facts of this side, the rest are.
        let d = doc(serde_json::json!({
            "servers": [{"address": "x", "identity": {"name": "redis", "version": "7.0.15"}}],
            "tests": []
        }));
        assert_eq!(of_record(&d), [("version", "redis 7.0.15".to_string())]);
    }
}
