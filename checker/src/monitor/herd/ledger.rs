//! Which write woke whom: the one rule set behind every wakeup figure.
//!
//! Both the `herd` monitor ([`super::HerdMonitor`]) and the real-server
//! figures ([`super::LockFigures`]) feed a history to a [`WakeupLedger`], so
//! a number printed for the simulator and one printed for a live ZooKeeper
//! mean the same thing. Only the client-side part of a history is read —
//! `Sent`, `Delivered` and `App` — which both the simulator and the
//! real-server driver write.
//!
//! Definitions:
//! * A client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`.
//! * A **wakeup** is a node-watch event delivered to a waiting client.
//!   Events to a client that is not waiting are not wakeups.
//! * A **lock write** is what fires watches: a **release** (a `Released`
//!   event and the delete it sent) or a **create** (a `create` whose reply
//!   named its node). Every wakeup is charged to the one write that fired
//!   it, when the history tells which; the figures count wakeups per write,
//!   so a create that wakes every waiter shows as the herd it is (issue 35:
//!   back to back, the naive lock's waiters mostly find no node, watch for
//!   its creation and are woken by the next holder's *create*; charged to
//!   releases only, that herd read as "max 1").
//! * The node a release frees is the path of the last `Delete` the releasing
//!   client sent (recipes send the delete and emit `Released` in the same
//!   handler), and that node's identity is the czxid the releasing client
//!   last saw for the path (the `create` reply of its own node, or an
//!   `exists`/`getData` of it). A create's node and czxid are its reply's.
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
//!   exactly one fits.
//! * **Attribution of a `NodeChildrenChanged` wakeup on *d*.** A child watch
//!   fires on the first change among *d*'s children after the listing that
//!   set it; the reply lists names, not czxids, so the cause is pinned by
//!   name: the earliest release that deleted a child the client last listed
//!   and that was not yet charged to this client. The listing is used up by
//!   the event (one-shot), so one listing wakes its client once.
//! * **Attribution of a `NodeCreated` wakeup on *p*.** An `exists` that found
//!   no node leaves a watch that fires at the first create of *p* after that
//!   read. A client cannot see when its read was served, so the ledger places
//!   it by the releases it knew of: every node of *p* whose release it had
//!   seen when the read's reply (no node) arrived was gone before the read
//!   (a release's delete is sent before it is served, and the read found
//!   nothing), and the node the client last saw at *p* was older still. The
//!   wakeup belongs to the create of *p* with the smallest czxid above all
//!   of those. When that create's reply has not arrived yet (the creator
//!   hears back after the watchers), the wakeup is charged when it does, to
//!   the first create of *p* above that bound. Limits, under faults only: a
//!   node that went with its session's end (no release) or whose creator
//!   never heard back is unknown, and a watch restored on reconnection fires
//!   for a node present then, so such a wakeup may go to a neighbouring
//!   create of the same path, or to none.
//! * A wakeup that fits no write (a node deleted by a session's end, a data
//!   change, an ambiguous match, a creation watch whose read the ledger did
//!   not see answered) is still a wakeup but belongs to no write.
//! * A wakeup is **useful** when the woken client's next step in its wait is
//!   `Acquired` (no further wakeup in between); otherwise it is **wasted**:
//!   a later wakeup, `GaveUp` or the end of the run make it so.
//! * A **request** is any op a client sent.

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId, Reply, Response, Zxid};

mod attribution;
mod rename;

/// Which kind of lock write fired the watches charged to a [`Write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteKind {
    /// A release: the delete a `Released` client sent.
    Release,
    /// A create whose reply named its node.
    Create,
}

/// One lock write and what it woke.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Write {
    /// A release or a create.
    pub kind: WriteKind,
    /// The client that wrote: the releaser, or the creator.
    pub client: ClientId,
    /// The node deleted (if the releasing client sent a delete) or created.
    pub node: Option<String>,
    /// That node's czxid as the writing client saw it, if it did.
    pub czxid: Option<Zxid>,
    /// Waiters woken, in order, and whether each asked to write.
    pub woken: Vec<(ClientId, bool)>,
    /// Of those, how many wakeups led nowhere.
    pub wasted: u32,
}

impl Write {
    /// How many waiters other than the writer itself this write woke: a
    /// client woken by its own create (its creation watch from an `exists`
    /// that found nothing) already has what it waited for, and is no herd.
    pub fn others_woken(&self) -> usize {
        self.woken.iter().filter(|(c, _)| *c != self.client).count()
    }
}

/// Where one write is kept in the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId {
    /// Which list the write is in.
    pub kind: WriteKind,
    /// Its index in [`WakeupLedger::releases`] or [`WakeupLedger::creates`].
    pub index: usize,
}

/// What a client's latest wakeup not yet judged is charged to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Charge {
    /// No write.
    Nothing,
    /// This write.
    To(WriteId),
    /// The create of this path whose reply has not arrived yet.
    Awaiting(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wait {
    /// It asked for a read lock.
    shared: bool,
    /// The latest wakeup not yet judged useful or wasted, and its write.
    pending: Option<Charge>,
}

/// A `NodeCreated` wakeup whose create the ledger does not know yet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Awaiting {
    /// The create is the first of the path with a czxid above this.
    above: Zxid,
    /// The woken client asked to write.
    writer: bool,
    /// The wakeup was judged wasted already.
    wasted: bool,
}

/// A read in flight whose reply tells what the client saw.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Read {
    /// `exists` / `getData` of a node; whether a missing node leaves a
    /// creation watch (an `exists` with a watch).
    Node {
        path: String,
        watches_creation: bool,
    },
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
    /// Creation watches: the bound a `NodeCreated` on the path is charged
    /// above, fixed when the client's `exists` found no node.
    absent: BTreeMap<(ClientId, String), Zxid>,
    /// `NodeCreated` wakeups waiting for their create's reply.
    awaiting: BTreeMap<(ClientId, String), Awaiting>,
    /// The child names each client last listed under each path.
    listed: BTreeMap<(ClientId, String), Vec<String>>,
    /// Each client's last sent delete.
    last_delete: BTreeMap<ClientId, String>,
    releases: Vec<Write>,
    creates: Vec<Write>,
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
    /// An empty ledger, before any happening.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every release so far, in the order they happened.
    pub fn releases(&self) -> &[Write] {
        &self.releases
    }
    /// Every create whose reply arrived, in the order the replies did.
    pub fn creates(&self) -> &[Write] {
        &self.creates
    }
    /// One write.
    pub fn write(&self, id: WriteId) -> &Write {
        match id.kind {
            WriteKind::Release => &self.releases[id.index],
            WriteKind::Create => &self.creates[id.index],
        }
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
    /// `Acquired` events seen.
    pub fn acquisitions(&self) -> u64 {
        self.tally.acquisitions
    }
    /// Whether `client` is waiting, and if so whether it asked to write.
    pub fn waiting_writer(&self, client: ClientId) -> Option<bool> {
        self.waiting.get(&client).map(|w| !w.shared)
    }

    /// Take one happening into account. Returns the writes it charged with
    /// a wakeup: the one that fired a delivered watch event, or the create
    /// a reply made known, which earlier `NodeCreated` wakeups waited for.
    pub fn observe(&mut self, happening: &Happening<AppEvent>) -> Vec<WriteId> {
        match happening {
            Happening::Sent {
                client,
                op,
                request,
            } => {
                self.tally.requests += 1;
                self.sent(*client, *op, request);
                Vec::new()
            }
            Happening::Delivered {
                client,
                delivery: Delivery::Reply { op, reply },
            } => self.replied(*client, *op, reply),
            Happening::Delivered {
                client,
                delivery: Delivery::Watch(event),
            } => self
                .watched(*client, event.kind, &event.path)
                .into_iter()
                .collect(),
            Happening::App { client, event } => {
                self.app(*client, event);
                Vec::new()
            }
            _ => Vec::new(),
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
            Op::Exists { path, watch } => Read::Node {
                path: path.clone(),
                watches_creation: *watch,
            },
            Op::GetData { path, .. } => Read::Node {
                path: path.clone(),
                watches_creation: false,
            },
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

    fn replied(&mut self, client: ClientId, op: OpId, reply: &Reply) -> Vec<WriteId> {
        // Creates name their node in the reply: nothing to remember at send.
        let mut charged = Vec::new();
        self.learn_created(client, reply, &mut charged);
        let Some(read) = self.reads.remove(&(client, op)) else {
            return charged;
        };
        match (read, reply) {
            (Read::Node { path, .. }, Ok(Response::Exists(Some(stat))))
            | (Read::Node { path, .. }, Ok(Response::Data { stat, .. })) => {
                self.absent.remove(&(client, path.clone()));
                self.seen.insert((client, path), stat.czxid);
            }
            (
                Read::Node {
                    path,
                    watches_creation,
                },
                Ok(Response::Exists(None)),
            ) => {
                let last_seen = self.seen.remove(&(client, path.clone()));
                if watches_creation {
                    let above = self.gone_before(&path).max(last_seen.unwrap_or(0));
                    self.absent.insert((client, path), above);
                }
            }
            (Read::Node { path, .. }, Err(zksim::ZkError::NoNode)) => {
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
        charged
    }

    fn learn_created(&mut self, client: ClientId, reply: &Reply, charged: &mut Vec<WriteId>) {
        match reply {
            Ok(Response::Created { path, stat }) => {
                self.seen.insert((client, path.clone()), stat.czxid);
                if let Some(id) = self.created(client, path, stat.czxid) {
                    charged.push(id);
                }
            }
            Ok(Response::Multi(results)) => {
                for result in results {
                    self.learn_created(client, result, charged);
                }
            }
            _ => {}
        }
    }

    fn watched(&mut self, client: ClientId, kind: EventType, path: &str) -> Option<WriteId> {
        // The watch is used up whether or not the client waits.
        let key = (client, path.to_string());
        let seen = self.seen.remove(&key);
        let listed = match kind {
            EventType::NodeChildrenChanged => self.listed.remove(&key),
            _ => None,
        };
        let absent = match kind {
            EventType::NodeCreated => self.absent.remove(&key),
            _ => None,
        };
        let writer = !self.waiting.get(&client)?.shared;
        self.tally.wakeups += 1;
        self.judge(client, false);
        let release = |index| {
            Charge::To(WriteId {
                kind: WriteKind::Release,
                index,
            })
        };
        let charge = match kind {
            EventType::NodeDeleted => self.deleter_of(client, path, seen).map(release),
            EventType::NodeChildrenChanged => self.child_deleter(client, path, listed).map(release),
            EventType::NodeCreated => absent.map(|above| self.creator_of(path, above)),
            _ => None,
        }
        .unwrap_or(Charge::Nothing);
        match &charge {
            Charge::To(id) => {
                let id = *id;
                match id.kind {
                    WriteKind::Release => &mut self.releases[id.index],
                    WriteKind::Create => &mut self.creates[id.index],
                }
                .woken
                .push((client, writer));
            }
            Charge::Awaiting(_) => {
                let awaiting = Awaiting {
                    above: absent.unwrap_or(0),
                    writer,
                    wasted: false,
                };
                // An older wakeup of this path still waiting belongs to no
                // create now: its creator never heard back.
                self.awaiting.insert(key, awaiting);
            }
            Charge::Nothing => {}
        }
        let fired = match &charge {
            Charge::To(id) => Some(*id),
            _ => None,
        };
        if let Some(wait) = self.waiting.get_mut(&client) {
            wait.pending = Some(charge);
        }
        fired
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
                self.releases.push(Write {
                    kind: WriteKind::Release,
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
        let Some(charge) = wait.pending.take() else {
            return;
        };
        if useful {
            return;
        }
        self.tally.wasted += 1;
        match charge {
            Charge::To(id) => match id.kind {
                WriteKind::Release => self.releases[id.index].wasted += 1,
                WriteKind::Create => self.creates[id.index].wasted += 1,
            },
            Charge::Awaiting(path) => {
                if let Some(a) = self.awaiting.get_mut(&(client, path)) {
                    a.wasted = true;
                }
            }
            Charge::Nothing => {}
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
