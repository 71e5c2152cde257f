//! The leader's tree, rebuilt from the history's [`Record::Commit`]s, so
//! that every judge asks the same question the same way: "what were the
//! children of /L at zxid z, and whose were they?".
//!
//! Each znode's life is an interval of zxids: it exists at `z` when it was
//! created at or before `z` and not yet deleted at `z` (a node created and
//! deleted by one multi never exists). A session's ephemerals die with the
//! `closeSession` transaction that ends it, as ZooKeeper's leader does.

use std::collections::BTreeMap;

use crate::history::{Record, TxnRecord};

/// One life of one znode (a path can be created again after a delete).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Life {
    pub path: String,
    pub created: i64,
    pub deleted: Option<i64>,
    /// The session whose ephemeral it is; 0 for a persistent node.
    pub ephemeral_owner: i64,
    /// The session whose request created it.
    pub creator: i64,
    /// The record index of the creating commit, and of the deleting one.
    pub created_at: usize,
    pub deleted_at: Option<usize>,
    /// The session whose transaction deleted it (its own close or expiry
    /// for an ephemeral that died with its session).
    pub deleted_by: Option<i64>,
}

impl Life {
    pub fn exists_at(&self, zxid: i64) -> bool {
        self.created <= zxid && self.deleted.is_none_or(|d| d > zxid)
    }

    /// The session that holds the node: its ephemeral owner, else its creator.
    pub fn session(&self) -> i64 {
        if self.ephemeral_owner != 0 {
            self.ephemeral_owner
        } else {
            self.creator
        }
    }

    /// The last path component.
    pub fn name(&self) -> &str {
        name_of(&self.path)
    }
}

/// A session's life on the leader: the zxids that opened and ended it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionLife {
    pub created: Option<i64>,
    /// The closing transaction: its zxid, record index, and whether it was
    /// an expiry (rather than the client's close).
    pub ended: Option<(i64, usize, bool)>,
}

/// One committed leaf transaction (a multi's parts are leaves of one zxid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write<'h> {
    pub index: usize,
    pub zxid: i64,
    pub session: i64,
    pub xid: Option<i32>,
    pub txn: &'h TxnRecord,
    /// The other leaves of the same multi (empty outside a multi).
    pub siblings: &'h [TxnRecord],
}

#[derive(Clone, Debug, Default)]
pub struct Tree {
    lives: Vec<Life>,
    /// Indices into `lives`, by parent path.
    by_parent: BTreeMap<String, Vec<usize>>,
    by_path: BTreeMap<String, Vec<usize>>,
    pub sessions: BTreeMap<i64, SessionLife>,
    /// The newest committed zxid.
    pub last_zxid: i64,
}

impl Tree {
    /// Rebuild the tree from a history's commits, in file order.
    pub fn build(records: &[(usize, Record)]) -> Tree {
        let mut tree = Tree::default();
        let mut live: BTreeMap<String, usize> = BTreeMap::new();
        for (index, (_, record)) in records.iter().enumerate() {
            let Record::Commit {
                zxid, session, txn, ..
            } = record
            else {
                continue;
            };
            tree.last_zxid = tree.last_zxid.max(*zxid);
            for leaf in applied_leaves(txn) {
                tree.apply(&mut live, index, *zxid, *session, leaf);
            }
        }
        tree
    }

    fn apply(
        &mut self,
        live: &mut BTreeMap<String, usize>,
        index: usize,
        zxid: i64,
        session: i64,
        txn: &TxnRecord,
    ) {
        match txn {
            TxnRecord::Create {
                path,
                ephemeral_owner,
                ..
            } => {
                let id = self.lives.len();
                self.lives.push(Life {
                    path: path.clone(),
                    created: zxid,
                    deleted: None,
                    ephemeral_owner: *ephemeral_owner,
                    creator: session,
                    created_at: index,
                    deleted_at: None,
                    deleted_by: None,
                });
                self.by_parent
                    .entry(parent_of(path).to_string())
                    .or_default()
                    .push(id);
                self.by_path.entry(path.clone()).or_default().push(id);
                live.insert(path.clone(), id);
            }
            TxnRecord::Delete { path } => self.delete(live, path, index, zxid, session),
            TxnRecord::CreateSession { .. } => {
                self.sessions.entry(session).or_default().created = Some(zxid);
            }
            TxnRecord::CloseSession {
                ephemerals,
                expired,
            } => {
                self.sessions.entry(session).or_default().ended = Some((zxid, index, *expired));
                for path in ephemerals {
                    self.delete(live, path, index, zxid, session);
                }
                // Only what the record says the leader deleted: an
                // ephemeral it forgot lives on in the rebuilt tree, and
                // the `ephemerals` judge says so.
            }
            TxnRecord::SetData { .. }
            | TxnRecord::Check { .. }
            | TxnRecord::Multi { .. }
            | TxnRecord::Error { .. } => {}
        }
    }

    fn delete(
        &mut self,
        live: &mut BTreeMap<String, usize>,
        path: &str,
        index: usize,
        zxid: i64,
        session: i64,
    ) {
        if let Some(id) = live.remove(path) {
            let life = &mut self.lives[id];
            life.deleted = Some(zxid);
            life.deleted_at = Some(index);
            life.deleted_by = Some(session);
        }
    }

    /// Every life of every node, in creation order.
    pub fn lives(&self) -> &[Life] {
        &self.lives
    }

    /// The children of `parent` that exist at `zxid`, by name.
    pub fn children_at(&self, parent: &str, zxid: i64) -> Vec<&Life> {
        let mut kids: Vec<&Life> = self
            .by_parent
            .get(parent)
            .into_iter()
            .flatten()
            .map(|&id| &self.lives[id])
            .filter(|l| l.exists_at(zxid))
            .collect();
        kids.sort_by(|a, b| a.path.cmp(&b.path));
        kids
    }

    /// Every life `parent`'s children ever had, in creation order.
    pub fn children_ever(&self, parent: &str) -> Vec<&Life> {
        self.by_parent
            .get(parent)
            .into_iter()
            .flatten()
            .map(|&id| &self.lives[id])
            .collect()
    }

    /// The life of `path` at `zxid`, if it existed then.
    pub fn node_at(&self, path: &str, zxid: i64) -> Option<&Life> {
        self.by_path
            .get(path)
            .into_iter()
            .flatten()
            .map(|&id| &self.lives[id])
            .find(|l| l.exists_at(zxid))
    }

    /// Whether `session` is open at `zxid` (created, not yet closed).
    /// Sessions the history never saw created count as open until closed.
    pub fn session_open_at(&self, session: i64, zxid: i64) -> bool {
        match self.sessions.get(&session) {
            Some(life) => life.ended.is_none_or(|(end, _, _)| end > zxid),
            None => true,
        }
    }
}

/// The leaf transactions a commit applied: a multi's parts in order, none
/// of a failed multi (ZooKeeper turns every part of a failed multi into an
/// error), none of an error.
pub fn applied_leaves(txn: &TxnRecord) -> Vec<&TxnRecord> {
    match txn {
        TxnRecord::Multi { txns } => {
            let leaves: Vec<&TxnRecord> = txns.iter().flat_map(applied_leaves_raw).collect();
            if leaves.iter().any(|t| matches!(t, TxnRecord::Error { .. })) {
                Vec::new()
            } else {
                leaves
            }
        }
        TxnRecord::Error { .. } => Vec::new(),
        other => vec![other],
    }
}

fn applied_leaves_raw(txn: &TxnRecord) -> Vec<&TxnRecord> {
    match txn {
        TxnRecord::Multi { txns } => txns.iter().flat_map(applied_leaves_raw).collect(),
        other => vec![other],
    }
}

/// Every committed data write (create, delete, setData) of the history, a
/// multi's parts each on their own, with the multi's other parts.
pub fn writes(records: &[(usize, Record)]) -> Vec<Write<'_>> {
    let mut out = Vec::new();
    for (index, (_, record)) in records.iter().enumerate() {
        let Record::Commit {
            zxid,
            session,
            xid,
            txn,
            ..
        } = record
        else {
            continue;
        };
        let siblings: &[TxnRecord] = match txn {
            TxnRecord::Multi { txns } => txns,
            _ => &[],
        };
        for leaf in applied_leaves(txn) {
            if matches!(
                leaf,
                TxnRecord::Create { .. } | TxnRecord::Delete { .. } | TxnRecord::SetData { .. }
            ) {
                out.push(Write {
                    index,
                    zxid: *zxid,
                    session: *session,
                    xid: *xid,
                    txn: leaf,
                    siblings,
                });
            }
        }
    }
    out
}

/// The path a data write touches.
pub fn write_path(txn: &TxnRecord) -> Option<&str> {
    match txn {
        TxnRecord::Create { path, .. }
        | TxnRecord::Delete { path }
        | TxnRecord::SetData { path, .. }
        | TxnRecord::Check { path } => Some(path),
        _ => None,
    }
}

/// `/a/b` → `/a`; `/a` → `/`.
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// `/a/b` → `b`.
pub fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `path` is `root` or below it.
pub fn is_under(path: &str, root: &str) -> bool {
    if root == "/" {
        return path.starts_with('/');
    }
    path == root
        || (path.len() > root.len()
            && path.starts_with(root)
            && path[root.len()..].starts_with('/'))
}
