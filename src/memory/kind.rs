//! Memory per key's block as the record's readers use it (`record::block::Block`): a test's
//! `memory` block, merged across shards (`merge.rs`), drawn in `compare` and the HTML report
//! (`tables.rs`); a killed run does not rebuild it (its second reading never happened).

use super::block::MemoryRecord;
use crate::record::block::{self, Block, Recovered, Side, Table};

impl Block for MemoryRecord {
    const KEY: &'static str = "memory";
    const AT: u8 = block::TEST;
    type Head = ();

    fn merge(parts: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String> {
        super::merge::merge(parts)
    }

    fn tables(sides: &[(Side, &Self)]) -> Vec<Table> {
        super::tables::table(sides).into_iter().collect()
    }

    fn recover(_: (), _: &Recovered) -> Option<Self> {
        None
    }
}
