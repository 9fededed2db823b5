//! memtier's `--cluster-mode` columns: `MOVED/sec` and `ASK/sec` per row of the table and the
//! JSON, from the redirects the engine counted (`record::Requests::redirects`, by kind).
//!
//! respbench counts a test's redirects, not each command's: `Totals` has the test's figures;
//! a command row has them when they are its own — every row 0.00 in a test without redirects,
//! and the one row with requests when only one has any — and `---` otherwise, rather than a
//! share guessed for it. A row without requests prints `---`, as memtier's `Waits`.

use crate::record::TestRecord;

use super::stats::Row;

/// Fills `rows` (the last is `Totals`) from test `t` of `secs` seconds.
pub fn fill(rows: &mut [Row], t: &TestRecord, secs: f64) {
    let count = |kind: &str| {
        (t.requests.redirects.as_ref())
            .and_then(|r| r.get(kind).copied())
            .unwrap_or(0)
    };
    let (moved, ask) = (count("MOVED"), count("ASK"));
    let rate = |n: u64| n as f64 / secs.max(f64::MIN_POSITIVE);
    let Some((totals, commands)) = rows.split_last_mut() else {
        return;
    };
    let busy = commands.iter().filter(|r| r.count > 0).count();
    for r in commands.iter_mut() {
        let own = r.count > 0 && (moved + ask == 0 || busy == 1);
        (r.moved, r.ask) = match own {
            true => (Some(rate(moved)), Some(rate(ask))),
            false => (None, None),
        };
    }
    (totals.moved, totals.ask) = (Some(rate(moved)), Some(rate(ask)));
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn rows(counts: &[u64]) -> Vec<Row> {
        (counts.iter())
            .map(|&count| Row {
                count,
                ..Row::default()
            })
            .chain([Row::default()])
            .collect()
    }

    fn test(moved: u64, ask: u64) -> TestRecord {
        let mut t = TestRecord::default();
        t.requests.redirects = Some(BTreeMap::from([
            ("MOVED".to_string(), moved),
            ("ASK".to_string(), ask),
            ("TRYAGAIN".to_string(), 7),
        ]));
        t
    }

    #[test]
    fn totals_have_the_tests_figures_and_rows_only_their_own() {
        let mut r = rows(&[10, 20, 0]);
        fill(&mut r, &test(0, 0), 2.0);
        let shown: Vec<_> = r.iter().map(|r| (r.moved, r.ask)).collect();
        let zero = (Some(0.0), Some(0.0));
        assert_eq!(shown, [zero, zero, (None, None), zero]);

        let mut r = rows(&[10, 20, 0]);
        fill(&mut r, &test(8, 4), 2.0);
        let shown: Vec<_> = r.iter().map(|r| (r.moved, r.ask)).collect();
        assert_eq!(
            shown,
            [
                (None, None),
                (None, None),
                (None, None),
                (Some(4.0), Some(2.0))
            ]
        );

        let mut r = rows(&[0, 20]);
        fill(&mut r, &test(8, 4), 2.0);
        assert_eq!((r[1].moved, r[1].ask), (Some(4.0), Some(2.0)));
        assert_eq!((r[0].moved, r[0].ask), (None, None));
    }
}
