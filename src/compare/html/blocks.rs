//! The modes' parts of the HTML report, drawn by their block's kind (`record::block::Block::html`)
//! without naming a mode: a test's blocks inside its section (a delivery test's counts and
//! seconds), the runs' blocks as sections of the page (a replay's trace and slip).

use crate::compare::input::Input;
use crate::record::block::{self, Side, Tree};

/// Each test block's part of `test`'s section, from every run whose test has one (its first
/// repetition's: counts of different runs do not make a median).
pub fn test_parts(s: &mut String, inputs: &[Input], test: &str) {
    for kind in block::kinds().iter().filter(|k| k.at == block::TEST) {
        let sides: Vec<(Side, &Tree)> = inputs
            .iter()
            .enumerate()
            .filter_map(|(index, i)| {
                let t = i.tests.iter().find(|t| t.name == test)?;
                let tree = t
                    .samples
                    .iter()
                    .find_map(|x| x.detail.as_ref()?.blocks.tree(kind.key))?;
                let (label, test) = (i.label.clone(), test.to_string());
                Some((Side { label, test, index }, tree))
            })
            .collect();
        if !sides.is_empty() {
            kind.html(&sides, s);
        }
    }
}

/// Each run-wide block's section of the page, from every side that has one (its first run's).
pub fn run_sections(s: &mut String, inputs: &[Input]) {
    for kind in block::kinds().iter().filter(|k| k.at == block::RUN) {
        let sides: Vec<(Side, &Tree)> = inputs
            .iter()
            .enumerate()
            .filter_map(|(index, i)| {
                let tree = i.costs.runs.iter().find_map(|b| b.tree(kind.key))?;
                let label = i.label.clone();
                let test = String::new();
                Some((Side { label, test, index }, tree))
            })
            .collect();
        if !sides.is_empty() {
            kind.html(&sides, s);
        }
    }
}
