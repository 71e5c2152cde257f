//! `herd`: each lock write wakes at most one waiting client.
//!
//! The wakeup rules live here, beside the monitor that judges by them, and
//! not in the recipes crate: they are the checker's measurement of a recipe,
//! not recipe logic. [`ledger`] decides which write woke whom, the one rule
//! set the real-server figures ([`LockFigures`], `zkreal`'s examples and
//! tests) use too, so that the simulator's and a live ZooKeeper's numbers
//! mean the same thing: a `NodeDeleted` wakeup belongs to the release that
//! deleted exactly the node the woken client last saw at that path (its
//! czxid), a `NodeChildrenChanged` one to the earliest release that deleted a
//! child the client last listed, a `NodeCreated` one to the create of the
//! node whose absence the client's `exists` saw; wakeups no write caused (an
//! expiry's delete) belong to none.
//!
//! **Violation.** For an exclusive lock, a write (a release's delete or a
//! create) to which a second wakeup of a waiter other than the writer is
//! attributed wakes more than one waiter: the herd. (A client woken by its
//! own create has what it waited for.) For a read/write lock, a write may
//! wake several readers (they all acquire together); it is a herd when it
//! wakes more than one waiter and one of them asked to write.

use std::collections::BTreeMap;

use zkrecipes::{AppEvent, Family};
use zksim::{ClientId, Delivery, Happening};

mod figures;
#[cfg(test)]
mod history;
mod ledger;
#[cfg(test)]
mod ledger_tests;

pub use figures::LockFigures;
pub use ledger::{WakeupLedger, Write, WriteId, WriteKind};

use super::tally::Histogram;
use super::view::{who, Measured, View};
use super::{End, Kinds, Monitor, Property, StepLog, Tally, Violation};

/// The `herd` monitor: charges every wakeup to the lock write that fired
/// it (through the [`WakeupLedger`]) and fails a run where one write wakes
/// more than one waiter besides its writer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HerdMonitor {
    readers_share: bool,
    ledger: WakeupLedger,
    latency: Measured<Latency>,
}

/// Requested-to-Acquired times, measured only.
#[derive(Clone, Debug, Default)]
struct Latency {
    histogram: Histogram,
    requested_at: BTreeMap<ClientId, u64>,
}

impl HerdMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        HerdMonitor {
            readers_share: self.readers_share,
            ledger: self.ledger.renamed(r),
            latency: self.latency.clone(),
        }
    }

    /// The monitor for a recipe of `family` (a read/write lock's readers
    /// may share a wakeup).
    pub fn new(family: Family) -> Self {
        HerdMonitor {
            readers_share: family == Family::RwLock,
            ledger: WakeupLedger::new(),
            latency: Measured(Latency::default()),
        }
    }
}

/// `last` is the watch event that made the herd (for a create whose reply
/// came after its wakeups, the creation they all saw).
fn herd_violation(
    view: &(impl View + ?Sized),
    write: &Write,
    last: &zksim::WatchedEvent,
) -> Violation {
    // A herd of a thousand would make a thousand names (and cost a
    // thousand formats at each of its wakeups): the first few say enough.
    const NAMED: usize = 6;
    let mut woken: Vec<String> = write
        .woken
        .iter()
        .take(NAMED)
        .map(|(c, _)| who(*c))
        .collect();
    if write.woken.len() > NAMED {
        woken.push(format!("and {} more", write.woken.len() - NAMED));
    }
    let node = write.node.as_deref().unwrap_or("its node");
    let what = match write.kind {
        WriteKind::Release => format!("released the lock by deleting {node}"),
        WriteKind::Create => format!("created {node}"),
    };
    Violation {
        property: Property::NoHerd,
        explanation: format!(
            "{} {what}, and by tick {} that one change had woken {} waiters ({}; the last through \
             a {:?} event on {}): at most one of them can take the lock next, the others wake \
             only to watch again — a herd",
            who(write.client),
            view.now(),
            write.woken.len(),
            woken.join(", "),
            last.kind,
            last.path,
        ),
    }
}

impl Monitor for HerdMonitor {
    /// What the wakeup ledger reads (requests, replies and watch events,
    /// application events) and the latencies (application events).
    const READS: Kinds = Kinds::SENT.union(Kinds::DELIVERED).union(Kinds::APP);

    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            if let Happening::App { client, event } = happening {
                let latency = &mut self.latency.0;
                match event {
                    AppEvent::Requested { .. } => {
                        latency.requested_at.insert(*client, view.now());
                    }
                    AppEvent::Acquired { .. } => {
                        if let Some(at) = latency.requested_at.remove(client) {
                            latency.histogram.record(view.now().saturating_sub(at));
                        }
                    }
                    AppEvent::GaveUp => {
                        latency.requested_at.remove(client);
                    }
                    _ => {}
                }
            }
            for id in self.ledger.observe(happening) {
                let write = self.ledger.write(id);
                let herd = write.others_woken() > 1
                    && (!self.readers_share || write.woken.iter().any(|(_, writer)| *writer));
                if herd {
                    let last = match happening {
                        Happening::Delivered {
                            delivery: Delivery::Watch(event),
                            ..
                        } => event.clone(),
                        _ => zksim::WatchedEvent {
                            kind: zksim::EventType::NodeCreated,
                            path: write.node.clone().unwrap_or_default(),
                        },
                    };
                    first.get_or_insert_with(|| herd_violation(view, write, &last));
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The run ended: every wakeup still waiting to be judged led nowhere.
    fn finish(&mut self, _end: &End) -> Result<(), Violation> {
        self.ledger.finish();
        Ok(())
    }

    fn tally(&self, figures: &mut Tally) {
        let l = &self.ledger;
        figures.acquisitions += l.acquisitions();
        figures.requests += l.requests();
        figures.wakeups += l.wakeups();
        figures.wasted_wakeups += l.wasted();
        figures.latency.merge(&self.latency.0.histogram);
        figures.releases += l.releases().len() as u64;
        for r in l.releases() {
            figures.wakeups_per_release.record(r.woken.len() as u64);
            figures.wasted_per_release.record(u64::from(r.wasted));
            figures.wakeups_per_write.record(r.woken.len() as u64);
        }
        for c in l.creates() {
            figures.wakeups_per_write.record(c.woken.len() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::history::{create_replied, create_sent, created, creates, finds_none, lists, sees};
    use super::*;
    use crate::monitor::testkit::*;
    use crate::monitor::Tally;
    use zksim::EventType;

    const LOCK: &str = "/lock/lock";

    fn figures(m: &HerdMonitor) -> Tally {
        let mut f = Tally::default();
        m.tally(&mut f);
        f
    }
    fn per_release(m: &HerdMonitor) -> Vec<(u64, u64)> {
        figures(m).wakeups_per_release.iter().collect()
    }

    /// The predecessor-watch lock: each release wakes exactly its successor.
    #[test]
    fn a_chain_of_successors_is_no_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let mut log = vec![req(0), req(1), req(2)];
        for c in 0..3 {
            log.extend(creates(c, 1, &format!("/lock/n-{c}"), c as i64 + 1));
        }
        log.push(acq(0, 1));
        log.extend(sees(1, 5, "/lock/n-0", 1));
        log.extend(sees(2, 5, "/lock/n-1", 2));
        log.extend([
            delete_sent(0, 9, "/lock/n-0"),
            rel(0),
            deleted(1, "/lock/n-0"),
        ]);
        log.extend([acq(1, 2), delete_sent(1, 9, "/lock/n-1"), rel(1)]);
        log.extend([deleted(2, "/lock/n-1"), acq(2, 3)]);
        log.extend([delete_sent(2, 9, "/lock/n-2"), rel(2)]);
        assert_eq!(m.observe(&v, &log), Ok(()));
        m.finish(&End::default()).unwrap();
        let f = figures(&m);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.wasted_wakeups, 0);
        assert_eq!(f.max_wakeups_per_release(), 1);
        assert_eq!(f.releases, 3);
        assert_eq!(f.acquisitions, 3);
        assert_eq!(f.requests, 8);
    }

    /// The naive lock: every waiter watches the one lock node.
    #[test]
    fn one_release_waking_everyone_is_a_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(4);
        let mut head = vec![req(0), req(1), req(2), req(3)];
        head.extend(creates(0, 1, LOCK, 7));
        head.push(acq(0, 7));
        for c in 1..4 {
            head.extend(sees(c, 1, LOCK, 7));
        }
        head.extend([delete_sent(0, 3, LOCK), rel(0), deleted(1, LOCK)]);
        assert_eq!(m.observe(&v, &head), Ok(()));
        let err = m.observe(&v, &[deleted(3, LOCK)]).unwrap_err();
        assert_eq!(err.property, Property::NoHerd);
        for needle in ["client 0 released", LOCK, "client 1, client 3"] {
            assert!(err.explanation.contains(needle), "{}", err.explanation);
        }
        // Report-only runs go on: client 2 is woken too, 1 wins, 3 and 2 wasted.
        let _ = m.observe(&v, &[deleted(2, LOCK), acq(1, 2)]);
        m.finish(&End::default()).unwrap();
        let f = figures(&m);
        assert_eq!(f.max_wakeups_per_release(), 3);
        assert_eq!(f.wasted_wakeups, 2);
        assert_eq!(f.max_wasted_per_release(), 2);
    }

    /// Issue 15, seed 10 of `scenarios/lock-naive.toml`: client 3 releases
    /// (its delete not yet taken) and asks again one tick later; in the next
    /// round it watches client 0's node and is woken by client 0's release.
    /// Matching by path and "oldest unsettled release" charged that wakeup
    /// to client 3's own release, which then had woken 4 of 4 clients.
    #[test]
    fn a_wakeup_belongs_to_the_release_of_the_node_the_client_watched() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(4);
        let mut log = vec![req(0), req(1), req(2), req(3)];
        log.extend(creates(3, 1, LOCK, 0x5));
        log.push(acq(3, 0x5));
        for c in 0..3 {
            log.extend(sees(c, 2, LOCK, 0x5));
        }
        log.extend([delete_sent(3, 2, LOCK), rel(3), req(3)]);
        log.extend([deleted(0, LOCK), deleted(1, LOCK), deleted(2, LOCK)]);
        log.extend(creates(0, 3, LOCK, 0xe));
        log.push(acq(0, 0xe));
        for c in 1..4 {
            log.extend(sees(c, 4, LOCK, 0xe));
        }
        log.extend([delete_sent(0, 4, LOCK), rel(0), deleted(3, LOCK)]);
        let _ = m.observe(&v, &log);
        m.finish(&End::default()).unwrap();
        assert_eq!(
            per_release(&m),
            vec![(1, 1), (3, 1)],
            "#0 woke 0, 1, 2; #1 woke 3"
        );
        assert_eq!(figures(&m).max_wakeups_per_release(), 3);
    }

    #[test]
    fn writer_release_may_wake_all_readers() {
        let v = FakeView::new(3);
        let head = |second: H| {
            let mut log = vec![req_read(1), second];
            log.extend(creates(0, 1, "/rw/write-0", 3));
            log.extend(sees(1, 1, "/rw/write-0", 3));
            log.extend(sees(2, 1, "/rw/write-0", 3));
            log.extend([delete_sent(0, 3, "/rw/write-0"), rel(0)]);
            log.extend([deleted(1, "/rw/write-0"), deleted(2, "/rw/write-0")]);
            log
        };
        let mut m = HerdMonitor::new(Family::RwLock);
        let mut log = head(req_read(2));
        log.extend([read(1, 4), read(2, 5)]);
        assert_eq!(m.observe(&v, &log), Ok(()));
        let mut m = HerdMonitor::new(Family::RwLock);
        assert!(m.observe(&v, &head(req(2))).is_err());
    }

    /// A child watch is charged to the release of a child the client listed.
    #[test]
    fn a_children_watch_wakes_for_a_listed_child() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let mut log = vec![req(1), req(2)];
        log.extend(creates(0, 1, "/q/n-0", 1));
        log.extend(lists(1, 1, "/q", &["n-0"]));
        log.extend(lists(2, 1, "/q", &["n-0"]));
        log.extend([delete_sent(0, 2, "/q/n-0"), rel(0)]);
        log.push(woken(1, EventType::NodeChildrenChanged, "/q"));
        assert_eq!(m.observe(&v, &log), Ok(()));
        let err = m
            .observe(&v, &[woken(2, EventType::NodeChildrenChanged, "/q")])
            .unwrap_err();
        assert_eq!(err.property, Property::NoHerd);
    }

    #[test]
    fn wakeups_from_an_expiry_belong_to_no_release() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let mut log = vec![req(1), req(2)];
        log.extend(creates(0, 1, "/lock/n-0", 1));
        log.extend(sees(1, 1, "/lock/n-0", 1));
        log.extend(sees(2, 1, "/lock/n-1", 2));
        log.extend([delete_sent(0, 3, "/lock/n-0"), rel(0)]);
        log.push(deleted(1, "/lock/n-0"));
        // 2 watched 1's node, which went with 1's session.
        log.push(deleted(2, "/lock/n-1"));
        assert_eq!(m.observe(&v, &log), Ok(()));
        let f = figures(&m);
        assert_eq!(f.wakeups, 2);
        assert_eq!(f.max_wakeups_per_release(), 1);
    }

    #[test]
    fn latency_is_requested_to_acquired_in_ticks() {
        let mut m = HerdMonitor::new(Family::Lock);
        let mut v = FakeView::new(1);
        m.observe(&v, &[req(0)]).unwrap();
        v.now = 7;
        m.observe(&v, &[acq(0, 1)]).unwrap();
        assert_eq!(figures(&m).latency.iter().collect::<Vec<_>>(), vec![(7, 1)]);
    }

    /// Issue 35, back to back: the waiters found no lock node and watch for
    /// its creation; the next holder's create wakes them all. No release
    /// woke more than one, and the herd is caught at the create.
    #[test]
    fn one_create_waking_everyone_is_a_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(4);
        let mut log = vec![req(0), req(1), req(2), req(3)];
        log.extend(creates(0, 1, LOCK, 5));
        log.extend([acq(0, 5), delete_sent(0, 2, LOCK), rel(0)]);
        for c in 1..4 {
            log.extend(finds_none(c, 1, LOCK));
        }
        log.push(create_sent(1, 2, LOCK));
        log.extend([created(1, LOCK), created(2, LOCK)]);
        assert_eq!(m.observe(&v, &log), Ok(()), "its own and one other");
        assert_eq!(m.observe(&v, &[created(3, LOCK)]), Ok(()), "reply not in");
        let err = m.observe(&v, &[create_replied(1, 2, LOCK, 9)]).unwrap_err();
        assert_eq!(err.property, Property::NoHerd);
        for needle in [
            "client 1 created /lock/lock",
            "woken 3 waiters",
            "NodeCreated",
        ] {
            assert!(err.explanation.contains(needle), "{}", err.explanation);
        }
        let _ = m.observe(&v, &[acq(1, 9)]);
        m.finish(&End::default()).unwrap();
        let f = figures(&m);
        assert_eq!(f.max_wakeups_per_release(), 0);
        assert_eq!(f.max_wakeups_per_write(), 3);
        assert_eq!(f.wakeups_per_write.len(), 3, "one release, two creates");
    }

    /// A create that woke only its creator and one other client wakes one
    /// waiter besides the one that now holds the lock: no herd.
    #[test]
    fn a_create_waking_its_creator_and_one_other_is_no_herd() {
        let mut m = HerdMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let mut log = vec![req(1), req(2)];
        log.extend(finds_none(1, 1, LOCK));
        log.extend(finds_none(2, 1, LOCK));
        log.push(create_sent(1, 2, LOCK));
        log.extend([created(1, LOCK), created(2, LOCK)]);
        log.extend([create_replied(1, 2, LOCK, 4), acq(1, 4)]);
        assert_eq!(m.observe(&v, &log), Ok(()));
        assert_eq!(figures(&m).max_wakeups_per_write(), 2);
    }

    /// A herd of a thousand is named by its first few and a count, not a
    /// thousand names.
    #[test]
    fn a_large_herd_names_its_first_waiters_and_counts_the_rest() {
        let woken = |n: usize| Write {
            kind: WriteKind::Release,
            client: 0,
            node: Some(LOCK.to_string()),
            czxid: Some(7),
            woken: (1..=n).map(|c| (c, true)).collect(),
            wasted: 0,
        };
        let event = zksim::WatchedEvent {
            kind: EventType::NodeDeleted,
            path: LOCK.to_string(),
        };
        let v = FakeView::new(1000);
        let big = herd_violation(&v, &woken(999), &event).explanation;
        assert!(
            big.contains("woken 999 waiters (client 1, client 2,"),
            "{big}"
        );
        assert!(big.contains("client 6, and 993 more;"), "{big}");
        assert!(!big.contains("client 7"), "{big}");
        let small = herd_violation(&v, &woken(6), &event).explanation;
        assert!(
            small.contains("(client 1, client 2, client 3, client 4, client 5, client 6;"),
            "{small}"
        );
    }
}
