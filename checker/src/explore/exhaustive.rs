//! Exhaustive search of every schedule up to a depth, with visited-state
//! dedup by [`Model::fingerprint`].
//!
//! BFS finds a shortest counterexample (fewest steps) and counts distinct
//! states level by level. DFS goes deep first and keeps, per state, the
//! shallowest depth it was reached at, re-expanding a state reached again
//! higher up, so that the depth bound does not hide states.
//!
//! Both share one arena of (parent, event) nodes, from which a failing
//! state's schedule is rebuilt; queued states carry their whole model.

use std::collections::{HashMap, VecDeque};

use zkrecipes::{AppEvent, RecipeSet};
use zksim::{Event, Happening};

use super::{Exploration, Failure, Strategy};
use crate::model::Model;
use crate::progress::Progress;
use crate::run::is_terminal;
use crate::scenario::Scenario;
use crate::schedule::Schedule;

/// Search order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Bfs,
    Dfs,
}

/// Exhaustive exploration up to `depth` steps.
pub struct Exhaustive {
    pub order: Order,
    pub depth: usize,
    /// Distinct states at most; the search stops (incomplete) past it, so
    /// that a scenario too big for exhaustive search cannot eat the machine.
    pub max_states: usize,
}

/// The default state cap (queued states hold whole models: ~1 KB each).
pub const MAX_STATES: usize = 1_000_000;

impl Exhaustive {
    pub fn bfs(depth: usize) -> Self {
        Exhaustive {
            order: Order::Bfs,
            depth,
            max_states: MAX_STATES,
        }
    }
    pub fn dfs(depth: usize) -> Self {
        Exhaustive {
            order: Order::Dfs,
            depth,
            max_states: MAX_STATES,
        }
    }
}

const ROOT: u32 = u32::MAX;

/// How a state was reached: its parent's node and the event taken.
struct Node {
    parent: u32,
    event: Event,
}

fn schedule_to(arena: &[Node], mut node: u32) -> Schedule {
    let mut events = Vec::new();
    while node != ROOT {
        let n = &arena[node as usize];
        events.push(n.event.clone());
        node = n.parent;
    }
    events.reverse();
    Schedule { events }
}

impl<C: RecipeSet> Strategy<C> for Exhaustive {
    fn explore(&self, scenario: &Scenario<C>, progress: &Progress) -> Exploration {
        let mut result = Exploration::default();
        let root = Model::new(scenario);
        // Fingerprint → shallowest depth seen (only membership is read; no
        // iteration order leaks into results).
        let mut visited: HashMap<u64, usize> = HashMap::new();
        visited.insert(root.fingerprint(), 0);
        let mut arena: Vec<Node> = Vec::new();
        let mut frontier: VecDeque<(Model<C>, u32, usize)> = VecDeque::new();
        frontier.push_back((root, ROOT, 0));
        let mut enabled = Vec::new();
        let mut log: Vec<Happening<AppEvent>> = Vec::new();

        let fail = |result: &mut Exploration, arena: &[Node], node: u32, violation| {
            result.failure = Some(Failure {
                seed: None,
                violation,
                schedule: schedule_to(arena, node),
            });
        };

        while let Some((mut model, node, depth)) = match self.order {
            Order::Bfs => frontier.pop_front(),
            Order::Dfs => frontier.pop_back(),
        } {
            enabled.clear();
            model.enabled(&mut enabled);
            if is_terminal(&model, &enabled, 0, usize::MAX) {
                result.schedules += 1;
                if let Err(v) = model.finish() {
                    fail(&mut result, &arena, node, v);
                    break;
                }
                result.figures.merge(&model.monitors.figures());
                continue;
            }
            if depth >= self.depth {
                result.truncated += 1;
                continue;
            }
            // Children in reverse for DFS so that the first enabled event is
            // explored first (the stack pops the last pushed).
            let before = frontier.len();
            let mut found = None;
            for event in &enabled {
                let mut next = model.clone();
                let outcome = next.step(event, &mut log);
                result.events += 1;
                arena.push(Node {
                    parent: node,
                    event: event.clone(),
                });
                let id = (arena.len() - 1) as u32;
                if let Err(v) = outcome {
                    found = Some((id, v));
                    break;
                }
                let fp = next.fingerprint();
                let seen = visited.get(&fp).copied();
                if seen.is_none_or(|d| depth + 1 < d) {
                    visited.insert(fp, depth + 1);
                    frontier.push_back((next, id, depth + 1));
                } else {
                    arena.pop();
                }
            }
            if let Some((id, v)) = found {
                fail(&mut result, &arena, id, v);
                break;
            }
            if self.order == Order::Dfs {
                frontier.make_contiguous()[before..].reverse();
            }
            progress.set_states(visited.len() as u64);
            if visited.len() >= self.max_states {
                result.truncated += frontier.len() as u64;
                result.state_cap_hit = true;
                break;
            }
        }
        result.distinct_states = Some(visited.len() as u64);
        result
    }
}
