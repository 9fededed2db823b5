//! The delivery test's block as the record's readers use it (`record::block::Block`): a test's
//! `delivery` block, its journal head (the block's shape, `DeliveryRecord::shape`), merged across
//! shards (`merge.rs`), drawn in `compare` (`tables.rs`) and the HTML report's test section
//! (`html.rs`), its own limit in the text report (`report.rs`), rebuilt from a killed test's
//! journal (below), so that no reader of records names the mode.

use super::block::{DeliveryRecord, DeliverySecond};
use crate::record::block::{self, Block, Recovered, Side, Table};

impl Block for DeliveryRecord {
    const KEY: &'static str = "delivery";
    const AT: u8 = block::TEST;
    /// The block's shape (mode, receivers, publishers, channels, messages, rate, payload).
    type Head = DeliveryRecord;
    const SEPARATE_RUNS: bool = true;

    fn merge(parts: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String> {
        super::merge::merge(parts)
    }

    fn tables(sides: &[(Side, &Self)]) -> Vec<Table> {
        super::tables::table(sides).into_iter().collect()
    }

    fn recover(head: DeliveryRecord, sums: &Recovered) -> Option<Self> {
        Some(recovered(head, sums))
    }

    fn html(sides: &[(Side, &Self)], page: &mut String) {
        super::html::table(page, sides)
    }

    fn own_limit(&self) -> Option<String> {
        Some(super::report::own_limit(self))
    }

    fn lost(&self) -> u64 {
        self.lost
    }

    /// The deliveries owed are its requests, those not delivered (lost, or still on their way)
    /// unanswered, as a finished delivery test counts them.
    fn requests(&self) -> Option<(u64, u64)> {
        Some((self.expected, self.lost))
    }
}

/// A killed test's block: its shape as the `begin` line holds it (`head`), and from the
/// seconds the messages published, the deliveries owed, the first deliveries (the test's
/// completed requests), and those owed but not delivered by the last full second (`lost`: lost,
/// or still on their way). What only the run's end or the server's monitor says (publish
/// errors, duplicates, the server's fan-out or acks, disconnects, how far receivers were
/// behind, output buffers, pending entries, per-node figures) is not in it (`docs/journal.md`).
fn recovered(head: DeliveryRecord, sums: &Recovered) -> DeliveryRecord {
    let published = sums.rows.iter().map(|s| s.published).sum();
    let expected: u64 = sums.rows.iter().map(|s| s.owed).sum();
    let seconds = sums
        .rows
        .iter()
        .map(|s| DeliverySecond {
            second: s.second,
            published: s.published,
            delivered: s.completed,
            max_latency_us: (s.completed > 0).then(|| s.slowest_ns as f64 / 1000.0),
            ..DeliverySecond::default()
        })
        .collect();
    DeliveryRecord {
        published,
        expected,
        delivered: sums.completed,
        lost: expected.saturating_sub(sums.completed),
        seconds,
        ..head
    }
}
