//! Markers for what happened during a test besides its outages (bands, in `charts`): cluster
//! failovers, MOVED bursts and reconnect storms, placed where the record's counts put them.
//!
//! Owns: which counts make a burst or a storm. Must not: judge anything the record does not
//! hold; these are the record's per-second counts and node outages, grouped and labelled.

use crate::compare::input::{Detail, SecondRow};

use crate::html::svg::Marker;

/// A second with at least this many MOVED/ASK redirects is part of a burst: a cluster that
/// moved slots (a failover, a resharding) answers every key of them with a redirect until the
/// client's map is refreshed; a handful per second is the ordinary trickle of a slot migration.
pub const MOVED_BURST_MIN: u64 = 10;

/// Consecutive seconds with reconnect attempts adding up to at least this many are a storm:
/// one connection reopened is a blip; several connections at once is the server or the network
/// dropping them.
pub const STORM_MIN: u64 = 5;

/// The markers of one run's test; `named` prefixes the run's label where several runs share a
/// chart.
pub fn markers(d: &Detail, named: &dyn Fn(String) -> String) -> Vec<Marker> {
    let mut out = Vec::new();
    for (at, node) in &d.failovers {
        out.push(Marker {
            kind: "failover",
            x: *at,
            label: named(format!(
                "cluster failover: the slots of {node} were served again at {at:.1} s"
            )),
        });
    }
    for (from, to, rows) in runs(&d.timeline, |r| r.moved >= MOVED_BURST_MIN) {
        let n: u64 = rows.iter().map(|r| r.moved).sum();
        out.push(Marker {
            kind: "moved-burst",
            x: from,
            label: named(format!(
                "MOVED burst: {n} redirects from {from:.0} s to {to:.0} s"
            )),
        });
    }
    for (from, to, rows) in runs(&d.timeline, |r| r.reconnect_attempts > 0) {
        let attempts: u64 = rows.iter().map(|r| r.reconnect_attempts).sum();
        if attempts < STORM_MIN {
            continue;
        }
        let connected: u64 = rows.iter().map(|r| r.reconnects).sum();
        out.push(Marker {
            kind: "reconnect-storm",
            x: from,
            label: named(format!(
                "reconnect storm: {attempts} attempts ({connected} connected) from {from:.0} s \
                 to {to:.0} s"
            )),
        });
    }
    out
}

/// Runs of consecutive seconds whose rows pass `hit`: `(start s, end s, rows)`.
fn runs(rows: &[SecondRow], hit: impl Fn(&SecondRow) -> bool) -> Vec<(f64, f64, Vec<SecondRow>)> {
    let mut out: Vec<(f64, f64, Vec<SecondRow>)> = Vec::new();
    for r in rows.iter().filter(|r| hit(r)) {
        match out.last_mut() {
            Some(last) if (r.second - last.1).abs() < 1e-9 => {
                last.1 = r.second + r.span;
                last.2.push(*r);
            }
            _ => out.push((r.second, r.second + r.span, vec![*r])),
        }
    }
    out
}

/// An outage in words, as the text report says it: `from 5.0 s to 8.0 s: 3.0 s, 50 requests
/// failed (50 lost without a reply)`.
pub fn outage_text(o: &crate::record::timeline::OutageRecord) -> String {
    let end = if o.until_end {
        "the end of the test".to_string()
    } else {
        format!("{:.1} s", o.end_s)
    };
    let mut s = format!(
        "from {:.1} s to {end}: {:.1} s, {} requests failed ({} lost without a reply)",
        o.start_s, o.duration_s, o.failed, o.lost
    );
    if o.reconnect_attempts > 0 {
        s.push_str(&format!(
            ", {} of {} reconnects succeeded",
            o.reconnects, o.reconnect_attempts
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(s: u64, moved: u64, attempts: u64) -> SecondRow {
        SecondRow {
            second: s as f64,
            span: 1.0,
            moved,
            reconnect_attempts: attempts,
            reconnects: attempts / 2,
            ..SecondRow::default()
        }
    }

    #[test]
    fn bursts_storms_and_failovers_are_placed_where_the_counts_are() {
        let d = Detail {
            timeline: vec![
                second(0, 3, 0),
                second(1, 40, 4),
                second(2, 25, 4),
                second(3, 0, 0),
                second(4, 0, 2),
                second(5, 12, 0),
            ],
            failovers: vec![(2.4, "127.0.0.1:7001".into())],
            ..Detail::default()
        };
        let m = markers(&d, &|s| s);
        let got: Vec<(&str, f64, &str)> =
            m.iter().map(|m| (m.kind, m.x, m.label.as_str())).collect();
        assert_eq!(
            got,
            [
                (
                    "failover",
                    2.4,
                    "cluster failover: the slots of 127.0.0.1:7001 were served again at 2.4 s"
                ),
                (
                    "moved-burst",
                    1.0,
                    "MOVED burst: 65 redirects from 1 s to 3 s"
                ),
                (
                    "moved-burst",
                    5.0,
                    "MOVED burst: 12 redirects from 5 s to 6 s"
                ),
                (
                    "reconnect-storm",
                    1.0,
                    "reconnect storm: 8 attempts (4 connected) from 1 s to 3 s"
                ),
            ]
        );
        // A trickle is neither: 3 redirects, 2 lone attempts.
        let quiet = Detail {
            timeline: vec![second(0, 9, 0), second(1, 0, 4)],
            ..Detail::default()
        };
        assert!(markers(&quiet, &|s| s).is_empty());
    }
}
