//! Renaming a data tree (see [`crate::rename`]): paths, ephemeral owners and
//! data carrying guids. The Java-order bookkeeping (`child_table_len`,
//! `czxid`, `multi_index`, the sessions' table lengths) is kept as it is:
//! it describes when and how names were inserted, which a permuted
//! schedule does at the same moments.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{ChildOrder, DataTree, Node, SessionEphemerals};
use crate::rename::{Rename, Renaming};

impl Rename for DataTree {
    fn renamed(&self, r: &Renaming) -> Self {
        let nodes = self
            .nodes
            .iter()
            .map(|(path, node)| {
                let node = Node {
                    data: r.bytes(&node.data),
                    stat: node.stat.renamed(r),
                    children: node
                        .children
                        .iter()
                        .map(|(name, order)| {
                            let name = r.text(name);
                            let order = ChildOrder::of(&name, order.born);
                            (name, order)
                        })
                        .collect(),
                    ..Node::clone(node)
                };
                (Arc::from(r.text(path)), Arc::new(node))
            })
            .collect();
        let ephemerals: BTreeMap<_, _> = self
            .ephemerals
            .iter()
            .map(|(session, set)| {
                let set = SessionEphemerals {
                    paths: set.paths.iter().map(|p| r.text(p)).collect(),
                    table_len: set.table_len,
                };
                (r.session(*session), set)
            })
            .collect();
        DataTree {
            nodes: Arc::new(nodes),
            ephemerals: Arc::new(super::EphemeralIndex(ephemerals)),
            last_zxid: self.last_zxid,
        }
    }
}
