//! A server's half of a read: answering from its own tree (S28), watch
//! registration aside (the server's `WatchManager` does that). The newer
//! reads live here too: `getEphemerals` (S32), `getAllChildrenNumber`
//! (S33), `multiRead` (S34).

use super::{java_order, DataTree, Node};
use crate::path::validate_path;
use crate::proto::{Op, Reply, Response, SessionId, ZkError, Zxid};

impl DataTree {
    /// Answer a read (`Exists`, `GetData`, `GetChildren`, `Sync`,
    /// `GetAllChildrenNumber`, `MultiRead`) from this tree, as the system
    /// session 0 (which owns no ephemerals: use [`DataTree::read_as`] for
    /// `GetEphemerals`). Watch registration is the server's job (see
    /// `watch`), not the tree's.
    ///
    /// An invalid path fails with `BadArguments` (the Java client's own
    /// check); a write op given here fails with `Unimplemented`.
    pub fn read(&self, op: &Op) -> Reply {
        self.read_as(0, op)
    }

    /// [`DataTree::read`] for `session`: `GetEphemerals` lists that
    /// session's ephemerals (S32).
    pub fn read_as(&self, session: SessionId, op: &Op) -> Reply {
        match op {
            // S34: each read on its own, a failure in place; nothing is
            // rolled back (reads change nothing).
            Op::MultiRead(ops) => {
                crate::path::validate_request(op)?;
                Ok(Response::Multi(
                    ops.iter().map(|sub| self.read_as(session, sub)).collect(),
                ))
            }
            _ => {
                validate_path(op.path())?;
                self.read_one(session, op)
            }
        }
    }

    fn read_one(&self, session: SessionId, op: &Op) -> Reply {
        match op {
            Op::Exists { path, .. } => Ok(Response::Exists(self.get(path).map(Node::client_stat))),
            Op::GetData { path, .. } => {
                let node = self.get(path).ok_or(ZkError::NoNode)?;
                Ok(Response::Data {
                    data: node.data.clone(),
                    stat: node.client_stat(),
                })
            }
            Op::GetChildren { path, .. } => {
                let node = self.get(path).ok_or(ZkError::NoNode)?;
                Ok(Response::Children {
                    names: Self::children_in_server_order(node),
                    stat: node.client_stat(),
                })
            }
            Op::Sync { .. } => Ok(Response::Synced),
            Op::GetEphemerals { prefix } => {
                // `FinalRequestProcessor`: `/` (or blank) lists all, any other
                // prefix is matched with `String.startsWith`, not by path.
                let mut paths = self.ephemerals_in_server_order(session);
                if prefix.trim() != "/" {
                    paths.retain(|p| p.starts_with(prefix.as_str()));
                }
                Ok(Response::Ephemerals(paths))
            }
            Op::GetAllChildrenNumber { path } => {
                self.get(path).ok_or(ZkError::NoNode)?;
                Ok(Response::AllChildrenNumber(self.descendants(path) as i32))
            }
            _ => Err(ZkError::Unimplemented),
        }
    }

    /// How many nodes lie below `path` (`DataTree.getAllChildrenNumber`:
    /// every node but the root for `/`, else the keys starting with `path/`).
    fn descendants(&self, path: &str) -> usize {
        if path == "/" {
            return self.nodes.len().saturating_sub(1);
        }
        let below = format!("{path}/");
        self.nodes
            .range::<str, _>((
                std::ops::Bound::Included(below.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(key, _)| key.starts_with(below.as_str()))
            .count()
    }

    /// The children of `node` (at `path`) in the order a real server lists
    /// them: Java `HashSet` order, by bucket and then insertion — `czxid`,
    /// then the op's place in its multi (see `tree/java_order.rs`). Not sorted — recipes must sort (S30).
    fn children_in_server_order(node: &Node) -> Vec<String> {
        let mut keyed: Vec<(u32, (Zxid, u32), &String)> = node
            .children
            .iter()
            .map(|(name, order)| {
                let bucket = java_order::bucket_of_hash(order.hash, node.child_table_len);
                (bucket, order.born, name)
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, name)| name.clone()).collect()
    }
}
