//! Shrinking a failing schedule to a short one that fails the same way.
//!
//! A candidate is a list of events replayed leniently (an event no longer
//! enabled when its turn comes is skipped) and, once the list runs out,
//! *completed*: each later step takes the first enabled event that is
//! neither a fault nor a clock tick, a tick only when nothing else can
//! happen, until the run ends by itself. It counts if the run breaks the
//! *same property*. The candidate's executed schedule (completion included)
//! then replaces the current one, so the result always replays strictly,
//! event by event. Completion is what lets a liveness or leak
//! counterexample lose steps: such a verdict is reached only at the end of
//! a run, and a candidate that dropped the deliveries and ticks the end
//! waits for would otherwise stop short of it.
//!
//! Passes, repeated until a whole round changes nothing (or the attempt
//! budget is spent): drop each injected fault; drop runs of clock ticks
//! (whole, then by halves from their end); drop chunks of steps
//! (halves, quarters, … single steps, delta-debugging style); replace a
//! step by an event with a lower index in the enabled list; and search
//! breadth-first, from the state after a prefix of the schedule (longest
//! prefix first), for the shortest way to the same violation — the
//! exhaustive search's shortest counterexample, bounded by a state budget
//! and started late in the run. Every accepted change makes the schedule
//! shorter, or as long with lexicographically smaller indices, so
//! shrinking ends, and it is deterministic.

use std::collections::HashSet;

use crate::model::Model;
use crate::monitor::{Property, Violation};
use crate::run::{conclude, drive, is_terminal, Chooser};
use crate::scenario::Scenario;
use crate::schedule::{is_injected_fault, Schedule};
use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

/// Replays tried at most while shrinking one schedule.
const BUDGET: usize = 4000;
/// Lower-index alternatives tried per step.
const ALTERNATIVES: usize = 2;
/// States the breadth-first searches for a shorter ending may visit, in
/// all, while shrinking one schedule (a few tenths of a second).
const SEARCH_STATES: usize = 10_000;

/// The result of shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub schedule: Schedule,
    pub violation: Violation,
    /// Candidate replays tried.
    pub attempts: usize,
}

struct Shrinker<'a, C: RecipeSet> {
    scenario: &'a Scenario<C>,
    property: Property,
    attempts: usize,
    schedule: Schedule,
    indices: Vec<u32>,
    violation: Violation,
    /// What the breadth-first searches may still visit.
    search_states: usize,
    /// Asked before every replay: `true` ends shrinking with what it has
    /// (Ctrl-C, the time limit).
    stop: &'a dyn Fn() -> bool,
}

/// Lenient replay of a candidate, then its completion (module docs).
struct Completing<'a> {
    events: &'a [Event],
    next: usize,
}

impl<C: RecipeSet> Chooser<C> for Completing<'_> {
    fn choose(&mut self, _model: &Model<C>, enabled: &[Event]) -> Option<usize> {
        while let Some(event) = self.events.get(self.next) {
            self.next += 1;
            if let Some(i) = enabled.iter().position(|e| e == event) {
                return Some(i);
            }
        }
        enabled
            .iter()
            .position(|e| *e != Event::Tick && !matches!(e, Event::Fault(_)))
            .or_else(|| enabled.iter().position(|e| *e == Event::Tick))
            .or_else(|| enabled.iter().position(|e| !is_injected_fault(e)))
    }
}

/// What a breadth-first search for an ending found.
enum Ending {
    /// The shortest ending that breaks the property.
    Found(Vec<Event>),
    /// None within the depth.
    Absent,
    /// The state budget ran out first.
    OutOfStates,
}

impl<C: RecipeSet> Shrinker<'_, C> {
    /// Try `events`; keep them if they fail the same way and are smaller.
    fn try_events(&mut self, events: &[Event]) -> bool {
        if self.attempts >= BUDGET || (self.stop)() {
            return false;
        }
        self.attempts += 1;
        let mut chooser = Completing { events, next: 0 };
        let run = drive(self.scenario, &mut chooser, |_, _, _| {});
        let Some(v) = run.violation.filter(|v| v.property == self.property) else {
            return false;
        };
        let Some(indices) = run.schedule.to_indices(self.scenario) else {
            return false;
        };
        let smaller = (run.schedule.len(), &indices) < (self.schedule.len(), &self.indices);
        if smaller {
            self.schedule = run.schedule;
            self.indices = indices;
            self.violation = v;
        }
        smaller
    }

    fn drop_faults(&mut self) -> bool {
        let mut changed = false;
        let mut i = self.schedule.len();
        while i > 0 {
            i -= 1;
            if i < self.schedule.len() && is_injected_fault(&self.schedule.events[i]) {
                let mut events = self.schedule.events.clone();
                events.remove(i);
                changed |= self.try_events(&events);
            }
        }
        changed
    }

    /// Remove runs of consecutive clock ticks, each whole first, then its
    /// later half, quarter, …: a liveness counterexample is mostly time
    /// passing, and deleting ticks one by one costs a replay each.
    fn drop_tick_runs(&mut self) -> bool {
        let mut changed = false;
        let mut end = self.schedule.len();
        while end > 0 {
            if self.schedule.events[end - 1] != Event::Tick {
                end -= 1;
                continue;
            }
            let mut start = end - 1;
            while start > 0 && self.schedule.events[start - 1] == Event::Tick {
                start -= 1;
            }
            let mut len = end - start;
            while len > 0 {
                let mut events = self.schedule.events.clone();
                events.drain(end - len..end);
                if self.try_events(&events) {
                    changed = true;
                    break;
                }
                len /= 2;
            }
            // The schedule before `start` is unchanged by any accepted
            // candidate (replay is deterministic up to the first change).
            end = start.min(self.schedule.len());
        }
        changed
    }

    fn drop_chunks(&mut self) -> bool {
        let mut changed = false;
        let mut size = (self.schedule.len() / 2).max(1);
        loop {
            let mut start = 0;
            while start < self.schedule.len() {
                let end = (start + size).min(self.schedule.len());
                let mut events = self.schedule.events.clone();
                events.drain(start..end);
                if self.try_events(&events) {
                    changed = true;
                } else {
                    start += size;
                }
            }
            if size == 1 {
                return changed;
            }
            size /= 2;
        }
    }

    fn lower_indices(&mut self) -> bool {
        let mut changed = false;
        // The lower-index alternatives of each step of the current schedule.
        let mut alternatives: Vec<Vec<Event>> = Vec::new();
        {
            let mut chooser = AlternativesRecorder {
                events: &self.schedule.events,
                next: 0,
                out: &mut alternatives,
            };
            drive(self.scenario, &mut chooser, |_, _, _| {});
        }
        for (step, alts) in alternatives.into_iter().enumerate() {
            for alt in alts {
                if step >= self.schedule.len() {
                    break;
                }
                let mut events = self.schedule.events.clone();
                events[step] = alt;
                if self.try_events(&events) {
                    changed = true;
                    break;
                }
            }
        }
        changed
    }

    /// From the state after each prefix of the schedule, longest first,
    /// search breadth-first for an ending shorter than the schedule's own;
    /// stop at the first found (kept if the whole is smaller) or when the
    /// state budget runs out (an earlier prefix would search deeper).
    fn search_endings(&mut self) -> bool {
        let mut prefix = self.schedule.len();
        while prefix > 0 && self.search_states > 0 && !(self.stop)() {
            prefix -= 1;
            // An ending must be shorter than the current one to help.
            let depth = self.schedule.len() - prefix - 1;
            let Some(start) = self.state_after(prefix) else {
                return false;
            };
            // The faults the ending may inject: those the schedule injects
            // after the prefix (a search over every fault the budget allows
            // at every state would spend its states on faults).
            let faults: Vec<Event> = self.schedule.events[prefix..]
                .iter()
                .filter(|e| is_injected_fault(e))
                .cloned()
                .collect();
            match self.shortest_ending(start, prefix, depth, &faults) {
                Ending::Found(ending) => {
                    let mut events = self.schedule.events[..prefix].to_vec();
                    events.extend(ending);
                    return self.try_events(&events);
                }
                Ending::Absent => {}
                Ending::OutOfStates => return false,
            }
        }
        false
    }

    /// The model after the first `steps` steps of the schedule (strictly
    /// replayed; `None` if a step broke a property before).
    fn state_after(&self, steps: usize) -> Option<Model<C>> {
        let mut model = Model::new(self.scenario);
        let mut log: Vec<Happening<AppEvent>> = Vec::new();
        for event in &self.schedule.events[..steps] {
            model.step(event, &mut log).ok()?;
        }
        Some(model)
    }

    /// Breadth-first from `start` (reached in `prefix` steps), states
    /// deduplicated by fingerprint: the shortest ending of at most `depth`
    /// steps that breaks the property, at a step or at the run's end.
    fn shortest_ending(
        &mut self,
        start: Model<C>,
        prefix: usize,
        depth: usize,
        faults: &[Event],
    ) -> Ending {
        let max_steps = self.scenario.explore.max_steps;
        let mut seen = HashSet::new();
        seen.insert(start.fingerprint());
        // Each reached state's parent and the event that led to it.
        let mut tree: Vec<(usize, Event)> = Vec::new();
        let path = |tree: &[(usize, Event)], mut node: usize| {
            let mut events = Vec::new();
            while node != usize::MAX {
                let (parent, event) = &tree[node];
                events.push(event.clone());
                node = *parent;
            }
            events.reverse();
            events
        };
        let mut level = vec![(start, usize::MAX)];
        let mut enabled = Vec::new();
        let mut log: Vec<Happening<AppEvent>> = Vec::new();
        for d in 0..=depth {
            // Endings of length `d` first, then the steps to length `d + 1`.
            let mut open = Vec::with_capacity(level.len());
            for (model, node) in level {
                enabled.clear();
                model.enabled(&mut enabled);
                if is_terminal(&model, &enabled, prefix + d, max_steps) {
                    let run = conclude(model, &enabled, Schedule::default());
                    if run.violation.is_some_and(|v| v.property == self.property) {
                        return Ending::Found(path(&tree, node));
                    }
                } else if d < depth {
                    // A tick that changes nothing but the clock is not taken
                    // while anything else can happen (as the exhaustive
                    // search does); faults only as the schedule had them.
                    let idle_tick = !model.world.waits_on_time()
                        && enabled
                            .iter()
                            .any(|e| *e != Event::Tick && !matches!(e, Event::Fault(_)));
                    let events: Vec<Event> = enabled
                        .iter()
                        .filter(|e| match e {
                            Event::Tick => !idle_tick,
                            e if is_injected_fault(e) => faults.contains(e),
                            _ => true,
                        })
                        .cloned()
                        .collect();
                    open.push((model, node, events));
                }
            }
            let mut next = Vec::new();
            for (model, node, events) in open {
                for event in events {
                    let mut child = model.clone();
                    match child.step(&event, &mut log) {
                        Err(v) if v.property == self.property => {
                            let mut ending = path(&tree, node);
                            ending.push(event);
                            return Ending::Found(ending);
                        }
                        Err(_) => continue,
                        Ok(()) => {}
                    }
                    if !seen.insert(child.fingerprint()) {
                        continue;
                    }
                    if self.search_states == 0 || (self.stop)() {
                        return Ending::OutOfStates;
                    }
                    self.search_states -= 1;
                    tree.push((node, event));
                    next.push((child, tree.len() - 1));
                }
            }
            level = next;
        }
        Ending::Absent
    }
}

/// Replays a schedule strictly and records, per step, the events with a
/// lower index than the one taken.
struct AlternativesRecorder<'a> {
    events: &'a [Event],
    next: usize,
    out: &'a mut Vec<Vec<Event>>,
}

impl<C: RecipeSet> crate::run::Chooser<C> for AlternativesRecorder<'_> {
    fn choose(&mut self, _: &crate::model::Model<C>, enabled: &[Event]) -> Option<usize> {
        let event = self.events.get(self.next)?;
        self.next += 1;
        let i = enabled.iter().position(|e| e == event)?;
        self.out
            .push(enabled[..i].iter().take(ALTERNATIVES).cloned().collect());
        Some(i)
    }
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
    let indices = failing.to_indices(scenario).unwrap_or_default();
    let mut s = Shrinker {
        scenario,
        property: violation.property,
        attempts: 0,
        schedule: failing.clone(),
        indices,
        violation: violation.clone(),
        search_states: SEARCH_STATES,
        stop,
    };
    loop {
        let mut changed = s.drop_faults();
        changed |= s.drop_tick_runs();
        changed |= s.drop_chunks();
        changed |= s.lower_indices();
        // The searches last: they pay off on what the cheap passes left.
        if !changed {
            changed = s.search_endings();
        }
        if !changed || s.attempts >= BUDGET || stop() {
            break;
        }
    }
    Shrunk {
        schedule: s.schedule,
        violation: s.violation,
        attempts: s.attempts,
    }
}
