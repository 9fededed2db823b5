//! The answer before the table: one line per OTHER (`valkey 9.1.2 vs redis 7.0.15: GET +16.5%
//! [+12.0%, +21.1%] throughput; SET within the noise`), what differs between the sides besides
//! the numbers, and warnings about figures that describe something other than the server.
//!
//! Owns: which changes make the headline (findings of throughput and p99, the metrics people
//! quote; every shown metric when neither is), how tests without one are summed up, which facts
//! count as differences, when a side's repetitions were "mostly" client-bound or on a busy
//! machine. Must not: judge a
//! change (that is `table`).

use super::render::{interval_text, signed_pct};
use super::table::{Change, Comparison, Judgement, Metric};

/// What `compare` says before its table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// One line per OTHER.
    pub headline: Vec<String>,
    /// What differs between the sides besides the numbers (one line each; empty when nothing
    /// does or nothing is known).
    pub differences: Vec<String>,
    /// Sides whose figures describe respbench more than the server.
    pub warnings: Vec<String>,
}

/// The summary of `cmp`.
pub fn summary(cmp: &Comparison) -> Summary {
    Summary {
        headline: (1..cmp.labels.len()).map(|k| line(cmp, k)).collect(),
        differences: differences(cmp),
        warnings: warnings(cmp),
    }
}

/// How a side is named in the headline: its server when every side names a different one
/// (`valkey 9.1.2 vs redis 7.0.15`), else its label.
fn names(cmp: &Comparison) -> Vec<String> {
    let servers: Vec<&str> = cmp.servers.iter().flatten().map(String::as_str).collect();
    let distinct = servers.len() == cmp.labels.len()
        && servers
            .iter()
            .enumerate()
            .all(|(i, s)| !servers[..i].contains(s));
    if distinct {
        servers.iter().map(|s| s.to_string()).collect()
    } else {
        cmp.labels.clone()
    }
}

/// The metrics the headline quotes: rps and p99 where shown, else every shown one.
fn quoted(metric: Metric, shown: &[Metric]) -> bool {
    let has_usual = shown.iter().any(|m| matches!(m, Metric::Rps | Metric::P99));
    !has_usual || matches!(metric, Metric::Rps | Metric::P99)
}

/// How a test without a finding is summed up, most telling first: "too noisy to tell" hides
/// the most, "within the noise" the least.
fn word(changes: &[&Change], labels: (&str, &str)) -> String {
    let noisiest = changes
        .iter()
        .filter_map(|c| match c.judgement {
            Judgement::TooNoisy { noisiest } => Some(noisiest),
            _ => None,
        })
        .max_by(|a, b| {
            let spread = |x: &Option<(usize, f64)>| x.map_or(0.0, |x| x.1);
            spread(a).total_cmp(&spread(b))
        });
    match noisiest {
        Some(Some((side, spread))) => format!(
            "too noisy to tell ({}'s repetitions spread ±{spread:.0}%)",
            if side == 0 { labels.0 } else { labels.1 }
        ),
        Some(None) => "too noisy to tell".into(),
        None if changes.iter().any(|c| c.judgement == Judgement::CantTell) => {
            "can't tell (one repetition against several)".into()
        }
        None => "within the noise".into(),
    }
}

fn line(cmp: &Comparison, k: usize) -> String {
    let names = names(cmp);
    let shown: Vec<Metric> = cmp
        .tests
        .first()
        .map(|t| t.rows.iter().map(|r| r.metric).collect())
        .unwrap_or_default();
    let mut found = Vec::new();
    let mut rest: Vec<(String, Vec<&str>)> = Vec::new();
    for t in cmp.tests.iter().filter(|t| t.mix_of.is_none()) {
        let changes: Vec<(Metric, &Change)> = t
            .rows
            .iter()
            .filter(|r| quoted(r.metric, &shown))
            .filter_map(|r| r.changes[k - 1].as_ref().map(|c| (r.metric, c)))
            .collect();
        if changes.is_empty() {
            continue; // Missing from a side: said under the table.
        }
        let findings: Vec<String> = changes
            .iter()
            .filter(|(_, c)| {
                matches!(c.judgement, Judgement::Finding | Judgement::WithinRunOnly) && c.pct != 0.0
            })
            .map(|(m, c)| quote(*m, c))
            .collect();
        let one_run_each = changes
            .iter()
            .all(|(_, c)| c.judgement == Judgement::CantTell && c.n == (1, 1));
        if one_run_each {
            // Nothing to judge with: the figures, plainly marked as a guess.
            let figures: Vec<String> = changes.iter().map(|(m, c)| quote(*m, c)).collect();
            found.push(format!(
                "{} {} (can't tell: one run each)",
                t.name,
                figures.join(", ")
            ));
        } else if findings.is_empty() {
            let labels = (cmp.labels[0].as_str(), cmp.labels[k].as_str());
            let w = word(&changes.iter().map(|c| c.1).collect::<Vec<_>>(), labels);
            match rest.iter_mut().find(|r| r.0 == w) {
                Some(r) => r.1.push(&t.name),
                None => rest.push((w, vec![&t.name])),
            }
        } else {
            found.push(format!("{} {}", t.name, findings.join(", ")));
        }
    }
    let mut parts = found;
    parts.extend(
        rest.iter()
            .map(|(w, tests)| format!("{} {w}", tests.join(", "))),
    );
    if parts.is_empty() {
        parts.push("no test in common".into());
    }
    format!("{} vs {}: {}", names[k], names[0], parts.join("; "))
}

/// One change as the headline quotes it: `+16.5% [+12.0%, +21.1%] throughput`, `p99 -8.0%
/// [-15.0%, -1.0%]`, with "(within-run evidence only)" when that is all there is.
fn quote(metric: Metric, c: &Change) -> String {
    let interval = c
        .estimate
        .map(|e| format!(" {}", interval_text(&e)))
        .unwrap_or_default();
    let within = if c.judgement == Judgement::WithinRunOnly {
        " (within-run evidence only)"
    } else {
        ""
    };
    let pct = signed_pct(c.pct);
    if metric == Metric::Rps {
        format!("{pct}{interval} throughput{within}")
    } else {
        format!("{} {pct}{interval}{within}", metric.name())
    }
}

/// The facts whose values differ between sides, one line each (`allocator: jemalloc-5.2.1
/// (redis), libc (valkey)`); a side whose files say nothing is named once.
fn differences(cmp: &Comparison) -> Vec<String> {
    let mut keys: Vec<&str> = Vec::new();
    for f in cmp.facts.iter().flatten() {
        if !keys.contains(&f.0) {
            keys.push(f.0);
        }
    }
    let mut out = Vec::new();
    for key in keys {
        let values: Vec<Option<&str>> = cmp
            .facts
            .iter()
            .map(|f| f.iter().find(|x| x.0 == key).map(|x| x.1.as_str()))
            .collect();
        // Sides whose files say nothing at all are named once below, not under every fact; a
        // side that records other facts but not this one (an older record) is a difference.
        let speaking: Vec<Option<&str>> = values
            .iter()
            .zip(&cmp.facts)
            .filter(|(_, f)| !f.is_empty())
            .map(|(v, _)| *v)
            .collect();
        let same = speaking.iter().all(|v| *v == speaking[0]);
        if same && !speaking.iter().flatten().any(|v| v.contains(" | ")) {
            continue;
        }
        let per_side: Vec<String> = values
            .iter()
            .zip(&cmp.labels)
            .zip(&cmp.facts)
            .filter(|(_, f)| !f.is_empty())
            .map(|((v, l), _)| format!("{} ({l})", v.unwrap_or("not recorded")))
            .collect();
        out.push(format!("{key}: {}", per_side.join(", ")));
    }
    let silent: Vec<&str> = cmp
        .facts
        .iter()
        .zip(&cmp.labels)
        .filter(|(f, _)| f.is_empty())
        .map(|(_, l)| l.as_str())
        .collect();
    if !silent.is_empty() && silent.len() < cmp.labels.len() {
        out.push(format!(
            "server and client settings not recorded for: {} (not respbench records)",
            silent.join(", ")
        ));
    }
    out
}

/// A side whose test was client-bound in most of its repetitions: its figures are respbench's;
/// or whose machine was busy in most of them: its figures are the machine's.
fn warnings(cmp: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let kinds = [
        (
            &cmp.client_bound,
            "client-bound",
            "those figures describe respbench, not the server (try more --threads)",
        ),
        (
            &cmp.machine_busy,
            "on a busy machine",
            "the server or respbench waited for a CPU: those figures describe the machine's \
             load (see each record's verdict reason)",
        ),
    ];
    for (counts, what, meaning) in kinds {
        for (label, tests) in cmp.labels.iter().zip(counts) {
            let most: Vec<String> = tests
                .iter()
                .filter(|(_, bound, of)| *bound * 2 > *of)
                .map(|(t, bound, of)| format!("{t} ({bound} of {of})"))
                .collect();
            if !most.is_empty() {
                out.push(format!(
                    "{label}: {what} in most repetitions of {}: {meaning}",
                    most.join(", ")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::{Format, Input, Sample};

    fn side(
        label: &str,
        server: &str,
        tests: &[(&str, &[f64])],
        facts: &[(&'static str, &str)],
    ) -> Input {
        Input {
            server: Some(server.into()),
            facts: facts.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            ..crate::compare::fixtures::input(
                label,
                Format::Respbench,
                crate::compare::fixtures::tests_of(tests, |r| Sample {
                    rps: r,
                    p99: Some(1e8 / r),
                    limited_by: Some(
                        if r > 150.0 {
                            "client-bound"
                        } else if r < 50.0 {
                            "machine-busy"
                        } else {
                            "neither"
                        }
                        .into(),
                    ),
                    ..Sample::default()
                }),
            )
        }
    }

    #[test]
    fn the_headline_quotes_findings_and_sums_up_the_rest() {
        let base = side(
            "r",
            "redis 7.0.15",
            &[
                ("GET", &[100., 101., 99.]),
                ("SET", &[100., 101., 99.]),
                ("INCR", &[100., 101., 99.]),
                ("LPUSH", &[100., 101., 99.]),
            ],
            &[
                ("version", "redis 7.0.15"),
                ("allocator", "jemalloc-5.3.0"),
                ("-c", "50"),
            ],
        );
        let other = side(
            "v",
            "valkey 9.1.2",
            &[
                ("GET", &[110., 111., 109.]),
                ("SET", &[100.5, 99.5, 101.]),
                ("INCR", &[100.5, 99.5, 101.]),
                ("LPUSH", &[160., 20., 170.]),
                ("RPUSH", &[40., 45., 100.]),
            ],
            &[
                ("version", "valkey 9.1.2"),
                ("allocator", "libc"),
                ("-c", "50"),
            ],
        );
        let cmp = Comparison::new(&[base, other], &[Metric::Rps, Metric::P99]);
        let s = summary(&cmp);
        assert_eq!(s.headline.len(), 1);
        let h = &s.headline[0];
        assert!(
            h.starts_with("valkey 9.1.2 vs redis 7.0.15: GET +10.0% [+"),
            "{h}"
        );
        assert!(h.contains("] throughput, p99 -9.1% ["), "{h}");
        assert!(h.ends_with("; SET, INCR within the noise; LPUSH too noisy to tell (v's repetitions spread ±700%)"), "{h}");
        assert_eq!(
            s.differences,
            [
                "version: redis 7.0.15 (r), valkey 9.1.2 (v)",
                "allocator: jemalloc-5.3.0 (r), libc (v)"
            ]
        );
        assert_eq!(
            s.warnings,
            [
                "v: client-bound in most repetitions of LPUSH (2 of 3): those figures describe respbench, not the server (try more --threads)",
                "v: on a busy machine in most repetitions of RPUSH (2 of 3): the server or respbench waited for a CPU: those figures describe the machine's load (see each record's verdict reason)"
            ]
        );
    }

    #[test]
    fn same_servers_are_named_by_label_and_silent_files_are_said() {
        let a = side(
            "a",
            "redis 7.0.15",
            &[("GET", &[100.])],
            &[("version", "redis 7.0.15"), ("allocator", "libc")],
        );
        let c = side(
            "c",
            "redis 7.0.15",
            &[("GET", &[100.])],
            &[("version", "redis 7.0.15")],
        );
        let mut b = side("b", "redis 7.0.15", &[("GET", &[90.])], &[]);
        b.server = None;
        let s = summary(&Comparison::new(&[a, b, c], &[Metric::Rps]));
        assert_eq!(
            s.headline,
            [
                "b vs a: GET -10.0% throughput (can't tell: one run each)",
                "c vs a: GET +0.0% throughput (can't tell: one run each)"
            ]
        );
        assert_eq!(
            s.differences,
            [
                "allocator: libc (a), not recorded (c)",
                "server and client settings not recorded for: b (not respbench records)"
            ]
        );
        assert!(
            s.warnings.is_empty(),
            "one client-bound run of one is not most: {:?}",
            s.warnings
        );
    }
}
