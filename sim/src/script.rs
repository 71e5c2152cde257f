//! A scripted test client: it runs a fixed list of steps and records
//! everything it observes, so tests can assert what a client saw.
//!
//! ```
//! use zksim::script::{Scripted, Step};
//! use zksim::{CreateMode, Op};
//! let client = Scripted::new(vec![
//!     Step::Send(Op::Create { path: "/a".into(), data: vec![], mode: CreateMode::Persistent }),
//!     Step::Send(Op::GetData { path: "/a".into(), watch: true }),
//!     Step::WaitWatch,
//! ]);
//! # let _ = client;
//! ```

use crate::client::{Client, Cx, OpId};
use crate::proto::{Op, Reply, SessionEvent, Tick, WatchedEvent};

/// One step of a script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Send the op and wait for its reply (or its failure) before going on.
    Send(Op),
    /// Send the op and go on at once (pipelining: several ops in flight).
    SendNoWait(Op),
    /// Wait until a watch event arrives.
    WaitWatch,
    /// Wait until this session event arrives.
    WaitSession(SessionEvent),
    /// Arm the timer and wait for it.
    Sleep(Tick),
    /// `close()` the session and go on.
    Close,
    /// Open a fresh session in place of the current handle and go on.
    Reopen,
}

/// What the client observed, in the order it observed it. This is also the
/// client's application event, so the history shows it as `App`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Observed {
    Reply { op: OpId, reply: Reply },
    Watch(WatchedEvent),
    Session(SessionEvent),
    Timer,
}

/// What the script is waiting for before its next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Wait {
    Nothing,
    Reply(OpId),
    Watch,
    Session(SessionEvent),
    Timer,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scripted {
    steps: Vec<Step>,
    next: usize,
    wait: Wait,
    /// Ids of the ops sent, in step order.
    sent: Vec<OpId>,
    seen: Vec<Observed>,
}

impl Scripted {
    pub fn new(steps: Vec<Step>) -> Self {
        Scripted { steps, next: 0, wait: Wait::Nothing, sent: Vec::new(), seen: Vec::new() }
    }
    /// Send `ops` one after another, each once the previous one is answered.
    pub fn sequential(ops: impl IntoIterator<Item = Op>) -> Self {
        Self::new(ops.into_iter().map(Step::Send).collect())
    }
    /// Send all `ops` at start, without waiting.
    pub fn pipelined(ops: impl IntoIterator<Item = Op>) -> Self {
        Self::new(ops.into_iter().map(Step::SendNoWait).collect())
    }
    /// Everything observed so far.
    pub fn seen(&self) -> &[Observed] {
        &self.seen
    }
    /// The op ids sent so far, in order.
    pub fn sent(&self) -> &[OpId] {
        &self.sent
    }
    /// The replies observed, in order.
    pub fn replies(&self) -> impl Iterator<Item = (OpId, &Reply)> {
        self.seen.iter().filter_map(|o| match o {
            Observed::Reply { op, reply } => Some((*op, reply)),
            _ => None,
        })
    }
    /// The reply to the `n`th op sent (0-based), if it came.
    pub fn reply_to(&self, n: usize) -> Option<&Reply> {
        let op = *self.sent.get(n)?;
        self.replies().find(|&(o, _)| o == op).map(|(_, r)| r)
    }
    /// The watch events observed, in order.
    pub fn watch_events(&self) -> Vec<&WatchedEvent> {
        self.seen
            .iter()
            .filter_map(|o| match o {
                Observed::Watch(w) => Some(w),
                _ => None,
            })
            .collect()
    }
    /// The session events observed, in order.
    pub fn session_events(&self) -> Vec<SessionEvent> {
        self.seen
            .iter()
            .filter_map(|o| match o {
                Observed::Session(s) => Some(*s),
                _ => None,
            })
            .collect()
    }

    fn observe(&mut self, what: Observed, cx: &mut Cx<Observed>) {
        cx.emit(what.clone());
        self.seen.push(what);
    }

    /// Run steps until one has to wait.
    fn advance(&mut self, cx: &mut Cx<Observed>) {
        while self.wait == Wait::Nothing {
            let Some(step) = self.steps.get(self.next).cloned() else { return };
            self.next += 1;
            match step {
                Step::Send(op) => {
                    let id = cx.send(op);
                    self.sent.push(id);
                    self.wait = Wait::Reply(id);
                }
                Step::SendNoWait(op) => {
                    let id = cx.send(op);
                    self.sent.push(id);
                }
                Step::WaitWatch => self.wait = Wait::Watch,
                Step::WaitSession(event) => self.wait = Wait::Session(event),
                Step::Sleep(ticks) => {
                    cx.after(ticks);
                    self.wait = Wait::Timer;
                }
                Step::Close => cx.close_session(),
                Step::Reopen => cx.reopen_session(),
            }
        }
    }
}

impl Client for Scripted {
    type Event = Observed;

    fn start(&mut self, cx: &mut Cx<Observed>) {
        self.advance(cx);
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<Observed>) {
        self.observe(Observed::Reply { op, reply }, cx);
        if self.wait == Wait::Reply(op) {
            self.wait = Wait::Nothing;
            self.advance(cx);
        }
    }
    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<Observed>) {
        self.observe(Observed::Watch(event), cx);
        if self.wait == Wait::Watch {
            self.wait = Wait::Nothing;
            self.advance(cx);
        }
    }
    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<Observed>) {
        self.observe(Observed::Session(event), cx);
        if self.wait == Wait::Session(event) {
            self.wait = Wait::Nothing;
            self.advance(cx);
        }
    }
    fn on_timer(&mut self, cx: &mut Cx<Observed>) {
        self.observe(Observed::Timer, cx);
        if self.wait == Wait::Timer {
            self.wait = Wait::Nothing;
            self.advance(cx);
        }
    }
    fn is_done(&self) -> bool {
        self.wait == Wait::Nothing && self.next >= self.steps.len()
    }
}
