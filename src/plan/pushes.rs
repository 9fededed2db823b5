//! Cross-flag checks for what makes the server push: `--enable-tracking` (invalidation messages)
//! and the (un)subscribe commands (whose RESP3 replies are pushes, and after which published
//! messages arrive between replies).
//!
//! Owns: the warnings and refusals about those. The engine tells pushes from replies (see
//! `engine::push`); this module makes sure that can work for the command given.

use super::Workload;
use crate::cli::Args;
use crate::engine::SUBSCRIPTION_COMMANDS;

/// Adds warnings for combinations that work but measure less than the user may think; refuses
/// (un)subscribe commands whose reply count is not one per command.
pub(super) fn check(
    args: &Args,
    workload: &Workload,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    if args.enable_tracking && !args.resp3 {
        warnings.push(
            "WARNING: --enable-tracking without -3: the server tracks the keys read but cannot \
             send invalidation messages over RESP2; add -3 to receive and count them"
                .to_string(),
        );
    }
    let Workload::Custom { items, .. } = workload else {
        return Ok(());
    };
    let mut subscribes = false;
    for item in items {
        let Some(name) = item.args.first() else {
            continue;
        };
        let Some(command) = SUBSCRIPTION_COMMANDS
            .iter()
            .find(|c| c.as_bytes().eq_ignore_ascii_case(name))
        else {
            continue;
        };
        subscribes = true;
        let channels = item.args.len() - 1;
        if channels != 1 {
            let upper = command.to_ascii_uppercase();
            let what = if channels == 0 {
                "without arguments gets one reply per subscription".to_string()
            } else {
                format!("with {channels} arguments gets {channels} replies")
            };
            return Err(format!(
                "{upper} {what}, but respbench expects one reply per command: give it exactly one \
                 channel or pattern (repeat the command for more, e.g. {command} a ';' {command} b)"
            ));
        }
    }
    if subscribes && !args.resp3 {
        warnings.push(
            "WARNING: without -3, messages published to the subscribed channels arrive as \
             ordinary replies and would be counted as replies; use -3 to tell them apart"
                .to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::cli::{self, Invocation};
    use crate::plan::RunPlan;

    fn plan(argv: &[&str]) -> Result<RunPlan, String> {
        let args = match cli::parse(argv.iter().map(|s| s.into())).unwrap() {
            Invocation::Run(a) => a,
            other => panic!("{other:?}"),
        };
        RunPlan::new(&args, None).map_err(|e| e.to_string())
    }

    #[test]
    fn client_tracking_goes_after_auth_and_before_select_and_hello() {
        let p = plan(&["-a", "pw", "--dbnum", "3", "-3", "--enable-tracking"]).unwrap();
        assert_eq!(
            p.prefix.commands,
            ["AUTH", "CLIENT TRACKING", "SELECT", "HELLO 3"]
        );
        assert!(p.tracking);
        let text = String::from_utf8(p.prefix.bytes).unwrap();
        assert!(text.starts_with(
            "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n\
             *3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n\
             *2\r\n$6\r\nSELECT\r\n"
        ));
    }

    #[test]
    fn tracking_without_resp3_warns() {
        let p = plan(&["--enable-tracking"]).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("--enable-tracking without -3"))
        );
        let p = plan(&["--enable-tracking", "-3"]).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn one_channel_per_subscription_command() {
        assert!(
            plan(&["-3", "subscribe", "ch"])
                .unwrap()
                .warnings
                .is_empty()
        );
        assert!(plan(&["-3", "SSUBSCRIBE", "a", ";", "sunsubscribe", "a"]).is_ok());
        let e = plan(&["-3", "subscribe", "a", "b"]).unwrap_err();
        assert!(
            e.starts_with("SUBSCRIBE with 2 arguments gets 2 replies, but respbench expects one"),
            "{e}"
        );
        let e = plan(&["-3", "get", "k", ";", "PUNSUBSCRIBE"]).unwrap_err();
        assert!(
            e.starts_with("PUNSUBSCRIBE without arguments gets one reply per"),
            "{e}"
        );
        // Other commands may take any number of arguments.
        assert!(plan(&["-3", "publish", "a", "b"]).is_ok());
    }

    #[test]
    fn subscribing_without_resp3_warns() {
        let p = plan(&["subscribe", "ch"]).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("without -3, messages published"))
        );
    }
}
