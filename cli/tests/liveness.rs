//! Liveness without tuning `max_time` (issue 9, item 5): a run ends where
//! nothing but clock ticks that change nothing else (and faults) can happen
//! (`World::waits_on_time`), so exhaustive search judges a stuck waiter
//! there, and the shrinker removes the runs of ticks a random
//! counterexample is made of. Both directions: the article's WriteLock
//! (a lost wakeup: its predecessor is gone before `exists`) is caught, the
//! reference lock in the same scenario is not.

use std::path::Path;

use zkcheck::explore::{self, Exploration, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::shrink;
use zksim::Event;

/// `writelock-nofaults.toml`: 2 clients, no faults, `max_time = 120`.
fn lost_wakeup() -> Scenario {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/seeds/writelock-nofaults.toml");
    let s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.hard, vec![Property::Liveness]);
    assert!(s.ensemble.max_time >= 100, "a max_time nobody tuned");
    s
}

/// The same scenario with the reference lock. Exhaustively with a clock of
/// 10 ticks: ticks that a pending timer makes relevant still multiply the
/// states (44,245 at 10 ticks, 514,545 at 30), so the full 120 is for the
/// random direction only.
fn correct() -> Scenario {
    let mut s = lost_wakeup();
    s.recipe = "sequential".into();
    s.validate().unwrap();
    s
}

fn explore_with(scenario: &Scenario, f: impl FnOnce(&mut Options)) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    f(&mut options);
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

fn bfs(scenario: &Scenario) -> Exploration {
    explore_with(scenario, |o| {
        o.strategy = Search::Bfs;
        o.depth = 400;
        o.jobs = 2;
    })
}

fn ticks(events: &[Event]) -> usize {
    events.iter().filter(|e| **e == Event::Tick).count()
}

#[test]
fn bfs_finds_a_lost_wakeup_where_the_waiter_got_stuck() {
    let r = bfs(&lost_wakeup());
    let failure = r.failure.expect("BFS reaches the stuck waiter");
    assert_eq!(failure.violation.property, Property::Liveness);
    assert!(
        failure.violation.explanation.contains("stuck"),
        "{}",
        failure.violation.explanation
    );
    // Shortest, and ended where the waiter got stuck: far from the 120
    // ticks of max_time.
    assert!(
        failure.schedule.len() <= 40,
        "{} steps",
        failure.schedule.len()
    );
    assert!(ticks(&failure.schedule.events) < 10);
}

#[test]
fn bfs_of_the_reference_lock_has_no_stuck_state() {
    let mut scenario = correct();
    scenario.ensemble.max_time = 10;
    let r = bfs(&scenario);
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(r.truncated, 0, "the search is complete");
    assert!(!r.state_cap_hit && r.ended_by.is_none());
    assert!(r.distinct_states.unwrap() > 100);
}

#[test]
fn a_random_liveness_counterexample_shrinks_below_forty_steps() {
    let scenario = lost_wakeup();
    let r = explore_with(&scenario, |o| {
        o.strategy = Search::Random;
        o.schedules = 3000;
        o.jobs = 2;
    });
    let failure = r.failure.expect("random finds the lost wakeup");
    assert_eq!(failure.violation.property, Property::Liveness);
    let shrunk = shrink(&scenario, &failure.schedule, &failure.violation);
    assert_eq!(shrunk.violation.property, Property::Liveness);
    assert!(
        shrunk.schedule.len() <= 40,
        "{} → {} steps",
        failure.schedule.len(),
        shrunk.schedule.len()
    );
}

#[test]
fn random_runs_of_the_reference_lock_never_get_stuck() {
    let r = explore_with(&correct(), |o| {
        o.strategy = Search::Random;
        o.schedules = 1000;
        o.jobs = 2;
    });
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(r.schedules, 1000);
}
