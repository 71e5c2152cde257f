//! The sans-IO interface between the ensemble and one client's logic.
//!
//! A client never blocks and never sees the network: the world calls one of
//! its handlers with an input and the client answers through [`Cx`] with ops
//! to send, application events to record, a timer and session requests.
//! The same client runs under the simulator, the exhaustive explorer and a
//! real ZooKeeper driver.

use std::fmt::Debug;
use std::hash::Hash;

use crate::proto::{Op, Reply, SessionEvent, SessionId, Tick, WatchedEvent};

/// Identifies one request of one client; allocated by [`Cx::send`], unique
/// for the client's whole life (across sessions).
pub type OpId = u32;

/// One client's logic. A client is a value: the world clones, hashes and
/// compares it, so everything it remembers must live in `self`.
pub trait Client: Clone + Hash + Eq + Debug {
    /// What the client reports to whoever watches the run (for a lock:
    /// `Requested`, `Acquired`, …). Sim records them and never reads them.
    type Event: Clone + Hash + Eq + Debug;

    /// The client library runs outside the world (a real ZooKeeper client
    /// on a socket, `zkserve`): the world then does none of the library's
    /// own work for it — no watch memory and no `SetWatches` derived on
    /// reconnect (the real client sends `SetWatches` itself, applied with
    /// [`crate::World::set_watches`]), and no ping at every tick (the
    /// session lives on the traffic its driver reports,
    /// [`crate::World::heard_from`]). Its ops come from
    /// [`crate::World::submit`]; what it receives is in the history.
    const DRIVEN_FROM_OUTSIDE: bool = false;

    /// Called once, when the client's first session is connected.
    fn start(&mut self, cx: &mut Cx<Self::Event>);
    /// The reply to op `op` (or `ConnectionLoss`/`SessionExpired` for it).
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<Self::Event>);
    /// A node watch fired.
    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<Self::Event>);
    /// The connection state changed.
    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<Self::Event>);
    /// The timer set with [`Cx::after`] is due.
    fn on_timer(&mut self, cx: &mut Cx<Self::Event>);
    /// The client has finished its work: it will send nothing more by itself.
    fn is_done(&self) -> bool;
    /// This client as it would be under the renaming `r` (see
    /// [`crate::rename`]): its own index, session ids and every guid it
    /// remembers rewritten. `None` (the default) when the client's
    /// behaviour may depend on names beyond what renaming preserves (it
    /// sorts names as strings, takes the first of several matches in
    /// listing order, ...): a checker must then not treat clients as
    /// interchangeable.
    fn renamed(&self, r: &crate::rename::Renaming) -> Option<Self> {
        let _ = r;
        None
    }
    /// This client with every op id it remembers made relative to `base`
    /// (`op.wrapping_sub(base)`): a checker keys states that differ only
    /// in how many requests were sent before ([`crate::World::time_shift_fingerprint`]).
    /// Op ids must only be compared for equality (matching replies to
    /// requests), never ordered or counted. `None` (the default) when the
    /// client cannot say: its ops then stay absolute, which is sound and
    /// only keeps a loop of its requests from being seen to repeat.
    fn ops_shifted(&self, base: OpId) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = base;
        None
    }
}

/// What a client asks of the world while handling one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cx<E> {
    now: Tick,
    /// Whether the handler asked for [`Cx::now`]: the world remembers it,
    /// because a client that knows the absolute time may act on it, and a
    /// checker may then not treat states that differ only by a shift of
    /// the clock as equal ([`crate::World::time_shift_fingerprint`]).
    read_clock: std::cell::Cell<bool>,
    session: SessionId,
    next_op: OpId,
    pub(crate) sent: Vec<(OpId, Op)>,
    pub(crate) events: Vec<E>,
    pub(crate) timer: TimerRequest,
    pub(crate) session_request: Option<SessionRequest>,
}

/// What a handler did to the client's single timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerRequest {
    Keep,
    Cancel,
    /// Fire at this absolute tick.
    At(Tick),
}

/// Session-level requests a client can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionRequest {
    /// `ZooKeeper.close()`: a `closeSession` transaction; ephemerals go at once.
    Close,
    /// Open a fresh session (after `Expired`, like Curator's client does).
    /// The old handle is dead; the new session gets `start`-less
    /// `SyncConnected` through [`Client::on_session`].
    Reopen,
}

impl<E> Cx<E> {
    /// A context for one handler call. `next_op` is the client's op counter.
    pub fn new(now: Tick, session: SessionId, next_op: OpId) -> Self {
        Self::with_sent_buffer(now, session, next_op, Vec::new())
    }
    /// [`Cx::new`] collecting sent ops into `sent` (emptied first), a
    /// buffer the driver reuses from call to call.
    pub(crate) fn with_sent_buffer(
        now: Tick,
        session: SessionId,
        next_op: OpId,
        mut sent: Vec<(OpId, Op)>,
    ) -> Self {
        sent.clear();
        Cx {
            now,
            read_clock: std::cell::Cell::new(false),
            session,
            next_op,
            sent,
            events: Vec::new(),
            timer: TimerRequest::Keep,
            session_request: None,
        }
    }
    /// Current simulated time. Reading it is recorded (see `read_clock`):
    /// a recipe that only arms relative timers ([`Cx::after`]) keeps its
    /// states comparable up to a shift of the clock.
    pub fn now(&self) -> Tick {
        self.read_clock.set(true);
        self.now
    }
    /// The id of the client's current session (for GUID-tagged names).
    pub fn session_id(&self) -> SessionId {
        self.session
    }
    /// Queue `op` on the connection; its reply will come to `on_reply` with the returned id.
    pub fn send(&mut self, op: Op) -> OpId {
        let id = self.next_op;
        self.next_op += 1;
        self.sent.push((id, op));
        id
    }
    /// Record an application event.
    pub fn emit(&mut self, event: E) {
        self.events.push(event);
    }
    /// (Re)arm the client's single timer to fire `ticks` from now.
    pub fn after(&mut self, ticks: Tick) {
        // Not a read of the clock: the world stores the deadline, and the
        // client learns nothing of the absolute time.
        self.timer = TimerRequest::At(self.now + ticks);
    }
    /// Disarm the timer.
    pub fn cancel_timer(&mut self) {
        self.timer = TimerRequest::Cancel;
    }
    /// Close the session (`ZooKeeper.close()`).
    pub fn close_session(&mut self) {
        self.session_request = Some(SessionRequest::Close);
    }
    /// Open a new session in place of an expired one.
    pub fn reopen_session(&mut self) {
        self.session_request = Some(SessionRequest::Reopen);
    }

    /// The op counter after this call, to store back into the client's slot.
    pub fn next_op(&self) -> OpId {
        self.next_op
    }
    /// Ops sent during this call, in order.
    pub fn sent(&self) -> &[(OpId, Op)] {
        &self.sent
    }
    /// Events emitted during this call, in order.
    pub fn events(&self) -> &[E] {
        &self.events
    }
    /// Take what a driver needs after a handler returns.
    pub fn into_parts(self) -> CxOutput<E> {
        CxOutput {
            next_op: self.next_op,
            sent: self.sent,
            events: self.events,
            timer: self.timer,
            session_request: self.session_request,
            read_clock: self.read_clock.get(),
        }
    }
}

/// Everything a handler call produced, for drivers (the world, the real-server driver, tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CxOutput<E> {
    pub next_op: OpId,
    pub sent: Vec<(OpId, Op)>,
    pub events: Vec<E>,
    pub timer: TimerRequest,
    pub session_request: Option<SessionRequest>,
    /// The handler read the absolute time ([`Cx::now`]).
    pub read_clock: bool,
}
