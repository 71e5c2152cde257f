//! Depth-first search with a depth bound.
//!
//! A state's shallowest known depth is kept with its parent; a state
//! reached again at a smaller depth is expanded again (with the new
//! parent), so that the bound hides nothing a BFS to the same depth sees.

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
    let root_fp = keying.key(&root);
    // Fingerprint → (parent fingerprint, shallowest depth).
    let mut visited: Visited<(u64, usize)> = Visited::default();
    visited.insert(root_fp, (root_fp, 0));
    let mut stack: Vec<(Queued<C>, usize)> = vec![((root, root_fp), 0)];
    let mut scratch = Scratch::default();

    while let Some(((model, fp), depth)) = stack.pop() {
        let shallower = |visited: &Visited<(u64, usize)>, fp: u64| {
            visited.get(&fp).is_none_or(|&(_, d)| depth + 1 < d)
        };
        let expansion = expand(model, depth, search.depth, &mut scratch, keying, |child| {
            shallower(&visited, child)
        });
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
                for (child, child_fp) in children {
                    if shallower(&visited, child_fp) {
                        visited.insert(child_fp, (fp, depth + 1));
                        stack.push(((child, child_fp), depth + 1));
                    }
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
