//! Herd figures on a real ZooKeeper, end to end: driver → history →
//! `zkcheck::monitor::herd::figures`. Two deliberately small lock clients written here
//! (so this test does not depend on the registered recipes' details): the
//! naive lock, where every waiter watches the one lock node, and the
//! predecessor-watch queue lock. On the real server the first must wake
//! every waiter on a release and the second exactly one.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use zkcheck::monitor::herd::LockFigures;
use zkreal::{drive_blocking, DriveConfig, RealRun, TestServer};
use zkrecipes::AppEvent;
use zksim::{
    Client, CreateMode, Cx, EventType, Happening, Op, OpId, Reply, Response, SessionEvent,
    WatchedEvent,
};

const HOLD_TICKS: u64 = 1;

/// Every waiter watches `<root>/lock`; every release wakes them all.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct NaiveLock {
    root: String,
    pending: BTreeMap<OpId, &'static str>,
    holding: bool,
    done: bool,
}

impl NaiveLock {
    fn new(root: &str) -> Self {
        NaiveLock {
            root: root.into(),
            pending: BTreeMap::new(),
            holding: false,
            done: false,
        }
    }
    fn lock_path(&self) -> String {
        format!("{}/lock", self.root)
    }
    fn try_create(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: self.lock_path(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        });
        self.pending.insert(op, "create");
    }
    fn watch(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Exists {
            path: self.lock_path(),
            watch: true,
        });
        self.pending.insert(op, "exists");
    }
}

impl Client for NaiveLock {
    type Event = AppEvent;
    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Requested { shared: false });
        self.try_create(cx);
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.pending.remove(&op), reply) {
            (Some("create"), Ok(Response::Created { stat, .. })) => {
                self.holding = true;
                cx.emit(AppEvent::Acquired {
                    fence: stat.czxid,
                    shared: false,
                });
                cx.after(HOLD_TICKS);
            }
            (Some("create"), Err(_)) => self.watch(cx),
            (Some("exists"), Ok(Response::Exists(None))) => self.try_create(cx),
            (Some("delete"), _) => self.done = true,
            _ => {}
        }
    }
    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        match event.kind {
            EventType::NodeDeleted => self.try_create(cx),
            _ => self.watch(cx),
        }
    }
    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {}
    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        if self.holding {
            self.holding = false;
            cx.emit(AppEvent::Released);
            let op = cx.send(Op::Delete {
                path: self.lock_path(),
                version: -1,
            });
            self.pending.insert(op, "delete");
        }
    }
    fn is_done(&self) -> bool {
        self.done
    }
}

/// Each waiter watches the node just before its own (by sequence number).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct QueueLock {
    root: String,
    pending: BTreeMap<OpId, &'static str>,
    mine: Option<(String, i64)>,
    holding: bool,
    done: bool,
}

fn sequence_of(name: &str) -> i64 {
    name.rsplit('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(i64::MAX)
}

impl QueueLock {
    fn new(root: &str) -> Self {
        QueueLock {
            root: root.into(),
            pending: BTreeMap::new(),
            mine: None,
            holding: false,
            done: false,
        }
    }
    fn list(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::GetChildren {
            path: self.root.clone(),
            watch: false,
        });
        self.pending.insert(op, "list");
    }
}

impl Client for QueueLock {
    type Event = AppEvent;
    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        cx.emit(AppEvent::Requested { shared: false });
        let op = cx.send(Op::Create {
            path: format!("{}/n-", self.root),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        });
        self.pending.insert(op, "create");
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.pending.remove(&op), reply) {
            (Some("create"), Ok(Response::Created { path, stat })) => {
                let name = path.rsplit('/').next().unwrap_or_default().to_string();
                cx.emit(AppEvent::Enqueued {
                    seq: Some(sequence_of(&name)),
                });
                self.mine = Some((name, stat.czxid));
                self.list(cx);
            }
            (Some("list"), Ok(Response::Children { mut names, .. })) => {
                let Some((mine, fence)) = self.mine.clone() else {
                    return;
                };
                names.sort_by_key(|n| sequence_of(n));
                let at = names.iter().position(|n| *n == mine).unwrap_or(0);
                if at == 0 {
                    self.holding = true;
                    cx.emit(AppEvent::Acquired {
                        fence,
                        shared: false,
                    });
                    cx.after(HOLD_TICKS);
                } else {
                    let op = cx.send(Op::Exists {
                        path: format!("{}/{}", self.root, names[at - 1]),
                        watch: true,
                    });
                    self.pending.insert(op, "exists");
                }
            }
            (Some("exists"), Ok(Response::Exists(None))) => self.list(cx),
            (Some("delete"), _) => self.done = true,
            _ => {}
        }
    }
    fn on_watch(&mut self, _: WatchedEvent, cx: &mut Cx<AppEvent>) {
        self.list(cx);
    }
    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {}
    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        if let (true, Some((mine, _))) = (self.holding, self.mine.clone()) {
            self.holding = false;
            cx.emit(AppEvent::Released);
            let op = cx.send(Op::Delete {
                path: format!("{}/{mine}", self.root),
                version: -1,
            });
            self.pending.insert(op, "delete");
        }
    }
    fn is_done(&self) -> bool {
        self.done
    }
}

fn make_root(server: &TestServer, root: &str) {
    let run = drive_blocking(
        vec![CuedClient::new(vec![Cue::Do(create(
            root,
            CreateMode::Persistent,
        ))])],
        &config(server),
    )
    .expect("setup");
    assert!(run.finished);
}

/// Never two holders at once, in the order the driver saw things.
fn assert_exclusive<C: Client<Event = AppEvent>>(run: &RealRun<C>) {
    let mut holder = None;
    for h in &run.log {
        match h {
            Happening::App {
                client,
                event: AppEvent::Acquired { .. },
            } => {
                assert_eq!(
                    holder, None,
                    "client {client} acquired while {holder:?} held"
                );
                holder = Some(*client);
            }
            Happening::App {
                client,
                event: AppEvent::Released,
            } => {
                assert_eq!(holder, Some(*client));
                holder = None;
            }
            _ => {}
        }
    }
}

const CLIENTS: usize = 5;

fn lock_config(server: &TestServer) -> DriveConfig {
    DriveConfig {
        run_timeout: Duration::from_secs(30),
        ..DriveConfig::new(server.connect_string())
    }
}

#[test]
fn the_naive_lock_wakes_every_waiter_on_a_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    make_root(&server, "/naive");
    let clients = (0..CLIENTS).map(|_| NaiveLock::new("/naive")).collect();
    let run = drive_blocking(clients, &lock_config(&server)).expect("drive");
    assert!(run.finished, "{:?}", run.clients);
    assert_exclusive(&run);
    let f = LockFigures::from_log(&run.log);
    eprintln!("naive: {f:?} in {:?}", run.elapsed);
    assert_eq!((f.acquisitions, f.releases), (CLIENTS, CLIENTS));
    assert!(
        f.max_wakeups_per_release() >= CLIENTS - 1,
        "the first release wakes all {} waiters: {f:?}",
        CLIENTS - 1
    );
    assert!(f.wasted_wakeups >= CLIENTS - 2, "{f:?}");
}

#[test]
fn the_queue_lock_wakes_one_waiter_per_release_on_a_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    make_root(&server, "/queue");
    let clients = (0..CLIENTS).map(|_| QueueLock::new("/queue")).collect();
    let run = drive_blocking(clients, &lock_config(&server)).expect("drive");
    assert!(run.finished, "{:?}", run.clients);
    assert_exclusive(&run);
    let f = LockFigures::from_log(&run.log);
    eprintln!("queue: {f:?} in {:?}", run.elapsed);
    assert_eq!((f.acquisitions, f.releases), (CLIENTS, CLIENTS));
    assert_eq!(f.max_wakeups_per_release(), 1, "{f:?}");
    assert_eq!(f.wasted_wakeups, 0, "{f:?}");
    assert!(f.wakeups < CLIENTS, "at most one wakeup per waiter: {f:?}");
}
