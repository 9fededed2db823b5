//! Where a test's latency went, in its section: one row per run with the average, the server's
//! own time per call, the client's delay and the rest (network, kernel, queueing).
//!
//! Owns: that one small table. With repetitions it shows the repetition whose average is the
//! median (the lower of the middle two for an even count): per-part medians would not add up to
//! the average. Must not: compute the split (the record's `latency_split` is the one
//! computation).

use std::fmt::Write as _;

use crate::compare::input::Input;
use crate::record::document::LatencySplit;

use crate::html::esc;

/// One row per run of `test` whose records carry a split; nothing when none does.
pub fn table(s: &mut String, inputs: &[Input], test: &str) {
    let runs: Vec<(&str, Vec<&LatencySplit>)> = inputs
        .iter()
        .filter_map(|i| {
            let t = i.tests.iter().find(|t| t.name == test)?;
            let splits: Vec<&LatencySplit> = t
                .samples
                .iter()
                .filter_map(|x| x.detail.as_ref()?.latency_split.as_ref())
                .collect();
            (!splits.is_empty()).then_some((i.label.as_str(), splits))
        })
        .collect();
    if runs.is_empty() {
        return;
    }
    s.push_str("<h3>Where the latency went</h3><table class=\"split\"><tr><th>run</th>");
    s.push_str("<th>avg ms</th><th>server ms</th><th>client delay ms</th><th>rest ms</th></tr>");
    for (label, splits) in runs {
        let mut splits = splits;
        splits.sort_by(|a, b| a.avg_us.total_cmp(&b.avg_us));
        let x = splits[(splits.len() - 1) / 2];
        let avg = x.avg_us;
        let _ = write!(s, "<tr><td>{}</td><td>{:.3}</td>", esc(label), avg / 1e3);
        for part in [Some(x.server_us), x.client_delay_us, Some(x.rest_us)] {
            match part {
                Some(us) => {
                    let share = if avg > 0.0 { us / avg * 100.0 } else { 0.0 };
                    let _ = write!(s, "<td>{:.3} ({share:.0}%)</td>", us / 1e3);
                }
                None => s.push_str("<td>not measured</td>"),
            }
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::{Detail, Format, Sample, Test};

    #[test]
    fn one_row_per_run_with_medians_and_what_was_not_measured() {
        let sample = |avg: f64, server: f64| Sample {
            detail: Some(Box::new(Detail {
                latency_split: Some(LatencySplit::of(avg, server, None)),
                ..Detail::default()
            })),
            ..Sample::default()
        };
        let input = crate::compare::fixtures::input(
            "v<1>",
            Format::Respbench,
            vec![Test {
                name: "SET".into(),
                samples: vec![
                    sample(1000.0, 900.0),
                    sample(2000.0, 500.0),
                    sample(3000.0, 600.0),
                ],
            }],
        );
        let mut s = String::new();
        table(&mut s, std::slice::from_ref(&input), "SET");
        assert!(s.starts_with("<h3>Where the latency went</h3>"), "{s}");
        assert!(
            s.contains(
                "<tr><td>v&lt;1&gt;</td><td>2.000</td><td>0.500 (25%)</td><td>not measured</td>\
                 <td>1.500 (75%)</td></tr>"
            ),
            "{s}"
        );
        let mut none = String::new();
        table(&mut none, &[input], "GET");
        assert_eq!(none, "", "no split, no table");
    }
}
