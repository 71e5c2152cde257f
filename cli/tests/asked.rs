//! `asked` both ways on whole runs: the reference locks never acquire
//! without a request, over connection drops, expiries and pauses; seed 002's
//! `WriteLock`, whose left-over `LockWatcher` runs `lock()` after `unlock()`,
//! is caught (`tests/seed_verdicts.rs`, row `writelock-asked.toml`, and here).

use zkcheck::explore::random::run_random;
use zkcheck::monitor::Property;
use zkcheck::scenario::Scenario;
use zksim::FaultBudget;

fn scenario(recipe: &str, clients: usize, faults: FaultBudget) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
    s.workload.rounds = 2;
    s.hard = vec![Property::AcquiredOnlyWhenAsked];
    s.report = Vec::new();
    s.faults = faults;
    s
}

fn faults() -> FaultBudget {
    FaultBudget {
        connection_drops: 2,
        expiries: 1,
        pauses: 1,
        ..FaultBudget::default()
    }
}

#[test]
fn the_reference_locks_acquire_only_when_asked() {
    for recipe in ["sequential", "naive", "rwlock"] {
        let s = scenario(recipe, 3, faults());
        for seed in 0..300 {
            let out = run_random(&s, seed);
            assert_eq!(out.violation, None, "{recipe} seed {seed}");
        }
    }
}

#[test]
fn the_article_writelock_acquires_unasked_after_a_drop() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/seeds/writelock-asked.toml"
    );
    let s = Scenario::from_file(std::path::Path::new(path)).unwrap();
    assert_eq!(s.hard, vec![Property::AcquiredOnlyWhenAsked]);
    let found = (0..3000)
        .map(|seed| run_random(&s, seed))
        .find_map(|o| o.violation)
        .expect("a violation within 3000 seeds");
    assert_eq!(found.property, Property::AcquiredOnlyWhenAsked);
    assert!(
        found.explanation.contains("without having asked"),
        "{}",
        found.explanation
    );
}
