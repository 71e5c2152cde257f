//! Port of Apache ZooKeeper's `recipes.lock.WriteLock` with `ProtocolSupport`
//! and `ZNodeName`, as seeds 002 and 003 print it. Two registered variants:
//!
//! - `ORIGINAL = true` — the Apache code (seed 003 lines 97-113): in
//!   `findPrefixInChildren` `id = name` (a bare child name, the "id vs full
//!   path" mix-up seed 002 line 369 points out) and `ZNodeName` compares the
//!   prefix `x-<sessionId>` first (seed 002 line 476: "sessionid小的总是能拿到锁").
//! - `ORIGINAL = false` — the article's fixed copy (seed 002 lines 219-313,
//!   436-449): `id = dir + "/" + name` and sequence-only ordering.
//!
//! | article line (seed 002 unless noted) | Java | port |
//! |---|---|---|
//! | 321-327 | `lock()`: `ensurePathExists(dir)`; `retryOperation(zop)` | `Exists{dir}` (+ `Create{dir}`) under a retry loop whose errors are swallowed (639-667), then `execute()` under another |
//! | 613-631, 681-688 | `retryOperation`: 10 attempts; `ConnectionLoss` → sleep `i * 500ms` (none after the first); `SessionExpired` and others thrown | same: re-execute at once after attempt 0, after `i*5` ticks later; the 10th loss is thrown after its 4.5 s sleep |
//! | 249-257 | `id == null` → `prefix = "x-" + sessionId + "-"`; `findPrefixInChildren` | `GetChildren{dir}`; the **first** listed name with the prefix (server order) is reused, else `Create{dir/x-<sid>-, EPHEMERAL_SEQUENTIAL}` |
//! | 224 / seed 003 103 | `id = dir + "/" + name` / `id = name` | full path / bare name |
//! | 261-268 | `getChildren(dir)`; empty → `id = null`, loop | same |
//! | 271-279 | `TreeSet<ZNodeName>` of `dir + "/" + name`; `ownerId = first`; `headSet(idName)` | [`super::znode_name`] |
//! | 280-298 | `exists(lastChildId, new LockWatcher())`; non-null → `FALSE`; null → warn and fall out of the loop → `FALSE` | `Exists{watch}`; either way a watcher is registered (S14) and the call returns false: a vanished predecessor leaves the client waiting for an event that never comes, unless a session event arrives |
//! | 300-305 | no one less than me: `isOwner()` → `lockAcquired()`, `TRUE` | `Acquired`; `isOwner` compares `id` with the full `ownerId` (never equal for a bare `id`) |
//! | 192-203 | `LockWatcher.process` (**any** event, also connection-state events, which the Java client hands to every registered watcher) → `lock()`, exceptions logged | each registered watcher (a multiset: `exists` twice on a path registers two) runs `lock()` again; runs are serialized like the `synchronized` methods |
//! | 148-185 | `unlock()`: one `delete(id,-1)`, no retry; `NoNode` ignored; other errors thrown; `finally { id = null }` | `Delete{id}` once; whatever happens the port reports `Released` and forgets `id` — a lost delete leaves the node, which the next round's `findPrefixInChildren` finds again |
//!
//! The app calls `lock()` once per round and waits for `lockAcquired()`;
//! a second `lockAcquired()` while it holds is ignored. When the node was
//! found by prefix (its create reply lost) the port reads its `Stat` once
//! (`Exists`, no watch) just to learn the fence — an observer-only read.
//!
//! Expected bugs:
//! - ORIGINAL, **mutex** (no faults): a client whose session id sorts lower
//!   *as a string* enqueues behind the holder yet sorts first and acquires
//!   while the holder holds. Two clients, the larger-session one first.
//! - ORIGINAL, **liveness**: `ConnectionLoss` on the create whose node was
//!   made → the retry finds it, `id` is bare: `headSet` holds every node
//!   (`"/"` < `"x"`), it watches the largest — possibly itself — and never
//!   acquires; everyone behind it waits too.
//! - both, **liveness**: predecessor gone between `getChildren` and `exists`
//!   → returns false with a watch that never fires (until a session event).
//! - both, **mutex**: no reaction to `Expired` while holding.
//! - both, **liveness/leaks**: `unlock` does not retry a lost delete.
//! - ORIGINAL, **fifo**: order follows session ids, not arrival.

use zksim::{
    Client, CreateMode, Cx, Op, OpId, Reply, Response, SessionEvent, WatchedEvent, ZkError,
};

use super::app::{java_parse_int_after, java_rejects_path, Alarms, App, Stage};
use super::znode_name::{head_set, tree_set, NameOrder, ZNodeName};
use crate::{AppEvent, Recipe, RecipeParams};

/// `ProtocolSupport.retryCount`.
const RETRY_COUNT: u32 = 10;
/// `ProtocolSupport.retryDelay` (500 ms) in ticks.
const RETRY_DELAY_TICKS: u64 = 5;
/// `WriteLock.data`.
const DATA: [u8; 2] = [0x12, 0x34];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Alarm {
    Hold,
    Think,
    Retry,
}

/// Which `retryOperation` is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// `ensurePathExists(dir)`
    Ensure,
    /// `retryOperation(zop)`
    Zop,
}

/// The synchronous ZooKeeper call a run is blocked in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Wait {
    EnsureExists(OpId),
    EnsureCreate(OpId),
    FindPrefix(OpId),
    Create(OpId),
    List(OpId),
    WatchLess(OpId, String),
    /// `retryDelay(i)`
    Sleep,
    /// Observer-only read of our node's czxid (see the module doc).
    Fence(OpId),
    Delete(OpId),
}

/// One call of `lock()` (or `unlock()`), holding the object's monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Run {
    /// The app's own call (its exceptions reach the app) or a `LockWatcher`'s.
    by_app: bool,
    phase: Phase,
    attempt: u32,
    wait: Wait,
}

/// Apache `WriteLock`; see the module doc for the two variants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WriteLock<const ORIGINAL: bool> {
    app: App,
    alarms: Alarms<Alarm>,
    dir: String,
    id: Option<String>,
    id_name: Option<ZNodeName>,
    owner_id: Option<String>,
    /// czxid of our node, when a reply told us.
    fence: Option<i64>,
    /// Registered `LockWatcher`s by path, one entry per watcher object.
    watchers: Vec<String>,
    run: Option<Run>,
    /// `lock()` calls blocked on the monitor (true: the app's own call).
    queued_locks: Vec<bool>,
    /// The app's `unlock()` is blocked on the monitor.
    unlock_queued: bool,
    /// `Enqueued` was reported for the current round (a node made by a
    /// `LockWatcher` run between rounds is reported when the app asks).
    enqueued: bool,
}

/// Apache's code as seed 003 prints it.
pub type ApacheWriteLock = WriteLock<true>;
/// The article's (seed 002) fixed copy.
pub type ArticleWriteLock = WriteLock<false>;

impl<const ORIGINAL: bool> Recipe for WriteLock<ORIGINAL> {
    fn new(p: &RecipeParams) -> Self {
        WriteLock {
            app: App::new(p.workload, false),
            alarms: Alarms::default(),
            dir: p.root.clone(),
            id: None,
            id_name: None,
            owner_id: None,
            fence: None,
            watchers: Vec::new(),
            run: None,
            queued_locks: Vec::new(),
            unlock_queued: false,
            enqueued: false,
        }
    }
}

/// How a `lock()` run ended.
enum Outcome {
    True,
    False,
    Thrown,
}

impl<const ORIGINAL: bool> WriteLock<ORIGINAL> {
    fn order() -> NameOrder {
        if ORIGINAL {
            NameOrder::PrefixFirst
        } else {
            NameOrder::SequenceOnly
        }
    }

    /// Someone calls `lock()`: run now or block on the monitor.
    fn call_lock(&mut self, by_app: bool, cx: &mut Cx<AppEvent>) {
        if self.run.is_some() {
            self.queued_locks.push(by_app);
        } else {
            self.start_lock(by_app, cx);
        }
    }

    fn start_lock(&mut self, by_app: bool, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Exists {
            path: self.dir.clone(),
            watch: false,
        });
        self.run = Some(Run {
            by_app,
            phase: Phase::Ensure,
            attempt: 0,
            wait: Wait::EnsureExists(op),
        });
    }

    fn set_wait(&mut self, wait: Wait) {
        if let Some(run) = &mut self.run {
            run.wait = wait;
        }
    }

    /// The top of `execute()`'s do-loop.
    fn execute(&mut self, cx: &mut Cx<AppEvent>) {
        let wait = if self.id.is_none() {
            Wait::FindPrefix(cx.send(Op::GetChildren {
                path: self.dir.clone(),
                watch: false,
            }))
        } else {
            Wait::List(cx.send(Op::GetChildren {
                path: self.dir.clone(),
                watch: false,
            }))
        };
        if let Some(run) = &mut self.run {
            run.phase = Phase::Zop;
            run.wait = wait;
        }
    }

    /// `id` is known: `idName = new ZNodeName(id)`, then list.
    fn have_id(&mut self, id: String, cx: &mut Cx<AppEvent>) {
        self.id_name = Some(ZNodeName::new(&id));
        self.id = Some(id);
        self.execute(cx);
    }

    fn on_find_prefix(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) {
        let prefix = format!("x-{}-", cx.session_id());
        if let Some(name) = names.iter().find(|n| n.starts_with(&prefix)) {
            let id = if ORIGINAL {
                name.clone()
            } else {
                format!("{}/{}", self.dir, name)
            };
            self.fence = None;
            return self.have_id(id, cx);
        }
        let op = cx.send(Op::Create {
            path: format!("{}/{}", self.dir, prefix),
            data: DATA.to_vec(),
            mode: CreateMode::EphemeralSequential,
        });
        self.set_wait(Wait::Create(op));
    }

    /// `Enqueued` once per round, when the app is asking and our node exists.
    fn report_enqueued(&mut self, path: &str, cx: &mut Cx<AppEvent>) {
        if self.app.stage() == Stage::Acquiring && !self.enqueued {
            self.enqueued = true;
            cx.emit(AppEvent::Enqueued {
                seq: java_parse_int_after(path, '-').map(i64::from),
            });
        }
    }

    fn on_list(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) {
        if names.is_empty() {
            self.id = None;
            return self.execute(cx);
        }
        if let Some(id) = self.id.clone() {
            if names.iter().any(|n| id.ends_with(n.as_str())) {
                self.report_enqueued(&id, cx);
            }
        }
        let order = Self::order();
        let sorted = tree_set(
            names
                .iter()
                .map(|n| ZNodeName::new(&format!("{}/{}", self.dir, n))),
            order,
        );
        self.owner_id = sorted.first().map(|n| n.name.clone());
        let Some(id_name) = self.id_name.clone() else {
            return self.finish(Outcome::Thrown, cx); // NullPointerException
        };
        match head_set(&sorted, &id_name, order).last() {
            Some(last) => {
                let path = last.name.clone();
                let op = cx.send(Op::Exists {
                    path: path.clone(),
                    watch: true,
                });
                self.set_wait(Wait::WatchLess(op, path));
            }
            None if self.is_owner() => self.finish(Outcome::True, cx),
            None => self.finish(Outcome::False, cx),
        }
    }

    fn is_owner(&self) -> bool {
        matches!((&self.id, &self.owner_id), (Some(id), Some(owner)) if id == owner)
    }

    /// `retryOperation`'s catch blocks.
    fn on_error(&mut self, err: ZkError, cx: &mut Cx<AppEvent>) {
        let Some(run) = self.run.clone() else { return };
        if err != ZkError::ConnectionLoss {
            return self.give_up_phase(cx);
        }
        // retryDelay(i) sleeps after every failed attempt, the last one too.
        let delay = u64::from(run.attempt) * RETRY_DELAY_TICKS;
        if let Some(r) = &mut self.run {
            r.attempt += 1;
            r.wait = Wait::Sleep;
        }
        if delay == 0 {
            self.after_sleep(cx);
        } else {
            self.alarms.set(Alarm::Retry, delay, cx);
        }
    }

    /// The sleep after a failed attempt is over: the next attempt, or, after
    /// `retryCount` attempts, `throw exception`.
    fn after_sleep(&mut self, cx: &mut Cx<AppEvent>) {
        match &self.run {
            Some(r) if r.attempt >= RETRY_COUNT => self.give_up_phase(cx),
            Some(_) => self.retry(cx),
            None => {}
        }
    }

    /// `retryOperation` throws.
    fn give_up_phase(&mut self, cx: &mut Cx<AppEvent>) {
        let Some(run) = self.run.clone() else { return };
        match run.phase {
            // ensureExists logs every KeeperException; lock() goes on.
            Phase::Ensure => self.begin_zop(cx),
            Phase::Zop => self.finish(Outcome::Thrown, cx),
        }
    }

    fn begin_zop(&mut self, cx: &mut Cx<AppEvent>) {
        if let Some(r) = &mut self.run {
            r.phase = Phase::Zop;
            r.attempt = 0;
        }
        self.execute(cx);
    }

    /// Re-run the operation of the current phase from its start.
    fn retry(&mut self, cx: &mut Cx<AppEvent>) {
        let Some(run) = &self.run else { return };
        match run.phase {
            Phase::Ensure => {
                let op = cx.send(Op::Exists {
                    path: self.dir.clone(),
                    watch: false,
                });
                self.set_wait(Wait::EnsureExists(op));
            }
            Phase::Zop => self.execute(cx),
        }
    }

    /// `lock()` returns (or throws).
    fn finish(&mut self, outcome: Outcome, cx: &mut Cx<AppEvent>) {
        match outcome {
            Outcome::True if self.app.stage() == Stage::Acquiring => match self.fence {
                Some(fence) => {
                    self.app.acquired(fence, cx);
                    let hold = self.app.hold_ticks();
                    self.alarms.set(Alarm::Hold, hold, cx);
                }
                None => {
                    let path = self.id.clone().unwrap_or_default();
                    let op = cx.send(Op::Exists { path, watch: false });
                    return self.set_wait(Wait::Fence(op));
                }
            },
            // Only the app's own call throws to the app; a LockWatcher logs.
            Outcome::Thrown
                if self.app.stage() == Stage::Acquiring
                    && self.run.as_ref().is_some_and(|r| r.by_app) =>
            {
                self.app.gave_up(cx)
            }
            _ => {}
        }
        self.run = None;
        self.next_on_monitor(cx);
    }

    fn next_on_monitor(&mut self, cx: &mut Cx<AppEvent>) {
        if self.app.is_finished() {
            return;
        }
        if self.unlock_queued {
            self.unlock_queued = false;
            self.unlock(cx);
        } else if !self.queued_locks.is_empty() {
            let by_app = self.queued_locks.remove(0);
            self.start_lock(by_app, cx);
        }
    }

    fn unlock(&mut self, cx: &mut Cx<AppEvent>) {
        if self.run.is_some() {
            self.unlock_queued = true;
            return;
        }
        match self.id.clone() {
            Some(id) if !java_rejects_path(&id) => {
                let op = cx.send(Op::Delete {
                    path: id,
                    version: -1,
                });
                self.run = Some(Run {
                    by_app: true,
                    phase: Phase::Zop,
                    attempt: 0,
                    wait: Wait::Delete(op),
                });
            }
            // A bare id: IllegalArgumentException, then `finally`.
            _ => self.unlocked(cx),
        }
    }

    /// `finally { callback.lockReleased(); id = null; }`
    fn unlocked(&mut self, cx: &mut Cx<AppEvent>) {
        self.id = None;
        self.fence = None;
        self.run = None;
        if self.app.release_returned(cx) {
            let think = self.app.think_ticks();
            self.alarms.set(Alarm::Think, think, cx);
        }
        self.next_on_monitor(cx);
    }

    /// Each registered `LockWatcher` in `fired` calls `lock()`.
    fn watchers_fired(&mut self, fired: usize, cx: &mut Cx<AppEvent>) {
        if self.app.is_finished() {
            return; // the handle is closed: nothing more reaches the watchers
        }
        for _ in 0..fired {
            self.call_lock(false, cx);
        }
    }
}

impl<const ORIGINAL: bool> Client for WriteLock<ORIGINAL> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        if self.app.workload().rounds == 0 {
            self.app.abandon();
            cx.close_session();
            return;
        }
        self.app.request(cx);
        self.enqueued = false;
        self.call_lock(true, cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        let Some(run) = self.run.clone() else { return };
        match (run.wait, reply) {
            (Wait::EnsureExists(id), Ok(Response::Exists(stat))) if id == op => match stat {
                Some(_) => self.begin_zop(cx),
                None => {
                    let op = cx.send(Op::Create {
                        path: self.dir.clone(),
                        data: Vec::new(),
                        mode: CreateMode::Persistent,
                    });
                    self.set_wait(Wait::EnsureCreate(op));
                }
            },
            (Wait::EnsureCreate(id), Ok(_)) if id == op => self.begin_zop(cx),
            (Wait::FindPrefix(id), Ok(Response::Children { names, .. })) if id == op => {
                self.on_find_prefix(names, cx)
            }
            (Wait::Create(id), Ok(Response::Created { path, stat })) if id == op => {
                self.report_enqueued(&path, cx);
                self.fence = Some(stat.czxid);
                self.have_id(path, cx);
            }
            (Wait::List(id), Ok(Response::Children { names, .. })) if id == op => {
                self.on_list(names, cx)
            }
            (Wait::WatchLess(id, path), Ok(_)) if id == op => {
                // Registered whether or not the node exists (S14); false either way.
                self.watchers.push(path);
                self.watchers.sort();
                self.finish(Outcome::False, cx);
            }
            (Wait::Fence(id), reply) if id == op => {
                if let Ok(Response::Exists(Some(stat))) = reply {
                    self.fence = Some(stat.czxid);
                }
                // The callback already ran in Java; report it with what we know.
                let fence = self.fence.unwrap_or(0);
                self.app.acquired(fence, cx);
                let hold = self.app.hold_ticks();
                self.alarms.set(Alarm::Hold, hold, cx);
                self.run = None;
                self.next_on_monitor(cx);
            }
            (Wait::Delete(id), _) if id == op => self.unlocked(cx),
            (
                Wait::EnsureExists(id)
                | Wait::EnsureCreate(id)
                | Wait::FindPrefix(id)
                | Wait::Create(id)
                | Wait::List(id)
                | Wait::WatchLess(id, _),
                Err(err),
            ) if id == op => self.on_error(err, cx),
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        let before = self.watchers.len();
        self.watchers.retain(|p| *p != event.path);
        let fired = before - self.watchers.len();
        self.watchers_fired(fired, cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        // ZKWatchManager hands a connection-state event to every registered watcher.
        let fired = self.watchers.len();
        if event == SessionEvent::Expired {
            self.watchers.clear();
        }
        self.watchers_fired(fired, cx);
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        for alarm in self.alarms.take_due(cx) {
            match alarm {
                Alarm::Hold if matches!(self.app.stage(), Stage::Holding { .. }) => {
                    self.app.hold_over(cx);
                    self.unlock(cx);
                }
                Alarm::Think if self.app.stage() == Stage::Thinking => {
                    self.app.request(cx);
                    self.enqueued = false;
                    self.call_lock(true, cx);
                }
                Alarm::Retry if matches!(&self.run, Some(r) if r.wait == Wait::Sleep) => {
                    self.after_sleep(cx)
                }
                _ => {}
            }
        }
    }

    fn is_done(&self) -> bool {
        self.app.is_finished()
    }
}
