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
//! **The program around it** ([`super::app::Caller`]). The article shows
//! `lock()` and a `LockListener`, not the program. Two are registered:
//! - the default (`seed002-writelock`, `seed003-apache-writelock`): an
//!   exception from `lock()` ends the program, which closes its handle; an
//!   exception from `unlock()` is logged and the program goes on to its next
//!   round (it carries on).
//! - `KEEP = true` (`seed002-writelock-keep`): *exit, keep the session* — the
//!   `WriteLock` was handed a `ZooKeeper` that belongs to its owner, so an
//!   exception from `lock()` **or from `unlock()`** ends the program's thread
//!   and the session lives on. `unlock()` sends its `delete` once (line 158),
//!   rethrows a `ConnectionLoss` (lines 171-175) and in `finally` forgets the
//!   node (`id = null`, lines 177-182): a delete lost with the connection is
//!   never sent again and the node stays, first in line, for the session's
//!   life. (The dead program's `LockWatcher`s would still run on the live
//!   handle; a finished program's are not run here — the holder that threw
//!   from `unlock()` has none registered unless a connection event left one.)
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

use self::protocol::Outcome;
use super::app::{Alarms, App, Caller, Stage};
use super::znode_name::ZNodeName;
use crate::{AppEvent, Recipe, RecipeParams};

mod protocol;

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

/// Apache `WriteLock`; see the module doc for the variants (`KEEP`: the
/// program keeps its session when a call throws).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WriteLock<const ORIGINAL: bool, const KEEP: bool = false> {
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
/// The article's fixed copy in a program that keeps its session when
/// `lock()` or `unlock()` throws.
pub type ArticleWriteLockKeep = WriteLock<false, true>;

impl<const ORIGINAL: bool, const KEEP: bool> Recipe for WriteLock<ORIGINAL, KEEP> {
    const FAMILY: crate::Family = crate::Family::Lock;
    fn new(p: &RecipeParams) -> Self {
        let caller = if KEEP {
            Caller::ExitKeepSession
        } else {
            Caller::ExitAndClose
        };
        WriteLock {
            app: App::new(p.workload, false).with_caller(caller),
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

impl<const ORIGINAL: bool, const KEEP: bool> Client for WriteLock<ORIGINAL, KEEP> {
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
            (Wait::Delete(id), reply) if id == op => match reply {
                // `catch (KeeperException e) { throw … }` (lines 171-175):
                // only the program that keeps its session stops on it.
                Err(e) if KEEP && e != ZkError::NoNode => self.unlock_threw(cx),
                _ => self.unlocked(cx),
            },
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
