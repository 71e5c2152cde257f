//! `cargo test` checks of this crate's lock through zkcheck's public API,
//! both ways: the lock holds, its broken twin is caught, and the twin's
//! counterexample token is kept as a regression test.

use own_recipe::{BrokenLock, MyLock};
use proptest::prelude::*;
use zkcheck::check::{arbitrary, Check};
use zkcheck::monitor::Property;

/// What `the_broken_twin_is_caught` prints after `replay:` (run it with
/// `-- --nocapture` to get a new one if the simulator's rules change). It
/// carries the smaller scenario the shrinker moved to (one server, two
/// clients, one round: the line above it says so).
const BROKEN_TOKEN: &str = "zk1:bmFtZSA9ICJvd24tYnJva2VuLWxvY2stMyIKcmVjaXBlID0gIm93bi1icm9rZW4tbG9jayIKcm9vdCA9ICIvbG9jayIKY2xpZW50cyA9IDIKClt3b3JrbG9hZF0Kcm91bmRzID0gMQpob2xkX3RpY2tzID0gMAp0aGlua190aWNrcyA9IDAKCltlbnNlbWJsZV0Kc2VydmVycyA9IDEKc2Vzc2lvbl90aW1lb3V0ID0gMgpwYXVzZV90aWNrcyA9IDMwCnN5bmNfbGltaXQgPSA1Cm1heF90aW1lID0gNDAwCgpbZmF1bHRzXQpjb25uZWN0aW9uX2Ryb3BzID0gMApleHBpcmllcyA9IDAKcGF1c2VzID0gMApjcmFzaGVzID0gMApwYXJ0aXRpb25zID0gMApraWxscyA9IDAKCltjaGVja3NdCmhhcmQgPSBbIm11dGV4Il0KcmVwb3J0ID0gWyJmaWZvIiwgImhlcmQiLCAibGl2ZW5lc3MiXQoKW2V4cGxvcmVdCnN0cmF0ZWd5ID0gInJhbmRvbSIKc2NoZWR1bGVzID0gMTAwMApzZWVkID0gMAptYXhfc3RlcHMgPSA1MDAwCnBjdF9kZXB0aCA9IDMKZGVwdGggPSA0MApzeW1tZXRyeSA9IHRydWUK:AAAAAAAAAA:ab7c04f4";

/// One server and a clock that stops after three ticks: small enough for
/// exhaustive search of every interleaving.
fn small<C: zkrecipes::Recipe + Send + Sync + 'static>(check: Check<C>) -> Check<C> {
    check.configure(|s| {
        s.ensemble.servers = 1;
        s.ensemble.max_time = 3;
    })
}

#[test]
fn my_lock_holds_under_random_schedules() {
    let r = Check::<MyLock>::new(3)
        .rounds(2)
        .hard([
            Property::MutualExclusion,
            Property::Liveness,
            Property::NoLeaks,
        ])
        .always("the lock node belongs to a live session", |w| {
            w.leader_tree()
                .get("/lock/lock")
                .is_none_or(|n| w.is_session_live(n.stat.ephemeral_owner))
        })
        .random(500)
        .assert_holds();
    assert_eq!(r.schedules, 500);
}

#[test]
fn my_lock_holds_in_every_interleaving_of_a_small_world() {
    let r = small(Check::<MyLock>::new(2)).bfs(100).assert_holds();
    // 673 states: a real search, not a handful (ticks that change nothing
    // are not explored, so this is smaller than the tick-by-tick space).
    let states = r.distinct_states.unwrap();
    assert!(states > 500, "{states} states");
}

#[test]
fn the_broken_twin_is_caught() {
    let c = Check::<BrokenLock>::new(3)
        .rounds(2)
        .random(500)
        .assert_fails();
    assert_eq!(c.property(), Property::MutualExclusion);
    println!("{c}");
    // The same seed gives the same run, so the same choices as the kept
    // token, on any machine (the scenario text may be spelled differently).
    let choices = |token: &str| token.split(':').nth(2).map(str::to_string);
    assert_eq!(choices(c.token.as_deref().unwrap()), choices(BROKEN_TOKEN));
    // BFS finds it too, in the small world.
    let shortest = small(Check::<BrokenLock>::new(2)).bfs(100).assert_fails();
    assert_eq!(shortest.property(), Property::MutualExclusion);
}

#[test]
#[should_panic(expected = "VIOLATION of mutex")]
fn asserting_that_the_broken_twin_holds_panics_with_the_counterexample() {
    Check::<BrokenLock>::new(3)
        .rounds(2)
        .random(500)
        .assert_holds();
}

/// The regression test: the kept token still reproduces the violation.
#[test]
fn the_kept_token_replays_the_violation() {
    let c = Check::<BrokenLock>::replay(BROKEN_TOKEN).assert_fails();
    assert_eq!(c.property(), Property::MutualExclusion);
    // Two clients acquired under one fence: the broken twin adopted the
    // holder's node.
    let fences: Vec<&str> = c
        .trace
        .lines()
        .filter_map(|l| l.split("Acquired fence=").nth(1))
        .collect();
    assert_eq!(fences.len(), 2, "{}", c.trace);
    assert_eq!(fences[0], fences[1], "{}", c.trace);
    // A token is for the recipe type that made it.
    assert!(Check::<MyLock>::try_replay(BROKEN_TOKEN).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(50))]

    /// A user's own proptest drives the check: one seeded schedule per case.
    #[test]
    fn my_lock_holds_for_any_seed(seed in arbitrary::seeds()) {
        Check::<MyLock>::new(3).rounds(2).seed(seed).random(1).jobs(1).assert_holds();
    }
}
