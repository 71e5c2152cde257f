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

#[cfg(feature = "proptest")]
pub mod arbitrary;
pub mod env;

use zkrecipes::{Recipe, RecipeSet};
use zksim::{FaultBudget, World};

use crate::counterexample::Counterexample;
use crate::explore::replay::replay_lasso;
use crate::explore::{Exploration, Options};
use crate::invariant::Invariant;
use crate::monitor::{Custom, Monitor, Property};
use crate::progress::Progress;
use crate::scenario::{Scenario, Search};
use crate::token::Token;

/// A check of recipe type `C`: the scenario to run, how to explore it, and
/// the properties that must hold. Build it, then call
/// [`assert_holds`](Check::assert_holds), [`assert_fails`](Check::assert_fails)
/// or [`run`](Check::run).
#[derive(Clone, Debug)]
pub struct Check<C: RecipeSet> {
    scenario: Scenario<C>,
    options: Options,
    /// Stop the search after this long (incomplete, never ok).
    time_limit: Option<std::time::Duration>,
    /// [`Check::symmetry`]`(true)` was asked for explicitly: a search
    /// that cannot use it is refused, not silently run without it.
    symmetry_required: bool,
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
    /// family's default checks (`crate::scenario::default_checks`): a
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
            time_limit: None,
            symmetry_required: false,
            replay: None,
            replay_cycle: None,
        }
    }

    /// A run of several recipe types or roles of the set `C` (an enum of
    /// yours written by [`zkrecipes::recipe_set!`]): one `[[clients]]`
    /// group each, numbered across groups in order; each client's
    /// [`zkrecipes::RecipeParams`] carries its `group` and `role`. The
    /// family's defaults as for [`Check::new`] (every group must be of one
    /// family).
    ///
    /// # Panics
    /// If `groups` is empty (a check needs clients).
    pub fn groups(groups: impl IntoIterator<Item = crate::scenario::ClientGroup>) -> Self {
        let groups: Vec<_> = groups.into_iter().collect();
        let first = groups
            .first()
            .unwrap_or_else(|| panic!("Check::groups: no groups (a check needs clients)"));
        let clients = groups.iter().map(|g| g.count).sum();
        let mut scenario = Scenario::<C>::for_set(&first.recipe, clients);
        scenario.groups = groups;
        Check::from_scenario(scenario)
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
    /// [`crate::monitor::Measured`]).
    pub fn monitor(mut self, monitor: impl Monitor) -> Self {
        self.scenario.monitors.push(Custom::new(monitor));
        self
    }

    /// Any other scenario field (ensemble shape, timeouts, root, workload,
    /// `explore`). A change to the scenario's `[explore]` defaults reaches
    /// the check's options: `s.explore.max_states = Some(n)` caps the
    /// search as [`Check::max_states`] does (an unchanged field keeps what
    /// the builder set).
    pub fn configure(mut self, f: impl FnOnce(&mut Scenario<C>)) -> Self {
        let before = self.scenario.explore;
        f(&mut self.scenario);
        let after = self.scenario.explore;
        let o = &mut self.options;
        if after.strategy != before.strategy {
            o.strategy = after.strategy;
        }
        if after.schedules != before.schedules {
            o.schedules = after.schedules;
        }
        if after.seed != before.seed {
            o.seed = after.seed;
        }
        if after.pct_depth != before.pct_depth {
            o.pct_depth = after.pct_depth;
        }
        if after.depth != before.depth {
            o.depth = after.depth;
        }
        if after.symmetry != before.symmetry {
            o.symmetry = after.symmetry;
        }
        if after.por != before.por {
            o.por = after.por;
        }
        if after.cycles != before.cycles {
            o.cycles = after.cycles;
        }
        if after.max_states != before.max_states {
            o.max_states = Options::from_scenario(&self.scenario).max_states;
        }
        self
    }

    /// BFS/DFS: stop after `states` distinct states. The check is then
    /// incomplete, never ok (`assert_holds` panics with the reason), as
    /// `zkcheck check --max-states` exits 3.
    pub fn max_states(mut self, states: u64) -> Self {
        self.scenario.explore.max_states = Some(states);
        self.options.max_states = usize::try_from(states).unwrap_or(usize::MAX);
        self
    }

    /// Stop once the process uses this many MiB (default: half the
    /// machine's available memory), as `--memory-mb` does: incomplete, never ok.
    pub fn memory_mb(mut self, mib: u64) -> Self {
        self.scenario.explore.memory_mb = Some(mib);
        self
    }

    /// Stop the search (and the shrinking) after this long, as
    /// `--time-limit` does: incomplete, never ok.
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.time_limit = Some(limit);
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
        self.options.strategy = Search::Random;
        self.options.schedules = schedules;
        self
    }

    /// Explore `schedules` PCT schedules of bug depth `depth`.
    pub fn pct(mut self, depth: usize, schedules: u64) -> Self {
        self.options.strategy = Search::Pct;
        self.options.pct_depth = depth;
        self.options.schedules = schedules;
        self
    }

    /// Explore every schedule up to `depth` steps, breadth first (shortest
    /// counterexample), with visited-state dedup.
    pub fn bfs(mut self, depth: usize) -> Self {
        self.options.strategy = Search::Bfs;
        self.options.depth = depth;
        self
    }

    /// BFS/DFS with symmetry reduction or without it (every permutation of
    /// interchangeable clients explored). By default it is on where sound
    /// and off elsewhere, the reason in [`Exploration::symmetry`];
    /// `symmetry(true)` *requires* it: a search that cannot use it panics
    /// naming what blocks it (a recipe without `Client::renamed`, an
    /// invariant or monitor of yours, the `queue` monitor, aimed faults,
    /// two faults that may silence sessions, no two clients alike).
    pub fn symmetry(mut self, on: bool) -> Self {
        self.options.symmetry = on;
        self.symmetry_required = on;
        self
    }

    /// BFS/DFS with partial-order reduction (sleep sets) where sound (the
    /// default) or without it (every interleaving of commuting steps taken).
    pub fn por(mut self, on: bool) -> Self {
        self.options.por = on;
        self
    }

    /// Shrink a counterexample on the scenario as built (`true`), not on a
    /// smaller one (the default, `false`: fewer servers, clients, rounds
    /// or shorter times where the failure tells the same story; its
    /// [`Counterexample::reductions`] say how). Keep it to see the failure
    /// on your exact topology.
    pub fn keep_scenario(mut self, keep: bool) -> Self {
        self.options.keep_scenario = keep;
        self
    }

    /// Like [`Check::bfs`], depth first.
    pub fn dfs(mut self, depth: usize) -> Self {
        self.options.strategy = Search::Dfs;
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
        let memory = self
            .scenario
            .explore
            .memory_mb
            .map_or_else(crate::stop::default_memory_budget, |mib| {
                mib.saturating_mul(1 << 20)
            });
        let progress =
            Progress::hidden().with_stop(crate::stop::Stop::new(self.time_limit, memory));
        let verdict = crate::verdict::run(&self.scenario, &options, &progress);
        if self.symmetry_required && matches!(options.strategy, Search::Bfs | Search::Dfs) {
            if let Some(off) = verdict
                .exploration
                .symmetry
                .as_deref()
                .and_then(|s| s.strip_prefix("off"))
            {
                panic!(
                    "zkcheck: {}: symmetry reduction was required (Check::symmetry(true)) but \
                     is off{off}",
                    self.scenario.recipe
                );
            }
        }
        verdict
    }

    /// Hard checks that no run gave anything to judge (the recipe never
    /// emitted the events they read, [`crate::verdict::unjudged`]): `assert_holds`
    /// refuses to call such a check ok.
    pub fn unjudged(&self, verdict: &Verdict) -> Vec<String> {
        if verdict.counterexample.is_some() {
            return Vec::new();
        }
        crate::contract::unjudged(&self.scenario, &verdict.exploration.figures)
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
        let unjudged = self.unjudged(&verdict);
        if !unjudged.is_empty() {
            panic!(
                "{}: not checked: {}",
                self.scenario.recipe,
                unjudged.join("; ")
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
