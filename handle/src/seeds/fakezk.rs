//! Just enough of a ZooKeeper client, in memory, for the seed ports'
//! handoffs: nodes with sequence numbers, one-shot watches, and one event
//! thread that delivers notifications in order (as the Java client's
//! `EventThread` does). Session expiry delivers `Expired` to every watcher
//! still registered (the Java client's `ZKWatchManager.materialize` for a
//! `None`-type event) and removes the session's ephemeral nodes.
//!
//! The models' threads call it as the article's code calls `ZooKeeper`;
//! the model's event thread loops on [`FakeZk::next_event`].

use std::collections::{BTreeMap, VecDeque};

use crate::sync::{self, Condvar, Mutex};

/// Which watcher object a notification goes to (the model maps ids to callbacks).
pub type WatcherId = usize;

/// Who created a node: the session under test, or another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Ours,
    Other,
}

/// A notification for a watcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkEvent {
    NodeDeleted(String),
    NodeChildrenChanged(String),
    /// The session expired (a `None`-type event with state `Expired`).
    Expired,
}

/// What a call on an expired session throws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionExpired;

#[derive(Debug, Default)]
struct State {
    nodes: BTreeMap<String, Owner>,
    next_seq: u32,
    /// `(path, watcher, children?)`: one-shot registrations of our session.
    watches: Vec<(String, WatcherId, bool)>,
    queue: VecDeque<(WatcherId, ZkEvent)>,
    expired: bool,
    closed: bool,
}

/// The fake server and our session's client (see the module doc).
#[derive(Debug, Default)]
pub struct FakeZk {
    state: Mutex<State>,
    changed: Condvar,
}

fn parent(path: &str) -> &str {
    &path[..path.rfind('/').unwrap_or(0)]
}

impl FakeZk {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut s = sync::lock(&self.state);
        let out = f(&mut s);
        drop(s);
        self.changed.notify_all();
        out
    }

    /// `create(prefix, EPHEMERAL_SEQUENTIAL)`: the new node's path.
    pub fn create_sequential(&self, prefix: &str, owner: Owner) -> Result<String, SessionExpired> {
        self.with(|s| {
            if owner == Owner::Ours && s.expired {
                return Err(SessionExpired);
            }
            let path = format!("{prefix}{:010}", s.next_seq);
            s.next_seq += 1;
            s.nodes.insert(path.clone(), owner);
            Self::fire_children(s, parent(&path));
            Ok(path)
        })
    }

    /// `delete(path, -1)`; deleting a missing node is not an error here.
    pub fn delete(&self, path: &str, owner: Owner) -> Result<(), SessionExpired> {
        self.with(|s| {
            if owner == Owner::Ours && s.expired {
                return Err(SessionExpired);
            }
            if s.nodes.remove(path).is_some() {
                Self::fire_deleted(s, path);
                Self::fire_children(s, parent(path));
            }
            Ok(())
        })
    }

    /// `exists(path, watcher)`: a watch is left whether or not the node exists.
    pub fn exists(&self, path: &str, watcher: Option<WatcherId>) -> Result<bool, SessionExpired> {
        self.with(|s| {
            if s.expired {
                return Err(SessionExpired);
            }
            if let Some(w) = watcher {
                s.watches.push((path.to_string(), w, false));
            }
            Ok(s.nodes.contains_key(path))
        })
    }

    /// `getChildren(dir, watcher)`: full paths, in sequence order.
    pub fn children(
        &self,
        dir: &str,
        watcher: Option<WatcherId>,
    ) -> Result<Vec<String>, SessionExpired> {
        self.with(|s| {
            if s.expired {
                return Err(SessionExpired);
            }
            if let Some(w) = watcher {
                s.watches.push((dir.to_string(), w, true));
            }
            Ok(s.nodes
                .keys()
                .filter(|p| parent(p) == dir)
                .cloned()
                .collect())
        })
    }

    /// The session expires: our ephemerals go, every registered watcher
    /// hears `Expired`, later calls throw.
    pub fn expire(&self) {
        self.with(|s| {
            s.expired = true;
            let ours: Vec<String> = s
                .nodes
                .iter()
                .filter(|(_, o)| **o == Owner::Ours)
                .map(|(p, _)| p.clone())
                .collect();
            for path in ours {
                s.nodes.remove(&path);
            }
            let mut told = Vec::new();
            for (_, w, _) in std::mem::take(&mut s.watches) {
                if !told.contains(&w) {
                    told.push(w);
                    s.queue.push_back((w, ZkEvent::Expired));
                }
            }
        })
    }

    fn fire_deleted(s: &mut State, path: &str) {
        let mut kept = Vec::new();
        for (p, w, children) in std::mem::take(&mut s.watches) {
            if p == path && !children {
                s.queue
                    .push_back((w, ZkEvent::NodeDeleted(path.to_string())));
            } else {
                kept.push((p, w, children));
            }
        }
        s.watches = kept;
    }

    fn fire_children(s: &mut State, dir: &str) {
        let mut kept = Vec::new();
        for (p, w, children) in std::mem::take(&mut s.watches) {
            if p == dir && children {
                s.queue
                    .push_back((w, ZkEvent::NodeChildrenChanged(dir.to_string())));
            } else {
                kept.push((p, w, children));
            }
        }
        s.watches = kept;
    }

    /// For the event thread: the next notification, in order; `None` once
    /// [`FakeZk::close`]d and drained.
    pub fn next_event(&self) -> Option<(WatcherId, ZkEvent)> {
        let mut s = sync::lock(&self.state);
        loop {
            if let Some(e) = s.queue.pop_front() {
                return Some(e);
            }
            if s.closed {
                return None;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Model helper: block until someone watches `path` (so that a model can
    /// delete a node only after the watch is set, isolating the in-process
    /// race from the on-the-wire one).
    pub fn wait_watched(&self, path: &str) {
        let mut s = sync::lock(&self.state);
        while !s.watches.iter().any(|(p, _, _)| p == path) {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Stop the event thread once every notification is delivered.
    pub fn close(&self) {
        self.with(|s| s.closed = true);
    }

    /// The nodes that exist, with their owners.
    pub fn nodes(&self) -> Vec<(String, Owner)> {
        sync::lock(&self.state)
            .nodes
            .iter()
            .map(|(p, o)| (p.clone(), *o))
            .collect()
    }

    /// Whether `path` exists (no watch, never throws: for the models' checks).
    pub fn has(&self, path: &str) -> bool {
        sync::lock(&self.state).nodes.contains_key(path)
    }

    /// Put a node in place before the model starts (another process's holder).
    pub fn seed_node(&self, path: &str, owner: Owner) {
        self.with(|s| {
            s.nodes.insert(path.to_string(), owner);
            s.next_seq += 1;
        })
    }
}
