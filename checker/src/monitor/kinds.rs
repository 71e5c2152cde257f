//! Which kinds of happening a step holds, as a set of bits.
//!
//! Half the steps of a run are the servers' own work — a request taken
//! from a connection, a write ordered, a transaction applied on a
//! follower — and no built-in monitor reads those happenings. Each
//! monitor says which kinds it reads ([`super::Monitor::READS`]); the
//! [`super::MonitorSet`] works out a step's kinds once and passes a
//! monitor over the steps that hold none of them (9% of random search's
//! instructions, docs/PERFORMANCE.md).

use zksim::Happening;

/// A set of happening kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kinds(u8);

impl Kinds {
    /// No kind: the start of a union, and what a step with nothing a monitor
    /// reads holds.
    pub const NONE: Kinds = Kinds(0);
    /// `Happening::Sent`: a client queued a request.
    pub const SENT: Kinds = Kinds(1);
    /// `Happening::Taken`: a server took a request.
    pub const TAKEN: Kinds = Kinds(1 << 1);
    /// `Happening::Committed`: the leader ordered a transaction.
    pub const COMMITTED: Kinds = Kinds(1 << 2);
    /// `Happening::Applied`: a server applied a transaction.
    pub const APPLIED: Kinds = Kinds(1 << 3);
    /// `Happening::Delivered`: a client handled a reply, watch or session event.
    pub const DELIVERED: Kinds = Kinds(1 << 4);
    /// `Happening::App`: a client emitted an application event.
    pub const APP: Kinds = Kinds(1 << 5);
    /// `Happening::SessionEnded`.
    pub const SESSION_ENDED: Kinds = Kinds(1 << 6);
    /// Every step, whatever it holds — even nothing, as a tick that only
    /// moves the clock: a monitor that reads the world at every step
    /// reads this. Every step holds it ([`Kinds::in_step`]).
    pub const EVERY_STEP: Kinds = Kinds(1 << 7);
    /// Every kind, and every step: what a monitor that does not say reads.
    pub const ALL: Kinds = Kinds(u8::MAX);

    /// The kind of one happening.
    pub fn of<E>(happening: &Happening<E>) -> Kinds {
        // No `_` arm: a new kind of happening must get its own bit.
        match happening {
            Happening::Sent { .. } => Kinds::SENT,
            Happening::Taken { .. } => Kinds::TAKEN,
            Happening::Committed { .. } => Kinds::COMMITTED,
            Happening::Applied { .. } => Kinds::APPLIED,
            Happening::Delivered { .. } => Kinds::DELIVERED,
            Happening::App { .. } => Kinds::APP,
            Happening::SessionEnded { .. } => Kinds::SESSION_ENDED,
        }
    }

    /// The kinds a step holds ([`Kinds::EVERY_STEP`] and its happenings').
    pub fn in_step<E>(step: &[Happening<E>]) -> Kinds {
        step.iter()
            .fold(Kinds::EVERY_STEP, |kinds, h| kinds | Kinds::of(h))
    }

    /// Both sets' kinds (`|`, usable in constants).
    pub const fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }

    /// Whether the two sets share a kind.
    pub const fn meets(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Kinds {
    type Output = Kinds;
    fn bitor(self, other: Kinds) -> Kinds {
        self.union(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;
    use zksim::Happening;

    #[test]
    fn a_step_holds_the_kinds_of_its_happenings() {
        let step: Vec<H> = vec![
            Happening::Taken {
                client: 0,
                server: 1,
                op: 3,
            },
            rel(0),
            ended(7, true),
        ];
        let kinds = Kinds::in_step(&step);
        assert!(kinds.meets(Kinds::TAKEN));
        assert!(kinds.meets(Kinds::APP));
        assert!(kinds.meets(Kinds::SESSION_ENDED));
        assert!(!kinds.meets(Kinds::SENT | Kinds::COMMITTED | Kinds::APPLIED | Kinds::DELIVERED));
        // An empty step (a tick) is still a step: only a monitor that reads
        // every step sees it.
        let empty = Kinds::in_step::<zkrecipes::AppEvent>(&[]);
        assert!(empty.meets(Kinds::ALL));
        assert!(empty.meets(Kinds::EVERY_STEP));
        assert!(!empty.meets(Kinds::APP | Kinds::SESSION_ENDED | Kinds::SENT));
    }

    #[test]
    fn every_kind_has_its_own_bit_and_all_holds_them() {
        let each = [
            Kinds::SENT,
            Kinds::TAKEN,
            Kinds::COMMITTED,
            Kinds::APPLIED,
            Kinds::DELIVERED,
            Kinds::APP,
            Kinds::SESSION_ENDED,
            Kinds::EVERY_STEP,
        ];
        for (i, a) in each.iter().enumerate() {
            assert!(a.meets(Kinds::ALL));
            for (j, b) in each.iter().enumerate() {
                assert_eq!(a.meets(*b), i == j);
            }
        }
        let union = each.iter().fold(Kinds::NONE, |u, k| u | *k);
        assert_eq!(union, Kinds::ALL);
    }
}
