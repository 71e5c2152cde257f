//! Rebuilding a counterexample's schedule from fingerprints.
//!
//! The visited set keeps, per state, only its parent's fingerprint. The
//! chain of parents leads back to the root; replaying from the root and
//! taking, at each step, the first enabled event whose successor has the
//! next fingerprint in the chain gives a schedule that reaches the state
//! (the same technique as stateright's trace reconstruction). It costs a
//! few steps per link, paid once per counterexample instead of keeping an
//! event per visited state.

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use crate::model::Model;
use crate::scenario::Scenario;
use crate::schedule::Schedule;

/// The schedule from the root to the state with fingerprint `target`.
/// `parent` maps a visited fingerprint to its parent's; the root is its
/// own parent.
pub(super) fn schedule_to<C: RecipeSet>(
    scenario: &Scenario<C>,
    target: u64,
    parent: impl Fn(u64) -> u64,
) -> Schedule {
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
    let mut model = Model::<C>::for_search(scenario);
    debug_assert_eq!(
        model.fingerprint(),
        chain[0],
        "the chain starts at the root"
    );
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
                (ok && next.fingerprint() == want).then(|| (event.clone(), next))
            })
            .expect("every parent link was recorded from a step of the search");
        events.push(event);
        model = next;
    }
    Schedule { events }
}
