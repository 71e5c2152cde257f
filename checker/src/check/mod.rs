//! Checking a recipe from `cargo test`: a builder over the explorers,
//! shrinker and tokens, in the spirit of stateright's
//! `checker().spawn_bfs().join().assert_properties()` and shuttle's
//! `check_random(f, n)`.
//!
//! ```
//! use zkcheck::check::Check;
//! use zkcheck::monitor::Property;
//! use zkrecipes::lock::SequentialLock;
//!
//! Check::<SequentialLock>::new(3)
//!     .rounds(2)
//!     .hard([Property::MutualExclusion, Property::Liveness])
//!     .always("at most 3 clients", |world| world.num_clients() <= 3)
//!     .random(50)
//!     .assert_holds();
//! ```
//!
//! A failing assertion panics with the property, its explanation, the
//! shrunk trace and a `replay:` token; [`Check::replay`] turns that token
//! into a regression test. Environment variables override what the code
//! asks for, like loom's and proptest's (see [`mod@env`]).

pub mod env;
#[cfg(feature = "proptest")]
pub mod strategy;

use zkrecipes::{Recipe, RecipeSet};
use zksim::{FaultBudget, World};

use crate::counterexample::Counterexample;
use crate::explore::replay::replay_lasso;
use crate::explore::{Exploration, Options};
use crate::invariant::Invariant;
use crate::monitor::{Custom, Monitor, Property};
use crate::progress::Progress;
use crate::scenario::{Scenario, StrategyKind};
use crate::token::Token;

/// A check of recipe type `C`: the scenario to run, how to explore it, and
/// the properties that must hold. Build it, then call
/// [`assert_holds`](Check::assert_holds), [`assert_fails`](Check::assert_fails)
/// or [`run`](Check::run).
#[derive(Clone, Debug)]
pub struct Check<C: RecipeSet> {
    scenario: Scenario<C>,
    options: Options,
    /// Replay these choices instead of exploring ([`Check::replay`]).
    replay: Option<Vec<u32>>,
    /// The replayed token is a lasso whose cycle starts at this step.
    replay_cycle: Option<usize>,
}

/// What a check found: the pipeline's one value ([`crate::verdict`]),
/// the same the CLI renders.
pub use crate::verdict::{Verdict, VerdictKind};

impl<C: Recipe + Send + Sync + 'static> Check<C> {
    /// `clients` clients of `C`, one round each, on `/lock`, a 3-server
    /// ensemble, no faults, 1000 random schedules from seed 0, and the
    /// family's default checks ([`crate::scenario::default_checks`]): a
    /// lock judges `mutex` (measuring `fifo`, `herd`, `liveness`), an
    /// election `election`, a queue `queue`. A check set that judges
    /// nothing — emptied by [`Check::hard`], or holding a check that cannot
    /// fail for this recipe and client count (`mutex` with one client) —
    /// is refused when the check runs, naming why
    /// ([`Scenario::judges_something`], the rule of scenario files and
    /// tokens too).
    pub fn new(clients: usize) -> Self {
        Check::from_scenario(Scenario::<C>::of_recipe(clients))
    }
}

impl<C: RecipeSet> Check<C> {
    /// Check a scenario built by hand (any recipe set, including the
    /// registered recipes of TOML scenarios), with its own `[explore]` defaults.
    pub fn from_scenario(scenario: Scenario<C>) -> Self {
        let mut options = Options::from_scenario(&scenario);
        options.jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        Check {
            scenario,
            options,
            replay: None,
            replay_cycle: None,
        }
    }

    /// Replay a `replay:` token printed by a failing check (or by
    /// `zkcheck check`) instead of exploring: a regression test. Add the
    /// same [`always`](Check::always) invariants and
    /// [`monitor`](Check::monitor)s the failing check had.
    ///
    /// # Panics
    /// If the token is malformed or names a recipe `C` does not have.
    pub fn replay(token: &str) -> Self {
        match Self::try_replay(token) {
            Ok(c) => c,
            Err(e) => panic!("Check::replay: {e}"),
        }
    }

    /// [`Check::replay`] without the panic.
    pub fn try_replay(token: &str) -> Result<Self, crate::token::TokenError> {
        // The rule that the check judges something waits for `run`: the
        // caller may add invariants and monitors first.
        let token = Token::decode_pending_code::<C>(token)?;
        let mut check = Check::from_scenario(token.scenario);
        check.replay = Some(token.indices);
        check.replay_cycle = token.cycle_from;
        Ok(check)
    }

    /// Rounds of work per client.
    pub fn rounds(mut self, rounds: u32) -> Self {
        self.scenario.workload.rounds = rounds;
        self
    }

    /// What may go wrong in a run (injected faults, at most this many of each).
    pub fn faults(mut self, budget: FaultBudget) -> Self {
        self.scenario.faults = budget;
        self
    }

    /// The properties whose violation fails the check (replacing the defaults).
    pub fn hard(mut self, properties: impl IntoIterator<Item = Property>) -> Self {
        self.scenario.hard = properties.into_iter().collect();
        // A check is listed once: a hard one is no longer only measured.
        let hard = self.scenario.hard.clone();
        self.scenario.report.retain(|p| !hard.contains(p));
        self
    }

    /// Properties only measured (in [`Exploration::figures`]).
    pub fn report(mut self, properties: impl IntoIterator<Item = Property>) -> Self {
        let hard = &self.scenario.hard;
        self.scenario.report = properties
            .into_iter()
            .filter(|p| !hard.contains(p))
            .collect();
        self
    }

    /// An invariant of the world that must hold after every step (hard).
    /// A plain function, so the explored state stays `Hash + Eq`.
    pub fn always(mut self, name: &'static str, holds: fn(&World<C>) -> bool) -> Self {
        self.scenario.always.push(Invariant::new(name, holds));
        self
    }

    /// A monitor of the user's own: any [`Monitor`], judged (hard) after
    /// every step and at the end, like the built-in ones. Its state is part
    /// of the explored state (keep figures-only counters in a
    /// [`crate::monitor::view::Measured`]).
    pub fn monitor(mut self, monitor: impl Monitor) -> Self {
        self.scenario.monitors.push(Custom::new(monitor));
        self
    }

    /// Any other scenario field (ensemble shape, timeouts, root, workload).
    pub fn configure(mut self, f: impl FnOnce(&mut Scenario<C>)) -> Self {
        f(&mut self.scenario);
        self
    }

    /// First seed of a random or PCT sweep (seeds `seed, seed+1, …`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// Worker threads for seeded sweeps (results never depend on it).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.options.jobs = jobs.max(1);
        self
    }

    /// A run stops after this many steps (then end-of-run checks are judged).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.scenario.explore.max_steps = steps;
        self
    }

    /// Explore `schedules` seeded random schedules (swarm-chosen faults).
    pub fn random(mut self, schedules: u64) -> Self {
        self.options.strategy = StrategyKind::Random;
        self.options.schedules = schedules;
        self
    }

    /// Explore `schedules` PCT schedules of bug depth `depth`.
    pub fn pct(mut self, depth: usize, schedules: u64) -> Self {
        self.options.strategy = StrategyKind::Pct;
        self.options.pct_depth = depth;
        self.options.schedules = schedules;
        self
    }

    /// Explore every schedule up to `depth` steps, breadth first (shortest
    /// counterexample), with visited-state dedup.
    pub fn bfs(mut self, depth: usize) -> Self {
        self.options.strategy = StrategyKind::Bfs;
        self.options.depth = depth;
        self
    }

    /// BFS/DFS with symmetry reduction where sound (the default) or
    /// without it (every permutation of interchangeable clients explored).
    pub fn symmetry(mut self, on: bool) -> Self {
        self.options.symmetry = on;
        self
    }

    /// BFS/DFS with partial-order reduction (sleep sets) where sound (the
    /// default) or without it (every interleaving of commuting steps taken).
    pub fn por(mut self, on: bool) -> Self {
        self.options.por = on;
        self
    }

    /// Like [`Check::bfs`], depth first.
    pub fn dfs(mut self, depth: usize) -> Self {
        self.options.strategy = StrategyKind::Dfs;
        self.options.depth = depth;
        self
    }

    /// The scenario as built so far.
    pub fn scenario(&self) -> &Scenario<C> {
        &self.scenario
    }

    /// The exploration options as built so far (before [`mod@env`] overrides).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Run the check: explore (or replay), and shrink a failure.
    ///
    /// # Panics
    /// If the scenario is invalid, an environment override is malformed,
    /// or a replayed token's schedule does not fit its scenario.
    pub fn run(&self) -> Verdict {
        if let Err(e) = self.scenario.validate() {
            panic!("zkcheck: invalid scenario: {e}");
        }
        let overrides = env::Overrides::from_env().unwrap_or_else(|e| panic!("zkcheck: {e}"));
        if let Some(token) = &overrides.replay {
            return Check::<C>::replay(token).with_code_of(self).run();
        }
        if let Some(indices) = &self.replay {
            return self.run_replay(indices);
        }
        let mut options = self.options;
        overrides.apply(&mut options);
        crate::verdict::run(&self.scenario, &options, &Progress::hidden())
    }

    /// This check with `other`'s invariants and monitors: code, which a
    /// token does not carry.
    fn with_code_of(mut self, other: &Self) -> Self {
        self.scenario.always = other.scenario.always.clone();
        self.scenario.monitors = other.scenario.monitors.clone();
        self
    }

    fn run_replay(&self, indices: &[u32]) -> Verdict {
        let replayed =
            replay_lasso(&self.scenario, indices, self.replay_cycle).unwrap_or_else(|e| {
                panic!("zkcheck: the token's schedule does not fit its scenario: {e}")
            });
        crate::verdict::of_replay(&self.scenario, indices, self.replay_cycle, &replayed)
    }

    /// Run the check and panic unless every hard property and invariant held
    /// in everything explored. The panic message is the counterexample:
    /// property, explanation, shrunk trace and `replay:` token.
    pub fn assert_holds(&self) -> Exploration {
        let verdict = self.run();
        if let Some(c) = verdict.counterexample {
            panic!("{}: {c}", self.scenario.recipe);
        }
        if !verdict.incomplete.is_empty() {
            panic!(
                "{}: not checked completely (the CLI exits 3 for the same run): {}",
                self.scenario.recipe,
                verdict.incomplete.join("; ")
            );
        }
        verdict.exploration
    }

    /// Run the check and panic unless some hard property or invariant
    /// broke; returns the counterexample (its property, trace and token)
    /// for the test to look at.
    pub fn assert_fails(&self) -> Counterexample {
        let verdict = self.run();
        match verdict.counterexample {
            Some(c) => c,
            None => panic!(
                "{}: expected a violation, but every hard property held in {} schedules ({} events)",
                self.scenario.recipe, verdict.exploration.schedules, verdict.exploration.events
            ),
        }
    }
}
