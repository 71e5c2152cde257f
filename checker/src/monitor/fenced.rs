//! `fenced-mutex`: the protected resource never accepts writes of two
//! holders interleaved.
//!
//! The resource is modelled the way a fencing-token store works: it keeps the
//! newest fence it has accepted and rejects every `ResourceWrite` whose fence
//! is older (a stale holder's write bounces; that is the mechanism working,
//! not a violation, and is counted in the figures). A write whose fence equals
//! the newest is accepted only from the client that wrote under that fence
//! first: two clients writing under one fence means the recipe handed the same
//! grant to both, and the resource cannot tell their writes apart.
//!
//! With fences that grow with every grant (the czxid of the granting node),
//! this property holds even when belief-level exclusion ([`super::mutex`])
//! breaks under long pauses.

use zkrecipes::AppEvent;
use zksim::{ClientId, Happening};

use super::view::{who, Measured, View};
use super::{Kinds, Monitor, Property, StepLog, Tally, Violation};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FencedMonitor {
    /// Newest accepted fence and the client that first wrote under it.
    newest: Option<(i64, ClientId)>,
    stale: Measured<u64>,
    accepted: Measured<u64>,
}

impl FencedMonitor {
    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        FencedMonitor {
            newest: self.newest.map(|(fence, c)| (fence, r.client(c))),
            ..self.clone()
        }
    }

    pub fn new() -> Self {
        Self::default()
    }
    /// Writes rejected as stale.
    pub fn stale_writes(&self) -> u64 {
        self.stale.0
    }
    pub fn accepted_writes(&self) -> u64 {
        self.accepted.0
    }
}

impl Monitor for FencedMonitor {
    /// Only the resource's writes.
    const READS: Kinds = Kinds::APP;

    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        let mut first = None;
        for happening in step {
            let Happening::App {
                client,
                event: AppEvent::ResourceWrite { fence },
            } = happening
            else {
                continue;
            };
            let (client, fence) = (*client, *fence);
            match self.newest {
                Some((newest, _)) if fence < newest => self.stale.0 += 1,
                Some((newest, owner)) if fence == newest && owner != client => {
                    self.accepted.0 += 1;
                    first.get_or_insert_with(|| Violation {
                        property: Property::FencedExclusion,
                        explanation: format!(
                            "at tick {} the resource accepted a write from {} under fence {fence:#x}, \
                             the same fence {} already wrote under: the recipe granted the lock to \
                             both with one token, so the resource cannot keep their writes apart",
                            view.now(),
                            who(client),
                            who(owner),
                        ),
                    });
                }
                Some((newest, _)) if fence == newest => self.accepted.0 += 1,
                _ => {
                    self.accepted.0 += 1;
                    self.newest = Some((fence, client));
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    fn tally(&self, tally: &mut Tally) {
        tally.stale_writes += self.stale_writes();
        tally.accepted_writes += self.accepted_writes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    #[test]
    fn a_stale_holder_is_rejected_not_a_violation() {
        let mut m = FencedMonitor::new();
        let v = FakeView::new(2);
        // Client 0 (fence 5) was paused; client 1 got fence 9 and wrote; 0 wakes and writes.
        let log = [write(0, 5), write(1, 9), write(0, 5), write(1, 9)];
        assert_eq!(m.observe(&v, &log), Ok(()));
        assert_eq!(m.stale_writes(), 1);
        assert_eq!(m.accepted_writes(), 3);
    }

    #[test]
    fn two_clients_under_one_fence_are_caught() {
        let mut m = FencedMonitor::new();
        let v = FakeView::new(3);
        let err = m
            .observe(&v, &[write(0, 5), write(2, 7), write(1, 7)])
            .unwrap_err();
        assert_eq!(err.property, Property::FencedExclusion);
        assert!(
            err.explanation.contains("client 1 under fence 0x7"),
            "{}",
            err.explanation
        );
        assert!(
            err.explanation.contains("client 2 already wrote"),
            "{}",
            err.explanation
        );
    }
}
