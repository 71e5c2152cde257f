//! Where ZooKeeper's own windows begin: the fault bounds docs/SCENARIOS.md
//! states ("correct recipe keeps belief `mutex`?") are sharp, in both
//! directions. A bound one tick too generous would let the shipped faults
//! scenarios claim a hard `mutex` that a real ensemble breaks; one tick too
//! strict would hide that the simulator invents a window.

use zkcheck::explore::{self, Exploration, Options};
use zkcheck::monitor::Property;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};

/// The holder is cut off until its session expires and freezes for
/// `pause_ticks` — both aimed at whoever holds the lock, so the only
/// question is whether the freeze can cover the whole stretch from its read
/// timeout (⌈2T/3⌉ = 4) to the leader's expiry tick (T + 1 = 7).
fn cut_off_and_paused(pause_ticks: u64) -> Scenario {
    let text = format!(
        r#"
name = "cut-off-and-paused"
recipe = "sequential"
clients = 3
root = "/lock"

[workload]
rounds = 2
hold_ticks = 8
think_ticks = 1

[ensemble]
servers = 3
session_timeout = 6
pause_ticks = {pause_ticks}
max_time = 300

[faults]
expiries = 1
pauses = 1

[faults.aim]
expiries = "holder"
pauses = "holder"

[checks]
hard = ["mutex", "fenced-mutex"]
"#
    );
    Scenario::parse(&text, "fault_windows.rs").unwrap_or_else(|e| panic!("{e}"))
}

fn explore(scenario: &Scenario, strategy: Search, schedules: u64) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    options.strategy = strategy;
    options.schedules = schedules;
    options.jobs = 2;
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

/// T − ⌈2T/3⌉ = 2 ticks: the frozen holder wakes before the expiry tick,
/// hears `Disconnected` (the clock may not pass its deadline first) and
/// lets go. Belief `mutex` holds under both strategies.
#[test]
fn a_pause_within_t_minus_the_read_timeout_keeps_belief_exclusion() {
    let scenario = cut_off_and_paused(2);
    for strategy in [Search::Random, Search::Pct] {
        let r = explore(&scenario, strategy, 3000);
        assert!(r.failure.is_none(), "{strategy:?}: {:?}", r.failure);
        assert_eq!(r.schedules, 3000);
    }
}

/// One tick more and the freeze can start at the read timeout and end on
/// the expiry tick: the holder still believes while the next client
/// acquires. ZooKeeper has this window too (a GC pause during a network
/// cut); only the fenced resource refuses the stale holder.
#[test]
fn a_pause_one_tick_longer_breaks_belief_but_not_the_fence() {
    let scenario = cut_off_and_paused(3);
    let r = explore(&scenario, Search::Pct, 3000);
    let failure = r.failure.expect("a 3-tick pause over the read timeout");
    assert_eq!(failure.violation.property, Property::MutualExclusion);
    assert!(
        failure
            .violation
            .explanation
            .contains("session had already ended"),
        "{}",
        failure.violation.explanation
    );

    let mut fenced = scenario.clone();
    fenced.hard = vec![Property::FencedExclusion];
    let r = explore(&fenced, Search::Pct, 3000);
    assert!(r.failure.is_none(), "{:?}", r.failure);
}
