//! The storm's block as the record's readers use it (`record::block::Block`): its key, its
//! journal head (`StormContext`), and where each of its pieces is.

use super::block::{StormContext, StormRecord};
use crate::record::block::{self, Block, Recovered, Side, Table};

impl Block for StormRecord {
    const KEY: &'static str = "storm";
    const AT: u8 = block::RUN;
    type Head = StormContext;
    /// A storm refuses `--repeat`: a side's storms are separate runs.
    const SEPARATE_RUNS: bool = true;

    fn merge(parts: &[(&str, Option<&Self>)]) -> Result<Option<Self>, String> {
        super::merge::merge(parts)
    }

    fn tables(sides: &[(Side, &Self)]) -> Vec<Table> {
        let storms: Vec<(String, &Self)> =
            sides.iter().map(|(s, b)| (s.label.clone(), *b)).collect();
        super::tables::tables(&storms)
    }

    fn recover(head: StormContext, sums: &Recovered) -> Option<Self> {
        Some(super::recover::recovered(&head, sums))
    }
}
