//! Feeding a recorded schedule back to the model.
//!
//! [`IndexChooser`] replays a token's indices strictly: an index outside the
//! enabled list is an error naming the step. [`EventChooser`] replays a
//! list of events leniently, skipping those no longer enabled; shrinking
//! uses it to try schedules with steps removed.

use zkrecipes::{AnyRecipe, RecipeSet};
use zksim::Event;

use super::Chooser;
use crate::state::SystemState;

/// A replayed index that does not fit the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadChoice {
    /// 0-based step.
    pub step: usize,
    /// The index the token asked for.
    pub index: u32,
    /// How many events were enabled at that step (the index must be below it).
    pub enabled: usize,
}

impl std::fmt::Display for BadChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {} chooses event #{} but only {} events are enabled there",
            self.step, self.index, self.enabled
        )
    }
}

impl std::error::Error for BadChoice {}

/// Strict replay of event indices.
pub struct IndexChooser<'a> {
    indices: &'a [u32],
    next: usize,
    /// Set when an index did not fit the run: the token does not belong to this
    /// scenario (or was edited).
    pub error: Option<BadChoice>,
}

impl<'a> IndexChooser<'a> {
    /// A chooser that takes exactly `indices`, one per step, and stops the run
    /// at the first that does not fit.
    pub fn new(indices: &'a [u32]) -> Self {
        IndexChooser {
            indices,
            next: 0,
            error: None,
        }
    }
    /// Indices not used because the run ended (by a violation or its natural end) first.
    pub fn unused(&self) -> usize {
        self.indices.len() - self.next
    }
}

impl<C: RecipeSet> Chooser<C> for IndexChooser<'_> {
    fn choose(&mut self, _model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        let &index = self.indices.get(self.next)?;
        if index as usize >= enabled.len() {
            self.error = Some(BadChoice {
                step: self.next,
                index,
                enabled: enabled.len(),
            });
            return None;
        }
        self.next += 1;
        Some(index as usize)
    }
}

/// Lenient replay of events: an event not enabled when its turn comes is skipped.
pub struct EventChooser<'a> {
    events: &'a [Event],
    next: usize,
}

impl<'a> EventChooser<'a> {
    /// A chooser that takes `events` in order where they are enabled, skipping
    /// those that are not (replaying a schedule on a changed scenario or
    /// recipe).
    pub fn new(events: &'a [Event]) -> Self {
        EventChooser { events, next: 0 }
    }
}

impl<C: RecipeSet> Chooser<C> for EventChooser<'_> {
    fn choose(&mut self, _model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        while let Some(event) = self.events.get(self.next) {
            self.next += 1;
            if let Some(i) = enabled.iter().position(|e| e == event) {
                return Some(i);
            }
        }
        None
    }
}

/// A strict replay and the trace it printed.
#[derive(Clone, Debug)]
pub struct Replayed<C: RecipeSet = AnyRecipe> {
    /// The run itself: its violation, schedule, ending and final state.
    pub run: crate::explore::run::Run<C>,
    /// The run's readable trace, one line per thing that happened.
    pub trace: crate::trace::Trace,
    /// Indices left over because the run ended before them.
    pub unused: usize,
}

/// Replay `indices` on `scenario`, recording the trace.
pub fn replay<C: RecipeSet>(
    scenario: &crate::scenario::Scenario<C>,
    indices: &[u32],
) -> Result<Replayed<C>, BadChoice> {
    replay_lasso(scenario, indices, None)
}

/// Replay a token: [`replay`], and for a lasso (`cycle_from`) the trace
/// marks where the cycle starts and the run is judged as a lasso
/// ([`crate::lasso::judge`]): a liveness violation if it is one, else
/// no violation and a note in the trace saying why not.
pub fn replay_lasso<C: RecipeSet>(
    scenario: &crate::scenario::Scenario<C>,
    indices: &[u32],
    cycle_from: Option<usize>,
) -> Result<Replayed<C>, BadChoice> {
    let mut chooser = IndexChooser::new(indices);
    let mut trace = crate::trace::Trace::with_cycle(cycle_from);
    // The run builds its own model; this one only shows what starting did.
    let mut start = Vec::new();
    let initial = crate::state::SystemState::with_start_log(scenario, &mut start);
    trace.start(&initial, &start);
    let mut run =
        crate::explore::run::drive(scenario, &mut chooser, |m, e, log| trace.record(m, e, log));
    if let Some(bad) = chooser.error {
        return Err(bad);
    }
    if let (Some(from), None) = (cycle_from, &run.violation) {
        match crate::lasso::judge(scenario, &run.schedule.events, from) {
            Ok(v) => {
                run.violation = Some(v);
                run.ending = crate::explore::run::Ending::Violated;
            }
            Err(why) => {
                trace.finish();
                let _ = std::fmt::Write::write_fmt(&mut trace.text, format_args!("({why})\n"));
            }
        }
    }
    match &run.violation {
        Some(v) => trace.violation(v),
        None => trace.finish(),
    }
    let unused = chooser.unused();
    Ok(Replayed { run, trace, unused })
}
