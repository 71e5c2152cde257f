//! Seeded random schedules with swarm testing.
//!
//! Each seed first draws which fault kinds are on for its whole run (swarm
//! testing: a run with only expiries finds different bugs than one where
//! every kind competes for the budget), then picks events by weight. `Tick`
//! weighs less than the rest so that a lot happens between two ticks, as
//! in a real ensemble where messages take milliseconds and sessions seconds.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zksim::{Event, Fault};

use crate::explore::run::{outcome, RunOutcome};
use crate::scenario::Scenario;
use crate::state::SystemState;

use super::Chooser;
use zkrecipes::RecipeSet;

/// Weight of a message, request, apply, timer or connect.
const WEIGHT_WORK: u32 = 10;
/// Weight of a clock tick.
const WEIGHT_TICK: u32 = 2;
/// Weight of one enabled fault whose kind is on for this seed.
const WEIGHT_FAULT: u32 = 1;

/// The kinds a seed may switch on or off.
pub(crate) const FAULT_KINDS: usize = 6;

/// Which swarm kind a fault belongs to (heals go with partitions).
pub(crate) fn fault_kind(fault: &Fault) -> usize {
    match fault {
        Fault::DropConnection { .. } => 0,
        Fault::Silence { .. } => 1,
        Fault::Pause { .. } => 2,
        Fault::Crash { .. } => 3,
        Fault::Partition { .. } | Fault::Heal { .. } => 4,
        Fault::KillSession { .. } => 5,
    }
}

/// Draw, for one seed, which fault kinds are on (each with probability ½).
pub(crate) fn draw_swarm(rng: &mut ChaCha8Rng) -> [bool; FAULT_KINDS] {
    let mut on = [false; FAULT_KINDS];
    for kind in &mut on {
        *kind = rng.random_range(0..2u32) == 1;
    }
    on
}

/// One seeded random schedule (swarm testing: the seed also decides which
/// fault kinds are on).
pub fn run_random<C: RecipeSet>(scenario: &Scenario<C>, seed: u64) -> RunOutcome {
    let mut chooser = RandomChooser::new(ChaCha8Rng::seed_from_u64(seed));
    outcome(scenario, seed, &mut chooser)
}

/// Weighted random choice.
pub struct RandomChooser {
    rng: ChaCha8Rng,
    faults_on: [bool; FAULT_KINDS],
}

impl RandomChooser {
    /// A chooser drawing from `rng`; which fault kinds it may inject at all is
    /// drawn first (swarm testing), so different seeds stress different mixes.
    pub fn new(mut rng: ChaCha8Rng) -> Self {
        let faults_on = draw_swarm(&mut rng);
        RandomChooser { rng, faults_on }
    }

    /// Which fault kinds this seed switched on.
    pub fn faults_on(&self) -> [bool; FAULT_KINDS] {
        self.faults_on
    }

    fn weight(&self, event: &Event) -> u32 {
        match event {
            Event::Tick => WEIGHT_TICK,
            Event::Fault(f) if self.faults_on[fault_kind(f)] => WEIGHT_FAULT,
            Event::Fault(_) => 0,
            _ => WEIGHT_WORK,
        }
    }
}

impl<C: RecipeSet> Chooser<C> for RandomChooser {
    /// One draw in `0..total weight`, then the event whose cumulative
    /// weight first passes it: two passes over the list instead of a
    /// table of cumulative weights (this runs at every step).
    fn choose(&mut self, _model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        let total: u32 = enabled.iter().map(|e| self.weight(e)).sum();
        if total == 0 {
            return Some(0);
        }
        let r = self.rng.random_range(0..total);
        let mut cumulative = 0;
        enabled.iter().position(|e| {
            cumulative += self.weight(e);
            cumulative > r
        })
    }

    /// A fault of a kind this seed switched off weighs nothing: it is
    /// never picked, and the total the draw is taken from is the same
    /// without it.
    fn passes_over(&self, fault: &Fault) -> bool {
        !self.faults_on[fault_kind(fault)]
    }
}
