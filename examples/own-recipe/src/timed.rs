//! A lock that reads its session timeout ([`RecipeParams::session_timeout`]):
//! it times its own LOST from it, as Curator and kazoo do.
//!
//! The connection as the recipe sees it follows Curator's states:
//! `Disconnected` makes it SUSPENDED; if it is not reconnected within the
//! session timeout it declares the session LOST, gives the handle up and
//! opens a new session (Curator's injected session expiration). Its node,
//! `<root>/lock`, carries the client's own name as data, and after a create
//! answered `NodeExists` the recipe reads the node and takes it as its own
//! if the name is its own: the create went through and its answer was lost
//! (the job Curator's protected mode does with a GUID in the node name).
//!
//! Two things the timeout decides, each with a bound the recipe must get
//! right way round. The leader expires a session `T + 1` ticks after the
//! tick it last heard from it (S22); the client only knows bounds on that
//! moment:
//! - **how long it may go on acting while suspended**: that needs a *lower*
//!   bound on when the leader last heard it. The moment it noticed the
//!   disconnect is not one: a silent client notices only at its read
//!   timeout, `⌈2T/3⌉` after it last heard its server (S21a), so
//!   `[SuspendedHolderLock]`, which keeps holding until `T` after the
//!   notice, holds a lock whose session the leader has already expired
//!   (Curator's timed SUSPENDED tolerance, CURATOR-460). [`TimedLock`]
//!   stops at once (SUSPENDED means "not mine any more"), as Curator's own
//!   recipes do.
//! - **when a node carrying its name can no longer be the given-up
//!   session's**: that needs an *upper* bound on when the leader last heard
//!   the old session, and the moment the recipe gave the handle up is one
//!   (a given-up handle sends nothing more). [`TimedLock`] starts over on
//!   its new session only `T + 1` ticks after it, when the old session has
//!   surely expired and its node with it; a timer that fires late only
//!   waits longer. [`GuessedTimeoutLock`], the same recipe with the timeout
//!   hard-coded to [`GUESSED_TIMEOUT`] ticks instead of read from its
//!   params, starts over too early against a longer negotiated timeout,
//!   finds its old session's node and takes it: a lock held through a node
//!   of a session that is not its own (`owner`).
//!
//! Checking the node's `ephemeral_owner` against the current session
//! would make the second wait unnecessary; the recipe recognises its node
//! by name on purpose, as protected mode does, to show where the timeout
//! matters.

use zkrecipes::lock::rounds::{Due, Phase, Rounds};
use zkrecipes::{AppEvent, Family, Recipe, RecipeParams};
use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, Tick, WatchedEvent,
    ZkError,
};

/// The correct lock: stops at the disconnect, times its LOST and its
/// restart from the negotiated session timeout.
pub type TimedLock = Timed<false, 0>;
/// The flawed lock: goes on holding while suspended, until the session
/// timeout counted from the moment it noticed the disconnect.
pub type SuspendedHolderLock = Timed<true, 0>;
/// The correct lock with the session timeout hard-coded to
/// [`GUESSED_TIMEOUT`] instead of read from [`RecipeParams::session_timeout`].
pub type GuessedTimeoutLock = Timed<false, GUESSED_TIMEOUT>;

/// The timeout [`GuessedTimeoutLock`] assumes, in ticks (8 s at 3.8's
/// default `tickTime` of 2 s): right only if the ensemble grants it.
pub const GUESSED_TIMEOUT: Tick = 4;

/// Where the client is in its attempt (the round itself is [`Rounds`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// Nothing in flight.
    Idle,
    /// Create of the lock node sent.
    Creating(OpId),
    /// `getData(watch)` sent after `NodeExists`: whose node is it?
    Reading(OpId),
    /// Waiting for another client's node to go.
    Watching,
    /// Delete of the lock node sent.
    Releasing(OpId),
}

/// The connection as the recipe sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Link {
    /// Connected, or a new session on its way.
    Up,
    /// SUSPENDED: `Disconnected` noticed; LOST at `lost_at` unless the
    /// session is reconnected first.
    Suspended { lost_at: Tick },
}

/// What the client's one timer is armed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Alarm {
    /// The round loop's hold or think timer.
    Rounds,
    /// The LOST deadline while suspended.
    Lost,
    /// The end of the wait after a LOST, before a new round may start.
    Restart,
}

/// One client of the timed lock. `HOLDS_WHILE_SUSPENDED` is the flawed
/// variant's mistake; `HARD_CODED_TIMEOUT`, when not 0, replaces the
/// negotiated session timeout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Timed<const HOLDS_WHILE_SUSPENDED: bool, const HARD_CODED_TIMEOUT: Tick> {
    root: String,
    /// The node's data: the client's name, by which it knows its own node.
    name: Vec<u8>,
    /// The session timeout this client times its LOST and restart with.
    timeout: Tick,
    /// How long a hold lasts (to resume one after a reconnect).
    hold_ticks: Tick,
    rounds: Rounds,
    stage: Stage,
    link: Link,
    /// No round starts before this tick: until then a node carrying this
    /// client's name may still belong to a session it gave up.
    not_before: Tick,
    alarm: Alarm,
}

impl<const H: bool, const T: Tick> Recipe for Timed<H, T> {
    const FAMILY: Family = Family::Lock;
    /// One node: a waiter is enqueued only in the step it is granted.
    const WAITS_IN_LINE: bool = false;

    fn name() -> &'static str {
        match (H, T) {
            (true, _) => "own-suspended-holder-lock",
            (false, 0) => "own-timed-lock",
            (false, _) => "own-guessed-timeout-lock",
        }
    }

    fn new(p: &RecipeParams) -> Self {
        Timed {
            root: p.root.clone(),
            name: format!("client-{}", p.client).into_bytes(),
            timeout: if T == 0 { p.session_timeout } else { T },
            hold_ticks: p.workload.hold_ticks,
            rounds: Rounds::new(p.workload, false),
            stage: Stage::Idle,
            link: Link::Up,
            not_before: 0,
            alarm: Alarm::Rounds,
        }
    }
}

impl<const H: bool, const T: Tick> Timed<H, T> {
    /// The session timeout this client times its LOST with, in ticks.
    pub fn timeout(&self) -> Tick {
        self.timeout
    }

    fn node(&self) -> String {
        format!("{}/lock", self.root)
    }

    fn arm(&mut self, alarm: Alarm, ticks: Tick, cx: &mut Cx<AppEvent>) {
        self.alarm = alarm;
        cx.after(ticks);
    }

    /// Start a round if one is due, the session is up, and the wait after
    /// a LOST is over (else wake up when it is).
    fn maybe_start(&mut self, cx: &mut Cx<AppEvent>) {
        if !self.rounds.should_start() || self.link != Link::Up {
            return;
        }
        let now = cx.now();
        if now < self.not_before {
            self.arm(Alarm::Restart, self.not_before - now, cx);
            return;
        }
        self.rounds.begin(cx);
        self.try_create(cx);
    }

    /// The root first (`NodeExists` is fine); the connection keeps order.
    fn create_root(&self, cx: &mut Cx<AppEvent>) {
        cx.send(Op::Create {
            path: self.root.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        });
    }

    fn try_create(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: self.node(),
            data: self.name.clone(),
            mode: CreateMode::Ephemeral,
        });
        self.stage = Stage::Creating(op);
    }

    /// The lock is ours under `fence` (the granting node's czxid): `Rounds`
    /// emits `Acquired` and the first `ResourceWrite` and arms the hold.
    fn acquired(&mut self, fence: i64, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Enqueued { seq: None });
        self.stage = Stage::Idle;
        self.alarm = Alarm::Rounds;
        self.rounds.acquired(fence, cx);
    }

    /// `Disconnected`: SUSPENDED, LOST in `timeout` ticks unless reconnected.
    fn suspend(&mut self, cx: &mut Cx<AppEvent>) {
        match self.rounds.phase() {
            Phase::Holding { fence } if H => {
                // The mistake: "my session lives for another `timeout`
                // ticks from now", so it keeps the lock and writes on.
                self.rounds.set_connected(false);
                cx.emit(AppEvent::ResourceWrite { fence });
            }
            _ => {
                self.rounds.on_session(SessionEvent::Disconnected, cx);
                self.end_thinking(cx);
                self.stage = Stage::Idle;
            }
        }
        let lost_at = cx.now() + self.timeout;
        self.link = Link::Suspended { lost_at };
        self.arm(Alarm::Lost, self.timeout, cx);
    }

    /// LOST: give the handle up (its session lives on the server until it
    /// expires) and open a new session; no round before the old session
    /// has surely expired, `timeout + 1` ticks from now.
    fn lose(&mut self, cx: &mut Cx<AppEvent>) {
        self.rounds.interrupt(cx);
        self.stage = Stage::Idle;
        self.link = Link::Up;
        self.not_before = cx.now() + self.timeout + 1;
        cx.reopen_session();
    }

    /// Thinking is cut short by session trouble: the next round starts as
    /// soon as it may (the think timer is replaced by the LOST deadline).
    fn end_thinking(&mut self, cx: &mut Cx<AppEvent>) {
        if self.rounds.phase() == Phase::Thinking {
            self.rounds.on_timer(cx);
        }
    }
}

impl<const H: bool, const T: Tick> Client for Timed<H, T> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.create_root(cx);
        self.rounds.on_start(cx);
        self.maybe_start(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.stage, reply) {
            (Stage::Creating(o), Ok(Response::Created { stat, .. })) if o == op => {
                self.acquired(stat.czxid, cx)
            }
            (Stage::Creating(o), Err(ZkError::NodeExists)) if o == op => {
                let op = cx.send(Op::GetData {
                    path: self.node(),
                    watch: true,
                });
                self.stage = Stage::Reading(op);
            }
            (Stage::Creating(o), Err(ZkError::NoNode)) if o == op => {
                // The root is not there yet: its create (sent first) was
                // lost with a dropped connection. Again, in order.
                self.create_root(cx);
                self.try_create(cx);
            }
            (Stage::Reading(o), Ok(Response::Data { data, stat })) if o == op => {
                if data == self.name {
                    // My name: my create went through, its answer was lost.
                    self.acquired(stat.czxid, cx)
                } else {
                    self.stage = Stage::Watching;
                }
            }
            (Stage::Reading(o), Err(ZkError::NoNode)) if o == op => self.try_create(cx),
            (Stage::Releasing(o), _) if o == op => self.stage = Stage::Idle,
            // Errors of a lost connection: the session event that follows
            // decides.
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Watching && event.kind == EventType::NodeDeleted {
            self.try_create(cx);
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        if self.rounds.is_done() {
            return;
        }
        match event {
            SessionEvent::Disconnected => self.suspend(cx),
            SessionEvent::SyncConnected => {
                self.rounds.on_session(SessionEvent::SyncConnected, cx);
                if let Link::Suspended { .. } = self.link {
                    // RECONNECTED, same session: the LOST deadline is off.
                    self.link = Link::Up;
                    if self.rounds.is_holding() {
                        // Only the flawed variant still holds: its hold goes on.
                        self.arm(Alarm::Rounds, self.hold_ticks, cx);
                    } else {
                        cx.cancel_timer();
                    }
                }
                self.maybe_start(cx);
            }
            SessionEvent::Expired => {
                // The server says the old session is gone, its node with
                // it: start over on the new one (Rounds opens it).
                self.rounds.on_session(SessionEvent::Expired, cx);
                self.end_thinking(cx);
                self.stage = Stage::Idle;
                self.link = Link::Up;
                cx.cancel_timer();
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        match self.alarm {
            Alarm::Lost => {
                if let Link::Suspended { lost_at } = self.link {
                    if cx.now() >= lost_at {
                        self.lose(cx);
                    }
                }
            }
            Alarm::Restart => self.maybe_start(cx),
            Alarm::Rounds => match self.rounds.on_timer(cx) {
                Due::Release { .. } => {
                    let op = cx.send(Op::Delete {
                        path: self.node(),
                        version: -1,
                    });
                    self.stage = Stage::Releasing(op);
                    self.rounds.released(cx);
                }
                Due::NextRound => self.maybe_start(cx),
                Due::Stale => {}
            },
        }
    }

    fn is_done(&self) -> bool {
        self.rounds.is_done()
    }
}
