//! What monitors read besides the history, behind small seams so that their
//! logic can be tested on hand-written histories without a running world.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use zksim::{Client, ClientId, Event, SessionId, Tick, World, Zxid};

/// The few facts about the world a monitor needs at each step.
pub trait View {
    /// The simulated clock: what timing properties (a session's expiry, a
    /// wait's length) measure against.
    fn now(&self) -> Tick;
    /// How many clients the world has (their ids are `0..n`).
    fn num_clients(&self) -> usize;
    /// The client's current session.
    fn session_of(&self, client: ClientId) -> SessionId;
    /// A number that moves whenever some client's session may have
    /// changed (the world's next session id), or `None` if unknown: lets
    /// `Sessions::refresh` skip its scan of every client.
    fn sessions_version(&self) -> Option<SessionId> {
        None
    }
    /// A value that moves whenever the leader's tree or the set of live
    /// sessions may have changed, or any client's session (the last zxid
    /// the leader ordered, which it applies at once, and the next session
    /// id), or `None` if unknown. Lets a monitor whose judgement reads only
    /// those skip judging again while it stays the same.
    fn leader_version(&self) -> Option<(Zxid, SessionId)> {
        None
    }
    /// The client process died (a crashed client believes nothing any more).
    fn is_crashed(&self, _client: ClientId) -> bool {
        false
    }
    /// Whether the leader still counts `session` as live.
    fn is_session_live(&self, session: SessionId) -> bool;
    /// The node at `path` in the leader's tree, if it exists.
    fn node(&self, path: &str) -> Option<NodeFacts>;
    /// The path of the child of `dir` (in the leader's tree) created at
    /// `czxid`: how a monitor finds the node a fence names.
    fn child_by_czxid(&self, dir: &str, czxid: i64) -> Option<String>;
}

/// What a monitor may know about one node of the leader's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeFacts {
    /// The zxid that created the node: what a fence names.
    pub czxid: i64,
    /// The owning session of an ephemeral, 0 for a persistent node.
    pub owner: SessionId,
}

impl<C: Client> View for World<C> {
    fn now(&self) -> Tick {
        World::<C>::now(self)
    }
    fn num_clients(&self) -> usize {
        World::<C>::num_clients(self)
    }
    fn session_of(&self, client: ClientId) -> SessionId {
        World::<C>::session_of(self, client)
    }
    fn sessions_version(&self) -> Option<SessionId> {
        Some(self.next_session_id())
    }
    fn leader_version(&self) -> Option<(Zxid, SessionId)> {
        Some((self.last_zxid(), self.next_session_id()))
    }
    fn is_crashed(&self, client: ClientId) -> bool {
        World::<C>::is_crashed(self, client)
    }
    fn is_session_live(&self, session: SessionId) -> bool {
        World::is_session_live(self, session)
    }
    fn node(&self, path: &str) -> Option<NodeFacts> {
        self.leader_tree().get(path).map(|n| NodeFacts {
            czxid: n.stat.czxid,
            owner: n.stat.ephemeral_owner,
        })
    }
    fn child_by_czxid(&self, dir: &str, czxid: i64) -> Option<String> {
        // A parent keeps each child's czxid beside its name.
        let children = &self.leader_tree().get(dir)?.children;
        children
            .iter()
            .find(|(_, order)| order.born.0 == czxid)
            .map(|(name, _)| zksim::path::join(dir, name))
    }
}

/// A stand-in world for tests: a clock and each client's session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FakeView {
    /// The clock [`View::now`] reads.
    pub now: Tick,
    /// Each client's current session, by client id.
    pub sessions: Vec<SessionId>,
    /// Clients whose process died.
    pub crashed: Vec<ClientId>,
    /// Sessions the leader no longer counts as live.
    pub ended: Vec<SessionId>,
    /// The leader's tree: path, czxid, ephemeral owner (0: persistent).
    pub nodes: Vec<(String, i64, SessionId)>,
}

impl FakeView {
    /// `clients` clients whose sessions are `1000 + client`.
    pub fn new(clients: usize) -> Self {
        FakeView {
            now: 0,
            sessions: (0..clients).map(|c| 1000 + c as SessionId).collect(),
            crashed: Vec::new(),
            ended: Vec::new(),
            nodes: Vec::new(),
        }
    }
}

impl View for FakeView {
    fn now(&self) -> Tick {
        self.now
    }
    fn num_clients(&self) -> usize {
        self.sessions.len()
    }
    fn session_of(&self, client: ClientId) -> SessionId {
        self.sessions[client]
    }
    fn is_crashed(&self, client: ClientId) -> bool {
        self.crashed.contains(&client)
    }
    fn is_session_live(&self, session: SessionId) -> bool {
        !self.ended.contains(&session)
    }
    fn node(&self, path: &str) -> Option<NodeFacts> {
        self.nodes
            .iter()
            .find(|(p, _, _)| p == path)
            .map(|&(_, czxid, owner)| NodeFacts { czxid, owner })
    }
    fn child_by_czxid(&self, dir: &str, czxid: i64) -> Option<String> {
        self.nodes
            .iter()
            .find(|(p, c, _)| *c == czxid && parent_of(p) == Some(dir))
            .map(|(p, _, _)| p.clone())
    }
}

/// Which client each session belonged to (sessions are replaced on reopen,
/// but a late `SessionEnded` or an ephemeral's owner may name an old one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sessions {
    owner: BTreeMap<SessionId, ClientId>,
    /// The view's [`View::sessions_version`] at the last scan. Not part of
    /// the identity: after every step it is the world's own (a function
    /// of the state), and a copy pooled from an equal state either
    /// matches the world's or makes the next refresh scan.
    scanned: Measured<Option<SessionId>>,
}

impl Sessions {
    /// The same owners under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        Sessions {
            owner: self
                .owner
                .iter()
                .map(|(&s, &c)| (r.session(s), r.client(c)))
                .collect(),
            scanned: self.scanned.clone(),
        }
    }

    /// Learn the clients' current sessions. Called at every step by several
    /// monitors: it scans the clients only when a session may have changed,
    /// so that a step costs O(1) here, not O(clients) — and, inlined into
    /// each monitor, one comparison.
    #[inline]
    pub fn refresh(&mut self, view: &(impl View + ?Sized)) {
        let version = view.sessions_version();
        if version.is_some() && self.scanned.0 == version {
            return;
        }
        self.rescan(view, version);
    }

    #[cold]
    fn rescan(&mut self, view: &(impl View + ?Sized), version: Option<SessionId>) {
        self.scanned.0 = version;
        for client in 0..view.num_clients() {
            let session = view.session_of(client);
            if self.owner.get(&session) != Some(&client) {
                self.owner.insert(session, client);
            }
        }
    }
    pub fn client_of(&self, session: SessionId) -> Option<ClientId> {
        self.owner.get(&session).copied()
    }
}

/// Data kept for figures only. It does not take part in the monitor's
/// identity (`Hash`/`Eq`): two explored states that differ only in what
/// was measured on the way are the same state for the property, so
/// visited-state dedup stays as strong as the property allows.
#[derive(Clone, Debug, Default)]
pub struct Measured<T>(pub T);

impl<T> PartialEq for Measured<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Measured<T> {}
impl<T> Hash for Measured<T> {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// How the run ended, as the end-of-run monitors judge it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct End {
    /// Every client done, nothing in flight, no timer armed.
    pub quiescent: bool,
    /// The run was cut off by a bound while work could still proceed: by
    /// the step bound (some event other than `Tick` or a fault is
    /// enabled), or by `max_time` (the clock may not tick again, yet a tick
    /// would still change something: a timer, a pause, a session the
    /// leader would expire). A waiter there is not stuck; its wait was cut.
    pub progress_possible: bool,
    /// Whether each client's logic says it is done.
    pub done: Vec<bool>,
    /// Whether each client's process crashed (it can never finish).
    pub crashed: Vec<bool>,
    /// Each client's current session.
    pub sessions: Vec<SessionId>,
    /// Every node of the leader's tree: path and ephemeral owner (0 if persistent).
    pub nodes: Vec<(String, SessionId)>,
    /// Some client is paused (frozen): what it has been sent waits.
    pub paused: bool,
}

impl End {
    /// Read the end state off the world.
    pub fn of<C: Client>(world: &World<C>) -> End {
        let mut enabled = Vec::new();
        world.enabled(&mut enabled);
        let clock_stopped = !enabled.contains(&Event::Tick);
        let progress_possible = enabled
            .iter()
            .any(|e| !matches!(e, Event::Tick | Event::Fault(_)))
            || (clock_stopped && world.waits_on_time());
        let clients = world.num_clients();
        End {
            quiescent: world.is_quiescent(),
            progress_possible,
            done: (0..clients).map(|c| world.client(c).is_done()).collect(),
            crashed: (0..clients).map(|c| world.is_crashed(c)).collect(),
            paused: (0..clients).any(|c| world.is_paused(c)),
            sessions: (0..clients).map(|c| world.session_of(c)).collect(),
            nodes: world
                .leader_tree()
                .nodes()
                .map(|(path, node)| (path.to_string(), node.stat.ephemeral_owner))
                .collect(),
        }
    }

    /// Whether client `c` crashed (false when unknown).
    pub fn is_crashed(&self, c: ClientId) -> bool {
        self.crashed.get(c).copied().unwrap_or(false)
    }

    /// The owner of the node at `path`, if it exists (`Some(0)` for persistent).
    pub fn owner_of(&self, path: &str) -> Option<SessionId> {
        self.nodes
            .binary_search_by(|(p, _)| p.as_str().cmp(path))
            .ok()
            .map(|i| self.nodes[i].1)
    }

    /// Children paths of `dir`, in path order.
    pub fn children_of<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Iterator<Item = &'a (String, SessionId)> {
        self.nodes
            .iter()
            .filter(move |(p, _)| parent_of(p) == Some(dir))
    }
}

/// The parent path of a node (`/a/b` → `/a`, `/a` → `/`).
pub fn parent_of(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// Whether `path` lies strictly under `root`.
pub fn is_under(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    path.len() > root.len() + 1 && path.starts_with(root) && path.as_bytes()[root.len()] == b'/'
}

/// A client's name in explanations.
pub fn who(client: ClientId) -> String {
    format!("client {client}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(parent_of("/lock/n-1"), Some("/lock"));
        assert_eq!(parent_of("/lock"), Some("/"));
        assert_eq!(parent_of("/"), None);
        assert!(is_under("/lock/n-1", "/lock"));
        assert!(!is_under("/lock", "/lock"));
        assert!(!is_under("/locks/x", "/lock"));
        assert!(is_under("/lock/a/b", "/lock/"));
    }
}
