//! Exhaustive search of the crate's lock, as a user meets it: symmetry
//! reduction that cannot be used says what blocks it (and is refused when
//! it was required), state and memory limits set from the builder or
//! `configure` end the search as incomplete (never ok), a check's search
//! and shrinking are timed apart, and a replayed counterexample says it
//! was replayed.

use std::time::Duration;

use own_recipe::{BrokenLock, MyLock};
use zkcheck::check::Check;
use zkcheck::monitor::Property;

/// One server and a clock that stops after three ticks: small enough for
/// exhaustive search of every interleaving.
fn small(check: Check<MyLock>) -> Check<MyLock> {
    check.configure(|s| {
        s.ensemble.servers = 1;
        s.ensemble.max_time = 3;
    })
}

fn asked_and_mutex() -> [Property; 3] {
    [
        Property::MutualExclusion,
        Property::AcquiredOnlyWhenAsked,
        Property::FencedExclusion,
    ]
}

#[test]
fn symmetry_required_is_on_with_asked_judged() {
    let r = small(Check::<MyLock>::new(2))
        .hard(asked_and_mutex())
        .symmetry(true)
        .bfs(100)
        .assert_holds();
    let symmetry = r.symmetry.unwrap();
    assert!(
        symmetry.starts_with("on (interchangeable clients {0,1})"),
        "{symmetry}"
    );
    // The same search without it visits more states: the reduction worked.
    let without = small(Check::<MyLock>::new(2))
        .hard(asked_and_mutex())
        .symmetry(false)
        .bfs(100)
        .assert_holds();
    assert!(
        without.distinct_states.unwrap() > r.distinct_states.unwrap(),
        "{:?} vs {:?}",
        without.distinct_states,
        r.distinct_states
    );
}

fn no_stray_node(_: &zksim::World<MyLock>) -> bool {
    true
}

#[test]
#[should_panic(
    expected = "symmetry reduction was required (Check::symmetry(true)) but is off (cannot rename the invariant(s) `no stray node`"
)]
fn symmetry_required_but_blocked_by_an_invariant_is_refused_naming_it() {
    small(Check::<MyLock>::new(2))
        .always("no stray node", no_stray_node)
        .symmetry(true)
        .bfs(100)
        .assert_holds();
}

#[test]
fn symmetry_off_by_default_says_what_blocks_it() {
    let r = small(Check::<MyLock>::new(2))
        .always("no stray node", no_stray_node)
        .bfs(100)
        .assert_holds();
    let symmetry = r.symmetry.unwrap();
    assert!(
        symmetry.starts_with("off (cannot rename the invariant(s) `no stray node`"),
        "{symmetry}"
    );
}

#[test]
#[should_panic(expected = "not checked completely")]
fn a_state_cap_from_the_builder_ends_the_search_incomplete() {
    Check::<MyLock>::new(3)
        .max_states(50)
        .bfs(100)
        .assert_holds();
}

#[test]
#[should_panic(expected = "not checked completely")]
fn a_state_cap_from_configure_reaches_the_search_too() {
    Check::<MyLock>::new(3)
        .bfs(100)
        .configure(|s| s.explore.max_states = Some(50))
        .assert_holds();
}

#[test]
#[should_panic(expected = "memory")]
fn a_memory_budget_ends_the_search_incomplete() {
    // 1 MiB: less than the process already uses, so the search stops at once.
    Check::<MyLock>::new(3).memory_mb(1).bfs(100).assert_holds();
}

#[test]
fn the_same_search_without_limits_completes() {
    let r = small(Check::<MyLock>::new(2)).bfs(100).assert_holds();
    assert!(r.distinct_states.unwrap() > 50);
}

#[test]
fn search_and_shrinking_are_timed_apart() {
    let verdict = Check::<BrokenLock>::new(3).rounds(2).random(500).run();
    let c = verdict.counterexample.expect("a violation");
    assert!(c.shrink_attempts > 0);
    assert!(verdict.timings.search > Duration::ZERO);
    assert!(verdict.timings.shrink > Duration::ZERO);
    // Nothing to shrink, no shrinking time.
    let ok = Check::<MyLock>::new(3).rounds(2).random(100).run();
    assert!(ok.counterexample.is_none());
    assert_eq!(ok.timings.shrink, Duration::ZERO);
}

#[test]
fn a_replayed_counterexample_says_it_was_replayed() {
    let c = Check::<BrokenLock>::new(2)
        .configure(|s| {
            s.ensemble.servers = 1;
            s.ensemble.max_time = 3;
        })
        .bfs(100)
        .assert_fails();
    assert!(c.to_string().contains("found by exhaustive search"), "{c}");
    let again = Check::<BrokenLock>::replay(c.token.as_deref().unwrap()).assert_fails();
    let text = again.to_string();
    assert!(text.contains("(replayed from a token:"), "{text}");
    assert!(!text.contains("exhaustive search"), "{text}");
}
