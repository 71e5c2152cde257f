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
//!
//! Persistent watches (`addWatch`, S37) live in the same two tables on a
//! real server, with a mode per (session, path) in each table
//! (`WatcherModeManager`): `addWatch` puts the path in both tables as
//! `PERSISTENT` or `PERSISTENT_RECURSIVE`; a one-shot watch set later on
//! the same path turns that table's entry back into a one-shot one (the
//! mode is replaced: ZOOKEEPER-4466). Here the persistent entries are kept
//! beside the one-shot tables, a (session, path) in at most one of them per
//! table, which is the same thing. `WatchManager.triggerWatch` (3.8):
//! at the path itself a one-shot watch fires and goes, a persistent one
//! fires and stays, a recursive one fires and stays unless the event is
//! `NodeChildrenChanged`; at every ancestor only recursive watches fire,
//! and never for `NodeChildrenChanged`.

use std::collections::{BTreeMap, BTreeSet};

use crate::proto::{
    AddWatchMode, EventType, Op, Reply, SessionId, WatchedEvent, WatcherType, Zxid,
};
use crate::tree::{DataTree, Trigger};

mod persistent;

use persistent::{persistent_hearers, remove_mode, ModeTable, PersistentTables};

type Table = BTreeMap<String, BTreeSet<SessionId>>;

/// The data and child watch tables of one server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WatchManager {
    data: Table,
    child: Table,
    persistent: PersistentTables,
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
        let modes = |t: &ModeTable| -> ModeTable {
            t.iter()
                .map(|(path, sessions)| {
                    let sessions = sessions.iter().map(|(&s, &m)| (r.session(s), m)).collect();
                    (r.text(path), sessions)
                })
                .collect()
        };
        WatchManager {
            data: table(&self.data),
            child: table(&self.child),
            persistent: PersistentTables {
                data: modes(&self.persistent.data),
                child: modes(&self.persistent.child),
            },
        }
    }
}

impl WatchManager {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a data watch (set by `exists` or `getData`). Idempotent (S17).
    /// A persistent data watch of the session on `path` becomes this
    /// one-shot one (S37: the mode is replaced).
    pub fn add_data_watch(&mut self, session: SessionId, path: &str) {
        if !self.persistent.is_empty() {
            remove_mode(&mut self.persistent.data, session, path);
        }
        add(&mut self.data, session, path);
    }

    /// Register a child watch (set by `getChildren`). Idempotent (S17).
    /// A persistent child watch of the session on `path` becomes this
    /// one-shot one (S37).
    pub fn add_child_watch(&mut self, session: SessionId, path: &str) {
        if !self.persistent.is_empty() {
            remove_mode(&mut self.persistent.child, session, path);
        }
        add(&mut self.child, session, path);
    }

    /// `DataTree.addWatch` (S37): a persistent or recursive watch on `path`
    /// in both tables, replacing whatever the session had there.
    pub fn add_persistent_watch(&mut self, session: SessionId, path: &str, mode: AddWatchMode) {
        remove(&mut self.data, session, path);
        remove(&mut self.child, session, path);
        for table in [&mut self.persistent.data, &mut self.persistent.child] {
            table
                .entry(path.to_string())
                .or_default()
                .insert(session, mode);
        }
    }

    /// `DataTree.removeWatch` (S38): remove the session's watch on `path`
    /// from the child table, the data table or both, one-shot or
    /// persistent alike. Returns whether anything was removed.
    pub fn remove_watch(&mut self, session: SessionId, path: &str, kind: WatcherType) -> bool {
        let mut removed = false;
        if matches!(kind, WatcherType::Children | WatcherType::Any) {
            removed |= remove(&mut self.child, session, path);
            removed |= remove_mode(&mut self.persistent.child, session, path);
        }
        if matches!(kind, WatcherType::Data | WatcherType::Any) {
            removed |= remove(&mut self.data, session, path);
            removed |= remove_mode(&mut self.persistent.data, session, path);
        }
        removed
    }

    /// `DataTree.containsWatcher` as 3.8.0 has it (S38): `WatchManager`
    /// answers whether the table holds *any* watcher on exactly `path` —
    /// it does not look for the asking session's own (the
    /// session-specific check came in a later release). So `session` does
    /// not matter here.
    pub fn contains_watcher(&self, _session: SessionId, path: &str, kind: WatcherType) -> bool {
        let child = || self.child.contains_key(path) || self.persistent.child.contains_key(path);
        let data = || self.data.contains_key(path) || self.persistent.data.contains_key(path);
        match kind {
            WatcherType::Children => child(),
            WatcherType::Data => data(),
            WatcherType::Any => child() || data(),
        }
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
    /// Persistent watches fire and stay (S37).
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
        let mut first = first.unwrap_or_default();
        let mut second = second;
        if !self.persistent.is_empty() {
            // Each table's persistent watchers join its one-shot ones (a
            // session is in at most one of the two per table).
            let (data_table, child_table) = match trigger.kind {
                EventType::NodeCreated | EventType::NodeDataChanged => {
                    (Some(&self.persistent.data), None)
                }
                EventType::NodeChildrenChanged => (None, Some(&self.persistent.child)),
                EventType::NodeDeleted => {
                    (Some(&self.persistent.data), Some(&self.persistent.child))
                }
            };
            let recursive = self.persistent.has_recursive();
            match (data_table, child_table) {
                (Some(d), Some(c)) => {
                    first.extend(persistent_hearers(d, trigger, recursive));
                    second
                        .get_or_insert_with(BTreeSet::new)
                        .extend(persistent_hearers(c, trigger, recursive));
                }
                (Some(t), None) | (None, Some(t)) => {
                    first.extend(persistent_hearers(t, trigger, recursive))
                }
                (None, None) => {}
            }
        }
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
        for table in [&mut self.persistent.data, &mut self.persistent.child] {
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
    ///
    /// `SetWatches2` (S37) adds the client's persistent and recursive
    /// watches after those, back into both tables, with no event for what
    /// changed meanwhile (the server has nothing to compare them with:
    /// ZOOKEEPER-4698). See [`WatchManager::set_persistent_watches`].
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

    /// The persistent half of `SetWatches2` (`DataTree.setWatches`' last two
    /// lists): each path back into both tables with its mode, no event.
    pub fn set_persistent_watches(
        &mut self,
        session: SessionId,
        persistent: &[String],
        recursive: &[String],
    ) {
        for path in persistent {
            self.add_persistent_watch(session, path, AddWatchMode::Persistent);
        }
        for path in recursive {
            self.add_persistent_watch(session, path, AddWatchMode::PersistentRecursive);
        }
    }

    /// Every persistent watch as (path, session, mode), in path then session
    /// order (one entry per watch, though it sits in both tables).
    pub fn persistent_watches(&self) -> impl Iterator<Item = (&str, SessionId, AddWatchMode)> + '_ {
        self.persistent
            .data
            .iter()
            .flat_map(|(path, sessions)| sessions.iter().map(move |(&s, &m)| (path.as_str(), s, m)))
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
    /// Persistent watches count once per table, as `getWatchCount` does.
    pub fn len(&self) -> usize {
        let persistent: usize = self
            .persistent
            .data
            .values()
            .chain(self.persistent.child.values())
            .map(BTreeMap::len)
            .sum();
        self.data
            .values()
            .chain(self.child.values())
            .map(BTreeSet::len)
            .sum::<usize>()
            + persistent
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.child.is_empty() && self.persistent.is_empty()
    }
}

/// Remove `session` from `path`'s one-shot entry; whether it was there.
fn remove(table: &mut Table, session: SessionId, path: &str) -> bool {
    let Some(sessions) = table.get_mut(path) else {
        return false;
    };
    let removed = sessions.remove(&session);
    if sessions.is_empty() {
        table.remove(path);
    }
    removed
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
