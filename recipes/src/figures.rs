//! Cost figures of a lock run, counted from its history alone.
//!
//! The input is the client-side part of a [`Happening`] log — `Sent`,
//! `Delivered` and `App` — which both the simulator and the real-server
//! driver ([`crate::real`]) write, so the same numbers can be set side by
//! side (`zkcheck compare`, `examples/lock.rs`).
//!
//! Definitions (exclusive locks):
//! * a client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`;
//! * a **wakeup** is a node-watch event delivered to a waiting client;
//! * a wakeup belongs to the latest `Released` before it (wakeups before the
//!   first release belong to none); **wakeups per release** counts them;
//! * a wakeup is **useful** when the woken client is the next client to
//!   acquire and this is its last wakeup before doing so; every other wakeup
//!   is **wasted** — the herd;
//! * a **request** is any op a client sent (every one costs the server a
//!   round trip).

use std::collections::BTreeSet;

use zksim::{ClientId, Delivery, Happening};

use crate::AppEvent;

/// The figures of one run. See the module docs for what each counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockFigures {
    pub acquisitions: usize,
    pub releases: usize,
    pub requests: usize,
    pub wakeups: usize,
    pub wasted_wakeups: usize,
    /// Wakeups that belong to each release, in release order.
    pub wakeups_per_release: Vec<usize>,
}

impl LockFigures {
    /// Count over a history (any order-preserving iterator of happenings).
    pub fn from_log<'a, I>(log: I) -> Self
    where
        I: IntoIterator<Item = &'a Happening<AppEvent>>,
    {
        let mut figures = LockFigures::default();
        let mut waiting = BTreeSet::<ClientId>::new();
        // Wakeups since the last acquisition, oldest first.
        let mut woken_since_acquire: Vec<ClientId> = Vec::new();
        for happening in log {
            match happening {
                Happening::Sent { .. } => figures.requests += 1,
                Happening::Delivered {
                    client,
                    delivery: Delivery::Watch(_),
                } if waiting.contains(client) => {
                    figures.wakeups += 1;
                    if let Some(last) = figures.wakeups_per_release.last_mut() {
                        *last += 1;
                    }
                    woken_since_acquire.push(*client);
                }
                Happening::App { client, event } => match event {
                    AppEvent::Requested { .. } => {
                        waiting.insert(*client);
                    }
                    AppEvent::GaveUp => {
                        waiting.remove(client);
                    }
                    AppEvent::Acquired { .. } => {
                        waiting.remove(client);
                        figures.acquisitions += 1;
                        let useful = usize::from(woken_since_acquire.contains(client));
                        figures.wasted_wakeups += woken_since_acquire.len() - useful;
                        woken_since_acquire.clear();
                    }
                    AppEvent::Released => {
                        figures.releases += 1;
                        figures.wakeups_per_release.push(0);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        figures.wasted_wakeups += woken_since_acquire.len();
        figures
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use zksim::{EventType, Op, WatchedEvent};

    fn app(client: ClientId, event: AppEvent) -> Happening<AppEvent> {
        Happening::App { client, event }
    }
    fn woken(client: ClientId) -> Happening<AppEvent> {
        Happening::Delivered {
            client,
            delivery: Delivery::Watch(WatchedEvent {
                kind: EventType::NodeDeleted,
                path: "/lock".into(),
            }),
        }
    }
    fn sent(client: ClientId) -> Happening<AppEvent> {
        Happening::Sent {
            client,
            op: 0,
            request: Op::Sync { path: "/".into() },
        }
    }
    const REQ: AppEvent = AppEvent::Requested { shared: false };
    fn acq(fence: i64) -> AppEvent {
        AppEvent::Acquired {
            fence,
            shared: false,
        }
    }

    /// Three clients, naive lock: every release wakes every waiter.
    #[test]
    fn a_herd_counts_every_waiter_woken_by_a_release() {
        let log = vec![
            app(0, REQ),
            app(1, REQ),
            app(2, REQ),
            sent(0),
            sent(1),
            sent(2),
            app(0, acq(1)),
            app(0, AppEvent::Released),
            woken(1),
            woken(2),
            app(1, acq(2)),
            app(1, AppEvent::Released),
            woken(2),
            app(2, acq(3)),
            app(2, AppEvent::Released),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.acquisitions, 3);
        assert_eq!(f.releases, 3);
        assert_eq!(f.requests, 3);
        assert_eq!(f.wakeups, 3);
        assert_eq!(f.wakeups_per_release, vec![2, 1, 0]);
        assert_eq!(f.max_wakeups_per_release(), 2);
        assert_eq!(f.mean_wakeups_per_release(), 1.0);
        assert_eq!(
            f.wasted_wakeups, 1,
            "client 2's first wakeup was for nothing"
        );
        assert_eq!(f.wakeups_per_acquisition(), 1.0);
        assert_eq!(f.requests_per_acquisition(), 1.0);
    }

    /// Watch events to a client that is not waiting (say, the holder) are not wakeups.
    #[test]
    fn events_to_clients_that_do_not_wait_are_not_wakeups() {
        let log = vec![
            app(0, REQ),
            app(0, acq(1)),
            woken(0),
            woken(3),
            app(0, AppEvent::Released),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 0);
        assert_eq!(f.wakeups_per_release, vec![0]);
        assert_eq!(f.wasted_wakeups, 0);
    }

    /// A wakeup nobody acts on before the run ends is wasted; so is one to a client that gave up.
    #[test]
    fn wakeups_that_lead_nowhere_are_wasted() {
        let log = vec![
            app(1, REQ),
            woken(1),
            app(1, AppEvent::GaveUp),
            app(2, REQ),
            woken(2),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wasted_wakeups, 2);
        assert!(
            f.wakeups_per_release.is_empty(),
            "no release to attribute them to"
        );
        assert_eq!(f.mean_wakeups_per_release(), 0.0);
        assert_eq!(f.wakeups_per_acquisition(), 0.0);
    }
}
