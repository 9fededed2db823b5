//! The answer before the table: one line per OTHER (`valkey 9.1.2 vs redis 7.0.15: GET +16.5%
//! [+12.0%, +21.1%] throughput; SET within the noise`), what differs between the sides besides
//! the numbers, and warnings about figures that describe something other than the server.
//!
//! Owns: which changes make the headline (findings of throughput and p99, the metrics people
//! quote; every shown metric when neither is), how tests without one are summed up, which facts
//! count as differences, the warnings about sides client-bound or on a busy machine in most
//! repetitions. Must not: judge a change, or decide what "most" is (both are `table`'s).

use super::table::{Change, Comparison, Judgement, Metric, mostly};
use super::words::{interval_text, limits_text, signed_pct};

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

/// How a metric is named in the headline: `throughput`, `p99`.
fn metric_word(metric: Metric) -> &'static str {
    if metric == Metric::Rps {
        "throughput"
    } else {
        metric.name()
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// How a test without a finding is summed up (after its name), most telling first:
///
/// - a side busy or client-bound: `can't tell: the machine was busy for a and b`;
/// - metrics too noisy, each named with the side whose repetitions strayed most: `p99 (b ±48%)
///   too noisy to tell, throughput within the noise`, `throughput (a ±96%) and p99 (a ±84%) too
///   noisy to tell`;
/// - one repetition against several: `can't tell (one repetition against several)`;
/// - else `within the noise`.
///
/// Tests summed up in the same words are listed together (`SET, INCR within the noise`).
fn word(changes: &[(Metric, &Change)], labels: (&str, &str)) -> String {
    if let Some(l) = changes.iter().find_map(|(_, c)| match c.judgement {
        Judgement::Unattributable(l) => Some(l),
        _ => None,
    }) {
        return format!("can't tell: {}", limits_text(l, labels));
    }
    let noisy: Vec<String> = changes
        .iter()
        .filter_map(|(m, c)| match c.judgement {
            Judgement::TooNoisy { noisiest } => Some(match noisiest {
                Some((side, spread)) => format!(
                    "{} ({} ±{spread:.0}%)",
                    metric_word(*m),
                    if side == 0 { labels.0 } else { labels.1 }
                ),
                None => metric_word(*m).to_string(),
            }),
            _ => None,
        })
        .collect();
    let quiet: Vec<String> = changes
        .iter()
        .filter(|(_, c)| c.judgement == Judgement::WithinNoise)
        .map(|(m, _)| metric_word(*m).to_string())
        .collect();
    if !noisy.is_empty() {
        let mut w = format!("{} too noisy to tell", and_list(&noisy));
        if !quiet.is_empty() {
            w.push_str(&format!(", {} within the noise", and_list(&quiet)));
        }
        w
    } else if changes
        .iter()
        .any(|(_, c)| c.judgement == Judgement::CantTell)
    {
        "can't tell (one repetition against several)".into()
    } else {
        "within the noise".into()
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
            let w = word(&changes, labels);
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
                .filter(|(_, bound, of)| mostly(*bound, *of))
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
                        if r > 1000.0 {
                            "client-bound"
                        } else if r < 10.0 {
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
                ("HSET", &[100., 101., 99.]),
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
                ("HSET", &[2000., 2100., 1900.]),
                ("RPUSH", &[4., 4.5, 100.]),
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
        // Each too noisy metric named with its own spread (p99's is not throughput's), and a
        // test whose side was client-bound in most repetitions: neither better nor worse.
        assert!(
            h.ends_with(
                "; SET, INCR within the noise; LPUSH throughput (v ±88%) and p99 (v ±700%) too \
                 noisy to tell; HSET can't tell: v was client-bound"
            ),
            "{h}"
        );
        assert!(!h.contains("HSET +"), "no figure quoted as an answer: {h}");
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
                "v: client-bound in most repetitions of HSET (3 of 3): those figures describe respbench, not the server (try more --threads)",
                "v: on a busy machine in most repetitions of RPUSH (2 of 3): the server or respbench waited for a CPU: those figures describe the machine's load (see each record's verdict reason)"
            ]
        );
    }

    #[test]
    fn a_too_noisy_metric_is_named_with_its_own_spread() {
        use crate::compare::table::Direction;
        use crate::stats::{Estimate, Evidence};
        let change = |judgement| Change {
            pct: 10.0,
            direction: Direction::Better,
            estimate: Some(Estimate {
                pct: 10.0,
                lo: -18.0,
                hi: 99.7,
                evidence: Evidence::Repetitions,
            }),
            judgement,
            n: (3, 3),
        };
        // The trial's GET: throughput's spread ±21%, p99's ±48%; once said as "too noisy to
        // tell (b's repetitions spread ±48%)", which read as throughput's.
        let rps = change(Judgement::WithinNoise);
        let p99 = change(Judgement::TooNoisy {
            noisiest: Some((1, 47.8)),
        });
        assert_eq!(
            word(&[(Metric::Rps, &rps), (Metric::P99, &p99)], ("a", "b")),
            "p99 (b ±48%) too noisy to tell, throughput within the noise"
        );
        let rps = change(Judgement::TooNoisy {
            noisiest: Some((0, 21.9)),
        });
        let p50 = change(Judgement::TooNoisy { noisiest: None });
        assert_eq!(
            word(
                &[
                    (Metric::Rps, &rps),
                    (Metric::P50, &p50),
                    (Metric::P99, &p99)
                ],
                ("a", "b")
            ),
            "throughput (a ±22%), p50 and p99 (b ±48%) too noisy to tell"
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
