//! Lassos: a run that reaches a cycle it can go round for ever.
//!
//! A *lasso* is a schedule whose events from `cycle_from` on (the cycle)
//! lead from a state back to the same state — the same up to a shift of
//! the clock ([`SystemState::time_shift_key`]): absolute time moves on, nothing
//! else does. Such a cycle can be repeated for ever. It is a **liveness**
//! violation (a livelock) when
//! 1. some client waits at its start (asked and not granted, or gave up
//!    and never asked again; `MonitorSet::waiting_clients`),
//! 2. nobody makes progress in it: no `Acquired`, `Released`, `Elected`,
//!    `Abdicated`, `Offered` or `Taken` (the events by which the liveness
//!    monitor sees a wait end or work get done; a client that finishes
//!    emits one of them first), and
//! 3. it is **weakly fair**: every event other than a fault that is
//!    enabled in *every* state of the cycle is taken somewhere in it, or
//!    is a stutter in some state of it (taking it there leads to a state
//!    with the same key, so it could be inserted without changing the
//!    cycle: an idle clock tick). A cycle that only exists because some
//!    client, server or the clock is never let act is an artefact of the
//!    schedule, not a bug. Events are the finest actors there are (a
//!    client's receive, its timer, its server taking its request, one
//!    follower's apply, the clock), so this is at least as strict as
//!    asking it of every client, server and the clock.
//!
//! Faults are never owed a step (a fault is a choice, not an actor), and a
//! cycle cannot contain one: each uses up budget, which the key sees.
//!
//! [`judge`] replays a lasso and decides; exhaustive search calls it on
//! every cycle its DFS closes, and replaying a lasso token calls it again,
//! so a lasso is judged by one rule wherever it is read. The absolute
//! bound `max_time` is not part of the question: the cycle is a behaviour
//! of the system without that bound, which only keeps searches finite.

use std::collections::BTreeSet;

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{ClientId, Event, Happening};

use crate::monitor::{Property, Violation};
use crate::scenario::Scenario;
use crate::schedule::is_injected_fault;
use crate::state::SystemState;
use crate::words::event_words;

/// Why a schedule with a cycle mark is not a livelock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotALasso(pub String);

impl std::fmt::Display for NotALasso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a livelock: {}", self.0)
    }
}

/// An app event by which a client gets somewhere.
pub(crate) fn is_progress(event: &AppEvent) -> bool {
    matches!(
        event,
        AppEvent::Acquired { .. }
            | AppEvent::Released
            | AppEvent::Elected
            | AppEvent::Abdicated
            | AppEvent::Offered { .. }
            | AppEvent::Taken { .. }
    )
}

/// Replay `events` from the scenario's initial state (as exhaustive search
/// explores it: [`SystemState::for_search`]) and judge whether
/// `events[cycle_from..]` is a cycle without progress, fair, with a
/// client waiting (module docs). `Ok` is the liveness violation to report.
pub fn judge<C: RecipeSet>(
    scenario: &Scenario<C>,
    events: &[Event],
    cycle_from: usize,
) -> Result<Violation, NotALasso> {
    if cycle_from >= events.len() {
        return Err(NotALasso("the cycle is empty".into()));
    }
    let mut model = SystemState::<C>::for_search(scenario);
    if !model.monitors.judges_liveness() {
        return Err(NotALasso("liveness is not a hard property here".into()));
    }
    let mut enabled: Vec<Event> = Vec::new();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    for i in 0..cycle_from {
        step(&mut model, events, i, &mut enabled, &mut log)?;
    }
    let start = model.time_shift_key();
    let waiting = model.monitors.waiting_clients(&model.world);
    // Events enabled in every state of the cycle (faults aside), and
    // whether each has been taken or seen to stutter.
    let mut always: Option<BTreeSet<Event>> = None;
    let mut excused: BTreeSet<Event> = BTreeSet::new();
    let mut progress = None;
    for i in cycle_from..events.len() {
        enabled.clear();
        model.enabled(&mut enabled);
        let here: BTreeSet<Event> = enabled
            .iter()
            .filter(|e| !matches!(e, Event::Fault(_)))
            .cloned()
            .collect();
        let key = model.time_shift_key();
        for e in &here {
            if excused.contains(e) || events[cycle_from..].contains(e) {
                continue;
            }
            let mut next = model.clone();
            if next.step(e, &mut log).is_ok() && next.time_shift_key() == key {
                excused.insert(e.clone());
            }
        }
        always = Some(match always {
            None => here,
            Some(all) => all.intersection(&here).cloned().collect(),
        });
        step(&mut model, events, i, &mut enabled, &mut log)?;
        if progress.is_none() {
            progress = log.iter().find_map(|h| match h {
                Happening::App { client, event } if is_progress(event) => Some((*client, i)),
                _ => None,
            });
        }
    }
    if model.time_shift_key() != start {
        return Err(NotALasso(format!(
            "the state after step {} is not the state before step {cycle_from}",
            events.len() - 1
        )));
    }
    if let Some((client, i)) = progress {
        return Err(NotALasso(format!(
            "client {client} makes progress at step {i} of the cycle"
        )));
    }
    if waiting.is_empty() {
        return Err(NotALasso("nobody waits in the cycle".into()));
    }
    let cycle: BTreeSet<&Event> = events[cycle_from..].iter().collect();
    let starved: Vec<&Event> = always
        .iter()
        .flatten()
        .filter(|e| !cycle.contains(e) && !excused.contains(e))
        .collect();
    if let Some(e) = starved.first() {
        return Err(NotALasso(format!(
            "unfair: `{}` is enabled in every state of the cycle and never taken",
            event_words(e)
        )));
    }
    debug_assert!(!events[cycle_from..].iter().any(is_injected_fault));
    Ok(livelock(&waiting, cycle_from, events.len()))
}

/// Take `events[i]` in `model`, which must be enabled there and break nothing.
fn step<C: RecipeSet>(
    model: &mut SystemState<C>,
    events: &[Event],
    i: usize,
    enabled: &mut Vec<Event>,
    log: &mut Vec<Happening<AppEvent>>,
) -> Result<(), NotALasso> {
    enabled.clear();
    model.enabled(enabled);
    let event = &events[i];
    if !enabled.contains(event) {
        return Err(NotALasso(format!(
            "step {i} ({}) is not enabled there",
            event_words(event)
        )));
    }
    model
        .step(event, log)
        .map_err(|v| NotALasso(format!("step {i} breaks {:?} first", v.property)))
}

fn livelock(waiting: &[ClientId], cycle_from: usize, len: usize) -> Violation {
    let names: Vec<String> = waiting.iter().map(|&c| format!("client {c}")).collect();
    let (first, last) = (cycle_from, len - 1);
    Violation {
        property: Property::Liveness,
        explanation: format!(
            "livelock: steps {first}-{last} lead back to the state before step {first} \
             (the same state, later: only the clock moved) and can repeat for ever; \
             {} wait{} and nobody acquires, releases or finishes in them, although \
             every step enabled throughout the cycle is taken in it (a fair cycle)",
            names.join(", "),
            if names.len() == 1 { "s" } else { "" },
        ),
    }
}

/// Make a lasso shorter: drop chunks of the prefix (halves, then quarters,
/// ... single steps) while the result is still a lasso of the same cycle
/// ([`judge`]). The cycle itself is kept as found. `stop` is asked between
/// replays.
pub(crate) fn shrink_prefix<C: RecipeSet>(
    scenario: &Scenario<C>,
    events: &[Event],
    cycle_from: usize,
    stop: &dyn Fn() -> bool,
) -> (Vec<Event>, usize, Violation, usize) {
    let mut best: Vec<Event> = events.to_vec();
    let mut from = cycle_from;
    let mut violation = judge(scenario, &best, from).ok();
    let mut attempts = 1;
    let mut chunk = from.div_ceil(2).max(1);
    while chunk >= 1 && from > 0 && violation.is_some() {
        let mut at = 0;
        while at < from {
            if stop() {
                break;
            }
            let end = (at + chunk).min(from);
            let mut tried = best[..at].to_vec();
            tried.extend_from_slice(&best[end..]);
            attempts += 1;
            match judge(scenario, &tried, from - (end - at)) {
                Ok(v) => {
                    best = tried;
                    from -= end - at;
                    violation = Some(v);
                }
                Err(_) => at = end,
            }
        }
        if chunk == 1 || stop() {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    let violation = violation.unwrap_or_else(|| livelock(&[], from, best.len()));
    (best, from, violation, attempts)
}
