//! Port of seed 004's `ZkLock` ("常见分布式锁4"), bugs included.
//!
//! The article's class is a `Watcher` on its own ZooKeeper handle. The lines
//! that matter (seed 004, line numbers of the stored text):
//!
//! | article line | Java | port |
//! |---|---|---|
//! | 169 | `exists("/"+bc,false)`; if null `create("/"+bc, …, PERSISTENT)` | `Exists{root}` then `Create{root}`; a `NodeExists` from a racing creator is an exception → `GaveUp` |
//! | 170 | `znode = create("/bc/bc_", …, EPHEMERAL_SEQUENTIAL)` | `Create` of `root/<bc>_`; `Enqueued{seq}`, fence = its czxid |
//! | 171 | `getChildren("/"+bc,false)`; `Collections.sort(childrenNodes)` | one `GetChildren`, names sorted **as whole strings** |
//! | 171 | `if (znode.endsWith(firstNode)) return true` | `Acquired` when our path ends with the first name |
//! | 171 | loop: `exists("/bc/"+lastNode, true)` on the name before ours | `Exists{pred, watch: true}` (the default watcher); its result is **ignored** |
//! | 171 | `synchronized(this){wait();} return true;` | wait for *any* `NodeDeleted`; then `Acquired` **without listing again** |
//! | 171 | `catch (Exception e) {…} return false;` | any error reply while acquiring → `GaveUp` |
//! | 172 | `close(): delete(znode,-1); zooKeeper.close()` | `Delete`; on the last round the session is closed. A failing delete throws before `zk.close()`: the port reports `Released` and stops **without closing** its session |
//! | 173 | `process`: `NodeDeleted` → `notify()` | any `NodeDeleted` wakes the waiter; session events are ignored |
//!
//! Deviations: the article builds one `ZkLock` (one session) per use; the
//! port keeps one session for all rounds and closes it after the last
//! (identical when `rounds == 1`). The Java window where `notify()` runs
//! before `wait()` cannot be reproduced by atomic handlers, except that a
//! `NodeDeleted` arriving while the `exists` reply is outstanding is lost,
//! as it would be in Java.
//!
//! Expected bugs:
//! - **mutex**: after the wakeup it assumes the lock without re-checking. A
//!   waiter whose predecessor was itself a waiter that left (a `GaveUp`
//!   after connection loss, or a crashed client whose session expired)
//!   acquires while the real holder still holds. Also plain session expiry
//!   of the holder (no reaction to `Expired`).
//! - **liveness**: `exists` returning null (predecessor gone between list and
//!   exists) still waits forever (W2); a `GaveUp` after a lost create reply
//!   leaves an orphan node only if the session stays open (it does not here).
//! - **leaks**: a delete that fails with `ConnectionLoss` skips `zk.close()`.
//! - **fifo**: whole-name string sort is right only while all suffixes have
//!   the same sign (S6).

use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, WatchedEvent,
};

use super::app::{java_parse_int_after, Alarms, App, Stage};
use crate::{AppEvent, Recipe, RecipeParams};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Alarm {
    Hold,
    Think,
}

/// Which call of `getLock()` / `close()` is waiting for its reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    Idle,
    RootExists(OpId),
    CreateRoot(OpId),
    CreateNode(OpId),
    List(OpId),
    WatchPrev(OpId),
    /// `synchronized(this){wait();}`
    Waiting,
    Delete(OpId),
}

/// Seed 004's `ZkLock`, one per client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZkLock004 {
    app: App,
    alarms: Alarms<Alarm>,
    /// `"/" + businessCode`.
    root: String,
    business: String,
    znode: Option<String>,
    fence: i64,
    step: Step,
}

impl Recipe for ZkLock004 {
    const FAMILY: crate::Family = crate::Family::Lock;
    fn new(p: &RecipeParams) -> Self {
        let business = p.root.trim_start_matches('/').replace('/', "_");
        ZkLock004 {
            app: App::new(p.workload, false),
            alarms: Alarms::default(),
            root: format!("/{business}"),
            business,
            znode: None,
            fence: 0,
            step: Step::Idle,
        }
    }
}

impl ZkLock004 {
    fn get_lock(&mut self, cx: &mut Cx<AppEvent>) {
        self.app.request(cx);
        let id = cx.send(Op::Exists {
            path: self.root.clone(),
            watch: false,
        });
        self.step = Step::RootExists(id);
    }

    fn create_node(&mut self, cx: &mut Cx<AppEvent>) {
        let id = cx.send(Op::Create {
            path: format!("{}/{}_", self.root, self.business),
            data: self.business.as_bytes().to_vec(),
            mode: CreateMode::EphemeralSequential,
        });
        self.step = Step::CreateNode(id);
    }

    /// `catch (Exception e) { e.printStackTrace(); } return false;`
    fn failed(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.app.gave_up(cx);
    }

    fn got_lock(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.app.acquired(self.fence, cx);
        let hold = self.app.hold_ticks();
        self.alarms.set(Alarm::Hold, hold, cx);
    }

    fn on_children(&mut self, mut names: Vec<String>, cx: &mut Cx<AppEvent>) {
        let Some(znode) = self.znode.clone() else {
            return self.failed(cx);
        };
        names.sort(); // Collections.sort(childrenNodes)
        let Some(first) = names.first().cloned() else {
            return self.failed(cx); // childrenNodes.get(0) throws
        };
        if znode.ends_with(&first) {
            return self.got_lock(cx);
        }
        let mut last = first;
        for node in &names {
            if znode.ends_with(node.as_str()) {
                let id = cx.send(Op::Exists {
                    path: format!("{}/{}", self.root, last),
                    watch: true,
                });
                self.step = Step::WatchPrev(id);
                return;
            }
            last = node.clone();
        }
        // Our node is not listed: no watch set, but `wait()` all the same.
        self.step = Step::Waiting;
    }

    fn release(&mut self, cx: &mut Cx<AppEvent>) {
        self.app.hold_over(cx);
        match self.znode.clone() {
            Some(path) => {
                let id = cx.send(Op::Delete { path, version: -1 });
                self.step = Step::Delete(id);
            }
            None => self.after_release(true, cx),
        }
    }

    fn after_release(&mut self, deleted: bool, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.znode = None;
        if !deleted {
            // delete threw: `zooKeeper.close()` never runs.
            self.app.abandon();
            return;
        }
        if self.app.release_returned(cx) {
            let think = self.app.think_ticks();
            self.alarms.set(Alarm::Think, think, cx);
        }
    }
}

impl Client for ZkLock004 {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        if self.app.workload().rounds == 0 {
            self.app.abandon();
            cx.close_session();
            return;
        }
        self.get_lock(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.step.clone(), reply) {
            (Step::RootExists(id), Ok(Response::Exists(stat))) if id == op => {
                if stat.is_none() {
                    let id = cx.send(Op::Create {
                        path: self.root.clone(),
                        data: self.business.as_bytes().to_vec(),
                        mode: CreateMode::Persistent,
                    });
                    self.step = Step::CreateRoot(id);
                } else {
                    self.create_node(cx);
                }
            }
            (Step::CreateRoot(id), Ok(_)) if id == op => self.create_node(cx),
            (Step::CreateNode(id), Ok(Response::Created { path, stat })) if id == op => {
                cx.emit(AppEvent::Enqueued {
                    seq: java_parse_int_after(&path, '_').map(i64::from),
                });
                self.znode = Some(path);
                self.fence = stat.czxid;
                let id = cx.send(Op::GetChildren {
                    path: self.root.clone(),
                    watch: false,
                });
                self.step = Step::List(id);
            }
            (Step::List(id), Ok(Response::Children { names, .. })) if id == op => {
                self.on_children(names, cx)
            }
            // The result of `exists` is not looked at.
            (Step::WatchPrev(id), Ok(_)) if id == op => self.step = Step::Waiting,
            (Step::Delete(id), r) if id == op => self.after_release(r.is_ok(), cx),
            (
                Step::RootExists(id)
                | Step::CreateRoot(id)
                | Step::CreateNode(id)
                | Step::List(id)
                | Step::WatchPrev(id),
                _,
            ) if id == op => self.failed(cx),
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        // process(): NodeDeleted → notify(); with nobody in wait() it is lost.
        if event.kind == EventType::NodeDeleted && self.step == Step::Waiting {
            self.got_lock(cx);
        }
    }

    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {
        // process() only looks at NodeDeleted: connection state is ignored.
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        for alarm in self.alarms.take_due(cx) {
            match alarm {
                Alarm::Hold if matches!(self.app.stage(), Stage::Holding { .. }) => {
                    self.release(cx)
                }
                Alarm::Think if self.app.stage() == Stage::Thinking => self.get_lock(cx),
                _ => {}
            }
        }
    }

    fn is_done(&self) -> bool {
        self.app.is_finished()
    }
}
