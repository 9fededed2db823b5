//! A watched server's part of a journal's `second` line, both ways: what the run hands over each
//! second (its new samples, its commandstats at the test's start and as last read, its
//! latencystats lines as last read), how a line writes it, and how the reader adds it up.
//!
//! Why only what changed (format 2): the counters are cumulative, so format 1 repeated every one
//! of them in every line, the start's as well, about 1 kB a second per watched server (3 kB in a
//! three-node cluster), for a recovered test that needs only the start's and the last read. Now
//! a server's first line of a test holds them all; later lines hold the counters and percentile
//! lines whose values changed, and the whole list again only when its names change (a command
//! used for the first time), so the reader's list keeps the server's order.

use serde::{Deserialize, Deserializer, Serialize};

use crate::watch::commandstats::CommandCounters;
use crate::watch::{ServerSample, Watched};

/// A watched server's new samples (`watch::ServerSample`, as the sampler took them), and its
/// commandstats at the test's start and the latest read (both cumulative), as the run hands
/// them over for each second (`RunRecord`).
#[derive(Clone, Debug, Default)]
pub struct ServerSeconds {
    pub address: String,
    pub samples: Vec<ServerSample>,
    pub commandstats_before: Option<Vec<CommandCounters>>,
    pub commandstats: Option<Vec<CommandCounters>>,
    /// `INFO latencystats`' percentile lines as last read (cumulative).
    pub latencystats: Option<String>,
}

/// A server's part of a line (`docs/journal.md`: the `server` field).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct ServerLine {
    pub(super) address: String,
    pub(super) samples: Vec<ServerSample>,
    /// Format 1: in every line. Format 2: in the server's first line of the test.
    #[serde(skip_serializing_if = "Option::is_none")]
    commandstats_before: Option<Vec<CommandCounters>>,
    /// The whole list as last read. Format 1: in every line that has one. Format 2: in the
    /// server's first line of the test and when the list's names changed; `null` once they are
    /// no longer read (after a reconnect the counters may have started again).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    commandstats: Option<Option<Vec<CommandCounters>>>,
    /// Format 2: the counters whose counts changed since the server's previous line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    commandstats_changed: Vec<CommandCounters>,
    /// The percentile lines as last read, as `commandstats` (`null`: none read any more).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    latencystats: Option<Option<String>>,
    /// Format 2: the percentile lines whose values changed, as `latencystats_changed`.
    #[serde(skip_serializing_if = "String::is_empty")]
    latencystats_changed: String,
}

/// `Some(None)` for a field that is `null`, `Some(Some(v))` for a value (`None`: absent, by the
/// field's default).
fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// What the journal wrote of each server in the test under way (format 2's differences).
#[derive(Debug, Default)]
pub(super) struct Written {
    servers: Vec<Last>,
}

#[derive(Debug, Default)]
struct Last {
    address: String,
    /// Its `commandstats_before` was written.
    before: bool,
    commandstats: Option<Vec<CommandCounters>>,
    latencystats: Option<String>,
}

impl Written {
    /// The line's part for `x`: its samples, and what changed since its previous line.
    pub(super) fn line(&mut self, x: &ServerSeconds) -> ServerLine {
        let at = match self.servers.iter().position(|l| l.address == x.address) {
            Some(at) => at,
            None => {
                self.servers.push(Last {
                    address: x.address.clone(),
                    ..Last::default()
                });
                self.servers.len() - 1
            }
        };
        let last = &mut self.servers[at];
        let mut line = ServerLine {
            address: x.address.clone(),
            samples: x.samples.clone(),
            // Once: the reader keeps the first it finds.
            commandstats_before: x.commandstats_before.clone().filter(|_| !last.before),
            ..ServerLine::default()
        };
        last.before |= line.commandstats_before.is_some();
        (line.commandstats, line.commandstats_changed) =
            changes(&mut last.commandstats, x.commandstats.as_ref(), |c| {
                c.name.as_str()
            });
        let lines = |t: &String| t.lines().map(str::to_string).collect::<Vec<_>>();
        let mut last_lines = last.latencystats.as_ref().map(lines);
        let (whole, changed) = changes(
            &mut last_lines,
            x.latencystats.as_ref().map(lines).as_ref(),
            |l| l.split(':').next().unwrap_or(l),
        );
        last.latencystats.clone_from(&x.latencystats);
        line.latencystats = whole.map(|w| w.map(|_| x.latencystats.clone().unwrap_or_default()));
        line.latencystats_changed = changed.iter().map(|l| format!("{l}\r\n")).collect();
        line
    }

    /// A new test: every server's next line is its first.
    pub(super) fn clear(&mut self) {
        self.servers.clear();
    }
}

/// What a line says of a list read again (`now`), given what the lines so far said (`last`,
/// set to `now`): the whole list (first, names changed, or `null` when no longer read), or the
/// entries that changed, by `key`.
fn changes<T: Clone + PartialEq>(
    last: &mut Option<Vec<T>>,
    now: Option<&Vec<T>>,
    key: impl Fn(&T) -> &str,
) -> (Option<Option<Vec<T>>>, Vec<T>) {
    let said = match (last.as_ref(), now) {
        (None, None) => (None, Vec::new()),
        (Some(_), None) => (Some(None), Vec::new()),
        (Some(l), Some(n))
            if l.len() == n.len() && l.iter().zip(n).all(|(a, b)| key(a) == key(b)) =>
        {
            (
                None,
                n.iter()
                    .zip(l)
                    .filter(|(a, b)| a != b)
                    .map(|(a, _)| a.clone())
                    .collect(),
            )
        }
        (_, Some(n)) => (Some(Some(n.clone())), Vec::new()),
    };
    last.clone_from(&now.cloned());
    said
}

impl ServerLine {
    /// Adds the line to what the reader has of its server (`format`: the journal's).
    pub(super) fn add_to(&self, w: &mut Watched, format: u32) {
        w.samples.extend_from_slice(&self.samples);
        if w.commandstats_before.is_none() {
            w.commandstats_before.clone_from(&self.commandstats_before);
        }
        if format == 1 {
            // Cumulative: the latest read (none once a line has none: a reconnect).
            w.commandstats_after = self.commandstats.clone().flatten();
            w.latencystats = self.latencystats.clone().flatten();
        } else {
            if let Some(whole) = &self.commandstats {
                w.commandstats_after.clone_from(whole);
            }
            if let Some(after) = w.commandstats_after.as_mut() {
                for c in &self.commandstats_changed {
                    if let Some(a) = after.iter_mut().find(|a| a.name == c.name) {
                        a.clone_from(c);
                    }
                }
            }
            if let Some(whole) = &self.latencystats {
                w.latencystats.clone_from(whole);
            }
            if let Some(text) = w.latencystats.as_mut()
                && !self.latencystats_changed.is_empty()
            {
                *text = replace_lines(text, &self.latencystats_changed);
            }
        }
        // A reconnect starts a new segment: the gaps are the segments after the first.
        w.gaps = w.samples.iter().map(|s| s.segment).max().unwrap_or(0);
    }
}

/// `text`'s lines with those of `changed` put in place of the ones with the same name (the part
/// before `:`), each ending `\r\n` as the server's.
fn replace_lines(text: &str, changed: &str) -> String {
    let name = |l: &str| l.split(':').next().unwrap_or(l).to_string();
    text.lines()
        .map(|l| changed.lines().find(|c| name(c) == name(l)).unwrap_or(l))
        .map(|l| format!("{l}\r\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(list: &[(&str, u64)]) -> Vec<CommandCounters> {
        list.iter()
            .map(|&(name, calls)| CommandCounters {
                name: name.into(),
                calls,
                usec: calls * 3,
            })
            .collect()
    }

    fn latency(list: &[(&str, u64)]) -> String {
        list.iter()
            .map(|(name, p50)| {
                format!("latency_percentiles_usec_{name}:p50={p50}.000,p99=9.000\r\n")
            })
            .collect()
    }

    /// Each read the run hands over, the line written for it, and what the reader has after it:
    /// the latest read every time (as format 1 had it), from the differences only.
    #[test]
    fn the_reader_has_the_latest_read_from_the_changes_only() {
        let reads: Vec<(Option<Vec<CommandCounters>>, Option<String>)> = vec![
            (
                Some(counters(&[("info", 1), ("set", 10)])),
                Some(latency(&[("set", 5)])),
            ),
            (
                Some(counters(&[("info", 2), ("set", 20)])),
                Some(latency(&[("set", 5)])),
            ),
            // A command used for the first time, between the others: the whole list.
            (
                Some(counters(&[("get", 1), ("info", 3), ("set", 30)])),
                Some(latency(&[("get", 2), ("set", 6)])),
            ),
            (
                Some(counters(&[("get", 1), ("info", 4), ("set", 40)])),
                Some(latency(&[("get", 2), ("set", 7)])),
            ),
            // A reconnect: no longer read.
            (None, None),
            (None, None),
        ];
        let before = counters(&[("info", 0), ("set", 1)]);
        let mut written = Written::default();
        let mut w = Watched::default();
        let mut bytes = Vec::new();
        for (i, (stats, lat)) in reads.iter().enumerate() {
            let x = ServerSeconds {
                address: "127.0.0.1:6379".into(),
                samples: vec![ServerSample::default()],
                commandstats_before: Some(before.clone()),
                commandstats: stats.clone(),
                latencystats: lat.clone(),
            };
            let text = serde_json::to_string(&written.line(&x)).unwrap();
            bytes.push(text.len());
            let line: ServerLine = serde_json::from_str(&text).unwrap();
            line.add_to(&mut w, 2);
            assert_eq!(w.commandstats_after, *stats, "read {i}: {text}");
            assert_eq!(w.latencystats, *lat, "read {i}: {text}");
            assert_eq!(w.commandstats_before.as_ref(), Some(&before));
            assert_eq!(
                text.contains("commandstats_before"),
                i == 0,
                "the start's counters once: {text}"
            );
            match i {
                1 => {
                    assert!(!text.contains("\"info\",\"calls\":1"), "{text}");
                    assert!(!text.contains("latencystats"), "unchanged: {text}");
                }
                3 => assert!(text.contains("commandstats_changed"), "{text}"),
                4 => assert!(text.contains("\"commandstats\":null"), "{text}"),
                5 => assert!(!text.contains("commandstats"), "{text}"),
                _ => {}
            }
        }
        assert_eq!(w.samples.len(), reads.len());
        assert!(bytes[1] < bytes[0], "{bytes:?}");
    }

    #[test]
    fn a_format_1_line_holds_the_latest_read_or_none() {
        let mut w = Watched::default();
        let full = r#"{"address":"a","samples":[],"commandstats_before":[{"name":"set","calls":1,"usec":2}],"commandstats":[{"name":"set","calls":5,"usec":9}],"latencystats":"x:p50=1\r\n"}"#;
        serde_json::from_str::<ServerLine>(full)
            .unwrap()
            .add_to(&mut w, 1);
        assert_eq!(w.commandstats_after.as_ref().map(|c| c[0].calls), Some(5));
        assert_eq!(w.latencystats.as_deref(), Some("x:p50=1\r\n"));
        serde_json::from_str::<ServerLine>(r#"{"address":"a","samples":[]}"#)
            .unwrap()
            .add_to(&mut w, 1);
        assert_eq!(w.commandstats_after, None, "absent in format 1: not read");
        assert_eq!(w.commandstats_before.as_ref().map(|c| c[0].calls), Some(1));
    }
}
