//! A command mix's per-command table in a test's section (`--ratio`, `--command` mixes): the
//! test's charts and totals cover every command together, and a slow command hidden by a fast
//! majority shows only here.
//!
//! Owns: the table's columns and how repetitions are summarised (medians, as everywhere on the
//! page). Must not: compare runs (the comparison table has each command's rows for that).

use std::fmt::Write as _;

use crate::compare::input::{Input, MixCommand};
use crate::stats::median;

use crate::html::esc;

/// One row per run and command of `test`'s mix: command, share of the requests, requests,
/// errors, rps, p50, p99, p99.9 and max (ms). Nothing when no run has a mix for the test.
pub fn table(s: &mut String, inputs: &[Input], test: &str) {
    let runs: Vec<(&str, Vec<Vec<&MixCommand>>)> = inputs
        .iter()
        .filter_map(|i| {
            let t = i.tests.iter().find(|t| t.name == test)?;
            let reps: Vec<Vec<&MixCommand>> = t
                .samples
                .iter()
                .filter(|x| !x.mix.is_empty())
                .map(|x| x.mix.iter().collect())
                .collect();
            (!reps.is_empty()).then_some((i.label.as_str(), reps))
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    let several = inputs.len() > 1;
    s.push_str("<h3>Per command</h3><table class=\"mix\"><tr>");
    if several {
        s.push_str("<th>run</th>");
    }
    s.push_str("<th>command</th><th>share</th><th>requests</th><th>errors</th><th>rps</th>");
    s.push_str("<th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>");
    for (label, reps) in &runs {
        // The first repetition's commands; a repetition that ran others is left out of them.
        for (j, cmd) in reps[0].iter().enumerate() {
            // (the repetition's commands, this command) where the repetition ran it here.
            let pairs: Vec<(&Vec<&MixCommand>, &MixCommand)> = reps
                .iter()
                .filter_map(|r| r.get(j).filter(|c| c.name == cmd.name).map(|c| (r, *c)))
                .collect();
            let same: Vec<&MixCommand> = pairs.iter().map(|p| p.1).collect();
            let shares: Vec<f64> = pairs
                .iter()
                .map(|(r, c)| {
                    let all: u64 = r.iter().map(|c| c.completed + c.failed).sum();
                    (c.completed + c.failed) as f64 / all.max(1) as f64 * 100.0
                })
                .collect();
            s.push_str("<tr>");
            if several {
                let _ = write!(s, "<td>{}</td>", esc(label));
            }
            let _ = write!(
                s,
                "<td data-command=\"{0}\">{0}</td><td>{1:.1}%</td><td>{2:.0}</td><td>{3:.0}</td><td>{4:.2}</td>",
                esc(&cmd.name),
                median(&shares),
                med(&same, |c| Some((c.completed + c.failed) as f64)).unwrap_or(0.0),
                med(&same, |c| Some(c.failed as f64)).unwrap_or(0.0),
                med(&same, |c| Some(c.figures.rps)).unwrap_or(0.0),
            );
            for f in [
                med(&same, |c| c.figures.p50),
                med(&same, |c| c.figures.p99),
                med(&same, |c| c.p99_9),
                med(&same, |c| c.figures.max),
            ] {
                match f {
                    Some(us) => {
                        let _ = write!(s, "<td>{:.3}</td>", us / 1000.0);
                    }
                    None => s.push_str("<td>-</td>"),
                }
            }
            s.push_str("</tr>");
        }
    }
    s.push_str("</table>");
}

/// The median of a figure over the repetitions that have it (`None`: none has).
fn med(cmds: &[&MixCommand], f: impl Fn(&MixCommand) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = cmds.iter().filter_map(|c| f(c)).collect();
    (!v.is_empty()).then(|| median(&v))
}
