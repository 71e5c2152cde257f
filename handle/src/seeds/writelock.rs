//! Seed 002's `WriteLock` with a `LockListener` (Apache ZooKeeper's recipe as
//! the article prints it), its handoff:
//!
//! ```java
//! public synchronized boolean lock() {            // retryOperation(zop) → execute():
//!     do {
//!         if (id == null) { ... id = zookeeper.create(dir + "/x-" + sessionId + "-", EPHEMERAL_SEQUENTIAL); }
//!         if (id != null) {
//!             ... names = getChildren(dir); lessThanMe = sortedNames.headSet(idName);
//!             if (!lessThanMe.isEmpty()) {
//!                 Stat stat = zookeeper.exists(lastChildId, new LockWatcher());
//!                 if (stat != null) { return Boolean.FALSE; }
//!             } else if (isOwner()) { if (callback != null) { callback.lockAcquired(); } return Boolean.TRUE; }
//!         }
//!     } while (id == null);
//!     return Boolean.FALSE;
//! }
//! public synchronized void unlock() {
//!     if (!isClosed() && id != null) { try { zookeeper.delete(id, -1); } ... finally { callback.lockReleased(); id = null; } }
//! }
//! private class LockWatcher implements Watcher {
//!     public void process(WatchedEvent event) { try { lock(); } catch (Exception e) { LOG.warn(...); } }
//! }
//! ```
//!
//! The caller that gets `false` waits for `lockAcquired()` — the usual code
//! counts a latch down in it and `await(timeout)`s; its documented way to
//! give up is `unlock()`, which "also removes your request in the queue".
//! But `unlock()` cannot take back the `LockWatcher` already registered on
//! the predecessor: when that predecessor goes, the event thread calls
//! `lock()`, finds `id == null`, *creates a new node*, and — being first —
//! calls `lockAcquired()` for a caller that left. Nobody will ever unlock
//! that node: a timed-out acquire leaves a node behind, and it holds the
//! lock for as long as the session lives.
//!
//! Corrected: `lock()` from the watcher does nothing unless a caller still
//! wants the lock (`unlock()` clears the wish under the same monitor).

use super::fakezk::{FakeZk, Owner, SessionExpired, WatcherId, ZkEvent};
use super::Form;
use crate::sync::{self, AtomicUsize, Mutex, Ordering};
use crate::trace::note;

/// `LockListener`.
pub trait LockListener {
    fn lock_acquired(&self);
    fn lock_released(&self);
}

/// The `LockWatcher`s' id (they all do the same thing).
pub const LOCK_WATCHER: WatcherId = 0;

#[derive(Debug, Default)]
struct Fields {
    id: Option<String>,
    /// Only [`Form::Corrected`]: a caller asked and has not unlocked.
    wanted: bool,
}

/// `WriteLock` (the fields its handoff touches).
#[derive(Debug)]
pub struct WriteLock<L> {
    form: Form,
    dir: String,
    /// `synchronized` on the `WriteLock` object.
    monitor: Mutex<Fields>,
    callback: L,
    /// How many times `lockAcquired()` was called (for the models).
    acquired_calls: AtomicUsize,
}

impl<L: LockListener> WriteLock<L> {
    pub fn new(form: Form, dir: &str, callback: L) -> Self {
        WriteLock {
            form,
            dir: dir.to_string(),
            monitor: Mutex::new(Fields::default()),
            callback,
            acquired_calls: AtomicUsize::new(0),
        }
    }

    pub fn listener(&self) -> &L {
        &self.callback
    }

    pub fn lock_acquired_calls(&self) -> usize {
        self.acquired_calls.load(Ordering::SeqCst)
    }

    /// `lock()` called by the application.
    pub fn lock(&self, zk: &FakeZk) -> Result<bool, SessionExpired> {
        let mut f = sync::lock(&self.monitor);
        f.wanted = true;
        self.execute(zk, &mut f, "caller")
    }

    /// `LockWatcher.process(event)` on the event thread: `lock()` again.
    pub fn process(&self, zk: &FakeZk, event: &ZkEvent) {
        let mut f = sync::lock(&self.monitor);
        if self.form == Form::Corrected && !f.wanted {
            note(format!(
                "event thread: LockWatcher.process({event:?}): nobody wants the lock, ignored"
            ));
            return;
        }
        note(format!(
            "event thread: LockWatcher.process({event:?}) -> lock()"
        ));
        // Exceptions are caught and logged.
        let _ = self.execute(zk, &mut f, "event thread");
    }

    /// `unlock()`. Returns how many times `lockAcquired()` had been called
    /// when it ran (read under the monitor, for the models).
    pub fn unlock(&self, zk: &FakeZk) -> usize {
        let mut f = sync::lock(&self.monitor);
        f.wanted = false;
        if let Some(id) = f.id.take() {
            let _ = zk.delete(&id, Owner::Ours);
            note(format!(
                "caller: unlock(): delete({id}); lockReleased(); id = null"
            ));
            self.callback.lock_released();
        }
        self.acquired_calls.load(Ordering::SeqCst)
    }

    /// `LockZooKeeperOperation.execute()`, under the monitor.
    fn execute(&self, zk: &FakeZk, f: &mut Fields, who: &str) -> Result<bool, SessionExpired> {
        let id = match &f.id {
            Some(id) => id.clone(),
            None => {
                let id = zk.create_sequential(&format!("{}/x-", self.dir), Owner::Ours)?;
                note(format!("{who}: lock(): id == null, create -> {id}"));
                f.id = Some(id.clone());
                id
            }
        };
        let names = zk.children(&self.dir, None)?;
        match names.iter().rfind(|n| **n < id) {
            Some(last) => {
                let stat = zk.exists(last, Some(LOCK_WATCHER))?;
                // stat == null: "Could not find the stats for less than me"
                // and the do-while ends (id != null): false as well.
                note(format!(
                    "{who}: lock(): exists({last}, LockWatcher) = {stat} -> return false"
                ));
                Ok(false)
            }
            None => {
                note(format!(
                    "{who}: lock(): {id} is first -> lockAcquired(); return true"
                ));
                self.acquired_calls.fetch_add(1, Ordering::SeqCst);
                self.callback.lock_acquired();
                Ok(true)
            }
        }
    }
}
