//! Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).
//!
//! Every client and every server is a "thread" with a random distinct
//! priority; the enabled event of the highest-priority thread runs. At d−1
//! random steps (the change points) the running thread drops below all
//! others. A bug that needs d precise orderings is found with probability
//! at least 1/(n·k^(d−1)) per run, far better than uniform choice for the
//! few-preemption bugs that locks have.
//!
//! Two kinds of events are not threads: the clock only ticks when no thread
//! can move (otherwise a high-priority `Tick` would run time out first),
//! and faults are injected at random steps with a per-seed rate, on the
//! kinds the seed's swarm draw switched on.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zksim::Event;

use super::random::{draw_swarm, fault_kind, FAULT_KINDS};
use super::{sweep, Chooser, Exploration, Explorer, Options};
use crate::explore::run::outcome_from;
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::state::SystemState;
use zkrecipes::RecipeSet;

/// A PCT sweep over seeds.
pub struct PctSweep {
    pub options: Options,
}

impl<C: RecipeSet> Explorer<C> for PctSweep {
    fn explore(&self, scenario: &Scenario<C>, progress: &Progress) -> Exploration {
        let start = SystemState::new(scenario);
        let max_steps = scenario.explore.max_steps;
        sweep(scenario, &self.options, progress, |seed| {
            let mut chooser = PctChooser::new(scenario, self.options.pct_depth, seed);
            outcome_from(&start, max_steps, seed, &mut chooser)
        })
    }
}

/// PCT's scheduler for one run.
pub struct PctChooser {
    rng: ChaCha8Rng,
    clients: usize,
    /// Priority of each thread (clients, then servers); higher runs first.
    priorities: Vec<u32>,
    /// Steps at which the running thread is demoted, ascending.
    change_points: Vec<usize>,
    /// Demotions done so far.
    changes_done: usize,
    step: usize,
    faults_on: [bool; FAULT_KINDS],
    /// Chance, in 1/1000, that a step injects a fault if one is enabled.
    fault_permille: u32,
    candidates: Vec<usize>,
}

impl PctChooser {
    pub fn new<C: zksim::Client>(scenario: &Scenario<C>, depth: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let faults_on = draw_swarm(&mut rng);
        let threads = scenario.clients + scenario.ensemble.servers;
        let depth = depth.max(1);
        // Distinct initial priorities depth..depth+threads, shuffled.
        let mut priorities: Vec<u32> = (0..threads as u32).map(|p| p + depth as u32).collect();
        for i in (1..priorities.len()).rev() {
            let j = rng.random_range(0..=i);
            priorities.swap(i, j);
        }
        // PCT wants k, the run's length; estimate it from the workload.
        let rounds = scenario.workload.rounds.max(1) as usize;
        let k = (40 * scenario.clients * rounds + 100).min(scenario.explore.max_steps.max(1));
        let mut change_points: Vec<usize> = (1..depth).map(|_| rng.random_range(0..k)).collect();
        change_points.sort_unstable();
        let fault_permille = rng.random_range(5..50u32);
        PctChooser {
            rng,
            clients: scenario.clients,
            priorities,
            change_points,
            changes_done: 0,
            step: 0,
            faults_on,
            fault_permille,
            candidates: Vec::new(),
        }
    }

    /// The thread an event belongs to; `None` for the clock and faults.
    fn thread(&self, event: &Event) -> Option<usize> {
        match event {
            Event::Request { client }
            | Event::Receive { client }
            | Event::Timer { client }
            | Event::Connect { client, .. } => Some(*client),
            Event::Apply { server } => Some(self.clients + server),
            Event::Tick | Event::Fault(_) => None,
        }
    }

    fn pick(&mut self, from: &[usize]) -> usize {
        from[self.rng.random_range(0..from.len())]
    }
}

impl<C: RecipeSet> Chooser<C> for PctChooser {
    fn choose(&mut self, _model: &SystemState<C>, enabled: &[Event]) -> Option<usize> {
        let step = self.step;
        self.step += 1;

        // Faults: with the seed's rate, among the kinds switched on.
        if self.rng.random_range(0..1000u32) < self.fault_permille {
            self.candidates.clear();
            for (i, e) in enabled.iter().enumerate() {
                if matches!(e, Event::Fault(f) if self.faults_on[fault_kind(f)]) {
                    self.candidates.push(i);
                }
            }
            if !self.candidates.is_empty() {
                let c = std::mem::take(&mut self.candidates);
                let i = self.pick(&c);
                self.candidates = c;
                return Some(i);
            }
        }

        // The highest-priority thread that can move.
        let best = enabled
            .iter()
            .filter_map(|e| self.thread(e))
            .filter(|&t| t < self.priorities.len())
            .max_by_key(|&t| self.priorities[t]);
        let Some(thread) = best else {
            // Only the clock and faults: let time pass if it can.
            let i = enabled.iter().position(|e| *e == Event::Tick);
            return Some(i.unwrap_or(0));
        };
        self.candidates.clear();
        for (i, e) in enabled.iter().enumerate() {
            if self.thread(e) == Some(thread) {
                self.candidates.push(i);
            }
        }
        let c = std::mem::take(&mut self.candidates);
        let i = self.pick(&c);
        self.candidates = c;

        // A change point: the thread that just ran drops below everyone.
        while self.changes_done < self.change_points.len()
            && self.change_points[self.changes_done] <= step
        {
            self.changes_done += 1;
            let low = (self.change_points.len() - self.changes_done) as u32;
            self.priorities[thread] = low;
        }
        Some(i)
    }
}
