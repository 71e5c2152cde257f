//! What each [`Step`] does on the real ensemble, and the reordering of a
//! broken connection's observations into the Java client's order.

use std::time::Duration;

use zksim::SessionEvent;

use super::{fail, Conductor, Done, EnsembleError, Link, Outcome};
use crate::conformance::Seen;
use crate::ensemble::script::{Raw, Role, Step};
use crate::ensemble::ENSEMBLE_TICK_MS;

impl Conductor<'_> {
    pub(super) async fn play(&mut self, i: usize, step: &Step) -> Result<(), EnsembleError> {
        match step {
            Step::Op(k, op) => {
                self.issue(*k, i, op.clone())?;
                self.until(Done::Answer(*k, i)).await?;
            }
            Step::Send(k, op) => {
                // Under a hold the server's answer is what shows it took
                // the op; otherwise the request reaching the wire.
                let held = self.slots[*k].held;
                let at = self.slots[*k].at;
                let seen = move |c: &Self| {
                    let proxy = &c.slots[*k].proxies[at];
                    if held {
                        proxy.replies_seen()
                    } else {
                        proxy.requests_seen()
                    }
                };
                let before = seen(self);
                self.issue(*k, i, op.clone())?;
                self.until_ready("the op on the wire", |c| seen(c) > before)
                    .await?;
            }
            &Step::HoldReplies(k) => {
                let slot = &mut self.slots[k];
                slot.proxies[slot.at].pause_replies();
                slot.held = true;
            }
            &Step::Lag(r) => {
                self.ensemble
                    .lag(self.roles[r], self.roles[0])
                    .map_err(EnsembleError)?;
                self.lagged[r] = true;
            }
            &Step::Unlag(r) => {
                self.ensemble.end_lag(self.roles[r], self.roles[0]);
                self.lagged[r] = false;
                self.until_ready("the lagged follower to catch up", |c| c.caught_up(r))
                    .await?;
                self.settle_at(r).await?;
            }
            &Step::Partition(r) => {
                self.ensemble.partition(self.roles[r]);
                self.partitioned[r] = true;
            }
            &Step::Heal(r) => {
                self.ensemble.end_partition(self.roles[r]);
                self.partitioned[r] = false;
                self.until_ready("the healed follower to catch up", |c| c.caught_up(r))
                    .await?;
                self.settle_at(r).await?;
            }
            &Step::Silence(k) => {
                for proxy in &self.slots[k].proxies {
                    proxy.refuse();
                    proxy.pause();
                }
                self.slots[k].silenced = true;
            }
            &Step::Drop(k) => {
                for proxy in &self.slots[k].proxies {
                    proxy.refuse();
                    proxy.drop_connections();
                    // Held answers are lost with the connection.
                    proxy.resume();
                }
                self.slots[k].held = false;
                let from = self.raw.len();
                self.until(Done::State(k, Link::Disconnected)).await?;
                // What was in flight fails with `ConnectionLoss`.
                while let Some(&step) = self.slots[k].in_flight.first() {
                    self.until(Done::Answer(k, step)).await?;
                }
                self.in_java_order(k, from);
            }
            &Step::Connect(k, r) => self.connect(k, r).await?,
            &Step::Sleep(n) => {
                let until =
                    tokio::time::Instant::now() + Duration::from_millis(n * ENSEMBLE_TICK_MS);
                while tokio::time::Instant::now() < until {
                    let left = until - tokio::time::Instant::now();
                    self.handle_next(left).await;
                }
            }
            &Step::AwaitSession(k, event) => {
                let link = match event {
                    SessionEvent::Disconnected => Link::Disconnected,
                    SessionEvent::SyncConnected => Link::Connected,
                    SessionEvent::Expired => Link::Expired,
                };
                self.until(Done::State(k, link)).await?;
            }
            &Step::AwaitWatch(k) => self.until(Done::Watch(k)).await?,
        }
        Ok(())
    }

    /// Put what session `k` saw since `from` (a broken connection) in the
    /// order the Java client and the simulator deliver it: the failed ops
    /// in the order sent, then `Disconnected` (`SendThread.cleanup`).
    /// `zookeeper-client` reports the state first and fails ops in
    /// `HashMap` order, an order that carries no information (as in the
    /// one-server conductor).
    fn in_java_order(&mut self, k: usize, from: usize) {
        let at: Vec<usize> = (from..self.raw.len())
            .filter(|&i| self.raw[i].1 == k)
            .collect();
        let mut mine: Vec<(usize, usize, Raw)> = at.iter().map(|&i| self.raw[i].clone()).collect();
        mine.sort_by_key(|(_, _, r)| match r {
            Raw::Seen(Seen::Reply { step, .. }) => (0, *step),
            Raw::Seen(Seen::Watch(_)) => (1, 0),
            Raw::Seen(Seen::Session(_)) | Raw::Refused => (2, 0),
        });
        for (i, entry) in at.into_iter().zip(mine) {
            self.raw[i] = entry;
        }
    }

    /// Let session `k` reach server `role` only; it connects (or learns
    /// `Expired`), or the server closes its attempts: refused.
    async fn connect(&mut self, k: usize, role: Role) -> Result<(), EnsembleError> {
        if self.slots[k].link != Link::Disconnected {
            return fail(format!("s{k} is not disconnected"));
        }
        if self.slots[k].silenced {
            // What the silence held on the old connection is lost with it.
            for proxy in &self.slots[k].proxies {
                proxy.drop_connections();
                proxy.resume();
            }
            self.slots[k].silenced = false;
        }
        let before = self.slots[k].proxies[role].refused_by_server();
        self.slots[k].proxies[role].admit();
        self.until_ready("a connection or a refusal", |c| {
            c.slots[k].link != Link::Disconnected
                || c.slots[k].proxies[role].refused_by_server() > before
        })
        .await?;
        self.slots[k].proxies[role].refuse();
        match self.slots[k].link {
            Link::Disconnected => self.raw.push((self.step, k, Raw::Refused)),
            Link::Connected => {
                self.slots[k].at = role;
                // What `SetWatches` brought back comes before this answer.
                let Some(handle) = self.slots[k].handle.clone() else {
                    return fail(format!("s{k} is closed"));
                };
                self.set.push(async move {
                    let _ = handle.check_stat("/").await;
                    Outcome::Barrier { session: k }
                });
                self.until(Done::Barrier(k)).await?;
            }
            Link::Expired | Link::Closed => {}
        }
        Ok(())
    }
}
