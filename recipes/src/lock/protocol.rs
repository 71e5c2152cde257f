//! [`LockClient`]: one generic [`Client`] that runs any lock [`Protocol`]
//! through the round loop of [`Rounds`].
//!
//! The split keeps each lock recipe down to what is really its own — which
//! ops to send to get the lock, what a reply or a watch means, how to let go
//! and what to clean up after an interruption — while the lock root, the
//! rounds, the timer and the session events are handled once, here, the
//! same way for every recipe (see the event conventions in [`super::rounds`]).

use std::fmt::Debug;
use std::hash::Hash;

use zksim::{Client, CreateMode, Cx, Op, OpId, Reply, SessionEvent, WatchedEvent, ZkError};

use super::rounds::{Due, Rounds};
use crate::AppEvent;

/// Where an attempt at the lock stands after a [`Protocol`] call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attempt {
    /// Nothing decided yet (ops may have been sent).
    Wait,
    /// The recipe now believes it holds the lock; `fence` is the czxid of the
    /// node that grants it.
    Acquired { fence: i64 },
}

/// How a lock recipe gets and lets go of the lock. Implementations emit
/// `Enqueued` themselves; everything else is emitted by [`Rounds`].
pub trait Protocol: Clone + Hash + Eq + Debug {
    /// [`crate::Recipe::WAITS_IN_LINE`] of a lock built on this protocol.
    const WAITS_IN_LINE: bool = true;
    /// Start one attempt: the lock root exists, the session is usable and
    /// `Requested` was just emitted.
    fn attempt(&mut self, cx: &mut Cx<AppEvent>) -> Attempt;
    /// A reply arrived (it may be for an op of an abandoned attempt: check the id).
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) -> Attempt;
    /// A watch fired (it may be stale: check the path).
    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) -> Attempt;
    /// The hold is over: send what lets go of the lock.
    fn release(&mut self, cx: &mut Cx<AppEvent>);
    /// The current attempt (wait or hold) is abandoned because of
    /// `Disconnected` (`expired == false`: the session and its ephemerals may
    /// live on) or `Expired` (they are gone). Forget outstanding ops.
    fn interrupted(&mut self, expired: bool);
    /// The session is usable again after `Disconnected` (same session) or
    /// after a new one replaced an expired one. A chance to clean up what an
    /// abandoned attempt left, before the next attempt starts.
    fn resumed(&mut self, cx: &mut Cx<AppEvent>);
    /// The client's timer fired while it waits for the lock: a protocol that
    /// polls instead of watching armed it ([`Cx::after`]). The round loop
    /// uses the timer only to hold and to think, never while waiting, so
    /// the two never meet. The default ignores it.
    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) -> Attempt {
        let _ = cx;
        Attempt::Wait
    }
    /// Flaw W5: pretend session events do not happen (see [`LockClient`]).
    fn ignores_session(&self) -> bool {
        false
    }
    /// This protocol's memory with every op id it keeps made relative to
    /// `base` ([`zksim::Client::ops_shifted`]); `None` (the default) when
    /// not written.
    fn ops_shifted(&self, base: OpId) -> Option<Self> {
        let _ = base;
        None
    }
    /// This protocol's memory under a renaming of clients
    /// ([`zksim::Client::renamed`]); `None` (the default) when its
    /// behaviour may depend on names in a way renaming does not preserve.
    fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        let _ = r;
        None
    }
}

/// Whether the lock root is known to exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Root {
    /// Not yet asked for (or the ask was lost with the connection).
    Missing,
    /// Creates sent; the last one's reply says whether the root is there.
    Creating {
        last: OpId,
    },
    Ready,
}

/// A lock client: the lock root, the round loop and a [`Protocol`].
///
/// A protocol that [`Protocol::ignores_session`] gets no `interrupted` /
/// `resumed` calls and the rounds are not interrupted; after `Expired` the
/// client still opens a new session (the old handle is dead, as in the Java
/// client) but keeps believing whatever it believed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockClient<P> {
    root: String,
    root_state: Root,
    rounds: Rounds,
    protocol: P,
}

impl<P: Protocol> LockClient<P> {
    pub fn new(root: String, rounds: Rounds, protocol: P) -> Self {
        LockClient {
            root,
            root_state: Root::Missing,
            rounds,
            protocol,
        }
    }

    pub fn protocol(&self) -> &P {
        &self.protocol
    }
    pub fn rounds(&self) -> &Rounds {
        &self.rounds
    }

    /// Create the root and each missing ancestor, persistent; the requests
    /// are pipelined (a session's requests are applied in order, S27) and
    /// only the last reply matters: `NodeExists` is as good as created.
    fn ensure_root(&mut self, cx: &mut Cx<AppEvent>) {
        let mut last = None;
        let mut path = String::new();
        for part in self.root.split('/').filter(|p| !p.is_empty()) {
            path.push('/');
            path.push_str(part);
            last = Some(cx.send(Op::Create {
                path: path.clone(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
            }));
        }
        self.root_state = match last {
            Some(last) => Root::Creating { last },
            None => Root::Ready,
        };
    }

    /// Start a round (or retry one) if everything is in place.
    fn maybe_begin(&mut self, cx: &mut Cx<AppEvent>) {
        if self.root_state == Root::Ready && self.rounds.should_start() {
            self.rounds.begin(cx);
            let attempt = self.protocol.attempt(cx);
            self.apply(attempt, cx);
        }
    }

    fn apply(&mut self, attempt: Attempt, cx: &mut Cx<AppEvent>) {
        if let Attempt::Acquired { fence } = attempt {
            self.rounds.acquired(fence, cx);
        }
    }
}

impl<P: Protocol> Client for LockClient<P> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.rounds.on_start(cx);
        if !self.rounds.is_done() {
            self.ensure_root(cx);
            self.maybe_begin(cx);
        }
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        if self.root_state == (Root::Creating { last: op }) {
            self.root_state = match reply {
                Ok(_) | Err(ZkError::NodeExists) => Root::Ready,
                Err(_) => Root::Missing,
            };
            if reply == Err(ZkError::ConnectionLoss) && self.rounds.is_connected() {
                // The loss came before the `Disconnected` that goes with it
                // (the Java client's order): ask again; the request waits
                // for the new connection.
                self.ensure_root(cx);
            }
            self.maybe_begin(cx);
            return;
        }
        let attempt = self.protocol.on_reply(op, reply, cx);
        self.apply(attempt, cx);
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        let attempt = self.protocol.on_watch(event, cx);
        self.apply(attempt, cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        if self.rounds.is_done() {
            return;
        }
        if self.protocol.ignores_session() {
            match event {
                SessionEvent::SyncConnected => self.rounds.set_connected(true),
                SessionEvent::Disconnected => self.rounds.set_connected(false),
                SessionEvent::Expired => {
                    self.rounds.set_connected(false);
                    cx.reopen_session();
                }
            }
        } else {
            self.rounds.on_session(event, cx);
            match event {
                SessionEvent::SyncConnected => self.protocol.resumed(cx),
                SessionEvent::Disconnected => self.protocol.interrupted(false),
                SessionEvent::Expired => self.protocol.interrupted(true),
            }
        }
        if event == SessionEvent::SyncConnected {
            if self.root_state == Root::Missing {
                self.ensure_root(cx);
            }
            self.maybe_begin(cx);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        match self.rounds.on_timer(cx) {
            Due::Release { .. } => {
                self.protocol.release(cx);
                self.rounds.released(cx);
            }
            Due::NextRound => self.maybe_begin(cx),
            Due::Stale if self.rounds.phase() == super::rounds::Phase::Waiting => {
                let attempt = self.protocol.on_timer(cx);
                self.apply(attempt, cx);
            }
            Due::Stale => {}
        }
    }

    fn is_done(&self) -> bool {
        self.rounds.is_done()
    }

    /// The round loop holds no op ids; the root's create may.
    fn ops_shifted(&self, base: OpId) -> Option<Self> {
        let root_state = match self.root_state {
            Root::Creating { last } => Root::Creating {
                last: last.wrapping_sub(base),
            },
            other => other,
        };
        Some(LockClient {
            root: self.root.clone(),
            root_state,
            rounds: self.rounds.clone(),
            protocol: self.protocol.ops_shifted(base)?,
        })
    }

    /// The round loop holds no names; the lock root is a fixed path.
    fn renamed(&self, r: &zksim::rename::Renaming) -> Option<Self> {
        Some(LockClient {
            root: r.text(&self.root),
            root_state: self.root_state,
            rounds: self.rounds.clone(),
            protocol: self.protocol.renamed(r)?,
        })
    }
}
