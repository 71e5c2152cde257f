//! Exploration strategies behind one trait, like stateright's checkers:
//! seeded sweeps (`random`, `pct`) and exhaustive search (`bfs`, `dfs`).
//!
//! Seeded sweeps run seeds in parallel (rayon) in fixed-size chunks and
//! read the results in seed order, so the reported failure (the smallest
//! failing seed) and every merged statistic are the same whatever the
//! number of threads.

pub(crate) mod candidate;
pub(crate) mod chooser;
pub mod exhaustive;
mod pct;
pub mod random;
pub mod replay;
pub mod run;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use zkrecipes::{AnyRecipe, RecipeSet};

use crate::explore::run::{outcome_from, RunOutcome};
use crate::monitor::Tally;
use crate::monitor::Violation;
use crate::progress::Progress;
use crate::scenario::{Scenario, Search};
use crate::schedule::Schedule;
use crate::state::SystemState;

pub use chooser::Chooser;

/// How far and how wide to explore (the scenario's `[explore]` section,
/// overridden by command-line flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Which search: random, PCT, BFS or DFS.
    pub strategy: Search,
    /// Random/PCT: number of seeds.
    pub schedules: u64,
    /// Random/PCT: first seed.
    pub seed: u64,
    /// Worker threads for seeded sweeps and BFS (≥ 1). Never changes results.
    pub jobs: usize,
    /// PCT: bug depth d.
    pub pct_depth: usize,
    /// BFS/DFS: longest schedule explored.
    pub depth: usize,
    /// BFS/DFS: symmetry reduction where sound.
    pub symmetry: bool,
    /// BFS/DFS: partial-order reduction (sleep sets) where sound.
    pub por: bool,
    /// DFS: the cycle check (lassos).
    pub cycles: bool,
    /// BFS/DFS: distinct states at most (the search stops incomplete past it).
    pub max_states: usize,
    /// Shrink on the scenario as checked: no smaller scenario for the
    /// counterexample ([`crate::shrink::Phases::KeepScenario`]).
    pub keep_scenario: bool,
}

impl Options {
    /// The scenario's own defaults, on one thread.
    pub fn from_scenario<C: zksim::Client>(scenario: &Scenario<C>) -> Self {
        let e = &scenario.explore;
        Options {
            strategy: e.strategy,
            schedules: e.schedules,
            seed: e.seed,
            jobs: 1,
            pct_depth: e.pct_depth,
            depth: e.depth,
            symmetry: e.symmetry,
            por: e.por,
            cycles: e.cycles,
            max_states: e.max_states.map_or(exhaustive::MAX_STATES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            keep_scenario: false,
        }
    }
}

/// A hard property broken by some schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The seed that found it (seeded strategies only).
    pub seed: Option<u64>,
    /// The broken property and why.
    pub violation: Violation,
    /// The events that lead to it, as found (not yet shrunk).
    pub schedule: Schedule,
    /// A lasso ([`crate::lasso`]): the schedule's events from this index on
    /// are a cycle that can repeat for ever (exhaustive search's cycle
    /// check); `None` for a run that ends in its violation.
    pub cycle_from: Option<usize>,
}

/// What an exploration found and how much it looked at.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    /// Complete runs (seeded) or end states reached (exhaustive).
    pub schedules: u64,
    /// Events applied in total.
    pub events: u64,
    /// Distinct states visited (exhaustive only).
    pub distinct_states: Option<u64>,
    /// Exhaustive: states left unexpanded because a bound (depth or state
    /// cap) was hit; 0 means the search was complete.
    pub truncated: u64,
    /// Exhaustive: the search stopped at its state cap.
    pub state_cap_hit: bool,
    /// Exhaustive search: whether symmetry reduction was used, and with
    /// which clients, or why not (`"on (…)"` / `"off (…)"`).
    pub symmetry: Option<String>,
    /// Exhaustive search: whether partial-order reduction was used, or why
    /// not (`"on (…)"` / `"off (…)"`).
    pub por: Option<String>,
    /// Exhaustive search: whether DFS checked cycles for livelocks
    /// (`"on (…)"` / `"off (…)"`; [`crate::lasso`]).
    pub cycle_check: Option<String>,
    /// DFS with the cycle check: cycles closed and judged not to be
    /// livelocks (progress in them, a starved actor, nobody waiting).
    pub cycles_dismissed: u64,
    /// Seeded: runs that were cut at `explore.max_steps` before their natural
    /// end (their end-of-run checks saw an unfinished run).
    pub runs_cut: u64,
    /// Runs (seeded) or end states (exhaustive) the clock cut: it reached
    /// `ensemble.max_time` while time would still have changed something
    /// ([`crate::explore::run::Ending::ClockBound`]). Their end was not judged.
    pub runs_clock_cut: u64,
    /// What ended the exploration before it explored everything it was
    /// asked to (interrupt, time limit, memory budget, state cap).
    pub ended_by: Option<crate::stop::StopReason>,
    /// The first failure (the smallest failing seed, or the first found by
    /// exhaustive search); `None` when no hard property broke.
    pub failure: Option<Failure>,
    /// Tally of the measured properties, merged in seed order.
    pub figures: Tally,
}

/// An explorer: a search over the schedules of scenarios of recipe type `C`.
pub trait Explorer<C: RecipeSet = AnyRecipe> {
    /// Explore `scenario` and report what was found; `progress` shows how far
    /// it got and carries the stop conditions (signals, time, memory) the
    /// search must obey.
    fn explore(&self, scenario: &Scenario<C>, progress: &Progress) -> Exploration;
}

/// The explorer the options name (`Options::strategy`: random, PCT, BFS or DFS).
pub fn explorer<C: RecipeSet>(options: &Options) -> Box<dyn Explorer<C>> {
    match options.strategy {
        Search::Random => Box::new(SeedSweep {
            options: *options,
            chooser: random::RandomChooser::new,
        }),
        Search::Pct => Box::new(pct::PctSweep { options: *options }),
        Search::Bfs => Box::new(
            exhaustive::Exhaustive::bfs(options.depth)
                .with_jobs(options.jobs)
                .with_symmetry(options.symmetry)
                .with_por(options.por)
                .with_max_states(options.max_states),
        ),
        Search::Dfs => Box::new(
            exhaustive::Exhaustive::dfs(options.depth)
                .with_symmetry(options.symmetry)
                .with_por(options.por)
                .with_max_states(options.max_states)
                .with_cycles(options.cycles),
        ),
    }
}

/// Seeds run together before their results are read; fixed (never derived
/// from `jobs`) so that results do not depend on the thread count.
const CHUNK: u64 = 64;

/// A sweep over seeds with a chooser built from each seed's RNG.
pub(crate) struct SeedSweep<F> {
    pub options: Options,
    pub chooser: F,
}

impl<F, C, Ch> Explorer<C> for SeedSweep<F>
where
    C: RecipeSet,
    F: Fn(ChaCha8Rng) -> Ch + Sync,
    Ch: Chooser<C>,
{
    fn explore(&self, scenario: &Scenario<C>, progress: &Progress) -> Exploration {
        let start = SystemState::new(scenario);
        let max_steps = scenario.explore.max_steps;
        sweep(scenario, &self.options, progress, |seed| {
            let mut chooser = (self.chooser)(ChaCha8Rng::seed_from_u64(seed));
            outcome_from(&start, max_steps, seed, &mut chooser)
        })
    }
}

/// Run `one(seed)` for every seed of the options, in parallel, and merge
/// in seed order up to the first failing seed.
pub(crate) fn sweep<C: zksim::Client, R>(
    scenario: &Scenario<C>,
    options: &Options,
    progress: &Progress,
    one: R,
) -> Exploration
where
    R: Fn(u64) -> RunOutcome + Sync,
{
    let _ = scenario;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.max(1))
        .build();
    let mut result = Exploration::default();
    let end = options.seed.saturating_add(options.schedules);
    let mut start = options.seed;
    while start < end {
        let seeds: Vec<u64> = (start..end.min(start.saturating_add(CHUNK))).collect();
        let work = || {
            seeds
                .par_iter()
                .map(|&seed| {
                    // A stopped sweep skips its remaining seeds; results are
                    // read in seed order up to the first skipped one.
                    if progress.stopped().is_some() {
                        return None;
                    }
                    let mut o = one(seed);
                    if o.violation.is_none() {
                        o.schedule = Schedule::default(); // keep memory flat
                    }
                    progress.inc(1);
                    Some(o)
                })
                .collect::<Vec<_>>()
        };
        let outcomes = match &pool {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        };
        for o in outcomes {
            let Some(o) = o else {
                result.ended_by = progress.stop().reason();
                return result;
            };
            result.schedules += 1;
            result.events += o.steps as u64;
            result.runs_cut += u64::from(o.cut);
            result.runs_clock_cut += u64::from(o.clock_cut);
            result.figures.merge(&o.figures);
            if let Some(violation) = o.violation {
                result.failure = Some(Failure {
                    seed: Some(o.seed),
                    violation,
                    schedule: o.schedule,
                    cycle_from: None,
                });
                return result;
            }
        }
        start = start.saturating_add(CHUNK);
    }
    result
}
