//! The delivery tests' table in `compare` and the HTML report: what each side's test delivered,
//! lost and duplicated, which a latency column cannot say (a side that lost half its messages
//! can look fast).

use super::block::DeliveryRecord;
use crate::record::block::{Side, Table};

/// A row per delivery test and side (`None` when no side has one). A delivery test refuses
/// `--repeat`, so a side's test has one block (the first repetition's, in older records).
pub(super) fn table(sides: &[(Side, &DeliveryRecord)]) -> Option<Table> {
    let mut rows: Vec<Vec<String>> = sides
        .iter()
        .map(|(side, d)| {
            let dropped = d.disconnects.iter().filter(|x| x.by_server).count();
            vec![
                side.test.clone(),
                side.label.clone(),
                d.mode.clone(),
                d.receivers.to_string(),
                d.expected.to_string(),
                d.delivered.to_string(),
                d.lost.to_string(),
                d.duplicates.to_string(),
                d.acked.map_or("-".into(), |a| a.to_string()),
                dropped.to_string(),
            ]
        })
        .collect();
    rows.sort_by(|a, b| a[0].cmp(&b[0]));
    (!rows.is_empty()).then(|| Table {
        title: "Message delivery",
        note: "lost = owed and never delivered",
        head: vec![
            "test",
            "side",
            "mode",
            "receivers",
            "owed",
            "delivered",
            "lost",
            "duplicates",
            "acked",
            "dropped by server",
        ],
        rows,
    })
}
