//! Exhaustive search of every schedule up to a depth, with visited-state
//! dedup by [`SystemState::fingerprint`].
//!
//! BFS finds a shortest counterexample (fewest steps) and counts distinct
//! states level by level; it runs on `jobs` threads with the same result
//! on any number of them. DFS goes deep first and keeps, per state, the
//! shallowest depth it was reached at, re-expanding a state reached again
//! higher up, so that the depth bound does not hide states.
//!
//! Storage follows the established explicit-state checkers (stateright's
//! `BfsChecker`, TLC, SPIN): the visited set holds only fingerprints, each
//! with its parent's fingerprint, and a counterexample's schedule is
//! rebuilt by replaying from the root, at each step taking the first
//! enabled event that reaches the next fingerprint (`trace`). States
//! live only on the frontier (BFS keeps them taken apart into shared
//! parts, `frontier`), and there they carry only what a verdict needs
//! ([`SystemState::for_search`]: no measured-only monitors; the data trees
//! shared copy-on-write between a state and its children).
//!
//! [`SystemState::fingerprint`]: crate::state::SystemState::fingerprint
//! [`SystemState::for_search`]: crate::state::SystemState::for_search

mod bfs;
mod dfs;
mod expand;
mod frontier;
mod path;
pub(crate) mod por;
pub(crate) mod symmetry;

use std::collections::HashMap;

use nohash_hasher::BuildNoHashHasher;

use zkrecipes::RecipeSet;

use super::{Exploration, Explorer};
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::state::SystemState;

/// Search order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Breadth first: level by level, so the first violation found has a
    /// shortest schedule; may run on several threads.
    Bfs,
    /// Depth first: one path at a time, little memory besides the visited set;
    /// the only order that can close cycles (lassos).
    Dfs,
}

/// Exhaustive exploration up to `depth` steps.
pub struct Exhaustive {
    /// Breadth or depth first.
    pub order: Order,
    /// The longest schedule explored; states at this depth are not expanded
    /// (the search is then incomplete if any were left).
    pub depth: usize,
    /// Distinct states at most; the search stops (incomplete) past it, so
    /// that a scenario too big for exhaustive search cannot eat the machine.
    pub max_states: usize,
    /// BFS: worker threads (≥ 1). Never changes results. DFS is sequential.
    pub jobs: usize,
    /// Merge states that differ only by a permutation of interchangeable
    /// clients, where that is sound (`symmetry`). Verdicts do not
    /// change; state counts drop.
    pub symmetry: bool,
    /// Partial-order reduction by sleep sets where sound (`por`): fewer
    /// steps taken, the same states, verdicts and shortest counterexamples.
    /// A search that looks for cycles must turn it off (sleep sets keep
    /// every state, not every cycle).
    pub por: bool,
    /// Under symmetry, key each state by its orbit's least fingerprint
    /// (`symmetry::Symmetry::exact`): a test oracle, slow past 3 clients.
    pub exact_symmetry: bool,
    /// DFS: close cycles and judge them as lassos (a fair cycle without
    /// progress while a client waits is a liveness violation; see
    /// [`crate::lasso`]). Only where liveness is a hard property.
    pub cycles: bool,
}

/// The default state cap. A visited state costs a fingerprint and a parent
/// fingerprint (~20–35 bytes with the table's slack, 8 more under
/// partial-order reduction); BFS's frontier keeps a row of part indices a
/// state (~30 bytes) and tables of the distinct parts.
pub const MAX_STATES: usize = 20_000_000;

impl Exhaustive {
    /// Breadth-first search to `depth`, with every reduction that is sound on
    /// (symmetry, sleep sets), one thread and the default state cap.
    pub fn bfs(depth: usize) -> Self {
        Exhaustive {
            order: Order::Bfs,
            depth,
            max_states: MAX_STATES,
            jobs: 1,
            symmetry: true,
            por: true,
            exact_symmetry: false,
            cycles: false,
        }
    }
    /// Depth-first search to `depth`, with the same defaults as
    /// [`Exhaustive::bfs`] and no cycle check (turn it on with
    /// [`Exhaustive::with_cycles`]).
    pub fn dfs(depth: usize) -> Self {
        Exhaustive {
            order: Order::Dfs,
            depth,
            max_states: MAX_STATES,
            jobs: 1,
            symmetry: true,
            por: true,
            exact_symmetry: false,
            cycles: true,
        }
    }
    /// The same search with the cycle check on or off (DFS only).
    pub fn with_cycles(mut self, cycles: bool) -> Self {
        self.cycles = cycles;
        self
    }
    /// The same search on `jobs` threads (BFS only; results do not change).
    pub fn with_jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }
    /// The same search stopping (incomplete) at `max_states` distinct states.
    pub fn with_max_states(mut self, max_states: usize) -> Self {
        self.max_states = max_states.max(1);
        self
    }
    /// The same search with symmetry reduction on (where sound) or off.
    pub fn with_symmetry(mut self, symmetry: bool) -> Self {
        self.symmetry = symmetry;
        self
    }

    /// The same search with partial-order reduction on (where sound) or off.
    pub fn with_por(mut self, por: bool) -> Self {
        self.por = por;
        self
    }

    /// The partial-order reduction this search uses for `scenario`,
    /// recording in `result` whether it is on and, if not, why.
    /// `cycles`: whether this search checks cycles, which needs every
    /// step of every state on the path (sleep sets keep every state, not
    /// every cycle), so the reduction is off then.
    fn por_of<C: RecipeSet>(
        &self,
        scenario: &Scenario<C>,
        root: &SystemState<C>,
        cycles: bool,
        result: &mut Exploration,
    ) -> Option<por::Por> {
        if !self.por {
            result.por = Some("off (turned off)".into());
            return None;
        }
        if cycles {
            result.por = Some("off (the cycle check needs every step)".into());
            return None;
        }
        match por::decide(scenario, root) {
            Ok(p) => {
                result.por = Some(format!("on ({})", p.describe()));
                Some(p)
            }
            Err(why) => {
                result.por = Some(format!("off ({why})"));
                None
            }
        }
    }

    /// The symmetry this search uses for `scenario`, recording in `result`
    /// whether it is on and, if not, why.
    fn symmetry_of<C: RecipeSet>(
        &self,
        scenario: &Scenario<C>,
        root: &SystemState<C>,
        result: &mut Exploration,
    ) -> Option<symmetry::Symmetry> {
        if !self.symmetry {
            result.symmetry = Some("off (turned off)".into());
            return None;
        }
        match symmetry::decide(scenario, root) {
            Ok(s) => {
                let s = if self.exact_symmetry { s.exact() } else { s };
                result.symmetry = Some(format!("on ({})", s.describe()));
                Some(s)
            }
            Err(why) => {
                result.symmetry = Some(format!("off ({why})"));
                None
            }
        }
    }
}

impl Exhaustive {
    /// Whether this search checks cycles from `root`, recording in
    /// `result` whether it does and, if not, why.
    fn cycles_of<C: RecipeSet>(&self, root: &SystemState<C>, result: &mut Exploration) -> bool {
        let (on, why) = if self.order != Order::Dfs {
            (false, "off (DFS only)")
        } else if !self.cycles {
            (false, "off (turned off)")
        } else if !root.monitors.judges_liveness() {
            (false, "off (liveness is not a hard property)")
        } else {
            (
                true,
                "on (a fair cycle without progress is a liveness violation)",
            )
        };
        result.cycle_check = Some(why.into());
        on
    }
}

/// Fingerprint → what the search keeps about that state. Fingerprints are
/// already well mixed, so the table uses them as their own hash; only
/// membership and lookups are read, never iteration order.
type Visited<V> = HashMap<u64, V, BuildNoHashHasher<u64>>;

impl<C: RecipeSet> Explorer<C> for Exhaustive {
    fn explore(&self, scenario: &Scenario<C>, progress: &Progress) -> Exploration {
        match self.order {
            Order::Bfs => bfs::explore(self, scenario, progress),
            Order::Dfs => dfs::explore(self, scenario, progress),
        }
    }
}
