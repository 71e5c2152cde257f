//! Property test: whatever a server answers, in whatever order, and whatever
//! happens to the session, no seed port panics and each keeps the event
//! shape the checker's monitors read:
//!
//! - locks: `Requested Enqueued* (Acquired ResourceWrite ResourceWrite Released | GaveUp)`
//!   per round, the fence being the czxid the server gave one of the
//!   client's own nodes (fence 0 only when the port had to report without
//!   one), nothing after the session is closed;
//! - queue: `Offered` only by producers (even clients), each item once;
//!   `Taken` only by consumers;
//! - election: `Elected` and `Abdicated` alternate, starting with `Elected`.
//!
//! The "server" is an adversary, not a ZooKeeper: it answers pending
//! requests with any plausible reply (lost ones included) and interleaves
//! watch events, connection-state events and timers as proptest chooses.

use std::collections::BTreeSet;

use crate::seeds_support::*;
use proptest::prelude::*;
use zkrecipes::{AppEvent, Family};
use zksim::{EventType, Op, OpId, Reply, Response, SessionEvent, ZkError};

const PORTS: &[&str] = &[
    "seed001-ouyang-lock",
    "seed001-ouyang-rwlock",
    "seed003-apache-writelock",
    "seed002-writelock",
    "seed002-queue",
    "seed002-queue-poll",
    "seed002-curator-mutex",
    "seed002-curator-leader",
    "seed004-zklock",
];

#[derive(Default, Debug)]
struct Shape {
    asking: bool,
    holding: Option<i64>,
    /// ResourceWrites seen in the current hold.
    writes: u32,
    leading: bool,
    offered: BTreeSet<u64>,
}

struct Adversary {
    d: Drive,
    family: Family,
    producer: bool,
    pending: Vec<(OpId, Op)>,
    /// Child names the adversary has handed out, to list back.
    names: Vec<String>,
    czxids: BTreeSet<i64>,
    zxid: i64,
    shape: Shape,
}

impl Adversary {
    fn new(name: &str, client: usize) -> Self {
        let info = zkrecipes::registry::find(name).unwrap();
        let mut a = Adversary {
            d: build(name, &params(client, 4, "/lock", 2), 100 + client as i64),
            family: info.family,
            producer: client % 2 == 0,
            pending: Vec::new(),
            names: Vec::new(),
            czxids: BTreeSet::new(),
            zxid: 10,
            shape: Shape::default(),
        };
        let out = a.d.start();
        a.absorb(out);
        a
    }

    fn absorb(&mut self, out: zksim::CxOutput<AppEvent>) {
        for e in &out.events {
            self.check(e);
        }
        self.pending.extend(out.sent);
    }

    fn check(&mut self, e: &AppEvent) {
        let s = &mut self.shape;
        match (self.family, e) {
            (Family::Lock | Family::RwLock, AppEvent::Requested { .. }) => {
                assert!(!s.asking && s.holding.is_none(), "{e:?} twice");
                s.asking = true;
            }
            (Family::Lock | Family::RwLock, AppEvent::Enqueued { .. }) => {
                assert!(s.asking, "{e:?} unasked")
            }
            (Family::Lock | Family::RwLock, AppEvent::Acquired { fence, .. }) => {
                assert!(s.asking, "{e:?} unasked");
                assert!(
                    *fence == 0 || self.czxids.contains(fence),
                    "{e:?}: not a czxid the server gave"
                );
                s.asking = false;
                s.holding = Some(*fence);
                s.writes = 0;
            }
            (Family::Lock | Family::RwLock, AppEvent::ResourceWrite { fence }) => {
                assert_eq!(s.holding, Some(*fence), "{e:?}");
                s.writes += 1;
            }
            (Family::Lock | Family::RwLock, AppEvent::Released) => {
                assert!(s.holding.is_some() && s.writes == 2, "{e:?} in {s:?}");
                s.holding = None;
            }
            (Family::Lock | Family::RwLock, AppEvent::GaveUp) => {
                assert!(s.asking, "{e:?} unasked");
                s.asking = false;
            }
            (Family::Queue, AppEvent::Offered { item }) => {
                assert!(self.producer, "{e:?} by a consumer");
                assert!(s.offered.insert(*item), "{e:?} twice");
            }
            (Family::Queue, AppEvent::Taken { .. }) => {
                assert!(!self.producer, "{e:?} by a producer")
            }
            (Family::Election, AppEvent::Elected) => {
                assert!(!s.leading, "{e:?} twice");
                s.leading = true;
            }
            (Family::Election, AppEvent::Abdicated) => {
                assert!(s.leading, "{e:?} without Elected");
                s.leading = false;
            }
            _ => panic!("{e:?} is not a {:?} event", self.family),
        }
    }

    fn stat(&mut self) -> zksim::Stat {
        self.zxid += 1;
        self.czxids.insert(self.zxid);
        stat(self.zxid)
    }

    /// A plausible answer to `op`, chosen by `pick`.
    fn answer(&mut self, op: &Op, pick: u8) -> Reply {
        let lost = pick % 7 == 0;
        if lost {
            return Err(if pick % 2 == 0 {
                ZkError::ConnectionLoss
            } else {
                ZkError::SessionExpired
            });
        }
        match op {
            Op::Create { path, mode, .. } => {
                if pick % 5 == 1 {
                    return Err(if mode.is_sequential() {
                        ZkError::NoNode
                    } else {
                        ZkError::NodeExists
                    });
                }
                let path = if mode.is_sequential() {
                    format!("{path}{:010}", self.zxid)
                } else {
                    path.clone()
                };
                if let Some(name) = path.strip_prefix("/lock/") {
                    self.names.push(name.to_string());
                }
                Ok(Response::Created {
                    path,
                    stat: self.stat(),
                })
            }
            Op::GetChildren { .. } => {
                if pick % 11 == 3 {
                    return Err(ZkError::NoNode);
                }
                let names = self
                    .names
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (pick as usize >> (i % 7)) & 1 == 0 || pick % 3 == 0)
                    .map(|(_, n)| n.clone())
                    .collect();
                Ok(Response::Children {
                    names,
                    stat: zksim::Stat::default(),
                })
            }
            Op::Exists { .. } => Ok(Response::Exists((pick % 2 == 0).then(|| self.stat()))),
            Op::GetData { .. } => {
                if pick % 3 == 0 {
                    Err(ZkError::NoNode)
                } else {
                    Ok(Response::Data {
                        data: format!("{}", pick).into_bytes(),
                        stat: self.stat(),
                    })
                }
            }
            Op::Delete { path, .. } => {
                let name = path.strip_prefix("/lock/").unwrap_or(path).to_string();
                let known = self.names.contains(&name);
                self.names.retain(|n| *n != name);
                if pick % 3 == 0 || !known {
                    Err(ZkError::NoNode)
                } else {
                    Ok(Response::Deleted)
                }
            }
            _ => Ok(Response::Synced),
        }
    }

    fn step(&mut self, action: u8, pick: u8) {
        if self.d.closed {
            return;
        }
        let out = match action % 8 {
            0..=3 if !self.pending.is_empty() => {
                let i = pick as usize % self.pending.len().min(2);
                let (op, request) = self.pending.remove(i);
                let reply = self.answer(&request, pick / 2);
                self.d.reply(op, reply)
            }
            4 if !self.names.is_empty() => {
                let name = self.names[pick as usize % self.names.len()].clone();
                let kind = if pick % 4 == 0 {
                    EventType::NodeChildrenChanged
                } else {
                    EventType::NodeDeleted
                };
                let path = if kind == EventType::NodeChildrenChanged {
                    "/lock".to_string()
                } else {
                    format!("/lock/{name}")
                };
                if kind == EventType::NodeDeleted {
                    self.names.retain(|n| *n != name);
                }
                self.d.watch(kind, &path)
            }
            5 => {
                let ev = match pick % 5 {
                    0 => SessionEvent::Expired,
                    1 | 2 => SessionEvent::Disconnected,
                    _ => SessionEvent::SyncConnected,
                };
                self.d.session_event(ev)
            }
            _ if self.d.timer.is_some() => self.d.fire_timer(),
            _ => return,
        };
        self.absorb(out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_port_keeps_its_event_shape(
        which in 0..PORTS.len(),
        client in 0usize..4,
        steps in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..200),
    ) {
        let mut a = Adversary::new(PORTS[which], client);
        for (action, pick) in steps {
            a.step(action, pick);
        }
    }
}

/// With every request answered as a lone client would see it, each port
/// finishes its rounds (the queue needs its partner: producers only here).
#[test]
fn every_port_finishes_alone() {
    for name in PORTS {
        let client = 0; // a producer for the queue ports
        let mut a = Adversary::new(name, client);
        for _ in 0..400 {
            if a.d.is_done() {
                break;
            }
            if let Some((op, request)) = (!a.pending.is_empty()).then(|| a.pending.remove(0)) {
                // pick 2: creates succeed, lists show everything, exists finds, data reads.
                let reply = a.answer(&request, 2);
                let out = a.d.reply(op, reply);
                a.absorb(out);
            } else if a.d.timer.is_some() {
                let out = a.d.fire_timer();
                a.absorb(out);
            } else {
                break;
            }
        }
        assert!(a.d.is_done(), "{name} did not finish: {:?}", a.d.history);
    }
}
