//! The client library's own memory of its watches (`ZKWatchManager`).
//!
//! The server forgets a session's watches when its connection closes; the
//! client library remembers them so that it can re-register them with
//! `SetWatches` on the next connection (S25). A watch enters these tables
//! when the reply that set it is handled, and leaves it when its event is
//! delivered — exactly when the Java client adds and materialises them.

//!
//! Persistent and recursive watches (S37) stay in their own tables until
//! removed: events do not consume them, and `SetWatches2` sends them on
//! every reconnect. A `removeWatches`/`checkWatches` answer (S38) makes the
//! library drop its watches of the asked type on the path, as
//! `ZKWatchManager.removeWatcher` does once the server said OK.

use std::collections::BTreeSet;

use crate::path::split;
use crate::proto::{EventType, WatchedEvent, WatcherType};

/// Which of the three client-side tables a watch lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatchKind {
    /// `getData`, or `exists` on a node that exists.
    Data,
    /// `exists` on a node that does not exist.
    Exist,
    /// `getChildren`.
    Child,
    /// `addWatch(path, PERSISTENT)`.
    Persistent,
    /// `addWatch(path, PERSISTENT_RECURSIVE)`.
    PersistentRecursive,
    /// Not a watch: a successful `removeWatches`/`checkWatches` answer, on
    /// which the library removes its own watches of this type on the path.
    Remove(WatcherType),
}

/// A watch a successful reply registers at the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchReg {
    pub kind: WatchKind,
    pub path: String,
}

/// The persistent and recursive tables (S37).
///
/// Hashed only when not empty, so that a client that never set one keeps
/// the fingerprint it had before they were modelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistentPaths {
    pub node: BTreeSet<String>,
    pub recursive: BTreeSet<String>,
}

impl std::hash::Hash for PersistentPaths {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if !self.is_empty() {
            self.node.hash(state);
            self.recursive.hash(state);
        }
    }
}

impl PersistentPaths {
    pub fn is_empty(&self) -> bool {
        self.node.is_empty() && self.recursive.is_empty()
    }
}

/// The five tables, by path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientWatches {
    pub data: BTreeSet<String>,
    pub exist: BTreeSet<String>,
    pub child: BTreeSet<String>,
    pub persistent: PersistentPaths,
}

impl ClientWatches {
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
            && self.exist.is_empty()
            && self.child.is_empty()
            && self.persistent.is_empty()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.exist.clear();
        self.child.clear();
        self.persistent.node.clear();
        self.persistent.recursive.clear();
    }

    /// Handle the watch part of a successful reply. Returns `false` only
    /// for a removal that found nothing to remove here, which the Java
    /// client reports as `NoWatcherException` although the server said OK
    /// (`ZKWatchManager.removeWatcher`, S38).
    pub fn add(&mut self, reg: WatchReg) -> bool {
        let table = match reg.kind {
            WatchKind::Data => &mut self.data,
            WatchKind::Exist => &mut self.exist,
            WatchKind::Child => &mut self.child,
            WatchKind::Persistent => &mut self.persistent.node,
            WatchKind::PersistentRecursive => &mut self.persistent.recursive,
            WatchKind::Remove(kind) => return self.remove(&reg.path, kind),
        };
        table.insert(reg.path);
        true
    }

    /// Drop the library's watches of `kind` on `path`: `Children` the child
    /// table, `Data` the data and exist tables, `Any` those and the
    /// persistent ones. Whether any was there.
    fn remove(&mut self, path: &str, kind: WatcherType) -> bool {
        let mut removed = false;
        if matches!(kind, WatcherType::Children | WatcherType::Any) {
            removed |= self.child.remove(path);
        }
        if matches!(kind, WatcherType::Data | WatcherType::Any) {
            removed |= self.data.remove(path);
            removed |= self.exist.remove(path);
        }
        if kind == WatcherType::Any {
            removed |= self.persistent.node.remove(path);
            removed |= self.persistent.recursive.remove(path);
        }
        removed
    }

    /// Whether some watch of the library hears `event`
    /// (`ZKWatchManager.materialize` finds a watcher): the Java client
    /// hands an event nobody watches to nobody.
    pub fn hears(&self, event: &WatchedEvent) -> bool {
        let path = event.path.as_str();
        let one_shot = match event.kind {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                self.data.contains(path) || self.exist.contains(path)
            }
            EventType::NodeDeleted => {
                self.data.contains(path) || self.exist.contains(path) || self.child.contains(path)
            }
            EventType::NodeChildrenChanged => self.child.contains(path),
        };
        one_shot || self.persistent_hears(path)
    }

    /// `addPersistentWatches`: the path's persistent watch, and recursive
    /// ones on the path or any ancestor (the client does this for every
    /// event type, child events included).
    fn persistent_hears(&self, path: &str) -> bool {
        if self.persistent.is_empty() {
            return false;
        }
        if self.persistent.node.contains(path) {
            return true;
        }
        let mut at = path;
        loop {
            if self.persistent.recursive.contains(at) {
                return true;
            }
            if at == "/" {
                return false;
            }
            at = split(at).0;
        }
    }

    /// Forget the watches an event consumes (`ZKWatchManager.materialize`).
    pub fn materialize(&mut self, event: &WatchedEvent) {
        let path = event.path.as_str();
        match event.kind {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                self.data.remove(path);
                self.exist.remove(path);
            }
            EventType::NodeDeleted => {
                self.data.remove(path);
                self.exist.remove(path);
                self.child.remove(path);
            }
            EventType::NodeChildrenChanged => {
                self.child.remove(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(kind: WatchKind, path: &str) -> WatchReg {
        WatchReg {
            kind,
            path: path.to_string(),
        }
    }

    #[test]
    fn deleted_consumes_every_table_children_changed_only_child() {
        let mut w = ClientWatches::default();
        w.add(reg(WatchKind::Data, "/a"));
        w.add(reg(WatchKind::Child, "/a"));
        w.materialize(&WatchedEvent {
            kind: EventType::NodeChildrenChanged,
            path: "/a".into(),
        });
        assert!(w.child.is_empty());
        assert!(w.data.contains("/a"));
        w.add(reg(WatchKind::Child, "/a"));
        w.materialize(&WatchedEvent {
            kind: EventType::NodeDeleted,
            path: "/a".into(),
        });
        assert!(w.is_empty());
    }

    #[test]
    fn created_consumes_the_exist_watch() {
        let mut w = ClientWatches::default();
        w.add(reg(WatchKind::Exist, "/b"));
        w.materialize(&WatchedEvent {
            kind: EventType::NodeCreated,
            path: "/b".into(),
        });
        assert!(w.is_empty());
    }
}
