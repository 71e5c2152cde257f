//! How short the shrinker makes liveness and leak counterexamples: for each
//! shipped flawed variant that breaks `liveness` or `leaks` (and the seed
//! rows of `docs/VERDICTS.md` that do), the first failing seed of a random
//! sweep from seed 0, its length, and the shrunk length, with the replays
//! the shrinker spent. The figures of `docs/VERDICTS.md`, "Shrinking".
//!
//! ```text
//! cargo run --release -p zkcheck-cli --example shrink_lengths -- [SCHEDULES] [JOBS]
//! ```
//!
//! Each case is one scenario file with its recipe swapped for the flawed
//! one (where needed) and only the case's check hard. Wall times are
//! printed for the reader and decide nothing.

use std::path::Path;
use std::time::Instant;

use zkcheck::explore::{self, Options};
use zkcheck::monitor::Property::{self, Liveness, NoLeaks};
use zkcheck::progress::Progress;
use zkcheck::scenario::{property_name, Scenario, StrategyKind};
use zkcheck::shrink;

/// A recipe swapped for another: `(from, to)`, every client group of it.
type Swap = Option<(&'static str, &'static str)>;

/// (scenario file under `scenarios/`, recipe to run in place of the file's
/// own, check).
const CASES: &[(&str, Swap, Property)] = &[
    ("lock-sequential-forget-release.toml", None, Liveness),
    ("lock-sequential-forget-release.toml", None, NoLeaks),
    (
        "lock-sequential-faults.toml",
        Some(("sequential", "sequential-blind-retry")),
        Liveness,
    ),
    (
        "lock-sequential-faults.toml",
        Some(("sequential", "sequential-blind-retry")),
        NoLeaks,
    ),
    (
        "lock-sequential-faults.toml",
        Some(("sequential", "sequential-forget-release")),
        Liveness,
    ),
    (
        "lock-naive.toml",
        Some(("naive", "naive-no-rewatch")),
        Liveness,
    ),
    (
        "queue.toml",
        Some(("queue-consumer", "queue-consumer-forget-take")),
        Liveness,
    ),
    ("seeds/ouyang-lock-faults.toml", None, NoLeaks),
    ("seeds/ouyang-lock-waiter-expiry.toml", None, Liveness),
    ("seeds/ouyang-lock-keep-faults.toml", None, Liveness),
    ("seeds/ouyang-rwlock-faults.toml", None, NoLeaks),
    ("seeds/apache-writelock-drop.toml", None, Liveness),
    ("seeds/writelock-nofaults.toml", None, Liveness),
    ("seeds/writelock-keep-drop.toml", None, Liveness),
    ("seeds/zklock-nofaults.toml", None, Liveness),
    ("seeds/zklock-root-race.toml", None, Liveness),
];

fn scenario(file: &str, swap: Option<(&str, &str)>, check: Property) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(file);
    let mut s = Scenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    if let Some((from, to)) = swap {
        if s.recipe == from {
            s.recipe = to.to_string();
        }
        for g in &mut s.groups {
            if g.recipe == from {
                g.recipe = to.to_string();
            }
        }
    }
    s.hard = vec![check];
    s.report = Vec::new();
    s.validate().unwrap_or_else(|e| panic!("{file}: {e}"));
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let schedules: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    println!("| scenario | recipe | check | first failing seed | steps (raw → shrunk) | replays | shrink time |");
    println!("|---|---|---|---|---|---|---|");
    let mut shrunk_lengths = Vec::new();
    for &(file, swap, check) in CASES {
        let scenario = scenario(file, swap, check);
        let mut options = Options::from_scenario(&scenario);
        options.strategy = StrategyKind::Random;
        options.seed = 0;
        options.schedules = schedules;
        options.jobs = jobs;
        let found = explore::strategy(&options).explore(&scenario, &Progress::hidden());
        let recipe = swap.map_or(scenario.recipe.as_str(), |(_, to)| to);
        let Some(failure) = found.failure else {
            println!(
                "| `{file}` | `{recipe}` | {} | not found in {schedules} | — | — | — |",
                property_name(check)
            );
            continue;
        };
        let started = Instant::now();
        let shrunk = shrink(&scenario, &failure.schedule, &failure.violation);
        let elapsed = started.elapsed().as_secs_f64();
        assert_eq!(shrunk.violation.property, check);
        shrunk_lengths.push(shrunk.schedule.len());
        println!(
            "| `{file}` | `{recipe}` | {} | {} | {} → **{}** | {} | {elapsed:.2}s |",
            property_name(check),
            failure.seed.unwrap_or(0),
            failure.schedule.len(),
            shrunk.schedule.len(),
            shrunk.attempts,
        );
    }
    let over = shrunk_lengths.iter().filter(|&&n| n > 25).count();
    println!(
        "\n{} cases shrunk, longest {} steps, {over} over 25 steps",
        shrunk_lengths.len(),
        shrunk_lengths.iter().max().copied().unwrap_or(0)
    );
}
