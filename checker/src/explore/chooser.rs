//! The one interface every way of picking a run's next event implements:
//! the seeded sweeps' [`RandomChooser`](super::random::RandomChooser) and
//! [`PctChooser`](super::pct::PctChooser), the replays of
//! [`replay`](super::replay), the shrinker's recorder of lower-index
//! alternatives (`candidate.rs`), and the front end's timed scheduler. [`drive`](crate::explore::run::drive) steps a
//! run with one.

use zkrecipes::{AnyRecipe, RecipeSet};
use zksim::{Event, Fault};

use crate::state::SystemState;

/// Picks the next event of a run over recipe type `C`.
pub trait Chooser<C: RecipeSet = AnyRecipe> {
    /// Index of the event to take among `enabled` (never empty), or `None`
    /// to stop the run here without judging its end (a replayed schedule
    /// ran out).
    fn choose(&mut self, model: &SystemState<C>, enabled: &[Event]) -> Option<usize>;

    /// A fault this chooser never picks, whatever the state: the run loop
    /// leaves it out of the list it offers ([`SystemState::enabled_where`]), so
    /// it is not even checked. Leaving it out must not change which event
    /// the chooser picks, nor whether a state ends the run (a `Heal`, which
    /// keeps a run going, is never left out).
    fn passes_over(&self, _fault: &Fault) -> bool {
        false
    }
}
