//! Which release woke whom: the one rule set behind every wakeup figure.
//!
//! Both the checker's `herd` monitor (`checker/src/monitor/herd.rs`) and the
//! real-server figures ([`crate::figures::LockFigures`]) feed a history to a
//! [`WakeupLedger`], so a number printed for the simulator and one printed for
//! a live ZooKeeper mean the same thing. Only the client-side part of a
//! history is read — `Sent`, `Delivered` and `App` — which both the simulator
//! and the real-server driver write.
//!
//! Definitions:
//! * A client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`.
//! * A **wakeup** is a node-watch event delivered to a waiting client.
//!   Events to a client that is not waiting are not wakeups.
//! * A **release** is a `Released` event. The node it frees is the path of
//!   the last `Delete` the releasing client sent (recipes send the delete and
//!   emit `Released` in the same handler), and that node's identity is the
//!   czxid the releasing client last saw for the path (the `create` reply of
//!   its own node, or an `exists`/`getData` of it).
//! * **Attribution of a `NodeDeleted` wakeup on *p*.** A data watch fires on
//!   the first change of the node the watching read saw, and ZooKeeper
//!   delivers a watch event before the reply of any later read, so the node
//!   that was deleted is the one whose czxid the client last saw for *p* in
//!   an `exists`/`getData` (or `create`) reply. The wakeup belongs to the
//!   release that deleted exactly that node (same path, same czxid). This
//!   holds under faults too: a client that reconnects to a lagging server and
//!   watches a node the leader already deleted saw that old node's czxid, and
//!   its wakeup is charged to the old release that deleted it. A path name
//!   is not enough: the naive lock reuses one path every round, and matching
//!   by path charged one release with another's wakeups (issue 15).
//!   When the releaser never learnt its node's czxid (its create's reply was
//!   lost) the release is matched by path among such releases, and only when
//!   exactly one fits; a wakeup that fits no release (a node deleted by a
//!   session's end, a `NodeCreated`, a data change, an ambiguous match) is
//!   still a wakeup but belongs to no release.
//! * **Attribution of a `NodeChildrenChanged` wakeup on *d*.** A child watch
//!   fires on the first change among *d*'s children after the listing that
//!   set it; the reply lists names, not czxids, so the cause is pinned by
//!   name: the earliest release that deleted a child the client last listed
//!   and that was not yet charged to this client. The listing is used up by
//!   the event (one-shot), so one listing wakes its client once.
//! * A wakeup is **useful** when the woken client's next step in its wait is
//!   `Acquired` (no further wakeup in between); otherwise it is **wasted**:
//!   a later wakeup, `GaveUp` or the end of the run make it so.
//! * A **request** is any op a client sent.

use std::collections::BTreeMap;

use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, Reply, Response, Zxid};

use crate::AppEvent;

/// One release and what it woke.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Release {
    pub client: ClientId,
    /// The node the release deleted, if the client sent a delete.
    pub node: Option<String>,
    /// That node's czxid as the releasing client last saw it, if it did.
    pub czxid: Option<Zxid>,
    /// Waiters woken, in order, and whether each asked to write.
    pub woken: Vec<(ClientId, bool)>,
    /// Of those, how many wakeups led nowhere.
    pub wasted: u32,
}

/// What one delivered watch event was, when it was a wakeup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wakeup {
    pub client: ClientId,
    /// The index of the release it is charged to, if any.
    pub release: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wait {
    /// It asked for a read lock.
    shared: bool,
    /// The latest wakeup not yet judged useful or wasted, and its release.
    pending: Option<Option<usize>>,
}

/// A read in flight whose reply tells what the client saw.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Read {
    /// `exists` / `getData` of a node.
    Node(String),
    /// `getChildren` of a node.
    Children(String),
    /// `delete` of a node: once answered, the client knows it is gone.
    Delete(String),
}

/// The attribution state of one history. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WakeupLedger {
    waiting: BTreeMap<ClientId, Wait>,
    /// Reads (and deletes) in flight, by client and op id.
    reads: BTreeMap<(ClientId, OpId), Read>,
    /// The czxid each client last saw for each path.
    seen: BTreeMap<(ClientId, String), Zxid>,
    /// The child names each client last listed under each path.
    listed: BTreeMap<(ClientId, String), Vec<String>>,
    /// Each client's last sent delete.
    last_delete: BTreeMap<ClientId, String>,
    releases: Vec<Release>,
    tally: Tally,
}

/// Running totals. They only count: two ledgers that differ in nothing else
/// attribute every future wakeup the same, so the totals are left out of
/// equality and hashing — a model checker that keeps a ledger in its state
/// must not tell states apart by how much was counted on the way there.
#[derive(Clone, Debug, Default)]
struct Tally {
    requests: u64,
    wakeups: u64,
    wasted: u64,
    acquisitions: u64,
}

impl PartialEq for Tally {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Tally {}
impl std::hash::Hash for Tally {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl WakeupLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// This ledger under a renaming of clients (symmetry reduction): client
    /// ids and the names in paths renamed, each listing sorted again (it
    /// is kept sorted to be searched). Nothing here reads the order of
    /// client ids: releases are kept in time order and searched in it.
    pub fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        let read = |read: &Read| match read {
            Read::Node(path) => Read::Node(r.text(path)),
            Read::Children(path) => Read::Children(r.text(path)),
            Read::Delete(path) => Read::Delete(r.text(path)),
        };
        WakeupLedger {
            waiting: self
                .waiting
                .iter()
                .map(|(&c, wait)| (r.client(c), wait.clone()))
                .collect(),
            reads: self
                .reads
                .iter()
                .map(|(&(c, op), rd)| ((r.client(c), op), read(rd)))
                .collect(),
            seen: self
                .seen
                .iter()
                .map(|((c, path), &z)| ((r.client(*c), r.text(path)), z))
                .collect(),
            listed: self
                .listed
                .iter()
                .map(|((c, path), names)| {
                    let mut names: Vec<String> = names.iter().map(|n| r.text(n)).collect();
                    names.sort();
                    ((r.client(*c), r.text(path)), names)
                })
                .collect(),
            last_delete: self
                .last_delete
                .iter()
                .map(|(&c, path)| (r.client(c), r.text(path)))
                .collect(),
            releases: self
                .releases
                .iter()
                .map(|rel| Release {
                    client: r.client(rel.client),
                    node: rel.node.as_deref().map(|n| r.text(n)),
                    czxid: rel.czxid,
                    woken: rel.woken.iter().map(|&(c, w)| (r.client(c), w)).collect(),
                    wasted: rel.wasted,
                })
                .collect(),
            tally: self.tally.clone(),
        }
    }

    /// Every release so far, in the order they happened.
    pub fn releases(&self) -> &[Release] {
        &self.releases
    }
    /// Ops sent by any client.
    pub fn requests(&self) -> u64 {
        self.tally.requests
    }
    /// Node-watch events delivered to waiting clients.
    pub fn wakeups(&self) -> u64 {
        self.tally.wakeups
    }
    /// Wakeups judged wasted so far.
    pub fn wasted(&self) -> u64 {
        self.tally.wasted
    }
    pub fn acquisitions(&self) -> u64 {
        self.tally.acquisitions
    }
    /// Whether `client` is waiting, and if so whether it asked to write.
    pub fn waiting_writer(&self, client: ClientId) -> Option<bool> {
        self.waiting.get(&client).map(|w| !w.shared)
    }

    /// Take one happening into account. Returns the wakeup it was, if any.
    pub fn observe(&mut self, happening: &Happening<AppEvent>) -> Option<Wakeup> {
        match happening {
            Happening::Sent {
                client,
                op,
                request,
            } => {
                self.tally.requests += 1;
                self.sent(*client, *op, request);
                None
            }
            Happening::Delivered {
                client,
                delivery: Delivery::Reply { op, reply },
            } => {
                self.replied(*client, *op, reply);
                None
            }
            Happening::Delivered {
                client,
                delivery: Delivery::Watch(event),
            } => self.watched(*client, event.kind, &event.path),
            Happening::App { client, event } => {
                self.app(*client, event);
                None
            }
            _ => None,
        }
    }

    /// The run ended: every wakeup still waiting to be judged led nowhere.
    pub fn finish(&mut self) {
        let clients: Vec<ClientId> = self.waiting.keys().copied().collect();
        for client in clients {
            self.judge(client, false);
        }
    }

    fn sent(&mut self, client: ClientId, op: OpId, request: &Op) {
        let read = match request {
            Op::Exists { path, .. } | Op::GetData { path, .. } => Read::Node(path.clone()),
            Op::GetChildren { path, .. } => Read::Children(path.clone()),
            Op::Delete { path, .. } => Read::Delete(path.clone()),
            Op::Multi(_) => match deleted_path(request) {
                Some(path) => Read::Delete(path.to_string()),
                None => return,
            },
            _ => return,
        };
        if let Read::Delete(path) = &read {
            self.last_delete.insert(client, path.clone());
        }
        self.reads.insert((client, op), read);
    }

    fn replied(&mut self, client: ClientId, op: OpId, reply: &Reply) {
        // Creates name their node in the reply: nothing to remember at send.
        self.learn_created(client, reply);
        let Some(read) = self.reads.remove(&(client, op)) else {
            return;
        };
        match (read, reply) {
            (Read::Node(path), Ok(Response::Exists(Some(stat))))
            | (Read::Node(path), Ok(Response::Data { stat, .. })) => {
                self.seen.insert((client, path), stat.czxid);
            }
            (Read::Node(path), Ok(Response::Exists(None)))
            | (Read::Node(path), Err(zksim::ZkError::NoNode)) => {
                self.seen.remove(&(client, path));
            }
            (Read::Children(path), Ok(Response::Children { names, .. })) => {
                let mut names = names.clone();
                names.sort();
                self.listed.insert((client, path), names);
            }
            // A delete answered (done, or nothing there): the client sees no node.
            // Released keeps the czxid it needs, read when the delete was sent.
            (Read::Delete(path), Ok(_)) | (Read::Delete(path), Err(zksim::ZkError::NoNode)) => {
                self.seen.remove(&(client, path));
            }
            _ => {}
        }
    }

    fn learn_created(&mut self, client: ClientId, reply: &Reply) {
        match reply {
            Ok(Response::Created { path, stat }) => {
                self.seen.insert((client, path.clone()), stat.czxid);
            }
            Ok(Response::Multi(results)) => {
                for result in results {
                    self.learn_created(client, result);
                }
            }
            _ => {}
        }
    }

    fn watched(&mut self, client: ClientId, kind: EventType, path: &str) -> Option<Wakeup> {
        // The watch is used up whether or not the client waits.
        let seen = self.seen.remove(&(client, path.to_string()));
        let listed = match kind {
            EventType::NodeChildrenChanged => self.listed.remove(&(client, path.to_string())),
            _ => None,
        };
        let writer = !self.waiting.get(&client)?.shared;
        self.tally.wakeups += 1;
        self.judge(client, false);
        let release = match kind {
            EventType::NodeDeleted => self.deleter_of(client, path, seen),
            EventType::NodeChildrenChanged => self.child_deleter(client, path, listed),
            _ => None,
        };
        if let Some(wait) = self.waiting.get_mut(&client) {
            wait.pending = Some(release);
        }
        if let Some(r) = release {
            self.releases[r].woken.push((client, writer));
        }
        Some(Wakeup { client, release })
    }

    /// The release that deleted the node `client` saw at `path`.
    fn deleter_of(&self, client: ClientId, path: &str, seen: Option<Zxid>) -> Option<usize> {
        let on_path = |r: &Release| r.node.as_deref() == Some(path);
        if let Some(czxid) = seen {
            if let Some(i) = self
                .releases
                .iter()
                .position(|r| on_path(r) && r.czxid == Some(czxid))
            {
                return Some(i);
            }
        }
        // The releaser never saw its node's czxid: only an unambiguous path
        // match among such releases not yet charged to this client.
        let mut unknown = self.releases.iter().enumerate().filter(|(_, r)| {
            on_path(r) && r.czxid.is_none() && !r.woken.iter().any(|(c, _)| *c == client)
        });
        match (unknown.next(), unknown.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }

    /// The earliest release that deleted a child of `parent` that `client`
    /// last listed, not yet charged to it.
    fn child_deleter(
        &self,
        client: ClientId,
        parent: &str,
        listed: Option<Vec<String>>,
    ) -> Option<usize> {
        let listed = listed?;
        self.releases.iter().position(|r| {
            let Some(node) = r.node.as_deref() else {
                return false;
            };
            parent_of(node) == Some(parent)
                && listed
                    .binary_search_by(|name| name.as_str().cmp(base_name(node)))
                    .is_ok()
                && !r.woken.iter().any(|(c, _)| *c == client)
        })
    }

    fn app(&mut self, client: ClientId, event: &AppEvent) {
        match *event {
            AppEvent::Requested { shared } => {
                self.waiting.insert(
                    client,
                    Wait {
                        shared,
                        pending: None,
                    },
                );
            }
            AppEvent::Acquired { .. } => {
                self.tally.acquisitions += 1;
                self.judge(client, true);
                self.waiting.remove(&client);
            }
            AppEvent::GaveUp => {
                self.judge(client, false);
                self.waiting.remove(&client);
            }
            AppEvent::Released => {
                let node = self.last_delete.remove(&client);
                let czxid = node
                    .as_ref()
                    .and_then(|p| self.seen.get(&(client, p.clone())).copied());
                self.releases.push(Release {
                    client,
                    node,
                    czxid,
                    woken: Vec::new(),
                    wasted: 0,
                });
            }
            _ => {}
        }
    }

    /// Judge the client's pending wakeup, if any.
    fn judge(&mut self, client: ClientId, useful: bool) {
        let Some(wait) = self.waiting.get_mut(&client) else {
            return;
        };
        if let Some(release) = wait.pending.take() {
            if !useful {
                self.tally.wasted += 1;
                if let Some(r) = release {
                    self.releases[r].wasted += 1;
                }
            }
        }
    }
}

fn deleted_path(op: &Op) -> Option<&str> {
    match op {
        Op::Delete { path, .. } => Some(path),
        Op::Multi(ops) => ops.iter().find_map(deleted_path),
        _ => None,
    }
}

/// The parent of an absolute path; `None` for `/` and relative names.
pub fn parent_of(path: &str) -> Option<&str> {
    match path.rfind('/') {
        _ if path == "/" => None,
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Hand-written histories for tests of wakeup rules (here and in the
/// checker's monitor tests).
#[doc(hidden)]
pub mod history {
    use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, Response, Stat, WatchedEvent};
    use zksim::{CreateMode, Zxid};

    use crate::AppEvent;

    pub type H = Happening<AppEvent>;

    pub fn app(client: ClientId, event: AppEvent) -> H {
        Happening::App { client, event }
    }
    pub fn req(client: ClientId) -> H {
        app(client, AppEvent::Requested { shared: false })
    }
    pub fn acq(client: ClientId, fence: i64) -> H {
        app(
            client,
            AppEvent::Acquired {
                fence,
                shared: false,
            },
        )
    }
    pub fn rel(client: ClientId) -> H {
        app(client, AppEvent::Released)
    }
    pub fn sent(client: ClientId, op: OpId, request: Op) -> H {
        Happening::Sent {
            client,
            op,
            request,
        }
    }
    pub fn replied(client: ClientId, op: OpId, reply: zksim::Reply) -> H {
        Happening::Delivered {
            client,
            delivery: Delivery::Reply { op, reply },
        }
    }
    fn stat(czxid: Zxid) -> Stat {
        Stat {
            czxid,
            mzxid: czxid,
            ..Stat::default()
        }
    }
    /// `client` creates `path` (op `op`) and learns it got czxid `czxid`.
    pub fn creates(client: ClientId, op: OpId, path: &str, czxid: Zxid) -> [H; 2] {
        [
            sent(
                client,
                op,
                Op::Create {
                    path: path.into(),
                    data: Vec::new(),
                    mode: CreateMode::Ephemeral,
                },
            ),
            replied(
                client,
                op,
                Ok(Response::Created {
                    path: path.into(),
                    stat: stat(czxid),
                }),
            ),
        ]
    }
    /// `client` watches `path` with `exists` and sees the node `czxid`.
    pub fn sees(client: ClientId, op: OpId, path: &str, czxid: Zxid) -> [H; 2] {
        [
            sent(
                client,
                op,
                Op::Exists {
                    path: path.into(),
                    watch: true,
                },
            ),
            replied(client, op, Ok(Response::Exists(Some(stat(czxid))))),
        ]
    }
    /// `client` lists `parent`'s children (with a watch) and sees `names`.
    pub fn lists(client: ClientId, op: OpId, parent: &str, names: &[&str]) -> [H; 2] {
        [
            sent(
                client,
                op,
                Op::GetChildren {
                    path: parent.into(),
                    watch: true,
                },
            ),
            replied(
                client,
                op,
                Ok(Response::Children {
                    names: names.iter().map(|n| n.to_string()).collect(),
                    stat: Stat::default(),
                }),
            ),
        ]
    }
    pub fn delete_sent(client: ClientId, op: OpId, path: &str) -> H {
        sent(
            client,
            op,
            Op::Delete {
                path: path.into(),
                version: -1,
            },
        )
    }
    pub fn woken(client: ClientId, kind: EventType, path: &str) -> H {
        Happening::Delivered {
            client,
            delivery: Delivery::Watch(WatchedEvent {
                kind,
                path: path.into(),
            }),
        }
    }
    pub fn deleted(client: ClientId, path: &str) -> H {
        woken(client, EventType::NodeDeleted, path)
    }
}

#[cfg(test)]
mod tests {
    use super::history::*;
    use super::*;

    fn ledger(log: &[H]) -> WakeupLedger {
        let mut l = WakeupLedger::new();
        for h in log {
            l.observe(h);
        }
        l
    }
    fn per_release(l: &WakeupLedger) -> Vec<Vec<ClientId>> {
        l.releases()
            .iter()
            .map(|r| r.woken.iter().map(|(c, _)| *c).collect())
            .collect()
    }

    /// Issue 15's trace (naive lock, 4 clients, seed 10): client 3 releases
    /// and asks again at once; its wakeup one round later comes from client
    /// 0's release of the reused `/lock/lock`, not from its own.
    #[test]
    fn a_wakeup_is_charged_to_the_release_of_the_node_it_watched() {
        const LOCK: &str = "/lock/lock";
        let mut log = vec![req(0), req(1), req(2), req(3)];
        log.extend(creates(3, 1, LOCK, 0x5));
        log.push(acq(3, 0x5));
        for c in 0..3 {
            log.extend(sees(c, 2, LOCK, 0x5));
        }
        log.extend([delete_sent(3, 2, LOCK), rel(3), req(3)]);
        log.extend([deleted(0, LOCK), deleted(1, LOCK), deleted(2, LOCK)]);
        log.extend(creates(0, 3, LOCK, 0xe));
        log.push(acq(0, 0xe));
        for c in 1..4 {
            log.extend(sees(c, 4, LOCK, 0xe));
        }
        log.extend([delete_sent(0, 4, LOCK), rel(0)]);
        log.extend([deleted(3, LOCK), deleted(1, LOCK), deleted(2, LOCK)]);
        let l = ledger(&log);
        assert_eq!(per_release(&l), vec![vec![0, 1, 2], vec![3, 1, 2]]);
        assert_eq!(l.wakeups(), 6);
    }

    /// A client reconnected to a lagging follower watches a node the leader
    /// already deleted; the follower's catching up wakes it, and that wakeup
    /// belongs to the old release, not to the newer one of the same path.
    #[test]
    fn a_lagging_servers_wakeup_is_charged_to_the_old_release() {
        const LOCK: &str = "/lock/lock";
        let mut log = vec![req(1), req(2)];
        log.extend(creates(0, 1, LOCK, 0x5));
        log.extend([acq(0, 0x5), delete_sent(0, 2, LOCK), rel(0)]);
        // Client 2 already woke for that and took the lock.
        log.extend(creates(2, 1, LOCK, 0x9));
        log.push(acq(2, 0x9));
        // Client 1, on the lagging follower, still sees 0's node.
        log.extend(sees(1, 1, LOCK, 0x5));
        log.extend([delete_sent(2, 2, LOCK), rel(2)]);
        log.push(deleted(1, LOCK));
        let l = ledger(&log);
        assert_eq!(per_release(&l), vec![vec![1], vec![]]);
    }

    /// Predecessor watches on unique sequential names; a child watch is
    /// charged to the release of a child the client listed.
    #[test]
    fn sequential_and_child_watches() {
        let mut log = vec![req(1), req(2)];
        log.extend(creates(0, 1, "/l/n-0", 1));
        log.extend(creates(1, 1, "/l/n-1", 2));
        log.extend(sees(2, 1, "/l/n-1", 2));
        log.extend(lists(1, 2, "/l", &["n-0", "n-1"]));
        log.extend([delete_sent(0, 2, "/l/n-0"), rel(0)]);
        log.push(woken(1, EventType::NodeChildrenChanged, "/l"));
        log.extend([acq(1, 2), delete_sent(1, 3, "/l/n-1"), rel(1)]);
        log.push(deleted(2, "/l/n-1"));
        let l = ledger(&log);
        assert_eq!(per_release(&l), vec![vec![1], vec![2]]);
        assert_eq!((l.wakeups(), l.wasted()), (2, 0));
    }

    /// What no release caused belongs to none: a delete of a node whose
    /// owner never released it (an expiry), a `NodeCreated`, a watch the
    /// client never saw a node for; events to a client not waiting are not
    /// wakeups at all.
    #[test]
    fn what_belongs_to_no_release() {
        let mut log = vec![req(1)];
        log.extend(creates(0, 1, "/l/n-0", 1));
        log.extend([acq(0, 1), delete_sent(0, 2, "/l/n-0"), rel(0)]);
        log.extend(sees(1, 1, "/l/n-7", 7));
        log.push(deleted(1, "/l/n-7"));
        log.push(woken(1, EventType::NodeCreated, "/l/n-0"));
        log.push(deleted(3, "/l/n-0"));
        let l = ledger(&log);
        assert_eq!(per_release(&l), vec![Vec::<ClientId>::new()]);
        assert_eq!(l.wakeups(), 2);
    }

    /// A releaser that never learnt its node's czxid (lost create reply) is
    /// matched by path, but only when that is unambiguous.
    #[test]
    fn releases_of_unknown_nodes_match_by_path_only_when_unambiguous() {
        let mut log = vec![req(1)];
        log.extend([
            delete_sent(0, 1, "/l/n-0"),
            rel(0),
            delete_sent(2, 1, "/l/n-0"),
        ]);
        log.extend(sees(1, 1, "/l/n-0", 4));
        log.push(deleted(1, "/l/n-0"));
        assert_eq!(per_release(&ledger(&log)), vec![vec![1]]);
        log.insert(4, rel(2));
        let l = ledger(&log);
        assert_eq!(per_release(&l), vec![vec![], vec![]]);
        assert_eq!(l.wakeups(), 1);
    }

    #[test]
    fn the_tally_is_not_part_of_identity() {
        let a = ledger(&[req(0), delete_sent(5, 1, "/x")]);
        let mut b = a.clone();
        b.observe(&sent(5, 2, Op::Sync { path: "/".into() }));
        assert_eq!(a, b);
        assert_ne!(a.requests(), b.requests());
    }
}
