//! A run that `max_time` cuts while a tick would still change something
//! (a timer armed, a disconnected session the leader has yet to expire) is
//! cut, not stuck: liveness is not judged there. Before this rule, the
//! correct lock failed liveness under exhaustive search whenever a drop
//! came late enough that the session's expiry fell past `max_time` — at
//! any `max_time`, since the search also tries the slowest holder — so the
//! check could not tell it from the lock that forgets its node. Both
//! directions, under BFS and random search.

use zkcheck::explore::{self, Exploration, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};

/// Two clients, one drop, a clock that stops at tick 1: the released
/// holder's delete is lost with its connection, and only the leader's
/// expiry of that session (ticks away) would free the waiter.
fn late_drop(recipe: &str) -> Scenario {
    let text = format!(
        r#"
name = "late-drop"
recipe = "{recipe}"
clients = 2
root = "/lock"

[workload]
rounds = 1
hold_ticks = 1
think_ticks = 0

[ensemble]
servers = 1
session_timeout = 4
max_time = 1

[faults]
connection_drops = 1

[checks]
hard = ["mutex", "fenced-mutex", "liveness"]
"#
    );
    Scenario::parse(&text, "liveness_clock.rs").unwrap_or_else(|e| panic!("{e}"))
}

fn explore(scenario: &Scenario, strategy: Search) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    options.strategy = strategy;
    options.schedules = 5000;
    options.depth = 200;
    options.jobs = 2;
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

#[test]
fn a_wait_cut_by_the_clock_is_not_a_liveness_violation() {
    for recipe in ["sequential", "naive"] {
        let scenario = late_drop(recipe);
        for strategy in [Search::Bfs, Search::Random] {
            let r = explore(&scenario, strategy);
            assert!(
                r.failure.is_none(),
                "{recipe} {strategy:?}: {:?}",
                r.failure
            );
            assert_eq!(r.truncated, 0, "{recipe} {strategy:?}: explored whole");
        }
    }
}

#[test]
fn a_waiter_stuck_for_good_is_still_caught_on_the_same_clock() {
    for recipe in [
        "sequential-forget-release",
        "sequential-blind-retry",
        "naive-no-rewatch",
    ] {
        let r = explore(&late_drop(recipe), Search::Bfs);
        let failure = r.failure.unwrap_or_else(|| panic!("{recipe}: not caught"));
        assert_eq!(failure.violation.property, Property::Liveness, "{recipe}");
        assert!(
            failure.violation.explanation.starts_with("stuck:"),
            "{recipe}: {}",
            failure.violation.explanation
        );
    }
}
