//! Shrinking a failing schedule to a short one that fails the same way.
//!
//! A candidate is a list of events replayed leniently (an event no longer
//! enabled when its turn comes is skipped); it counts if the run breaks the
//! *same property*. The candidate's executed schedule then replaces the
//! current one, so the result always replays strictly, event by event.
//!
//! Passes, repeated until a whole round changes nothing (or the attempt
//! budget is spent): drop each injected fault; drop runs of clock ticks
//! (whole, then by halves from their end); drop chunks of steps
//! (halves, quarters, … single steps, delta-debugging style); replace a
//! step by an event with a lower index in the enabled list. Every accepted
//! change makes the schedule shorter, or as long with lexicographically
//! smaller indices, so shrinking ends, and it is deterministic.

use crate::explore::replay::EventChooser;
use crate::monitor::{Property, Violation};
use crate::run::drive;
use crate::scenario::Scenario;
use crate::schedule::{is_injected_fault, Schedule};
use zkrecipes::RecipeSet;
use zksim::Event;

/// Replays tried at most while shrinking one schedule.
const BUDGET: usize = 4000;
/// Lower-index alternatives tried per step.
const ALTERNATIVES: usize = 2;

/// The result of shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The shortest schedule found that still breaks the property.
    pub schedule: Schedule,
    /// The violation at its end (the same property; its explanation may
    /// differ).
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
    /// Asked before every replay: `true` ends shrinking with what it has
    /// (Ctrl-C, the time limit).
    stop: &'a dyn Fn() -> bool,
}

impl<C: RecipeSet> Shrinker<'_, C> {
    /// Try `events`; keep them if they fail the same way and are smaller.
    fn try_events(&mut self, events: &[Event]) -> bool {
        if self.attempts >= BUDGET || (self.stop)() {
            return false;
        }
        self.attempts += 1;
        let run = drive(self.scenario, &mut EventChooser::new(events), |_, _, _| {});
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
pub(crate) fn shrink_until<C: RecipeSet>(
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
        stop,
    };
    loop {
        let mut changed = s.drop_faults();
        changed |= s.drop_tick_runs();
        changed |= s.drop_chunks();
        changed |= s.lower_indices();
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
