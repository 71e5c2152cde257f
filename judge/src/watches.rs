//! The watches each session has pending, from the history: set by a
//! successful watching read (`exists` also on a missing node), ended by the
//! notification that fires them or by the session's end.
//!
//! Across a reconnect the watches stay: kazoo and Curator re-register them
//! with `setWatches`, whose paths the history does not spell out, so the
//! judges take the client's word for it (the server fires what was missed).

use std::collections::BTreeMap;

use crate::history::{Record, SessionEvent, TxnRecord};
use crate::run::Run;

/// ZooKeeper's `NoNode` error code.
pub const NO_NODE: i32 = -101;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WatchKind {
    /// `getData` or `exists` on a node that exists: fires on change or delete.
    Data,
    /// `exists` on a missing node: fires when it is created.
    Exists,
    /// `getChildren`: fires when a child comes or goes, or the node is deleted.
    Child,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Watch {
    pub session: i64,
    pub path: String,
    pub kind: WatchKind,
    /// The record index of the reply that set it.
    pub set_at: usize,
}

/// The watches pending at the end of the history.
pub fn pending_at_end(run: &Run) -> Vec<Watch> {
    pending_before(run, run.records.len())
}

/// The watches pending before record `upto`.
pub fn pending_before(run: &Run, upto: usize) -> Vec<Watch> {
    let mut pending: BTreeMap<(i64, String, WatchKind), usize> = BTreeMap::new();
    for (i, (_, r)) in run.records.iter().enumerate().take(upto) {
        match r {
            Record::Reply {
                session, err, lost, ..
            } if !lost => {
                let Some((_, op)) = run.request(i) else {
                    continue;
                };
                if !op.watch {
                    continue;
                }
                let Some(path) = &op.path else { continue };
                let kind = match (op.op.as_str(), *err) {
                    ("exists", 0) | ("getData", 0) => WatchKind::Data,
                    ("exists", NO_NODE) => WatchKind::Exists,
                    ("getChildren" | "getChildren2", 0) => WatchKind::Child,
                    _ => continue,
                };
                pending.insert((*session, path.clone(), kind), i);
            }
            Record::Notify {
                session,
                event,
                path,
                ..
            } => {
                let kinds: &[WatchKind] = match event.as_str() {
                    "NodeDeleted" => &[WatchKind::Data, WatchKind::Exists, WatchKind::Child],
                    "NodeDataChanged" => &[WatchKind::Data, WatchKind::Exists],
                    "NodeCreated" => &[WatchKind::Exists, WatchKind::Data],
                    "NodeChildrenChanged" => &[WatchKind::Child],
                    _ => &[],
                };
                for k in kinds {
                    pending.remove(&(*session, path.clone(), *k));
                }
            }
            Record::Session {
                session,
                event: SessionEvent::Expired | SessionEvent::Closed,
                ..
            } => {
                pending.retain(|(s, _, _), _| s != session);
            }
            Record::Commit {
                session,
                txn: TxnRecord::CloseSession { .. },
                ..
            } => pending.retain(|(s, _, _), _| s != session),
            _ => {}
        }
    }
    pending
        .into_iter()
        .map(|((session, path, kind), set_at)| Watch {
            session,
            path,
            kind,
            set_at,
        })
        .collect()
}

impl Watch {
    /// Whether the watch can still fire after the end of the history: its
    /// node (or parent) exists, or it waits for a creation.
    pub fn can_fire(&self, run: &Run) -> bool {
        let exists = run.tree.node_at(&self.path, run.tree.last_zxid).is_some();
        match self.kind {
            WatchKind::Data | WatchKind::Child => exists,
            // A sequential contender's name never comes back: waiting for
            // its creation is waiting for ever. Any other path may be made.
            WatchKind::Exists => !exists,
        }
    }

    pub fn describe(&self, run: &Run) -> String {
        let kind = match self.kind {
            WatchKind::Data => "a data watch",
            WatchKind::Exists => "an exists watch (for its creation)",
            WatchKind::Child => "a child watch",
        };
        format!(
            "{kind} on {} set by the reply of {}",
            self.path,
            crate::story::line(run, self.set_at)
        )
    }
}
