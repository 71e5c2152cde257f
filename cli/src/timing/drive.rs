//! One timed run, stepped the way [`drive`](zkcheck::run::drive) steps it
//! with a [`TimedChooser`], without listing every enabled event at every
//! step: the [`ReadyIndex`] keeps them in ready-time order and each step
//! revisits only the clients it wrote.
//!
//! What it must equal: `drive(scenario, &mut TimedChooser::new(..), ..)`,
//! step for step — the same events, so the same run, figures and jitter
//! draws (`timing::tests` holds them equal on faulty, multi-server and
//! shared-CPU scenarios). The whole enabled list is still built where it
//! is cheap or needed: when a fault is due and one may be enabled (which
//! fault strikes is drawn from that list), and when the run may be over
//! (the end is judged by [`is_terminal`] on it).

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use zkcheck::monitor::Violation;
use zkcheck::run::{conclude, is_terminal, Ending, Run};
use zkcheck::scenario::Scenario;
use zkcheck::state::SystemState;
use zkcheck::Schedule;

use super::ready_index::ReadyIndex;
use super::TimedChooser;

/// Drive one run from the scenario's initial state under `chooser` (fresh,
/// not used yet). `on_step` sees every step after it is applied.
pub fn drive_timed<C, F>(scenario: &Scenario<C>, chooser: &mut TimedChooser, on_step: F) -> Run<C>
where
    C: RecipeSet,
    F: FnMut(&SystemState<C>, &Event, &[Happening<AppEvent>]),
{
    drive_timed_until(scenario, chooser, on_step, &|| false)
}

/// Steps between two readings of the stop flag inside one run: a run of a
/// thousand clients takes millions of steps (seconds), and a signal must
/// end it within a fraction of a second; reading the flag costs nanoseconds.
const STOP_EVERY: usize = 4096;

/// [`drive_timed`], asking `stop` every few thousand steps whether to end
/// the run now (a signal, a time limit): the run then ends as
/// [`Ending::Stopped`], its end not judged. `stop` never
/// changes which events a run takes, only where it may end.
pub fn drive_timed_until<C, F>(
    scenario: &Scenario<C>,
    chooser: &mut TimedChooser,
    mut on_step: F,
    stop: &(dyn Fn() -> bool + Sync),
) -> Run<C>
where
    C: RecipeSet,
    F: FnMut(&SystemState<C>, &Event, &[Happening<AppEvent>]),
{
    let max_steps = scenario.explore.max_steps;
    let mut model = SystemState::new(scenario);
    let mut enabled: Vec<Event> = Vec::new();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    let mut written: Vec<usize> = Vec::new();
    let mut schedule = Schedule::default();
    chooser.start(&model.world);
    let mut index = ReadyIndex::new(&model.world, chooser);
    loop {
        let world = &model.world;
        let steps = schedule.len();
        if steps % STOP_EVERY == STOP_EVERY - 1 && stop() {
            return stopped(model, schedule);
        }
        // `is_terminal` can hold only at the bound, when every client and
        // server is quiescent, or when nothing but ticks and faults is left.
        let may_end = steps >= max_steps
            || (index.clients_quiescent() && world.servers_quiescent())
            || !index.has_progress(world);
        if may_end {
            enabled.clear();
            model.enabled(&mut enabled);
            if is_terminal(&model, &enabled, steps, max_steps) {
                return conclude(model, &enabled, schedule);
            }
        }
        let best = index.best(world, chooser);
        let best_ready = best.as_ref().map_or(u64::MAX, |&(ready, _, _)| ready);
        let mut fault = None;
        if chooser.fault_due(best_ready) && world.faults_possible() {
            enabled.clear();
            model.enabled(&mut enabled);
            let faults = enabled
                .iter()
                .filter(|e| matches!(e, Event::Fault(_)))
                .count();
            if faults > 0 {
                let (pick, at) = chooser.strike(faults);
                fault = enabled
                    .iter()
                    .filter(|e| matches!(e, Event::Fault(_)))
                    .nth(pick)
                    .map(|e| (e.clone(), at));
            }
        }
        let Some((event, start)) = fault.or(best.map(|(ready, _, event)| (event, ready))) else {
            return stopped(model, schedule);
        };
        chooser.commit(world, event.clone(), start);
        schedule.events.push(event.clone());
        let result = model.step_noting(&event, &mut log, &mut written);
        on_step(&model, &event, &log);
        if let Err(v) = result {
            return violated(model, schedule, v);
        }
        if let Some(actor) = actor(&event) {
            if let Err(at) = written.binary_search(&actor) {
                written.insert(at, actor);
            }
        }
        chooser.settle(&model.world, &written);
        match event {
            Event::Tick | Event::Fault(_) => index.rebuild(&model.world, chooser),
            _ => index.refresh(&model.world, chooser, &written),
        }
    }
}

/// The run ended before its natural end (a signal, or no event left to
/// fire): its end is not judged.
fn stopped<C: RecipeSet>(model: SystemState<C>, schedule: Schedule) -> Run<C> {
    Run {
        violation: None,
        schedule,
        ending: Ending::Stopped,
        model,
    }
}

/// The last step broke a hard property.
fn violated<C: RecipeSet>(
    model: SystemState<C>,
    schedule: Schedule,
    violation: Violation,
) -> Run<C> {
    Run {
        violation: Some(violation),
        schedule,
        ending: Ending::Violated,
        model,
    }
}

/// The client whose step it is (its clock moves: its events' ready times
/// change even if its slot did not).
fn actor(event: &Event) -> Option<usize> {
    match *event {
        Event::Request { client }
        | Event::Receive { client }
        | Event::Timer { client }
        | Event::Connect { client, .. } => Some(client),
        _ => None,
    }
}
