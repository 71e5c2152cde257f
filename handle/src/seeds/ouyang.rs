//! Seeds 000 and 001 (基于ZooKeeper的分布式锁 (二)): `waitUntilLocked` and
//! `watchAndWait`, as printed:
//!
//! ```java
//! private void waitUntilLocked(String myPath, ...) {
//!     while (true) {
//!         List<String> pathes = this.getChildren(resource);
//!         if (this.isLocked(myPath, pathes)) { return; }
//!         else { this.watchAndWait(this.findWatchPath(myPath, pathes, resource)); }
//!     }
//! }
//! private void watchAndWait(String target) {
//!     Semaphore s = new Semaphore(0);
//!     Stat stat = zk.exists(target, new Watcher() {
//!         public void process(WatchedEvent event) {
//!             if (event.getType().equals(EventType.NodeDeleted)) { s.release(); }
//!         }
//!     });
//!     if (null != stat) { s.acquire(); }
//! }
//! ```
//!
//! The handoff itself is sound: a semaphore remembers a `release()` that
//! comes before `acquire()`, and the caller re-lists after every wakeup. But
//! the watcher only listens for `NodeDeleted`: when the session expires
//! while the caller is in `s.acquire()`, the Java client delivers `Expired`
//! to this watcher (every registered watcher hears a session's end) and it
//! is ignored; no `NodeDeleted` can come on a dead session, so the caller
//! blocks forever instead of learning that its node is gone.
//!
//! Corrected: the watcher releases the semaphore on every event; the loop
//! re-lists, `getChildren` throws `SessionExpiredException`, and the caller
//! learns.

use super::fakezk::{FakeZk, SessionExpired, WatcherId, ZkEvent};
use super::{Form, Semaphore};
use crate::sync::{self, Arc, Mutex};
use crate::trace::note;

/// The lock object: one anonymous watcher (and its semaphore) per
/// `watchAndWait` call, by watcher id.
#[derive(Debug)]
pub struct DistributedLock {
    form: Form,
    watchers: Mutex<Vec<Arc<Semaphore>>>,
}

impl DistributedLock {
    pub fn new(form: Form) -> Self {
        DistributedLock {
            form,
            watchers: Mutex::new(Vec::new()),
        }
    }

    /// `waitUntilLocked(myPath)` over the children of `dir`.
    pub fn wait_until_locked(
        &self,
        zk: &FakeZk,
        dir: &str,
        my_path: &str,
    ) -> Result<(), SessionExpired> {
        loop {
            let pathes = zk.children(dir, None)?;
            note(format!("caller: getChildren({dir}) = {pathes:?}"));
            if pathes.first().map(String::as_str) == Some(my_path) {
                note("caller: isLocked -> holds the lock");
                return Ok(());
            }
            let at = pathes.iter().position(|p| p == my_path);
            let target = match at {
                Some(i) if i > 0 => pathes[i - 1].clone(),
                // findWatchPath throws IllegalStateException: our node is gone.
                _ => return Err(SessionExpired),
            };
            self.watch_and_wait(zk, &target)?;
        }
    }

    fn watch_and_wait(&self, zk: &FakeZk, target: &str) -> Result<(), SessionExpired> {
        let s = Arc::new(Semaphore::new(0));
        let id: WatcherId = {
            let mut w = sync::lock(&self.watchers);
            w.push(Arc::clone(&s));
            w.len() - 1
        };
        let stat = zk.exists(target, Some(id))?;
        note(format!(
            "caller: exists({target}, watcher {id}) = {stat}; {}",
            if stat { "s.acquire()" } else { "not waiting" }
        ));
        if stat {
            s.acquire();
            note(format!("caller: s.acquire() returned (watcher {id})"));
        }
        Ok(())
    }

    /// The anonymous watcher `id`'s `process(event)`, on the event thread.
    pub fn process(&self, id: WatcherId, event: &ZkEvent) {
        let s = Arc::clone(&sync::lock(&self.watchers)[id]);
        let release = match self.form {
            Form::AsPrinted => matches!(event, ZkEvent::NodeDeleted(_)),
            Form::Corrected => true,
        };
        note(format!(
            "event thread: watcher {id} process({event:?}) -> {}",
            if release { "s.release()" } else { "ignored" }
        ));
        if release {
            s.release();
        }
    }
}
