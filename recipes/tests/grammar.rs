//! Property test: whatever a server answers and whatever happens to the
//! session, every lock recipe's history keeps the shape the checker's
//! monitors rely on (see `zkrecipes::lock` docs):
//!
//! `Requested (Enqueued)* (Acquired ResourceWrite ResourceWrite* (Released | LostLock) | GaveUp)`
//! per round, with matching fences and `shared` flags, nothing after the
//! session is closed, no belief taken while disconnected (except the
//! deliberately session-blind variant), and every fence the czxid of a node
//! the client itself created.
//!
//! The "server" here is an adversary, not a ZooKeeper: it answers each
//! request with any plausible reply (including lost ones), keeps just enough
//! of a child list to make answers self-consistent, and interleaves watch
//! events, disconnects, expiries and timers as proptest chooses.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::common::*;
use proptest::prelude::*;
use zkrecipes::registry::find;
use zkrecipes::testkit::{stat, Harness};
use zkrecipes::{AnyRecipe, AppEvent};
use zksim::{
    Client, CreateMode, CxOutput, EventType, Op, OpId, Reply, Response, SessionEvent,
    SessionRequest, Stat, ZkError,
};

const LOCKS: &[&str] = &[
    "naive",
    "sequential",
    "rwlock",
    "sequential-no-recheck",
    "sequential-ignore-session",
    "sequential-watch-lowest",
    "sequential-blind-retry",
    "sequential-string-sort",
    "naive-no-rewatch",
];

/// The history grammar, one client.
#[derive(Debug, Default)]
struct Grammar {
    asking: Option<bool>,
    holding: Option<(i64, bool)>,
    /// `Acquired` was the last event: a `ResourceWrite` must follow.
    must_write: Option<i64>,
    /// The last event was a `ResourceWrite` (a release must follow one).
    wrote: bool,
    closed: bool,
    released: u32,
}

impl Grammar {
    fn feed(&mut self, e: &AppEvent, connected: bool, session_blind: bool, fences: &BTreeSet<i64>) {
        assert!(!self.closed, "{e:?} after the session was closed");
        if let Some(f) = self.must_write.take() {
            assert_eq!(*e, AppEvent::ResourceWrite { fence: f });
        }
        let wrote = std::mem::replace(&mut self.wrote, false);
        match *e {
            AppEvent::Requested { shared } => {
                assert!(
                    self.asking.is_none() && self.holding.is_none(),
                    "{e:?} twice"
                );
                self.asking = Some(shared);
            }
            AppEvent::Enqueued { .. } => assert!(self.asking.is_some(), "{e:?} unasked"),
            AppEvent::Acquired { fence, shared } => {
                assert_eq!(self.asking.take(), Some(shared), "{e:?} unasked");
                assert!(connected || session_blind, "{e:?} while disconnected");
                assert!(
                    fences.contains(&fence),
                    "{e:?}: not a czxid of its own node"
                );
                self.holding = Some((fence, shared));
                self.must_write = Some(fence);
            }
            AppEvent::ResourceWrite { fence } => {
                assert_eq!(self.holding.map(|h| h.0), Some(fence), "{e:?}");
                self.wrote = true;
            }
            AppEvent::Released => {
                assert!(self.holding.take().is_some() && wrote, "{e:?}");
                self.released += 1;
            }
            AppEvent::LostLock => assert!(self.holding.take().is_some(), "{e:?}"),
            AppEvent::GaveUp => assert!(self.asking.take().is_some(), "{e:?}"),
            _ => panic!("not a lock event: {e:?}"),
        }
    }
}

/// The adversary and the client under test.
struct Run {
    h: Harness<AnyRecipe>,
    session_blind: bool,
    pending: VecDeque<(OpId, Op)>,
    /// Node path → (czxid, owner session).
    nodes: BTreeMap<String, (i64, i64)>,
    /// czxids of nodes this client created.
    fences: BTreeSet<i64>,
    watches: BTreeSet<String>,
    fired: VecDeque<String>,
    zxid: i64,
    seq: i64,
    session: i64,
    connected: bool,
    grammar: Grammar,
    rounds: u32,
}

impl Run {
    fn new(name: &str, client: usize, rounds: u32) -> Self {
        let info = find(name).unwrap();
        let mut run = Run {
            h: Harness::new((info.build)(&params(client, rounds)), ME),
            session_blind: name == "sequential-ignore-session",
            pending: VecDeque::new(),
            nodes: BTreeMap::new(),
            fences: BTreeSet::new(),
            watches: BTreeSet::new(),
            fired: VecDeque::new(),
            zxid: 100,
            seq: 0,
            session: ME,
            connected: true,
            grammar: Grammar::default(),
            rounds,
        };
        let out = run.h.start();
        run.absorb(out);
        run
    }

    fn absorb(&mut self, out: CxOutput<AppEvent>) {
        if self.grammar.closed {
            assert!(out.sent.is_empty(), "sent {:?} after close", out.sent);
        }
        for e in &out.events {
            self.grammar
                .feed(e, self.connected, self.session_blind, &self.fences);
        }
        self.pending.extend(out.sent);
        match out.session_request {
            Some(SessionRequest::Close) => {
                assert_eq!(self.grammar.released, self.rounds, "closed early");
                self.grammar.closed = true;
            }
            Some(SessionRequest::Reopen) => {
                self.session += 1;
                self.h.set_session(self.session);
            }
            None => {}
        }
    }

    fn node(&mut self, path: String, owner: i64) -> Stat {
        self.zxid += 1;
        if owner == self.session {
            self.fences.insert(self.zxid);
        }
        self.nodes.insert(path, (self.zxid, owner));
        stat(self.zxid, owner)
    }

    fn kill(&mut self, path: &str) {
        if self.nodes.remove(path).is_some() && self.watches.remove(path) {
            self.fired.push_back(path.to_string());
        }
    }

    /// Answer the oldest request; `pick` chooses among plausible answers.
    fn answer(&mut self, pick: u8) {
        let Some((id, op)) = self.pending.pop_front() else {
            return;
        };
        let lost = pick % 5 == 4;
        let reply: Reply = match op {
            Op::Create { path, mode, .. } => {
                let path = if mode == CreateMode::EphemeralSequential {
                    self.seq += 1;
                    format!("{path}{:010}", self.seq)
                } else {
                    path
                };
                if self.nodes.contains_key(&path) || (path == "/lock" && pick % 2 == 0) {
                    Err(ZkError::NodeExists)
                } else if lost && pick % 2 == 0 {
                    Err(ZkError::ConnectionLoss) // not applied
                } else {
                    let owner = if mode.is_ephemeral() { self.session } else { 0 };
                    let stat = self.node(path.clone(), owner);
                    if lost {
                        Err(ZkError::ConnectionLoss) // applied, reply lost
                    } else {
                        Ok(Response::Created { path, stat })
                    }
                }
            }
            Op::Delete { path, .. } => {
                let had = self.nodes.contains_key(&path);
                if !(lost && pick % 2 == 0) {
                    self.kill(&path);
                }
                match (lost, had) {
                    (true, _) => Err(ZkError::ConnectionLoss),
                    (false, true) => Ok(Response::Deleted),
                    (false, false) => Err(ZkError::NoNode),
                }
            }
            Op::Exists { path, watch } => {
                if lost {
                    Err(ZkError::ConnectionLoss)
                } else {
                    if watch {
                        self.watches.insert(path.clone());
                    }
                    let node = self.nodes.get(&path).map(|&(z, o)| stat(z, o));
                    Ok(Response::Exists(node))
                }
            }
            Op::GetChildren { path, .. } => {
                if lost {
                    Err(ZkError::ConnectionLoss)
                } else {
                    let prefix = format!("{path}/");
                    let names = self
                        .nodes
                        .keys()
                        .filter_map(|p| p.strip_prefix(&prefix))
                        .filter(|n| !n.contains('/'))
                        .map(str::to_string)
                        .collect();
                    Ok(Response::Children {
                        names,
                        stat: Stat::default(),
                    })
                }
            }
            Op::Sync { .. } if lost => Err(ZkError::ConnectionLoss),
            Op::Sync { .. } => Ok(Response::Synced),
            other => panic!("a lock sent {other:?}"),
        };
        let out = self.h.reply(id, reply);
        self.absorb(out);
    }

    /// Another client's node appears (`pick` even) or the lowest one goes.
    fn others(&mut self, pick: u8) {
        let foreign: Vec<String> = self
            .nodes
            .iter()
            .filter(|(p, (_, o))| *o != self.session && *o != 0 && p.starts_with("/lock/"))
            .map(|(p, _)| p.clone())
            .collect();
        if pick % 2 == 0 || foreign.is_empty() {
            self.seq += 1;
            let kind =
                ["lock-c7s112a1-", "read-c8s128a1-", "write-c9s144a1-"][pick as usize / 2 % 3];
            let naive = pick % 4 == 0 && !self.nodes.contains_key("/lock/lock");
            let path = if naive {
                "/lock/lock".to_string()
            } else {
                format!("/lock/{kind}{:010}", self.seq)
            };
            self.node(path, 0x77);
        } else {
            let path = foreign[pick as usize % foreign.len()].clone();
            self.kill(&path);
        }
    }

    fn step(&mut self, action: u8, pick: u8) {
        match action % 10 {
            0..=3 if self.connected => self.answer(pick),
            4 if self.connected => {
                if let Some(path) = self.fired.pop_front() {
                    let out = self.h.watch(EventType::NodeDeleted, &path);
                    self.absorb(out);
                }
            }
            5 if self.connected => {
                // The Java client's order: outstanding ops fail first.
                for (id, _) in std::mem::take(&mut self.pending) {
                    let out = self.h.reply(id, Err(ZkError::ConnectionLoss));
                    self.absorb(out);
                }
                self.connected = false;
                let out = self.h.session(SessionEvent::Disconnected);
                self.absorb(out);
            }
            6 if !self.connected => {
                self.connected = true;
                let out = self.h.session(SessionEvent::SyncConnected);
                self.absorb(out);
            }
            7 if !self.connected && pick % 3 == 0 => {
                // Expired on reconnect: the old session's ephemerals are gone.
                let old = self.session;
                let dead: Vec<String> = self
                    .nodes
                    .iter()
                    .filter(|(_, (_, o))| *o == old)
                    .map(|(p, _)| p.clone())
                    .collect();
                for p in dead {
                    self.kill(&p);
                }
                self.watches.clear();
                for (id, _) in std::mem::take(&mut self.pending) {
                    let out = self.h.reply(id, Err(ZkError::SessionExpired));
                    self.absorb(out);
                }
                let out = self.h.session(SessionEvent::Expired);
                self.absorb(out);
                if self.session == old {
                    // Did not reopen: only a finished client may do that.
                    assert!(self.h.client.is_done());
                }
            }
            8 => {
                if let Some(out) = self.h.fire_timer() {
                    self.absorb(out);
                }
            }
            9 => self.others(pick),
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_lock_keeps_the_event_grammar(
        which in 0..LOCKS.len(),
        client in 0usize..4,
        rounds in 1u32..3,
        steps in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..160),
    ) {
        let mut run = Run::new(LOCKS[which], client, rounds);
        for (action, pick) in steps {
            run.step(action, pick);
        }
    }
}

/// Without faults or rivals every lock recipe finishes all its rounds.
#[test]
fn every_lock_finishes_when_nothing_goes_wrong() {
    for name in LOCKS {
        let mut run = Run::new(name, 1, 3);
        for _ in 0..200 {
            if run.pending.is_empty() {
                run.step(8, 0);
            } else {
                // pick 1: an answer that neither loses nor collides.
                run.step(0, 1);
            }
        }
        assert!(run.h.client.is_done(), "{name} did not finish");
        assert_eq!(run.grammar.released, 3, "{name}");
    }
}
