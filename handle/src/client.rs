//! [`HandleClient`]: a registered lock recipe, steered by callers instead
//! of by its workload — the glue between the [`Handoff`] and a driver.
//!
//! A registered lock recipe runs a round loop by itself: `Requested` →
//! `Acquired` → hold `hold_ticks` → `Released` → think `think_ticks` → next
//! round, the hold and the think being its timer (`zkrecipes::lock::rounds`,
//! `zkrecipes::seeds::app`). The handle builds it with an endless workload
//! whose hold and think last [`GATE`] ticks — "until told" — and runs it
//! on a clock of its own: a timer that far away is a gate the wrapper keeps
//! closed; a caller's [`Command::Release`] (end of hold) or
//! [`Command::Acquire`] (end of think, or the very first `start`) opens it
//! by moving the recipe's clock forward to the gate and firing its timer.
//! Every shorter timer (a seed port's retry sleep) passes through to the
//! driver unchanged. Nothing here knows which recipe it runs: it reads only
//! the [`AppEvent`]s every lock recipe reports (`Acquired`, `LostLock`,
//! `GaveUp`) and hands them to the handoff.
//!
//! The wrapper looks at the handoff's commands whenever the driver calls it,
//! and at least every [`POLL_TICKS`] tick (the real driver offers no other
//! way to be woken from outside a run; see the README's "In-process checks").

use std::hash::{Hash, Hasher};

use zkrecipes::{AnyRecipe, AppEvent};
use zksim::{Client, Cx, OpId, Reply, SessionEvent, SessionRequest, Tick, TimerRequest};

use crate::handoff::{Command, Handoff};
use crate::sync::Arc;

/// A timer at least this far away is one of the recipe's "until told"
/// gates (hold or think), never a real deadline (2^32 ticks ≈ 13 years).
pub const GATE: Tick = 1 << 32;

/// How often (in ticks of [`zksim::TICK_MS`] ms) the wrapper looks for
/// commands when nothing else calls it.
pub const POLL_TICKS: Tick = 1;

/// See the module doc.
#[derive(Clone, Debug)]
pub struct HandleClient {
    recipe: AnyRecipe,
    handoff: Arc<Handoff<i64>>,
    /// The recipe's clock minus the driver's (grows at every gate opened).
    offset: Tick,
    /// The recipe's closed gate (its time), if it has one.
    gate: Option<Tick>,
    /// The recipe's ordinary timer (its time), passed through.
    timer: Option<Tick>,
    started: bool,
    connected: bool,
    /// Between the recipe's `Acquired` and its `Released`/`LostLock`.
    holding: bool,
    /// An `Acquire` came before the recipe armed its think gate (a seed
    /// port arms it only once its `release()` has returned): open the gate
    /// as soon as it appears. Cleared when a round starts (`Requested`).
    wanted: bool,
    /// The handoff is closed and the session close was asked.
    closing: bool,
}

impl PartialEq for HandleClient {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.handoff, &other.handoff)
            && self.recipe == other.recipe
            && self.offset == other.offset
            && self.gate == other.gate
            && self.timer == other.timer
            && self.started == other.started
            && self.connected == other.connected
            && self.holding == other.holding
            && self.wanted == other.wanted
            && self.closing == other.closing
    }
}
impl Eq for HandleClient {}
impl Hash for HandleClient {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.recipe.hash(state);
        (self.offset, self.gate, self.timer).hash(state);
        (
            self.started,
            self.connected,
            self.holding,
            self.wanted,
            self.closing,
        )
            .hash(state);
    }
}

impl HandleClient {
    pub fn new(recipe: AnyRecipe, handoff: Arc<Handoff<i64>>) -> Self {
        HandleClient {
            recipe,
            handoff,
            offset: 0,
            gate: None,
            timer: None,
            started: false,
            connected: false,
            holding: false,
            wanted: false,
            closing: false,
        }
    }

    /// Call one of the recipe's handlers on its own clock, pass its output
    /// on, and tell the handoff what it reported.
    fn run(
        &mut self,
        cx: &mut Cx<AppEvent>,
        handler: impl FnOnce(&mut AnyRecipe, &mut Cx<AppEvent>),
    ) {
        let now = cx.now() + self.offset;
        let mut inner = Cx::new(now, cx.session_id(), cx.next_op());
        handler(&mut self.recipe, &mut inner);
        let out = inner.into_parts();
        for (_, op) in out.sent {
            cx.send(op); // same counter, so the same ids
        }
        for event in out.events {
            match event {
                AppEvent::Acquired { fence, .. } => {
                    self.holding = true;
                    self.handoff.granted(fence);
                }
                AppEvent::Released => self.holding = false,
                AppEvent::Requested { .. } => self.wanted = false,
                AppEvent::LostLock => {
                    self.holding = false;
                    self.handoff.lost();
                }
                AppEvent::GaveUp => self.handoff.gave_up(),
                _ => {}
            }
            cx.emit(event);
        }
        match out.timer {
            TimerRequest::Keep => {}
            TimerRequest::Cancel => (self.gate, self.timer) = (None, None),
            TimerRequest::At(at) if at >= now + GATE => (self.gate, self.timer) = (Some(at), None),
            TimerRequest::At(at) => (self.gate, self.timer) = (None, Some(at)),
        }
        match out.session_request {
            Some(SessionRequest::Close) => cx.close_session(),
            Some(SessionRequest::Reopen) => cx.reopen_session(),
            None => {}
        }
    }

    /// Open the recipe's gate: move its clock to the gate and fire its timer.
    fn open_gate(&mut self, cx: &mut Cx<AppEvent>) {
        if let Some(at) = self.gate.take() {
            let now = cx.now() + self.offset;
            self.offset += at.saturating_sub(now);
            self.run(cx, |r, cx| r.on_timer(cx));
        }
    }

    /// Carry out the handoff's commands, then arm the timer.
    fn pump(&mut self, cx: &mut Cx<AppEvent>) {
        while !self.closing {
            match self.handoff.try_command() {
                Some(Command::Acquire) if !self.started => {
                    if self.connected {
                        self.started = true;
                        self.run(cx, |r, cx| r.start(cx));
                    } else {
                        // Not yet: `start` runs once the session is usable.
                        self.handoff.requeue_front(Command::Acquire);
                        break;
                    }
                }
                // The end of a think; a no-op while an attempt runs (the
                // recipe retrying by itself after a session loss).
                Some(Command::Acquire) if !self.holding => {
                    self.wanted = true;
                    self.open_gate(cx);
                }
                // The end of a hold; a no-op when the hold was lost meanwhile.
                Some(Command::Release) if self.holding => self.open_gate(cx),
                Some(_) => {}
                None => break,
            }
        }
        if self.wanted && !self.holding && self.gate.is_some() && !self.closing {
            self.open_gate(cx);
        }
        if self.handoff.is_closed() && !self.closing {
            self.closing = true;
            cx.close_session();
        }
        if Client::is_done(&self.recipe) && !self.handoff.is_closed() {
            // The recipe gave up for good (a seed port stops after an error).
            self.handoff.close();
        }
        let now = cx.now();
        let poll = now + POLL_TICKS;
        let due = match self.timer {
            Some(at) => poll.min(at.saturating_sub(self.offset).max(now)),
            None => poll,
        };
        if self.closing {
            cx.cancel_timer();
        } else {
            cx.after(due - now);
        }
    }
}

impl Client for HandleClient {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.connected = true;
        self.pump(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        if self.started {
            self.run(cx, |r, cx| r.on_reply(op, reply, cx));
        }
        self.pump(cx);
    }

    fn on_watch(&mut self, event: zksim::WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.started {
            self.run(cx, |r, cx| r.on_watch(event, cx));
        }
        self.pump(cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        self.connected = event == SessionEvent::SyncConnected;
        if self.started {
            self.run(cx, |r, cx| r.on_session(event, cx));
        } else if event == SessionEvent::Expired && !self.closing {
            cx.reopen_session();
        }
        self.pump(cx);
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        let now = cx.now() + self.offset;
        if self.timer.is_some_and(|at| at <= now) {
            self.timer = None;
            self.run(cx, |r, cx| r.on_timer(cx));
        }
        self.pump(cx);
    }

    fn is_done(&self) -> bool {
        self.closing
    }
}
