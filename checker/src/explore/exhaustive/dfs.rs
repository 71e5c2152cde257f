//! Depth-first search with a depth bound, and the cycle check.
//!
//! A state's shallowest known depth is kept with its parent; a state
//! reached again at a smaller depth is expanded again (with the new
//! parent), so that the bound hides nothing a BFS to the same depth sees.
//!
//! The search keeps its path — the states from the root to the one being
//! expanded, each with the event that led to it — so that it can close
//! cycles. With the cycle check on, every child is also keyed up to a
//! shift of the clock ([`SystemState::time_shift_key`]); a child whose key is a
//! state on the path closes a cycle (a back edge, by the classic DFS
//! argument), and the path up to that state plus the cycle is judged as a
//! lasso ([`crate::lasso::judge`]): a fair cycle without progress while a
//! client waits is a liveness violation, found whatever `max_time` is,
//! because time shifts do not tell the states of a polling loop apart.
//! Cycles that are not livelocks (someone makes progress, a starved
//! actor, nobody waiting) are remembered by (start key, cycle) and not
//! judged twice.
//!
//! The path holds real states of the explored system (only the visited
//! set is keyed by symmetry representatives), so a lasso is the exact
//! schedule from the root and its cycle returns to the exact state, up to
//! the clock: symmetry may stay on. Partial-order reduction (sleep sets)
//! must not prune the children the cycle check looks at: a reduction that
//! drops steps can hide the step that makes a cycle fair or close it
//! (the "ignoring problem"), so the cycle check needs every enabled step
//! of each state on the path: with the cycle check on, the reduction is
//! off ([`super::Exhaustive::por_of`]).
//!
//! Without the cycle check, partial-order reduction ([`super::por`]) may
//! run: a state keeps the sleep set it was expanded with; reached again
//! no higher up with steps awake that were asleep, it is expanded again
//! for those steps only and keeps the intersection (Godefroid's fix for
//! state caching).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use zkrecipes::RecipeSet;
use zksim::fingerprint::StableHasher;
use zksim::Event;

use super::expand::{expand, sleep_mask, Expansion, Reduction, Scratch};
use super::path::{failure_at_end, failure_by_step};
use super::por::Asleep;
use super::symmetry::Keying;
use super::{Exhaustive, Visited};
use crate::explore::{Exploration, Failure};
use crate::progress::Progress;
use crate::scenario::Scenario;
use crate::schedule::Schedule;
use crate::state::SystemState;
use crate::stop::StopReason;

/// A state waiting to be expanded: the state, its visited key, its
/// depth, the event that led to it and its key up to the clock.
struct Pending<C: RecipeSet> {
    model: Box<SystemState<C>>,
    key: u64,
    depth: usize,
    event: Option<Event>,
    shift: u64,
    /// Steps asleep here (partial-order reduction).
    sleep: Vec<Asleep>,
    /// Expanded before: take only these steps ([`Reduction::only`]).
    only: Option<u64>,
}

/// A state on the path and its children still to expand (last first).
struct Frame<C: RecipeSet> {
    shift: u64,
    event: Option<Event>,
    children: Vec<Pending<C>>,
}

pub(super) fn explore<C: RecipeSet>(
    search: &Exhaustive,
    scenario: &Scenario<C>,
    progress: &Progress,
) -> Exploration {
    let mut result = Exploration::default();
    let root = Box::new(SystemState::<C>::for_search(scenario));
    let symmetry = search.symmetry_of(scenario, &root, &mut result);
    let keying = Keying(symmetry.as_ref());
    let cycles = search.cycles_of(&root, &mut result);
    let por = search.por_of(scenario, &root, cycles, &mut result);
    let por = por.as_ref();
    let root_key = keying.key(&root);
    let root_shift = if cycles { root.time_shift_key() } else { 0 };
    // Fingerprint → (parent fingerprint, shallowest depth, sleep mask).
    let mut visited: Visited<(u64, usize, u64)> = Visited::default();
    visited.insert(root_key, (root_key, 0, 0));
    let mut path: Vec<Frame<C>> = Vec::new();
    // Keys up to the clock of the states on the path, counted.
    let mut on_path: HashMap<u64, u32> = HashMap::new();
    // Cycles judged not to be livelocks: hash of (start key, cycle).
    let mut not_lassos: HashSet<u64> = HashSet::new();
    let mut scratch = Scratch::default();
    let mut next = Some(Pending {
        model: root,
        key: root_key,
        depth: 0,
        event: None,
        shift: root_shift,
        sleep: Vec::new(),
        only: None,
    });

    'search: loop {
        let Pending {
            model,
            key: fp,
            depth,
            event,
            shift,
            sleep,
            only,
        } = match next.take() {
            Some(pending) => pending,
            None => loop {
                let Some(top) = path.last_mut() else {
                    break 'search;
                };
                if let Some(child) = top.children.pop() {
                    break child;
                }
                let done = path.pop().expect("a top frame");
                if cycles {
                    leave(&mut on_path, done.shift);
                }
            },
        };
        // Back on the path at this depth: everything deeper was left.
        while path.len() > depth {
            let done = path.pop().expect("deeper frames");
            if cycles {
                leave(&mut on_path, done.shift);
            }
        }
        if cycles {
            *on_path.entry(shift).or_default() += 1;
        }
        path.push(Frame {
            shift,
            event,
            children: Vec::new(),
        });
        // Whether a child reached now must be (re)expanded: it is new, or
        // reached higher up, or (sleep sets) with steps awake that were
        // asleep when it was expanded.
        let wanted = |visited: &Visited<(u64, usize, u64)>, fp: u64, sleep: u64| {
            visited
                .get(&fp)
                .is_none_or(|&(_, d, kept)| depth + 1 < d || kept & !sleep != 0)
        };
        let reduction = Reduction {
            por,
            sleep: &sleep,
            only,
        };
        let expansion = expand(
            model,
            reduction,
            depth,
            search.depth,
            &mut scratch,
            keying,
            |child, key, sleep| {
                let new = wanted(&visited, key, sleep);
                if !cycles {
                    return new.then_some((0, true));
                }
                let shift = child.time_shift_key();
                (new || on_path.contains_key(&shift)).then_some((shift, new))
            },
        );
        let parent = |fp: u64| visited[&fp].0;
        match expansion {
            Expansion::End(verdict, figures, clock_cut) => {
                result.schedules += 1;
                result.runs_clock_cut += u64::from(clock_cut);
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
                let mut kept = Vec::with_capacity(children.len());
                for child in children {
                    let (shift, new) = child.tag;
                    if cycles && on_path.contains_key(&shift) {
                        let closed =
                            close_cycle(scenario, &path, &child.event, shift, &mut not_lassos);
                        result.cycles_dismissed = not_lassos.len() as u64;
                        if let Some(failure) = closed {
                            result.failure = Some(failure);
                            break 'search;
                        }
                    }
                    if !new {
                        continue;
                    }
                    let mask = sleep_mask(&child.sleep);
                    let mut only = None;
                    match visited.get_mut(&child.key) {
                        Some(entry) if depth + 1 >= entry.1 => {
                            // Seen as high up: only the steps newly awake.
                            only = Some(entry.2 & !mask);
                            entry.2 &= mask;
                        }
                        _ => {
                            visited.insert(child.key, (fp, depth + 1, mask));
                        }
                    }
                    kept.push(Pending {
                        model: child.model,
                        key: child.key,
                        depth: depth + 1,
                        event: Some(child.event),
                        shift,
                        sleep: child.sleep,
                        only,
                    });
                }
                // Reversed so that the first enabled event is explored
                // first (children are taken from the end).
                kept.reverse();
                path.last_mut().expect("this state's frame").children = kept;
            }
        }
        progress.set_states(visited.len() as u64);
        let unexpanded = || path.iter().map(|f| f.children.len() as u64).sum::<u64>();
        if visited.len() >= search.max_states {
            result.truncated += unexpanded();
            result.state_cap_hit = true;
            let cap = StopReason::StateCap(search.max_states);
            progress.stop().record(cap.clone());
            result.ended_by = Some(cap);
            break;
        }
        if let Some(reason) = progress.stopped() {
            result.truncated += unexpanded();
            result.ended_by = Some(reason);
            break;
        }
    }
    result.distinct_states = Some(visited.len() as u64);
    result
}

/// A state left the path.
fn leave(on_path: &mut HashMap<u64, u32>, shift: u64) {
    if let Some(n) = on_path.get_mut(&shift) {
        *n -= 1;
        if *n == 0 {
            on_path.remove(&shift);
        }
    }
}

/// The child reached by `event` from the last state of `path` has the key
/// `shift` of some state on the path: judge each cycle it closes (the
/// nearest first) as a lasso; a livelock is the failure to report.
fn close_cycle<C: RecipeSet>(
    scenario: &Scenario<C>,
    path: &[Frame<C>],
    event: &Event,
    shift: u64,
    not_lassos: &mut HashSet<u64>,
) -> Option<Failure> {
    let mut events: Vec<Event> = path.iter().filter_map(|f| f.event.clone()).collect();
    events.push(event.clone());
    for from in (0..path.len()).rev().filter(|&i| path[i].shift == shift) {
        let mut h = StableHasher::new();
        h.write_u64(shift);
        events[from..].hash(&mut h);
        let id = h.finish();
        if not_lassos.contains(&id) {
            continue;
        }
        match crate::lasso::judge(scenario, &events, from) {
            Ok(violation) => {
                return Some(Failure {
                    seed: None,
                    violation,
                    schedule: Schedule { events },
                    cycle_from: Some(from),
                })
            }
            Err(_) => {
                not_lassos.insert(id);
            }
        }
    }
    None
}
