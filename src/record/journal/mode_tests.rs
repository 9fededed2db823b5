//! The journals of the modes with a block of their own (`modes.rs`): what `recover` rebuilds
//! is the block a Ctrl-C at the last full second would have written, from the seconds the
//! modes' own tallies hand over (`metrics::SecondTally::direct`). The helpers are the mode
//! folders' too (`storm/journal_tests.rs`, `fuzz/journal_tests.rs`).

use std::path::PathBuf;
use std::time::Instant;

use super::*;
use crate::metrics::SharedTimeline;

/// A fresh directory for one test's journal.
pub(crate) fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("respbench-modes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub(crate) const STARTED: &str = "2026-01-02T03:04:05.000006Z";

/// A record's head as a run writes it.
pub(crate) fn head() -> Document {
    Document {
        schema: crate::record::document::SCHEMA.into(),
        outcome: "completed".into(),
        command_line: vec!["respbench".into()],
        ..Document::default()
    }
}

/// A timeline that keeps full-precision seconds (a journal is written), and its start.
pub(crate) fn exact_timeline() -> (SharedTimeline, Instant) {
    let timeline = SharedTimeline::default();
    timeline.lock().unwrap().exact = true;
    (timeline, Instant::now())
}

/// The timeline's seconds as the hand-over gives them (`engine::seconds`: the full-precision
/// part moved out).
pub(crate) fn handed(timeline: &SharedTimeline) -> Vec<Second> {
    let mut t = timeline.lock().unwrap();
    t.seconds
        .iter_mut()
        .map(|s| Second {
            exact: s.exact.take(),
            ..s.clone()
        })
        .collect()
}

/// A journal with a head and `seconds` of a test started by `test`, read back as a record.
pub(crate) fn journaled(
    name: &str,
    test: impl Fn() -> TestStart<'static>,
    seconds: &[Second],
) -> Document {
    let d = dir(name);
    let path = d.join("run.json.partial");
    let mut j = Journal::create(&path).unwrap();
    j.head(&head()).unwrap();
    for (i, s) in seconds.iter().enumerate() {
        j.second(test(), i, s).unwrap();
    }
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = Document::read(recognise(&text, Some(&path)).unwrap().unwrap()).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
    doc
}

#[test]
fn a_replays_commands_named_as_it_learns_them_keep_their_figures() {
    let d = dir("names");
    let path = d.join("j.partial");
    let mut j = Journal::create(&path).unwrap();
    j.head(&head()).unwrap();
    let mut names: Vec<String> = vec!["SET".into()];
    for i in 0..3usize {
        if i == 1 {
            names.push("GET".into());
        }
        let mut s = Second {
            completed: 10 * names.len() as u64,
            ..Second::default()
        };
        let mut part = crate::metrics::ExactSecond::default();
        for _ in &names {
            let mut c = crate::metrics::ExactCommand {
                completed: 10,
                ..Default::default()
            };
            for k in 0..10 {
                c.latency.record(1_000 + k);
                part.corrected.record(1_000 + k);
                part.uncorrected.record(900 + k);
                s.latency.record(1_000 + k);
            }
            part.commands.push(c);
        }
        s.exact = Some(Box::new(part));
        let test = TestStart {
            name: "REPLAY",
            commands: names.iter().map(|n| n.to_ascii_lowercase()).collect(),
            mix: names.clone(),
            ..TestStart::default()
        };
        j.second(test, i, &s).unwrap();
    }
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches("\"GET\"").count(),
        1,
        "the names once they grew, not every second: {text}"
    );
    let doc = Document::read(recognise(&text, Some(&path)).unwrap().unwrap()).unwrap();
    let t = &doc.tests[0];
    let mix: Vec<(&str, u64)> = t
        .mix
        .iter()
        .map(|m| (m.name.as_str(), m.completed))
        .collect();
    assert_eq!(mix, [("SET", 30), ("GET", 20)]);
    assert_eq!(t.commands, ["set", "get"]);
    std::fs::remove_dir_all(&d).unwrap();
}
