//! The naive lock: whoever creates the one ephemeral `<root>/lock` node holds
//! the lock; everybody else watches that node with `exists` and, when it is
//! deleted, tries to create it again — every waiter at once (the herd, W6).
//!
//! It is correct (mutual exclusion, liveness) but not fair and not quiet:
//! each release wakes every waiter and all but one go back to sleep.
//!
//! Ops, per attempt: `create(<root>/lock, ephemeral)`; on `NodeExists`,
//! `exists(<root>/lock, watch)`; node there → wait for its watch, gone →
//! create again. `Enqueued { seq: None }` and `Acquired { fence: czxid }`
//! come together when the create succeeds. After `ConnectionLoss` on the
//! create the node may be ours: `exists` tells by its `ephemeralOwner`.
//!
//! After an interruption the node this client may still own (a hold it
//! lost, a create or release delete whose reply was lost) is deleted only
//! once `sync` + `exists` show it is still its own: the name is shared, so
//! a blind or stale-read delete could remove the next holder's node.

use zksim::{CreateMode, Cx, EventType, Op, OpId, Reply, Response, WatchedEvent, ZkError};

use super::names::child_path;
use super::protocol::{Attempt, LockClient, Protocol};
use super::rounds::Rounds;
use crate::{AppEvent, RecipeParams};

/// Deliberate mistakes the naive lock can make, for the checker to catch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NaiveFlaws {
    /// W2: when `exists` says the node is already gone, wait for a watch
    /// anyway instead of creating it at once. The watch `exists` left only
    /// fires when someone *creates* the node, so the last waiter waits forever.
    pub no_recheck_when_gone: bool,
}

/// What the client knows of its own `<root>/lock` node in this session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mine {
    /// It has none (or the session that had one is gone).
    None,
    /// It may have one: a create (or delete) whose reply was lost.
    Maybe,
    /// It has one.
    Yes,
}

/// Where the current attempt stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    Idle,
    /// `create` sent.
    Creating {
        op: OpId,
    },
    /// `exists(watch)` sent after `NodeExists`.
    Checking {
        op: OpId,
    },
    /// The watch is set on an existing node (or, flawed, on a missing one).
    Watching,
    Holding,
}

/// The naive lock's [`Protocol`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NaiveProtocol {
    path: String,
    flaws: NaiveFlaws,
    mine: Mine,
    stage: Stage,
    /// Bookkeeping that outlives an attempt: the release `delete`, or the
    /// `exists` that looks at the node after an interruption.
    cleanup: Option<OpId>,
}

impl NaiveProtocol {
    pub fn new(root: &str, flaws: NaiveFlaws) -> Self {
        NaiveProtocol {
            path: child_path(root, "lock"),
            flaws,
            mine: Mine::None,
            stage: Stage::Idle,
            cleanup: None,
        }
    }

    fn create(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        let op = cx.send(Op::Create {
            path: self.path.clone(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        });
        self.mine = Mine::Maybe;
        self.stage = Stage::Creating { op };
        Attempt::Wait
    }

    fn check(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        let op = cx.send(Op::Exists {
            path: self.path.clone(),
            watch: true,
        });
        self.stage = Stage::Checking { op };
        Attempt::Wait
    }

    /// The reply to the release `delete` or to the post-interruption `exists`.
    fn cleaned(&mut self, reply: Reply, cx: &mut Cx<AppEvent>) {
        match reply {
            Ok(Response::Exists(Some(stat))) if stat.ephemeral_owner == cx.session_id() => {
                // Ours, left by the abandoned attempt. Nobody else deletes
                // our ephemeral, so deleting by path is safe.
                let op = cx.send(Op::Delete {
                    path: self.path.clone(),
                    version: -1,
                });
                self.cleanup = Some(op);
            }
            Ok(Response::Exists(_)) | Ok(Response::Deleted) | Err(ZkError::NoNode) => {
                self.mine = Mine::None;
            }
            // Lost with the connection: look again once resumed.
            _ => {}
        }
    }

    fn hold(&mut self, czxid: i64, cx: &mut Cx<AppEvent>) -> Attempt {
        self.mine = Mine::Yes;
        self.stage = Stage::Holding;
        cx.emit(AppEvent::Enqueued { seq: None });
        Attempt::Acquired { fence: czxid }
    }
}

impl Protocol for NaiveProtocol {
    /// A waiter only watches the one lock node: it is `Enqueued` in the
    /// step its create wins, which is also the step it acquires.
    const WAITS_IN_LINE: bool = false;
    fn attempt(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        self.create(cx)
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) -> Attempt {
        match self.stage {
            Stage::Creating { op: want } if want == op => match reply {
                Ok(Response::Created { stat, .. }) => self.hold(stat.czxid, cx),
                // Someone holds it, or (after a lost reply) we do: `exists` tells.
                Err(ZkError::NodeExists) | Err(ZkError::ConnectionLoss) => self.check(cx),
                _ => {
                    self.stage = Stage::Idle;
                    Attempt::Wait
                }
            },
            Stage::Checking { op: want } if want == op => match reply {
                Ok(Response::Exists(Some(stat))) if stat.ephemeral_owner == cx.session_id() => {
                    self.hold(stat.czxid, cx)
                }
                // Not ours: whatever create we sent made nothing.
                Ok(Response::Exists(Some(_))) => {
                    self.mine = Mine::None;
                    self.stage = Stage::Watching;
                    Attempt::Wait
                }
                Ok(Response::Exists(None)) if self.flaws.no_recheck_when_gone => {
                    self.mine = Mine::None;
                    self.stage = Stage::Watching;
                    Attempt::Wait
                }
                Ok(Response::Exists(None)) => self.create(cx),
                _ => {
                    self.stage = Stage::Idle;
                    Attempt::Wait
                }
            },
            _ if self.cleanup == Some(op) => {
                self.cleanup = None;
                self.cleaned(reply, cx);
                Attempt::Wait
            }
            _ => Attempt::Wait,
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) -> Attempt {
        if self.stage != Stage::Watching || event.path != self.path {
            return Attempt::Wait;
        }
        match event.kind {
            EventType::NodeDeleted => self.create(cx),
            _ => self.check(cx),
        }
    }

    fn release(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Delete {
            path: self.path.clone(),
            version: -1,
        });
        self.mine = Mine::Maybe;
        self.stage = Stage::Idle;
        self.cleanup = Some(op);
    }

    fn interrupted(&mut self, expired: bool) {
        self.stage = Stage::Idle;
        self.cleanup = None;
        if expired {
            self.mine = Mine::None;
        }
    }

    fn resumed(&mut self, cx: &mut Cx<AppEvent>) {
        if self.mine != Mine::None {
            // Another client may own `<root>/lock` by now (our delete may
            // have gone through): look at its owner before deleting. The
            // new server may lag behind the write whose reply we lost (it
            // only has to have seen what we saw, S26), so `sync` first
            // (S29): a stale "still ours" would make us delete the next
            // holder's node.
            cx.send(Op::Sync {
                path: self.path.clone(),
            });
            let op = cx.send(Op::Exists {
                path: self.path.clone(),
                watch: false,
            });
            self.cleanup = Some(op);
        }
    }

    /// Symmetric: one fixed node name for everyone; a client is known to
    /// the world only by its session.
    fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        Some(NaiveProtocol {
            path: r.text(&self.path),
            ..self.clone()
        })
    }
}

super::lock_recipe! {
    /// `naive`: see the module docs.
    NaiveLock(NaiveProtocol) = |params| naive_with(params, NaiveFlaws::default())
}

/// A naive lock client with the given flaws.
pub fn naive_with(params: &RecipeParams, flaws: NaiveFlaws) -> LockClient<NaiveProtocol> {
    LockClient::new(
        params.root.clone(),
        Rounds::new(params.workload, false),
        NaiveProtocol::new(&params.root, flaws),
    )
}
