//! `herd`: each release wakes at most one waiting client.
//!
//! Definitions (the same ones the figures use):
//! * A client is **waiting** from its `Requested` until its `Acquired` or
//!   `GaveUp`.
//! * A **wakeup** is a node-watch event (`Delivered` with `Delivery::Watch`)
//!   handed to a waiting client. Events to a client that is not waiting are
//!   not wakeups.
//! * A **release** is a `Released` event. The node it frees is the path of
//!   the last `Delete` the releasing client sent (recipes send the delete and
//!   emit `Released` in the same handler).
//! * **Attribution.** A `NodeDeleted` wakeup on path *p* belongs to a release
//!   that freed *p*; a `NodeChildrenChanged` wakeup on *d* to a release that
//!   freed a child of *d*. Among those, it belongs to the oldest one the woken
//!   client can still be waiting on: releases older than the client's previous
//!   attributed wakeup are skipped (a one-shot watch fires once per change),
//!   and so are releases whose delete had already reached the ensemble when
//!   the client requested (it cannot have watched that node yet). A wakeup
//!   that matches no release (a node deleted by a session expiry, a
//!   `NodeCreated`, a data change) counts as a wakeup but belongs to no release.
//! * A wakeup is **useful** when the woken client's next step in its wait is
//!   `Acquired` (no further wakeup in between); otherwise it is **wasted**:
//!   a later wakeup, `GaveUp` or the end of the run make it so.
//!
//! **Violation.** For an exclusive lock, a release to which a second wakeup
//! is attributed wakes more than one waiter: the herd. For a read/write lock,
//! a release may wake several readers (they all acquire together); it is a
//! herd when it wakes more than one waiter and one of them asked to write.

use std::collections::BTreeMap;

use zkrecipes::{AppEvent, Family};
use zksim::{ClientId, Delivery, EventType, Happening, Op, OpId};

use super::figures::Histogram;
use super::view::{parent_of, who, Measured, View};
use super::{Monitor, Property, Sim, StepLog, Violation};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Release {
    client: ClientId,
    /// The node the release deleted, if the client sent a delete.
    node: Option<String>,
    /// The release's delete (op id), until the ensemble took or answered it.
    unsettled: Option<OpId>,
    /// Waiters woken, in order, and whether each asked to write.
    woken: Vec<(ClientId, bool)>,
    wasted: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wait {
    shared: bool,
    /// Only releases at this index or later can be attributed to this waiter.
    cursor: usize,
    /// The latest wakeup not yet judged useful or wasted, and its release.
    pending: Option<Option<usize>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HerdMonitor {
    readers_share: bool,
    waiting: BTreeMap<ClientId, Wait>,
    /// Each client's last sent delete: op id and path.
    last_delete: BTreeMap<ClientId, (OpId, String)>,
    releases: Vec<Release>,
    counts: Measured<Counts>,
}

#[derive(Clone, Debug, Default)]
struct Counts {
    wakeups: u64,
    wasted: u64,
    acquisitions: u64,
    requests: u64,
    latency: Histogram,
    requested_at: BTreeMap<ClientId, u64>,
}

impl HerdMonitor {
    pub fn new(family: Family) -> Self {
        HerdMonitor {
            readers_share: family == Family::RwLock,
            waiting: BTreeMap::new(),
            last_delete: BTreeMap::new(),
            releases: Vec::new(),
            counts: Measured(Counts::default()),
        }
    }

    /// Index of the oldest release whose delete is still unsettled, or the
    /// number of releases: where a client that requests now starts looking.
    fn cursor_now(&self) -> usize {
        self.releases
            .iter()
            .position(|r| r.unsettled.is_some())
            .unwrap_or(self.releases.len())
    }

    fn judge_pending(&mut self, client: ClientId, useful: bool) {
        let Some(wait) = self.waiting.get_mut(&client) else {
            return;
        };
        if let Some(release) = wait.pending.take() {
            if !useful {
                self.counts.0.wasted += 1;
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

    pub fn on_step(&mut self, view: &impl View, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            match happening {
                Happening::Sent {
                    client,
                    op,
                    request,
                } => {
                    self.counts.0.requests += 1;
                    if let Some(path) = deleted_path(request) {
                        self.last_delete.insert(*client, (*op, path.to_string()));
                    }
                }
                Happening::Taken { client, op, .. } => self.settle(*client, *op),
                Happening::Delivered {
                    client,
                    delivery: Delivery::Reply { op, .. },
                } => self.settle(*client, *op),
                Happening::Delivered {
                    client,
                    delivery: Delivery::Watch(event),
                } => {
                    let client = *client;
                    let Some(wait) = self.waiting.get(&client) else {
                        continue;
                    };
                    let (cursor, writer) = (wait.cursor, !wait.shared);
                    self.counts.0.wakeups += 1;
                    self.judge_pending(client, false);
                    let release = self.attribute(cursor, event.kind, &event.path);
                    if let Some(wait) = self.waiting.get_mut(&client) {
                        wait.pending = Some(release);
                        if let Some(r) = release {
                            wait.cursor = r + 1;
                        }
                    }
                    if let Some(r) = release {
                        let rel = &mut self.releases[r];
                        rel.woken.push((client, writer));
                        let herd = rel.woken.len() > 1
                            && (!self.readers_share || rel.woken.iter().any(|(_, w)| *w));
                        if herd {
                            first.get_or_insert_with(|| herd_violation(view, rel, event));
                        }
                    }
                }
                Happening::App { client, event } => match *event {
                    AppEvent::Requested { shared } => {
                        let cursor = self.cursor_now();
                        self.counts.0.requested_at.insert(*client, view.now());
                        self.waiting.insert(
                            *client,
                            Wait {
                                shared: shared && self.readers_share,
                                cursor,
                                pending: None,
                            },
                        );
                    }
                    AppEvent::Acquired { .. } => {
                        self.counts.0.acquisitions += 1;
                        if let Some(at) = self.counts.0.requested_at.remove(client) {
                            self.counts.0.latency.record(view.now().saturating_sub(at));
                        }
                        self.judge_pending(*client, true);
                        self.waiting.remove(client);
                    }
                    AppEvent::GaveUp => {
                        self.counts.0.requested_at.remove(client);
                        self.judge_pending(*client, false);
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
                            woken: Vec::new(),
                            wasted: 0,
                        });
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The run ended: every wakeup still waiting to be judged led nowhere.
    pub fn on_finish(&mut self) {
        let clients: Vec<ClientId> = self.waiting.keys().copied().collect();
        for client in clients {
            self.judge_pending(client, false);
        }
    }

    /// Add what this monitor measured to `figures`.
    pub fn add_figures(&self, figures: &mut super::Figures) {
        let c = &self.counts.0;
        figures.acquisitions += c.acquisitions;
        figures.requests += c.requests;
        figures.wakeups += c.wakeups;
        figures.wasted_wakeups += c.wasted;
        figures.latency.merge(&c.latency);
        figures.releases += self.releases.len() as u64;
        for r in &self.releases {
            figures.wakeups_per_release.record(r.woken.len() as u64);
            figures.wasted_per_release.record(u64::from(r.wasted));
        }
    }
}

fn deleted_path(op: &Op) -> Option<&str> {
    match op {
        Op::Delete { path, .. } => Some(path),
        Op::Multi(ops) => ops.iter().find_map(deleted_path),
        _ => None,
    }
}

fn herd_violation(view: &impl View, rel: &Release, event: &zksim::WatchedEvent) -> Violation {
    let woken: Vec<String> = rel.woken.iter().map(|(c, _)| who(*c)).collect();
    Violation {
        property: Property::NoHerd,
        explanation: format!(
            "{} released the lock by deleting {}, and by tick {} that one change had woken {} \
             waiters ({}; the last through a {:?} event on {}): at most one of them can take the \
             lock next, the others wake only to watch again — a herd",
            who(rel.client),
            rel.node.as_deref().unwrap_or("its node"),
            view.now(),
            rel.woken.len(),
            woken.join(", "),
            event.kind,
            event.path,
        ),
    }
}

impl<C: zksim::Client<Event = zkrecipes::AppEvent>> Monitor<C> for HerdMonitor {
    fn observe(&mut self, world: &Sim<C>, step: &StepLog) -> Result<(), Violation> {
        self.on_step(world, step)
    }
    fn finish(&mut self, _world: &Sim<C>) -> Result<(), Violation> {
        self.on_finish();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;
    use crate::monitor::Figures;

    fn figures(m: &HerdMonitor) -> Figures {
        let mut f = Figures::default();
        m.add_figures(&mut f);
        f
    }

    /// The predecessor-watch lock: each release wakes exactly its successor.
    #[test]
    fn a_chain_of_successors_is_no_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let log = [
            req(0),
            req(1),
            req(2),
            acq(0, 1),
            exists_watch(1, 5, "/lock/n-0"),
            exists_watch(2, 5, "/lock/n-1"),
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
        assert_eq!(m.on_step(&v, &log), Ok(()));
        m.on_finish();
        let f = figures(&m);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wasted_wakeups, 0);
        assert_eq!(f.max_wakeups_per_release(), 1);
        assert_eq!(f.releases, 3);
        assert_eq!(f.acquisitions, 3);
        assert_eq!(f.requests, 5);
    }

    /// The naive lock: every waiter watches the one lock node.
    #[test]
    fn one_release_waking_everyone_is_a_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(4);
        let head = [
            req(0),
            req(1),
            req(2),
            req(3),
            acq(0, 1),
            delete_sent(0, 3, "/lock/lock"),
            rel(0),
            deleted(1, "/lock/lock"),
        ];
        assert_eq!(m.on_step(&v, &head), Ok(()));
        let err = m.on_step(&v, &[deleted(3, "/lock/lock")]).unwrap_err();
        assert_eq!(err.property, Property::NoHerd);
        assert!(
            err.explanation.contains("client 0 released"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("/lock/lock"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("client 1, client 3"),
            "{}",
            err.explanation
        );
        // Report-only runs go on: client 2 is woken too, 1 wins, 3 and 2 wasted.
        let _ = m.on_step(&v, &[deleted(2, "/lock/lock"), acq(1, 2)]);
        m.on_finish();
        let f = figures(&m);
        assert_eq!(f.max_wakeups_per_release(), 3);
        assert_eq!(f.wasted_wakeups, 2);
        assert_eq!(f.max_wasted_per_release(), 2);
    }

    /// A waiter woken by B's release after having been woken by A's release
    /// of the same node: the second wakeup belongs to B's release, not A's.
    #[test]
    fn repeated_releases_of_one_node_are_told_apart() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
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
            // 2's wakeup from 0's release arrives late, after 1 released.
            deleted(2, "/lock/lock"),
        ];
        let err = m.on_step(&v, &log).unwrap_err();
        assert!(
            err.explanation.contains("client 0 released"),
            "{}",
            err.explanation
        );
        let next = [deleted(2, "/lock/lock"), acq(2, 3)];
        assert_eq!(m.on_step(&v, &next), Ok(()), "attributed to 1's release");
        let f = figures(&m);
        assert_eq!(
            f.wakeups_per_release.iter().collect::<Vec<_>>(),
            vec![(1, 1), (2, 1)]
        );
    }

    #[test]
    fn writer_release_may_wake_all_readers() {
        let mut m = HerdMonitor::new(Family::RwLock);
        let v = FakeView::new(3);
        let log = [
            req_read(1),
            req_read(2),
            delete_sent(0, 3, "/rw/write-0"),
            rel(0),
            deleted(1, "/rw/write-0"),
            deleted(2, "/rw/write-0"),
            read(1, 4),
            read(2, 5),
        ];
        assert_eq!(m.on_step(&v, &log), Ok(()));
        let mut m = HerdMonitor::new(Family::RwLock);
        let log = [
            req_read(1),
            req(2),
            delete_sent(0, 3, "/rw/write-0"),
            rel(0),
            deleted(1, "/rw/write-0"),
            deleted(2, "/rw/write-0"),
        ];
        assert!(m.on_step(&v, &log).is_err());
    }

    #[test]
    fn wakeups_from_an_expiry_belong_to_no_release() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let log = [
            req(1),
            req(2),
            delete_sent(0, 3, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
            // 1's own predecessor check; 2 watched 1's node, which went with 1's session.
            deleted(2, "/lock/n-1"),
        ];
        assert_eq!(m.on_step(&v, &log), Ok(()));
        let f = figures(&m);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.max_wakeups_per_release(), 1);
    }

    #[test]
    fn latency_is_requested_to_acquired_in_ticks() {
        let mut m = HerdMonitor::new(Family::Lock);
        let mut v = FakeView::new(1);
        m.on_step(&v, &[req(0)]).unwrap();
        v.now = 7;
        m.on_step(&v, &[acq(0, 1)]).unwrap();
        assert_eq!(figures(&m).latency.iter().collect::<Vec<_>>(), vec![(7, 1)]);
    }
}
