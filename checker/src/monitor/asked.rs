//! `asked`: a client acquires only when it asked for the lock.
//!
//! Every `Acquired` must answer an open `Requested` of the same client: one
//! made since its previous `Acquired` or `GaveUp`. An acquisition nobody
//! asked for is a lock held by code that no caller is waiting on — in seed
//! 002's `WriteLock`, a `LockWatcher` left over from an earlier round runs
//! `lock()` on a connection event after `unlock()`, creates a node and calls
//! `lockAcquired()`; the line is then blocked by a holder whose program is
//! not in a critical section and will not release until its next round.
//!
//! The rule needs nothing but the recipe's own events, so it fits any family
//! that reports `Requested`/`Acquired` (locks, read/write locks; a recipe that
//! never reports `Requested` cannot be judged and should not name it).

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening, Tick};

use super::view::{who, View};
use super::{Monitor, Property, StepLog, Violation};

/// What a client's last lock event was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Last {
    /// `Requested` at this tick, not yet answered.
    Asked(Tick),
    /// `Acquired` at this tick (the request is used up).
    Acquired(Tick),
    /// `GaveUp` at this tick.
    GaveUp(Tick),
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AskedMonitor {
    last: BTreeMap<ClientId, Last>,
}

impl AskedMonitor {
    pub fn new() -> Self {
        Self::default()
    }

    /// This monitor under a renaming of clients (symmetry reduction): its
    /// memory is each client's last lock event and when, so renaming moves
    /// the entries to the clients' new ids (ticks are not renamed).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        AskedMonitor {
            last: self.last.iter().map(|(&c, &l)| (r.client(c), l)).collect(),
        }
    }
}

fn unasked(client: ClientId, fence: i64, now: Tick, before: Option<Last>) -> Violation {
    let why = match before {
        None => "it had never asked".to_string(),
        Some(Last::Acquired(at)) => format!(
            "its last request was already answered by the acquisition at tick {at}, and it had \
             not asked again"
        ),
        Some(Last::GaveUp(at)) => {
            format!("it had given up its last request at tick {at} and had not asked again")
        }
        Some(Last::Asked(_)) => unreachable!("an open request is no violation"),
    };
    Violation {
        property: Property::AcquiredOnlyWhenAsked,
        explanation: format!(
            "{} acquired the lock (fence {fence}) at tick {now} without having asked for it: {why}. \
             The lock is held by code no caller waits on, and nobody will release it until the \
             program happens to ask again",
            who(client)
        ),
    }
}

impl Monitor for AskedMonitor {
    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            let Happening::App { client, event } = happening else {
                continue;
            };
            let now = view.now();
            match event {
                AppEvent::Requested { .. } => {
                    self.last.insert(*client, Last::Asked(now));
                }
                AppEvent::GaveUp => {
                    self.last.insert(*client, Last::GaveUp(now));
                }
                AppEvent::Acquired { fence, .. } => {
                    let before = self.last.insert(*client, Last::Acquired(now));
                    if !matches!(before, Some(Last::Asked(_))) {
                        first.get_or_insert_with(|| unasked(*client, *fence, now, before));
                    }
                }
                _ => {}
            }
        }
        first.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    #[test]
    fn every_acquisition_answering_a_request_passes() {
        let mut m = AskedMonitor::new();
        let v = FakeView::new(2);
        let log = [
            req(0),
            req(1),
            acq(0, 1),
            rel(0),
            gave_up(1),
            req(1),
            acq(1, 2),
            rel(1),
            req(0),
            acq(0, 3),
        ];
        assert_eq!(m.observe(&v, &log), Ok(()));
    }

    #[test]
    fn an_acquisition_after_release_without_a_new_request_is_caught() {
        let mut m = AskedMonitor::new();
        let mut v = FakeView::new(2);
        m.observe(&v, &[req(0), acq(0, 1), rel(0)]).unwrap();
        v.now = 4;
        let err = m.observe(&v, &[acq(0, 7)]).unwrap_err();
        assert_eq!(err.property, Property::AcquiredOnlyWhenAsked);
        for needle in ["client 0", "fence 7", "tick 4", "acquisition at tick 0"] {
            assert!(err.explanation.contains(needle), "{}", err.explanation);
        }
    }

    #[test]
    fn renaming_moves_each_clients_memory_with_it() {
        let mut m = AskedMonitor::new();
        let v = FakeView::new(2);
        m.observe(&v, &[req(0), acq(0, 1), rel(0), req(1)]).unwrap();
        let swapped = m.renamed(&zksim::rename::Renaming::new(vec![1, 0]));
        assert_ne!(swapped, m);
        // Client 1 (formerly 0) has used its request up; client 0 (formerly
        // 1) has an open one.
        assert!(swapped.clone().observe(&v, &[acq(0, 2)]).is_ok());
        assert!(swapped.clone().observe(&v, &[acq(1, 2)]).is_err());
        let back = swapped.renamed(&zksim::rename::Renaming::new(vec![1, 0]));
        assert_eq!(back, m);
    }

    #[test]
    fn never_asking_or_having_given_up_is_caught() {
        let v = FakeView::new(2);
        let err = AskedMonitor::new().observe(&v, &[acq(1, 3)]).unwrap_err();
        assert!(
            err.explanation.contains("never asked"),
            "{}",
            err.explanation
        );
        let err = AskedMonitor::new()
            .observe(&v, &[req(1), gave_up(1), acq(1, 3)])
            .unwrap_err();
        assert!(err.explanation.contains("given up"), "{}", err.explanation);
    }
}
