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
//!    smaller (one server, one follower fewer, one client fewer, one round
//!    fewer, shorter hold, think and session times) are tried in a fixed
//!    order, each by replaying the schedule's events on it leniently with
//!    completion (events of a removed client or server left out); the
//!    first whose run tells the story replaces scenario and schedule, and
//!    the list is made again from it. For a verdict at a run's end, when
//!    no candidate replays, each is then searched from its initial state
//!    for a run of the story no longer than the schedule ([`Budget`]).
//!    When none is taken, phase 1 runs again on the
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

/// What one shrink may spend on its breadth-first searches, in states
/// visited. Budgets count states, not time, so the same failure always
/// shrinks to the same schedule. A larger budget may find a shorter
/// counterexample, or prove the one at hand shortest, at a cost in time
/// and memory (a state of these searches is a whole model, a few KiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Phase 2's searches for a shorter ending, in all.
    pub ending_states: usize,
    /// Phase 3's search from the initial state.
    pub start_states: usize,
    /// The reduction phase's searches on smaller scenarios, in all; spent
    /// only on a verdict reached at a run's end (liveness, leaks, a leader
    /// that never emerges), whose schedule carries over worst.
    pub scenario_states: usize,
    /// One search on one smaller scenario, at most.
    pub scenario_search_states: usize,
}

impl Default for Budget {
    /// What `zkcheck check`, [`crate::check::Check`] and [`shrink`] spend:
    /// a few seconds and a few hundred MiB at most on two cores
    /// (docs/VERDICTS.md, "Shrinking").
    fn default() -> Self {
        Budget {
            ending_states: 10_000,
            start_states: 20_000,
            scenario_states: 150_000,
            scenario_search_states: 50_000,
        }
    }
}

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
    shrink_with(
        scenario,
        failing,
        violation,
        Phases::All,
        Budget::default(),
        stop,
    )
}

/// [`shrink_until`] with only the given `phases`, within `budget`.
pub fn shrink_with<C: RecipeSet>(
    scenario: &Scenario<C>,
    failing: &Schedule,
    violation: &Violation,
    phases: Phases,
    budget: Budget,
    stop: &dyn Fn() -> bool,
) -> Shrunk<C> {
    let indices = failing.to_indices(scenario).unwrap_or_default();
    let (_, marks, broke) = state_after(scenario, &failing.events);
    // A verdict reached only at the run's end: every client's steps to
    // that end shift on a smaller scenario, so its schedule carries over
    // worst, and the reduction phase may search there.
    let at_end = !broke;
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
    let mut searches = ScenarioSearches {
        states: if at_end { budget.scenario_states } else { 0 },
        each: budget.scenario_search_states,
        spent: 0,
    };
    let mut reduced = reduce && reduce_scenario(&mut s, &mut reductions, &mut searches);
    let mut ending_states = budget.ending_states;
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
        reduced =
            reduce && !s.out_of_time() && reduce_scenario(&mut s, &mut reductions, &mut searches);
        if !reduced {
            break;
        }
    }
    // 3. From the start.
    let mut start_states = budget.start_states;
    let no_shorter_than = search_from_start(&mut s, &mut start_states);
    Shrunk {
        scenario: s.scenario,
        reductions: reductions.iter().map(|c| c.to_string()).collect(),
        states: (budget.ending_states - ending_states)
            + (budget.start_states - start_states)
            + searches.spent,
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
///
/// A candidate is first tried with the schedule carried over
/// ([`scenario::Reduction::events`]). When none takes it, each is searched
/// (while `searches` lasts): the carried-over schedule may tell
/// another story only because the smaller scenario shifts who does what
/// when (without the client that created the root, another creates it,
/// and the fault strikes that create instead), while a run of the story
/// exists there.
fn reduce_scenario<C: RecipeSet>(
    s: &mut Shrinker<'_, C>,
    reductions: &mut Vec<scenario::Change>,
    searches: &mut ScenarioSearches,
) -> bool {
    s.complete = true;
    let mut reduced = false;
    'smaller: while !s.out_of_time() {
        let candidates = scenario::smaller(&s.scenario);
        for candidate in &candidates {
            let events = candidate.events(&s.schedule.events);
            if s.try_scenario(candidate.scenario.clone(), &events) {
                reduced = true;
                record_all(reductions, &candidate.changes);
                continue 'smaller;
            }
        }
        for candidate in &candidates {
            if searches.states == 0 || s.out_of_time() {
                break;
            }
            let mut budget = searches.each.min(searches.states);
            let before = budget;
            // Found, it is no longer than the schedule at hand.
            let found = story_search(s, &candidate.scenario, s.schedule.len(), &mut budget);
            searches.states -= before - budget;
            searches.spent += before - budget;
            if let Ending::Found(events) = found {
                if s.try_scenario(candidate.scenario.clone(), &events) {
                    reduced = true;
                    record_all(reductions, &candidate.changes);
                    continue 'smaller;
                }
            }
        }
        break;
    }
    reduced
}

/// The reduction phase's search budget: what is left in all, what one
/// search may take, what was spent.
struct ScenarioSearches {
    states: usize,
    each: usize,
    spent: usize,
}

fn record_all(reductions: &mut Vec<scenario::Change>, changes: &[scenario::Change]) {
    for change in changes {
        scenario::record(reductions, change.clone());
    }
}

/// Breadth-first from `scenario`'s initial state, with faults of the
/// story's kinds only, for a run of at most `depth` steps that tells the
/// story.
fn story_search<C: RecipeSet>(
    s: &Shrinker<'_, C>,
    scenario: &Scenario<C>,
    depth: usize,
    states: &mut usize,
) -> Ending {
    let kinds = s.story.ingredients.unwrap_or_default();
    let allow_fault = |e: &Event| matches!(e, Event::Fault(f) if kinds.has_fault_kind(f));
    let mut search = Search {
        story: &s.story,
        prefix: 0,
        max_steps: scenario.explore.max_steps,
        depth,
        allow_fault: &allow_fault,
        states,
        stop: s.stop,
    };
    search.run(SystemState::new(scenario), Marks::default())
}

/// The model after `events` (strictly replayed, stopping at a violation),
/// the ingredients they gathered, and whether one of them broke a
/// property (rather than the run's end).
fn state_after<C: RecipeSet>(
    scenario: &Scenario<C>,
    events: &[Event],
) -> (SystemState<C>, Marks, bool) {
    let mut model = SystemState::new(scenario);
    let mut marks = Marks::default();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    for event in events {
        let result = model.step(event, &mut log);
        marks.add(event, &log);
        if result.is_err() {
            return (model, marks, true);
        }
    }
    (model, marks, false)
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
        let (start, marks, _) = state_after(&s.scenario, &s.schedule.events[..prefix]);
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
    match story_search(s, &s.scenario, s.schedule.len() - 1, states) {
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
