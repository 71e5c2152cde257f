//! Replaying a schedule for the viewer: the timeline, the world after
//! every step, and each step's trace lines.
//!
//! This is [`zkcheck::run::drive`]'s loop with a [`zkcheck::explore::replay::IndexChooser`]-like strict
//! replay, written out because the viewer must know *which* step broke the
//! property (a step's monitors, or the end-of-run checks), which `drive`
//! folds into one answer.

use std::collections::BTreeMap;

use serde_json::Value;
use zkrecipes::AppEvent;
use zksim::{Event, Happening, SessionId};

use zkcheck::explore::replay::BadChoice;
use zkcheck::run::is_terminal;
use zkcheck::scenario::Scenario;
use zkcheck::state::SystemState;
use zkcheck::trace::Trace;
use zkrecipes::RecipeSet;

use super::builder::Builder;
use super::snapshot::{self, Snapshot};
use super::timeline::{Belief, Timeline};

/// A replayed run, ready to draw.
#[derive(Clone, Debug)]
pub struct Recording<C: zksim::Client = zkrecipes::AnyRecipe> {
    pub timeline: Timeline,
    /// Snapshot 0 whole (as a diff from nothing), then one diff per step.
    pub snapshots: Vec<Value>,
    /// The trace lines of each snapshot's step (index as `snapshots`).
    pub lines: Vec<Vec<String>>,
    /// The scenario, for the page's header.
    pub scenario: Scenario<C>,
}

/// What to record besides the timeline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep the world after every step (the HTML page needs it; the SVG does not).
    pub snapshots: bool,
    /// Label releases with the wakeups they caused (the herd comparison).
    pub count_wakeups: bool,
    /// A lasso's token: its cycle starts at this step (the trace marks it,
    /// and the run is judged as a lasso, [`zkcheck::lasso::judge`]).
    pub cycle_from: Option<usize>,
}

/// Replay `indices` strictly (an index out of range is an error naming its
/// step) and record what the viewer shows.
pub fn record<C: RecipeSet>(
    scenario: &Scenario<C>,
    indices: &[u32],
    title: String,
    options: Options,
) -> Result<Recording<C>, BadChoice> {
    let mut log: Vec<Happening<AppEvent>> = Vec::new();
    let mut model = SystemState::with_start_log(scenario, &mut log);
    let mut builder = Builder::new(title, &model);
    if options.count_wakeups {
        builder = builder.count_wakeups();
    }
    let mut worlds = Worlds::new(options.snapshots);
    let mut trace = Trace::with_cycle(options.cycle_from);
    trace.start(&model, &log);
    builder.start(&model, &log);
    worlds.record(&model, &log, &builder.beliefs_shown());
    let mut lines = vec![take_lines(&mut trace)];

    let mut enabled: Vec<Event> = Vec::new();
    let max_steps = scenario.explore.max_steps;
    for (step, &index) in indices.iter().enumerate() {
        enabled.clear();
        model.enabled(&mut enabled);
        if is_terminal(&model, &enabled, step, max_steps) {
            break;
        }
        let Some(event) = enabled.get(index as usize).cloned() else {
            return Err(BadChoice {
                step,
                index,
                enabled: enabled.len(),
            });
        };
        let result = model.step(&event, &mut log);
        trace.record(&model, &event, &log);
        builder.step(step, &event, &model, &log);
        worlds.record(&model, &log, &builder.beliefs_shown());
        lines.push(take_lines(&mut trace));
        if let Err(v) = result {
            builder.violation(step + 1, &v, false);
            return Ok(finish(builder, worlds, lines, scenario));
        }
    }
    enabled.clear();
    model.enabled(&mut enabled);
    if let Some(from) = options.cycle_from {
        if let Some(schedule) = replayed_events(scenario, indices) {
            if let Ok(v) = zkcheck::lasso::judge(scenario, &schedule, from) {
                builder.violation(lines.len() - 1, &v, true);
            }
        }
    } else if is_terminal(&model, &enabled, lines.len() - 1, max_steps) {
        if let Err(v) = model.finish() {
            builder.violation(lines.len() - 1, &v, true);
        }
    }
    Ok(finish(builder, worlds, lines, scenario))
}

/// The events a token's indices choose, or `None` if they do not fit.
fn replayed_events<C: RecipeSet>(scenario: &Scenario<C>, indices: &[u32]) -> Option<Vec<Event>> {
    let mut model = SystemState::new(scenario);
    let (mut enabled, mut log) = (Vec::new(), Vec::new());
    let mut events = Vec::with_capacity(indices.len());
    for &i in indices {
        enabled.clear();
        model.enabled(&mut enabled);
        let event: Event = enabled.get(i as usize)?.clone();
        model.step(&event, &mut log).ok()?;
        events.push(event);
    }
    Some(events)
}

fn finish<C: RecipeSet>(
    builder: Builder,
    worlds: Worlds,
    lines: Vec<Vec<String>>,
    scenario: &Scenario<C>,
) -> Recording<C> {
    Recording {
        timeline: builder.finish(),
        snapshots: worlds.diffs,
        lines,
        scenario: scenario.clone(),
    }
}

/// The trace lines written since the last call.
fn take_lines(trace: &mut Trace) -> Vec<String> {
    let lines = trace.text.lines().map(str::to_string).collect();
    trace.text.clear();
    lines
}

/// Snapshots as diffs, and what they need to remember between steps.
struct Worlds {
    on: bool,
    last: Snapshot,
    diffs: Vec<Value>,
    ended: BTreeMap<SessionId, bool>,
    owners: BTreeMap<SessionId, usize>,
}

impl Worlds {
    fn new(on: bool) -> Self {
        Worlds {
            on,
            last: Snapshot::new(),
            diffs: Vec::new(),
            ended: BTreeMap::new(),
            owners: BTreeMap::new(),
        }
    }

    fn record<C: RecipeSet>(
        &mut self,
        model: &SystemState<C>,
        log: &[Happening<AppEvent>],
        beliefs: &[Belief],
    ) {
        if !self.on {
            return;
        }
        for h in log {
            if let Happening::SessionEnded { session, expired } = h {
                self.ended.insert(*session, *expired);
            }
        }
        for c in 0..model.world.num_clients() {
            self.owners.insert(model.world.session_of(c), c);
        }
        let now = snapshot::snapshot(model, beliefs, &self.ended, &self.owners);
        self.diffs.push(snapshot::diff(&self.last, &now));
        self.last = now;
    }
}
