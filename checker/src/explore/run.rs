//! One run: step the model with a chooser until the run ends or a hard
//! property breaks. This loop is the checker's hottest path: it reuses its
//! buffers, so a steady-state step allocates nothing but the schedule's
//! amortised growth.

use zkrecipes::{AnyRecipe, AppEvent, RecipeSet};
use zksim::{Event, Fault, Happening};

use crate::explore::chooser::Chooser;
use crate::monitor::Tally;
use crate::monitor::Violation;
use crate::scenario::Scenario;
use crate::schedule::{is_injected_fault, Schedule};
use crate::state::SystemState;

/// What one seeded run found (the contract `compare` relies on).
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The seed the run was drawn from.
    pub seed: u64,
    /// The hard property it broke, if any.
    pub violation: Option<Violation>,
    /// The events it took, in order.
    pub schedule: Schedule,
    /// How many steps it took.
    pub steps: usize,
    /// What the measured properties counted in it.
    pub figures: Tally,
    /// The run was cut at `explore.max_steps` (see [`Ending::StepBound`]).
    pub cut: bool,
    /// The clock reached `ensemble.max_time` while time would still have
    /// changed something (see [`Ending::ClockBound`]).
    pub clock_cut: bool,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A hard property broke at the last step (or at the end).
    Violated,
    /// The run reached its natural end and the end-of-run checks passed.
    Finished,
    /// The chooser stopped before the natural end; nothing judged at the end.
    Stopped,
    /// The run took `explore.max_steps` steps while it could still go on:
    /// its end-of-run checks were judged on an unfinished run, and a
    /// command that saw such a run does not call the check complete.
    StepBound,
    /// The clock reached `ensemble.max_time` while time would still have
    /// changed something (a timer, a pause, a session to expire): the
    /// end-of-run checks skipped their judgement (a waiter there is not
    /// stuck; its wait was cut). Every step up to here was judged, so the
    /// run is a complete check of the checks that judge steps; for a check
    /// that judges a run's end it is unfinished ([`crate::verdict`]).
    ClockBound,
}

impl Ending {
    /// The run ended before its natural end: by the step bound, the clock,
    /// or a chooser that stopped (a replayed schedule that ran out).
    pub fn unfinished(self) -> bool {
        matches!(
            self,
            Ending::StepBound | Ending::ClockBound | Ending::Stopped
        )
    }
}

/// Everything a driven run produced.
#[derive(Clone, Debug)]
pub struct Run<C: RecipeSet = AnyRecipe> {
    /// The hard property broken, if any.
    pub violation: Option<Violation>,
    /// The events taken, in order.
    pub schedule: Schedule,
    /// How the run ended, which says whether its end was judged.
    pub ending: Ending,
    /// The state it ended in (for traces and end-of-run figures).
    pub model: SystemState<C>,
}

impl<C: RecipeSet> Run<C> {
    /// What the contract reports of this run, found with `seed`: the
    /// model's figures are read here, the model itself is let go.
    pub fn into_outcome(self, seed: u64) -> RunOutcome {
        RunOutcome {
            seed,
            cut: self.ending == Ending::StepBound,
            clock_cut: self.ending == Ending::ClockBound,
            steps: self.schedule.len(),
            figures: self.model.monitors.figures(),
            violation: self.violation,
            schedule: self.schedule,
        }
    }

    /// The chooser stopped the run before its natural end.
    pub(crate) fn stopped(model: SystemState<C>, schedule: Schedule) -> Self {
        Run {
            violation: None,
            schedule,
            ending: Ending::Stopped,
            model,
        }
    }

    /// The last step broke a hard property.
    pub(crate) fn violated(
        model: SystemState<C>,
        schedule: Schedule,
        violation: Violation,
    ) -> Self {
        Run {
            violation: Some(violation),
            schedule,
            ending: Ending::Violated,
            model,
        }
    }
}

/// Whether the run has reached its natural end in this state: nothing will
/// happen by itself, the step bound is reached, or only faults are left to
/// choose (a fault alone cannot be the point of a run) besides clock ticks
/// that change nothing but the clock ([`World::waits_on_time`]: no timer,
/// pause, read timeout, sync limit or session expiry pending).
///
/// The last case is a time fixpoint: ticking on to `max_time` would reach
/// a state that differs only in the clock, where every end-of-run check
/// reads the same. Ending here makes a stuck run (a liveness violation)
/// end where it got stuck, however large `max_time` is, and keeps the
/// hundreds of idle ticks out of its schedule.
///
/// [`World::waits_on_time`]: zksim::World::waits_on_time
pub fn is_terminal<C: RecipeSet>(
    model: &SystemState<C>,
    enabled: &[Event],
    steps: usize,
    max_steps: usize,
) -> bool {
    if steps >= max_steps || model.is_quiescent() {
        return true;
    }
    let mut ticks = false;
    for event in enabled {
        match event {
            Event::Tick => ticks = true,
            e if is_injected_fault(e) => {}
            _ => return false,
        }
    }
    !ticks || !model.world.waits_on_time()
}

/// Drive one run from the scenario's initial state. `on_step` sees every
/// step after it is applied (traces use it; pass `|_, _, _| {}` otherwise).
pub fn drive<C, Ch, F>(scenario: &Scenario<C>, chooser: &mut Ch, on_step: F) -> Run<C>
where
    C: RecipeSet,
    Ch: Chooser<C> + ?Sized,
    F: FnMut(&SystemState<C>, &Event, &[Happening<AppEvent>]),
{
    drive_from(
        SystemState::new(scenario),
        scenario.explore.max_steps,
        chooser,
        on_step,
    )
}

/// [`drive`] from a given initial state: a sweep builds the scenario's
/// initial state once and copies it for each run (cheaper than building
/// the clients, the tree and the monitors again, and the same state).
pub fn drive_from<C, Ch, F>(
    mut model: SystemState<C>,
    max_steps: usize,
    chooser: &mut Ch,
    mut on_step: F,
) -> Run<C>
where
    C: RecipeSet,
    Ch: Chooser<C> + ?Sized,
    F: FnMut(&SystemState<C>, &Event, &[Happening<AppEvent>]),
{
    let mut enabled: Vec<Event> = Vec::new();
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    let mut schedule = Schedule::default();
    loop {
        enabled.clear();
        model.enabled_where(&mut enabled, |f| {
            matches!(f, Fault::Heal { .. }) || !chooser.passes_over(f)
        });
        if is_terminal(&model, &enabled, schedule.len(), max_steps) {
            return conclude(model, &enabled, schedule);
        }
        let Some(i) = chooser.choose(&model, &enabled) else {
            return Run::stopped(model, schedule);
        };
        let event = &enabled[i];
        schedule.events.push(event.clone());
        let result = model.step(event, &mut log);
        on_step(&model, event, &log);
        if let Err(v) = result {
            return Run::violated(model, schedule, v);
        }
    }
}

/// The run is over in this terminal state (`enabled` is what it allows):
/// judge its end. A state that is terminal only because of the step bound
/// ends the run as [`Ending::StepBound`]. Public for a driver that steps a
/// run its own way (the front end's timed runs) and must end it as
/// [`drive`] does.
pub fn conclude<C: RecipeSet>(
    mut model: SystemState<C>,
    enabled: &[Event],
    schedule: Schedule,
) -> Run<C> {
    let cut = !is_terminal(&model, enabled, 0, usize::MAX);
    let clock_cut = !cut && cut_by_clock(&model, enabled);
    let (violation, ending) = match model.finish() {
        Ok(()) if cut => (None, Ending::StepBound),
        Ok(()) if clock_cut => (None, Ending::ClockBound),
        Ok(()) => (None, Ending::Finished),
        Err(v) => (Some(v), Ending::Violated),
    };
    Run {
        violation,
        schedule,
        ending,
        model,
    }
}

/// Whether a terminal state (`enabled` is what it allows) is one the clock
/// cut: the clock has reached `ensemble.max_time`, so it may not tick, yet
/// a tick would still change something ([`zksim::World::waits_on_time`]),
/// and the clients are not all done. The end-of-run monitors read such an
/// end as "progress possible" ([`crate::monitor::End`]) and judge nothing.
pub(crate) fn cut_by_clock<C: RecipeSet>(model: &SystemState<C>, enabled: &[Event]) -> bool {
    let world = &model.world;
    !model.is_quiescent()
        && !enabled.contains(&Event::Tick)
        && world.now() >= world.config().max_time
        && world.waits_on_time()
}

/// Run `chooser` and report the contract's outcome.
pub fn outcome<C: RecipeSet, Ch: Chooser<C> + ?Sized>(
    scenario: &Scenario<C>,
    seed: u64,
    chooser: &mut Ch,
) -> RunOutcome {
    outcome_from(
        &SystemState::new(scenario),
        scenario.explore.max_steps,
        seed,
        chooser,
    )
}

/// [`outcome`] from a copy of `start`, the scenario's initial state
/// ([`drive_from`]).
pub(crate) fn outcome_from<C: RecipeSet, Ch: Chooser<C> + ?Sized>(
    start: &SystemState<C>,
    max_steps: usize,
    seed: u64,
    chooser: &mut Ch,
) -> RunOutcome {
    drive_from(start.clone(), max_steps, chooser, |_, _, _| {}).into_outcome(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::random::RandomChooser;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// A sweep copies one initial state into every run: each run must be
    /// the run a freshly built state gives (same schedule, figures and
    /// verdict), and the copied-from state must come out of the runs
    /// untouched (its parts are shared copy-on-write with every copy).
    #[test]
    fn runs_from_a_shared_start_are_runs_from_scratch() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/lock-sequential-faults.toml"
        );
        let scenario = Scenario::from_file(std::path::Path::new(path)).expect("the scenario loads");
        let start = SystemState::new(&scenario);
        let chooser = |seed| RandomChooser::new(ChaCha8Rng::seed_from_u64(seed));
        for seed in 0..40 {
            let shared = outcome_from(&start, scenario.explore.max_steps, seed, &mut chooser(seed));
            let fresh = outcome(&scenario, seed, &mut chooser(seed));
            assert_eq!(format!("{shared:?}"), format!("{fresh:?}"), "seed {seed}");
            assert!(shared.steps > 0);
        }
        assert!(
            start == SystemState::new(&scenario),
            "the runs changed their start"
        );
    }
}
