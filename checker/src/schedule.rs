//! Schedules: the list of choices that makes a run.
//!
//! A schedule is kept as the [`Event`]s chosen, not as indices into
//! [`World::enabled`](zksim::World::enabled): events stay meaningful when a
//! shrinker removes earlier steps (a replay can skip an event that is no
//! longer enabled), and traces read them directly. Replay tokens store the
//! *index* of each event in the enabled list instead, which is compact and
//! equivalent because the world is deterministic ([`Schedule::to_indices`]).

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Fault, Happening};

use crate::scenario::Scenario;
use crate::state::SystemState;

/// The events of one run, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// The events, one per step.
    pub events: Vec<Event>,
}

impl Schedule {
    /// How many steps.
    pub fn len(&self) -> usize {
        self.events.len()
    }
    /// No step at all.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    /// How many injected faults the schedule has (heals excluded).
    pub fn faults(&self) -> usize {
        self.events.iter().filter(|e| is_injected_fault(e)).count()
    }

    /// Each event's index in the list of events enabled where it was taken.
    /// `None` if some event is not enabled where the schedule takes it
    /// (the schedule does not belong to this scenario).
    pub fn to_indices<C: RecipeSet>(&self, scenario: &Scenario<C>) -> Option<Vec<u32>> {
        let mut model = SystemState::new(scenario);
        let mut enabled = Vec::new();
        let mut log: Vec<Happening<AppEvent>> = Vec::new();
        let mut out = Vec::with_capacity(self.events.len());
        for event in &self.events {
            enabled.clear();
            model.enabled(&mut enabled);
            let i = enabled.iter().position(|e| e == event)?;
            out.push(u32::try_from(i).ok()?);
            // A violation ends the run; the schedule must end with it.
            let _ = model.step(event, &mut log);
        }
        Some(out)
    }
}

/// A fault from the scenario's budget (a `Heal` only undoes one, and is free).
pub(crate) fn is_injected_fault(event: &Event) -> bool {
    matches!(event, Event::Fault(f) if !matches!(f, Fault::Heal { .. }))
}
