//! A user's own [`Monitor`] inside a [`super::MonitorSet`].
//!
//! The set is one type for every recipe and every user, so a user monitor
//! goes in behind a box. The box keeps what the explored state needs of
//! it: cloning, and hashing and equality of the monitor's own value (two
//! user monitors are equal only if they are the same type with equal
//! state), so visited-state dedup stays sound with user monitors in.

use std::any::{Any, TypeId};
use std::fmt;
use std::hash::{Hash, Hasher};

use super::tally::Tally;
use super::view::{End, View};
use super::{Kinds, Monitor, StepLog, Violation};

/// A user-defined monitor, boxed ([`Custom::new`]). Always hard: its
/// violations fail the run.
pub struct Custom(Box<dyn Erased>);

impl Custom {
    /// Box a user's monitor so that a scenario can hold monitors of different
    /// types in one list.
    pub fn new(monitor: impl Monitor) -> Self {
        Custom(Box::new(monitor))
    }

    /// The step, if it holds a kind the monitor reads (`kinds`: the
    /// step's), else a pass over it ([`Monitor::READS`]).
    pub(crate) fn observe(
        &mut self,
        world: &dyn View,
        step: &StepLog,
        kinds: Kinds,
    ) -> Result<(), Violation> {
        if kinds.meets(self.0.reads()) {
            self.0.observe(world, step)
        } else {
            self.0.pass(world);
            Ok(())
        }
    }

    pub(crate) fn finish(&mut self, end: &End) -> Result<(), Violation> {
        self.0.finish(end)
    }

    pub(crate) fn tally(&self, tally: &mut Tally) {
        self.0.tally(tally)
    }
}

/// [`Monitor`] with its generic method and its `Clone + Hash + Eq` turned
/// into methods a box can call.
trait Erased: Send + Sync {
    fn reads(&self) -> Kinds;
    fn observe(&mut self, world: &dyn View, step: &StepLog) -> Result<(), Violation>;
    fn pass(&mut self, world: &dyn View);
    fn finish(&mut self, end: &End) -> Result<(), Violation>;
    fn tally(&self, tally: &mut Tally);
    fn boxed_clone(&self) -> Box<dyn Erased>;
    fn as_any(&self) -> &dyn Any;
    /// `other` is the same type and equal by that type's `Eq`.
    fn eq_any(&self, other: &dyn Any) -> bool;
    fn hash_into(&self, state: &mut dyn Hasher);
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<M: Monitor> Erased for M {
    fn reads(&self) -> Kinds {
        M::READS
    }
    fn observe(&mut self, world: &dyn View, step: &StepLog) -> Result<(), Violation> {
        Monitor::observe(self, world, step)
    }
    fn pass(&mut self, world: &dyn View) {
        Monitor::pass(self, world)
    }
    fn finish(&mut self, end: &End) -> Result<(), Violation> {
        Monitor::finish(self, end)
    }
    fn tally(&self, tally: &mut Tally) {
        Monitor::tally(self, tally)
    }
    fn boxed_clone(&self) -> Box<dyn Erased> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn eq_any(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<M>() == Some(self)
    }
    fn hash_into(&self, mut state: &mut dyn Hasher) {
        TypeId::of::<M>().hash(&mut state);
        self.hash(&mut state);
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl Clone for Custom {
    fn clone(&self) -> Self {
        Custom(self.0.boxed_clone())
    }
}

impl PartialEq for Custom {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_any(other.0.as_any())
    }
}

impl Eq for Custom {}

impl Hash for Custom {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash_into(state);
    }
}

impl fmt::Debug for Custom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}
