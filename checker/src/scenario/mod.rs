//! A scenario: which recipe, how many clients, what they do, how the
//! ensemble is shaped, what may go wrong and which properties are judged.
//!
//! Scenarios come from TOML files (`scenarios/*.toml`, format in
//! `docs/SCENARIOS.md`) or are built in code ([`Scenario::lock`]) by
//! `compare` and the tests. A scenario has one canonical text
//! ([`Scenario::to_canonical`]) so that a replay token can carry it whole.

mod groups;
pub(crate) mod judged;
mod parse;
#[cfg(test)]
mod refusals;
mod timing;

use serde::{Deserialize, Serialize};
use zkrecipes::registry::{self, RecipeInfo};
use zkrecipes::{AnyRecipe, Family, RecipeParams, RecipeSet, Workload};
use zksim::{Config, FaultBudget, Tick};

use crate::invariant::Invariant;
use crate::monitor::{Custom, Property};

pub use crate::aim::{Aims, Role, Target, ROLES};
/// The property catalogue's lookups by the names they had here (a
/// scenario names its checks, and its recipe's family, through them).
pub use crate::monitor::catalogue::{
    applies_to, default_checks, family_name, property_by_name, property_name, ALL_PROPERTIES,
};
pub use groups::{ClientGroup, Member};
pub use parse::{timing_from_file, ScenarioError};
pub use timing::Timing;

/// A validated scenario over the recipes of type `C`: the registered ones
/// ([`AnyRecipe`], what TOML files and the CLI use) or one recipe type of
/// the user's. Fields are public so that code can build variations
/// (`compare` sweeps `clients`); [`Scenario::validate`] checks a hand-built one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scenario<C: zksim::Client = AnyRecipe> {
    /// The scenario's name, for reports and messages.
    pub name: String,
    /// The recipe's name: a registered one (`zkcheck list`) for
    /// [`AnyRecipe`], else [`zkrecipes::Recipe::name`] of `C`; with groups,
    /// the first group's.
    pub recipe: String,
    /// How many clients (with groups, their total).
    pub clients: usize,
    /// `[[clients]]` groups (empty: all `clients` run `recipe` with
    /// `workload`). See [`ClientGroup`].
    pub groups: Vec<ClientGroup>,
    /// The recipe's root node, e.g. `/lock`.
    pub root: String,
    /// What each client does (`[workload]`: rounds, hold and think times);
    /// groups may have their own.
    pub workload: Workload,
    /// The ensemble's shape and clock.
    pub ensemble: Ensemble,
    /// How many faults of each kind a run may inject (`[faults]`).
    pub faults: FaultBudget,
    /// Which client (or role) each fault kind may strike (`[faults.aim]`).
    pub aims: Aims,
    /// Clients whose connect string names one server: `(client, server)` (`[[pin]]`).
    pub pins: Vec<(usize, usize)>,
    /// Nodes that exist before the clients start, with their sequential
    /// suffix counter: `(path, counter)` (`[[parent]]`, S6).
    pub parents: Vec<(String, i32)>,
    /// Properties whose violation fails the run.
    pub hard: Vec<Property>,
    /// Properties only measured (figures), never failing a run.
    pub report: Vec<Property>,
    /// How to explore unless flags say otherwise.
    pub explore: ExploreDefaults,
    /// The timing model of timed runs (`[timing]`; `compare` uses it).
    pub timing: Timing,
    /// Invariants of the user's over the world, judged (hard) after every
    /// step. Code, not data: a scenario file or token never carries them.
    pub always: Vec<Invariant<C>>,
    /// The user's own monitors ([`crate::monitor::Monitor`]), judged (hard)
    /// after every step and at the end. Code too: never in a file or token.
    pub monitors: Vec<Custom>,
}

/// The ensemble's shape and clock (`[ensemble]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ensemble {
    /// How many servers.
    pub servers: usize,
    /// The session timeout the servers grant, in ticks.
    pub session_timeout: Tick,
    /// How long a paused client process stays frozen, in ticks.
    pub pause_ticks: Tick,
    /// Ticks after which a partitioned follower drops its clients (`syncLimit`).
    pub sync_limit: Tick,
    /// The clock at which a run ends (a run the clock cuts while work is left
    /// was not judged at its end).
    pub max_time: Tick,
}

impl Default for Ensemble {
    fn default() -> Self {
        let c = Config::default();
        Ensemble {
            servers: c.servers,
            session_timeout: c.session_timeout,
            pause_ticks: c.pause_ticks,
            sync_limit: c.sync_limit,
            max_time: c.max_time,
        }
    }
}

/// The search a scenario asks for: random, PCT, BFS or DFS (the `strategy`
/// key of `[explore]` and the `--strategy` flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// Seeded random schedules with swarm-chosen fault kinds.
    Random,
    /// Probabilistic concurrency testing: random priorities, d−1 change points.
    Pct,
    /// Exhaustive breadth-first search (shortest counterexample).
    Bfs,
    /// Exhaustive depth-first search.
    Dfs,
}

fn is_on(flag: &bool) -> bool {
    *flag
}

impl Search {
    /// The strategy's word in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Search::Random => "random",
            Search::Pct => "pct",
            Search::Bfs => "bfs",
            Search::Dfs => "dfs",
        }
    }
}

/// How `zkcheck check` explores the scenario unless flags say otherwise (`[explore]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExploreDefaults {
    /// Which search.
    pub strategy: Search,
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
    /// BFS/DFS: merge states that differ only by a permutation of
    /// interchangeable clients, where that is sound (`--no-symmetry`).
    pub symmetry: bool,
    /// BFS/DFS: partial-order reduction by sleep sets, where sound
    /// (`--no-por`). Left out of a written scenario (and so of replay
    /// tokens) when on, the default, so that tokens made before it existed
    /// stay what they were.
    #[serde(skip_serializing_if = "is_on")]
    pub por: bool,
    /// DFS: close cycles and judge each as a lasso (a fair cycle without
    /// progress while a client waits breaks liveness; `--no-cycles`).
    /// Written out only when off, so that tokens of scenarios that keep the
    /// default read as before.
    #[serde(skip_serializing_if = "is_on")]
    pub cycles: bool,
    /// Exhaustive search and PCT: MiB of memory the process may use before
    /// the search stops as incomplete (default: from the machine's memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// BFS/DFS: distinct states at most before the search stops as
    /// incomplete (default: [`crate::explore::exhaustive::MAX_STATES`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_states: Option<u64>,
}

impl Default for ExploreDefaults {
    fn default() -> Self {
        ExploreDefaults {
            strategy: Search::Random,
            schedules: 1000,
            seed: 0,
            max_steps: 5000,
            pct_depth: 3,
            depth: 40,
            symmetry: true,
            por: true,
            cycles: true,
            memory_mb: None,
            max_states: None,
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

    /// [`Scenario::from_file`] for the recipes of type `C` (the file's
    /// `recipe` must be one `C` can build): what a user's own `zkcheck`
    /// binary reads.
    pub fn from_file_as<C: RecipeSet>(
        path: &std::path::Path,
    ) -> Result<Scenario<C>, ScenarioError> {
        parse::from_file(path)
    }

    /// [`Scenario::parse`] for the recipes of type `C` (the text's `recipe`
    /// must be one `C` can build).
    pub fn parse_as<C: RecipeSet>(text: &str, origin: &str) -> Result<Scenario<C>, ScenarioError> {
        parse::from_str(text, origin)
    }

    /// [`Scenario::parse_as`] but for [`Scenario::judges_something`]: for
    /// the scenario of a token that [`crate::check::Check::replay`] will
    /// give back its invariants and monitors (code, which no text carries)
    /// before [`crate::check::Check::run`] applies the rule to the whole.
    pub fn parse_pending_code<C: RecipeSet>(
        text: &str,
        origin: &str,
    ) -> Result<Scenario<C>, ScenarioError> {
        parse::from_str_pending_code(text, origin)
    }

    /// The registry entry of the scenario's recipe.
    pub fn recipe_info(&self) -> Option<&'static RecipeInfo> {
        registry::find(&self.recipe)
    }
}

impl<C: zkrecipes::Recipe + Send + Sync + 'static> Scenario<C> {
    /// The defaults of [`Scenario::lock`] for the recipe type `C`, with
    /// its family's default checks (`default_checks`: an election starts
    /// with `election` hard, a queue with `queue`). Its root is `/lock`,
    /// whatever its family; set fields to change.
    pub fn of_recipe(clients: usize) -> Self {
        let mut s = Self::named(C::name(), clients);
        (s.hard, s.report) = default_checks(C::FAMILY);
        s
    }
}

impl<C: RecipeSet> Scenario<C> {
    /// [`Scenario::of_recipe`]'s defaults for the recipe called `recipe`
    /// of the set `C` (its family's checks; `/lock` as root).
    pub fn for_set(recipe: &str, clients: usize) -> Self {
        let mut s = Self::named(recipe, clients);
        match C::family_of(recipe) {
            Some(family) => (s.hard, s.report) = default_checks(family),
            // An unknown name: `validate` refuses it, naming the known ones.
            None => (s.hard, s.report) = (Vec::new(), Vec::new()),
        }
        s
    }

    fn named(recipe: &str, clients: usize) -> Self {
        let (hard, report) = default_checks(Family::Lock);
        Scenario {
            name: format!("{recipe}-{clients}"),
            recipe: recipe.to_string(),
            clients,
            groups: Vec::new(),
            root: "/lock".to_string(),
            workload: Workload::default(),
            ensemble: Ensemble::default(),
            faults: FaultBudget::default(),
            aims: Aims::default(),
            pins: Vec::new(),
            parents: Vec::new(),
            hard,
            report,
            explore: ExploreDefaults::default(),
            timing: Timing::default(),
            always: Vec::new(),
            monitors: Vec::new(),
        }
    }

    /// The one text of this scenario: every field, in a fixed order.
    /// Parsing it gives back an equal scenario.
    pub fn to_canonical(&self) -> String {
        parse::to_canonical(self)
    }

    /// Checks that a scenario makes sense and judges something: a known
    /// recipe, every number within its documented limit
    /// ([`crate::limits`]), a root node the simulator accepts, checks that
    /// fit the recipe's family (each named once), groups, timing, aimed
    /// faults (at roles the recipe plays), pins and parents that fit, and
    /// hard checks that can fail ([`Scenario::judges_something`]). Files,
    /// tokens and hand-built scenarios ([`crate::check::Check`]) all pass
    /// here.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_for_figures()?;
        self.judges_something().map_err(Invalid::Checks)
    }

    /// The rule for a scenario that is judged (`judged::check_hard`):
    /// at least one hard check (a property, an invariant or a monitor of
    /// the user's), and none that cannot fail for this recipe and client
    /// count. The message names `checks.hard`.
    pub fn judges_something(&self) -> Result<(), String> {
        let user_checks = self.always.len() + self.monitors.len();
        judged::check_hard(&self.hard, user_checks, &judged::Cast::of(self))
    }

    /// [`Scenario::validate`] but for [`Scenario::judges_something`]: for a
    /// scenario run only for its figures (`compare`), which judges nothing
    /// and says so.
    pub fn validate_for_figures(&self) -> Result<(), Invalid> {
        let Some(family) = C::family_of(&self.recipe) else {
            return Err(Invalid::UnknownRecipe {
                name: self.recipe.clone(),
                known: C::names(),
            });
        };
        self.validate_numbers().map_err(Invalid::Limits)?;
        if self.clients == 0 {
            return Err(Invalid::NoClients);
        }
        if !self.groups.is_empty() {
            groups::validate::<C>(&self.groups).map_err(|e| {
                Invalid::Groups(format!("`clients` group {}: {}", e.group + 1, e.message))
            })?;
            let total: usize = self.groups.iter().map(|g| g.count).sum();
            if total != self.clients || self.groups[0].recipe != self.recipe {
                return Err(Invalid::Groups(format!(
                    "`clients` groups add up to {total} clients of first recipe `{}`, but the \
                     scenario says {} of `{}`",
                    self.groups[0].recipe, self.clients, self.recipe
                )));
            }
        }
        if self.ensemble.servers == 0 {
            return Err(Invalid::NoServers);
        }
        if self.explore.max_steps == 0 {
            return Err(Invalid::NoSteps);
        }
        self.validate_root().map_err(Invalid::Limits)?;
        self.validate_checks(family).map_err(Invalid::Limits)?;
        self.validate_faults().map_err(Invalid::Faults)
    }

    /// Every number within its documented limit ([`crate::limits`]).
    fn validate_numbers(&self) -> Result<(), String> {
        use crate::limits as l;
        l::TEXT_LEN.check(self.name.chars().count() as u64)?;
        no_control_characters("name", &self.name)?;
        l::CLIENTS.check_usize(self.clients)?;
        l::SERVERS.check_usize(self.ensemble.servers)?;
        l::ROUNDS.check(u64::from(self.workload.rounds))?;
        l::HOLD_TICKS.check(self.workload.hold_ticks)?;
        l::THINK_TICKS.check(self.workload.think_ticks)?;
        l::SESSION_TIMEOUT.check(self.ensemble.session_timeout)?;
        l::PAUSE_TICKS.check(self.ensemble.pause_ticks)?;
        l::MAX_TIME.check(self.ensemble.max_time)?;
        let f = &self.faults;
        for (name, n) in [
            ("faults.connection_drops", f.connection_drops),
            ("faults.expiries", f.expiries),
            ("faults.pauses", f.pauses),
            ("faults.crashes", f.crashes),
            ("faults.partitions", f.partitions),
            ("faults.kills", f.kills),
        ] {
            l::FAULTS.named(name).check(u64::from(n))?;
        }
        let e = &self.explore;
        l::SCHEDULES.check(e.schedules)?;
        l::check_seed_range(e.seed, e.schedules, "explore.seed")?;
        l::MAX_STEPS.check_usize(e.max_steps)?;
        l::PCT_DEPTH.check_usize(e.pct_depth)?;
        l::DEPTH.check_usize(e.depth)?;
        if let Some(mb) = e.memory_mb {
            l::MEMORY_MB.check(mb)?;
        }
        if let Some(n) = e.max_states {
            l::MAX_STATES.check(n)?;
        }
        self.timing.validate()
    }

    /// The root must be a node path the simulator accepts
    /// ([`zksim::path::validate_path`], ZooKeeper's own rules: no `//`, no
    /// `.` or `..` component, no NUL or control characters) and not `/`
    /// itself: every recipe creates children under it.
    fn validate_root(&self) -> Result<(), String> {
        crate::limits::TEXT_LEN
            .named("root")
            .check(self.root.chars().count() as u64)?;
        let shown = self.root.escape_debug();
        if zksim::path::validate_path(&self.root).is_err() {
            return Err(format!(
                "`root` = \"{shown}\" is not a valid ZooKeeper path (an absolute path like \
                 `/lock`, without empty, `.` or `..` components, trailing `/`, NUL or control \
                 characters)"
            ));
        }
        if self.root == "/" {
            return Err(
                "`root` = \"/\" is not allowed: the recipe needs a node of its own, like `/lock`"
                    .into(),
            );
        }
        if is_system_path(&self.root) {
            return Err(format!(
                "`root` = \"{shown}\" is under `/zookeeper`, ZooKeeper's own node, where clients \
                 may not create nodes; give a node of the recipe's own, like `/lock`"
            ));
        }
        Ok(())
    }

    /// The ensemble's timing, aimed faults, pins and parents fit the
    /// scenario (the message names the field; the parser locates it).
    fn validate_faults(&self) -> Result<(), String> {
        if self.ensemble.sync_limit == 0 {
            return Err("`ensemble.sync_limit` must be at least 1 tick".into());
        }
        self.validate_aims()?;
        for (i, &(client, server)) in self.pins.iter().enumerate() {
            if client >= self.clients {
                return Err(format!(
                    "`pin` client {client} does not exist (clients are 0..{})",
                    self.clients
                ));
            }
            if server >= self.ensemble.servers {
                return Err(format!(
                    "`pin` server {server} does not exist (servers are 0..{})",
                    self.ensemble.servers
                ));
            }
            if self.pins[..i].iter().any(|&(c, _)| c == client) {
                return Err(format!("`pin`: client {client} is pinned twice"));
            }
        }
        for (path, counter) in &self.parents {
            if zksim::path::validate_path(path).is_err() || path == "/" || is_system_path(path) {
                return Err(format!(
                    "`parent` path `{}` must be a valid node path outside `/zookeeper`, not the root",
                    path.escape_debug()
                ));
            }
            if *counter < 0 {
                return Err(format!(
                    "`parent` `{}`: `counter` = {counter} is negative; a sequential suffix \
                     counter runs from 0 to 2147483647",
                    path.escape_debug()
                ));
            }
        }
        if self.faults.partitions > 0 && self.ensemble.servers < 2 {
            return Err(format!(
                "`faults.partitions` = {} needs a follower to cut off, but `ensemble.servers` = {} \
                 (server 0 is the leader)",
                self.faults.partitions, self.ensemble.servers
            ));
        }
        Ok(())
    }

    /// Each check once, and only checks the recipe's family can be judged
    /// by (a queue has no lock holder, so `mutex` on it would hold vacuously).
    fn validate_checks(&self, family: Family) -> Result<(), String> {
        let mut seen: Vec<Property> = Vec::new();
        for (list, p) in self
            .hard
            .iter()
            .map(|&p| ("hard", p))
            .chain(self.report.iter().map(|&p| ("report", p)))
        {
            if seen.contains(&p) {
                return Err(format!(
                    "`checks.{list}` names `{}` again: each check may be listed once, in \
                     `hard` or in `report`",
                    property_name(p)
                ));
            }
            seen.push(p);
            if !applies_to(p, family) {
                let fits = crate::monitor::catalogue::checks_for(family);
                return Err(format!(
                    "`checks.{list}` names `{}`, which does not apply to recipe `{}` (a {} \
                     recipe); checks for it: {}",
                    property_name(p),
                    self.recipe,
                    family_name(family),
                    fits.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Aimed faults must aim at something that exists and have a budget.
    fn validate_aims(&self) -> Result<(), String> {
        let a = &self.aims;
        let kinds = [
            (
                "connection_drops",
                a.connection_drops,
                self.faults.connection_drops,
            ),
            ("expiries", a.expiries, self.faults.expiries),
            ("kills", a.kills, self.faults.kills),
            ("pauses", a.pauses, self.faults.pauses),
            ("crashes", a.crashes, self.faults.crashes),
        ];
        for (kind, aim, budget) in kinds {
            let Some(target) = aim else { continue };
            if budget == 0 {
                return Err(format!(
                    "`faults.aim.{kind}` aims a fault the budget has none of (`faults.{kind}` = 0)"
                ));
            }
            judged::check_aim(kind, target, &judged::Cast::of(self))?;
            if let Target::Index(c) = target {
                if c >= self.clients {
                    return Err(format!(
                        "`faults.aim.{kind}` = {c}: no such client (clients are 0..{})",
                        self.clients
                    ));
                }
            }
            self.check_group_aim(kind, target)?;
        }
        if let Some(target) = a.partitions {
            if self.faults.partitions == 0 {
                return Err(
                    "`faults.aim.partitions` aims a fault the budget has none of \
                            (`faults.partitions` = 0)"
                        .into(),
                );
            }
            self.check_group_aim("partitions", target)?;
            judged::check_aim("partitions", target, &judged::Cast::of(self))?;
            if let Target::Index(s) = target {
                if s == 0 || s >= self.ensemble.servers {
                    return Err(format!(
                        "`faults.aim.partitions` = {s}: not a follower (followers are 1..{})",
                        self.ensemble.servers
                    ));
                }
            }
        }
        Ok(())
    }

    /// The recipe's family (lock if the recipe is unknown, which
    /// [`Scenario::validate`] rules out).
    pub fn family(&self) -> Family {
        C::family_of(&self.recipe).unwrap_or(Family::Lock)
    }

    /// Client `client` of the run, built as its group's recipe (`None` if
    /// `C` has no recipe of that name, which [`Scenario::validate`] rules out).
    pub(crate) fn build_client(&self, client: usize) -> Option<C> {
        C::build(self.member(client).recipe, &self.params(client))
    }

    /// The simulator configuration this scenario asks for.
    pub fn config(&self) -> Config {
        Config {
            servers: self.ensemble.servers,
            session_timeout: self.ensemble.session_timeout,
            pause_ticks: self.ensemble.pause_ticks,
            sync_limit: self.ensemble.sync_limit,
            max_time: self.ensemble.max_time,
            faults: self.faults,
            pins: self.pins.clone(),
            parents: self.parents.clone(),
        }
    }

    /// A group aim must index one of the scenario's role names.
    fn check_group_aim(&self, kind: &str, target: Target) -> Result<(), String> {
        match target {
            Target::Group(g) if g >= self.roles().len() => Err(format!(
                "`faults.aim.{kind}` names group role #{g}, but the scenario has {} role name(s)",
                self.roles().len()
            )),
            _ => Ok(()),
        }
    }

    /// Each client's role, as an index into [`Scenario::roles`] (what a
    /// group aim is matched against).
    pub(crate) fn client_roles(&self) -> Vec<usize> {
        let roles = self.roles();
        (0..self.clients)
            .map(|c| {
                let role = self.member(c).role;
                roles.iter().position(|r| *r == role).unwrap_or(0)
            })
            .collect()
    }

    /// What client `client` is: its recipe, role and workload.
    pub fn member(&self, client: usize) -> Member<'_> {
        groups::member(&self.groups, client).unwrap_or(Member {
            group: 0,
            recipe: &self.recipe,
            role: &self.recipe,
            workload: self.workload,
        })
    }

    /// The clients whose role is `role`, in client order.
    pub fn clients_in_role(&self, role: &str) -> Vec<usize> {
        (0..self.clients)
            .filter(|&c| self.member(c).role == role)
            .collect()
    }

    /// The scenario's role names, each once, in client order.
    pub fn roles(&self) -> Vec<&str> {
        groups::role_names(&self.groups, &self.recipe)
    }

    /// What client `client` is built from: its index, group, role and
    /// workload, the root, and the session timeout the ensemble grants.
    pub fn params(&self, client: usize) -> RecipeParams {
        let member = self.member(client);
        RecipeParams {
            client,
            clients: self.clients,
            root: self.root.clone(),
            workload: member.workload,
            group: member.group,
            role: member.role.to_string(),
            session_timeout: self.ensemble.session_timeout.clamp(
                zksim::world::MIN_SESSION_TIMEOUT,
                zksim::world::MAX_SESSION_TIMEOUT,
            ),
        }
    }
}

/// What is wrong with a hand-built scenario ([`Scenario::validate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// The recipe set has no recipe of that name.
    UnknownRecipe {
        /// The name asked for.
        name: String,
        /// The names the recipe set has, for the message.
        known: Vec<&'static str>,
    },
    /// A scenario needs at least one client.
    NoClients,
    /// `[[clients]]` groups that do not fit (the message says how).
    Groups(String),
    /// An ensemble needs at least one server.
    NoServers,
    /// `root` is not an absolute node path.
    BadRoot(String),
    /// `explore.max_steps` is 0: a run would check nothing.
    NoSteps,
    /// Timing, aimed faults, pins or parents that do not fit (the message
    /// names the field: `faults.aim.…`, `pin`, `parent`, `ensemble.…`).
    Faults(String),
    /// A number past its documented limit, a root the simulator refuses, or
    /// checks that do not fit the recipe (the message names the field).
    Limits(String),
    /// Hard checks that judge nothing: none, or one that cannot fail for
    /// this recipe and client count ([`Scenario::judges_something`]).
    Checks(String),
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::UnknownRecipe { name, known } => write!(
                f,
                "unknown recipe `{name}`; known recipes: {}",
                known.join(", ")
            ),
            Invalid::NoClients => write!(f, "`clients` must be at least 1"),
            Invalid::Groups(message) => write!(f, "{message}"),
            Invalid::NoServers => write!(f, "`ensemble.servers` must be at least 1"),
            Invalid::BadRoot(root) => write!(
                f,
                "`root` must be an absolute node path like `/lock`, not `{root}`"
            ),
            Invalid::NoSteps => write!(f, "`explore.max_steps` must be at least 1"),
            Invalid::Faults(message) | Invalid::Limits(message) | Invalid::Checks(message) => {
                write!(f, "{message}")
            }
        }
    }
}

impl std::error::Error for Invalid {}

/// Whether `path` is `/zookeeper` or under it: ZooKeeper's own subtree,
/// where clients create nothing.
fn is_system_path(path: &str) -> bool {
    path == "/zookeeper" || path.starts_with("/zookeeper/")
}

/// A name or role is printed in summaries, traces and the viewer: a control
/// character in it could move the cursor, colour the terminal or fake a
/// line of output, so it is refused (with its position, escaped).
pub(crate) fn no_control_characters(field: &str, text: &str) -> Result<(), String> {
    match text.chars().position(char::is_control) {
        None => Ok(()),
        Some(at) => Err(format!(
            "`{field}` = \"{}\" holds a control character (character {}): names are printed \
             in summaries and traces, so only printable characters are allowed",
            text.escape_debug(),
            at + 1
        )),
    }
}
