//! The client library's own memory of its watches (`ZKWatchManager`).
//!
//! The server forgets a session's watches when its connection closes; the
//! client library remembers them so that it can re-register them with
//! `SetWatches` on the next connection (S25). A watch enters these tables
//! when the reply that set it is handled, and leaves it when its event is
//! delivered — exactly when the Java client adds and materialises them.

use std::collections::BTreeSet;

use crate::proto::{EventType, WatchedEvent};

/// Which of the three client-side tables a watch lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatchKind {
    /// `getData`, or `exists` on a node that exists.
    Data,
    /// `exists` on a node that does not exist.
    Exist,
    /// `getChildren`.
    Child,
}

/// A watch a successful reply registers at the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchReg {
    pub kind: WatchKind,
    pub path: String,
}

/// The three tables, by path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientWatches {
    pub data: BTreeSet<String>,
    pub exist: BTreeSet<String>,
    pub child: BTreeSet<String>,
}

impl ClientWatches {
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.exist.is_empty() && self.child.is_empty()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.exist.clear();
        self.child.clear();
    }

    pub fn add(&mut self, reg: WatchReg) {
        let table = match reg.kind {
            WatchKind::Data => &mut self.data,
            WatchKind::Exist => &mut self.exist,
            WatchKind::Child => &mut self.child,
        };
        table.insert(reg.path);
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
