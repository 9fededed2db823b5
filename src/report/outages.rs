//! The full report's "Outages" section: each outage the timeline shows (`metrics::outage`), on
//! the test's clock and the wall clock, so that a failover test reads "down from 12:00:01.5 to
//! 12:00:03.6, 2.1 s, 412 requests failed, 20 connections reopened" without opening the record.
//! Printed only when there was one: a run without trouble keeps the reference's layout.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use crate::metrics::TestResult;
use crate::metrics::outage::{Outage, failed_apart, outages};
use crate::timestamp;

/// Appends the section (nothing when the test had no outage), then the cluster nodes whose
/// connections failed.
pub(super) fn section(s: &mut String, r: &TestResult) {
    let found = outages(&r.timeline, r.elapsed, r.unanswered);
    if !found.is_empty() {
        let _ = writeln!(
            s,
            "\nOutages (requests lost or nothing completed; 0.1 s resolution): {}",
            found.len()
        );
        for (n, o) in found.iter().enumerate() {
            outage_line(s, n + 1, o, r.started_at);
        }
        // The rest of the test's failures, so that the lines add up to its count.
        let seconds: Vec<_> = r.timeline.seconds.iter().map(|sec| sec.slots).collect();
        let apart = failed_apart(&seconds, &found);
        if apart > 0 {
            let _ = writeln!(
                s,
                "  and {apart} requests failed outside them (while others completed)"
            );
        }
    }
    node_section(s, r);
}

/// Cluster: one line per node whose connections failed. A dead primary among several is not an
/// outage of the whole test (the other shards keep completing), so it is listed here per node.
fn node_section(s: &mut String, r: &TestResult) {
    let Some(c) = &r.cluster else { return };
    let down: Vec<_> = c
        .nodes
        .iter()
        .filter_map(|n| n.outage.map(|o| (n, o)))
        .collect();
    if down.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nCluster node outages (connections lost): {}",
        down.len()
    );
    for (n, o) in down {
        let end = o.end.map_or("the end of the test".to_string(), |e| {
            format!("{:.1} s", e.as_secs_f64())
        });
        let _ = writeln!(
            s,
            "  {}: from {:.1} s to {end}: {:.1} s, {} requests lost",
            n.address,
            o.start.as_secs_f64(),
            o.duration(r.elapsed).as_secs_f64(),
            n.lost
        );
    }
}

fn outage_line(s: &mut String, n: usize, o: &Outage, started_at: Option<SystemTime>) {
    let wall = |d: Duration| started_at.map(|t| timestamp::rfc3339(t + d));
    let end = if o.until_end {
        "the end of the test".to_string()
    } else {
        format!("{:.1} s", o.end().as_secs_f64())
    };
    let _ = write!(
        s,
        "  {n}. from {:.1} s to {end}: {:.1} s",
        o.start().as_secs_f64(),
        o.duration().as_secs_f64()
    );
    if let Some(from) = wall(o.start()) {
        let _ = write!(s, " ({from}");
        if !o.until_end {
            let _ = write!(s, " to {}", wall(o.end()).unwrap_or_default());
        }
        s.push(')');
    }
    s.push('\n');
    let _ = write!(s, "     {} requests failed", o.failed);
    if o.lost != o.failed {
        let _ = write!(s, " ({} without a reply)", o.lost);
    }
    let _ = write!(
        s,
        ", {} reconnect attempts, {} reconnected",
        o.reconnect_attempts, o.reconnects
    );
    if o.until_end {
        s.push_str(", no reply until the test ended");
    } else if o.failed == 0 {
        // A stall that ended (no --timeout): requests waited, none was lost.
        s.push_str(", no reply in it (requests waited, none lost)");
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{ClusterStats, NodeOutage, NodeStats, Outcome, SLOTS, Slot};

    #[test]
    fn each_outage_gets_its_offsets_wall_clock_and_counts() {
        let mut r = TestResult::empty("SET", None, Outcome::Completed);
        let mut slot = |i: usize, v: Slot| {
            let sec = r.timeline.second_mut(i / SLOTS);
            sec.slots[i % SLOTS] = v;
        };
        for i in 0..30 {
            slot(
                i,
                Slot {
                    completed: 10,
                    ..Slot::default()
                },
            );
        }
        let lost = Slot {
            failed: 4,
            lost: 4,
            reconnect_attempts: 2,
            ..Slot::default()
        };
        slot(5, lost);
        slot(6, lost);
        slot(
            7,
            Slot {
                completed: 3,
                reconnects: 2,
                ..Slot::default()
            },
        );
        slot(20, lost);
        slot(
            25,
            Slot {
                completed: 9,
                failed: 1,
                lost: 1,
                ..Slot::default()
            },
        );
        r.elapsed = Duration::from_secs(3);
        r.started_at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(86_400));
        let mut s = String::new();
        section(&mut s, &r);
        assert_eq!(
            s,
            "\nOutages (requests lost or nothing completed; 0.1 s resolution): 2\n  \
             1. from 0.5 s to 0.7 s: 0.2 s (1970-01-02T00:00:00.500Z to 1970-01-02T00:00:00.700Z)\n     \
             8 requests failed, 4 reconnect attempts, 2 reconnected\n  \
             2. from 2.0 s to 2.1 s: 0.1 s (1970-01-02T00:00:02.000Z to 1970-01-02T00:00:02.100Z)\n     \
             4 requests failed, 2 reconnect attempts, 0 reconnected\n  \
             and 1 requests failed outside them (while others completed)\n"
        );
        let mut cluster = ClusterStats::default();
        let mut node = NodeStats::new();
        node.address = "127.0.0.1:7001".into();
        node.lost = 12;
        node.outage = Some(NodeOutage {
            start: Duration::from_millis(2000),
            end: Some(Duration::from_millis(4300)),
        });
        cluster.nodes = vec![NodeStats::new(), node];
        r.cluster = Some(cluster);
        let mut s = String::new();
        section(&mut s, &r);
        assert!(
            s.ends_with(
                "\nCluster node outages (connections lost): 1\n  \
                 127.0.0.1:7001: from 2.0 s to 4.3 s: 2.3 s, 12 requests lost\n"
            ),
            "{s}"
        );
        let mut quiet = TestResult::empty("SET", None, Outcome::Completed);
        quiet.elapsed = Duration::from_secs(1);
        let mut s = String::new();
        section(&mut s, &quiet);
        assert!(s.is_empty());
    }
}
