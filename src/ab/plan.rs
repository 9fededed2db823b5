//! What `respbench ab` will run: each side's plan (the shared options, then the side's own, then
//! a custom command if either gave one), and the order of the blocks.
//!
//! Why one plan per side made once: every block of a side runs the same plan, so a block differs
//! from its neighbour only in what the side means and in the moment it ran.

use std::ffi::OsString;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::cli::{AbArgs, DEFAULT_BLOCK_S, DEFAULT_ROUNDS};
use crate::cli::{self, Args, Invocation};
use crate::plan::{PlanError, RunPlan};

/// A side ready to run.
pub struct Side {
    /// `a` or `b`.
    pub name: &'static str,
    /// Its own options as typed, redacted (for the record).
    pub options: String,
    /// The argv its blocks' records carry (program name first), redacted.
    pub command_line: Vec<String>,
    pub plan: RunPlan,
}

/// Both sides, the order and the seed.
pub struct AbPlan {
    pub sides: [Side; 2],
    pub seed: u64,
    pub rounds: u32,
    /// Per round, whether B runs first.
    pub b_first: Vec<bool>,
}

/// Why a plan cannot be made: exit 2 (usage) or 1 (a file the plan reads).
pub enum Refusal {
    Usage(String),
    Io(String),
}

impl AbPlan {
    pub fn new(a: &AbArgs) -> Result<Self, Refusal> {
        let seed = a.seed.unwrap_or_else(clock_seed);
        let rounds = a.rounds.unwrap_or(DEFAULT_ROUNDS);
        let own =
            |text: Option<&String>, target: Option<&String>| -> Result<Vec<OsString>, Refusal> {
                let mut words = match text {
                    Some(t) => cli::split_words(t.as_bytes())
                        .map_err(|e| Refusal::Usage(format!("--a/--b: {e}")))?
                        .into_iter()
                        .map(|w| OsString::from(String::from_utf8_lossy(&w.bytes).into_owned()))
                        .collect(),
                    None => Vec::new(),
                };
                if let Some(uri) = target {
                    words.extend(["-u".into(), uri.into()]);
                }
                Ok(words)
            };
        let side = |name: &'static str, k: usize| -> Result<Side, Refusal> {
            let text = if k == 0 { a.a.as_ref() } else { a.b.as_ref() };
            let words = own(text, a.targets.get(k))?;
            let argv = side_argv(&a.shared, &words, seed);
            let plan = side_plan(name, &argv)?;
            let typed: Vec<String> = words.iter().map(|w| w.to_string_lossy().into()).collect();
            let mut line = vec![OsString::from("respbench")];
            line.extend(argv);
            let options = crate::redact::command_line(
                &std::iter::once("respbench".to_string())
                    .chain(typed)
                    .collect::<Vec<_>>(),
            )[1..]
                .join(" ");
            Ok(Side {
                name,
                options,
                command_line: crate::redact::command_line(&line),
                plan,
            })
        };
        Ok(AbPlan {
            sides: [side("a", 0)?, side("b", 1)?],
            seed,
            rounds,
            b_first: balanced_order(rounds, seed),
        })
    }

    /// The blocks in the order they run: (round, side index); round 0 is the warm-up (A, B).
    pub fn schedule(&self) -> Vec<(u32, usize)> {
        let mut out = vec![(0, 0), (0, 1)];
        for (r, &b_first) in self.b_first.iter().enumerate() {
            let first = usize::from(b_first);
            out.push((r as u32 + 1, first));
            out.push((r as u32 + 1, 1 - first));
        }
        out
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// A side's arguments: the shared options, the side's own options, then the custom command
/// (the side's, else the shared one), with `--seed` (both sides draw the same keys) and the
/// default block length when neither `-n` nor `--duration` is given.
fn side_argv(shared: &[OsString], own: &[OsString], seed: u64) -> Vec<OsString> {
    let (shared_opts, shared_cmd) = split_command(shared);
    let (own_opts, own_cmd) = split_command(own);
    let mut argv: Vec<OsString> = shared_opts.to_vec();
    argv.extend_from_slice(own_opts);
    let given = |argv: &[OsString], flag: &str| {
        argv.iter().any(|w| {
            w.to_str()
                .is_some_and(|s| s == flag || s.starts_with(&format!("{flag}=")))
        })
    };
    if !given(&argv, "-n") && !given(&argv, "--duration") {
        argv.extend(["--duration".into(), DEFAULT_BLOCK_S.into()]);
    }
    if !given(&argv, "--seed") {
        argv.extend(["--seed".into(), seed.to_string().into()]);
    }
    argv.extend_from_slice(if own_cmd.is_empty() {
        shared_cmd
    } else {
        own_cmd
    });
    argv
}

/// Options and the custom command after them (from `--` or the first argument that is not an
/// option or an option's value), as the main parser reads them.
fn split_command(words: &[OsString]) -> (&[OsString], &[OsString]) {
    let mut i = 0;
    while i < words.len() {
        let Some(s) = words[i].to_str() else { break };
        if s == "--" || !s.starts_with('-') || s == "-" {
            break;
        }
        let attached = s.contains('=') || (!s.starts_with("--") && s.len() > 2);
        i += 1 + usize::from(cli::takes_value(s) == Some(true) && !attached);
    }
    (&words[..i.min(words.len())], &words[i.min(words.len())..])
}

/// The options `ab` cannot run in a block: it writes its own outputs and runs each block once.
fn refuse_modes(args: &Args) -> Option<&'static str> {
    let modes = [
        (
            args.json.is_some(),
            "--json (give it to ab, before --a/--b)",
        ),
        (args.html.is_some(), "--html (give it to ab)"),
        (args.csv, "--csv"),
        (args.repeat > 1, "--repeat (the rounds are the repetitions)"),
        (args.find_max.is_some(), "--find-max"),
        (args.loop_forever, "-l"),
        (args.idle, "-I"),
        (args.stdin_last_arg, "-x"),
        (args.shard.is_some() || args.shards.is_some(), "--shard"),
        (args.start_at.is_some(), "--start-at"),
        (args.journal.is_some(), "--journal"),
        (args.metrics_listen.is_some(), "--metrics-listen"),
        (args.asks("--connect-storm"), "--connect-storm"),
        (args.asks("--fuzz"), "--fuzz"),
    ];
    modes.into_iter().find(|(on, _)| *on).map(|(_, name)| name)
}

fn side_plan(name: &str, argv: &[OsString]) -> Result<RunPlan, Refusal> {
    let side = name.to_uppercase();
    let env = std::env::var_os(cli::PASSWORD_ENV);
    let args = match cli::parse_with_env(argv.iter().cloned(), env) {
        Ok(Invocation::Run(args)) => args,
        Ok(_) => {
            return Err(Refusal::Usage(format!(
                "side {side}: --help and --version are ab's own"
            )));
        }
        Err(e) => return Err(Refusal::Usage(format!("side {side}: {}", e.0))),
    };
    if let Some(mode) = refuse_modes(&args) {
        return Err(Refusal::Usage(format!("side {side}: {mode} is not for ab")));
    }
    RunPlan::new(&args, None).map_err(|e| match e {
        PlanError::Usage(m) => Refusal::Usage(format!("side {side}: {m}")),
        PlanError::Io(m) => Refusal::Io(format!("side {side}: {m}")),
    })
}

/// Per round, whether B goes first: as many AB rounds as BA (one more of either, by the seed,
/// for an odd count), shuffled. Balanced, so a steady drift in the machine's load adds as much to
/// A as to B; shuffled, so a periodic one cannot line up with the order.
pub fn balanced_order(rounds: u32, seed: u64) -> Vec<bool> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let n = rounds as usize;
    let extra = n % 2 == 1 && rng.next_u64() % 2 == 1;
    let mut order: Vec<bool> = (0..n).map(|i| i < n / 2 + usize::from(extra)).collect();
    // Fisher–Yates.
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_order_is_balanced_seeded_and_not_fixed() {
        for rounds in [2u32, 7, 10, 31] {
            let o = balanced_order(rounds, 42);
            let b_first = o.iter().filter(|&&b| b).count() as i64;
            assert!((2 * b_first - rounds as i64).abs() <= 1, "{o:?}");
            assert_eq!(o, balanced_order(rounds, 42));
        }
        assert_ne!(balanced_order(20, 1), balanced_order(20, 2));
    }

    #[test]
    fn a_side_runs_shared_then_own_options_then_the_command() {
        let argv = side_argv(
            &os(&["-t", "get", "-c", "5", "SET", "k", "v"]),
            &os(&["-c", "1"]),
            9,
        );
        assert_eq!(
            argv,
            os(&[
                "-t",
                "get",
                "-c",
                "5",
                "-c",
                "1",
                "--duration",
                "2",
                "--seed",
                "9",
                "SET",
                "k",
                "v"
            ])
        );
        let argv = side_argv(
            &os(&["-n", "100"]),
            &os(&["-p", "7", "--", "EVAL", "x", "0"]),
            9,
        );
        assert_eq!(
            argv,
            os(&[
                "-n", "100", "-p", "7", "--seed", "9", "--", "EVAL", "x", "0"
            ])
        );
    }

    #[test]
    fn modes_with_their_own_outputs_are_refused() {
        let refused = |line: &[&str]| match side_plan("a", &os(line)) {
            Err(Refusal::Usage(m)) => m,
            _ => panic!("accepted {line:?}"),
        };
        assert!(refused(&["--json", "x.json"]).contains("--json"));
        assert!(refused(&["--repeat", "3"]).contains("--repeat"));
        assert!(refused(&["-c", "0"]).starts_with("side A: "));
    }
}
