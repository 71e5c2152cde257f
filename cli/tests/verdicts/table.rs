//! The seed articles' verdicts: one row per (ported recipe × check), the
//! scenario in `scenarios/seeds/` that judges it, and what the checker is
//! expected to say. Shared by `tests/seed_verdicts.rs` (which asserts each
//! row) and `examples/verdicts.rs` (which regenerates `docs/VERDICTS.md`'s
//! figures).

#![allow(dead_code)]

use std::path::Path;

use zkcheck::explore::{self, replay::replay, Exploration, Options};
use zkcheck::monitor::{Property, Violation};
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::shrink;
use zkcheck::token::Token;

/// What the checker should say about a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A random sweep finds a violation within this many seeds.
    Violated { within: u64 },
    /// No violation in any schedule explored.
    Holds,
}

/// One verdict row.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub recipe: &'static str,
    pub check: Property,
    /// File under `scenarios/seeds/`.
    pub scenario: &'static str,
    pub expect: Expect,
}

const fn violated(
    recipe: &'static str,
    check: Property,
    scenario: &'static str,
    within: u64,
) -> Row {
    Row {
        recipe,
        check,
        scenario,
        expect: Expect::Violated { within },
    }
}

const fn holds(recipe: &'static str, check: Property, scenario: &'static str) -> Row {
    Row {
        recipe,
        check,
        scenario,
        expect: Expect::Holds,
    }
}

use Property::*;

/// Every row of the table, in `docs/VERDICTS.md` order.
pub const ROWS: &[Row] = &[
    violated(
        "seed001-ouyang-lock",
        MutualExclusion,
        "ouyang-lock-expiry.toml",
        1000,
    ),
    holds("seed001-ouyang-lock", Fifo, "ouyang-lock-faults.toml"),
    holds("seed001-ouyang-lock", NoHerd, "ouyang-lock-faults.toml"),
    violated(
        "seed001-ouyang-lock",
        NoLeaks,
        "ouyang-lock-faults.toml",
        3000,
    ),
    violated(
        "seed001-ouyang-lock",
        Liveness,
        "ouyang-lock-waiter-expiry.toml",
        1000,
    ),
    violated(
        "seed001-ouyang-lock-keep",
        Liveness,
        "ouyang-lock-keep-faults.toml",
        1000,
    ),
    violated(
        "seed001-ouyang-rwlock",
        MutualExclusion,
        "ouyang-rwlock-expiry.toml",
        1000,
    ),
    holds("seed001-ouyang-rwlock", NoHerd, "ouyang-rwlock-faults.toml"),
    violated(
        "seed001-ouyang-rwlock",
        NoLeaks,
        "ouyang-rwlock-faults.toml",
        3000,
    ),
    violated(
        "seed003-apache-writelock",
        MutualExclusion,
        "apache-writelock-nofaults.toml",
        1000,
    ),
    violated(
        "seed003-apache-writelock",
        Fifo,
        "apache-writelock-fifo.toml",
        1000,
    ),
    violated(
        "seed003-apache-writelock",
        Liveness,
        "apache-writelock-drop.toml",
        1000,
    ),
    violated(
        "seed003-apache-writelock",
        NoHerd,
        "apache-writelock-herd.toml",
        1000,
    ),
    violated(
        "seed002-writelock",
        Liveness,
        "writelock-nofaults.toml",
        1000,
    ),
    violated(
        "seed002-writelock",
        MutualExclusion,
        "writelock-expiry.toml",
        1000,
    ),
    violated("seed002-writelock", Fifo, "writelock-faults.toml", 1000),
    holds("seed002-writelock", NoHerd, "writelock-faults.toml"),
    violated(
        "seed002-writelock",
        AcquiredOnlyWhenAsked,
        "writelock-asked.toml",
        1000,
    ),
    violated(
        "seed002-writelock-keep",
        Liveness,
        "writelock-keep-drop.toml",
        1000,
    ),
    violated("seed002-queue", QueueSafety, "queue-drop.toml", 1000),
    holds("seed002-queue", QueueSafety, "queue-nofaults.toml"),
    violated(
        "seed002-queue-retry",
        QueueSafety,
        "queue-retry-drop.toml",
        1000,
    ),
    violated(
        "seed002-queue-retry",
        QueueSafety,
        "queue-retry-lost.toml",
        1000,
    ),
    violated(
        "seed002-queue-poll",
        QueueSafety,
        "queue-poll-drop.toml",
        1000,
    ),
    holds(
        "seed002-queue-poll",
        QueueSafety,
        "queue-poll-nofaults.toml",
    ),
    violated(
        "seed002-curator-mutex",
        MutualExclusion,
        "curator-mutex-pause.toml",
        1000,
    ),
    holds(
        "seed002-curator-mutex",
        FencedExclusion,
        "curator-mutex-pause-fenced.toml",
    ),
    holds("seed002-curator-mutex", Fifo, "curator-mutex-faults.toml"),
    holds("seed002-curator-mutex", NoHerd, "curator-mutex-faults.toml"),
    holds(
        "seed002-curator-mutex",
        Liveness,
        "curator-mutex-faults.toml",
    ),
    holds(
        "seed002-curator-mutex",
        NoLeaks,
        "curator-mutex-faults.toml",
    ),
    violated(
        "seed002-curator-leader",
        Election,
        "curator-leader-pause.toml",
        1000,
    ),
    violated(
        "seed002-curator-leader",
        Election,
        "curator-leader-faults.toml",
        3000,
    ),
    holds(
        "seed002-curator-leader",
        Election,
        "curator-leader-drops.toml",
    ),
    holds(
        "seed002-curator-leader",
        Election,
        "curator-leader-expiry.toml",
    ),
    violated(
        "seed004-zklock",
        MutualExclusion,
        "zklock-expiry.toml",
        1000,
    ),
    violated("seed004-zklock", Liveness, "zklock-nofaults.toml", 1000),
    violated("seed004-zklock", Liveness, "zklock-root-race.toml", 1000),
    violated("seed004-zklock", MutualExclusion, "zklock-drop.toml", 3000),
    holds("seed004-zklock", NoHerd, "zklock-faults.toml"),
];

/// The row judging `check` on scenario file `scenario` (panics on a typo in a test).
pub fn row(scenario: &str, check: Property) -> Row {
    *ROWS
        .iter()
        .find(|r| r.scenario == scenario && r.check == check)
        .unwrap_or_else(|| panic!("no verdict row {scenario} × {check:?}"))
}

/// The row's scenario, with only the row's check hard (so a violation of
/// another property never stands in for the one the row is about).
pub fn scenario(row: &Row) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/seeds")
        .join(row.scenario);
    let mut s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.recipe, row.recipe,
        "{} judges another recipe",
        row.scenario
    );
    assert!(
        s.hard.contains(&row.check),
        "{} does not make {:?} hard",
        row.scenario,
        row.check
    );
    s.hard = vec![row.check];
    s.report = Vec::new();
    s
}

/// A scenario file of `scenarios/seeds/` with its `recipe = "…"` line
/// swapped for `recipe` — the same ensemble, faults and aims run by another
/// recipe (a correct twin of a port).
pub fn scenario_with_recipe(file: &str, recipe: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/seeds")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let swapped: String = text
        .lines()
        .map(|l| {
            if l.starts_with("recipe = ") {
                format!("recipe = \"{recipe}\"\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(
        swapped, text,
        "{file} names its recipe on a `recipe = ` line"
    );
    Scenario::parse(&swapped, file).unwrap_or_else(|e| panic!("{e}"))
}

/// A random sweep of `schedules` seeds from seed 0 on `jobs` threads.
pub fn sweep(scenario: &Scenario, schedules: u64, jobs: usize) -> Exploration {
    let mut options = Options::from_scenario(scenario);
    options.strategy = Search::Random;
    options.seed = 0;
    options.schedules = schedules;
    options.jobs = jobs;
    explore::explorer(&options).explore(scenario, &Progress::hidden())
}

/// A violation found, shrunk and turned into a replay token.
#[derive(Clone, Debug)]
pub struct Found {
    /// The first failing seed (seeds run from 0).
    pub seed: u64,
    /// Steps of the failing schedule before shrinking.
    pub raw_steps: usize,
    /// Steps after shrinking.
    pub shrunk_steps: usize,
    pub violation: Violation,
    pub token: String,
    /// The shrunk run's trace, as `zkcheck replay --trace` prints it.
    pub trace: String,
}

/// Sweep, then shrink the first failure and replay it through its token.
/// `None` when no schedule of the sweep fails.
pub fn find(scenario: &Scenario, schedules: u64, jobs: usize) -> Option<Found> {
    let failure = sweep(scenario, schedules, jobs).failure?;
    let shrunk = shrink(scenario, &failure.schedule, &failure.violation);
    // The shrunk schedule runs on its own scenario (maybe a smaller one).
    let indices = shrunk
        .schedule
        .to_indices(&shrunk.scenario)
        .expect("a shrunk schedule replays strictly");
    let token = Token::new(shrunk.scenario.clone(), indices).encode();
    // Replay through the token, as a reader would.
    let decoded = Token::decode(&token).expect("our own token decodes");
    let replayed = replay(&decoded.scenario, &decoded.indices).expect("the token replays");
    let violation = replayed
        .run
        .violation
        .clone()
        .expect("the token's run fails");
    assert_eq!(
        violation, shrunk.violation,
        "the token reproduces the shrunk violation"
    );
    Some(Found {
        seed: failure.seed.unwrap_or(0),
        raw_steps: failure.schedule.len(),
        shrunk_steps: replayed.run.schedule.len(),
        violation,
        token,
        trace: replayed.trace.text,
    })
}
