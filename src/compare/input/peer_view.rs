//! A respbench record seen as memtier's rows, when a side of the comparison is memtier's
//! `--json-out-file`: memtier names its rows by command kind (`SET`, `GET`, …, `TOTALS`, see
//! `peer_json.rs`), respbench names a mixed test by its mix (`SET:GET 1:10`) with each command's
//! figures inside. Without this the two files of one `respbench memtier --json-out-file X
//! --json Y` run have no test in common. The record's side is timed as memtier's is, from the
//! write (`Sample::sent`), where the record has it, so the two files of one run say the same.

use super::{Format, Input, Sample, Test};

/// Splits each mixed test of a respbench side into one test per command (its own figures) and
/// `TOTALS` (the mix's), when some side is memtier's; other sides and tests stay as they are.
pub fn align_with_memtier(inputs: &mut [Input]) {
    if !inputs.iter().any(|i| i.format == Format::Memtier) {
        return;
    }
    for input in inputs.iter_mut().filter(|i| i.format == Format::Respbench) {
        let mut tests = Vec::with_capacity(input.tests.len());
        for test in std::mem::take(&mut input.tests) {
            let Some(first) = test.samples.first().filter(|s| !s.mix.is_empty()) else {
                tests.push(test);
                continue;
            };
            for (i, command) in first.mix.iter().enumerate() {
                let samples = (test.samples.iter())
                    .filter_map(|s| s.mix.get(i))
                    .map(|m| m.sent.clone().unwrap_or_else(|| m.figures.clone()))
                    .collect();
                tests.push(Test {
                    name: command.name.to_uppercase(),
                    samples,
                });
            }
            let samples = (test.samples.into_iter())
                .map(|s| match &s.sent {
                    Some(sent) => Sample {
                        detail: s.detail,
                        limited_by: s.limited_by,
                        ..(**sent).clone()
                    },
                    None => s,
                })
                .collect();
            tests.push(Test {
                name: "TOTALS".into(),
                samples,
            });
        }
        input.tests = tests;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MixCommand, Sample};
    use super::*;

    fn input(format: Format, tests: Vec<Test>) -> Input {
        crate::compare::fixtures::input("x", format, tests)
    }

    #[test]
    fn a_mix_becomes_memtiers_rows_only_beside_a_memtier_side() {
        let command = |name: &str, rps| MixCommand {
            name: name.into(),
            figures: Sample {
                rps,
                ..Sample::default()
            },
            ..MixCommand::default()
        };
        let mixed = Sample {
            rps: 11.0,
            mix: vec![command("SET", 1.0), command("GET", 10.0)],
            ..Sample::default()
        };
        let ours = || {
            input(
                Format::Respbench,
                vec![Test {
                    name: "SET:GET 1:10".into(),
                    samples: vec![mixed.clone()],
                }],
            )
        };
        let mut alone = [ours(), ours()];
        align_with_memtier(&mut alone);
        assert_eq!(
            alone[0].tests[0].name, "SET:GET 1:10",
            "no memtier side: as it was"
        );
        let mut with = [ours(), input(Format::Memtier, Vec::new())];
        align_with_memtier(&mut with);
        let names: Vec<&str> = with[0].tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["SET", "GET", "TOTALS"]);
        let rps: Vec<f64> = with[0].tests.iter().map(|t| t.samples[0].rps).collect();
        assert_eq!(rps, [1.0, 10.0, 11.0]);
    }
}
