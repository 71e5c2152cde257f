//! Level-synchronous breadth-first search, parallel and deterministic.
//!
//! Each level is expanded in fixed-size chunks of states (the chunk size
//! never depends on the thread count). The states of a chunk are expanded
//! in parallel against the visited set as it stood before the chunk, which
//! already drops most duplicate children before they are kept; then the
//! chunk's results are merged one state after another, in frontier order,
//! exactly as a sequential BFS would take them. So the visited set, the
//! next level's order, every count and the (first, hence shortest)
//! counterexample are the same on any number of threads.
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
use super::symmetry::Keying;
use super::trace::{failure_at_end, failure_by_step};
use super::{Exhaustive, Visited};
use crate::explore::Exploration;
use crate::model::{Model, SharedParts};
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::stop::StopReason;

/// States expanded before their results are merged.
const CHUNK: usize = 2048;

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
    let root = Box::new(Model::<C>::for_search(scenario));
    let symmetry = search.symmetry_of(scenario, &root, &mut result);
    let keying = Keying(symmetry.as_ref());
    let por = search.por_of(scenario, &root, false, &mut result);
    let por = por.as_ref();
    let root_fp = keying.key(&root);
    // Key → (parent key, sleep mask); the root is its own parent.
    let mut visited: Visited<(u64, u64)> = Visited::default();
    visited.insert(root_fp, (root_fp, 0));
    let mut level: Vec<Queued<C>> = vec![Queued {
        model: root,
        key: root_fp,
        sleep: Vec::new(),
        only: None,
    }];
    let mut scratch = Scratch::default();
    let mut depth = 0;
    // Parts shared among the states of the next level (cleared per level:
    // only states kept at the same time gain from sharing).
    let mut sharing = SharedParts::<C>::default();

    'search: while !level.is_empty() {
        let mut next_level: Vec<Queued<C>> = Vec::new();
        // Key → place in `next_level` of the states first reached in this
        // level (not expanded yet: their sleep sets may still narrow).
        let mut queued: Visited<usize> = Visited::default();
        sharing.clear();
        let mut pending = level.into_iter();
        while pending.len() > 0 {
            let chunk: Vec<Queued<C>> = pending.by_ref().take(CHUNK).collect();
            let seen = &visited;
            let keep = |_: &Model<C>, key: u64, sleep: u64| {
                let wanted = match seen.get(&key) {
                    None => true,
                    Some(&(_, kept)) => por.is_some() && kept & !sleep != 0,
                };
                wanted.then_some(())
            };
            let run = |node: Queued<C>, scratch: &mut Scratch| {
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
            let expanded: Vec<(u64, Expansion<C>)> = match &pool {
                Some(pool) => pool.install(|| {
                    chunk
                        .into_par_iter()
                        .map_init(Scratch::default, |scratch, node| run(node, scratch))
                        .collect()
                }),
                None => chunk
                    .into_iter()
                    .map(|node| run(node, &mut scratch))
                    .collect(),
            };
            let count = expanded.len();
            for (i, (fp, expansion)) in expanded.into_iter().enumerate() {
                let parent = |fp: u64| visited[&fp].0;
                match expansion {
                    Expansion::End(verdict, figures) => {
                        result.schedules += 1;
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
                            merge(
                                child,
                                fp,
                                &mut visited,
                                &mut queued,
                                &mut next_level,
                                &mut sharing,
                            );
                        }
                    }
                }
                progress.set_states(visited.len() as u64);
                if visited.len() >= search.max_states {
                    // Everything queued and not merged stays unexpanded.
                    let unexpanded = (count - i - 1) + pending.len() + next_level.len();
                    result.truncated += unexpanded as u64;
                    result.state_cap_hit = true;
                    let cap = StopReason::StateCap(search.max_states);
                    progress.stop().record(cap.clone());
                    result.ended_by = Some(cap);
                    break 'search;
                }
                if let Some(reason) = progress.stopped() {
                    let unexpanded = (count - i - 1) + pending.len() + next_level.len();
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
fn merge<C: zkrecipes::RecipeSet>(
    child: Child<C, ()>,
    parent: u64,
    visited: &mut Visited<(u64, u64)>,
    queued: &mut Visited<usize>,
    next_level: &mut Vec<Queued<C>>,
    sharing: &mut SharedParts<C>,
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
            slot.insert((parent, mask));
            queued.insert(node.key, next_level.len());
            node.model.share_parts(sharing);
            next_level.push(node);
        }
        Entry::Occupied(mut slot) => {
            let kept = slot.get().1;
            let woken = kept & !mask;
            if woken == 0 {
                return;
            }
            slot.get_mut().1 = kept & mask;
            match queued.get(&node.key) {
                Some(&at) => next_level[at].sleep.retain(|a| a.canon & mask != 0),
                None => {
                    node.only = Some(woken);
                    node.model.share_parts(sharing);
                    next_level.push(node);
                }
            }
        }
    }
}
