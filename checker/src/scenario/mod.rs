//! A scenario: which recipe, how many clients, what they do, how the
//! ensemble is shaped, what may go wrong and which properties are judged.
//!
//! Scenarios come from TOML files (`scenarios/*.toml`, format in
//! `docs/SCENARIOS.md`) or are built in code ([`Scenario::lock`]) by
//! `compare` and the tests. A scenario has one canonical text
//! ([`Scenario::to_canonical`]) so that a replay token can carry it whole.

mod parse;

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};
use zkrecipes::registry::{self, RecipeInfo};
use zkrecipes::{AnyRecipe, Family, RecipeParams, RecipeSet, Workload};
use zksim::{Config, FaultBudget, Tick};

use crate::monitor::Property;

pub use parse::ScenarioError;

/// A validated scenario over the recipes of type `C`: the registered ones
/// ([`AnyRecipe`], what TOML files and the CLI use) or one recipe type of
/// the user's. Fields are public so that code can build variations
/// (`compare` sweeps `clients`); [`Scenario::validate`] checks a hand-built one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scenario<C = AnyRecipe> {
    pub name: String,
    /// The recipe's name: a registered one (`zkcheck list`) for
    /// [`AnyRecipe`], else [`zkrecipes::Recipe::name`] of `C`.
    pub recipe: String,
    pub clients: usize,
    /// The recipe's root node, e.g. `/lock`.
    pub root: String,
    pub workload: Workload,
    pub ensemble: Ensemble,
    pub faults: FaultBudget,
    /// Properties whose violation fails the run.
    pub hard: Vec<Property>,
    /// Properties only measured (figures), never failing a run.
    pub report: Vec<Property>,
    pub explore: ExploreDefaults,
    /// The recipe type clients are built as (a scenario is a typed value:
    /// its runs' worlds are `World<C>`).
    recipes: PhantomData<fn() -> C>,
}

/// The ensemble's shape and clock (`[ensemble]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ensemble {
    pub servers: usize,
    pub session_timeout: Tick,
    pub pause_ticks: Tick,
    pub max_time: Tick,
}

impl Default for Ensemble {
    fn default() -> Self {
        let c = Config::default();
        Ensemble {
            servers: c.servers,
            session_timeout: c.session_timeout,
            pause_ticks: c.pause_ticks,
            max_time: c.max_time,
        }
    }
}

/// Which exploration strategy to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StrategyKind {
    /// Seeded random schedules with swarm-chosen fault kinds.
    Random,
    /// Probabilistic concurrency testing: random priorities, d−1 change points.
    Pct,
    /// Exhaustive breadth-first search (shortest counterexample).
    Bfs,
    /// Exhaustive depth-first search.
    Dfs,
}

impl StrategyKind {
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Pct => "pct",
            StrategyKind::Bfs => "bfs",
            StrategyKind::Dfs => "dfs",
        }
    }
}

/// How `zkcheck check` explores the scenario unless flags say otherwise (`[explore]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExploreDefaults {
    pub strategy: StrategyKind,
    /// Random/PCT: how many seeded schedules to run.
    pub schedules: u64,
    /// First seed of the sweep; seeds are `seed, seed+1, …`.
    pub seed: u64,
    /// A run stops after this many steps (then end-of-run checks are judged).
    pub max_steps: usize,
    /// PCT: the bug depth d (d−1 priority change points).
    pub pct_depth: usize,
    /// BFS/DFS: the longest schedule explored.
    pub depth: usize,
}

impl Default for ExploreDefaults {
    fn default() -> Self {
        ExploreDefaults {
            strategy: StrategyKind::Random,
            schedules: 1000,
            seed: 0,
            max_steps: 5000,
            pct_depth: 3,
            depth: 40,
        }
    }
}

impl Scenario {
    /// A lock scenario with defaults: `clients` clients of `recipe` on `/lock`,
    /// one round each, a 3-server ensemble, no faults, `mutex` hard and
    /// `fifo`, `herd`, `liveness` reported. The recipe is not checked here;
    /// [`Scenario::validate`] does.
    pub fn lock(recipe: &str, clients: usize) -> Self {
        Scenario::named(recipe, clients)
    }

    /// Read and validate a scenario file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, ScenarioError> {
        parse::from_file(path)
    }

    /// Parse and validate scenario text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ScenarioError> {
        parse::from_str(text, origin)
    }

    /// [`Scenario::parse`] for the recipes of type `C` (the text's `recipe`
    /// must be one `C` can build).
    pub fn parse_as<C: RecipeSet>(text: &str, origin: &str) -> Result<Scenario<C>, ScenarioError> {
        parse::from_str(text, origin)
    }

    /// The registry entry of the scenario's recipe.
    pub fn recipe_info(&self) -> Option<&'static RecipeInfo> {
        registry::find(&self.recipe)
    }
}

impl<C: zkrecipes::Recipe + Send + Sync + 'static> Scenario<C> {
    /// The lock-scenario defaults of [`Scenario::lock`] for the recipe type
    /// `C` (its root is `/lock`, whatever its family; set fields to change).
    pub fn of_recipe(clients: usize) -> Self {
        let mut s = Self::named(C::name(), clients);
        if C::FAMILY != Family::Lock && C::FAMILY != Family::RwLock {
            s.hard = Vec::new();
            s.report = Vec::new();
        }
        s
    }
}

impl<C: RecipeSet> Scenario<C> {
    fn named(recipe: &str, clients: usize) -> Self {
        Scenario {
            name: format!("{recipe}-{clients}"),
            recipe: recipe.to_string(),
            clients,
            root: "/lock".to_string(),
            workload: Workload::default(),
            ensemble: Ensemble::default(),
            faults: FaultBudget::default(),
            hard: vec![Property::MutualExclusion],
            report: vec![Property::Fifo, Property::NoHerd, Property::Liveness],
            explore: ExploreDefaults::default(),
            recipes: PhantomData,
        }
    }

    /// The one text of this scenario: every field, in a fixed order.
    /// Parsing it gives back an equal scenario.
    pub fn to_canonical(&self) -> String {
        parse::to_canonical(self)
    }

    /// Checks that a hand-built scenario makes sense (known recipe, at
    /// least one client and one server, an absolute root).
    pub fn validate(&self) -> Result<(), String> {
        if C::family_of(&self.recipe).is_none() {
            return Err(format!(
                "unknown recipe `{}`; known recipes: {}",
                self.recipe,
                C::names().join(", ")
            ));
        }
        if self.clients == 0 {
            return Err("`clients` must be at least 1".into());
        }
        if self.ensemble.servers == 0 {
            return Err("`ensemble.servers` must be at least 1".into());
        }
        if !self.root.starts_with('/') || self.root.len() < 2 || self.root.ends_with('/') {
            return Err(format!(
                "`root` must be an absolute node path like `/lock`, not `{}`",
                self.root
            ));
        }
        if self.explore.max_steps == 0 {
            return Err("`explore.max_steps` must be at least 1".into());
        }
        Ok(())
    }

    /// The recipe's family (lock if the recipe is unknown, which
    /// [`Scenario::validate`] rules out).
    pub fn family(&self) -> Family {
        C::family_of(&self.recipe).unwrap_or(Family::Lock)
    }

    /// Client `client` of the run, built as the scenario's recipe (`None`
    /// if `C` has no recipe of that name, which [`Scenario::validate`] rules out).
    pub fn build_client(&self, client: usize) -> Option<C> {
        C::build(&self.recipe, &self.params(client))
    }

    /// The simulator configuration this scenario asks for.
    pub fn config(&self) -> Config {
        Config {
            servers: self.ensemble.servers,
            session_timeout: self.ensemble.session_timeout,
            pause_ticks: self.ensemble.pause_ticks,
            max_time: self.ensemble.max_time,
            faults: self.faults,
        }
    }

    /// What client `client` is built from.
    pub fn params(&self, client: usize) -> RecipeParams {
        RecipeParams {
            client,
            clients: self.clients,
            root: self.root.clone(),
            workload: self.workload,
        }
    }
}

/// Every registered recipe name, comma-separated (for error messages).
pub fn known_recipes() -> String {
    AnyRecipe::names().join(", ")
}

/// The name a scenario uses for a property.
pub fn property_name(p: Property) -> &'static str {
    match p {
        Property::MutualExclusion => "mutex",
        Property::FencedExclusion => "fenced-mutex",
        Property::Fifo => "fifo",
        Property::NoHerd => "herd",
        Property::Liveness => "liveness",
        Property::NoLeaks => "leaks",
        Property::QueueSafety => "queue",
        Property::Election => "election",
    }
}

/// Every property, in the order scenarios list them.
pub const ALL_PROPERTIES: [Property; 8] = [
    Property::MutualExclusion,
    Property::FencedExclusion,
    Property::Fifo,
    Property::NoHerd,
    Property::Liveness,
    Property::NoLeaks,
    Property::QueueSafety,
    Property::Election,
];

/// The property a scenario name stands for.
pub fn property_by_name(name: &str) -> Option<Property> {
    ALL_PROPERTIES
        .into_iter()
        .find(|&p| property_name(p) == name)
}
