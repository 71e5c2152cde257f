//! Property runs under `cargo test`: proptest draws a fault plan (client
//! count, connection drops, expiries, pauses, follower partitions) and a
//! schedule seed, and each recipe must keep its hard properties. A failing
//! case prints the violation and a `replay:` token for `zkcheck replay`;
//! proptest shrinks the plan and keeps it in
//! `properties.proptest-regressions` beside this file.
//!
//! The proptest RNG is seeded so that CI judges the same plans every run;
//! set `PROPTEST_RNG_SEED` (or change `RNG_SEED`) to explore other plans.
//!
//! The last test runs the same harness on a broken recipe and asserts that
//! it fails with a token that replays to the same violation: the harness can
//! say no.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use zkcheck::check::Check;
use zkcheck::explore::replay::replay;
use zkcheck::monitor::Property;
use zkcheck::scenario::{property_name, Scenario};
use zkcheck::token::Token;
use zksim::FaultBudget;

const RNG_SEED: u64 = 0x2ac0_5eed;

/// What can go wrong in one run, and which schedule it follows.
#[derive(Clone, Debug)]
struct Plan {
    clients: usize,
    drops: u32,
    expiries: u32,
    pauses: u32,
    partitions: u32,
    seed: u64,
}

fn plans() -> impl Strategy<Value = Plan> {
    (
        2usize..=4,
        0u32..=2,
        0u32..=1,
        0u32..=1,
        0u32..=1,
        any::<u64>(),
    )
        .prop_map(
            |(clients, drops, expiries, pauses, partitions, seed)| Plan {
                clients,
                drops,
                expiries,
                pauses,
                partitions,
                seed,
            },
        )
}

/// A two-round scenario of `recipe` under `plan`'s faults, belief-level
/// `mutex` hard with fenced exclusion, liveness and leaks.
///
/// Every fault here is one a correct recipe survives with its beliefs
/// intact (`docs/SCENARIOS.md`, "Which faults break belief exclusion"):
/// expiry by silence (the client hears `Disconnected` at its read timeout,
/// before the leader's expiry), partitions with `sync_limit` (5) below the
/// session timeout (20), and pauses of 6 ticks — short enough that even a
/// pause covering the moment a cut-off client's read timeout would fire
/// ends before the leader expires it (6 ≤ T − ⌈2T/3⌉ + 1 = 7), and that a
/// pause and a partition together stay below T (6 + 5 ≤ 20).
fn scenario(recipe: &str, plan: &Plan) -> Scenario {
    let mut s = Scenario::lock(recipe, plan.clients);
    s.workload.rounds = 2;
    s.ensemble.pause_ticks = 6;
    s.ensemble.sync_limit = 5;
    s.faults = FaultBudget {
        connection_drops: plan.drops,
        expiries: plan.expiries,
        pauses: plan.pauses,
        crashes: 0,
        partitions: plan.partitions,
        kills: 0,
    };
    s.hard = vec![
        Property::MutualExclusion,
        Property::FencedExclusion,
        Property::Liveness,
        Property::NoLeaks,
    ];
    s.report = vec![];
    s
}

/// `Ok`, or the counterexample as the CLI prints it: what broke, the
/// shrunk trace and the token that replays it.
fn judge(s: &Scenario, seed: u64) -> Result<(), String> {
    let verdict = Check::from_scenario(s.clone())
        .seed(seed)
        .random(1)
        .jobs(1)
        .run();
    match verdict.counterexample {
        None => Ok(()),
        Some(c) => Err(c.to_string()),
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 300,
        rng_seed: RngSeed::Fixed(RNG_SEED),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sequential_lock_keeps_its_properties(plan in plans()) {
        let verdict = judge(&scenario("sequential", &plan), plan.seed);
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }

    #[test]
    fn naive_lock_keeps_its_properties(plan in plans()) {
        let verdict = judge(&scenario("naive", &plan), plan.seed);
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }

    #[test]
    fn rwlock_keeps_its_properties(plan in plans()) {
        let verdict = judge(&scenario("rwlock", &plan), plan.seed);
        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
    }
}

/// The same harness says no to a broken recipe, and its token replays the
/// same violation.
#[test]
fn the_harness_catches_a_broken_recipe_with_a_replayable_token() {
    let plan = Plan {
        clients: 3,
        drops: 0,
        expiries: 0,
        pauses: 0,
        partitions: 0,
        seed: 0,
    };
    let s = scenario("sequential-string-sort", &plan);
    let failure = (0..1000)
        .find_map(|seed| judge(&s, seed).err())
        .expect("string-sorting lock must break a hard property within 1000 seeds");
    assert!(
        failure.starts_with("VIOLATION of mutex") || failure.starts_with("VIOLATION of liveness"),
        "{failure}"
    );
    let token = failure.rsplit("replay: ").next().unwrap().trim();
    let decoded = Token::decode(token).expect("the printed token decodes");
    let replayed =
        replay(&decoded.scenario, &decoded.indices).expect("the token's schedule replays");
    let again = replayed
        .run
        .violation
        .expect("the replay breaks the same way");
    assert!(
        failure.starts_with(&format!("VIOLATION of {}", property_name(again.property))),
        "{failure}"
    );
    assert!(failure.contains(&again.explanation), "{failure}");
}
