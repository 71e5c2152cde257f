//! Port of OuYangLiang's `DistributedLock` (seeds 000 and 001, "基于ZooKeeper的
//! 分布式锁(二)"), and the read/write lock the same article sketches.
//!
//! Line numbers are those of seed 001's own text, counted from its first
//! line (seed 000 is a garbled copy of the same code). What the article leaves out (`ensureResource`,
//! `parseSequence`, the read/write lock) comes from the source it links
//! (seed 001 line 245: OuYangLiang/ZK-lock, `DistributedLock.java` and
//! `ReadWriteLock.java`), read through the code index.
//!
//! | article line | Java | port |
//! |---|---|---|
//! | 28 (+ source) | `ensureResource`: `exists(root+resource)`; null → `create(…, PERSISTENT)`; `NODEEXISTS` → return; `CONNECTIONLOSS` on `exists` → call itself, **then fall through to `create`**; on `create` → call itself | `Exists` then `Create`, with the same recursion (a trailing `Create` after an `exists` loss) |
//! | 31 | `create(root+resource+"/lock-", clientId.getBytes(), EPHEMERAL_SEQUENTIAL)` | `Create` with data `client-<i>`; `Enqueued`, fence = czxid |
//! | 37 | create throws `CONNECTIONLOSS` → `lockOnConnectionLoss` | `GetChildren`, then look for our node by data |
//! | 46-51 | no node of ours found → `lock()` again | back to `ensureResource` + `Create` |
//! | 190-192 | `isClientIdMatch(path, clientId)` on each child, **last first** | `GetData` of each child, last first — but `path` is a bare child name from `getChildren`, and the Java client rejects it (`IllegalArgumentException`, S1): the port reports `GaveUp` there, as the Java `lock()` would throw |
//! | 70-77 | `while (true) { getChildren; isLocked? return; findWatchPath; watchAndWait }` | after each wakeup the port lists again |
//! | 116-123 (+ source) | sort by `parseSequence` = `Integer.parseInt(path.substring(path.length() - 10))` | sort by the number in the last 10 characters; a name it cannot parse (a negative suffix past 2^31, S6) throws → `GaveUp` |
//! | 127 | `getChildren` on `CONNECTIONLOSS` → call again | resend after one tick |
//! | 135-139 | locked iff my sequence == first sequence | same |
//! | 145-154 | watch `pathes.get(i-1)`; not found → `IllegalStateException` | `Exists{pred, watch}`; not found → `GaveUp` |
//! | 161-171 | `exists(target, watcher)`; only `NodeDeleted` releases the semaphore; null → list again | same; any other event on the target is swallowed (wait forever); session events ignored |
//! | 174-175 | `exists` on `CONNECTIONLOSS` → call again | resend after one tick |
//! | 91-101 | `release`: `delete(path,-1)`; `CONNECTIONLOSS` → call again; other errors thrown | resend after one tick; a `NoNode` on the retry (the first delete did apply) throws out of `release` → `Released` (see `app`) |
//!
//! Read/write lock (seed 001 lines 224-243, "将上面的实现稍作修改"; the code
//! is the linked `ReadWriteLock.java`): the same skeleton with `readlock-` /
//! `writelock-` nodes; a reader holds when no `writelock-` child has a lower
//! sequence, else watches the nearest lower writer; a writer holds when
//! first, else watches the child just before it. Odd clients read, even
//! clients write.
//!
//! Expected bugs:
//! - **liveness / queue-jam**: a `ConnectionLoss` on the create with any child
//!   present ends in `IllegalArgumentException` (bare name to `getData`):
//!   the client gives up. If its create *did* apply, the orphan lives until
//!   the session closes (at once for the *exit and close* program; for good
//!   for `seed001-ouyang-lock-keep`).
//! - **leaks / liveness**: the same recovery listing (line 46) run on a
//!   follower that has not applied the create finds *no* children, so
//!   `findMyNodeOnConnectionLoss` returns null (lines 185-187) and `lock()`
//!   creates a second node: the first stays in the live session, first in
//!   line, whatever the program (`ouyang-lock-faults.toml`).
//! - **mutex**: no reaction to `Disconnected`/`Expired` — a paused or
//!   partitioned holder keeps believing after its session expired.
//! - **liveness**: a waiter whose session expired keeps waiting on the
//!   semaphore forever (its watch died with the session;
//!   `ouyang-lock-waiter-expiry.toml`).
//! - **liveness**: a watched predecessor that gets any event other than
//!   `NodeDeleted` leaves the waiter stuck (not reachable with these recipes).
//! - herd, fifo: expected to hold (predecessor watch, sequence sort).

use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, WatchedEvent,
    ZkError,
};

use super::app::{java_rejects_path, Alarms, App, Caller, Stage};
use crate::{AppEvent, Recipe, RecipeParams};

/// Java's recursive `call again` on `CONNECTIONLOSS`: one tick later, so that
/// simulated time moves while the connection is down.
const RETRY_TICKS: u64 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Alarm {
    Hold,
    Think,
    Retry,
}

/// Why the children are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ListFor {
    /// `waitUntilLocked`
    Wait,
    /// `lockOnConnectionLoss`
    Recover,
}

/// The Java call whose reply the port is waiting for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Call {
    /// `ensureResource`'s `exists`.
    EnsureExists,
    /// `ensureResource`'s `create`.
    EnsureCreate,
    Create,
    List(ListFor),
    /// `isClientIdMatch(names[idx])`, scanning `names` from the end.
    MatchData {
        names: Vec<String>,
        idx: usize,
    },
    WatchAndWait,
    Release,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    Idle,
    /// `op` was sent for `call`; `sent` is kept to resend it after a `CONNECTIONLOSS`.
    Pending {
        op: OpId,
        call: Call,
        sent: Op,
    },
    /// Waiting one tick before resending.
    Backoff {
        call: Call,
        sent: Op,
    },
    /// `s.acquire()` on the semaphore of the watcher set on `target`.
    Waiting {
        target: String,
    },
}

/// Which lock a client takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Side {
    Exclusive,
    Read,
    Write,
}

/// OuYangLiang's lock; `RW = true` for the read/write variant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OuYangLock<const RW: bool, const KEEP: bool = false> {
    app: App,
    alarms: Alarms<Alarm>,
    side: Side,
    /// `root + resource`
    dir: String,
    client_id: String,
    my_path: Option<String>,
    fence: i64,
    step: Step,
    /// `ensureResource` frames that will fall through to `create` when the
    /// recursive call they made (after an `exists` loss) returns.
    trailing_creates: u32,
}

/// The exclusive lock of seed 000/001.
pub type OuYangMutex = OuYangLock<false>;
/// The exclusive lock, used by a program that keeps its session when
/// `lock()` throws (the lock object's `zk` belongs to its owner).
pub type OuYangMutexKeepSession = OuYangLock<false, true>;
/// The read/write lock of seed 001 (odd clients read).
pub type OuYangRwLock = OuYangLock<true>;

impl<const RW: bool, const KEEP: bool> Recipe for OuYangLock<RW, KEEP> {
    const FAMILY: crate::Family = if RW {
        crate::Family::RwLock
    } else {
        crate::Family::Lock
    };
    fn new(p: &RecipeParams) -> Self {
        let side = match (RW, p.client % 2) {
            (false, _) => Side::Exclusive,
            (true, 1) => Side::Read,
            (true, _) => Side::Write,
        };
        OuYangLock {
            app: App::new(p.workload, side == Side::Read).with_caller(if KEEP {
                Caller::ExitKeepSession
            } else {
                Caller::ExitAndClose
            }),
            alarms: Alarms::default(),
            side,
            dir: p.root.clone(),
            client_id: format!("client-{}", p.client),
            my_path: None,
            fence: 0,
            step: Step::Idle,
            trailing_creates: 0,
        }
    }
}

impl<const RW: bool, const KEEP: bool> OuYangLock<RW, KEEP> {
    fn node_prefix(&self) -> &'static str {
        match self.side {
            Side::Exclusive => "lock-",
            Side::Read => "readlock-",
            Side::Write => "writelock-",
        }
    }

    fn send(&mut self, call: Call, sent: Op, cx: &mut Cx<AppEvent>) {
        let op = cx.send(sent.clone());
        self.step = Step::Pending { op, call, sent };
    }

    fn backoff(&mut self, call: Call, sent: Op, cx: &mut Cx<AppEvent>) {
        self.step = Step::Backoff { call, sent };
        self.alarms.set(Alarm::Retry, RETRY_TICKS, cx);
    }

    /// An exception escapes from `lock()`.
    fn thrown(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.app.gave_up(cx);
    }

    /// `lock()`: `ensureResource` then `create`.
    fn lock(&mut self, cx: &mut Cx<AppEvent>) {
        self.trailing_creates = 0;
        self.ensure_resource(cx);
    }

    fn ensure_resource(&mut self, cx: &mut Cx<AppEvent>) {
        let sent = Op::Exists {
            path: self.dir.clone(),
            watch: false,
        };
        self.send(Call::EnsureExists, sent, cx);
    }

    fn ensure_create(&mut self, cx: &mut Cx<AppEvent>) {
        let sent = Op::Create {
            path: self.dir.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        self.send(Call::EnsureCreate, sent, cx);
    }

    /// An `ensureResource` frame returns: the caller frame falls through to
    /// its `create`, or `lock()` goes on.
    fn ensure_returned(&mut self, cx: &mut Cx<AppEvent>) {
        if self.trailing_creates > 0 {
            self.trailing_creates -= 1;
            self.ensure_create(cx);
        } else {
            self.create(cx);
        }
    }

    fn create(&mut self, cx: &mut Cx<AppEvent>) {
        let sent = Op::Create {
            path: format!("{}/{}", self.dir, self.node_prefix()),
            data: self.client_id.as_bytes().to_vec(),
            mode: CreateMode::EphemeralSequential,
        };
        self.send(Call::Create, sent, cx);
    }

    /// The private `getChildren(resource)`.
    fn list(&mut self, why: ListFor, cx: &mut Cx<AppEvent>) {
        let sent = Op::GetChildren {
            path: self.dir.clone(),
            watch: false,
        };
        self.send(Call::List(why), sent, cx);
    }

    /// `isClientIdMatch(path, …)` for `names[idx]`: `zk.getData(path, …)` with
    /// a bare name, which the Java client refuses before sending.
    fn match_data(&mut self, names: Vec<String>, idx: usize, cx: &mut Cx<AppEvent>) {
        let path = names[idx].clone();
        if java_rejects_path(&path) {
            return self.thrown(cx); // IllegalArgumentException
        }
        let sent = Op::GetData { path, watch: false };
        self.send(Call::MatchData { names, idx }, sent, cx);
    }

    /// Sort as the article's comparator does; `None` where `parseSequence` throws.
    fn sorted(names: Vec<String>) -> Option<Vec<(i32, String)>> {
        let mut seqs = names
            .into_iter()
            .map(|n| parse_sequence(&n).map(|s| (s, n)))
            .collect::<Option<Vec<_>>>()?;
        seqs.sort_by_key(|(s, _)| *s); // stable, like Collections.sort
        Some(seqs)
    }

    /// One turn of `waitUntilLocked`'s loop after `getChildren` returned.
    fn wait_until_locked(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) {
        let Some(my_path) = self.my_path.clone() else {
            return self.thrown(cx);
        };
        let Some(my_seq) = parse_sequence(&my_path) else {
            return self.thrown(cx);
        };
        let Some(sorted) = Self::sorted(names) else {
            return self.thrown(cx);
        };
        let Some((first_seq, _)) = sorted.first() else {
            return self.thrown(cx); // pathes.get(0) on an empty list
        };
        let target = match self.side {
            Side::Exclusive | Side::Write => {
                if my_seq == *first_seq {
                    return self.locked(cx);
                }
                // findWatchPath: from the end, the entry before ours.
                let prefix_len = self.dir.len() + 1;
                let mine = my_path.get(prefix_len..).unwrap_or("");
                let Some(i) = sorted.iter().rposition(|(_, n)| n == mine) else {
                    return self.thrown(cx); // IllegalStateException
                };
                match i.checked_sub(1) {
                    Some(j) => sorted[j].1.clone(),
                    None => return self.thrown(cx),
                }
            }
            Side::Read => {
                let writer = sorted
                    .iter()
                    .rfind(|(s, n)| n.starts_with("writelock-") && *s < my_seq);
                match writer {
                    None => return self.locked(cx),
                    Some((_, n)) => n.clone(),
                }
            }
        };
        let sent = Op::Exists {
            path: format!("{}/{}", self.dir, target),
            watch: true,
        };
        self.send(Call::WatchAndWait, sent, cx);
    }

    fn locked(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.app.acquired(self.fence, cx);
        let hold = self.app.hold_ticks();
        self.alarms.set(Alarm::Hold, hold, cx);
    }

    fn release(&mut self, cx: &mut Cx<AppEvent>) {
        self.app.hold_over(cx);
        let Some(path) = self.my_path.clone() else {
            return self.released(cx);
        };
        self.send(Call::Release, Op::Delete { path, version: -1 }, cx);
    }

    fn released(&mut self, cx: &mut Cx<AppEvent>) {
        self.step = Step::Idle;
        self.my_path = None;
        if self.app.release_returned(cx) {
            let think = self.app.think_ticks();
            self.alarms.set(Alarm::Think, think, cx);
        }
    }

    fn handle(&mut self, call: Call, sent: Op, reply: Reply, cx: &mut Cx<AppEvent>) {
        use ZkError::{ConnectionLoss, NoNode, NodeExists};
        match (call, reply) {
            (Call::EnsureExists, Ok(Response::Exists(Some(_)))) => self.ensure_returned(cx),
            (Call::EnsureExists, Ok(_)) => self.ensure_create(cx),
            (Call::EnsureExists, Err(ConnectionLoss)) => {
                // this.ensureResource(…) inside the catch, then on to create.
                self.trailing_creates += 1;
                self.backoff(Call::EnsureExists, sent, cx);
            }
            (Call::EnsureCreate, Ok(_) | Err(NodeExists)) => self.ensure_returned(cx),
            (Call::EnsureCreate, Err(ConnectionLoss)) => {
                // this.ensureResource(…) and return.
                let exists = Op::Exists {
                    path: self.dir.clone(),
                    watch: false,
                };
                self.backoff(Call::EnsureExists, exists, cx);
            }
            (Call::Create, Ok(Response::Created { path, stat })) => {
                cx.emit(AppEvent::Enqueued {
                    seq: parse_sequence(&path).map(i64::from),
                });
                self.my_path = Some(path);
                self.fence = stat.czxid;
                self.list(ListFor::Wait, cx);
            }
            (Call::Create, Err(ConnectionLoss)) => self.list(ListFor::Recover, cx),
            (Call::List(why), Ok(Response::Children { names, .. })) => match why {
                ListFor::Wait => self.wait_until_locked(names, cx),
                ListFor::Recover => match Self::sorted(names) {
                    None => self.thrown(cx),
                    Some(sorted) if sorted.is_empty() => self.lock(cx),
                    Some(sorted) => {
                        let names: Vec<String> = sorted.into_iter().map(|(_, n)| n).collect();
                        let last = names.len() - 1;
                        self.match_data(names, last, cx);
                    }
                },
            },
            (Call::MatchData { names, idx }, reply) => {
                let matched = match reply {
                    Ok(Response::Data { data, stat }) if data == self.client_id.as_bytes() => {
                        Some(stat.czxid)
                    }
                    Ok(_) | Err(NoNode) => None,
                    Err(_) => return self.thrown(cx),
                };
                match (matched, idx.checked_sub(1)) {
                    (Some(czxid), _) => {
                        self.my_path = Some(names[idx].clone());
                        self.fence = czxid;
                        self.list(ListFor::Wait, cx);
                    }
                    (None, Some(prev)) => self.match_data(names, prev, cx),
                    (None, None) => self.lock(cx),
                }
            }
            (Call::WatchAndWait, Ok(Response::Exists(Some(_)))) => {
                self.step = Step::Waiting {
                    target: sent.path().to_string(),
                }
            }
            (Call::WatchAndWait, Ok(Response::Exists(None))) => self.list(ListFor::Wait, cx),
            (Call::Release, Ok(_)) => self.released(cx),
            (Call::Release, Err(ConnectionLoss)) => self.backoff(Call::Release, sent, cx),
            // Any other release error is thrown out of release().
            (Call::Release, Err(_)) => self.released(cx),
            (call @ (Call::List(_) | Call::WatchAndWait), Err(ConnectionLoss)) => {
                self.backoff(call, sent, cx)
            }
            _ => self.thrown(cx),
        }
    }
}

impl<const RW: bool, const KEEP: bool> Client for OuYangLock<RW, KEEP> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        if self.app.workload().rounds == 0 {
            self.app.abandon();
            cx.close_session();
            return;
        }
        self.app.request(cx);
        self.lock(cx);
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Pending { op: id, call, sent } if id == op => self.handle(call, sent, reply, cx),
            other => self.step = other,
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if let Step::Waiting { target } = &self.step {
            if *target == event.path && event.kind == EventType::NodeDeleted {
                self.list(ListFor::Wait, cx);
            }
        }
    }

    fn on_session(&mut self, _: SessionEvent, _: &mut Cx<AppEvent>) {
        // The article's watchers look at NodeDeleted only.
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        for alarm in self.alarms.take_due(cx) {
            match alarm {
                Alarm::Hold if matches!(self.app.stage(), Stage::Holding { .. }) => {
                    self.release(cx)
                }
                Alarm::Think if self.app.stage() == Stage::Thinking => {
                    self.app.request(cx);
                    self.lock(cx);
                }
                Alarm::Retry => {
                    if let Step::Backoff { call, sent } =
                        std::mem::replace(&mut self.step, Step::Idle)
                    {
                        self.send(call, sent, cx);
                    }
                }
                _ => {}
            }
        }
    }

    fn is_done(&self) -> bool {
        self.app.is_finished()
    }
}

/// `parseSequence`: `Integer.parseInt(path.substring(path.length() - 10))`;
/// `None` where Java throws (shorter name, or not an `int`).
fn parse_sequence(path: &str) -> Option<i32> {
    let start = path.len().checked_sub(10)?;
    path.get(start..)?.parse::<i32>().ok()
}
