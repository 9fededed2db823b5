//! What limited a test, in its section: each run's verdict with its reason as visible text (the
//! summary table's cell has only the kind, and the reason as a tooltip no phone or printout
//! shows), and the machine's figures it was judged on, as the text report's `limited by:` and
//! `machine:` lines give them.
//!
//! Owns: that paragraph per run (per repetition) and the small machine table. Must not: judge
//! (the record's verdict is shown as recorded, never re-judged) or word a verdict (the reason is
//! the record's sentence).

use std::fmt::Write as _;

use crate::compare::input::{Input, Sample};
use crate::record::document::MachineRecord;

use crate::html::esc;

/// One run's repetition of `test` that carries a verdict or machine figures.
struct Judged<'a> {
    /// `valkey`, or `valkey, repetition 2 of 3`.
    label: String,
    kind: Option<&'a str>,
    reason: &'a str,
    machine: Option<&'a MachineRecord>,
}

fn judged<'a>(inputs: &'a [Input], test: &str) -> Vec<Judged<'a>> {
    let mut out = Vec::new();
    for input in inputs {
        let Some(t) = input.tests.iter().find(|t| t.name == test) else {
            continue;
        };
        let n = t.samples.len();
        for (k, sample) in t.samples.iter().enumerate() {
            let Sample {
                limited_by, detail, ..
            } = sample;
            let machine = detail.as_ref().and_then(|d| d.machine.as_ref());
            if limited_by.is_none() && machine.is_none() {
                continue;
            }
            out.push(Judged {
                label: if n > 1 {
                    format!("{}, repetition {} of {n}", input.label, k + 1)
                } else {
                    input.label.clone()
                },
                kind: limited_by.as_deref(),
                reason: detail.as_ref().map_or("", |d| d.verdict_reason.as_str()),
                machine,
            });
        }
    }
    out
}

/// The verdicts and the machine table of `test`; nothing when no run has either (CSV and
/// memtier inputs, records of earlier builds).
pub fn section(s: &mut String, inputs: &[Input], test: &str) {
    let rows = judged(inputs, test);
    if rows.is_empty() {
        return;
    }
    s.push_str("<h3>What limited it</h3>");
    for r in rows.iter().filter(|r| r.kind.is_some()) {
        let kind = r.kind.unwrap_or_default();
        // A "can't tell" reason starts with those words already, as in the text report.
        let text = if r.reason.is_empty() {
            kind.to_string()
        } else if kind == "cant-tell" {
            r.reason.to_string()
        } else {
            format!("{kind} ({})", r.reason)
        };
        let _ = write!(
            s,
            "<p class=\"verdict-reason\" data-run=\"{}\" data-verdict=\"{}\"><b>{}</b>: \
             limited by {}</p>",
            esc(&r.label),
            esc(kind),
            esc(&r.label),
            esc(&text)
        );
    }
    if rows.iter().all(|r| r.machine.is_none()) {
        return;
    }
    s.push_str(
        "<div class=\"scroll\"><table class=\"machine\"><tr><th>run</th><th>CPU pressure</th>\
         <th>steal</th><th>CPUs busy</th><th>respbench CPU</th><th>other processes</th>\
         <th>run-queue wait</th></tr>",
    );
    for r in rows {
        let Some(m) = r.machine else { continue };
        let _ = write!(s, "<tr><td>{}</td>", esc(&r.label));
        for cell in cells(m) {
            let _ = write!(s, "<td>{}</td>", esc(&cell));
        }
        s.push_str("</tr>");
    }
    s.push_str(
        "</table></div><p class=\"note\">The machine over the test: CPU pressure is the share of \
         time some task waited for a CPU, steal of all CPUs' time; run-queue wait is respbench's \
         worst thread's; other processes are known with a local server only.</p>",
    );
}

/// A machine record's figures as the table's cells, `not measured` where the machine did not
/// offer one.
fn cells(m: &MachineRecord) -> [String; 6] {
    let pct =
        |v: Option<f64>, unit: &str| v.map_or("not measured".into(), |v| format!("{v:.0}%{unit}"));
    let cores = |n: usize| format!("{n} core{}", if n == 1 { "" } else { "s" });
    let respbench = match (m.respbench_cpu_pct, m.respbench_cores) {
        (Some(v), Some(n)) if n < m.cores => {
            format!(
                "{v:.0}% of a core (it may run on {n} of the {})",
                cores(m.cores)
            )
        }
        (v, _) => pct(v, " of a core"),
    };
    [
        pct(m.cpu_pressure_some_pct, ""),
        pct(m.steal_pct, ""),
        m.busy_pct.map_or("not measured".into(), |v| {
            format!("{v:.0}% of {}", cores(m.cores))
        }),
        respbench,
        pct(m.others_cpu_pct, " of a core"),
        pct(m.client_max_runqueue_pct, ""),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::{Detail, Format, Test};

    fn sample(kind: &str, reason: &str, machine: Option<MachineRecord>) -> Sample {
        Sample {
            limited_by: Some(kind.into()),
            detail: Some(Box::new(Detail {
                verdict_reason: reason.into(),
                machine,
                ..Detail::default()
            })),
            ..Sample::default()
        }
    }

    #[test]
    fn each_runs_verdict_is_text_with_the_machine_it_was_judged_on() {
        // The trial's pinned run: its reason was a tooltip only, its figures nowhere.
        let pinned = MachineRecord {
            cpu_pressure_some_pct: Some(99.0),
            steal_pct: Some(0.0),
            busy_pct: Some(100.0),
            respbench_cpu_pct: Some(9.0),
            others_cpu_pct: Some(181.0),
            client_max_runqueue_pct: Some(60.0),
            cores: 2,
            respbench_cores: Some(1),
            ..MachineRecord::default()
        };
        let busy = "the machine was busy: … a respbench thread waited for a CPU 60% of the test";
        let input = crate::compare::fixtures::input(
            "valkey <9.1>",
            Format::Respbench,
            vec![Test {
                name: "GET".into(),
                samples: vec![
                    sample("machine-busy", busy, Some(pinned.clone())),
                    sample("cant-tell", "can't tell: no server CPU figures", None),
                ],
            }],
        );
        let mut s = String::new();
        section(&mut s, std::slice::from_ref(&input), "GET");
        assert!(s.starts_with("<h3>What limited it</h3>"), "{s}");
        assert!(
            s.contains(
                "<p class=\"verdict-reason\" data-run=\"valkey &lt;9.1&gt;, repetition 1 of 2\" \
                 data-verdict=\"machine-busy\"><b>valkey &lt;9.1&gt;, repetition 1 of 2</b>: \
                 limited by machine-busy (the machine was busy: … a respbench thread waited for \
                 a CPU 60% of the test)</p>"
            ),
            "{s}"
        );
        assert!(
            s.contains("limited by can&#39;t tell: no server CPU figures</p>"),
            "{s}"
        );
        assert!(
            s.contains(
                "<tr><td>valkey &lt;9.1&gt;, repetition 1 of 2</td><td>99%</td><td>0%</td>\
                 <td>100% of 2 cores</td><td>9% of a core (it may run on 1 of the 2 cores)</td>\
                 <td>181% of a core</td><td>60%</td></tr>"
            ),
            "{s}"
        );
        assert_eq!(s.matches("<tr><td>").count(), 1, "no machine, no row: {s}");
        let mut none = String::new();
        section(&mut none, &[input], "SET");
        assert_eq!(none, "", "nothing judged, no section");
    }
}
