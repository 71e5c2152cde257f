//! `mutex`: never two clients that both believe they hold the lock.
//!
//! A client *believes it holds* the lock from its `Acquired` until its
//! `Released` or `LostLock`. For an exclusive lock any two such clients
//! overlap; for a read/write lock a writer (`shared: false`) overlaps with
//! anyone, readers with each other do not. A client whose process crashed
//! believes nothing any more and stops counting as a holder.
//!
//! This is belief-level exclusion: a client paused past its session timeout
//! still believes it holds while the ensemble has already handed the lock on,
//! so no recipe can keep it under such pauses. [`super::fenced`] judges the
//! resource-level property that fencing does keep.

use std::collections::BTreeMap;

use zkrecipes::{AppEvent, Family};
use zksim::{ClientId, Happening};

use super::view::{who, Measured, View};
use super::{Kinds, Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Hold {
    fence: i64,
    shared: bool,
    /// Simulated tick of the `Acquired`.
    since: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MutexMonitor {
    /// Readers may share (read/write lock); otherwise every hold is exclusive.
    readers_share: bool,
    holders: BTreeMap<ClientId, Hold>,
    /// Sessions that have ended: a client acting in one acts on a stale view.
    ended: std::collections::BTreeSet<zksim::SessionId>,
    overlaps: Measured<u64>,
}

impl MutexMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        MutexMonitor {
            readers_share: self.readers_share,
            holders: self
                .holders
                .iter()
                .map(|(&c, h)| (r.client(c), *h))
                .collect(),
            ended: self.ended.iter().map(|&s| r.session(s)).collect(),
            overlaps: self.overlaps.clone(),
        }
    }

    pub fn new(family: Family) -> Self {
        MutexMonitor {
            readers_share: family == Family::RwLock,
            holders: BTreeMap::new(),
            ended: std::collections::BTreeSet::new(),
            overlaps: Measured(0),
        }
    }

    /// How many overlaps were seen (each new holder that overlapped counts once).
    pub fn overlaps(&self) -> u64 {
        self.overlaps.0
    }
}

impl Monitor for MutexMonitor {
    /// Acquisitions and releases, and sessions that end (to tell a stale
    /// holder in the explanation).
    const READS: Kinds = Kinds::APP.union(Kinds::SESSION_ENDED);

    /// Judge one step's history. Processes the whole step and returns the
    /// first violation in it, so figures stay complete in report-only mode.
    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            let (client, event) = match happening {
                Happening::App { client, event } => (client, event),
                Happening::SessionEnded { session, .. } => {
                    self.ended.insert(*session);
                    continue;
                }
                _ => continue,
            };
            match *event {
                AppEvent::Acquired { fence, shared } => {
                    let shared = shared && self.readers_share;
                    self.holders.retain(|&c, _| !view.is_crashed(c));
                    let clash = self
                        .holders
                        .iter()
                        .find(|(&other, hold)| other != *client && !(shared && hold.shared));
                    if let Some((&other, hold)) = clash {
                        self.overlaps.0 += 1;
                        let stale = |c: ClientId| {
                            if self.ended.contains(&view.session_of(c)) {
                                format!(
                                    " ({}'s session had already ended: it acted on a stale view)",
                                    who(c)
                                )
                            } else {
                                String::new()
                            }
                        };
                        let note = format!("{}{}", stale(*client), stale(other));
                        first.get_or_insert_with(|| Violation {
                            property: Property::MutualExclusion,
                            explanation: format!(
                                "{} acquired the lock{} (fence {fence:#x}) at tick {} while {} still \
                                 believed it held it{} (fence {:#x}, since tick {}) and had neither \
                                 released it nor noticed losing it{note}: two clients act as the lock holder at once",
                                who(*client),
                                if shared { " for reading" } else { "" },
                                view.now(),
                                who(other),
                                if hold.shared { " for reading" } else { "" },
                                hold.fence,
                                hold.since,
                            ),
                        });
                    }
                    self.holders.insert(
                        *client,
                        Hold {
                            fence,
                            shared,
                            since: view.now(),
                        },
                    );
                }
                AppEvent::Released | AppEvent::LostLock => {
                    self.holders.remove(client);
                }
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn tally(&self, tally: &mut Tally) {
        tally.overlaps += self.overlaps();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    #[test]
    fn handing_the_lock_on_is_fine() {
        let mut m = MutexMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let log = [acq(0, 10), rel(0), acq(1, 12), lost(1), acq(2, 14), rel(2)];
        assert_eq!(m.observe(&v, &log), Ok(()));
    }

    #[test]
    fn two_holders_are_caught_with_both_names() {
        let mut m = MutexMonitor::new(Family::Lock);
        let v = FakeView::new(3);
        let err = m.observe(&v, &[acq(0, 10), acq(2, 12)]).unwrap_err();
        assert_eq!(err.property, Property::MutualExclusion);
        assert!(
            err.explanation.contains("client 2 acquired"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("client 0 still believed"),
            "{}",
            err.explanation
        );
        assert!(err.explanation.contains("fence 0xa"), "{}", err.explanation);
        assert_eq!(m.overlaps(), 1);
    }

    #[test]
    fn readers_share_but_a_writer_does_not() {
        let mut m = MutexMonitor::new(Family::RwLock);
        let v = FakeView::new(3);
        assert_eq!(m.observe(&v, &[read(0, 5), read(1, 6)]), Ok(()));
        let err = m.observe(&v, &[acq(2, 7)]).unwrap_err();
        assert!(err
            .explanation
            .contains("client 2 acquired the lock (fence 0x7)"));
        // On a plain lock, "shared" requests are exclusive all the same.
        let mut plain = MutexMonitor::new(Family::Lock);
        assert!(plain.observe(&v, &[read(0, 5), read(1, 6)]).is_err());
    }

    #[test]
    fn an_expired_acquirer_is_named_as_acting_on_a_stale_view() {
        let mut m = MutexMonitor::new(Family::Lock);
        let v = FakeView::new(2);
        let err = m
            .observe(&v, &[acq(0, 9), ended(1001, true), acq(1, 8)])
            .unwrap_err();
        assert!(
            err.explanation
                .contains("client 1's session had already ended"),
            "{}",
            err.explanation
        );
    }

    #[test]
    fn a_crashed_holder_believes_nothing() {
        let mut m = MutexMonitor::new(Family::Lock);
        let mut v = FakeView::new(2);
        assert_eq!(m.observe(&v, &[acq(0, 10)]), Ok(()));
        v.crashed.push(0);
        assert_eq!(m.observe(&v, &[acq(1, 12)]), Ok(()));
    }
}
