//! Expanding one explored state: judging it if the run ends there, or
//! stepping each enabled event and keeping the children not seen before.
//!
//! This is the part of the search that does the work (copy, step,
//! fingerprint), written as a function of one state so that BFS can run
//! it on many states at once and merge the results in order.

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use super::symmetry::Keying;
use crate::model::Model;
use crate::monitor::tally::Tally;
use crate::monitor::Violation;
use crate::run::is_terminal;

/// A state on the frontier: boxed, so that queues move a pointer rather
/// than the state, and its fingerprint.
pub(super) type Queued<C> = (Box<Model<C>>, u64);

/// A kept child: the state, its visited-set key, the event that led to it
/// and what `keep` said about it.
pub(super) struct Child<C: RecipeSet, T> {
    pub model: Box<Model<C>>,
    pub key: u64,
    pub event: Event,
    pub tag: T,
}

/// What expanding one state gave.
pub(super) enum Expansion<C: RecipeSet, T = ()> {
    /// The run ends in this state; its end-of-run verdict and figures.
    End(Result<(), Violation>, Box<Tally>),
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

/// Expand `model` (reached at `depth`), keeping the children `keep`
/// accepts (given the child and its key; `Some(tag)` keeps it). The last
/// child takes the parent itself instead of a copy: a state is never
/// needed after its expansion.
pub(super) fn expand<C: RecipeSet, T>(
    mut model: Box<Model<C>>,
    depth: usize,
    max_depth: usize,
    scratch: &mut Scratch,
    keying: Keying<'_>,
    keep: impl Fn(&Model<C>, u64) -> Option<T>,
) -> Expansion<C, T> {
    let Scratch { enabled, log } = scratch;
    enabled.clear();
    model.enabled(enabled);
    if is_terminal(&model, enabled, 0, usize::MAX) {
        let verdict = model.finish();
        return Expansion::End(verdict, Box::new(model.monitors.figures()));
    }
    if depth >= max_depth {
        return Expansion::Cut;
    }
    skip_idle_tick(&model, enabled);
    let Some((last, copied)) = enabled.split_last() else {
        unreachable!("a state with nothing enabled is terminal");
    };
    let mut children = Vec::new();
    let mut events = 0;
    let mut violation = None;
    let mut step = |mut next: Box<Model<C>>, event: &Event| {
        events += 1;
        next.step(event, log)?;
        let key = keying.key(&next);
        if let Some(tag) = keep(&next, key) {
            children.push(Child {
                model: next,
                key,
                event: event.clone(),
                tag,
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

/// Leave out a clock tick that changes nothing but the clock
/// ([`zksim::World::waits_on_time`] is false: no timer, pause, read timeout,
/// partition or session expiry pending) when something else can happen.
///
/// Such a tick is a time shift: every behaviour after it is a behaviour of
/// the state before it, one tick later, with the same verdicts (no check
/// reads absolute time, and the untaken tick leaves more of `max_time`).
/// Exploring it would multiply the states by every idle tick `max_time`
/// allows, which is why liveness used to need a hand-tuned `max_time`.
fn skip_idle_tick<C: RecipeSet>(model: &Model<C>, enabled: &mut Vec<Event>) {
    if enabled.len() > 1 && enabled.contains(&Event::Tick) && !model.world.waits_on_time() {
        enabled.retain(|e| *e != Event::Tick);
    }
}
