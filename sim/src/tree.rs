//! The data tree: nodes, their Stats, and ZooKeeper's rules for changing them.
//!
//! Writes happen in two halves, as in the real server: the leader
//! *prepares* a request against its newest tree (`PrepRequestProcessor`:
//! validation, error codes, the sequential suffix) into a [`Txn`], and every
//! server *applies* committed txns in zxid order (`DataTree.processTxn`),
//! which is where Stats change and watch triggers come from.
//!
//! Two counters per parent, as in ZooKeeper 3.8 (rule S5). The server
//! persists only a *create* counter (`StatPersisted.cversion`, here
//! [`Node::seq_counter`]): creates advance it, deletes do not, and it is the
//! sequential suffix. The `cversion` a client reads is derived from it by
//! `DataNode.copyStat` as `2 · creates − numChildren` — every child that is
//! no longer there was deleted once — so reads see creates *and* deletes
//! counted. [`Node::stat`] always holds the client-visible Stat.

mod apply;
mod java_order;
mod prepare;
mod read;
mod rename;
mod wire;

#[cfg(test)]
mod tests;

pub use wire::{exceeds_max_buffer, request_len, JUTE_MAX_BUFFER};

use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::cow_mut::cow_mut;
use crate::proto::{EventType, Op, Reply, SessionId, Stat, Zxid};

/// The nodes every fresh 3.8 server has (`DataTree()` and `addConfigNode`).
const SYSTEM_NODES: [&str; 4] = ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"];

/// `/zookeeper/config` carries `READ_ACL_UNSAFE`: anyone may read, nobody
/// may write or create under it (without a superuser).
const CONFIG_NODE: &str = "/zookeeper/config";

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub data: Vec<u8>,
    /// The Stat as a client reads it (`DataNode.copyStat`), kept current —
    /// except that a container keeps the server's own marker
    /// [`CONTAINER_OWNER`](crate::proto::CONTAINER_OWNER) in
    /// `ephemeral_owner`, which a client reads as 0: see [`Node::client_stat`].
    pub stat: Stat,
    /// Child names (not paths), sorted, each with where it sits in the
    /// server's Java `HashSet` (kept here so that a listing need not look
    /// every child up and hash its name again).
    pub children: BTreeMap<String, ChildOrder>,
    /// Sequential-suffix counter of this node as a parent (S5): advanced by
    /// creates only, while `stat.cversion` is advanced by creates and deletes.
    pub seq_counter: i32,
    /// Length of the Java `HashSet` table that holds the children on a real
    /// server (0 before the first child): it decides the order in which
    /// `getChildren` lists them (S30, see `tree/java_order.rs`).
    pub child_table_len: u32,
    /// Position of this node's create within its txn (0 for a plain create,
    /// `i` for the `i`-th op of a multi). With `czxid` it is the order in
    /// which the parent's `HashSet` received the name: siblings created by
    /// one multi share a czxid and are inserted in the multi's op order.
    pub multi_index: u32,
}

/// Where a child name sits in its parent's Java `HashSet`, which decides
/// the order `getChildren` lists it in (S30): its bucket comes from the
/// name's `hashCode`, and within a bucket names follow insertion order —
/// the child's `czxid`, then its place in its multi (`multi_index`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChildOrder {
    /// `name.hashCode()`.
    pub hash: i32,
    /// The child's `czxid` and `multi_index`.
    pub born: (Zxid, u32),
}

impl ChildOrder {
    pub(crate) fn of(name: &str, born: (Zxid, u32)) -> Self {
        ChildOrder {
            hash: java_order::string_hash(name),
            born,
        }
    }
}

/// A Stat as `DataNode.copyStat` hands it to a client: an owner that is not
/// a session (the container marker, S35) reads as 0 (`getClientEphemeralOwner`).
pub(crate) fn client_stat(mut stat: Stat) -> Stat {
    if stat.ephemeral_owner == crate::proto::CONTAINER_OWNER {
        stat.ephemeral_owner = 0;
    }
    stat
}

impl Node {
    /// The Stat a client reads (a container's owner as 0, S35).
    pub fn client_stat(&self) -> Stat {
        client_stat(self.stat)
    }

    /// Whether this node is a container (S35).
    pub fn is_container(&self) -> bool {
        self.stat.ephemeral_owner == crate::proto::CONTAINER_OWNER
    }

    fn new(data: Vec<u8>, stat: Stat) -> Self {
        Node {
            data,
            stat,
            children: BTreeMap::new(),
            seq_counter: 0,
            child_table_len: 0,
            multi_index: 0,
        }
    }

    /// Add a child name created at `born` (its czxid and multi index),
    /// growing the Java table as `HashSet.add` would.
    fn add_child(&mut self, name: &str, born: (Zxid, u32)) {
        // A name already there keeps its place, as in the Java set.
        if let btree_map::Entry::Vacant(slot) = self.children.entry(name.to_string()) {
            slot.insert(ChildOrder::of(name, born));
            self.child_table_len =
                java_order::grown_table_len(self.child_table_len, self.children.len());
        }
        self.refresh_stat();
    }

    /// Recompute the derived Stat fields after a change of children or data.
    fn refresh_stat(&mut self) {
        let n = self.children.len() as i32;
        self.stat.num_children = n;
        // `DataNode.copyStat`: `cversion * 2 - numChildren`, in Java int arithmetic.
        self.stat.cversion = self.seq_counter.wrapping_mul(2).wrapping_sub(n);
        self.stat.data_length = self.data.len() as i32;
    }
}

/// A prepared, ordered change. Applied to the state it was prepared
/// against (as every server's state is, in zxid order), it cannot fail.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Txn {
    Create {
        path: String,
        data: Vec<u8>,
        ephemeral_owner: SessionId,
    },
    Delete {
        path: String,
    },
    /// `version` is the node's *new* data version, as in `SetDataTxn`.
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    /// A `check` that passed (`CheckVersionTxn`): changes nothing, answers
    /// `Checked` inside its multi.
    Check {
        path: String,
    },
    /// A multi whose every op passed preparation.
    Multi(Vec<Txn>),
    /// A request that failed preparation; it still takes a zxid, as in
    /// ZooKeeper (`PrepRequestProcessor` has already called `getNextZxid`
    /// when the check fails, and logs an `ErrorTxn` under that zxid; a failed
    /// multi is logged as a multi of error txns, also with its zxid).
    Error(Reply),
    CreateSession {
        session: SessionId,
    },
    /// Close or expiry: deletes the listed ephemerals at once.
    CloseSession {
        session: SessionId,
        ephemerals: Vec<String>,
    },
}

impl Txn {
    /// How many triggers applying this txn fires, to size their vector
    /// once: two per create or delete (the node's and its parent's), one
    /// per setData. A close is counted by the ephemerals it lists (a server
    /// that knows of more deletes those too, and the vector grows).
    fn trigger_estimate(&self) -> usize {
        match self {
            Txn::Create { .. } | Txn::Delete { .. } => 2,
            Txn::SetData { .. } => 1,
            Txn::Multi(txns) => txns.iter().map(Txn::trigger_estimate).sum(),
            Txn::CloseSession { ephemerals, .. } => 2 * ephemerals.len(),
            Txn::Check { .. } | Txn::Error(_) | Txn::CreateSession { .. } => 0,
        }
    }
}

/// A watch trigger produced by applying a txn: notify `path`'s watchers of `kind`.
///
/// Which watch tables a kind reaches is [`crate::watch::WatchManager`]'s
/// business: `NodeDeleted` reaches both data and child watchers (S16).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Trigger {
    pub path: String,
    pub kind: EventType,
}

/// One session's entry in `DataTree.ephemerals`: a Java `HashSet<String>`
/// created with the default capacity (16) on the session's first ephemeral.
///
/// The real server removes a path from the set when its node goes but
/// keeps the set, and a `HashSet`'s table never shrinks; so a session that
/// once held more than 12 ephemerals keeps a larger table, and that table
/// decides the order of the `NodeDeleted` events its close fires (S24,
/// `java_order::close_session_order`). An empty set whose table is still
/// the default orders nothing: [`EphemeralIndex`] leaves it out of
/// equality and hashing, so that two trees holding the same nodes compare
/// equal for the checker's dedup.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct SessionEphemerals {
    pub(crate) paths: BTreeSet<String>,
    /// Length of the set's table on the real server (16 or more).
    pub(crate) table_len: u32,
}

impl SessionEphemerals {
    fn insert(&mut self, path: &str) {
        if self.paths.insert(path.to_string()) {
            self.table_len = java_order::grown_session_table_len(self.table_len, self.paths.len());
        }
    }

    /// Whether the entry carries nothing a fresh set would not.
    fn is_default(&self) -> bool {
        self.paths.is_empty() && self.table_len <= java_order::SESSION_SET_CAPACITY
    }
}

/// `DataTree.ephemerals`: each session's set, by session.
///
/// A set that has become what a fresh one would be (emptied, its table
/// never grown past the default) may stay: a lock holder's only node comes
/// and goes every round, and removing and re-inserting its session's entry
/// each time cost more than the rest of the delete. Such an entry orders
/// nothing, so equality and hashing skip it — a tree that keeps it is the
/// same state as one that never had it, and hashes as if the map held only
/// the others.
#[derive(Clone, Debug, Default)]
pub(crate) struct EphemeralIndex(pub(crate) BTreeMap<SessionId, SessionEphemerals>);

impl EphemeralIndex {
    /// The entries that say something (see the type's doc).
    fn significant(&self) -> impl Iterator<Item = (&SessionId, &SessionEphemerals)> {
        self.0.iter().filter(|(_, set)| !set.is_default())
    }
}

impl std::ops::Deref for EphemeralIndex {
    type Target = BTreeMap<SessionId, SessionEphemerals>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for EphemeralIndex {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl PartialEq for EphemeralIndex {
    fn eq(&self, other: &Self) -> bool {
        self.significant().eq(other.significant())
    }
}

impl Eq for EphemeralIndex {}

impl std::hash::Hash for EphemeralIndex {
    /// What a `BTreeMap` of the significant entries alone writes (its
    /// length, then each key and value), so a tree's fingerprint is the one
    /// it had when such entries were removed.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.significant().count());
        for entry in self.significant() {
            entry.hash(state);
        }
    }
}

/// Nodes by path. Shared copy-on-write at two levels — the map and each
/// node — because the model checker clones trees far more often than it
/// changes them: a clone costs two reference counts, and the first write to
/// a shared tree copies the map (whose keys and nodes are shared pointers)
/// and then only the nodes it touches.
type NodeMap = BTreeMap<Arc<str>, Arc<Node>>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DataTree {
    nodes: Arc<NodeMap>,
    /// Ephemeral paths by owner (`DataTree.ephemerals`), so that closing a
    /// session does not scan the tree.
    ephemerals: Arc<EphemeralIndex>,
    last_zxid: Zxid,
}

impl Default for DataTree {
    fn default() -> Self {
        Self::new()
    }
}

impl DataTree {
    /// A fresh tree as a new 3.8 server has it: `/` with child `zookeeper`,
    /// which has children `quota` and `config`, all empty. All Stats are
    /// zero except the derived `numChildren` and `cversion` (so `/` reads
    /// `cversion = -1`, `/zookeeper` `cversion = -2`) and the config node's
    /// `aversion = -1` — as measured on a fresh 3.8.0 standalone server.
    /// (In a quorum with dynamic reconfig the config node holds the
    /// membership; not modelled.)
    pub fn new() -> Self {
        let mut tree = DataTree {
            nodes: Arc::default(),
            ephemerals: Arc::default(),
            last_zxid: 0,
        };
        for path in SYSTEM_NODES {
            tree.insert_node(path, Node::new(Vec::new(), Stat::default()));
        }
        for path in &SYSTEM_NODES[1..] {
            let (parent, name) = crate::path::split(path);
            if let Some(parent) = tree.node_mut(parent) {
                parent.add_child(name, (0, 0));
            }
        }
        // `addConfigNode` sets its ACL with `setACL(..., -1)`, which stores
        // the given version: a fresh server reads `aversion = -1` there.
        if let Some(config) = tree.node_mut(CONFIG_NODE) {
            config.stat.aversion = -1;
        }
        tree
    }

    /// Leader side: check `op` from `session` against this (newest) tree and
    /// turn it into a txn, or the error it must fail with.
    ///
    /// Reads are not transactions: preparing one yields
    /// `Txn::Error(Err(ZkError::Unimplemented))`.
    pub fn prepare(&self, session: SessionId, op: &Op) -> Txn {
        prepare::prepare(self, session, op)
    }

    /// Leader side: the txn that closes or expires `session`, listing the
    /// ephemerals it owns in this tree (`PrepRequestProcessor`, closeSession).
    ///
    /// The list is in the order the real server deletes them, which decides
    /// the order of the watch events the close fires: the order of a Java
    /// `HashSet` clone of the session's ephemeral set (see
    /// `java_order::close_session_order`).
    pub fn prepare_close_session(&self, session: SessionId) -> Txn {
        Txn::CloseSession {
            session,
            ephemerals: self.ephemerals_in_server_order(session),
        }
    }

    /// The session's ephemerals in the order of a Java `HashSet` clone of
    /// its set (`DataTree.getEphemerals`): the order a close deletes them
    /// in (S24) and `getEphemerals` lists them in (S32).
    fn ephemerals_in_server_order(&self, session: SessionId) -> Vec<String> {
        let set = self.ephemerals.get(&session);
        let mut keyed: Vec<((Zxid, u32), String)> = set
            .map(|set| &set.paths)
            .into_iter()
            .flatten()
            .map(|path| {
                let born = self
                    .get(path)
                    .map_or((0, 0), |n| (n.stat.czxid, n.multi_index));
                (born, path.clone())
            })
            .collect();
        let table_len = set.map_or(0, |set| set.table_len);
        java_order::close_session_order(&mut keyed, table_len);
        keyed.into_iter().map(|(_, path)| path).collect()
    }

    /// The containers the reaper would delete now (`ContainerManager.getCandidates`,
    /// S35): container nodes with no children whose create counter
    /// (`StatPersisted.cversion`) is above 0 — they have had a child. In
    /// path order (the server collects them in a `HashSet`; a reaper pass
    /// that deletes several may order them otherwise).
    pub fn container_candidates(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, node)| {
                node.is_container() && node.children.is_empty() && node.seq_counter > 0
            })
            .map(|(path, _)| path.to_string())
            .collect()
    }

    /// Leader side: the reaper's `deleteContainer` of `path` (S35).
    pub fn prepare_delete_container(&self, path: &str) -> Txn {
        prepare::prepare_delete_container(self, path)
    }

    /// Server side: apply a committed txn. Returns the reply for the
    /// requesting session and the watch triggers it fires, in order.
    ///
    /// `CreateSession` and `CloseSession` answer `Ok(Response::Synced)`, an
    /// empty success. A txn that no longer fits the tree (possible only if it
    /// was prepared against another state) fails as `DataTree.processTxn`
    /// would, with the error code and no change.
    pub fn apply(&mut self, zxid: Zxid, time_ms: i64, txn: &Txn) -> (Reply, Vec<Trigger>) {
        // Sized once for what the txn fires (two per create or delete);
        // sessions, checks and failed requests fire none and allocate nothing.
        let mut triggers = Vec::with_capacity(txn.trigger_estimate());
        let reply = apply::apply(self, zxid, time_ms, txn, &mut triggers);
        if zxid > self.last_zxid {
            self.last_zxid = zxid;
        }
        (reply, triggers)
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path).map(|n| &**n)
    }

    // The tree's `Arc`s — the node map, each node, the ephemeral index —
    // never have a `Weak`: they are private, no code downgrades them, and
    // the tree lends out only references to what they hold. That is the
    // contract of `cow_mut`, relied on by the three writers below.

    /// The node map to change, copied first if another tree shares it.
    fn nodes_mut(&mut self) -> &mut NodeMap {
        // SAFETY: no `Weak` of the map (above).
        unsafe { cow_mut(&mut self.nodes) }
    }

    /// A node to change, copied first if another tree shares it.
    fn node_mut(&mut self, path: &str) -> Option<&mut Node> {
        let node = self.nodes_mut().get_mut(path)?;
        // SAFETY: no `Weak` of a node (above).
        Some(unsafe { cow_mut(node) })
    }

    /// The ephemeral index to change, copied first if another tree shares it.
    fn ephemerals_mut(&mut self) -> &mut EphemeralIndex {
        // SAFETY: no `Weak` of the index (above).
        unsafe { cow_mut(&mut self.ephemerals) }
    }

    fn insert_node(&mut self, path: &str, node: Node) {
        self.nodes_mut().insert(Arc::from(path), Arc::new(node));
    }

    fn remove_node(&mut self, path: &str) -> Option<Arc<Node>> {
        self.nodes_mut().remove(path)
    }

    fn contains(&self, path: &str) -> bool {
        self.nodes.contains_key(path)
    }

    /// All nodes, in path order.
    pub fn nodes(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.nodes.iter().map(|(p, n)| (&**p, &**n))
    }

    /// Paths of the ephemerals a session owns, sorted.
    pub fn ephemerals_of(&self, session: SessionId) -> Vec<String> {
        self.ephemerals
            .get(&session)
            .map(|set| set.paths.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The largest zxid applied to this tree.
    pub fn last_zxid(&self) -> Zxid {
        self.last_zxid
    }

    /// Set a parent's create counter (S5/S6) to `counter`, keeping the
    /// visible `cversion` consistent. For tests and scenarios that need a
    /// parent near the 2^31 wrap without two billion creates. Returns
    /// `false` if there is no such node.
    pub fn set_seq_counter(&mut self, path: &str, counter: i32) -> bool {
        match self.node_mut(path) {
            Some(node) => {
                node.seq_counter = counter;
                node.refresh_stat();
                true
            }
            None => false,
        }
    }

    fn is_system_path(path: &str) -> bool {
        SYSTEM_NODES.contains(&path)
    }
}
