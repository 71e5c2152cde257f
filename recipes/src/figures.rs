//! Cost figures of a lock run, counted from its history alone.
//!
//! The input is a [`Happening`] log. Only the client-side part is needed —
//! `Sent`, `Delivered`, `App` (and `Taken` when there is one) — which both
//! the simulator and the real-server driver ([`crate::real`]) write, so the
//! same numbers can be set side by side (`zkcheck compare`,
//! `examples/lock.rs`).
//!
//! The definitions are the checker's `herd` monitor's
//! (`checker/src/monitor/herd.rs`), so the figures agree with it:
//! * a client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`;
//! * a **wakeup** is a node-watch event delivered to a waiting client;
//! * a **release** is a `Released` event; the node it frees is the path of
//!   the last `Delete` the releasing client sent;
//! * **attribution**: a `NodeDeleted` wakeup on *p* belongs to a release that
//!   freed *p*, a `NodeChildrenChanged` wakeup on *d* to one that freed a
//!   child of *d*; of those, the oldest the client can still be waiting on —
//!   releases before its previous attributed wakeup are skipped, and so are
//!   releases whose delete was already taken or answered when the client
//!   requested. Other wakeups (`NodeCreated`, an expiry's delete) belong to
//!   no release;
//! * a wakeup is **useful** when the woken client's next step in its wait is
//!   `Acquired`; otherwise (another wakeup, `GaveUp`, the end of the run) it
//!   is **wasted** — the herd;
//! * a **request** is any op a client sent.

use std::collections::BTreeMap;

use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId};

use crate::AppEvent;

/// The figures of one run. See the module docs for what each counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockFigures {
    pub acquisitions: usize,
    pub releases: usize,
    pub requests: usize,
    pub wakeups: usize,
    pub wasted_wakeups: usize,
    /// Waiters woken by each release, in release order.
    pub wakeups_per_release: Vec<usize>,
    /// Wasted wakeups of each release, in release order.
    pub wasted_per_release: Vec<usize>,
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

struct Release {
    client: ClientId,
    /// The node the release deleted, if the client sent a delete.
    node: Option<String>,
    /// The release's delete, until the ensemble took or answered it.
    unsettled: Option<OpId>,
    woken: usize,
    wasted: usize,
}

struct Wait {
    /// Only releases at this index or later can wake this waiter.
    cursor: usize,
    /// The latest wakeup not yet judged, and the release it belongs to.
    pending: Option<Option<usize>>,
}

#[derive(Default)]
struct Counter {
    figures: LockFigures,
    waiting: BTreeMap<ClientId, Wait>,
    /// Each client's last sent delete: op id and path.
    last_delete: BTreeMap<ClientId, (OpId, String)>,
    releases: Vec<Release>,
}

impl Counter {
    fn observe(&mut self, happening: &Happening<AppEvent>) {
        match happening {
            Happening::Sent {
                client,
                op,
                request,
            } => {
                self.figures.requests += 1;
                if let Some(path) = deleted_path(request) {
                    self.last_delete.insert(*client, (*op, path.to_string()));
                }
            }
            Happening::Taken { client, op, .. }
            | Happening::Delivered {
                client,
                delivery: Delivery::Reply { op, .. },
            } => self.settle(*client, *op),
            Happening::Delivered {
                client,
                delivery: Delivery::Watch(event),
            } => {
                let Some(cursor) = self.waiting.get(client).map(|w| w.cursor) else {
                    return;
                };
                self.figures.wakeups += 1;
                self.judge(*client, false);
                let release = self.attribute(cursor, event.kind, &event.path);
                if let Some(wait) = self.waiting.get_mut(client) {
                    wait.pending = Some(release);
                    if let Some(r) = release {
                        wait.cursor = r + 1;
                    }
                }
                if let Some(r) = release {
                    self.releases[r].woken += 1;
                }
            }
            Happening::App { client, event } => match event {
                AppEvent::Requested { .. } => {
                    let cursor = self
                        .releases
                        .iter()
                        .position(|r| r.unsettled.is_some())
                        .unwrap_or(self.releases.len());
                    self.waiting.insert(
                        *client,
                        Wait {
                            cursor,
                            pending: None,
                        },
                    );
                }
                AppEvent::Acquired { .. } => {
                    self.figures.acquisitions += 1;
                    self.judge(*client, true);
                    self.waiting.remove(client);
                }
                AppEvent::GaveUp => {
                    self.judge(*client, false);
                    self.waiting.remove(client);
                }
                AppEvent::Released => {
                    let (node, unsettled) = match self.last_delete.remove(client) {
                        Some((op, path)) => (Some(path), Some(op)),
                        None => (None, None),
                    };
                    self.releases.push(Release {
                        client: *client,
                        node,
                        unsettled,
                        woken: 0,
                        wasted: 0,
                    });
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Judge the client's pending wakeup, if any.
    fn judge(&mut self, client: ClientId, useful: bool) {
        let Some(wait) = self.waiting.get_mut(&client) else {
            return;
        };
        if let Some(release) = wait.pending.take() {
            if !useful {
                self.figures.wasted_wakeups += 1;
                if let Some(r) = release {
                    self.releases[r].wasted += 1;
                }
            }
        }
    }

    fn settle(&mut self, client: ClientId, op: OpId) {
        for r in self.releases.iter_mut().rev() {
            if r.client == client && r.unsettled == Some(op) {
                r.unsettled = None;
            }
        }
    }

    fn attribute(&self, cursor: usize, kind: EventType, path: &str) -> Option<usize> {
        (cursor..self.releases.len()).find(|&i| {
            let Some(node) = self.releases[i].node.as_deref() else {
                return false;
            };
            match kind {
                EventType::NodeDeleted => node == path,
                EventType::NodeChildrenChanged => parent_of(node) == Some(path),
                _ => false,
            }
        })
    }

    /// The run ended: every wakeup still waiting to be judged led nowhere.
    fn finish(mut self) -> LockFigures {
        let clients: Vec<ClientId> = self.waiting.keys().copied().collect();
        for client in clients {
            self.judge(client, false);
        }
        self.figures.releases = self.releases.len();
        self.figures.wakeups_per_release = self.releases.iter().map(|r| r.woken).collect();
        self.figures.wasted_per_release = self.releases.iter().map(|r| r.wasted).collect();
        self.figures
    }
}

fn deleted_path(op: &Op) -> Option<&str> {
    match op {
        Op::Delete { path, .. } => Some(path),
        Op::Multi(ops) => ops.iter().find_map(deleted_path),
        _ => None,
    }
}

fn parent_of(path: &str) -> Option<&str> {
    match path.rfind('/') {
        _ if path == "/" => None,
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zksim::WatchedEvent;

    fn app(client: ClientId, event: AppEvent) -> Happening<AppEvent> {
        Happening::App { client, event }
    }
    fn req(client: ClientId) -> Happening<AppEvent> {
        app(client, AppEvent::Requested { shared: false })
    }
    fn acq(client: ClientId, fence: i64) -> Happening<AppEvent> {
        app(
            client,
            AppEvent::Acquired {
                fence,
                shared: false,
            },
        )
    }
    fn rel(client: ClientId) -> Happening<AppEvent> {
        app(client, AppEvent::Released)
    }
    fn watch(client: ClientId, kind: EventType, path: &str) -> Happening<AppEvent> {
        Happening::Delivered {
            client,
            delivery: Delivery::Watch(WatchedEvent {
                kind,
                path: path.into(),
            }),
        }
    }
    fn deleted(client: ClientId, path: &str) -> Happening<AppEvent> {
        watch(client, EventType::NodeDeleted, path)
    }
    fn delete_sent(client: ClientId, op: OpId, path: &str) -> Happening<AppEvent> {
        Happening::Sent {
            client,
            op,
            request: Op::Delete {
                path: path.into(),
                version: -1,
            },
        }
    }

    /// The predecessor-watch lock: each release wakes exactly its successor.
    #[test]
    fn a_chain_of_successors_wakes_one_per_release() {
        let log = [
            req(0),
            req(1),
            req(2),
            acq(0, 1),
            delete_sent(0, 9, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
            acq(1, 2),
            delete_sent(1, 9, "/lock/n-1"),
            rel(1),
            deleted(2, "/lock/n-1"),
            acq(2, 3),
            delete_sent(2, 9, "/lock/n-2"),
            rel(2),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wasted_wakeups, 0);
        assert_eq!(f.wakeups_per_release, vec![1, 1, 0]);
        assert_eq!((f.releases, f.acquisitions, f.requests), (3, 3, 3));
        assert_eq!(f.mean_wakeups_per_release(), 2.0 / 3.0);
        assert_eq!(f.requests_per_acquisition(), 1.0);
    }

    /// The naive lock: one release wakes every waiter; one wins, the rest wasted.
    #[test]
    fn one_release_waking_everyone_is_a_herd() {
        let log = [
            req(0),
            req(1),
            req(2),
            req(3),
            acq(0, 1),
            delete_sent(0, 3, "/lock/lock"),
            rel(0),
            deleted(1, "/lock/lock"),
            deleted(3, "/lock/lock"),
            deleted(2, "/lock/lock"),
            acq(1, 2),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups_per_release, vec![3]);
        assert_eq!(f.max_wakeups_per_release(), 3);
        assert_eq!(f.wasted_wakeups, 2, "3 and 2 never acquire");
        assert_eq!(f.wasted_per_release, vec![2]);
        assert_eq!(f.wakeups_per_acquisition(), 1.5);
    }

    /// A late wakeup from an older release of the same node is told apart.
    #[test]
    fn repeated_releases_of_one_node_are_told_apart() {
        let log = [
            req(0),
            req(1),
            req(2),
            acq(0, 1),
            delete_sent(0, 3, "/lock/lock"),
            rel(0),
            deleted(1, "/lock/lock"),
            acq(1, 2),
            delete_sent(1, 3, "/lock/lock"),
            rel(1),
            deleted(2, "/lock/lock"),
            deleted(2, "/lock/lock"),
            acq(2, 3),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups_per_release, vec![2, 1]);
        assert_eq!(
            f.wasted_wakeups, 1,
            "2's first wakeup was followed by another"
        );
    }

    /// Events to a client that is not waiting are not wakeups; a NodeCreated
    /// or an expiry's delete is a wakeup of no release.
    #[test]
    fn what_is_and_is_not_a_wakeup_of_a_release() {
        let log = [
            req(0),
            acq(0, 1),
            deleted(0, "/lock/x"),
            deleted(5, "/lock/x"),
            req(1),
            req(2),
            delete_sent(0, 3, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
            deleted(2, "/lock/n-1"),
            watch(2, EventType::NodeCreated, "/lock/n-1"),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 3);
        assert_eq!(f.wakeups_per_release, vec![1]);
        assert_eq!(f.wasted_wakeups, 3, "nobody acquired after being woken");
    }

    /// A delete answered before a client requested cannot have woken it.
    #[test]
    fn a_release_settled_before_the_request_wakes_nobody_later() {
        let log = [
            req(0),
            acq(0, 1),
            delete_sent(0, 3, "/lock/lock"),
            rel(0),
            Happening::Delivered {
                client: 0,
                delivery: Delivery::Reply {
                    op: 3,
                    reply: Ok(zksim::Response::Deleted),
                },
            },
            req(1),
            deleted(1, "/lock/lock"),
        ];
        let f = LockFigures::from_log(&log);
        assert_eq!(f.wakeups, 1);
        assert_eq!(f.wakeups_per_release, vec![0]);
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
