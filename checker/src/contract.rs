//! The event contract, checked after the fact: a hard check that judged
//! nothing.
//!
//! Every hard check reads events the recipe emits ([`zkrecipes::AppEvent`];
//! the contract is written out in `recipes/src/event.rs` and
//! docs/EVENTS.md). A recipe that never emits what a check reads cannot
//! fail that check, so "ok" would say nothing about it: `fenced-mutex` over
//! a lock that never writes the protected resource, `election` over a
//! recipe that never reports `Elected`, `queue` over one that never offers.
//! [`unjudged`] names each such check from the run's figures;
//! `Check::assert_holds` refuses to call the check ok, and the CLI's
//! `check` prints each as a `warning:` line.
//!
//! Only what the figures count exactly is judged here: the resource's
//! writes (accepted and rejected), elections, offers. A check whose events
//! were emitted but judged wrong (a fence that is not the granting node's
//! czxid) is not vacuous: it fails (`owner`, `fenced-mutex`).

use crate::monitor::catalogue::{awaited, property_name};
use crate::monitor::Tally;
use crate::scenario::Scenario;

/// The hard checks of `scenario` that no explored run gave anything to
/// judge, each with the event it waited for; empty when every one judged
/// something, or when nothing ran to the end (`figures.runs == 0`: there is
/// nothing to say then, and the verdict is incomplete anyway).
pub fn unjudged<C: zksim::Client>(scenario: &Scenario<C>, figures: &Tally) -> Vec<String> {
    if figures.runs == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &p in &scenario.hard {
        // The catalogue's event contract: the event the check waits for,
        // and whether the figures show some run emitted it.
        let missing = awaited(p)
            .filter(|awaited| !(awaited.seen)(figures))
            .map(|awaited| awaited.event);
        if let Some(event) = missing {
            out.push(format!(
                "the hard check `{}` judged nothing: no run of {} emitted {event}, so it could \
                 not fail (see the event contract, docs/EVENTS.md)",
                property_name(p),
                figures.runs
            ));
        }
    }
    out
}
