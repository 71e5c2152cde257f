//! ZooKeeper's own lock recipe, with predecessor watches
//! (<https://zookeeper.apache.org/doc/current/recipes.html#sc_recipes_Locks>),
//! and its read/write variant (`#Shared Locks`), as one [`Protocol`].
//!
//! Per attempt:
//! 1. `create(<root>/<kind>-<guid>-, ephemeral sequential)`; `<kind>` is
//!    `lock` (exclusive), `read` or `write`, and `<guid>` =
//!    `c<client>s<session id>a<attempt>` (the session id in decimal, as everywhere in traces) tags the node with its owner, like
//!    Curator's protected mode, so that it can be found again when the
//!    create's reply is lost.
//! 2. `getChildren(<root>)` without a watch; order by sequence suffix (never
//!    the whole name, W1).
//! 3. Nothing blocks us → we hold the lock. What blocks: for an exclusive
//!    lock or a writer, every lower node; for a reader, every lower writer.
//! 4. Otherwise `exists(<the next lower blocker>, watch)`: gone already →
//!    step 2; else wait for its `NodeDeleted`, then step 2 (re-listing, W3:
//!    it may have been a waiter that gave up, not the holder).
//!
//! Failures: `ConnectionLoss` on the create → list the children and adopt
//! the node carrying this attempt's guid if it is there, else create again
//! (W4). Any child carrying this client's and session's tag that is not its
//! current node is a leftover of an earlier attempt: it is deleted when seen
//! and never counted as a predecessor. After an interruption (`GaveUp`,
//! `LostLock`) the attempt is over: in the same session its node is deleted
//! (by name if known, else through the tag when the next listing shows it),
//! and the retry creates a new node — re-using the old one would reuse a
//! fence and let a client that gave up jump ahead of those that queued
//! behind it in the meantime (FIFO).
//!
//! In ZooKeeper a `ConnectionLoss` always comes with a `Disconnected`, so the
//! adoption above completes only for a client that does not give up on
//! disconnection (the session-blind variant, or a driver that retries).
//!
//! [`Flaws`] switches on the classic mistakes one by one; see
//! [`super::flaws`] for the registered variants.

use zksim::decimal::push_decimal;
use zksim::{CreateMode, Cx, EventType, Op, OpId, Reply, Response, WatchedEvent, ZkError};

pub use super::line::Role;
use super::line::{judge, Verdict};
use super::names::{child_name, child_path, sequence_of};
use super::protocol::{Attempt, Protocol};
pub use super::switches::Flaws;
use crate::AppEvent;

/// This client's knowledge of its own node for the current attempt.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Node {
    None,
    /// A create with this guid was sent; whether it made a node is unknown.
    Unknown {
        guid: String,
    },
    /// Its node: name (not path) and czxid (the fence it grants).
    Known {
        name: String,
        czxid: i64,
    },
}

/// Where the current attempt stands; each waiting stage remembers the op
/// whose reply it expects, so that replies to abandoned ops are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Stage {
    Idle,
    Creating {
        op: OpId,
    },
    /// `getChildren` to look for a node whose name starts with `prefix`
    /// (the node of a create whose reply was lost).
    Finding {
        op: OpId,
        prefix: String,
    },
    /// `exists` on the found node, for its czxid.
    Adopting {
        op: OpId,
        name: String,
    },
    Listing {
        op: OpId,
    },
    /// `exists(watch)` sent on `pred` (a child name); its reply is `op`.
    Watching {
        op: OpId,
        pred: String,
    },
    /// Polling ([`Waiting::Poll`]): the timer is armed; when it fires the
    /// children are listed again.
    Polling,
    Holding,
}

/// How a client that does not hold the lock yet waits for its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Waiting {
    /// `exists(predecessor, watch)` and wait for its `NodeDeleted` (the recipe).
    Watch,
    /// No watch: list the children again every [`POLL_TICKS`] ticks, as
    /// code that cannot keep a watcher around does.
    Poll {
        /// The flaw of `sequential-poll-defer`: take the lock only when its
        /// node is the *only* one, deferring to every other contender,
        /// lower or higher.
        defer_to_all: bool,
    },
}

/// How often a polling client lists the children again.
pub const POLL_TICKS: zksim::Tick = 1;

/// The predecessor-watch lock's [`Protocol`]. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SequentialProtocol {
    root: String,
    client: usize,
    role: Role,
    flaws: Flaws,
    waiting: Waiting,
    /// Creates sent so far (the `a<attempt>` of the guid).
    attempts: u32,
    node: Node,
    stage: Stage,
    /// A released node whose `delete` has not been confirmed, and that delete.
    releasing: Option<(String, Option<OpId>)>,
}

impl SequentialProtocol {
    pub fn new(root: &str, client: usize, role: Role, flaws: Flaws) -> Self {
        SequentialProtocol {
            root: root.to_string(),
            client,
            role,
            flaws,
            waiting: Waiting::Watch,
            attempts: 0,
            node: Node::None,
            stage: Stage::Idle,
            releasing: None,
        }
    }

    /// The same protocol, waiting as `waiting` says.
    pub fn waiting(mut self, waiting: Waiting) -> Self {
        self.waiting = waiting;
        self
    }

    pub fn role(&self) -> Role {
        self.role
    }
    pub fn flaws(&self) -> Flaws {
        self.flaws
    }

    /// The start of every node name this client makes in `session`.
    fn session_tag(&self, session: i64) -> String {
        let mut tag = self.client_tag();
        push_decimal(&mut tag, session);
        tag.push('a');
        tag
    }

    /// `<kind>-c<client>s`: the start of every node name this client makes.
    fn client_tag(&self) -> String {
        let mut tag = String::with_capacity(32);
        tag.push_str(self.role.kind());
        tag.push_str("-c");
        push_decimal(&mut tag, self.client);
        tag.push('s');
        tag
    }

    /// `<kind>-<guid>-`: the prefix of the node a create with `guid` makes.
    fn guid_prefix(&self, guid: &str) -> String {
        let mut prefix = String::with_capacity(guid.len() + 8);
        prefix.push_str(self.role.kind());
        prefix.push('-');
        prefix.push_str(guid);
        prefix.push('-');
        prefix
    }

    fn path(&self, name: &str) -> String {
        child_path(&self.root, name)
    }

    fn create(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        self.attempts += 1;
        let mut guid = String::with_capacity(24);
        guid.push('c');
        push_decimal(&mut guid, self.client);
        guid.push('s');
        push_decimal(&mut guid, cx.session_id());
        guid.push('a');
        push_decimal(&mut guid, self.attempts);
        let op = cx.send(Op::Create {
            path: self.path(&self.guid_prefix(&guid)),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        });
        self.node = Node::Unknown { guid };
        self.stage = Stage::Creating { op };
        Attempt::Wait
    }

    fn list(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        let op = cx.send(Op::GetChildren {
            path: self.root.clone(),
            watch: false,
        });
        self.stage = Stage::Listing { op };
        Attempt::Wait
    }

    /// Look for the node a create with `guid` made.
    fn find(&mut self, guid: &str, cx: &mut Cx<AppEvent>) -> Attempt {
        let prefix = self.guid_prefix(guid);
        self.find_prefix(prefix, cx)
    }

    fn find_prefix(&mut self, prefix: String, cx: &mut Cx<AppEvent>) -> Attempt {
        let op = cx.send(Op::GetChildren {
            path: self.root.clone(),
            watch: false,
        });
        self.stage = Stage::Finding { op, prefix };
        Attempt::Wait
    }

    fn watch(&mut self, pred: String, cx: &mut Cx<AppEvent>) -> Attempt {
        let op = cx.send(Op::Exists {
            path: self.path(&pred),
            watch: true,
        });
        self.stage = Stage::Watching { op, pred };
        Attempt::Wait
    }

    /// Own node known to exist: report it, then look at the line.
    fn enqueued(&mut self, name: String, czxid: i64, cx: &mut Cx<AppEvent>) -> Attempt {
        cx.emit(AppEvent::Enqueued {
            seq: sequence_of(&name),
        });
        self.node = Node::Known { name, czxid };
        self.list(cx)
    }

    fn hold(&mut self) -> Attempt {
        match self.node {
            Node::Known { czxid, .. } => {
                self.stage = Stage::Holding;
                Attempt::Acquired { fence: czxid }
            }
            // Never reached: we only hold with a known node.
            _ => Attempt::Wait,
        }
    }

    /// Not our turn yet: look again in [`POLL_TICKS`] ticks.
    fn poll(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        cx.after(POLL_TICKS);
        self.stage = Stage::Polling;
        Attempt::Wait
    }

    /// Woken up (predecessor gone): re-list, or (W3) just take the lock.
    fn woken(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        if self.flaws.no_recheck {
            self.hold()
        } else {
            self.list(cx)
        }
    }

    /// The op the current stage waits for.
    fn stage_op(&self) -> Option<OpId> {
        match &self.stage {
            Stage::Creating { op }
            | Stage::Finding { op, .. }
            | Stage::Adopting { op, .. }
            | Stage::Listing { op }
            | Stage::Watching { op, .. } => Some(*op),
            Stage::Idle | Stage::Polling | Stage::Holding => None,
        }
    }

    /// Send the current stage's request again (its reply was lost).
    fn redo(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        match self.stage.clone() {
            Stage::Creating { .. } => match self.node.clone() {
                Node::Unknown { guid } if !self.flaws.blind_retry => self.find(&guid, cx),
                _ => self.create(cx),
            },
            Stage::Finding { prefix, .. } => self.find_prefix(prefix, cx),
            Stage::Adopting { name, .. } => {
                let op = cx.send(Op::Exists {
                    path: self.path(&name),
                    watch: false,
                });
                self.stage = Stage::Adopting { op, name };
                Attempt::Wait
            }
            Stage::Listing { .. } => self.list(cx),
            Stage::Watching { pred, .. } => self.watch(pred, cx),
            Stage::Idle | Stage::Polling | Stage::Holding => Attempt::Wait,
        }
    }

    /// Step 3/4 on a fresh listing.
    fn decide(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) -> Attempt {
        let Node::Known { name: mine, .. } = &self.node else {
            return Attempt::Wait;
        };
        // W4: the blind variant never looks for its own leftovers (nor does
        // the one that forgets its released nodes).
        let tag = (!self.flaws.blind_retry && !self.flaws.forget_release)
            .then(|| self.session_tag(cx.session_id()));
        let judgement = judge(&names, mine, tag.as_deref(), self.role, self.flaws);
        for leftover in &judgement.leftovers {
            cx.send(Op::Delete {
                path: self.path(leftover),
                version: -1,
            });
        }
        let contenders = names
            .iter()
            .filter(|n| self.role.is_lock_node(n) && !judgement.leftovers.contains(n))
            .count();
        match (judgement.verdict, self.waiting) {
            (Verdict::Holds, Waiting::Poll { defer_to_all: true }) if contenders > 1 => {
                self.poll(cx)
            }
            (Verdict::Holds, _) => self.hold(),
            (Verdict::Watch(_), Waiting::Poll { .. }) => self.poll(cx),
            (Verdict::Watch(pred), Waiting::Watch) => self.watch(pred, cx),
            (Verdict::Gone, _) => {
                // Our node is gone (deleted under us): start over.
                self.node = Node::None;
                self.create(cx)
            }
        }
    }
}

impl Protocol for SequentialProtocol {
    fn attempt(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        // A node of an abandoned attempt whose create's reply was lost is
        // not adopted: the client told the world it gave up, and this new
        // request must queue behind everyone already in line (FIFO). The
        // fresh node's listing finds the old one by its tag and deletes it.
        if self.flaws.adopt_any && self.attempts > 0 {
            // The flaw: any node of this client, whatever its session.
            let prefix = self.client_tag();
            return self.find_prefix(prefix, cx);
        }
        self.create(cx)
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) -> Attempt {
        if let Some((_, pending)) = &mut self.releasing {
            if *pending == Some(op) {
                match reply {
                    // Lost with the connection: delete again once resumed
                    // (or, with the flaw, forget it).
                    Err(ZkError::ConnectionLoss) if self.flaws.forget_release => {
                        self.releasing = None
                    }
                    Err(ZkError::ConnectionLoss) => *pending = None,
                    _ => self.releasing = None,
                }
                return Attempt::Wait;
            }
        }
        if reply == Err(ZkError::ConnectionLoss)
            && self.flaws.ignore_session
            && self.stage_op() == Some(op)
        {
            // Nothing will interrupt this attempt: ask again.
            return self.redo(cx);
        }
        match self.stage.clone() {
            Stage::Creating { op: want } if want == op => match reply {
                Ok(Response::Created { path, stat }) => {
                    self.enqueued(child_name(&path).to_string(), stat.czxid, cx)
                }
                Err(ZkError::ConnectionLoss) => match self.node.clone() {
                    Node::Unknown { .. } if self.flaws.blind_retry => self.create(cx),
                    Node::Unknown { guid } => self.find(&guid, cx),
                    _ => Attempt::Wait,
                },
                _ => {
                    self.stage = Stage::Idle;
                    Attempt::Wait
                }
            },
            Stage::Finding { op: want, prefix } if want == op => match reply {
                Ok(Response::Children { names, .. }) => {
                    match names.into_iter().find(|n| n.starts_with(&prefix)) {
                        Some(name) => {
                            let op = cx.send(Op::Exists {
                                path: self.path(&name),
                                watch: false,
                            });
                            self.stage = Stage::Adopting { op, name };
                            Attempt::Wait
                        }
                        None => self.create(cx),
                    }
                }
                _ => Attempt::Wait,
            },
            Stage::Adopting { op: want, name } if want == op => match reply {
                Ok(Response::Exists(Some(stat))) => self.enqueued(name, stat.czxid, cx),
                Ok(Response::Exists(None)) => self.create(cx),
                _ => Attempt::Wait,
            },
            Stage::Listing { op: want } if want == op => match reply {
                Ok(Response::Children { names, .. }) => self.decide(names, cx),
                _ => Attempt::Wait,
            },
            Stage::Watching { op: want, .. } if want == op => match reply {
                Ok(Response::Exists(Some(_))) => Attempt::Wait,
                Ok(Response::Exists(None)) => self.woken(cx),
                _ => Attempt::Wait,
            },
            _ => Attempt::Wait,
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) -> Attempt {
        let Stage::Watching { pred, .. } = &self.stage else {
            return Attempt::Wait;
        };
        if event.path != self.path(pred) {
            return Attempt::Wait;
        }
        match event.kind {
            EventType::NodeDeleted => self.woken(cx),
            // The watch is spent; it still must be watched.
            _ => {
                let pred = pred.clone();
                self.watch(pred, cx)
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        if self.stage == Stage::Polling {
            self.list(cx)
        } else {
            Attempt::Wait
        }
    }

    fn release(&mut self, cx: &mut Cx<AppEvent>) {
        if let Node::Known { name, .. } = std::mem::replace(&mut self.node, Node::None) {
            let op = cx.send(Op::Delete {
                path: self.path(&name),
                version: -1,
            });
            self.releasing = Some((name, Some(op)));
        }
        self.stage = Stage::Idle;
    }

    fn interrupted(&mut self, expired: bool) {
        self.stage = Stage::Idle;
        if self.flaws.forget_release {
            self.releasing = None;
        }
        if let Some((_, pending)) = &mut self.releasing {
            *pending = None;
        }
        if expired {
            self.node = Node::None;
            self.releasing = None;
        }
    }

    fn resumed(&mut self, cx: &mut Cx<AppEvent>) {
        if let Some((name, pending)) = &self.releasing {
            if pending.is_none() {
                let name = name.clone();
                let op = cx.send(Op::Delete {
                    path: self.path(&name),
                    version: -1,
                });
                self.releasing = Some((name, Some(op)));
            }
        }
        match &self.node {
            Node::Known { name, .. } => {
                // The abandoned attempt's node: its fence must not be reused.
                cx.send(Op::Delete {
                    path: self.path(name),
                    version: -1,
                });
                self.node = Node::None;
            }
            Node::Unknown { .. } if self.flaws.blind_retry => self.node = Node::None,
            _ => {}
        }
    }

    fn ignores_session(&self) -> bool {
        self.flaws.ignore_session
    }

    /// Op ids are only matched against replies (`want == op`).
    fn ops_shifted(&self, base: OpId) -> Option<Self> {
        let op = |o: OpId| o.wrapping_sub(base);
        let stage = match self.stage.clone() {
            Stage::Creating { op: o } => Stage::Creating { op: op(o) },
            Stage::Finding { op: o, prefix } => Stage::Finding { op: op(o), prefix },
            Stage::Adopting { op: o, name } => Stage::Adopting { op: op(o), name },
            Stage::Listing { op: o } => Stage::Listing { op: op(o) },
            Stage::Watching { op: o, pred } => Stage::Watching { op: op(o), pred },
            other @ (Stage::Idle | Stage::Polling | Stage::Holding) => other,
        };
        Some(SequentialProtocol {
            stage,
            releasing: self
                .releasing
                .as_ref()
                .map(|(name, o)| (name.clone(), o.map(op))),
            ..self.clone()
        })
    }

    /// Symmetric (clients interchangeable under renaming) unless a flaw
    /// makes names matter beyond their guid: `string_sort` orders the line
    /// by whole names, so the client index decides who goes first;
    /// `adopt_any` takes the first of several matching children in listing
    /// order, which is Java hash order of the names. Every other variant
    /// orders by sequence suffix, looks children up by a prefix that at
    /// most one name carries (one guid per create), and deletes leftovers
    /// in sequence order ([`judge`]).
    fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        if self.flaws.string_sort || self.flaws.adopt_any {
            return None;
        }
        let node = match &self.node {
            Node::None => Node::None,
            Node::Unknown { guid } => Node::Unknown { guid: r.text(guid) },
            Node::Known { name, czxid } => Node::Known {
                name: r.text(name),
                czxid: *czxid,
            },
        };
        let stage = match &self.stage {
            Stage::Finding { op, prefix } => Stage::Finding {
                op: *op,
                prefix: r.text(prefix),
            },
            Stage::Adopting { op, name } => Stage::Adopting {
                op: *op,
                name: r.text(name),
            },
            Stage::Watching { op, pred } => Stage::Watching {
                op: *op,
                pred: r.text(pred),
            },
            other => other.clone(),
        };
        Some(SequentialProtocol {
            root: r.text(&self.root),
            client: r.client(self.client),
            role: self.role,
            flaws: self.flaws,
            waiting: self.waiting,
            attempts: self.attempts,
            node,
            stage,
            releasing: self
                .releasing
                .as_ref()
                .map(|(name, op)| (r.text(name), *op)),
        })
    }
}

/// A predecessor-watch lock client for `params` with the given role and flaws.
pub fn sequential_with(
    params: &crate::RecipeParams,
    role: Role,
    flaws: Flaws,
) -> super::protocol::LockClient<SequentialProtocol> {
    super::protocol::LockClient::new(
        params.root.clone(),
        super::rounds::Rounds::new(params.workload, role.shared()),
        SequentialProtocol::new(&params.root, params.client, role, flaws),
    )
}

super::lock_recipe! {
    /// `sequential`: ZooKeeper's predecessor-watch lock; see the module docs.
    SequentialLock(SequentialProtocol) =
        |params| sequential_with(params, Role::Exclusive, Flaws::default())
}

/// A polling client of the sequential lock (see [`Waiting::Poll`]).
pub fn polling_with(
    params: &crate::RecipeParams,
    defer_to_all: bool,
) -> super::protocol::LockClient<SequentialProtocol> {
    super::protocol::LockClient::new(
        params.root.clone(),
        super::rounds::Rounds::new(params.workload, false),
        SequentialProtocol::new(
            &params.root,
            params.client,
            Role::Exclusive,
            Flaws::default(),
        )
        .waiting(Waiting::Poll { defer_to_all }),
    )
}

super::lock_recipe! {
    /// `sequential-poll`: the sequential lock for code that keeps no
    /// watcher: a waiter lists the children again every [`POLL_TICKS`]
    /// ticks and takes the lock when its node is the lowest. Correct
    /// (mutual exclusion, liveness); it only costs reads. Its flawed twin
    /// is `sequential-poll-defer` ([`super::flaws::SequentialPollDefer`]).
    SequentialPollLock(SequentialProtocol) = |params| polling_with(params, false)
}
