//! Seed 004's `ZkLock` (常见分布式锁4), its handoff as printed:
//!
//! ```java
//! // getLock(), after create + getChildren + sort:
//! zooKeeper.exists("/"+businessCode+"/"+lastNode, true);   // default watcher = this
//! synchronized (this) { wait(); }
//! return true;
//! // the default watcher:
//! public void process(WatchedEvent event) {
//!     if (event.getType() == Event.EventType.NodeDeleted) {
//!         synchronized (this) { notify(); }
//!     }
//! }
//! ```
//!
//! `wait()` is called once, not in a loop around a condition, and nothing
//! records that the notification happened: if the event thread runs
//! `process` after `exists` returned but before the caller is inside
//! `wait()`, the `notify()` finds no waiter and is lost; the caller then
//! waits forever for a node that is already gone. (Java also allows
//! spurious wakeups, after which the caller "holds" the lock with its
//! predecessor still there.)
//!
//! Corrected: `process` sets a `deleted` flag under the monitor before
//! `notify()`, and the caller waits `while (!deleted)` — and does not wait
//! at all when `exists` found nothing.

use super::fakezk::{FakeZk, SessionExpired, WatcherId, ZkEvent};
use super::Form;
use crate::sync::{self, Condvar, Mutex};
use crate::trace::note;

/// The `ZkLock` object: its monitor (`synchronized (this)`) and the flag
/// the corrected form adds.
#[derive(Debug)]
pub struct ZkLock004 {
    form: Form,
    /// `deleted` (only [`Form::Corrected`] reads it).
    monitor: Mutex<bool>,
    notified: Condvar,
}

/// The watcher id `ZkLock` registers itself under (it is its own default watcher).
pub const THIS: WatcherId = 0;

impl ZkLock004 {
    pub fn new(form: Form) -> Self {
        ZkLock004 {
            form,
            monitor: Mutex::new(false),
            notified: Condvar::new(),
        }
    }

    /// The end of `getLock`: watch `last_node` and wait; returns what
    /// `getLock` returns (`true`: the caller believes it holds the lock).
    pub fn watch_and_wait(&self, zk: &FakeZk, last_node: &str) -> Result<bool, SessionExpired> {
        let present = zk.exists(last_node, Some(THIS))?;
        note(format!(
            "caller: exists({last_node}, true) = {present}; next: synchronized(this) {{ wait(); }}"
        ));
        let mut deleted = sync::lock(&self.monitor);
        match self.form {
            Form::AsPrinted => {
                deleted = self
                    .notified
                    .wait(deleted)
                    .unwrap_or_else(|e| e.into_inner());
            }
            Form::Corrected => {
                if present {
                    while !*deleted {
                        deleted = self
                            .notified
                            .wait(deleted)
                            .unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
        }
        drop(deleted);
        note("caller: woke from wait(); getLock returns true");
        Ok(true)
    }

    /// `process(event)` on the event thread.
    pub fn process(&self, event: &ZkEvent) {
        if let ZkEvent::NodeDeleted(path) = event {
            note(format!(
                "event thread: process(NodeDeleted {path}) -> synchronized(this) {{ notify(); }}"
            ));
            let mut deleted = sync::lock(&self.monitor);
            *deleted = true;
            self.notified.notify_one();
        }
    }
}
