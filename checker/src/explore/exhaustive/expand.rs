//! Expanding one explored state: judging it if the run ends there, or
//! stepping each enabled event and keeping the children not seen before.
//!
//! This is the part of the search that does the work (copy, step,
//! fingerprint), written as a function of one state so that BFS can run
//! it on many states at once and merge the results in order.

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use super::por::{Asleep, Por};
use super::symmetry::Keying;
use crate::explore::run::{cut_by_clock, is_terminal};
use crate::monitor::Tally;
use crate::monitor::Violation;
use crate::state::SystemState;

/// A state on BFS's frontier, boxed (queues move a pointer rather than
/// the state), with its visited-set key and what partial-order reduction
/// carries with it.
pub(super) struct Queued<C: RecipeSet> {
    pub model: Box<SystemState<C>>,
    pub key: u64,
    /// Steps asleep here (always empty without partial-order reduction).
    pub sleep: Vec<Asleep>,
    /// A state expanded before and reached again with fewer steps asleep:
    /// only the steps in this mask (the representative's numbering) are
    /// taken, and the state's end is not judged again.
    pub only: Option<u64>,
}

/// A kept child: the state, its visited-set key, the event that led to it,
/// what `keep` said about it and the steps asleep in it.
pub(super) struct Child<C: RecipeSet, T> {
    pub model: Box<SystemState<C>>,
    pub key: u64,
    pub event: Event,
    pub tag: T,
    pub sleep: Vec<Asleep>,
}

/// The bits of sleeping steps (representative's numbering).
pub(super) fn sleep_mask(sleep: &[Asleep]) -> u64 {
    sleep.iter().fold(0, |mask, a| mask | a.canon)
}

/// What expanding one state gave.
pub(super) enum Expansion<C: RecipeSet, T = ()> {
    /// The run ends in this state; its end-of-run verdict and figures,
    /// and whether the clock cut it ([`crate::explore::run::cut_by_clock`]).
    End(Result<(), Violation>, Box<Tally>, bool),
    /// The depth bound stopped the search here.
    Cut,
    /// Children in enabled order, less those `keep` rejected.
    Children {
        children: Vec<Child<C, T>>,
        /// Events stepped (up to and including a violating one).
        events: u64,
        /// A child broke a hard property: the event that led to it.
        violation: Option<(Event, Violation)>,
    },
}

/// Buffers reused between expansions (one set per worker).
#[derive(Default)]
pub(super) struct Scratch {
    enabled: Vec<Event>,
    log: Vec<Happening<AppEvent>>,
}

/// How partial-order reduction expands one state: the reduction (`None`:
/// off), the steps asleep there, and for a state expanded again, the only
/// steps to take ([`Queued::only`]).
#[derive(Clone, Copy)]
pub(super) struct Reduction<'a> {
    pub por: Option<&'a Por>,
    pub sleep: &'a [Asleep],
    pub only: Option<u64>,
}

/// Expand `model` (reached at `depth`), keeping the children `keep`
/// accepts (given the child, its key and its sleep mask; `Some(tag)`
/// keeps it). Without partial-order reduction the last child takes the
/// parent itself instead of a copy: a state is never needed after its
/// expansion (with it, the parent is kept to the end, as each step's
/// footprint is measured against it).
#[allow(clippy::too_many_arguments)]
pub(super) fn expand<C: RecipeSet, T>(
    mut model: Box<SystemState<C>>,
    reduction: Reduction<'_>,
    depth: usize,
    max_depth: usize,
    scratch: &mut Scratch,
    keying: Keying<'_>,
    keep: impl Fn(&SystemState<C>, u64, u64) -> Option<T>,
) -> Expansion<C, T> {
    let Scratch { enabled, log } = scratch;
    enabled.clear();
    model.enabled(enabled);
    if is_terminal(&model, enabled, 0, usize::MAX) {
        if reduction.only.is_some() {
            // Judged when it was first expanded.
            return Expansion::Children {
                children: Vec::new(),
                events: 0,
                violation: None,
            };
        }
        let clock_cut = cut_by_clock(&model, enabled);
        let verdict = model.finish();
        return Expansion::End(verdict, Box::new(model.monitors.figures()), clock_cut);
    }
    if depth >= max_depth {
        return Expansion::Cut;
    }
    skip_idle_tick(&model, enabled);
    if let Some(por) = reduction.por {
        return expand_reduced(model, por, reduction, scratch, keying, keep);
    }
    let Some((last, copied)) = enabled.split_last() else {
        unreachable!("a state with nothing enabled is terminal");
    };
    let mut children = Vec::new();
    let mut events = 0;
    let mut violation = None;
    let mut step = |mut next: Box<SystemState<C>>, event: &Event| {
        events += 1;
        next.step(event, log)?;
        let key = keying.key(&next);
        if let Some(tag) = keep(&next, key, 0) {
            children.push(Child {
                model: next,
                key,
                event: event.clone(),
                tag,
                sleep: Vec::new(),
            });
        }
        Ok(())
    };
    for event in copied {
        if let Err(v) = step(model.clone(), event) {
            violation = Some((event.clone(), v));
            break;
        }
    }
    if violation.is_none() {
        if let Err(v) = step(model, last) {
            violation = Some((last.clone(), v));
        }
    }
    Expansion::Children {
        children,
        events,
        violation,
    }
}

/// [`expand`] with sleep sets: the steps asleep here are not taken (or,
/// for a state expanded again, only the woken ones are), and each child
/// gets asleep every step asleep here or taken before it that commutes
/// with the step that led to it ([`super::por`]).
fn expand_reduced<C: RecipeSet, T>(
    model: Box<SystemState<C>>,
    por: &Por,
    reduction: Reduction<'_>,
    scratch: &mut Scratch,
    keying: Keying<'_>,
    keep: impl Fn(&SystemState<C>, u64, u64) -> Option<T>,
) -> Expansion<C, T> {
    let Scratch { enabled, log } = scratch;
    match reduction.only {
        Some(mask) => {
            let plan = keying.plan(&model);
            enabled.retain(|e| por.bit(plan.as_ref(), e) & mask != 0);
        }
        None => enabled.retain(|e| !reduction.sleep.iter().any(|a| a.event == *e)),
    }
    let mut children = Vec::new();
    let mut events = 0;
    let mut violation = None;
    // Steps taken here so far: asleep in the children of later ones they
    // commute with.
    let mut taken: Vec<Asleep> = Vec::with_capacity(enabled.len());
    for event in enabled.iter() {
        let mut next = model.clone();
        events += 1;
        if let Err(v) = next.step(event, log) {
            violation = Some((event.clone(), v));
            break;
        }
        let footprint = por.footprint(&model, &next, event, log);
        let (key, plan) = keying.key_plan(&next);
        let sleep: Vec<Asleep> = reduction
            .sleep
            .iter()
            .chain(taken.iter())
            .filter(|a| a.footprint.independent(&footprint))
            .map(|a| Asleep {
                canon: por.bit(plan.as_ref(), &a.event),
                ..a.clone()
            })
            .collect();
        taken.push(Asleep {
            event: event.clone(),
            canon: 0,
            footprint,
        });
        if let Some(tag) = keep(&next, key, sleep_mask(&sleep)) {
            children.push(Child {
                model: next,
                key,
                event: event.clone(),
                tag,
                sleep,
            });
        }
    }
    Expansion::Children {
        children,
        events,
        violation,
    }
}

/// Leave out a clock tick that changes nothing but the clock
/// ([`zksim::World::waits_on_time`] is false: no timer, pause, read timeout,
/// partition or session expiry pending) when something else can happen.
///
/// Such a tick is a time shift: every behaviour after it is a behaviour of
/// the state before it, one tick later, with the same verdicts (no check
/// reads absolute time, and the untaken tick leaves more of `max_time`).
/// Exploring it would multiply the states by every idle tick `max_time`
/// allows, which is why liveness used to need a hand-tuned `max_time`.
fn skip_idle_tick<C: RecipeSet>(model: &SystemState<C>, enabled: &mut Vec<Event>) {
    if enabled.len() > 1 && enabled.contains(&Event::Tick) && !model.world.waits_on_time() {
        enabled.retain(|e| *e != Event::Tick);
    }
}
