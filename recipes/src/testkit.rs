//! Hand-feeding a sans-IO client, for unit tests of recipes: no ensemble,
//! no network — the test plays the server, feeds replies, watch events,
//! session events and timers, and looks at what the client sent and emitted.
//!
//! ```
//! use zkrecipes::testkit::{children, Harness};
//! use zkrecipes::{lock::SequentialLock, Recipe, RecipeParams, Workload};
//!
//! let params = RecipeParams::new(0, 1, "/lock", Workload::default(), "sequential");
//! let mut h = Harness::new(SequentialLock::new(&params), 0x10);
//! let out = h.start();
//! assert_eq!(out.sent.len(), 1); // create /lock (persistent)
//! ```

use zksim::{
    Client, Cx, CxOutput, EventType, OpId, Reply, Response, SessionEvent, SessionId, Stat, Tick,
    TimerRequest, WatchedEvent,
};

/// One client, fed by hand. Keeps the client's op counter, the clock and
/// the timer between calls, as the world would.
#[derive(Clone, Debug)]
pub struct Harness<C: Client> {
    pub client: C,
    now: Tick,
    session: SessionId,
    next_op: OpId,
    timer: Option<Tick>,
}

impl<C: Client> Harness<C> {
    /// A harness whose client's session is `session`, at time 0.
    pub fn new(client: C, session: SessionId) -> Self {
        Harness {
            client,
            now: 0,
            session,
            next_op: 0,
            timer: None,
        }
    }

    pub fn now(&self) -> Tick {
        self.now
    }
    /// When the client's timer will fire, if armed.
    pub fn timer(&self) -> Option<Tick> {
        self.timer
    }
    /// Let time pass (timers do not fire by themselves; see [`Harness::fire_timer`]).
    pub fn advance(&mut self, ticks: Tick) {
        self.now += ticks;
    }
    /// The session the client sees from now on (after it asked to reopen one).
    pub fn set_session(&mut self, session: SessionId) {
        self.session = session;
    }

    pub fn start(&mut self) -> CxOutput<C::Event> {
        self.run(|c, cx| c.start(cx))
    }
    pub fn reply(&mut self, op: OpId, reply: Reply) -> CxOutput<C::Event> {
        self.run(|c, cx| c.on_reply(op, reply, cx))
    }
    pub fn watch(&mut self, kind: EventType, path: &str) -> CxOutput<C::Event> {
        let event = WatchedEvent {
            kind,
            path: path.to_string(),
        };
        self.run(|c, cx| c.on_watch(event, cx))
    }
    pub fn session(&mut self, event: SessionEvent) -> CxOutput<C::Event> {
        self.run(|c, cx| c.on_session(event, cx))
    }
    /// Move the clock to the armed timer and fire it; `None` if none is armed.
    pub fn fire_timer(&mut self) -> Option<CxOutput<C::Event>> {
        let due = self.timer.take()?;
        self.now = self.now.max(due);
        Some(self.run(|c, cx| c.on_timer(cx)))
    }

    fn run(&mut self, f: impl FnOnce(&mut C, &mut Cx<C::Event>)) -> CxOutput<C::Event> {
        let mut cx = Cx::new(self.now, self.session, self.next_op);
        f(&mut self.client, &mut cx);
        let out = cx.into_parts();
        self.next_op = out.next_op;
        match out.timer {
            TimerRequest::Keep => {}
            TimerRequest::Cancel => self.timer = None,
            TimerRequest::At(t) => self.timer = Some(t),
        }
        out
    }
}

/// A `Stat` with the fields recipes look at.
pub fn stat(czxid: i64, ephemeral_owner: SessionId) -> Stat {
    Stat {
        czxid,
        mzxid: czxid,
        pzxid: czxid,
        ephemeral_owner,
        ..Stat::default()
    }
}

/// A successful create of `path` at `czxid` by `owner`.
pub fn created(path: &str, czxid: i64, owner: SessionId) -> Reply {
    Ok(Response::Created {
        path: path.to_string(),
        stat: stat(czxid, owner),
    })
}

/// A `getChildren` answer.
pub fn children(names: &[&str]) -> Reply {
    Ok(Response::Children {
        names: names.iter().map(|n| n.to_string()).collect(),
        stat: Stat::default(),
    })
}

/// An `exists` answer: `Some((czxid, owner))` or `None`.
pub fn exists(node: Option<(i64, SessionId)>) -> Reply {
    Ok(Response::Exists(
        node.map(|(czxid, owner)| stat(czxid, owner)),
    ))
}
