//! Every rule between the run's modes and the options they cannot honour, in one table, checked
//! once before anything connects (exit 2). Which mode runs is the registry's (`crate::modes`);
//! what a mode or a benchmark option refuses is here, so a new mode adds its rule beside the
//! others instead of in a file of its own.
//!
//! The rules are checked in this order, and each names the first refused option it finds, so a
//! command line with several mistakes always gets the same message.

use crate::cli::Args;

use super::Workload;

/// A mode (or an option of the benchmark mode) and what it refuses.
struct Rule<'a> {
    /// The option that asks for it, as the message names it (`--connect-storm`).
    name: &'a str,
    /// Whether the command line asks for it.
    on: bool,
    /// The options it cannot be combined with: (given, how the message names it).
    refused: Vec<(bool, &'a str)>,
    /// How the message reads for this rule.
    say: fn(&str, &str) -> String,
}

/// "X cannot be combined with Y": a mode or option whose run the other would change.
fn cannot_combine(name: &str, other: &str) -> String {
    format!("{name} cannot be combined with {other}")
}

/// "X runs its own test; …": a mode that replaces the workload.
fn own_test(name: &str, other: &str) -> String {
    format!("{name} runs its own test; it does not combine with {other}")
}

/// The first rule the command line breaks, as its usage message.
pub(super) fn check(args: &Args, workload: &Workload) -> Result<(), String> {
    for rule in rules(args, workload) {
        if !rule.on {
            continue;
        }
        if let Some((_, other)) = rule.refused.iter().find(|(given, _)| *given) {
            return Err((rule.say)(rule.name, other));
        }
    }
    Ok(())
}

/// The table: find-max and memory per key (options of the benchmark), then the modes that
/// replace it. Fuzz and idle refuse nothing here: the registry runs them before any other.
fn rules<'a>(args: &'a Args, workload: &Workload) -> [Rule<'a>; 4] {
    // The modes' switches, by the option that asks for each (`Args::asks`: the modes' options
    // are theirs, this table only names them).
    let storm = args.asks("--connect-storm");
    let fill = args.asks("--fill");
    let pubsub = args.asks("--pubsub");
    [
        Rule {
            name: "--find-max",
            on: args.find_max.is_some(),
            refused: vec![
                (args.duration.is_some(), "--duration (use --step-duration)"),
                (args.csv, "--csv"),
                (args.loop_forever, "-l"),
                (args.repeat > 1, "--repeat"),
                (args.idle, "-I"),
            ],
            say: cannot_combine,
        },
        Rule {
            name: "--connect-storm",
            on: storm,
            refused: vec![
                (args.find_max.is_some(), "--find-max"),
                (args.idle, "-I"),
                (
                    args.tests.is_some(),
                    "-t (give the one command to send, if any, as the command line's command)",
                ),
                (args.loop_forever, "-l"),
                (args.csv, "--csv"),
                (args.repeat > 1, "--repeat"),
                (args.dataset.is_some(), "--dataset"),
            ],
            say: cannot_combine,
        },
        Rule {
            name: if fill { "--fill" } else { "--memory-per-key" },
            on: fill || args.asks("--memory-per-key"),
            refused: vec![
                (storm, "--connect-storm"),
                (args.find_max.is_some(), "--find-max"),
                (args.idle, "-I"),
            ],
            say: cannot_combine,
        },
        Rule {
            name: if pubsub { "--pubsub" } else { "--stream" },
            on: pubsub || args.asks("--stream"),
            refused: vec![
                (
                    !matches!(workload, Workload::Suite(_)) || args.tests.is_some(),
                    "a test or command",
                ),
                (args.repeat > 1, "--repeat"),
                (args.find_max.is_some(), "--find-max"),
                (args.loop_forever, "-l"),
                (args.idle, "-I"),
                (args.dataset.is_some(), "--dataset"),
            ],
            say: own_test,
        },
    ]
}

#[cfg(test)]
mod tests {
    use crate::plan::RunPlan;

    /// The usage message of `argv`'s plan, or `None` when it plans.
    fn refusal(argv: &[&str]) -> Option<String> {
        let args = match crate::cli::parse(argv.iter().map(|s| s.into())) {
            Ok(crate::cli::Invocation::Run(a)) => a,
            Ok(other) => panic!("{other:?}"),
            Err(e) => return Some(e.0),
        };
        RunPlan::new(&args, None).err().map(|e| e.to_string())
    }

    #[test]
    fn each_rule_names_its_mode_and_the_first_option_it_refuses() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--find-max", "p99<1ms", "-t", "get", "--csv"],
                "--find-max cannot be combined with --csv",
            ),
            (
                &["--connect-storm", "-l", "--csv"],
                "--connect-storm cannot be combined with -l",
            ),
            (
                &["--connect-storm", "--find-max", "p99<1ms", "-t", "get"],
                "--connect-storm cannot be combined with --find-max",
            ),
            (
                &["--memory-per-key", "--connect-storm"],
                "--memory-per-key cannot be combined with --connect-storm",
            ),
            (
                &["-r", "10", "--fill", "-I"],
                "--fill cannot be combined with -I",
            ),
            (
                &["--pubsub", "2", "--repeat", "3"],
                "--pubsub runs its own test; it does not combine with --repeat",
            ),
            (
                &["--stream", "2", "-l"],
                "--stream runs its own test; it does not combine with -l",
            ),
        ];
        for (argv, message) in cases {
            let got = refusal(argv);
            assert!(
                got.as_deref().is_some_and(|m| m.contains(message)),
                "{argv:?}: {got:?}, expected {message:?}"
            );
        }
    }

    #[test]
    fn modes_that_do_not_refuse_each_other_plan() {
        assert_eq!(refusal(&["--connect-storm", "-c", "2", "-n", "10"]), None);
        assert_eq!(refusal(&["--memory-per-key", "-t", "set"]), None);
    }
}
