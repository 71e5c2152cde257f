//! Breadth-first search for the shortest way to the story's violation
//! from a state of the run: from the state after a prefix of the current
//! schedule (a shorter *ending*), or from the initial state (the shortest
//! counterexample of the story, minimal by construction).
//!
//! States are deduplicated by the model's fingerprint together with the
//! ingredients gathered on the way ([`Marks`]): the same state reached
//! with other ingredients may still end in another story. A clock tick
//! that changes nothing but the clock is not taken while anything else
//! can happen (as the exhaustive search does: such a tick is a time
//! shift, and no check reads absolute time). Faults are only those the
//! caller allows (the story's kinds). The search is bounded by a state
//! budget shared by every search of one shrink; when it runs out, it says
//! how deep it had looked *everywhere* — a lower bound on the length of
//! any ending of the story from that state.

use std::collections::HashSet;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use super::story::{Marks, Story};
use crate::explore::run::{conclude, is_terminal};
use crate::schedule::{is_injected_fault, Schedule};
use crate::state::SystemState;

/// What a search found.
pub(super) enum Ending {
    /// A shortest ending that tells the story.
    Found(Vec<Event>),
    /// None of at most the depth asked for.
    Absent,
    /// The state budget (or the stop flag) ended the search: no ending of
    /// at most this many steps tells the story.
    NoneUpTo(usize),
}

/// One search's bounds and what it must find.
pub(super) struct Search<'a> {
    pub story: &'a Story,
    /// Steps of the run before the start state (for the step bound).
    pub prefix: usize,
    pub max_steps: usize,
    /// Longest ending looked for.
    pub depth: usize,
    /// Whether the search may inject this fault.
    pub allow_fault: &'a dyn Fn(&Event) -> bool,
    /// States it may still visit (shared by the searches of one shrink).
    pub states: &'a mut usize,
    pub stop: &'a dyn Fn() -> bool,
}

impl Search<'_> {
    /// Breadth-first from `start` (whose run so far gathered `marks`).
    pub fn run<C: RecipeSet>(&mut self, start: SystemState<C>, marks: Marks) -> Ending {
        let mut seen = HashSet::new();
        seen.insert((start.fingerprint(), marks));
        // Each reached state's parent and the event that led to it.
        let mut tree: Vec<(usize, Event)> = Vec::new();
        let mut level = vec![(start, marks, usize::MAX)];
        let mut enabled = Vec::new();
        let mut log: Vec<Happening<AppEvent>> = Vec::new();
        for d in 0..=self.depth {
            // Endings of `d` steps first, then the steps to `d + 1`.
            let mut open = Vec::with_capacity(level.len());
            for (model, marks, node) in level {
                enabled.clear();
                model.enabled(&mut enabled);
                if is_terminal(&model, &enabled, self.prefix + d, self.max_steps) {
                    let run = conclude(model, &enabled, Schedule::default());
                    if run.violation.is_some_and(|v| self.story.accepts(&v, marks)) {
                        return Ending::Found(path(&tree, node));
                    }
                } else if d < self.depth {
                    let idle_tick = !model.world.waits_on_time()
                        && enabled
                            .iter()
                            .any(|e| *e != Event::Tick && !matches!(e, Event::Fault(_)));
                    let events: Vec<Event> = enabled
                        .iter()
                        .filter(|e| match e {
                            Event::Tick => !idle_tick,
                            e if is_injected_fault(e) => (self.allow_fault)(e),
                            _ => true,
                        })
                        .cloned()
                        .collect();
                    open.push((model, marks, node, events));
                }
            }
            if d == self.depth {
                break;
            }
            let mut next = Vec::new();
            for (model, marks, node, events) in open {
                for event in events {
                    let mut child = model.clone();
                    let result = child.step(&event, &mut log);
                    let mut child_marks = marks;
                    child_marks.add(&event, &log);
                    if let Err(v) = result {
                        // The run ends at this step, in the story or not.
                        if self.story.accepts(&v, child_marks) {
                            let mut ending = path(&tree, node);
                            ending.push(event);
                            return Ending::Found(ending);
                        }
                        continue;
                    }
                    if !seen.insert((child.fingerprint(), child_marks)) {
                        continue;
                    }
                    if *self.states == 0 || (self.stop)() {
                        // Every ending of `d` steps or fewer was judged.
                        return Ending::NoneUpTo(d);
                    }
                    *self.states -= 1;
                    tree.push((node, event));
                    next.push((child, child_marks, tree.len() - 1));
                }
            }
            level = next;
        }
        Ending::Absent
    }
}

/// The events from the start to `node` of the search tree.
fn path(tree: &[(usize, Event)], mut node: usize) -> Vec<Event> {
    let mut events = Vec::new();
    while node != usize::MAX {
        let (parent, event) = &tree[node];
        events.push(event.clone());
        node = *parent;
    }
    events.reverse();
    events
}
