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

use std::collections::hash_map::Entry;

use rayon::prelude::*;
use zkrecipes::RecipeSet;

use super::expand::{expand, Expansion, Queued, Scratch};
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
    let root_fp = keying.key(&root);
    // Fingerprint → parent fingerprint; the root is its own parent.
    let mut visited: Visited<u64> = Visited::default();
    visited.insert(root_fp, root_fp);
    let mut level: Vec<Queued<C>> = vec![(root, root_fp)];
    let mut scratch = Scratch::default();
    let mut depth = 0;
    // Parts shared among the states of the next level (cleared per level:
    // only states kept at the same time gain from sharing).
    let mut sharing = SharedParts::<C>::default();

    'search: while !level.is_empty() {
        let mut next_level: Vec<Queued<C>> = Vec::new();
        sharing.clear();
        let mut pending = level.into_iter();
        while pending.len() > 0 {
            let chunk: Vec<Queued<C>> = pending.by_ref().take(CHUNK).collect();
            let seen = &visited;
            let keep = |_: &Model<C>, fp: u64| (!seen.contains_key(&fp)).then_some(());
            let expanded: Vec<(u64, Expansion<C>)> = match &pool {
                Some(pool) => pool.install(|| {
                    chunk
                        .into_par_iter()
                        .map_init(Scratch::default, |scratch, (model, fp)| {
                            (
                                fp,
                                expand(model, depth, search.depth, scratch, keying, keep),
                            )
                        })
                        .collect()
                }),
                None => chunk
                    .into_iter()
                    .map(|(model, fp)| {
                        (
                            fp,
                            expand(model, depth, search.depth, &mut scratch, keying, keep),
                        )
                    })
                    .collect(),
            };
            let count = expanded.len();
            for (i, (fp, expansion)) in expanded.into_iter().enumerate() {
                let parent = |fp: u64| visited[&fp];
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
                            if let Entry::Vacant(slot) = visited.entry(child.key) {
                                slot.insert(fp);
                                let mut model = child.model;
                                model.share_parts(&mut sharing);
                                next_level.push((model, child.key));
                            }
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
