//! The shrinker's other chooser: beside the lenient replay of a candidate
//! ([`EventChooser`](super::replay::EventChooser)), it needs, for each step
//! of the current schedule, the events that were enabled at a lower index
//! than the one taken — the candidates of its "lower the index" pass
//! ([`crate::shrink`]).

use zkrecipes::RecipeSet;
use zksim::Event;

use super::Chooser;
use crate::state::SystemState;

/// Replays a schedule strictly and records, per step, the events with a
/// lower index than the one taken (at most `per_step` of them, lowest
/// first). The run stops where the schedule runs out or an event of it is
/// not enabled.
pub(crate) struct AlternativesRecorder<'a> {
    events: &'a [Event],
    next: usize,
    per_step: usize,
    out: &'a mut Vec<Vec<Event>>,
}

impl<'a> AlternativesRecorder<'a> {
    /// Replays `events`, pushing each step's alternatives onto `out`.
    pub(crate) fn new(events: &'a [Event], per_step: usize, out: &'a mut Vec<Vec<Event>>) -> Self {
        AlternativesRecorder {
            events,
            next: 0,
            per_step,
            out,
        }
    }
}

impl<C: RecipeSet> Chooser<C> for AlternativesRecorder<'_> {
    fn choose(&mut self, _: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        let event = self.events.get(self.next)?;
        self.next += 1;
        let i = enabled.iter().position(|e| e == event)?;
        self.out
            .push(enabled[..i].iter().take(self.per_step).cloned().collect());
        Some(i)
    }
}
