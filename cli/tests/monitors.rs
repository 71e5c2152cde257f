//! Monitors end to end: real recipes on the simulated ensemble, judged by
//! the monitor set through the checker's own run loop. Each property is
//! shown both ways: the reference recipe passes it, a flawed one is caught
//! with an explanation that names the client and the node.

use zkcheck::explore::random::run_random;
use zkcheck::monitor::{Property, Violation};
use zkcheck::run::RunOutcome;
use zkcheck::scenario::Scenario;
use zkcheck_cli::compare::{compare, CompareConfig};
use zksim::FaultBudget;

const LOCK_PROPERTIES: [Property; 6] = [
    Property::MutualExclusion,
    Property::FencedExclusion,
    Property::Fifo,
    Property::NoHerd,
    Property::Liveness,
    Property::NoLeaks,
];

fn scenario(recipe: &str, clients: usize, hard: &[Property], faults: FaultBudget) -> Scenario {
    let mut s = Scenario::lock(recipe, clients);
    s.hard = hard.to_vec();
    s.report = Vec::new();
    s.faults = faults;
    s
}

/// The first violation over `seeds`, with its seed.
fn first_violation(s: &Scenario, seeds: std::ops::Range<u64>) -> Option<(u64, Violation)> {
    seeds
        .map(|seed| run_random(s, seed))
        .find_map(|o| o.violation.map(|v| (o.seed, v)))
}

fn drops_and_expiries() -> FaultBudget {
    FaultBudget {
        connection_drops: 2,
        expiries: 1,
        ..FaultBudget::default()
    }
}

#[test]
fn the_sequential_lock_keeps_every_lock_property_on_a_healthy_ensemble() {
    for clients in [2, 3, 5] {
        let s = scenario(
            "sequential",
            clients,
            &LOCK_PROPERTIES,
            FaultBudget::default(),
        );
        for seed in 0..40 {
            let out: RunOutcome = run_random(&s, seed);
            assert_eq!(out.violation, None, "{clients} clients, seed {seed}");
            let f = &out.figures;
            assert_eq!(
                f.acquisitions, clients as u64,
                "seed {seed}: one round each"
            );
            assert_eq!(f.releases, clients as u64);
            assert_eq!(
                f.latency.len(),
                f.acquisitions,
                "one latency sample per acquisition"
            );
            assert_eq!(
                f.stuck_runs + f.cut_off_runs,
                0,
                "seed {seed}: the run finished"
            );
            assert!(f.max_wakeups_per_release() <= 1);
            assert_eq!(f.wasted_wakeups, 0);
            assert_eq!(f.fifo_violations, 0);
            assert_eq!(f.leaked_nodes, 0);
            assert_eq!(
                f.accepted_writes,
                2 * clients as u64,
                "a write after acquiring and before releasing"
            );
        }
    }
}

#[test]
fn the_read_write_lock_keeps_every_lock_property_on_a_healthy_ensemble() {
    let s = scenario("rwlock", 5, &LOCK_PROPERTIES, FaultBudget::default());
    assert_eq!(first_violation(&s, 0..40), None);
}

/// The headline: fault-free, the predecessor-watch lock wakes one waiter per
/// release at every N, the naive lock wakes all N−1 others.
#[test]
fn sequential_wakes_one_waiter_per_release_and_naive_wakes_all_of_them() {
    let config = CompareConfig {
        clients: vec![2, 4, 8],
        seeds: 6,
        ..CompareConfig::default()
    };
    let rows = compare(&config).unwrap();
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let f = &row.figures;
        assert_eq!(f.runs, 6);
        assert_eq!(
            f.acquisitions,
            6 * row.clients as u64,
            "{} {}",
            row.recipe,
            row.clients
        );
        match row.recipe.as_str() {
            "sequential" => {
                assert_eq!(
                    f.max_wakeups_per_release(),
                    1,
                    "sequential at {}",
                    row.clients
                );
                assert_eq!(f.wasted_wakeups, 0);
            }
            "naive" => {
                assert_eq!(
                    f.max_wakeups_per_release(),
                    row.clients as u64 - 1,
                    "naive at {}",
                    row.clients
                );
            }
            other => panic!("unexpected recipe {other}"),
        }
    }
    // Same seeds, same table: parallel runs merge exactly.
    assert_eq!(compare(&config).unwrap(), rows);
}

#[test]
fn the_naive_lock_is_caught_as_a_herd() {
    let s = scenario("naive", 4, &[Property::NoHerd], FaultBudget::default());
    let (_, v) = first_violation(&s, 0..20).expect("a herd");
    assert_eq!(v.property, Property::NoHerd);
    assert!(
        v.explanation
            .contains("released the lock by deleting /lock/lock"),
        "{}",
        v.explanation
    );
    assert!(
        v.explanation.contains("woken 2 waiters (client"),
        "{}",
        v.explanation
    );
}

#[test]
fn watching_the_lowest_node_is_caught_as_a_herd() {
    let s = scenario(
        "sequential-watch-lowest",
        4,
        &[Property::NoHerd],
        FaultBudget::default(),
    );
    let (_, v) = first_violation(&s, 0..20).expect("a herd");
    assert!(
        v.explanation
            .contains("released the lock by deleting /lock/lock-"),
        "{}",
        v.explanation
    );
    // ... and the correct recipe under the same schedules is not.
    let s = scenario("sequential", 4, &[Property::NoHerd], FaultBudget::default());
    assert_eq!(first_violation(&s, 0..20), None);
}

#[test]
fn waiting_without_a_watch_is_caught_stuck_with_its_wait_for_graph() {
    let s = scenario(
        "naive-no-rewatch",
        4,
        &[Property::Liveness],
        FaultBudget::default(),
    );
    let (seed, v) = first_violation(&s, 0..40).expect("a stuck run");
    assert_eq!(v.property, Property::Liveness);
    assert!(
        v.explanation
            .starts_with("stuck: nobody holds and nothing but time can happen"),
        "seed {seed}: {}",
        v.explanation
    );
    assert!(
        v.explanation.contains("wait-for graph"),
        "{}",
        v.explanation
    );
    assert!(v.explanation.contains("/lock/lock"), "{}", v.explanation);
    let s = scenario("naive", 4, &[Property::Liveness], FaultBudget::default());
    assert_eq!(first_violation(&s, 0..40), None);
}

#[test]
fn sorting_names_as_strings_is_caught_jumping_the_line() {
    let s = scenario(
        "sequential-string-sort",
        4,
        &[Property::MutualExclusion, Property::Fifo],
        FaultBudget::default(),
    );
    let (_, v) = first_violation(&s, 0..40).expect("a jump");
    assert!(
        matches!(v.property, Property::MutualExclusion | Property::Fifo),
        "{v:?}"
    );
    assert!(
        v.explanation.contains("acquired the lock"),
        "{}",
        v.explanation
    );
}

/// Under pauses past the session timeout no recipe keeps belief-level
/// exclusion, but fencing keeps the resource consistent.
#[test]
fn long_pauses_break_belief_but_not_the_fenced_resource() {
    let pauses = FaultBudget {
        pauses: 1,
        ..FaultBudget::default()
    };
    let s = scenario("sequential", 4, &[Property::MutualExclusion], pauses);
    let (_, v) = first_violation(&s, 0..200).expect("a paused holder");
    assert!(
        v.explanation.contains("session had already ended"),
        "{}",
        v.explanation
    );
    let s = scenario("sequential", 4, &[Property::FencedExclusion], pauses);
    assert_eq!(first_violation(&s, 0..200), None);
    let mut stale = 0;
    for seed in 0..200 {
        stale += run_random(&s, seed).figures.stale_writes;
    }
    assert!(
        stale > 0,
        "some paused holder wrote late and was fenced off"
    );
}

#[test]
fn blind_retry_after_connection_loss_is_caught() {
    let s = scenario(
        "sequential-blind-retry",
        3,
        &[Property::NoLeaks, Property::Liveness],
        drops_and_expiries(),
    );
    let (seed, v) = first_violation(&s, 0..200).expect("an orphan");
    assert!(
        v.explanation.contains("/lock/lock-"),
        "seed {seed}: {}",
        v.explanation
    );
}

#[test]
fn crashed_clients_are_excused_from_liveness() {
    let crash = FaultBudget {
        crashes: 1,
        ..FaultBudget::default()
    };
    let s = scenario(
        "sequential",
        4,
        &[Property::MutualExclusion, Property::Liveness],
        crash,
    );
    assert_eq!(first_violation(&s, 0..100), None);
}

/// Monitors that only judge (`owner`, `asked`) are left out of a sweep
/// whose scenario neither makes their property hard nor reports it. Left
/// out, they must have measured nothing: across every shipped scenario,
/// the same runs with those properties reported give the same figures
/// (their own violation counts aside) and the same verdicts. The counts
/// show the reported twins did judge: `owner` breaks in some runs.
#[test]
fn monitors_left_out_of_a_run_would_have_measured_nothing() {
    let judge_only: Vec<Property> = [Property::Owner, Property::AcquiredOnlyWhenAsked]
        .into_iter()
        .filter(|p| !p.has_figures())
        .collect();
    assert_eq!(judge_only.len(), 2, "owner and asked count nothing");
    let mut reported_breaks = 0;
    for (name, text) in crate::shipped::scenario_files() {
        let scenario = Scenario::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        let mut reported = scenario.clone();
        for p in &judge_only {
            if !reported.hard.contains(p) && !reported.report.contains(p) {
                reported.report.push(*p);
            }
        }
        for seed in 0..12 {
            let lean = run_random(&scenario, seed);
            let full = run_random(&reported, seed);
            assert_eq!(lean.violation, full.violation, "{name} seed {seed}");
            let (mut a, mut b) = (lean.figures, full.figures);
            for p in &judge_only {
                if !scenario.report.contains(p) {
                    reported_breaks += b.violations.remove(p).unwrap_or(0);
                }
                a.violations.remove(p);
            }
            assert_eq!(a, b, "{name} seed {seed}");
        }
    }
    assert!(reported_breaks > 0, "the reported twins judged nothing");
}
