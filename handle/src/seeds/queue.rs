//! Seed 002's `DistributedQueue.take()` (Apache ZooKeeper's recipe), its
//! handoff as printed:
//!
//! ```java
//! while (true) {
//!     LatchChildWatcher childWatcher = new LatchChildWatcher();   // CountDownLatch(1)
//!     orderedChildren = orderedChildren(childWatcher);           // getChildren(dir, childWatcher)
//!     if (orderedChildren.size() == 0) { childWatcher.await(); continue; }
//!     for (String headNode : orderedChildren.values()) { ... zookeeper.delete(path, -1); return data; }
//! }
//! // LatchChildWatcher.process(event): latch.countDown();   -- for any event
//! ```
//!
//! Sound in-process: the watch is set by the same call that reads the
//! children, a latch remembers a count-down that comes before `await()`,
//! a fresh latch per round cannot be confused with an old one, and the loop
//! re-lists after every wakeup, whatever woke it (a session event included:
//! the next `getChildren` throws). The on-the-wire bugs of this recipe (a
//! lost `delete` reply) are the simulator's business.

use super::fakezk::{FakeZk, SessionExpired, WatcherId, ZkEvent};
use super::Latch;
use crate::sync::{self, Arc, Mutex};
use crate::trace::note;

/// The queue object: one `LatchChildWatcher` per round, by watcher id.
#[derive(Debug, Default)]
pub struct DistributedQueue {
    watchers: Mutex<Vec<Arc<Latch>>>,
}

impl DistributedQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// `take()`: the head item's path.
    pub fn take(&self, zk: &FakeZk, dir: &str) -> Result<String, SessionExpired> {
        loop {
            let latch = Arc::new(Latch::new(1));
            let id: WatcherId = {
                let mut w = sync::lock(&self.watchers);
                w.push(Arc::clone(&latch));
                w.len() - 1
            };
            let children = zk.children(dir, Some(id))?;
            note(format!(
                "consumer: getChildren({dir}, watcher {id}) = {children:?}"
            ));
            match children.first() {
                None => {
                    latch.wait();
                    note(format!("consumer: latch {id} counted down; listing again"));
                }
                Some(head) => {
                    zk.delete(head, super::fakezk::Owner::Ours)?;
                    note(format!("consumer: took {head}"));
                    return Ok(head.clone());
                }
            }
        }
    }

    /// `LatchChildWatcher.process(event)` on the event thread.
    pub fn process(&self, id: WatcherId, event: &ZkEvent) {
        note(format!(
            "event thread: watcher {id} process({event:?}) -> countDown()"
        ));
        let latch = Arc::clone(&sync::lock(&self.watchers)[id]);
        latch.count_down();
    }
}
