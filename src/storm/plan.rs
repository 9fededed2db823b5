//! `--connect-storm`'s plan: what the storm sends once per connection (the trailing command, if
//! any, encoded once). What it refuses of the other options is `plan::conflicts`' (the one table
//! of every mode's rules); `--tls-resume` without `--tls` is warned about with the other TLS
//! options (`plan::tls_options`).

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

/// The storm's plan, or `None` without `--connect-storm` (the plan of the run has checked the
/// rest of the line).
pub fn plan(args: &Args) -> Option<StormPlan> {
    if !args.mode::<super::cli::StormArgs>().connect_storm {
        return None;
    }
    let (command, command_name) = if args.command.is_empty() {
        (None, None)
    } else {
        let mut bytes = Vec::new();
        resp::encode_command(&mut bytes, &args.command);
        let name = String::from_utf8_lossy(&args.command[0]).to_uppercase();
        (Some(bytes), Some(name))
    };
    Some(StormPlan {
        command,
        command_name,
    })
}
