//! Property monitors: each consumes the history as it grows and keeps a
//! small state inside the model, so a violation stops the run at the first
//! bad step and visited-state dedup stays sound.
//!
//! Monitors read the world only through [`view::View`] and the history, so
//! they judge any recipe type's world alike.

use std::fmt::Debug;
use std::hash::Hash;

use zkrecipes::AppEvent;
use zksim::Happening;

/// One step's history.
pub type StepLog = [Happening<AppEvent>];

/// Every property zkcheck can judge. What the checker knows of each
/// built-in one (its names, what it reads, the families it fits) is its
/// entry in [`catalogue::CATALOGUE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Property {
    /// `mutex`: never two clients that both believe they hold the lock.
    MutualExclusion,
    /// `fenced-mutex`: the protected resource never accepts a write out of fence order.
    FencedExclusion,
    /// `fifo`: clients acquire in the order they enqueued.
    Fifo,
    /// `herd`: each lock write (a release or a create) wakes at most one waiter besides its writer.
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
    /// A user-defined [`Monitor`]'s property, by its name
    /// ([`crate::check::Check::monitor`]); never named in scenario files.
    Custom(&'static str),
    /// A property that exists only in this crate's unit tests, listed in
    /// no catalogue but the toy one of `catalogue`'s tests: what a new
    /// property is before its entry is written.
    #[cfg(test)]
    #[doc(hidden)]
    Toy,
}

impl Property {
    /// Whether this property's monitor counts something for the figures
    /// (overlaps, wakeups, leaked nodes, ...). `owner` and `asked` only
    /// judge: where a scenario neither makes them hard nor reports them,
    /// running them would produce nothing anyone reads
    /// ([`catalogue::PropertySpec::has_figures`]).
    pub fn has_figures(self) -> bool {
        catalogue::has_figures(self)
    }
}

/// A property broken at some step, with the words that explain it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Violation {
    /// The property broken.
    pub property: Property,
    /// What happened, for a reader of the recipe's article: which client,
    /// which node, which event, why it breaks the property.
    pub explanation: String,
}

/// One property's watcher, and the checker's extension point: the built-in
/// monitors and a user's own (added with [`crate::check::Check::monitor`])
/// are all driven through this trait by [`MonitorSet`].
///
/// A monitor lives in the explored state, so it is `Clone + Hash + Eq`:
/// two states that differ in what a monitor remembers are different states
/// for exhaustive search. Counters kept only for figures belong in a
/// [`view::Measured`], which hashing and equality ignore.
///
/// It reads the world through [`View`] (the clock, sessions, the leader's
/// nodes), so its logic can be tested on a hand-written [`view::FakeView`]
/// and works on any recipe type's world alike.
pub trait Monitor: Clone + Hash + Eq + Debug + Send + Sync + 'static {
    /// The kinds of happening this monitor reads. A step that holds none
    /// of them is not shown to [`Monitor::observe`]: the monitor gets
    /// [`Monitor::pass`] instead. By default a monitor sees every step.
    const READS: Kinds = Kinds::ALL;

    /// Look at what one step did (the world is already after the step).
    /// Process the whole step and return its first violation, so that
    /// figures stay complete when the property is only measured.
    fn observe<V: View + ?Sized>(&mut self, world: &V, step: &StepLog) -> Result<(), Violation>;

    /// A step with no happening of the kinds in [`Monitor::READS`]: do
    /// what `observe` would have done on it, which cannot break the
    /// property and must be nothing unless a client's session changed in
    /// the step (a monitor that mirrors the clients' sessions learns the
    /// new one here). So where only built-in monitors run, a step that
    /// holds no kind any of them reads and starts no session is skipped
    /// altogether (`MonitorSet::concerns`; a user's monitor is shown or
    /// passed over every step). The built-in monitors are held to this by
    /// a test that runs both on every such step of random runs and
    /// compares.
    fn pass<V: View + ?Sized>(&mut self, _world: &V) {}

    /// The run ended (no event enabled, or the step bound reached): judge
    /// what can only be judged at the end (liveness, leaks).
    fn finish(&mut self, _end: &End) -> Result<(), Violation> {
        Ok(())
    }

    /// Add what this monitor measured in the run to its figures.
    fn tally(&self, _tally: &mut Tally) {}
}

mod asked;
pub mod catalogue;
mod custom;
mod election;
mod fenced;
mod fifo;
pub mod herd;
mod kinds;
mod leaks;
mod liveness;
mod mutex;
mod named;
pub(crate) mod owner;
mod queue;
pub(crate) mod set;
pub(crate) mod tally;
#[doc(hidden)]
#[cfg(test)]
mod testkit;
mod view;
mod waitfor;

pub use custom::Custom;
pub use kinds::Kinds;
pub use named::result_name;
pub use set::MonitorSet;
pub use tally::{ratio, Histogram, Tally};
pub use view::{End, FakeView, Measured, NodeFacts, View};
