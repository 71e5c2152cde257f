//! One server: its data tree as far as it has applied the log, and the
//! watches its connected sessions set (S19: watches live at the server).

use crate::proto::Zxid;
use crate::tree::DataTree;
use crate::watch::WatchManager;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Server {
    pub tree: DataTree,
    /// The newest zxid this server applied; never goes back.
    pub applied: Zxid,
    /// A partitioned follower applies nothing until healed.
    pub partitioned: bool,
    pub watches: WatchManager,
}

impl Server {
    pub fn new() -> Self {
        Server {
            tree: DataTree::new(),
            applied: 0,
            partitioned: false,
            watches: WatchManager::new(),
        }
    }
}
