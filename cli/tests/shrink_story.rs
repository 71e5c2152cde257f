//! The shrinker keeps a counterexample's *story* (issue 36, item 7): the
//! property, the shape of its explanation and its ingredients (the kinds of
//! faults, the errors and expiries the clients were told of), checked on
//! every candidate by `zkcheck::testkit::story::Story::accepts`. Both
//! directions: a shrunk counterexample still fails with the story it was
//! found with (and never grows, replays strictly, shrinks the same way
//! twice), and a correct twin is never shrunk into a failure. The rows here
//! are the two whose story a property-only shrinker with completion lost
//! (`ouyang-lock-waiter-expiry`: no `Expired` any more;
//! `writelock-keep-drop`: no lost delete any more).

use zkcheck::explore::replay::{replay, EventChooser};
use zkcheck::monitor::Property;
use zkcheck::run::drive;
use zkcheck::scenario::Scenario;
use zkcheck::testkit::story::shape;
use zkcheck::{shrink, shrink_with, Budget, Phases};

use crate::verdicts::table;

/// The first failure of a sweep from seed 0, its shrunk form, and the
/// shrunk run's trace.
fn shrunk(scenario: &Scenario) -> (zkcheck::explore::Failure, zkcheck::Shrunk, String) {
    let failure = table::sweep(scenario, 3000, 2)
        .failure
        .expect("the flawed recipe fails");
    let shrunk = shrink(scenario, &failure.schedule, &failure.violation);
    let indices = shrunk
        .schedule
        .to_indices(&shrunk.scenario)
        .expect("a shrunk schedule replays strictly on its own scenario");
    let replayed = replay(&shrunk.scenario, &indices).expect("it replays");
    assert_eq!(
        replayed.run.violation.as_ref(),
        Some(&shrunk.violation),
        "the shrunk schedule ends in the violation it reports"
    );
    (failure, shrunk, replayed.trace.text)
}

fn seed_scenario(file: &str) -> Scenario {
    table::scenario(&table::row(file, Property::Liveness))
}

/// What every shrunk counterexample must show: same property and shape as
/// found, never longer than found or than removing events alone gives, and
/// the same schedule when shrunk again.
fn assert_same_story(scenario: &Scenario) -> (zkcheck::Shrunk, String) {
    let (failure, s, trace) = shrunk(scenario);
    assert_eq!(s.violation.property, failure.violation.property);
    assert_eq!(
        shape(&s.violation.explanation),
        shape(&failure.violation.explanation),
        "found: {}\nshrunk: {}",
        failure.violation.explanation,
        s.violation.explanation
    );
    let removing = shrink_with(
        scenario,
        &failure.schedule,
        &failure.violation,
        Phases::Removing,
        Budget::default(),
        &|| false,
    );
    assert!(s.schedule.len() <= removing.schedule.len());
    assert!(removing.schedule.len() <= failure.schedule.len());
    assert!(
        s.no_shorter_than <= s.schedule.len(),
        "a bound above the length found is false"
    );
    let again = shrink(scenario, &failure.schedule, &failure.violation);
    assert_eq!(again.schedule, s.schedule, "deterministic");
    assert_eq!(again.scenario, s.scenario, "deterministic");
    assert_eq!(again.reductions, s.reductions);
    (s, trace)
}

#[test]
fn shrink_story_an_expired_waiter_stays_expired() {
    let (s, trace) = assert_same_story(&seed_scenario("ouyang-lock-waiter-expiry.toml"));
    assert!(
        s.violation.explanation.contains("its session ended"),
        "{}",
        s.violation.explanation
    );
    assert!(trace.contains("recv Expired"), "{trace}");
    assert!(
        s.ingredients.iter().any(|i| i == "expiry"),
        "{:?}",
        s.ingredients
    );
}

#[test]
fn shrink_story_a_lost_delete_stays_lost() {
    let (s, trace) = assert_same_story(&seed_scenario("writelock-keep-drop.toml"));
    let e = &s.violation.explanation;
    assert!(
        e.contains("is owned by client") && !e.contains("does not exist"),
        "{e}"
    );
    assert!(trace.contains("error ConnectionLoss"), "{trace}");
}

/// A run of no faults shrinks to a shortest counterexample, and says so;
/// the exhaustive search (breadth-first, every story) on the scenario it
/// runs on finds nothing of the same story shorter.
#[test]
fn shrink_story_a_lost_wakeup_is_shrunk_to_a_shortest_one() {
    let scenario = seed_scenario("zklock-nofaults.toml");
    let (s, _) = assert_same_story(&scenario);
    assert_eq!(s.no_shorter_than, s.schedule.len(), "proved shortest");
    // On the scenario the counterexample runs on (a reduced one).
    let mut options = zkcheck::explore::Options::from_scenario(&s.scenario);
    options.strategy = zkcheck::scenario::Search::Bfs;
    options.depth = s.schedule.len() - 1;
    options.jobs = 2;
    let bfs = zkcheck::explore::explorer(&options)
        .explore(&s.scenario, &zkcheck::progress::Progress::hidden());
    if let Some(f) = bfs.failure {
        assert_ne!(
            shape(&f.violation.explanation),
            shape(&s.violation.explanation),
            "BFS found the same story in {} steps",
            f.schedule.len()
        );
    }
}

/// The other direction: the reference lock on the same scenario, given the
/// flawed run's events and its violation as a claim, is never shrunk into
/// a failure — no candidate is adopted, since none replays to one.
#[test]
fn shrink_story_a_correct_twin_is_never_shrunk_into_a_failure() {
    for file in ["writelock-keep-drop.toml", "ouyang-lock-waiter-expiry.toml"] {
        let flawed = seed_scenario(file);
        let (_, s, _) = shrunk(&flawed);
        let mut twin = table::scenario_with_recipe(file, "sequential");
        twin.hard = vec![Property::Liveness];
        // The flawed run's events, leniently, in the twin: no failure.
        let run = drive(
            &twin,
            &mut EventChooser::new(&s.schedule.events),
            |_, _, _| {},
        );
        assert!(run.violation.is_none(), "{file}: {:?}", run.violation);
        let claimed = shrink(&twin, &run.schedule, &s.violation);
        assert_eq!(claimed.schedule, run.schedule, "{file}: nothing adopted");
        assert!(claimed.reductions.is_empty(), "{file}: no smaller scenario");
        assert_eq!(claimed.scenario, twin);
        assert!(claimed.attempts > 0, "candidates were tried");
        let replayed = drive(
            &twin,
            &mut EventChooser::new(&claimed.schedule.events),
            |_, _, _| {},
        );
        assert!(replayed.violation.is_none());
    }
}
