//! The replay's block as the record's readers use it (`record::block::Block`): the run's
//! `replay` block, merged across shards (`block::merged`), drawn as the HTML report's Replay
//! section (`html.rs`); no compare table, and a killed replay does not rebuild it (its counts
//! are the schedule's, which the journal does not keep).

use super::block::ReplayRecord;
use crate::record::block::{self, Block, Recovered, Side, Table};

impl Block for ReplayRecord {
    const KEY: &'static str = "replay";
    const AT: u8 = block::RUN;
    type Head = ();

    fn merge(parts: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String> {
        Ok(super::block::merged(parts.iter().filter_map(|(_, b)| *b)))
    }

    fn tables(_: &[(Side, &Self)]) -> Vec<Table> {
        Vec::new()
    }

    fn recover(_: (), _: &Recovered) -> Option<Self> {
        None
    }

    fn html(sides: &[(Side, &Self)], page: &mut String) {
        super::html::section(page, sides)
    }
}
