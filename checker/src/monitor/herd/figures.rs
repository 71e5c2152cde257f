//! Cost figures of a lock run, counted from its history alone.
//!
//! The input is a [`Happening`] log. Only the client-side part is needed —
//! `Sent`, `Delivered`, `App` (and `Taken` when there is one) — which both
//! the simulator and the real-server driver (`zkreal::drive`) write, so the
//! same numbers can be set side by side (`zkcheck compare`,
//! `real/examples/lock.rs`).
//!
//! The definitions are [`super::ledger`]'s, which the `herd` monitor uses
//! too, so the figures agree with it by construction. In short:
//! * a client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`;
//! * a **wakeup** is a node-watch event delivered to a waiting client;
//! * a **lock write** is a **release** (a `Released` event; the node it
//!   frees is the path of the last `Delete` the releasing client sent) or a
//!   **create** (a `create` whose reply named its node);
//! * **attribution**: a `NodeDeleted` wakeup belongs to the release that
//!   deleted exactly the node the woken client last saw at that path (same
//!   czxid); a `NodeChildrenChanged` one to the earliest release that
//!   deleted a child the client last listed; a `NodeCreated` one to the
//!   create of the node whose absence the client's `exists` saw (the first
//!   of that path after the releases it knew of). Other wakeups (an
//!   expiry's delete) belong to no write;
//! * a wakeup is **useful** when the woken client's next step in its wait is
//!   `Acquired`; otherwise (another wakeup, `GaveUp`, the end of the run) it
//!   is **wasted** — the herd;
//! * a **request** is any op a client sent.

use zksim::Happening;

use zkrecipes::AppEvent;

use super::ledger::WakeupLedger;

/// The figures of one run. See the module docs for what each counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockFigures {
    /// `Acquired` events.
    pub acquisitions: usize,
    /// `Released` events.
    pub releases: usize,
    /// Operations sent by any client.
    pub requests: usize,
    /// Node-watch events delivered to waiting clients.
    pub wakeups: usize,
    /// Wakeups that did not lead to the woken client acquiring.
    pub wasted_wakeups: usize,
    /// Waiters woken by each release, in release order.
    pub wakeups_per_release: Vec<usize>,
    /// Wasted wakeups of each release, in release order.
    pub wasted_per_release: Vec<usize>,
    /// Waiters woken by each create, in the order the creates' replies
    /// arrived (a client woken by its own create included).
    pub wakeups_per_create: Vec<usize>,
}

impl LockFigures {
    /// Count over a history (in the order it happened).
    pub fn from_log<'a, I>(log: I) -> Self
    where
        I: IntoIterator<Item = &'a Happening<AppEvent>>,
    {
        let mut counter = Counter::default();
        for happening in log {
            counter.observe(happening);
        }
        counter.finish()
    }

    /// The most waiters one release woke (0 when nothing was released).
    pub fn max_wakeups_per_release(&self) -> usize {
        self.wakeups_per_release.iter().copied().max().unwrap_or(0)
    }

    /// 0 when nothing was released.
    pub fn mean_wakeups_per_release(&self) -> f64 {
        ratio(
            self.wakeups_per_release.iter().sum(),
            self.wakeups_per_release.len(),
        )
    }

    /// Waiters woken by each lock write: every release, then every create.
    pub fn wakeups_per_write(&self) -> impl Iterator<Item = usize> + '_ {
        self.wakeups_per_release
            .iter()
            .chain(&self.wakeups_per_create)
            .copied()
    }

    /// The most waiters one lock write (a release or a create) woke: the
    /// herd's size.
    pub fn max_wakeups_per_write(&self) -> usize {
        self.wakeups_per_write().max().unwrap_or(0)
    }

    /// 0 when nothing was written.
    pub fn mean_wakeups_per_write(&self) -> f64 {
        ratio(
            self.wakeups_per_write().sum(),
            self.wakeups_per_write().count(),
        )
    }

    /// 0 when nothing was acquired.
    pub fn wakeups_per_acquisition(&self) -> f64 {
        ratio(self.wakeups, self.acquisitions)
    }

    /// 0 when nothing was acquired.
    pub fn requests_per_acquisition(&self) -> f64 {
        ratio(self.requests, self.acquisitions)
    }
}

fn ratio(numerator: usize, denominator: usize) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

#[derive(Default)]
struct Counter {
    ledger: WakeupLedger,
}

impl Counter {
    fn observe(&mut self, happening: &Happening<AppEvent>) {
        self.ledger.observe(happening);
    }

    /// The run ended: every wakeup still waiting to be judged led nowhere.
    fn finish(mut self) -> LockFigures {
        self.ledger.finish();
        let l = &self.ledger;
        LockFigures {
            acquisitions: l.acquisitions() as usize,
            releases: l.releases().len(),
            requests: l.requests() as usize,
            wakeups: l.wakeups() as usize,
            wasted_wakeups: l.wasted() as usize,
            wakeups_per_release: l.releases().iter().map(|r| r.woken.len()).collect(),
            wasted_per_release: l.releases().iter().map(|r| r.wasted as usize).collect(),
            wakeups_per_create: l.creates().iter().map(|c| c.woken.len()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::history::*;
    use super::*;
    use zksim::EventType;

    /// The predecessor-watch lock: each release wakes exactly its successor.
    #[test]
    fn a_chain_of_successors_wakes_one_per_release() {
        let mut log = vec![req(0), req(1), req(2)];
        for c in 0..3 {
            log.extend(creates(c, 1, &format!("/lock/n-{c}"), c as i64 + 1));
        }
        log.push(acq(0, 1));
        log.extend(sees(1, 2, "/lock/n-0", 1));
        log.extend(sees(2, 2, "/lock/n-1", 2));
        log.extend([
            delete_sent(0, 9, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
        ]);
        log.extend([acq(1, 2), delete_sent(1, 9, "/lock/n-1"), rel(1)]);
        log.extend([deleted(2, "/lock/n-1"), acq(2, 3)]);
        log.extend([delete_sent(2, 9, "/lock/n-2"), rel(2)]);
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wasted_wakeups, 0);
        assert_eq!(f.wakeups_per_release, vec![1, 1, 0]);
        assert_eq!((f.releases, f.acquisitions, f.requests), (3, 3, 8));
        assert_eq!(f.mean_wakeups_per_release(), 2.0 / 3.0);
        assert_eq!(f.requests_per_acquisition(), 8.0 / 3.0);
    }

    /// The naive lock: one release wakes every waiter; one wins, the rest wasted.
    #[test]
    fn one_release_waking_everyone_is_a_herd() {
        const LOCK: &str = "/lock/lock";
        let mut log = vec![req(0), req(1), req(2), req(3)];
        log.extend(creates(0, 1, LOCK, 7));
        log.push(acq(0, 7));
        for c in 1..4 {
            log.extend(sees(c, 1, LOCK, 7));
        }
        log.extend([delete_sent(0, 3, LOCK), rel(0)]);
        log.extend([deleted(1, LOCK), deleted(3, LOCK), deleted(2, LOCK)]);
        log.push(acq(1, 9));
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups_per_release, vec![3]);
        assert_eq!(f.max_wakeups_per_release(), 3);
        assert_eq!(f.wasted_wakeups, 2, "3 and 2 never acquire");
        assert_eq!(f.wasted_per_release, vec![2]);
        assert_eq!(f.wakeups_per_acquisition(), 1.5);
    }

    /// Events to a client that is not waiting are not wakeups; a NodeCreated
    /// is a wakeup of no release.
    #[test]
    fn what_is_and_is_not_a_wakeup_of_a_release() {
        let mut log = vec![
            req(0),
            acq(0, 1),
            deleted(0, "/lock/x"),
            deleted(5, "/lock/x"),
        ];
        log.extend([req(1), req(2)]);
        log.extend(creates(0, 1, "/lock/n-0", 1));
        log.extend(sees(1, 1, "/lock/n-0", 1));
        log.extend([
            delete_sent(0, 3, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
        ]);
        log.push(woken(2, EventType::NodeCreated, "/lock/n-1"));
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wakeups_per_release, vec![1]);
        assert_eq!(f.wasted_wakeups, 2, "nobody acquired after being woken");
    }

    #[test]
    fn an_empty_run_has_zero_ratios() {
        let f = LockFigures::from_log(&[]);
        assert_eq!(f.mean_wakeups_per_release(), 0.0);
        assert_eq!(f.wakeups_per_acquisition(), 0.0);
        assert_eq!(f.requests_per_acquisition(), 0.0);
        assert_eq!(f.max_wakeups_per_release(), 0);
    }
}
