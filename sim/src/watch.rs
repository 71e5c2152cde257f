//! One server's watch tables (`server/watch/WatchManager`, one instance for
//! data watches and one for child watches in `DataTree`): one-shot, per
//! (session, path, kind), deduplicated (S14–S17, S25).
//!
//! A watch is keyed by session: a session has one connection at a time, and
//! the real server keys watches by that connection (`ServerCnxn`).
//!
//! Which table a read registers in (S14, S15):
//! - `exists(p, watch)` → data table, **whether or not `p` exists**
//!   (`DataTree.statNode` adds the watch before looking the node up), so it
//!   fires `NodeCreated` when `p` appears;
//! - `getData(p, watch)` → data table, only if `p` exists;
//! - `getChildren(p, watch)` → child table, only if `p` exists.
//!
//! Which table a trigger reaches (S16, `DataTree.createNode/deleteNode/setData`):
//! `NodeCreated` and `NodeDataChanged` → data watchers of the path;
//! `NodeChildrenChanged` → child watchers; `NodeDeleted` → data watchers and
//! then child watchers, a session in both notified **once**: `deleteNode`
//! passes the data watchers it notified as the `supress` set to the child
//! table, which still removes those child watches. So one `NodeDeleted`
//! reaches the client, and both of its watches on the path are gone.
//!
//! Order of events: the server iterates Java `HashSet`s, so the order among
//! sessions is unspecified there; here it is ascending session id (data
//! watchers first for `NodeDeleted`). Events to different sessions travel
//! on different connections, so only the per-session order is observable.

use std::collections::{BTreeMap, BTreeSet};

use crate::proto::{EventType, Op, Reply, SessionId, WatchedEvent, Zxid};
use crate::tree::{DataTree, Trigger};

type Table = BTreeMap<String, BTreeSet<SessionId>>;

/// The data and child watch tables of one server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WatchManager {
    data: Table,
    child: Table,
}

impl crate::rename::Rename for WatchManager {
    fn renamed(&self, r: &crate::rename::Renaming) -> Self {
        let table = |t: &Table| -> Table {
            t.iter()
                .map(|(path, sessions)| {
                    let sessions = sessions.iter().map(|&s| r.session(s)).collect();
                    (r.text(path), sessions)
                })
                .collect()
        };
        WatchManager {
            data: table(&self.data),
            child: table(&self.child),
        }
    }
}

impl WatchManager {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a data watch (set by `exists` or `getData`). Idempotent (S17).
    pub fn add_data_watch(&mut self, session: SessionId, path: &str) {
        add(&mut self.data, session, path);
    }

    /// Register a child watch (set by `getChildren`). Idempotent (S17).
    pub fn add_child_watch(&mut self, session: SessionId, path: &str) {
        add(&mut self.child, session, path);
    }

    /// Register the watch a read asked for, given the reply it got from the
    /// tree (S14, S15): `exists` watches even a missing node, `getData` and
    /// `getChildren` only an existing one. Returns whether a watch was set.
    pub fn register_read(&mut self, session: SessionId, op: &Op, reply: &Reply) -> bool {
        match (op, reply) {
            (Op::Exists { path, watch: true }, Ok(_))
            | (Op::GetData { path, watch: true }, Ok(_)) => {
                self.add_data_watch(session, path);
                true
            }
            (Op::GetChildren { path, watch: true }, Ok(_)) => {
                self.add_child_watch(session, path);
                true
            }
            _ => false,
        }
    }

    /// Fire one trigger: remove the watches it reaches (one-shot, S17) and
    /// return the event each watching session gets, one per session.
    pub fn trigger(&mut self, trigger: &Trigger) -> Vec<(SessionId, WatchedEvent)> {
        let (first, second) = match trigger.kind {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                (self.data.remove(&trigger.path), None)
            }
            EventType::NodeChildrenChanged => (self.child.remove(&trigger.path), None),
            EventType::NodeDeleted => (
                self.data.remove(&trigger.path),
                self.child.remove(&trigger.path),
            ),
        };
        let first = first.unwrap_or_default();
        let event = || WatchedEvent {
            kind: trigger.kind,
            path: trigger.path.clone(),
        };
        let mut out: Vec<(SessionId, WatchedEvent)> = first.iter().map(|&s| (s, event())).collect();
        if let Some(second) = second {
            out.extend(second.difference(&first).map(|&s| (s, event())));
        }
        out
    }

    /// Fire triggers in order (as `DataTree.apply` returned them).
    pub fn trigger_all(&mut self, triggers: &[Trigger]) -> Vec<(SessionId, WatchedEvent)> {
        triggers.iter().flat_map(|t| self.trigger(t)).collect()
    }

    /// Drop every watch of a session (its connection closed or moved away:
    /// `DataTree.removeCnxn`).
    pub fn remove_session(&mut self, session: SessionId) {
        for table in [&mut self.data, &mut self.child] {
            table.retain(|_, sessions| {
                sessions.remove(&session);
                !sessions.is_empty()
            });
        }
    }

    /// `DataTree.setWatches` (S25): a reconnecting session re-registers the
    /// watches its client holds, with the last zxid it saw. Each watch whose
    /// event it missed fires now (and is not re-armed); the others are
    /// registered again. Lists are walked in the client's order, data, then
    /// exist, then child watches, and the events come back in that order:
    /// - data watch: node gone → `NodeDeleted`; `mzxid > last_zxid` →
    ///   `NodeDataChanged`; else re-armed;
    /// - exist watch (the client's `exists` on a then-missing node): node
    ///   present → `NodeCreated`; else re-armed (a node created and deleted
    ///   meanwhile is missed, as on a real server);
    /// - child watch: node gone → `NodeDeleted`; `pzxid > last_zxid` →
    ///   `NodeChildrenChanged`; else re-armed.
    ///
    /// Note that the Java client files an `exists` watch on a node that did
    /// exist under its *data* watches, not its exist watches.
    pub fn set_watches(
        &mut self,
        session: SessionId,
        last_zxid: Zxid,
        data_watches: &[String],
        exist_watches: &[String],
        child_watches: &[String],
        tree: &DataTree,
    ) -> Vec<WatchedEvent> {
        let mut events = Vec::new();
        let mut fire = |kind, path: &String| {
            events.push(WatchedEvent {
                kind,
                path: path.clone(),
            })
        };
        for path in data_watches {
            match tree.get(path) {
                None => fire(EventType::NodeDeleted, path),
                Some(n) if n.stat.mzxid > last_zxid => fire(EventType::NodeDataChanged, path),
                Some(_) => add(&mut self.data, session, path),
            }
        }
        for path in exist_watches {
            match tree.get(path) {
                Some(_) => fire(EventType::NodeCreated, path),
                None => add(&mut self.data, session, path),
            }
        }
        for path in child_watches {
            match tree.get(path) {
                None => fire(EventType::NodeDeleted, path),
                Some(n) if n.stat.pzxid > last_zxid => fire(EventType::NodeChildrenChanged, path),
                Some(_) => add(&mut self.child, session, path),
            }
        }
        events
    }

    /// Whether `session` holds a data watch on `path`.
    pub fn has_data_watch(&self, session: SessionId, path: &str) -> bool {
        holds(&self.data, session, path)
    }

    /// Whether `session` holds a child watch on `path`.
    pub fn has_child_watch(&self, session: SessionId, path: &str) -> bool {
        holds(&self.child, session, path)
    }

    /// Sessions watching `path`'s data, ascending.
    pub fn data_watchers(&self, path: &str) -> impl Iterator<Item = SessionId> + '_ {
        self.data.get(path).into_iter().flatten().copied()
    }

    /// Sessions watching `path`'s children, ascending.
    pub fn child_watchers(&self, path: &str) -> impl Iterator<Item = SessionId> + '_ {
        self.child.get(path).into_iter().flatten().copied()
    }

    /// Every data watch as (path, session), in path then session order
    /// (for tools that show a server's state, like the checker's viewer).
    pub fn data_watches(&self) -> impl Iterator<Item = (&str, SessionId)> + '_ {
        entries(&self.data)
    }

    /// Every child watch as (path, session), in path then session order.
    pub fn child_watches(&self) -> impl Iterator<Item = (&str, SessionId)> + '_ {
        entries(&self.child)
    }

    /// Number of (session, path) watches in both tables (`getWatchCount`).
    pub fn len(&self) -> usize {
        self.data
            .values()
            .chain(self.child.values())
            .map(BTreeSet::len)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.child.is_empty()
    }
}

fn add(table: &mut Table, session: SessionId, path: &str) {
    match table.get_mut(path) {
        Some(sessions) => {
            sessions.insert(session);
        }
        None => {
            table.insert(path.to_string(), BTreeSet::from([session]));
        }
    }
}

fn entries(table: &Table) -> impl Iterator<Item = (&str, SessionId)> + '_ {
    table
        .iter()
        .flat_map(|(path, sessions)| sessions.iter().map(move |&s| (path.as_str(), s)))
}

fn holds(table: &Table, session: SessionId, path: &str) -> bool {
    table.get(path).is_some_and(|s| s.contains(&session))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trig(path: &str, kind: EventType) -> Trigger {
        Trigger {
            path: path.into(),
            kind,
        }
    }

    #[test]
    fn node_deleted_reaches_data_and_child_watchers_once_each() {
        let mut w = WatchManager::new();
        w.add_data_watch(1, "/a");
        w.add_child_watch(1, "/a");
        w.add_child_watch(2, "/a");
        let fired = w.trigger(&trig("/a", EventType::NodeDeleted));
        let sessions: Vec<_> = fired.iter().map(|(s, _)| *s).collect();
        assert_eq!(sessions, vec![1, 2]);
        assert!(fired
            .iter()
            .all(|(_, e)| e.kind == EventType::NodeDeleted && e.path == "/a"));
        assert!(w.is_empty(), "both tables emptied: {w:?}");
    }

    #[test]
    fn children_changed_leaves_data_watches() {
        let mut w = WatchManager::new();
        w.add_data_watch(1, "/a");
        w.add_child_watch(1, "/a");
        assert_eq!(
            w.trigger(&trig("/a", EventType::NodeChildrenChanged)).len(),
            1
        );
        assert!(w.has_data_watch(1, "/a"));
        assert!(!w.has_child_watch(1, "/a"));
    }

    #[test]
    fn remove_session_keeps_others() {
        let mut w = WatchManager::new();
        w.add_data_watch(1, "/a");
        w.add_data_watch(2, "/a");
        w.add_child_watch(1, "/b");
        w.remove_session(1);
        assert_eq!(w.len(), 1);
        assert!(w.has_data_watch(2, "/a"));
    }
}
