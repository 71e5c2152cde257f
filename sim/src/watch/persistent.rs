//! The persistent half of a server's watch tables (S37): the watches
//! `addWatch` sets, each with its mode, and which of them hear a trigger.

use std::collections::{BTreeMap, BTreeSet};

use crate::proto::{AddWatchMode, EventType, SessionId};
use crate::tree::Trigger;

/// Persistent watches by path, each session with its mode.
pub(super) type ModeTable = BTreeMap<String, BTreeMap<SessionId, AddWatchMode>>;

/// The persistent halves of the data and child tables (S37).
///
/// Hashed only when not empty, so that a server that never had one keeps
/// the fingerprint it had before persistent watches were modelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PersistentTables {
    pub(super) data: ModeTable,
    pub(super) child: ModeTable,
}

impl std::hash::Hash for PersistentTables {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if !self.is_empty() {
            self.data.hash(state);
            self.child.hash(state);
        }
    }
}

impl PersistentTables {
    pub(super) fn is_empty(&self) -> bool {
        self.data.is_empty() && self.child.is_empty()
    }
    pub(super) fn has_recursive(&self) -> bool {
        self.data
            .values()
            .chain(self.child.values())
            .flat_map(|m| m.values())
            .any(|&m| m == AddWatchMode::PersistentRecursive)
    }
}

/// The sessions whose persistent watches in `table` hear `trigger`: at the
/// path itself every mode (recursive ones not for `NodeChildrenChanged`),
/// at each ancestor recursive ones only, never for `NodeChildrenChanged`
/// (`WatchManager.triggerWatch` with its `PathParentIterator`, which walks
/// the ancestors only while some recursive watch exists).
pub(super) fn persistent_hearers(
    table: &ModeTable,
    trigger: &Trigger,
    any_recursive: bool,
) -> BTreeSet<SessionId> {
    let children = trigger.kind == EventType::NodeChildrenChanged;
    let mut out = BTreeSet::new();
    if let Some(sessions) = table.get(&trigger.path) {
        for (&s, &mode) in sessions {
            if mode == AddWatchMode::Persistent || !children {
                out.insert(s);
            }
        }
    }
    if any_recursive && !children {
        let mut path = trigger.path.as_str();
        while path != "/" {
            path = crate::path::split(path).0;
            if let Some(sessions) = table.get(path) {
                out.extend(
                    sessions
                        .iter()
                        .filter(|(_, &m)| m == AddWatchMode::PersistentRecursive)
                        .map(|(&s, _)| s),
                );
            }
        }
    }
    out
}

/// Remove `session`'s persistent entry on `path`; whether it was there.
pub(super) fn remove_mode(table: &mut ModeTable, session: SessionId, path: &str) -> bool {
    let Some(sessions) = table.get_mut(path) else {
        return false;
    };
    let removed = sessions.remove(&session).is_some();
    if sessions.is_empty() {
        table.remove(path);
    }
    removed
}
