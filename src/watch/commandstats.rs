//! `INFO commandstats` before and after a test → the server's own time per call for the
//! commands the test sent.
//!
//! Why: the client measures network + server + client time; the server's `usec_per_call` is the
//! execution time alone. Side by side they show how much of the latency is the server. The
//! counters are cumulative, so the figure for one test is a difference (`CONFIG RESETSTAT` would
//! change the server's state for everyone else).

/// One command's cumulative counters (serialisable for the journal, which keeps them).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CommandCounters {
    /// As in `cmdstat_<name>`: lower case, subcommands as `function|load`.
    pub name: String,
    pub calls: u64,
    pub usec: u64,
}

/// Parses the `cmdstat_<name>:calls=N,usec=N,...` lines of `INFO commandstats`.
pub fn parse(text: &str) -> Vec<CommandCounters> {
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let field = |key: &str| {
                rest.trim()
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                    .and_then(|v| v.parse().ok())
            };
            Some(CommandCounters {
                name: name.to_string(),
                calls: field("calls")?,
                usec: field("usec")?,
            })
        })
        .collect()
}

/// The server's time for one command over a test.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CommandTime {
    pub command: String,
    /// Calls during the test.
    pub calls: u64,
    /// Microseconds of execution during the test.
    pub usec: u64,
    /// `usec / calls`.
    pub usec_per_call: f64,
}

/// What changed between `before` and `after` for the commands the test sent (`commands`: lower
/// case names; `name` also matches its subcommands `name|sub`). Commands with no new calls are
/// left out; counters that went down (a restart) count from 0.
pub fn diff(
    before: &[CommandCounters],
    after: &[CommandCounters],
    commands: &[String],
) -> Vec<CommandTime> {
    let sent = |name: &str| {
        let base = name.split('|').next().unwrap_or(name);
        commands.iter().any(|c| c == name || c == base)
    };
    after
        .iter()
        .filter(|a| sent(&a.name))
        .filter_map(|a| {
            let b = before.iter().find(|b| b.name == a.name);
            let (calls, usec) = match b {
                Some(b) if b.calls <= a.calls => (a.calls - b.calls, a.usec.saturating_sub(b.usec)),
                _ => (a.calls, a.usec),
            };
            (calls > 0).then(|| CommandTime {
                command: a.name.clone(),
                calls,
                usec,
                usec_per_call: usec as f64 / calls as f64,
            })
        })
        .collect()
}

/// One command's latency percentiles as the server publishes them (`INFO latencystats`, Redis
/// 7+ and Valkey): microseconds, cumulative since the server's stats were last reset, so they
/// cover more than one test. Shown beside the client's, never reset (`CONFIG RESETSTAT` would
/// change the server's state for everyone else).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CommandLatency {
    pub command: String,
    /// `p50`, `p99`, `p99.9` (whatever `latency-tracking-info-percentiles` says) → µs.
    pub percentiles_usec: std::collections::BTreeMap<String, f64>,
}

/// Parses `latency_percentiles_usec_<name>:p50=1.003,p99=2.007,p99.9=4.015` lines, keeping the
/// commands the test sent (`commands`, lower case; `name` also matches `name|sub`).
pub fn parse_latency(text: &str, commands: &[String]) -> Vec<CommandLatency> {
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line
                .strip_prefix("latency_percentiles_usec_")?
                .split_once(':')?;
            let base = name.split('|').next().unwrap_or(name);
            if !commands.iter().any(|c| c == name || c == base) {
                return None;
            }
            let percentiles_usec = rest
                .trim()
                .split(',')
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.to_string(), v.parse().ok()?))
                })
                .collect();
            Some(CommandLatency {
                command: name.to_string(),
                percentiles_usec,
            })
        })
        .collect()
}

/// Calls-weighted server time per call over several commands (a sequence), `None` without calls.
pub fn usec_per_call(times: &[CommandTime]) -> Option<f64> {
    let calls: u64 = times.iter().map(|t| t.calls).sum();
    let usec: u64 = times.iter().map(|t| t.usec).sum();
    (calls > 0).then(|| usec as f64 / calls as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "# Commandstats\r\n\
        cmdstat_set:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_info:calls=2,usec=261,usec_per_call=130.50,rejected_calls=0,failed_calls=0\r\n";
    const AFTER: &str = "# Commandstats\r\n\
        cmdstat_set:calls=110,usec=350,usec_per_call=3.18,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_get:calls=40,usec=80,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_function|load:calls=1,usec=900,usec_per_call=900.00\r\n\
        cmdstat_info:calls=9,usec=999,usec_per_call=111.00,rejected_calls=0,failed_calls=0\r\n";

    #[test]
    fn latency_percentiles_of_the_test_commands() {
        let text = "# Latencystats\r\n\
            latency_percentiles_usec_set:p50=1.003,p99=2.007,p99.9=4.015\r\n\
            latency_percentiles_usec_info:p50=50.1,p99=80.1,p99.9=80.1\r\n\
            latency_percentiles_usec_function|load:p50=900.1\r\n";
        let l = parse_latency(text, &["set".to_string(), "function".to_string()]);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[0].command, "set");
        let p: Vec<(&str, f64)> = l[0]
            .percentiles_usec
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(p, [("p50", 1.003), ("p99", 2.007), ("p99.9", 4.015)]);
        assert_eq!(l[1].command, "function|load");
        assert!(
            parse_latency("", &["set".to_string()]).is_empty(),
            "Redis 6: no section"
        );
    }

    #[test]
    fn parses_valkey_and_redis_lines() {
        let c = parse(AFTER);
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[2],
            CommandCounters {
                name: "function|load".into(),
                calls: 1,
                usec: 900
            }
        );
    }

    #[test]
    fn diff_keeps_the_tests_commands_only() {
        let commands = vec!["set".to_string(), "function".to_string()];
        let d = diff(&parse(BEFORE), &parse(AFTER), &commands);
        let names: Vec<&str> = d.iter().map(|t| t.command.as_str()).collect();
        assert_eq!(
            names,
            ["set", "function|load"],
            "not get, not the watch's INFO"
        );
        assert_eq!(d[0].calls, 100);
        assert_eq!(d[0].usec, 300);
        assert!((d[0].usec_per_call - 3.0).abs() < 1e-12);
        assert_eq!(d[1].calls, 1, "new since before");
        let all = usec_per_call(&d).unwrap();
        assert!((all - 1200.0 / 101.0).abs() < 1e-9);
        assert_eq!(usec_per_call(&[]), None);
    }

    #[test]
    fn a_restart_in_between_counts_from_zero() {
        let before = parse(AFTER);
        let after = parse(BEFORE);
        let d = diff(&before, &after, &["set".to_string()]);
        assert_eq!(d[0].calls, 10);
        assert_eq!(d[0].usec, 50);
    }
}
