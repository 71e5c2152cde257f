//! Partial-order reduction by sleep sets (Godefroid 1996, ch. 5), with
//! state caching and symmetry.
//!
//! **Idea.** If two steps `a` and `b` enabled in a state commute, the
//! schedules `…a b…` and `…b a…` reach the same states; after exploring
//! `a` first, the search may put `a` to sleep while it explores `b`: below
//! `b`, `a` need not be taken until some step that does not commute with
//! `a` wakes it. Sleep sets never drop a reachable state (only redundant
//! *steps*), so distinct states, end verdicts and — in BFS, where a
//! commuted schedule has the same length — shortest counterexamples are
//! the same with and without it; the tests (`tests/por.rs`) check exactly
//! that on small scenarios, both ways.
//!
//! **The independence relation** is computed per step from what the step
//! touched ([`zksim::world::footprint`]): the world measures what each
//! step wrote (clock, commit log, session tracker, fault budget, each
//! server, each client slot and its identity) and bounds what it read by
//! a documented superset per kind of step. Two steps from the same state
//! are independent when neither wrote what the other read. On top of the
//! world, the model's monitors ([`Por::footprint`]):
//! - a step the hard monitors *observe* — it changed their state, or its
//!   history holds an application event or a session end (every hard
//!   monitor reads those; `herd` and `queue` also read every message
//!   delivered, and `leaks` a client's own deletes in flight, which only
//!   that client's steps change) — reads and writes the monitors, and
//!   reads what monitors read from the world (the clock, the session
//!   tracker, every client's session and crash state, and for `owner` the
//!   leader's tree). So two
//!   steps that both emit application events are dependent (the `mutex`
//!   and `fifo` monitors read their order), and a step that ends a session
//!   the monitors track is dependent with any observed step;
//! - a step that enqueues a watch event or reply for client `c` writes
//!   `c`'s slot, which `Receive{c}` reads: dependent;
//! - `Tick`, `Apply` and faults read everything (they walk every client):
//!   dependent with every step.
//!
//! Footprints are measured on the state where both steps are enabled, and
//! a sleeping step keeps the footprint it had when it was put to sleep:
//! while it sleeps, every step taken is independent of it, so nothing it
//! reads changes and it would do (and touch) exactly the same.
//!
//! **State caching** (Godefroid's fix): a visited state keeps the sleep
//! set it was expanded with (a bit mask over [`Layout::event_index`]). A
//! state reached again with a sleep set that is not a superset of the kept
//! one is expanded again for the steps slept before and awake now only,
//! and keeps the intersection. In BFS a state reached again within the
//! level that has not been expanded yet just narrows its sleep set.
//!
//! **Symmetry.** The visited set is keyed by a representative of each
//! state's orbit. Kept sleep sets are written in the representative's
//! client numbering (each event renamed by the plan that takes its state
//! to the representative): two states with the same key are the same
//! state up to that renaming, which maps their steps (and their futures)
//! one to one, so "slept in the representative" means the same step in
//! either. The sleep sets carried along a path are in the path's own
//! numbering.
//!
//! **Where it is off**: faults aimed at roles (roles follow application
//! events in ways not footprinted), the scenario's own monitors (custom
//! code may read anything), worlds whose resources or events do not fit
//! 64 bits, and whenever the search asks (`--no-por`, `[explore] por =
//! false`, or a cycle-detecting search: sleep sets do not preserve cycles).

use zkrecipes::{AppEvent, RecipeSet};
use zksim::rename::Renaming;
use zksim::world::footprint::{Footprint, Layout, MONITORS};
use zksim::{Event, Happening};

use crate::monitor::{catalogue, Property};
use crate::scenario::Scenario;
use crate::state::SystemState;

/// Partial-order reduction for one scenario.
#[derive(Clone, Copy, Debug)]
pub struct Por {
    layout: Layout,
    /// A hard monitor reads requests sent and messages delivered too.
    deliveries_observed: bool,
    /// A hard monitor reads the leader's tree (`owner`).
    tree_observed: bool,
}

/// A step asleep in a state: not taken there, as a commuting order of it
/// was explored elsewhere.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Asleep {
    pub event: Event,
    /// Its bit in the visited set's (representative's) numbering.
    pub canon: u64,
    /// What it touches (measured where it was put to sleep).
    pub footprint: Footprint,
}

/// Whether exhaustive search of `scenario` (initial state `root`) may use
/// sleep sets; `Err` says why not.
pub fn decide<C: RecipeSet>(scenario: &Scenario<C>, root: &SystemState<C>) -> Result<Por, String> {
    if root.aiming.is_some() {
        return Err("faults are aimed at roles".into());
    }
    if !scenario.monitors.is_empty()
        || scenario
            .hard
            .iter()
            .any(|p| matches!(p, Property::Custom(_)))
    {
        return Err("the scenario's own monitors may read anything".into());
    }
    let layout = root.world.layout();
    if !layout.fits() || layout.events() > 64 {
        return Err(format!(
            "{} clients and {} servers do not fit a 64-bit sleep set",
            layout.clients, layout.servers
        ));
    }
    // `leaks` also reads requests sent and replies delivered, but only to
    // note a client's own deletes in flight, keyed by that client: a step
    // of another client can never make such a happening matter to it, so
    // "it changed the monitors" covers it. `herd` and `queue` relate
    // deliveries of different clients: every delivery is observed.
    let deliveries_observed = scenario
        .hard
        .iter()
        .any(|&p| catalogue::reads_every_delivery(p));
    let tree_observed = scenario
        .hard
        .iter()
        .any(|&p| catalogue::reads_leader_tree(p));
    Ok(Por {
        layout,
        deliveries_observed,
        tree_observed,
    })
}

impl Por {
    /// "sleep sets over N events" for `check`'s output.
    pub fn describe(&self) -> String {
        format!("sleep sets over {} events", self.layout.events())
    }

    /// The bit of `event` (of a state that `plan` takes to its
    /// representative) in the representative's numbering.
    pub(super) fn bit(&self, plan: Option<&Renaming>, event: &Event) -> u64 {
        let index = match plan {
            Some(plan) => self.layout.event_index(&plan.event(event)),
            None => self.layout.event_index(event),
        };
        1 << index
    }

    /// What the step `event` from `parent` to `child` (a copy of `parent`,
    /// stepped, with `log` its history) touched, monitors included. See
    /// the module docs.
    pub fn footprint<C: RecipeSet>(
        &self,
        parent: &SystemState<C>,
        child: &SystemState<C>,
        event: &Event,
        log: &[Happening<AppEvent>],
    ) -> Footprint {
        let mut footprint = child.world.step_footprint(&parent.world, event);
        let observed = log.iter().any(|h| match h {
            Happening::App { .. } | Happening::SessionEnded { .. } => true,
            Happening::Sent { .. } | Happening::Delivered { .. } => self.deliveries_observed,
            _ => false,
        }) || *child.monitors != *parent.monitors;
        if observed {
            footprint.reads |= MONITORS | self.layout.observer_reads(self.tree_observed);
            footprint.writes |= MONITORS;
        }
        footprint
    }
}
