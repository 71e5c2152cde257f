//! The cheap passes: candidates made by removing or replacing events of
//! the current schedule, each replayed and judged by the story.
//!
//! A candidate is a list of events replayed leniently (an event no longer
//! enabled when its turn comes is skipped). Once its story's ingredients
//! are fixed, a candidate that runs out of events is also *completed*:
//! each later step takes the first enabled event that is neither a fault
//! nor a clock tick, a tick only when nothing else can happen, until the
//! run ends by itself. Completion is what lets a liveness or leak
//! counterexample lose steps: such a verdict is reached only at the end of
//! a run, and a candidate that dropped the deliveries and ticks the end
//! waits for would otherwise stop short of it. The candidate's executed
//! schedule (completion included) then replaces the current one, so the
//! result always replays strictly, event by event.
//!
//! Every accepted change makes the schedule shorter, or as long with
//! lexicographically smaller indices, so the passes end, and they are
//! deterministic.

use zkrecipes::RecipeSet;
use zksim::Event;

use super::story::{Marks, Story};
use crate::explore::candidate::AlternativesRecorder;
use crate::explore::run::drive;
use crate::explore::Chooser;
use crate::monitor::Violation;
use crate::scenario::Scenario;
use crate::schedule::{is_injected_fault, Schedule};
use crate::state::SystemState;

/// Replays tried at most while shrinking one schedule.
pub(super) const BUDGET: usize = 4000;
/// Lower-index alternatives tried per step.
const ALTERNATIVES: usize = 2;

/// The current counterexample and what judges a candidate against it.
pub(super) struct Shrinker<'a, C: RecipeSet> {
    /// The scenario the schedule runs on: the one checked, or a smaller
    /// one the reduction phase ([`super::scenario`]) moved to.
    pub scenario: Scenario<C>,
    pub story: Story,
    pub attempts: usize,
    pub schedule: Schedule,
    pub indices: Vec<u32>,
    pub violation: Violation,
    /// The current schedule's ingredients.
    pub marks: Marks,
    /// Complete candidates that run out of events (module docs).
    pub complete: bool,
    /// Asked before every replay: `true` ends shrinking with what it has
    /// (Ctrl-C, the time limit).
    pub stop: &'a dyn Fn() -> bool,
}

/// A candidate's run that told the story.
struct Accepted {
    schedule: Schedule,
    indices: Vec<u32>,
    violation: Violation,
    marks: Marks,
}

/// Lenient replay of a candidate, then (if asked) its completion.
struct Candidate<'a> {
    events: &'a [Event],
    next: usize,
    complete: bool,
}

impl<C: RecipeSet> Chooser<C> for Candidate<'_> {
    fn choose(&mut self, _model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        while let Some(event) = self.events.get(self.next) {
            self.next += 1;
            if let Some(i) = enabled.iter().position(|e| e == event) {
                return Some(i);
            }
        }
        if !self.complete {
            return None;
        }
        enabled
            .iter()
            .position(|e| *e != Event::Tick && !matches!(e, Event::Fault(_)))
            .or_else(|| enabled.iter().position(|e| *e == Event::Tick))
            .or_else(|| enabled.iter().position(|e| !is_injected_fault(e)))
    }
}

impl<C: RecipeSet> Shrinker<'_, C> {
    /// Whether shrinking must end now (budget spent or asked to stop).
    pub fn out_of_time(&self) -> bool {
        self.attempts >= BUDGET || (self.stop)()
    }

    /// Try `events`; keep them if they tell the same story and are smaller.
    pub fn try_events(&mut self, events: &[Event]) -> bool {
        !self.out_of_time() && self.judge(events)
    }

    /// [`Shrinker::try_events`] whatever the replay budget (for what a
    /// search found, already paid for in states).
    pub fn judge(&mut self, events: &[Event]) -> bool {
        self.attempts += 1;
        let Some(c) = self.replay(&self.scenario, events) else {
            return false;
        };
        let smaller = (c.schedule.len(), &c.indices) < (self.schedule.len(), &self.indices);
        if smaller {
            self.take(c);
        }
        smaller
    }

    /// Try `events` on `scenario`, a smaller scenario than the current one:
    /// kept (with the scenario) if the run tells the same story, however
    /// long its schedule (a smaller scenario comes first in the order
    /// that makes shrinking end).
    pub fn try_scenario(&mut self, scenario: Scenario<C>, events: &[Event]) -> bool {
        if self.out_of_time() {
            return false;
        }
        self.attempts += 1;
        let Some(c) = self.replay(&scenario, events) else {
            return false;
        };
        self.scenario = scenario;
        self.take(c);
        true
    }

    /// Replay `events` leniently on `scenario` (completed if asked): the
    /// run, if it tells the story.
    fn replay(&self, scenario: &Scenario<C>, events: &[Event]) -> Option<Accepted> {
        let mut chooser = Candidate {
            events,
            next: 0,
            complete: self.complete,
        };
        let mut marks = Marks::default();
        let run = drive(scenario, &mut chooser, |_, event, log| {
            marks.add(event, log)
        });
        let violation = run.violation.filter(|v| self.story.accepts(v, marks))?;
        let indices = run.schedule.to_indices(scenario)?;
        Some(Accepted {
            schedule: run.schedule,
            indices,
            violation,
            marks,
        })
    }

    fn take(&mut self, c: Accepted) {
        self.schedule = c.schedule;
        self.indices = c.indices;
        self.violation = c.violation;
        self.marks = c.marks;
    }

    /// Every cheap pass once; whether any changed the schedule.
    pub fn round(&mut self) -> bool {
        let mut changed = self.drop_faults();
        changed |= self.drop_tick_runs();
        changed |= self.drop_chunks();
        changed |= self.lower_indices();
        changed
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

    /// Delta debugging: remove halves, quarters, … single steps.
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

    /// Replace a step by an event with a lower index in the enabled list.
    fn lower_indices(&mut self) -> bool {
        let mut changed = false;
        // The lower-index alternatives of each step of the current schedule.
        let mut alternatives: Vec<Vec<Event>> = Vec::new();
        {
            let mut chooser =
                AlternativesRecorder::new(&self.schedule.events, ALTERNATIVES, &mut alternatives);
            drive(&self.scenario, &mut chooser, |_, _, _| {});
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
}
