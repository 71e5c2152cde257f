//! `WriteLock`'s synchronous methods as steps: `lock()` with its two
//! `retryOperation`s, `execute()`'s do-loop, `unlock()`, and the object
//! monitor that serializes them. See the parent module for the line table.

use zksim::{CreateMode, Cx, Op, ZkError};

use super::{Alarm, Phase, Run, Wait, WriteLock, DATA, RETRY_COUNT, RETRY_DELAY_TICKS};
use crate::seeds::app::{java_parse_int_after, java_rejects_path, Stage};
use crate::seeds::znode_name::{head_set, tree_set, NameOrder, ZNodeName};
use crate::AppEvent;

/// How a `lock()` run ended.
pub(super) enum Outcome {
    True,
    False,
    Thrown,
}

impl<const ORIGINAL: bool, const KEEP: bool> WriteLock<ORIGINAL, KEEP> {
    pub(super) fn order() -> NameOrder {
        if ORIGINAL {
            NameOrder::PrefixFirst
        } else {
            NameOrder::SequenceOnly
        }
    }

    /// Someone calls `lock()`: run now or block on the monitor.
    pub(super) fn call_lock(&mut self, by_app: bool, cx: &mut Cx<AppEvent>) {
        if self.run.is_some() {
            self.queued_locks.push(by_app);
        } else {
            self.start_lock(by_app, cx);
        }
    }

    pub(super) fn start_lock(&mut self, by_app: bool, cx: &mut Cx<AppEvent>) {
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

    pub(super) fn set_wait(&mut self, wait: Wait) {
        if let Some(run) = &mut self.run {
            run.wait = wait;
        }
    }

    /// The top of `execute()`'s do-loop.
    pub(super) fn execute(&mut self, cx: &mut Cx<AppEvent>) {
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
    pub(super) fn have_id(&mut self, id: String, cx: &mut Cx<AppEvent>) {
        self.id_name = Some(ZNodeName::new(&id));
        self.id = Some(id);
        self.execute(cx);
    }

    pub(super) fn on_find_prefix(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) {
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
    pub(super) fn report_enqueued(&mut self, path: &str, cx: &mut Cx<AppEvent>) {
        if self.app.stage() == Stage::Acquiring && !self.enqueued {
            self.enqueued = true;
            cx.emit(AppEvent::Enqueued {
                seq: java_parse_int_after(path, '-').map(i64::from),
            });
        }
    }

    pub(super) fn on_list(&mut self, names: Vec<String>, cx: &mut Cx<AppEvent>) {
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

    pub(super) fn is_owner(&self) -> bool {
        matches!((&self.id, &self.owner_id), (Some(id), Some(owner)) if id == owner)
    }

    /// `retryOperation`'s catch blocks.
    pub(super) fn on_error(&mut self, err: ZkError, cx: &mut Cx<AppEvent>) {
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
    pub(super) fn after_sleep(&mut self, cx: &mut Cx<AppEvent>) {
        match &self.run {
            Some(r) if r.attempt >= RETRY_COUNT => self.give_up_phase(cx),
            Some(_) => self.retry(cx),
            None => {}
        }
    }

    /// `retryOperation` throws.
    pub(super) fn give_up_phase(&mut self, cx: &mut Cx<AppEvent>) {
        let Some(run) = self.run.clone() else { return };
        match run.phase {
            // ensureExists logs every KeeperException; lock() goes on.
            Phase::Ensure => self.begin_zop(cx),
            Phase::Zop => self.finish(Outcome::Thrown, cx),
        }
    }

    pub(super) fn begin_zop(&mut self, cx: &mut Cx<AppEvent>) {
        if let Some(r) = &mut self.run {
            r.phase = Phase::Zop;
            r.attempt = 0;
        }
        self.execute(cx);
    }

    /// Re-run the operation of the current phase from its start.
    pub(super) fn retry(&mut self, cx: &mut Cx<AppEvent>) {
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
    pub(super) fn finish(&mut self, outcome: Outcome, cx: &mut Cx<AppEvent>) {
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
            // A `LockWatcher` left from an earlier round ran `lock()` between
            // rounds (seed 002 lines 192-203, after `unlock()`'s `finally` set
            // `id = null`, lines 177-182): it created a node, found it first and
            // called `callback.lockAcquired()` (line 303) though the program
            // has not asked. The listener is told; the program is not waiting.
            Outcome::True if self.app.stage() == Stage::Thinking => {
                cx.emit(AppEvent::Acquired {
                    fence: self.fence.unwrap_or(0),
                    shared: false,
                });
            }
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

    pub(super) fn next_on_monitor(&mut self, cx: &mut Cx<AppEvent>) {
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

    pub(super) fn unlock(&mut self, cx: &mut Cx<AppEvent>) {
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
    pub(super) fn unlocked(&mut self, cx: &mut Cx<AppEvent>) {
        self.id = None;
        self.fence = None;
        self.run = None;
        if self.app.release_returned(cx) {
            let think = self.app.think_ticks();
            self.alarms.set(Alarm::Think, think, cx);
        }
        self.next_on_monitor(cx);
    }

    /// `unlock()` threw after its `finally` (`lockReleased(); id = null`):
    /// the program that keeps its session stops, the handle stays open, and
    /// the node whose delete was lost stays with it (module doc).
    pub(super) fn unlock_threw(&mut self, cx: &mut Cx<AppEvent>) {
        self.id = None;
        self.fence = None;
        self.run = None;
        self.alarms.clear(&Alarm::Think, cx);
        self.app.abandon();
    }

    /// Each registered `LockWatcher` in `fired` calls `lock()`.
    pub(super) fn watchers_fired(&mut self, fired: usize, cx: &mut Cx<AppEvent>) {
        if self.app.is_finished() {
            return; // the handle is closed: nothing more reaches the watchers
        }
        for _ in 0..fired {
            self.call_lock(false, cx);
        }
    }
}
