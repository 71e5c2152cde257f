//! User-defined invariants: a named predicate over the world that must hold
//! after every step (stateright's `always`).
//!
//! An invariant is a plain function pointer, so it carries no state: the
//! explored model stays `Clone + Hash + Eq`, and visited-state dedup is as
//! strong with invariants as without. Two invariants are the same when
//! their names are (names identify them in violations and traces).

use std::fmt;
use std::hash::{Hash, Hasher};

use zksim::World;

use crate::monitor::{Property, Violation};

/// A named property of the world, judged after every step and at the end.
pub struct Invariant<C: zksim::Client> {
    /// The name a violation reports (as [`crate::Property::Always`]).
    pub name: &'static str,
    /// The predicate; `false` is a violation. A plain `fn` so that it is
    /// `Copy`, hashable and carries no state the search would have to compare.
    pub holds: fn(&World<C>) -> bool,
}

impl<C: zksim::Client> Invariant<C> {
    /// An invariant called `name` that must hold after every step.
    pub fn new(name: &'static str, holds: fn(&World<C>) -> bool) -> Self {
        Invariant { name, holds }
    }

    /// `Err` with the violation when the invariant is false in `world`.
    pub fn judge(&self, world: &World<C>) -> Result<(), Violation> {
        if (self.holds)(world) {
            Ok(())
        } else {
            Err(Violation {
                property: Property::Always(self.name),
                explanation: format!(
                    "the invariant `{}` is false at t={}",
                    self.name,
                    world.now()
                ),
            })
        }
    }
}

// Manual impls: derives would ask `C` for them, and compare function pointers.
impl<C: zksim::Client> Clone for Invariant<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: zksim::Client> Copy for Invariant<C> {}
impl<C: zksim::Client> PartialEq for Invariant<C> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl<C: zksim::Client> Eq for Invariant<C> {}
impl<C: zksim::Client> Hash for Invariant<C> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}
impl<C: zksim::Client> fmt::Debug for Invariant<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "always({:?})", self.name)
    }
}
