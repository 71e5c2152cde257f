//! Rebuilding a counterexample's schedule from fingerprints.
//!
//! The visited set keeps, per state, only its parent's fingerprint. The
//! chain of parents leads back to the root; replaying from the root and
//! taking, at each step, the first enabled event whose successor has the
//! next fingerprint in the chain gives a schedule that reaches the state
//! (the same technique as stateright's trace reconstruction). It costs a
//! few steps per link, paid once per counterexample instead of keeping an
//! event per visited state.
//!
//! Under symmetry reduction the fingerprints are representatives': the
//! replay then reaches a state equal to the recorded one up to a
//! permutation of clients, which breaks the same property, with other
//! client numbers. So the violation is judged again on the replayed state
//! ([`failure_at_end`], [`failure_by_step`]): the report and its schedule
//! always tell the same story.

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use super::symmetry::Keying;
use crate::explore::Failure;
use crate::monitor::Violation;
use crate::scenario::Scenario;
use crate::schedule::Schedule;
use crate::state::SystemState;

/// The schedule from the root to the state keyed `target`, and that state.
/// `parent` maps a visited key to its parent's; the root is its own parent.
fn schedule_to<C: RecipeSet>(
    scenario: &Scenario<C>,
    keying: Keying<'_>,
    target: u64,
    parent: impl Fn(u64) -> u64,
) -> (Schedule, SystemState<C>) {
    let mut chain = vec![target];
    loop {
        let last = chain[chain.len() - 1];
        let up = parent(last);
        if up == last {
            break;
        }
        chain.push(up);
    }
    chain.reverse();
    let mut model = SystemState::<C>::for_search(scenario);
    debug_assert_eq!(keying.key(&model), chain[0], "the chain starts at the root");
    let mut enabled: Vec<Event> = Vec::new();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    let mut events = Vec::with_capacity(chain.len());
    for &want in &chain[1..] {
        enabled.clear();
        model.enabled(&mut enabled);
        let (event, next) = enabled
            .iter()
            .find_map(|event| {
                let mut next = model.clone();
                let ok = next.step(event, &mut log).is_ok();
                (ok && keying.key(&next) == want).then(|| (event.clone(), next))
            })
            .expect("every parent link was recorded from a step of the search");
        events.push(event);
        model = next;
    }
    (Schedule { events }, model)
}

/// The failure of a run that ends in the state keyed `target`, whose end
/// verdict was `found`.
pub(super) fn failure_at_end<C: RecipeSet>(
    scenario: &Scenario<C>,
    keying: Keying<'_>,
    target: u64,
    parent: impl Fn(u64) -> u64,
    found: Violation,
) -> Failure {
    let (schedule, mut model) = schedule_to(scenario, keying, target, parent);
    let violation = match model.finish() {
        Err(v) if v.property == found.property => v,
        _ => found,
    };
    Failure {
        seed: None,
        violation,
        schedule,
        cycle_from: None,
    }
}

/// The failure of a step `event` from the state keyed `target` that broke
/// `found`. Under symmetry the replayed state may need another client's
/// step to break it: the first enabled event that breaks the same property
/// is taken then.
pub(super) fn failure_by_step<C: RecipeSet>(
    scenario: &Scenario<C>,
    keying: Keying<'_>,
    target: u64,
    parent: impl Fn(u64) -> u64,
    event: Event,
    found: Violation,
) -> Failure {
    let (mut schedule, model) = schedule_to(scenario, keying, target, parent);
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    let mut breaks = |event: &Event| {
        let mut next = model.clone();
        match next.step(event, &mut log) {
            Err(v) if v.property == found.property => Some((event.clone(), v)),
            _ => None,
        }
    };
    let mut enabled: Vec<Event> = Vec::new();
    model.enabled(&mut enabled);
    let step = if enabled.contains(&event) {
        breaks(&event)
    } else {
        None
    };
    let (event, violation) = step
        .or_else(|| enabled.iter().find_map(breaks))
        .unwrap_or((event, found));
    schedule.events.push(event);
    Failure {
        seed: None,
        violation,
        schedule,
        cycle_from: None,
    }
}
