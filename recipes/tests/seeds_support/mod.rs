//! Hand-feeding a single recipe client: the tests play the ensemble.

use zkrecipes::{AnyRecipe, AppEvent, RecipeParams, Workload};
use zksim::{
    Client, Cx, CxOutput, EventType, Op, OpId, Reply, Response, SessionEvent, SessionId,
    SessionRequest, Stat, Tick, TimerRequest, WatchedEvent,
};

/// One client and the bits of world a handler call needs.
pub struct Drive {
    pub client: AnyRecipe,
    pub now: Tick,
    pub session: SessionId,
    next_op: OpId,
    pub timer: Option<Tick>,
    pub closed: bool,
    pub reopened: bool,
    /// Every event emitted so far.
    pub history: Vec<AppEvent>,
}

pub fn params(client: usize, clients: usize, root: &str, rounds: u32) -> RecipeParams {
    RecipeParams {
        group: 0,
        role: String::new(),
        session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
        client,
        clients,
        root: root.to_string(),
        workload: Workload {
            rounds,
            hold_ticks: 2,
            think_ticks: 1,
        },
    }
}

pub fn build(name: &str, p: &RecipeParams, session: SessionId) -> Drive {
    let info = zkrecipes::registry::find(name).unwrap_or_else(|| panic!("{name} not registered"));
    Drive {
        client: (info.build)(p),
        now: 0,
        session,
        next_op: 0,
        timer: None,
        closed: false,
        reopened: false,
        history: Vec::new(),
    }
}

impl Drive {
    fn run(&mut self, f: impl FnOnce(&mut AnyRecipe, &mut Cx<AppEvent>)) -> CxOutput<AppEvent> {
        let mut cx = Cx::new(self.now, self.session, self.next_op);
        f(&mut self.client, &mut cx);
        let out = cx.into_parts();
        self.next_op = out.next_op;
        match out.timer {
            TimerRequest::Keep => {}
            TimerRequest::Cancel => self.timer = None,
            TimerRequest::At(t) => self.timer = Some(t),
        }
        if out.session_request == Some(SessionRequest::Close) {
            self.closed = true;
        }
        if out.session_request == Some(SessionRequest::Reopen) {
            self.reopened = true;
        }
        self.history.extend(out.events.iter().cloned());
        out
    }
    pub fn start(&mut self) -> CxOutput<AppEvent> {
        self.run(|c, cx| c.start(cx))
    }
    pub fn reply(&mut self, op: OpId, reply: Reply) -> CxOutput<AppEvent> {
        self.run(|c, cx| c.on_reply(op, reply, cx))
    }
    pub fn watch(&mut self, kind: EventType, path: &str) -> CxOutput<AppEvent> {
        let ev = WatchedEvent {
            kind,
            path: path.to_string(),
        };
        self.run(|c, cx| c.on_watch(ev, cx))
    }
    pub fn session_event(&mut self, ev: SessionEvent) -> CxOutput<AppEvent> {
        self.run(|c, cx| c.on_session(ev, cx))
    }
    /// Advance time to the armed timer and fire it.
    pub fn fire_timer(&mut self) -> CxOutput<AppEvent> {
        let at = self.timer.expect("no timer armed");
        self.now = self.now.max(at);
        self.timer = None;
        self.run(|c, cx| c.on_timer(cx))
    }
    pub fn is_done(&self) -> bool {
        self.client.is_done()
    }
}

/// The only op sent, with its id.
pub fn only(out: &CxOutput<AppEvent>) -> (OpId, Op) {
    assert_eq!(
        out.sent.len(),
        1,
        "expected exactly one op, got {:?}",
        out.sent
    );
    out.sent[0].clone()
}

pub fn stat(czxid: i64) -> Stat {
    Stat {
        czxid,
        mzxid: czxid,
        ..Stat::default()
    }
}

pub fn created(path: &str, czxid: i64) -> Reply {
    Ok(Response::Created {
        path: path.to_string(),
        stat: stat(czxid),
    })
}

pub fn children(names: &[&str]) -> Reply {
    Ok(Response::Children {
        names: names.iter().map(|s| s.to_string()).collect(),
        stat: Stat::default(),
    })
}

pub fn exists(czxid: Option<i64>) -> Reply {
    Ok(Response::Exists(czxid.map(stat)))
}

pub fn data(bytes: &[u8], czxid: i64) -> Reply {
    Ok(Response::Data {
        data: bytes.to_vec(),
        stat: stat(czxid),
    })
}

pub fn acquired(fence: i64) -> AppEvent {
    AppEvent::Acquired {
        fence,
        shared: false,
    }
}
