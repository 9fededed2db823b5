//! `--connect-storm`'s checks against the rest of the command line, and what the storm sends
//! once per connection (the trailing command, if any, encoded once).

use crate::cli::Args;

/// A connection storm's plan (the rest comes from the run's plan: target, setup commands,
/// `-c`, `-n`/`--duration` and `--rps`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormPlan {
    /// The command sent once on every connection, encoded; `None` sends nothing after the
    /// setup.
    pub command: Option<Vec<u8>>,
    /// The command's name, for the report.
    pub command_name: Option<String>,
}

/// The storm's plan, or `None` without `--connect-storm`; an option the storm cannot honour is
/// a usage error (exit 2).
pub fn plan(args: &Args, warnings: &mut Vec<String>) -> Result<Option<StormPlan>, String> {
    if args.storm.tls_resume && !args.tls.enabled {
        warnings.push("WARNING: --tls-resume has no effect without --tls".into());
    }
    if !args.storm.connect_storm {
        return Ok(None);
    }
    let refused = [
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
    ];
    if let Some((_, name)) = refused.iter().find(|(given, _)| *given) {
        return Err(format!("--connect-storm cannot be combined with {name}"));
    }
    let (command, command_name) = if args.command.is_empty() {
        (None, None)
    } else {
        let mut bytes = Vec::new();
        resp::encode_command(&mut bytes, &args.command);
        let name = String::from_utf8_lossy(&args.command[0]).to_uppercase();
        (Some(bytes), Some(name))
    };
    Ok(Some(StormPlan {
        command,
        command_name,
    }))
}
