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
//!
//!    **Reducing the scenario** ([`scenario`]): the scenarios one step
//!    smaller (one server, one client fewer, one round fewer, shorter
//!    hold, think and session times) are tried in a fixed order, each by
//!    replaying the schedule's events on it leniently with completion
//!    (events of a removed client or server left out); the first whose
//!    run tells the story replaces scenario and schedule, and the list is
//!    made again from it. When none does, phase 1 runs again on the
//!    reduced scenario, and phase 2 follows there; after phase 2 the
//!    (shorter) schedule is tried on smaller scenarios again, and if one
//!    is taken, phases 1 and 2 run again on it. Phase 3 ends shrinking. The reductions
//!    made are in [`Shrunk::reductions`]; [`Phases::KeepScenario`] skips
//!    this (to see the failure on the topology as written).
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
//! Every accepted change makes the scenario smaller, or keeps it and makes
//! the schedule shorter, or as long with lexicographically smaller
//! indices, so shrinking ends; the passes and
//! searches visit events in the world's deterministic order and the state
//! budgets count states, not time, so the same failure always shrinks to
//! the same schedule (only `stop`, Ctrl-C or a time limit, can cut it
//! short).

mod passes;
pub mod scenario;
mod search;
pub mod story;

use zkrecipes::{AnyRecipe, AppEvent, RecipeSet};
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
pub struct Shrunk<C: RecipeSet = AnyRecipe> {
    /// The scenario `schedule` runs on: the one shrunk on, or a smaller
    /// one ([`Shrunk::reductions`] says how).
    pub scenario: Scenario<C>,
    /// How the scenario was made smaller, in order, each readably
    /// ("servers 3 → 1", "clients 4 → 2"); empty when it was kept.
    pub reductions: Vec<String>,
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
    /// All three on the scenario as written: no reduction of the scenario
    /// (`zkcheck check --keep-scenario`: the failure on one's own topology).
    KeepScenario,
    /// All three, and the scenario reduced after phase 1 (the default).
    All,
}

/// Shrink `failing`, a schedule that breaks `violation.property`.
pub fn shrink<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
) -> Shrunk<C> {
    shrink_until(scenario, failing, violation, &|| false)
}

/// [`shrink`], ending early (with the smallest failing schedule so far)
/// once `stop` says so.
pub fn shrink_until<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
    stop: &dyn Fn() -> bool,
) -> Shrunk<C> {
    shrink_with(scenario, failing, violation, Phases::All, stop)
}

/// [`shrink_until`] with only the given `phases`.
pub fn shrink_with<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
    phases: Phases,
    stop: &dyn Fn() -> bool,
) -> Shrunk<C> {
    let indices = failing.to_indices(scenario).unwrap_or_default();
    let (_, marks) = state_after(scenario, &failing.events);
    let mut s = Shrinker {
        scenario: scenario.clone(),
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
            scenario: s.scenario,
            reductions: Vec::new(),
            states: 0,
            ingredients: s.marks.names(),
            story: s.story,
            schedule: s.schedule,
            violation: s.violation,
            attempts: s.attempts,
            no_shorter_than: 0,
        };
    }
    let reduce = phases == Phases::All;
    let mut reductions = Vec::new();
    let mut reduced = reduce && reduce_scenario(&mut s, &mut reductions);
    let mut ending_states = ENDING_STATES;
    loop {
        if reduced {
            // 1 again, on the smaller scenario.
            s.complete = false;
            while s.round() && !s.out_of_time() {}
        }
        // 2. Completing, and shorter endings.
        s.complete = true;
        loop {
            let mut changed = s.round();
            if !changed {
                changed = search_endings(&mut s, &mut ending_states);
            }
            if !changed || s.out_of_time() {
                break;
            }
        }
        // A shorter schedule may carry over to a smaller scenario where
        // the longer one did not: reduce again, and if that helps, 1 and
        // 2 again there (the state budget of 2 is shared).
        reduced = reduce && !s.out_of_time() && reduce_scenario(&mut s, &mut reductions);
        if !reduced {
            break;
        }
    }
    // 3. From the start.
    let mut start_states = START_STATES;
    let no_shorter_than = search_from_start(&mut s, &mut start_states);
    Shrunk {
        scenario: s.scenario,
        reductions: reductions.iter().map(|c| c.to_string()).collect(),
        states: (ENDING_STATES - ending_states) + (START_STATES - start_states),
        ingredients: s.marks.names(),
        story: s.story,
        schedule: s.schedule,
        violation: s.violation,
        attempts: s.attempts,
        no_shorter_than,
    }
}

/// The reduction phase (module docs): move to the first smaller scenario
/// whose run tells the story, again and again; whether any was taken. The
/// changes made are recorded in `reductions`.
fn reduce_scenario<C: RecipeSet>(
    s: &mut Shrinker<'_, C>,
    reductions: &mut Vec<scenario::Change>,
) -> bool {
    s.complete = true;
    let mut reduced = false;
    'smaller: while !s.out_of_time() {
        for candidate in scenario::smaller(&s.scenario) {
            let events = candidate.events(&s.schedule.events);
            if s.try_scenario(candidate.scenario, &events) {
                for change in candidate.changes {
                    scenario::record(reductions, change);
                }
                reduced = true;
                continue 'smaller;
            }
        }
        break;
    }
    reduced
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
        let (start, marks) = state_after(&s.scenario, &s.schedule.events[..prefix]);
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
    match search.run(SystemState::new(&s.scenario), Marks::default()) {
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
