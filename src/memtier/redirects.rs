//! memtier's `--cluster-mode` columns: `MOVED/sec` and `ASK/sec` per row of the table and the
//! JSON, from the redirects the engine counted (`record::Requests::redirects`, by kind).
//!
//! respbench counts a test's redirects, not each command's: `Totals` has the test's figures;
//! a command row has them when they are its own — every row 0.00 in a test without redirects,
//! and the one row with requests when only one has any — and `---` otherwise, rather than a
//! share guessed for it. A row without requests prints `---`, as memtier's `Waits`.

use crate::record::TestRecord;

/// A row's `MOVED/sec` and `ASK/sec` (`None`: `---`).
pub type Rates = (Option<f64>, Option<f64>);

/// Each row's rates, `counts` the rows' request counts (the last is `Totals`'), from test `t`
/// of `secs` seconds.
pub fn per_row(counts: &[u64], t: &TestRecord, secs: f64) -> Vec<Rates> {
    let count = |kind: &str| {
        (t.requests.redirects.as_ref())
            .and_then(|r| r.get(kind).copied())
            .unwrap_or(0)
    };
    let (moved, ask) = (count("MOVED"), count("ASK"));
    let rate = |n: u64| n as f64 / secs.max(f64::MIN_POSITIVE);
    let Some((_, commands)) = counts.split_last() else {
        return Vec::new();
    };
    let busy = commands.iter().filter(|&&c| c > 0).count();
    let own = |c: u64| c > 0 && (moved + ask == 0 || busy == 1);
    (commands.iter())
        .map(|&c| match own(c) {
            true => (Some(rate(moved)), Some(rate(ask))),
            false => (None, None),
        })
        .chain([(Some(rate(moved)), Some(rate(ask)))])
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The rates of rows with these counts and a `Totals` row after them.
    fn fill(counts: &[u64], t: &TestRecord, secs: f64) -> Vec<Rates> {
        let mut all = counts.to_vec();
        all.push(counts.iter().sum());
        per_row(&all, t, secs)
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
        let shown = fill(&[10, 20, 0], &test(0, 0), 2.0);
        let zero = (Some(0.0), Some(0.0));
        assert_eq!(shown, [zero, zero, (None, None), zero]);

        let shown = fill(&[10, 20, 0], &test(8, 4), 2.0);
        assert_eq!(
            shown,
            [
                (None, None),
                (None, None),
                (None, None),
                (Some(4.0), Some(2.0))
            ]
        );

        let r = fill(&[0, 20], &test(8, 4), 2.0);
        assert_eq!(r[1], (Some(4.0), Some(2.0)));
        assert_eq!(r[0], (None, None));
    }
}
