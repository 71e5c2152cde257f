//! Shrinking a failing schedule to a short one that tells the same story.
//!
//! Every candidate is judged by one function, [`Story::accepts`]: the same
//! property, an explanation of the same shape, and (once fixed) the same
//! ingredients — the kinds of faults injected, the errors and expiries the
//! clients were told of ([`story`]). Shrinking runs in three phases:
//!
//! 1. **Removing** ([`passes`]), until a whole round changes nothing: drop
//!    each injected fault; drop runs of clock ticks (whole, then by halves
//!    from their end); drop chunks of steps (halves, quarters, … single
//!    steps, delta-debugging style); replace a step by an event with a
//!    lower index in the enabled list. A candidate that runs out of events
//!    stops there. What this phase leaves are the story's ingredients: a
//!    fault it could not drop was needed.
//! 2. **Completing and searching endings**: the same passes, but a
//!    candidate that runs out of events is completed by the first enabled
//!    ordinary event until the run ends (a liveness or leak verdict is
//!    reached only at the end of a run); then, when a round changes
//!    nothing, a breadth-first search ([`search`]) from the state after
//!    each prefix of the schedule (longest first) for a shorter ending,
//!    with the faults the schedule injects after that prefix.
//! 3. **Searching from the start**: breadth-first from the initial state,
//!    with faults of the story's kinds only, for a counterexample of the
//!    story shorter than the one at hand. Found, it is the shortest
//!    (breadth-first); not found within the depth, the one at hand is the
//!    shortest; out of states at depth `d`, none of `d` steps or fewer
//!    exists. [`Shrunk::no_shorter_than`] says which.
//!
//! Every accepted change makes the schedule shorter, or as long with
//! lexicographically smaller indices, so shrinking ends; the passes and
//! searches visit events in the world's deterministic order and the state
//! budgets count states, not time, so the same failure always shrinks to
//! the same schedule (only `stop`, Ctrl-C or a time limit, can cut it
//! short).

mod passes;
mod search;
pub mod story;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use crate::monitor::Violation;
use crate::scenario::Scenario;
use crate::schedule::{is_injected_fault, Schedule};
use crate::state::SystemState;
use passes::Shrinker;
use search::{Ending, Search};
use story::{Marks, Story};

/// States the breadth-first searches for a shorter ending (phase 2) may
/// visit, in all, while shrinking one schedule.
const ENDING_STATES: usize = 10_000;
/// States the breadth-first search from the initial state (phase 3) may
/// visit.
const START_STATES: usize = 20_000;

/// The result of shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The shortest schedule found that still tells the story.
    pub schedule: Schedule,
    /// The violation at its end (the same property and story; its words
    /// may name other clients).
    pub violation: Violation,
    /// Candidate replays tried.
    pub attempts: usize,
    /// States the breadth-first searches visited.
    pub states: usize,
    /// No counterexample of the same story (its property, its
    /// explanation's shape, faults of its kinds only) has fewer steps: the
    /// breadth-first search from the initial state looked at every
    /// shorter one. Equal to `schedule.len()` when the schedule is a
    /// shortest one; `0` when the search did not run (cut short).
    pub no_shorter_than: usize,
    /// The story's ingredients, readably ("connection drop", "Expired",
    /// "error ConnectionLoss", …).
    pub ingredients: Vec<String>,
    /// The story every candidate was judged by, ingredients fixed.
    pub story: Story,
}

/// Which phases (module docs) to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phases {
    /// Phase 1 only: the shrinker as it was before completion and the
    /// searches (kept to measure what they add, `examples/shrink_lengths`).
    Removing,
    /// All three.
    All,
}

/// Shrink `failing`, a schedule that breaks `violation.property`.
pub fn shrink<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
) -> Shrunk {
    shrink_until(scenario, failing, violation, &|| false)
}

/// [`shrink`], ending early (with the smallest failing schedule so far)
/// once `stop` says so.
pub fn shrink_until<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
    stop: &dyn Fn() -> bool,
) -> Shrunk {
    shrink_with(scenario, failing, violation, Phases::All, stop)
}

/// [`shrink_until`] with only the given `phases`.
pub fn shrink_with<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
    phases: Phases,
    stop: &dyn Fn() -> bool,
) -> Shrunk {
    let indices = failing.to_indices(scenario).unwrap_or_default();
    let (_, marks) = state_after(scenario, &failing.events);
    let mut s = Shrinker {
        scenario,
        story: Story::of(violation),
        attempts: 0,
        schedule: failing.clone(),
        indices,
        violation: violation.clone(),
        marks,
        complete: false,
        stop,
    };
    // 1. Removing.
    while s.round() && !s.out_of_time() {}
    s.story.fix_ingredients(s.marks);
    if phases == Phases::Removing {
        return Shrunk {
            states: 0,
            ingredients: s.marks.names(),
            story: s.story,
            schedule: s.schedule,
            violation: s.violation,
            attempts: s.attempts,
            no_shorter_than: 0,
        };
    }
    // 2. Completing, and shorter endings.
    s.complete = true;
    let mut ending_states = ENDING_STATES;
    loop {
        let mut changed = s.round();
        if !changed {
            changed = search_endings(&mut s, &mut ending_states);
        }
        if !changed || s.out_of_time() {
            break;
        }
    }
    // 3. From the start.
    let mut start_states = START_STATES;
    let no_shorter_than = search_from_start(&mut s, &mut start_states);
    Shrunk {
        states: (ENDING_STATES - ending_states) + (START_STATES - start_states),
        ingredients: s.marks.names(),
        story: s.story,
        schedule: s.schedule,
        violation: s.violation,
        attempts: s.attempts,
        no_shorter_than,
    }
}

/// The model after `events` (strictly replayed, stopping at a violation)
/// and the ingredients they gathered.
fn state_after<C: RecipeSet>(scenario: &Scenario<C>, events: &[Event]) -> (SystemState<C>, Marks) {
    let mut model = SystemState::new(scenario);
    let mut marks = Marks::default();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    for event in events {
        let result = model.step(event, &mut log);
        marks.add(event, &log);
        if result.is_err() {
            break;
        }
    }
    (model, marks)
}

/// From the state after each prefix of the schedule, longest first, search
/// for an ending shorter than the schedule's own, with the faults the
/// schedule injects after the prefix; stop at the first found (kept if the
/// whole is smaller) or when the budget runs out (an earlier prefix would
/// search deeper).
fn search_endings<C: RecipeSet>(s: &mut Shrinker<'_, C>, states: &mut usize) -> bool {
    let mut prefix = s.schedule.len();
    while prefix > 0 && *states > 0 && !s.out_of_time() {
        prefix -= 1;
        let (start, marks) = state_after(s.scenario, &s.schedule.events[..prefix]);
        let faults: Vec<Event> = s.schedule.events[prefix..]
            .iter()
            .filter(|e| is_injected_fault(e))
            .cloned()
            .collect();
        let allow_fault = |e: &Event| faults.contains(e);
        let mut search = Search {
            story: &s.story,
            prefix,
            max_steps: s.scenario.explore.max_steps,
            // An ending must be shorter than the current one to help.
            depth: s.schedule.len() - prefix - 1,
            allow_fault: &allow_fault,
            states,
            stop: s.stop,
        };
        match search.run(start, marks) {
            Ending::Found(ending) => {
                let mut events = s.schedule.events[..prefix].to_vec();
                events.extend(ending);
                return s.judge(&events);
            }
            Ending::Absent => {}
            Ending::NoneUpTo(_) => return false,
        }
    }
    false
}

/// Phase 3 (module docs): returns the length no counterexample of the
/// story is shorter than (`0` if the search could not run).
fn search_from_start<C: RecipeSet>(s: &mut Shrinker<'_, C>, states: &mut usize) -> usize {
    if (s.stop)() || s.schedule.is_empty() {
        return 0;
    }
    let kinds = s.story.ingredients.unwrap_or_default();
    let allow_fault = |e: &Event| matches!(e, Event::Fault(f) if kinds.has_fault_kind(f));
    let mut search = Search {
        story: &s.story,
        prefix: 0,
        max_steps: s.scenario.explore.max_steps,
        depth: s.schedule.len() - 1,
        allow_fault: &allow_fault,
        states,
        stop: s.stop,
    };
    match search.run(SystemState::new(s.scenario), Marks::default()) {
        Ending::Found(events) => {
            let shortest = events.len();
            // Replayed like any candidate (it ends at the violation, so
            // nothing is completed), which also makes it the current one.
            s.judge(&events);
            shortest
        }
        Ending::Absent => s.schedule.len(),
        Ending::NoneUpTo(d) => d + 1,
    }
}
