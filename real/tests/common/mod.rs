//! Test helpers shared by the real-server tests: a sans-IO client that
//! follows fixed cues, and readers for a [`RealRun`]'s log.

#![allow(dead_code)] // each test binary uses its own subset

use std::time::Duration;

use zkreal::{DriveConfig, RealRun, TestServer};
use zksim::{
    Client, CreateMode, Cx, Delivery, Happening, Op, OpId, Reply, Response, SessionEvent,
    WatchedEvent,
};

/// What a [`CuedClient`] does next: the real-driver twin of
/// `zksim::script::Step`, with the waits that real timing needs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cue {
    /// Send the op and wait for its reply.
    Do(Op),
    /// Wait until this many watch events have arrived in total.
    AwaitWatches(usize),
    /// If the last reply was `Exists(None)`, wait for one more watch event
    /// (the `NodeCreated` its watch will bring).
    AwaitCreationIfAbsent,
    /// Wait for one watch event more than have arrived so far.
    AwaitOneMoreWatch,
    /// Arm the timer and wait for it.
    Sleep(u64),
    /// Wait until this session event arrives (counting from this step on).
    AwaitSession(SessionEvent),
    /// Ask for a new session (after `Expired`).
    Reopen,
    Close,
}

/// A sans-IO client that follows a fixed list of [`Cue`]s and remembers
/// what it got.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CuedClient {
    pub cues: Vec<Cue>,
    next: usize,
    waiting_reply: Option<OpId>,
    watches_needed: usize,
    watches_seen: usize,
    sleeping: bool,
    last_reply: Option<Reply>,
    /// Session events seen, and the one awaited with where to look for it from.
    pub sessions_seen: Vec<SessionEvent>,
    awaiting_session: Option<(SessionEvent, usize)>,
    /// Every `now()` seen by `on_timer`.
    pub timer_ticks: Vec<u64>,
    done: bool,
}

impl CuedClient {
    pub fn new(cues: Vec<Cue>) -> Self {
        CuedClient {
            cues,
            next: 0,
            waiting_reply: None,
            watches_needed: 0,
            watches_seen: 0,
            sleeping: false,
            last_reply: None,
            sessions_seen: Vec::new(),
            awaiting_session: None,
            timer_ticks: Vec::new(),
            done: false,
        }
    }

    fn blocked(&self) -> bool {
        self.waiting_reply.is_some()
            || self.sleeping
            || self.watches_seen < self.watches_needed
            || self
                .awaiting_session
                .is_some_and(|(event, from)| !self.sessions_seen[from..].contains(&event))
    }

    fn advance(&mut self, cx: &mut Cx<()>) {
        while !self.blocked() && !self.done {
            let Some(cue) = self.cues.get(self.next).cloned() else {
                self.done = true;
                return;
            };
            self.next += 1;
            match cue {
                Cue::Do(op) => self.waiting_reply = Some(cx.send(op)),
                Cue::AwaitWatches(n) => self.watches_needed = n,
                Cue::AwaitCreationIfAbsent => {
                    if self.last_reply == Some(Ok(Response::Exists(None))) {
                        self.watches_needed = self.watches_seen + 1;
                    }
                }
                Cue::AwaitOneMoreWatch => self.watches_needed = self.watches_seen + 1,
                Cue::Sleep(ticks) => {
                    self.sleeping = true;
                    cx.after(ticks);
                }
                Cue::AwaitSession(event) => {
                    self.awaiting_session = Some((event, self.sessions_seen.len()));
                }
                Cue::Reopen => cx.reopen_session(),
                Cue::Close => {
                    cx.close_session();
                    self.done = true;
                }
            }
        }
    }
}

impl Client for CuedClient {
    type Event = ();
    fn start(&mut self, cx: &mut Cx<()>) {
        self.advance(cx);
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<()>) {
        assert_eq!(
            self.waiting_reply,
            Some(op),
            "a reply for an op we did not wait for"
        );
        self.waiting_reply = None;
        self.last_reply = Some(reply);
        self.advance(cx);
    }
    fn on_watch(&mut self, _: WatchedEvent, cx: &mut Cx<()>) {
        self.watches_seen += 1;
        self.advance(cx);
    }
    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<()>) {
        self.sessions_seen.push(event);
        self.advance(cx);
    }
    fn on_timer(&mut self, cx: &mut Cx<()>) {
        self.timer_ticks.push(cx.now());
        self.sleeping = false;
        self.advance(cx);
    }
    fn is_done(&self) -> bool {
        self.done
    }
}

pub fn config(server: &TestServer) -> DriveConfig {
    DriveConfig {
        run_timeout: Duration::from_secs(20),
        ..DriveConfig::new(server.connect_string())
    }
}

pub fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: b"x".to_vec(),
        mode,
    }
}

/// `client`'s deliveries, in order, with their positions in the whole log.
pub fn deliveries(run: &RealRun<CuedClient>, client: usize) -> Vec<(usize, Delivery)> {
    run.log
        .iter()
        .enumerate()
        .filter_map(|(i, h)| match h {
            Happening::Delivered {
                client: c,
                delivery,
            } if *c == client => Some((i, delivery.clone())),
            _ => None,
        })
        .collect()
}

/// Each op of `client` paired with its reply, in send order.
pub fn replies(run: &RealRun<CuedClient>, client: usize) -> Vec<(Op, Reply)> {
    let sent: Vec<(OpId, Op)> = run
        .log
        .iter()
        .filter_map(|h| match h {
            Happening::Sent {
                client: c,
                op,
                request,
            } if *c == client => Some((*op, request.clone())),
            _ => None,
        })
        .collect();
    sent.into_iter()
        .map(|(id, op)| {
            let reply = deliveries(run, client)
                .into_iter()
                .find_map(|(_, d)| match d {
                    Delivery::Reply { op, reply } if op == id => Some(reply),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no reply to {op:?}"));
            (op, reply)
        })
        .collect()
}

pub fn position_of_reply(run: &RealRun<CuedClient>, client: usize, wanted: &Op) -> usize {
    let id = run
        .log
        .iter()
        .find_map(|h| match h {
            Happening::Sent {
                client: c,
                op,
                request,
            } if *c == client && request == wanted => Some(*op),
            _ => None,
        })
        .expect("op was sent");
    deliveries(run, client)
        .into_iter()
        .find_map(|(i, d)| matches!(d, Delivery::Reply { op, .. } if op == id).then_some(i))
        .expect("op was answered")
}
