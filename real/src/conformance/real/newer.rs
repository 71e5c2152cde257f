//! The conductor's parts for the newer ops: the events of persistent
//! watches (S37) and waiting for the container reaper (S35).

use std::time::Duration;

use zookeeper_client as zk;

use super::{Conductor, ConductorError, Done, Outcome, STEP_LIMIT};

impl Conductor {
    /// Wait for the next event of a persistent watcher. Each server
    /// notification it hears is recorded once; scripts keep one library
    /// watcher per path and session (a one-shot and a persistent watcher
    /// both hearing one notification would record it twice).
    pub(super) fn push_persistent(&mut self, session: usize, mut watcher: zk::PersistentWatcher) {
        self.set.push(async move {
            let event = watcher.changed().await;
            Outcome::Persistent {
                session,
                event,
                watcher,
            }
        });
    }

    /// Poll `exists(path)` on session `k` (unrecorded) until the server's
    /// container reaper has deleted it (S35), handling what arrives meanwhile.
    pub(super) async fn await_reaped(
        &mut self,
        k: usize,
        step: usize,
        path: &str,
    ) -> Result<(), ConductorError> {
        let handle = self.slots[k]
            .handle
            .clone()
            .ok_or(ConductorError::Closed { step, session: k })?;
        let deadline = tokio::time::Instant::now() + STEP_LIMIT;
        loop {
            let gone = matches!(handle.check_stat(path).await, Ok(None));
            if gone {
                // Let the deletion's notifications reach this session too.
                self.set.push(async move {
                    let _ = handle.check_stat("/").await;
                    Outcome::Barrier { session: k }
                });
                return self.until(Done::Barrier(k)).await;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(ConductorError::NeverReaped {
                    step,
                    path: path.to_string(),
                });
            }
            // Handle whatever arrives while waiting (bounded: a short
            // barrier read each round).
            let barrier = handle.clone();
            self.set.push(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let _ = barrier.check_stat("/").await;
                Outcome::Barrier { session: k }
            });
            self.until(Done::Barrier(k)).await?;
        }
    }
}
