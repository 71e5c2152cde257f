//! One server: its data tree as far as it has applied the log, and the
//! watches its connected sessions set (S19: watches live at the server).

use std::collections::{BTreeMap, BTreeSet};

use crate::proto::{EventType, SessionId, WatchedEvent, Zxid};
use crate::tree::{DataTree, Trigger};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Server {
    pub tree: DataTree,
    /// The newest zxid this server applied; never goes back.
    pub applied: Zxid,
    /// A partitioned follower applies nothing until healed.
    pub partitioned: bool,
    pub watches: ServerWatches,
}

impl Server {
    pub fn new() -> Self {
        Server {
            tree: DataTree::new(),
            applied: 0,
            partitioned: false,
            watches: ServerWatches::default(),
        }
    }
}

/// A server's watch tables (TEMPORARY shim with `crate::watch::WatchManager`'s
/// API, until that lands on this branch).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ServerWatches {
    data: BTreeMap<String, BTreeSet<SessionId>>,
    child: BTreeMap<String, BTreeSet<SessionId>>,
}

impl ServerWatches {
    pub fn add_data_watch(&mut self, session: SessionId, path: &str) {
        self.data.entry(path.to_string()).or_default().insert(session);
    }
    pub fn add_child_watch(&mut self, session: SessionId, path: &str) {
        self.child.entry(path.to_string()).or_default().insert(session);
    }
    pub fn remove_session(&mut self, session: SessionId) {
        for table in [&mut self.data, &mut self.child] {
            table.retain(|_, sessions| {
                sessions.remove(&session);
                !sessions.is_empty()
            });
        }
    }
    pub fn trigger(&mut self, trigger: &Trigger) -> Vec<(SessionId, WatchedEvent)> {
        let mut hit = BTreeSet::new();
        let tables: &mut [&mut BTreeMap<String, BTreeSet<SessionId>>] = match trigger.kind {
            EventType::NodeCreated | EventType::NodeDataChanged => &mut [&mut self.data],
            EventType::NodeChildrenChanged => &mut [&mut self.child],
            EventType::NodeDeleted => &mut [&mut self.data, &mut self.child],
        };
        for table in tables.iter_mut() {
            if let Some(sessions) = table.remove(&trigger.path) {
                hit.extend(sessions);
            }
        }
        hit.into_iter()
            .map(|s| (s, WatchedEvent { kind: trigger.kind, path: trigger.path.clone() }))
            .collect()
    }
    pub fn set_watches(
        &mut self,
        session: SessionId,
        relative_zxid: Zxid,
        data: &[String],
        exist: &[String],
        child: &[String],
        tree: &DataTree,
    ) -> Vec<WatchedEvent> {
        let mut out = Vec::new();
        for path in data {
            match tree.get(path) {
                None => out.push(WatchedEvent { kind: EventType::NodeDeleted, path: path.clone() }),
                Some(n) if n.stat.mzxid > relative_zxid => out.push(WatchedEvent {
                    kind: EventType::NodeDataChanged,
                    path: path.clone(),
                }),
                Some(_) => self.add_data_watch(session, path),
            }
        }
        for path in exist {
            match tree.get(path) {
                Some(_) => out.push(WatchedEvent { kind: EventType::NodeCreated, path: path.clone() }),
                None => self.add_data_watch(session, path),
            }
        }
        for path in child {
            match tree.get(path) {
                None => out.push(WatchedEvent { kind: EventType::NodeDeleted, path: path.clone() }),
                Some(n) if n.stat.pzxid > relative_zxid => out.push(WatchedEvent {
                    kind: EventType::NodeChildrenChanged,
                    path: path.clone(),
                }),
                Some(_) => self.add_child_watch(session, path),
            }
        }
        out
    }
}
