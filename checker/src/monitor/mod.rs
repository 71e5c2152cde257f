//! Property monitors: each consumes the history as it grows and keeps a
//! small state inside the model, so a violation stops the run at the first
//! bad step and visited-state dedup stays sound.
//!
//! Monitors read the world only through [`view::View`] and the history, so
//! they judge any recipe type's world alike.

use zkrecipes::{AnyRecipe, AppEvent};
use zksim::{Client, Happening, World};

/// One step's history.
pub type StepLog = [Happening<AppEvent>];

/// Every property zkcheck can judge, by the name scenarios use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Property {
    /// `mutex`: never two clients that both believe they hold the lock.
    MutualExclusion,
    /// `fenced-mutex`: the protected resource never accepts a write out of fence order.
    FencedExclusion,
    /// `fifo`: clients acquire in the order they enqueued.
    Fifo,
    /// `herd`: each release wakes at most one waiter.
    NoHerd,
    /// `liveness`: every client that asked eventually acquires and finishes.
    Liveness,
    /// `leaks`: no recipe znode is left once every client has finished.
    NoLeaks,
    /// `queue`: every offered item is taken exactly once, in order.
    QueueSafety,
    /// `election`: at most one leader at a time, and a leader emerges.
    Election,
    /// `no-panic`: no step panics. Always judged, never named in a scenario:
    /// a recipe that panics has a bug whatever the checks.
    NoPanic,
    /// `asked`: every `Acquired` answers an open `Requested` of that client.
    AcquiredOnlyWhenAsked,
    /// `owner`: a client that believes it holds does so through a node of
    /// its own current, live session.
    Owner,
    /// A user-defined invariant over the world, by its name
    /// ([`crate::invariant::Invariant`]); never named in scenario files.
    Always(&'static str),
}

/// A property broken at some step, with the words that explain it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    pub property: Property,
    /// What happened, for a reader of the recipe's article: which client,
    /// which node, which event, why it breaks the property.
    pub explanation: String,
}

/// One property's watcher over worlds of recipe type `C`. Lives in the
/// explored state: `Clone + Hash + Eq`.
pub trait Monitor<C: Client<Event = AppEvent> = AnyRecipe>:
    Clone + std::hash::Hash + Eq + std::fmt::Debug
{
    /// Look at what one step did (the world is already after the step).
    fn observe(&mut self, world: &World<C>, step: &StepLog) -> Result<(), Violation>;
    /// The run ended (no event enabled, or the step bound reached):
    /// judge what can only be judged at the end (liveness, leaks).
    fn finish(&mut self, world: &World<C>) -> Result<(), Violation>;
}

pub mod asked;
pub mod election;
pub mod fenced;
pub mod fifo;
pub mod herd;
pub mod leaks;
pub mod liveness;
pub mod mutex;
pub mod owner;
pub mod queue;
pub mod set;
pub mod tally;
#[doc(hidden)]
pub mod testkit;
pub mod view;
pub mod waitfor;

pub use set::MonitorSet;
pub use tally::{Histogram, Tally};
