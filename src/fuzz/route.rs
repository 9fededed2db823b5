//! `--cluster`: which node a fuzz command goes to. Keys of one command share a hash tag
//! (`generate.rs`), so the first argument with a `{t…}` tag names the slot, and the slot map
//! read at the start names its primary; a command without keys goes to the entry node. The map is
//! not refreshed: a `MOVED` reply is one more error kind (a fuzz run is not a failover test).

use std::sync::Arc;

use crate::cluster::slot::key_slot;
use crate::engine::ConnSetup;

/// The nodes and the slot map (node index of every slot's primary).
pub struct Routes {
    /// Every primary's connection setup, by node index (`None`: not a primary with slots).
    pub nodes: Vec<Option<Arc<ConnSetup>>>,
    /// Slot → node index (`u16::MAX`: no owner).
    pub owners: Vec<u16>,
}

impl Routes {
    /// The node a command goes to, if its keys name one.
    pub fn node_of(&self, args: &[Vec<u8>]) -> Option<usize> {
        let key = args.iter().skip(1).find(|a| a.starts_with(b"{t"))?;
        let owner = *self.owners.get(usize::from(key_slot(key)))?;
        let node = usize::from(owner);
        self.nodes.get(node)?.as_ref().map(|_| node)
    }

    /// Every primary's setup (for the watch and the final look).
    pub fn all(&self) -> Vec<Arc<ConnSetup>> {
        self.nodes.iter().flatten().cloned().collect()
    }
}
