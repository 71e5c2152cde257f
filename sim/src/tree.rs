//! The data tree: nodes, their Stats, and ZooKeeper's rules for changing them.
//!
//! CONTRACT STUB — the public API below is fixed; bodies are being written.
//!
//! Writes happen in two halves, as in the real server: the leader
//! *prepares* a request against its newest tree (`PrepRequestProcessor`:
//! validation, error codes, the sequential suffix) into a [`Txn`], and every
//! server *applies* committed txns in zxid order (`DataTree.processTxn`),
//! which is where Stats change and watch triggers come from.

use std::collections::BTreeMap;

use crate::proto::{EventType, Op, Reply, SessionId, Stat, Zxid};

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub data: Vec<u8>,
    pub stat: Stat,
    /// Child names (not paths), sorted.
    pub children: std::collections::BTreeSet<String>,
    /// Sequential-suffix counter of this node as a parent (S5): advanced by
    /// creates only, while `stat.cversion` is advanced by creates and deletes.
    pub seq_counter: i32,
}

/// A prepared, ordered change. Applying it cannot fail.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Txn {
    Create { path: String, data: Vec<u8>, ephemeral_owner: SessionId },
    Delete { path: String },
    SetData { path: String, data: Vec<u8>, version: i32 },
    /// A multi whose every op passed preparation.
    Multi(Vec<Txn>),
    /// A request that failed preparation; it still takes a zxid, as in ZooKeeper.
    Error(Reply),
    CreateSession { session: SessionId },
    /// Close or expiry: deletes the listed ephemerals at once.
    CloseSession { session: SessionId, ephemerals: Vec<String> },
}

/// A watch trigger produced by applying a txn: notify `path`'s watchers of `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Trigger {
    pub path: String,
    pub kind: EventType,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataTree {
    nodes: BTreeMap<String, Node>,
}

impl Default for DataTree {
    fn default() -> Self {
        Self::new()
    }
}

impl DataTree {
    /// A fresh tree as a new server has it: `/`, `/zookeeper`, `/zookeeper/quota`...
    pub fn new() -> Self {
        todo!()
    }
    /// Leader side: check `op` from `session` against this (newest) tree and
    /// turn it into a txn, or the error it must fail with.
    pub fn prepare(&self, _session: SessionId, _op: &Op) -> Txn {
        todo!()
    }
    /// Server side: apply a committed txn. Returns the reply for the
    /// requesting session and the watch triggers it fires, in order.
    pub fn apply(&mut self, _zxid: Zxid, _time_ms: i64, _txn: &Txn) -> (Reply, Vec<Trigger>) {
        todo!()
    }
    /// Answer a read (`Exists`, `GetData`, `GetChildren`, `Sync`) from this tree.
    /// Watch registration is the server's job (see `watch`), not the tree's.
    pub fn read(&self, _op: &Op) -> Reply {
        todo!()
    }
    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }
    /// All nodes, in path order.
    pub fn nodes(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.nodes.iter().map(|(p, n)| (p.as_str(), n))
    }
    /// Paths of the ephemerals a session owns, sorted.
    pub fn ephemerals_of(&self, _session: SessionId) -> Vec<String> {
        todo!()
    }
    /// The largest zxid applied to this tree.
    pub fn last_zxid(&self) -> Zxid {
        todo!()
    }
}
