//! Depth-first search with a depth bound.
//!
//! A state's shallowest known depth is kept with its parent; a state
//! reached again at a smaller depth is expanded again (with the new
//! parent), so that the bound hides nothing a BFS to the same depth sees.
//!
//! With partial-order reduction ([`super::por`]) a state keeps the sleep
//! set it was expanded with; reached again no higher up with steps awake
//! that were asleep, it is expanded again for those steps only and keeps
//! the intersection (Godefroid's fix for state caching). A search for
//! cycles must turn the reduction off ([`super::Exhaustive::por`]).

use zkrecipes::RecipeSet;

use super::expand::{expand, Expansion, Queued, Scratch};
use super::symmetry::Keying;
use super::trace::{failure_at_end, failure_by_step};
use super::{Exhaustive, Visited};
use crate::explore::Exploration;
use crate::model::Model;
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::stop::StopReason;

pub(super) fn explore<C: RecipeSet>(
    search: &Exhaustive,
    scenario: &Scenario<C>,
    progress: &Progress,
) -> Exploration {
    let mut result = Exploration::default();
    let root = Box::new(Model::<C>::for_search(scenario));
    let symmetry = search.symmetry_of(scenario, &root, &mut result);
    let keying = Keying(symmetry.as_ref());
    let por = search.por_of(scenario, &root, &mut result);
    let por = por.as_ref();
    let root_fp = keying.key(&root);
    // Key → (parent key, shallowest depth, sleep mask).
    let mut visited: Visited<(u64, usize, u64)> = Visited::default();
    visited.insert(root_fp, (root_fp, 0, 0));
    let mut stack: Vec<(Queued<C>, usize)> = vec![(Queued::new(root, root_fp, Vec::new()), 0)];
    let mut scratch = Scratch::default();

    while let Some((node, depth)) = stack.pop() {
        let fp = node.key;
        // Whether a child reached now must be (re)expanded: it is new, or
        // reached higher up, or (sleep sets) with steps awake that were
        // asleep when it was expanded.
        let wanted = |visited: &Visited<(u64, usize, u64)>, key: u64, sleep: u64| {
            visited
                .get(&key)
                .is_none_or(|&(_, d, kept)| depth + 1 < d || kept & !sleep != 0)
        };
        let expansion = expand(
            node,
            depth,
            search.depth,
            &mut scratch,
            keying,
            por,
            |key, sleep| wanted(&visited, key, sleep),
        );
        let parent = |fp: u64| visited[&fp].0;
        match expansion {
            Expansion::End(verdict, figures) => {
                result.schedules += 1;
                if let Err(violation) = verdict {
                    result.failure = Some(failure_at_end(scenario, keying, fp, parent, violation));
                    break;
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
                    break;
                }
                // Pushed in reverse so that the first enabled event is
                // explored first (the stack pops the last pushed).
                let before = stack.len();
                for mut child in children {
                    let mask = child.sleep_mask();
                    match visited.get(&child.key).copied() {
                        Some((_, d, kept)) if depth + 1 >= d => {
                            // Seen as high up: only steps newly awake.
                            let woken = kept & !mask;
                            if woken == 0 {
                                continue;
                            }
                            if let Some(entry) = visited.get_mut(&child.key) {
                                entry.2 = kept & mask;
                            }
                            child.only = Some(woken);
                        }
                        _ => {
                            visited.insert(child.key, (fp, depth + 1, mask));
                        }
                    }
                    stack.push((child, depth + 1));
                }
                stack[before..].reverse();
            }
        }
        progress.set_states(visited.len() as u64);
        if visited.len() >= search.max_states {
            result.truncated += stack.len() as u64;
            result.state_cap_hit = true;
            let cap = StopReason::StateCap(search.max_states);
            progress.stop().record(cap.clone());
            result.ended_by = Some(cap);
            break;
        }
        if let Some(reason) = progress.stopped() {
            result.truncated += stack.len() as u64;
            result.ended_by = Some(reason);
            break;
        }
    }
    result.distinct_states = Some(visited.len() as u64);
    result
}
