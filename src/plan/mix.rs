//! A mix's commands as planned (`--ratio`, `--command`s, memtier's `--wait-ratio` WAITs): the
//! types `workloads` builds and `wait` adds to, apart from both so neither imports the other.

use crate::workload::distribution::KeyPattern;
use crate::workload::suite::SuiteTest;

/// One command of a mix as planned; the run encodes it with the pass's data.
#[derive(Clone, Debug)]
pub struct MixSpec {
    /// Its name in reports (`SET`; a repeated name gets `#2`, `#3`).
    pub name: String,
    pub source: MixSource,
    pub weight: u32,
    /// Its own key pattern (`None`: the run's).
    pub keys: Option<KeyPattern>,
}

/// Where a mix command's bytes come from.
#[derive(Clone, Debug)]
pub enum MixSource {
    /// A default test's command (`--ratio`'s SET and GET, with the suite's keys and value).
    Suite(&'static SuiteTest),
    /// A `--command` line, `__key__` already turned into `key:__rand_int__`.
    Line(Vec<Vec<u8>>),
}
