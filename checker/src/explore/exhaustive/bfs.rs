//! Level-synchronous breadth-first search, parallel and deterministic.
//!
//! Each level is kept compactly ([`super::frontier`]) and expanded in
//! fixed-size chunks of states (the chunk size never depends on the
//! thread count). The states of a chunk are expanded in parallel against
//! the visited set as it stood before the chunk, which already drops most
//! duplicate children before they are kept; then the chunk's results are
//! merged one state after another, in frontier order, exactly as a
//! sequential BFS would take them. So the visited set, the next level's
//! order, every count and the (first, hence shortest) counterexample are
//! the same on any number of threads.
//!
//! With partial-order reduction ([`super::por`]) each visited state keeps
//! the sleep set it is expanded with. A state reached again in the level
//! it was first reached in, before it is expanded, narrows its sleep set
//! to the intersection; one reached again after that (a later level, or
//! the level being expanded) with steps awake that were asleep is queued
//! once more for those steps only. Both happen at merge time, in frontier
//! order, so results still do not depend on the thread count.

use std::collections::hash_map::Entry;

use rayon::prelude::*;
use zkrecipes::RecipeSet;

use super::expand::{expand, sleep_mask, Child, Expansion, Queued, Reduction, Scratch};
use super::frontier::Frontier;
use super::path::{failure_at_end, failure_by_step};
use super::por::Por;
use super::symmetry::Keying;
use super::{Exhaustive, Visited};
use crate::explore::Exploration;
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::state::SystemState;
use crate::stop::StopReason;

/// States expanded before their results are merged. A chunk's children
/// are whole states until merged into the (compact) next level, so this
/// bounds what the search holds beyond its tables: on the reference BFS,
/// chunks of 2,048 held ~16 MB of children at a time, chunks of 128 hold
/// ~1 MB and run faster too (they stay in cache). Results do not depend
/// on it: a child kept against an older visited set is checked again at
/// merge time.
const CHUNK: usize = 128;

pub(super) fn explore<C: RecipeSet>(
    search: &Exhaustive,
    scenario: &Scenario<C>,
    progress: &Progress,
) -> Exploration {
    let pool = (search.jobs > 1)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(search.jobs)
                .build()
                .ok()
        })
        .flatten();
    let mut result = Exploration::default();
    let root = Box::new(SystemState::<C>::for_search(scenario));
    let symmetry = search.symmetry_of(scenario, &root, &mut result);
    let keying = Keying(symmetry.as_ref());
    let por = search.por_of(scenario, &root, false, &mut result);
    let setup = Setup {
        search,
        scenario,
        progress,
        pool: pool.as_ref(),
        keying,
        por: por.as_ref(),
    };
    match por {
        Some(_) => search_from::<C, (u64, u64)>(setup, root, result),
        None => search_from::<C, u64>(setup, root, result),
    }
}

/// What a search runs with, fixed once the root is decided.
struct Setup<'a, C: RecipeSet> {
    search: &'a Exhaustive,
    scenario: &'a Scenario<C>,
    progress: &'a Progress,
    pool: Option<&'a rayon::ThreadPool>,
    keying: Keying<'a>,
    por: Option<&'a Por>,
}

/// What the visited set keeps per state: its parent's key and, under
/// partial-order reduction, the sleep mask it was expanded with.
trait Kept: Copy + Send + Sync {
    fn new(parent: u64, mask: u64) -> Self;
    fn parent(self) -> u64;
    fn mask(self) -> u64;
    fn set_mask(&mut self, mask: u64);
}

/// Without partial-order reduction every mask is 0: the parent alone,
/// 8 bytes a state fewer (a third of the visited table).
impl Kept for u64 {
    fn new(parent: u64, mask: u64) -> Self {
        debug_assert_eq!(mask, 0);
        parent
    }
    fn parent(self) -> u64 {
        self
    }
    fn mask(self) -> u64 {
        0
    }
    fn set_mask(&mut self, mask: u64) {
        debug_assert_eq!(mask, 0);
    }
}

impl Kept for (u64, u64) {
    fn new(parent: u64, mask: u64) -> Self {
        (parent, mask)
    }
    fn parent(self) -> u64 {
        self.0
    }
    fn mask(self) -> u64 {
        self.1
    }
    fn set_mask(&mut self, mask: u64) {
        self.1 = mask;
    }
}

/// The search from `root`, level by level, keeping `K` per visited state.
fn search_from<C: RecipeSet, K: Kept>(
    setup: Setup<'_, C>,
    root: Box<SystemState<C>>,
    mut result: Exploration,
) -> Exploration {
    let Setup {
        search,
        scenario,
        progress,
        pool,
        keying,
        por,
    } = setup;
    let root_fp = keying.key(&root);
    // Key → what is kept of it; the root is its own parent.
    let mut visited: Visited<K> = Visited::default();
    visited.insert(root_fp, K::new(root_fp, 0));
    let mut level = Frontier::new(por.is_some());
    level.push(Queued {
        model: root,
        key: root_fp,
        sleep: Vec::new(),
        only: None,
    });
    let mut scratch = Scratch::default();
    let mut depth = 0;

    'search: while !level.is_empty() {
        let mut next_level = Frontier::new(por.is_some());
        // Key → place in `next_level` of the states first reached in this
        // level (not expanded yet: their sleep sets may still narrow).
        let mut queued: Visited<usize> = Visited::default();
        let mut start = 0;
        while start < level.len() {
            let chunk = start..level.len().min(start + CHUNK);
            start = chunk.end;
            let current = &level;
            let seen = &visited;
            let keep = |_: &SystemState<C>, key: u64, sleep: u64| {
                let wanted = match seen.get(&key) {
                    None => true,
                    Some(kept) => por.is_some() && kept.mask() & !sleep != 0,
                };
                wanted.then_some(())
            };
            let run = |i: usize, scratch: &mut Scratch| {
                let node = current.get(i);
                let reduction = Reduction {
                    por,
                    sleep: &node.sleep,
                    only: node.only,
                };
                let expansion = expand(
                    node.model,
                    reduction,
                    depth,
                    search.depth,
                    scratch,
                    keying,
                    keep,
                );
                (node.key, expansion)
            };
            let expanded: Vec<(u64, Expansion<C>)> = match pool {
                Some(pool) => pool.install(|| {
                    chunk
                        .into_par_iter()
                        .map_init(Scratch::default, |scratch, i| run(i, scratch))
                        .collect()
                }),
                None => chunk.into_iter().map(|i| run(i, &mut scratch)).collect(),
            };
            let count = expanded.len();
            for (i, (fp, expansion)) in expanded.into_iter().enumerate() {
                let parent = |fp: u64| visited[&fp].parent();
                match expansion {
                    Expansion::End(verdict, figures, clock_cut) => {
                        result.schedules += 1;
                        result.runs_clock_cut += u64::from(clock_cut);
                        if let Err(violation) = verdict {
                            result.failure =
                                Some(failure_at_end(scenario, keying, fp, parent, violation));
                            break 'search;
                        }
                        result.figures.merge(&figures);
                    }
                    Expansion::Cut => result.truncated += 1,
                    Expansion::Children {
                        children,
                        events,
                        violation,
                    } => {
                        result.events += events;
                        if let Some((event, violation)) = violation {
                            result.failure = Some(failure_by_step(
                                scenario, keying, fp, parent, event, violation,
                            ));
                            break 'search;
                        }
                        for child in children {
                            merge(child, fp, &mut visited, &mut queued, &mut next_level);
                        }
                    }
                }
                progress.set_states(visited.len() as u64);
                if visited.len() >= search.max_states {
                    // Everything queued and not merged stays unexpanded.
                    let unexpanded = (count - i - 1) + (level.len() - start) + next_level.len();
                    result.truncated += unexpanded as u64;
                    result.state_cap_hit = true;
                    let cap = StopReason::StateCap(search.max_states);
                    progress.stop().record(cap.clone());
                    result.ended_by = Some(cap);
                    break 'search;
                }
                if let Some(reason) = progress.stopped() {
                    let unexpanded = (count - i - 1) + (level.len() - start) + next_level.len();
                    result.truncated += unexpanded as u64;
                    result.ended_by = Some(reason);
                    break 'search;
                }
            }
        }
        level = next_level;
        depth += 1;
    }
    result.distinct_states = Some(visited.len() as u64);
    result
}

/// Take `child` (of the state keyed `parent`) into the search: a new state
/// joins the next level; a state seen before with steps now awake that
/// were asleep narrows its kept sleep set and either narrows the sleep set
/// of its queued copy (not expanded yet) or is queued again for those
/// steps only. Without partial-order reduction every sleep mask is 0, so
/// only new states are taken.
fn merge<C: zkrecipes::RecipeSet, K: Kept>(
    child: Child<C, ()>,
    parent: u64,
    visited: &mut Visited<K>,
    queued: &mut Visited<usize>,
    next_level: &mut Frontier<C>,
) {
    let mask = sleep_mask(&child.sleep);
    let mut node = Queued {
        model: child.model,
        key: child.key,
        sleep: child.sleep,
        only: None,
    };
    match visited.entry(node.key) {
        Entry::Vacant(slot) => {
            slot.insert(K::new(parent, mask));
            queued.insert(node.key, next_level.len());
            next_level.push(node);
        }
        Entry::Occupied(mut slot) => {
            let kept = slot.get().mask();
            let woken = kept & !mask;
            if woken == 0 {
                return;
            }
            slot.get_mut().set_mask(kept & mask);
            match queued.get(&node.key) {
                Some(&at) => next_level.narrow_sleep(at, mask),
                None => {
                    node.only = Some(woken);
                    next_level.push(node);
                }
            }
        }
    }
}
