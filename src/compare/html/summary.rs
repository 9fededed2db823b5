//! The page's opening: the answer before the charts. One row per test (and run): throughput,
//! p50/p99/p99.9, error replies and lost requests, what limited it (the record's verdict, drawn
//! as recorded, never re-judged), and its outages; then the outages one by one and what ran
//! against what (the record's facts). A reader who stops after the first screen has the result.
//!
//! Owns: the summary table, the outage list and the "what ran" list. Each is its own small
//! function so a summary-only page (thousands of tests) can reuse them.

use std::fmt::Write as _;

use crate::compare::input::{Input, Sample};
use crate::compare::table::Comparison;

use crate::html::esc;

/// The median of `v` (the middle one, or the mean of the middle two); `None` when empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    (!v.is_empty()).then(|| crate::stats::median(&v))
}

fn ms(us: Option<f64>) -> String {
    us.map_or("-".into(), |v| format!("{:.3}", v / 1000.0))
}

/// One test of one run, as the summary shows it (medians over repetitions, counts added).
struct Row<'a> {
    samples: &'a [Sample],
}

impl<'a> Row<'a> {
    fn of(&self, f: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
        median(self.samples.iter().filter_map(f).collect())
    }

    fn lost(&self) -> Option<u64> {
        let d: Vec<_> = self
            .samples
            .iter()
            .filter_map(|s| s.detail.as_ref())
            .collect();
        (!d.is_empty()).then(|| d.iter().flat_map(|d| &d.lost).map(|l| l.2).sum())
    }

    /// Error replies: the record's `failed` counts lost requests too; they are shown apart.
    fn error_replies(&self) -> Option<u64> {
        let d: Vec<_> = self
            .samples
            .iter()
            .filter_map(|s| s.detail.as_ref())
            .collect();
        (!d.is_empty()).then(|| {
            d.iter()
                .map(|d| {
                    let lost: u64 = d.lost.iter().map(|l| l.2).sum();
                    d.errors.saturating_sub(lost)
                })
                .sum()
        })
    }

    /// The distinct verdicts with their reasons, in repetition order.
    fn verdicts(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for s in self.samples {
            let Some(kind) = &s.limited_by else { continue };
            let reason = s
                .detail
                .as_ref()
                .map(|d| d.verdict_reason.clone())
                .unwrap_or_default();
            if !out.iter().any(|(k, _)| k == kind) {
                out.push((kind.clone(), reason));
            }
        }
        out
    }

    fn outages(&self) -> Vec<&'a crate::record::timeline::OutageRecord> {
        self.samples
            .iter()
            .filter_map(|s| s.detail.as_ref())
            .flat_map(|d| &d.outages)
            .collect()
    }
}

/// The summary table, then the warnings its verdicts call for, the outage list and the facts.
pub fn section(s: &mut String, inputs: &[Input], cmp: &Comparison) {
    s.push_str(
        "<h2 id=\"summary\">Summary</h2><div class=\"scroll\"><table class=\"summary\"><tr>",
    );
    if inputs.len() > 1 {
        s.push_str("<th>run</th>");
    }
    s.push_str("<th>test</th><th>rps</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th>");
    s.push_str("<th>error replies</th><th>lost</th><th>limited by</th><th>outages</th></tr>");
    let mut warnings = Vec::new();
    let mut shown = 0;
    for (i, t) in cmp.tests.iter().enumerate() {
        if t.mix_of.is_some() {
            continue;
        }
        shown += 1;
        // Only the first MAX_CHARTED_TESTS tests have a section to link to.
        let link = (shown <= super::charts::MAX_CHARTED_TESTS).then_some(i);
        for input in inputs {
            let Some(test) = input.tests.iter().find(|x| x.name == t.name) else {
                continue;
            };
            let row = Row {
                samples: &test.samples,
            };
            row_html(s, inputs.len() > 1, input, link, &t.name, &row);
            for (kind, reason) in row.verdicts() {
                if kind == "client-bound" {
                    warnings.push(format!(
                        "{} ({}): client-bound: the figures are respbench's limit, not the server's. {reason}",
                        t.name, input.label
                    ));
                }
            }
        }
    }
    s.push_str("</table></div>");
    for t in cmp.tests.iter().filter(|t| t.mix_of.is_none()) {
        if !super::charts::cpu_line(inputs, &t.name) {
            continue;
        }
        for (run, secs) in super::charts::cpu_above_line(inputs, &t.name) {
            warnings.push(format!(
                "{} ({run}): server CPU above {:.0}% for {secs} s of a paced or troubled test: little room left",
                t.name,
                super::charts::CPU_LINE_PCT
            ));
        }
    }
    // Room for more verdict outcomes (machine busy, both near saturation): any verdict whose
    // figures should not be read as the server's gets its line here.
    for w in warnings {
        let _ = write!(s, "<p class=\"problem verdict-warning\">⚠ {}</p>", esc(&w));
    }
    outage_list(s, inputs, cmp);
    switch_list(s, inputs, cmp);
    what_ran(s, inputs);
}

fn row_html(
    s: &mut String,
    several: bool,
    input: &Input,
    link: Option<usize>,
    name: &str,
    row: &Row,
) {
    s.push_str("<tr>");
    if several {
        let _ = write!(s, "<td>{}</td>", esc(&input.label));
    }
    let reps = row.samples.len();
    let rps = row
        .of(|x| Some(x.rps))
        .map_or("-".into(), |v| format!("{v:.0}"));
    let rps = if reps > 1 {
        format!("{rps} <span class=\"note\">(median of {reps})</span>")
    } else {
        rps
    };
    let count = |n: Option<u64>| n.map_or("-".into(), |n| n.to_string());
    let name = match link {
        Some(i) => format!("<a href=\"#t{i}\">{}</a>", esc(name)),
        None => esc(name),
    };
    let _ = write!(
        s,
        "<td>{name}</td><td>{rps}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        ms(row.of(|x| x.p50)),
        ms(row.of(|x| x.p99)),
        ms(row.of(|x| x.detail.as_ref().and_then(|d| d.p99_9))),
        count(row.error_replies()),
        count(row.lost()),
    );
    let verdicts = row.verdicts();
    if verdicts.is_empty() {
        s.push_str("<td>-</td>");
    } else {
        s.push_str("<td class=\"verdict\">");
        for (n, (kind, reason)) in verdicts.iter().enumerate() {
            let _ = write!(
                s,
                "{}<span data-verdict=\"{}\" title=\"{}\">{}{}</span>",
                if n > 0 { ", " } else { "" },
                esc(kind),
                esc(reason),
                if kind == "client-bound" { "⚠ " } else { "" },
                esc(kind)
            );
        }
        s.push_str("</td>");
    }
    let outages = row.outages();
    if outages.is_empty() {
        s.push_str("<td>none</td>");
    } else {
        let total: f64 = outages.iter().map(|o| o.duration_s).sum();
        let _ = write!(
            s,
            "<td class=\"worse\" data-outages=\"{}\">⚠ {} ({total:.1} s)</td>",
            outages.len(),
            outages.len()
        );
    }
    s.push_str("</tr>");
}

/// Every outage, one line each, as the text report lists them (nothing when there was none).
fn outage_list(s: &mut String, inputs: &[Input], cmp: &Comparison) {
    let mut lines = Vec::new();
    for t in &cmp.tests {
        for input in inputs {
            let Some(test) = input.tests.iter().find(|x| x.name == t.name) else {
                continue;
            };
            let row = Row {
                samples: &test.samples,
            };
            for o in row.outages() {
                let who = if inputs.len() > 1 {
                    format!("{} ({})", t.name, input.label)
                } else {
                    t.name.clone()
                };
                lines.push((who, o));
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<h3 id=\"outages\">Outages (requests lost or nothing completed; 0.1 s resolution): {}</h3><ol class=\"outages\">",
        lines.len()
    );
    for (who, o) in lines {
        let _ = write!(
            s,
            "<li data-outage-start=\"{}\" data-outage-end=\"{}\"><b>{}</b>: {}</li>",
            o.start_s,
            o.end_s,
            esc(&who),
            esc(&super::events::outage_text(o))
        );
    }
    s.push_str("</ol>");
}

/// Every Sentinel switch seen during a test, one line each (nothing when there was none).
fn switch_list(s: &mut String, inputs: &[Input], cmp: &Comparison) {
    let mut lines = Vec::new();
    for t in &cmp.tests {
        for input in inputs {
            let Some(test) = input.tests.iter().find(|x| x.name == t.name) else {
                continue;
            };
            let details = test.samples.iter().filter_map(|x| x.detail.as_ref());
            for (at, what) in details.flat_map(|d| &d.switches) {
                let who = if inputs.len() > 1 {
                    format!("{} ({})", t.name, input.label)
                } else {
                    t.name.clone()
                };
                lines.push(format!("{who}: at {at:.1} s, {what}"));
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<h3 id=\"switches\">Sentinel switches: {}</h3><ol class=\"switches\">",
        lines.len()
    );
    for line in lines {
        let _ = write!(s, "<li>{}</li>", esc(&line));
    }
    s.push_str("</ol>");
}

/// What ran against what: each run's server build, client host and options (the record's facts).
fn what_ran(s: &mut String, inputs: &[Input]) {
    if inputs.iter().all(|i| i.facts.is_empty()) {
        return;
    }
    s.push_str("<h3>What ran</h3><ul class=\"facts\">");
    for input in inputs.iter().filter(|i| !i.facts.is_empty()) {
        let facts: Vec<String> = input
            .facts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = write!(
            s,
            "<li><b>{}</b>: {}</li>",
            esc(&input.label),
            esc(&facts.join(", "))
        );
    }
    s.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
