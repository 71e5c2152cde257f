//! A lock recipe written outside zkcheck, as a user would: a sans-IO
//! [`zksim::Client`] plus [`zkrecipes::Recipe`], nothing else. Its tests
//! check it with `zkcheck::check::Check` from `cargo test`, both ways:
//! [`MyLock`] holds, [`BrokenLock`] is caught. [`OwnRecipes`] is the
//! crate's recipe set, and `src/bin/my-zkcheck.rs` a `zkcheck` of its own
//! over it: the tokens the tests print replay there (`--trace`, `--html`).
//! [`TimedLock`] (module `timed`) is a second lock, one that reads its
//! session timeout from [`RecipeParams`] to time its own LOST, with a flawed
//! variant and one that hard-codes the timeout.
//!
//! The recipe: whoever creates the ephemeral node `<root>/lock` holds the
//! lock; the others watch it with `exists` and try again when it goes. It
//! handles no connection trouble, so it is checked without faults.
//!
//! The round loop is [`zkrecipes::lock::rounds::Rounds`], which keeps the
//! event contract the checks read (docs/EVENTS.md): `Requested` when a
//! round starts, `Acquired { fence }` with the fence the *granting node's
//! creation zxid* (what `owner` looks the node up by), then a
//! `ResourceWrite { fence }` to the protected resource at once and again at
//! the end of the hold (what `fenced-mutex` judges), `Released`, and the
//! session closed after the last round (what `leaks` expects).
//!
//! The broken twin makes one classic mistake: it takes `NodeExists` on its
//! create to mean "my earlier create went through", reads the node and
//! adopts it, fence and all. It then believes it holds the lock while
//! another client does (`mutex`), and writes the resource under the
//! holder's own fence (`fenced-mutex`: the resource cannot tell the two
//! holders' writes apart).

mod timed;

pub use timed::{GuessedTimeoutLock, SuspendedHolderLock, Timed, TimedLock, GUESSED_TIMEOUT};

use zkrecipes::lock::rounds::{Due, Rounds};
use zkrecipes::{AppEvent, Family, Recipe, RecipeParams};
use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, WatchedEvent,
    ZkError,
};

/// The correct lock.
pub type MyLock = Lock<false>;
/// The same lock, adopting the holder's node after `NodeExists`.
pub type BrokenLock = Lock<true>;

zkrecipes::recipe_set! {
    /// Every recipe of this crate: what `my-zkcheck` checks and replays,
    /// and what a scenario with several groups (roles) mixes.
    pub enum OwnRecipes {
        Lock(MyLock),
        Broken(BrokenLock),
        Timed(TimedLock),
        SuspendedHolder(SuspendedHolderLock),
        GuessedTimeout(GuessedTimeoutLock),
    }
}

/// Where the client is in its attempt (the round itself is [`Rounds`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// Nothing in flight.
    Idle,
    /// Create of the lock node sent.
    Creating(OpId),
    /// `exists(watch)` sent after `NodeExists`.
    Checking(OpId),
    /// The broken twin: `exists` sent after `NodeExists`, to adopt the node.
    Adopting(OpId),
    /// Waiting for the holder's node to go.
    Watching,
    /// Delete of the lock node sent.
    Releasing(OpId),
}

/// One client of the lock; `ADOPT_EXISTING` is the broken twin's mistake.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lock<const ADOPT_EXISTING: bool> {
    root: String,
    /// The client's role (its `[[clients]]` group's), as the scenario gave it.
    role: String,
    rounds: Rounds,
    stage: Stage,
}

impl<const A: bool> Recipe for Lock<A> {
    const FAMILY: Family = Family::Lock;

    /// Stable names: replay tokens in tests outlive type renames.
    fn name() -> &'static str {
        if A {
            "own-broken-lock"
        } else {
            "own-lock"
        }
    }

    fn new(p: &RecipeParams) -> Self {
        Lock {
            root: p.root.clone(),
            role: p.role.clone(),
            rounds: Rounds::new(p.workload, false),
            stage: Stage::Idle,
        }
    }
}

impl<const A: bool> Lock<A> {
    /// The role this client was built in (`RecipeParams::role`).
    pub fn role(&self) -> &str {
        &self.role
    }

    fn node(&self) -> String {
        format!("{}/lock", self.root)
    }

    fn request(&mut self, cx: &mut Cx<AppEvent>) {
        self.rounds.begin(cx);
        self.try_create(cx);
    }

    fn try_create(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: self.node(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        });
        self.stage = Stage::Creating(op);
    }

    /// The lock is ours under `fence`, the creation zxid of the node that
    /// grants it: `Rounds` emits `Acquired` and the first `ResourceWrite`.
    fn acquired(&mut self, fence: i64, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Enqueued { seq: None });
        self.stage = Stage::Idle;
        self.rounds.acquired(fence, cx);
    }
}

impl<const A: bool> Client for Lock<A> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        // The root first (NodeExists is fine); the connection keeps order.
        cx.send(Op::Create {
            path: self.root.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        });
        self.rounds.on_start(cx);
        if self.rounds.should_start() {
            self.request(cx);
        }
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.stage, reply) {
            (Stage::Creating(o), Ok(Response::Created { stat, .. })) if o == op => {
                self.acquired(stat.czxid, cx)
            }
            (Stage::Creating(o), Err(ZkError::NodeExists)) if o == op => {
                // The broken twin reads the node to adopt it; the lock
                // watches it to wait for it to go.
                let op = cx.send(Op::Exists {
                    path: self.node(),
                    watch: !A,
                });
                self.stage = if A {
                    Stage::Adopting(op)
                } else {
                    Stage::Checking(op)
                };
            }
            (Stage::Adopting(o), Ok(Response::Exists(found))) if o == op => match found {
                // The mistake: "it exists, so my create must have worked".
                Some(stat) => self.acquired(stat.czxid, cx),
                None => self.try_create(cx),
            },
            (Stage::Checking(o), Ok(Response::Exists(found))) if o == op => match found {
                Some(_) => self.stage = Stage::Watching,
                None => self.try_create(cx),
            },
            (Stage::Releasing(o), _) if o == op => self.stage = Stage::Idle,
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Watching && event.kind == EventType::NodeDeleted {
            self.try_create(cx);
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        // No recovery of an attempt in flight (the example runs without
        // faults); Rounds keeps the events honest if one comes anyway.
        self.rounds.on_session(event, cx);
        if self.rounds.should_start() {
            self.request(cx);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        match self.rounds.on_timer(cx) {
            Due::Release { .. } => {
                let op = cx.send(Op::Delete {
                    path: self.node(),
                    version: -1,
                });
                self.stage = Stage::Releasing(op);
                self.rounds.released(cx);
            }
            Due::NextRound if self.rounds.should_start() => self.request(cx),
            Due::NextRound | Due::Stale => {}
        }
    }

    fn is_done(&self) -> bool {
        self.rounds.is_done()
    }

    /// The lock remembers no client names (one fixed node, op ids and
    /// zxids, which renaming keeps), so it is its own renaming: exhaustive
    /// search may treat clients of one role as interchangeable.
    fn renamed(&self, _: &zksim::rename::Renaming) -> Option<Self> {
        Some(self.clone())
    }
}
