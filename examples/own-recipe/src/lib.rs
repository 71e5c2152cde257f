//! A lock recipe written outside zkcheck, as a user would: a sans-IO
//! [`zksim::Client`] plus [`zkrecipes::Recipe`], nothing else. Its tests
//! (`tests/check.rs`) check it with `zkcheck::check::Check` from
//! `cargo test`, both ways: [`MyLock`] holds, [`BrokenLock`] is caught.
//!
//! The recipe: whoever creates the ephemeral node `<root>/lock` holds the
//! lock; the others watch it with `exists` and try again when it goes. It
//! handles no connection trouble, so it is checked without faults.
//!
//! The broken twin makes one classic mistake: it takes `NodeExists` on its
//! create to mean "my earlier create went through" and believes it holds
//! the lock, while another client does.

use zkrecipes::{AppEvent, Family, Recipe, RecipeParams};
use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, Tick, WatchedEvent,
    ZkError,
};

/// The correct lock.
pub type MyLock = Lock<false>;
/// The same lock, believing it holds after `NodeExists`.
pub type BrokenLock = Lock<true>;

/// Where the client is in its round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// Create of the lock node sent.
    Creating(OpId),
    /// `exists(watch)` sent after `NodeExists`.
    Checking(OpId),
    /// Waiting for the holder's node to go.
    Watching,
    /// Holding until the timer fires.
    Holding,
    /// Delete of the lock node sent.
    Releasing(OpId),
    /// Between rounds.
    Thinking,
    Done,
}

/// One client of the lock; `TRUST_NODE_EXISTS` is the broken twin's mistake.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lock<const TRUST_NODE_EXISTS: bool> {
    root: String,
    rounds_left: u32,
    hold: Tick,
    think: Tick,
    stage: Stage,
}

impl<const T: bool> Recipe for Lock<T> {
    const FAMILY: Family = Family::Lock;

    /// Stable names: replay tokens in tests outlive type renames.
    fn name() -> &'static str {
        if T {
            "own-broken-lock"
        } else {
            "own-lock"
        }
    }

    fn new(p: &RecipeParams) -> Self {
        Lock {
            root: p.root.clone(),
            rounds_left: p.workload.rounds,
            hold: p.workload.hold_ticks,
            think: p.workload.think_ticks,
            stage: Stage::Done,
        }
    }
}

impl<const T: bool> Lock<T> {
    fn node(&self) -> String {
        format!("{}/lock", self.root)
    }

    fn request(&mut self, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Requested { shared: false });
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

    fn acquired(&mut self, fence: i64, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Enqueued { seq: None });
        cx.emit(AppEvent::Acquired {
            fence,
            shared: false,
        });
        self.stage = Stage::Holding;
        cx.after(self.hold);
    }
}

impl<const T: bool> Client for Lock<T> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        // The root first (NodeExists is fine); the connection keeps order.
        cx.send(Op::Create {
            path: self.root.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        });
        if self.rounds_left > 0 {
            self.request(cx);
        }
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.stage, reply) {
            (Stage::Creating(o), Ok(Response::Created { stat, .. })) if o == op => {
                self.acquired(stat.czxid, cx)
            }
            (Stage::Creating(o), Err(ZkError::NodeExists)) if o == op => {
                if T {
                    // The mistake: "it exists, so my create must have worked".
                    self.acquired(0, cx);
                } else {
                    let op = cx.send(Op::Exists {
                        path: self.node(),
                        watch: true,
                    });
                    self.stage = Stage::Checking(op);
                }
            }
            (Stage::Checking(o), Ok(Response::Exists(found))) if o == op => match found {
                Some(_) => self.stage = Stage::Watching,
                None => self.try_create(cx),
            },
            (Stage::Releasing(o), _) if o == op => {
                self.rounds_left -= 1;
                if self.rounds_left == 0 {
                    self.stage = Stage::Done;
                } else {
                    self.stage = Stage::Thinking;
                    cx.after(self.think);
                }
            }
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Watching && event.kind == EventType::NodeDeleted {
            self.try_create(cx);
        }
    }

    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {}

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        match self.stage {
            Stage::Holding => {
                cx.emit(AppEvent::Released);
                let op = cx.send(Op::Delete {
                    path: self.node(),
                    version: -1,
                });
                self.stage = Stage::Releasing(op);
            }
            Stage::Thinking => self.request(cx),
            _ => {}
        }
    }

    fn is_done(&self) -> bool {
        self.stage == Stage::Done
    }
}
