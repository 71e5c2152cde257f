//! How short the shrinker makes liveness and leak counterexamples: for each
//! shipped flawed variant that breaks `liveness` or `leaks` (and the seed
//! rows of `docs/VERDICTS.md` that do), the first failing seed of a random
//! sweep from seed 0, its length, and the shrunk length — by the shrinker
//! on the scenario as written (`Phases::KeepScenario`, `--keep-scenario`)
//! and by the default one, which may also reduce the scenario (fewer
//! servers, clients, rounds, shorter times) — with the replays, search
//! states and wall time each spent, the reductions made, the story's
//! ingredients, and the length no counterexample of the same story (on
//! the reduced scenario) can go below (the breadth-first search from the
//! initial state). The figures of `docs/VERDICTS.md`, "Shrinking".
//!
//! ```text
//! cargo run --release -p zkcheck-cli --example shrink_lengths -- [SCHEDULES] [JOBS] [CASE] [TIMES]
//! ```
//!
//! `CASE` keeps only the cases whose file, recipe or check contains it
//! (empty: all); `TIMES` multiplies every search budget of the shrinker
//! ([`Budget`], default 1: what `zkcheck check` spends), to see what a
//! larger one finds or proves.
//!
//! Each case is one scenario file with its recipe swapped for the flawed
//! one (where needed) and only the case's check hard. Wall times are
//! printed for the reader and decide nothing.

use std::path::Path;
use std::time::Instant;

use zkcheck::explore::{self, Options};
use zkcheck::monitor::Property::{self, Liveness, NoLeaks};
use zkcheck::progress::Progress;
use zkcheck::scenario::{property_name, Scenario, Search};
use zkcheck::{shrink_with, Budget, Phases};
use zksim::Event;

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

/// What the steps of a schedule are, by kind: a liveness or leak verdict
/// waits for every follower to apply every write, every request to be
/// taken and every message to be handled.
fn composition(events: &[Event]) -> String {
    let count = |f: &dyn Fn(&Event) -> bool| events.iter().filter(|e| f(e)).count();
    format!(
        "{} steps: {} follower applies, {} requests taken, {} messages handled, \
         {} timers, {} connects, {} ticks, {} faults",
        events.len(),
        count(&|e| matches!(e, Event::Apply { .. })),
        count(&|e| matches!(e, Event::Request { .. })),
        count(&|e| matches!(e, Event::Receive { .. })),
        count(&|e| matches!(e, Event::Timer { .. })),
        count(&|e| matches!(e, Event::Connect { .. })),
        count(&|e| matches!(e, Event::Tick)),
        count(&|e| matches!(e, Event::Fault(_))),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let schedules: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let only: String = args.next().unwrap_or_default();
    let times: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let d = Budget::default();
    let budget = Budget {
        ending_states: d.ending_states.saturating_mul(times),
        start_states: d.start_states.saturating_mul(times),
        scenario_states: d.scenario_states.saturating_mul(times),
        scenario_search_states: d.scenario_search_states.saturating_mul(times),
    };
    println!(
        "| scenario | recipe | check | seed | raw | scenario kept (replays, states, time) | \
         scenario reduced (replays, states, time) | reductions | no story shorter than | \
         ingredients |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---|---:|---|");
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let (mut before_time, mut after_time) = (0.0, 0.0);
    for &(file, swap, check) in CASES {
        let name = format!(
            "{file} {} {}",
            swap.map_or("", |(_, to)| to),
            property_name(check)
        );
        if !name.contains(&only) {
            continue;
        }
        let scenario = scenario(file, swap, check);
        let mut options = Options::from_scenario(&scenario);
        options.strategy = Search::Random;
        options.seed = 0;
        options.schedules = schedules;
        options.jobs = jobs;
        let found = explore::explorer(&options).explore(&scenario, &Progress::hidden());
        let recipe = swap.map_or(scenario.recipe.as_str(), |(_, to)| to);
        let Some(failure) = found.failure else {
            println!(
                "| `{file}` | `{recipe}` | {} | not found in {schedules} | | | | | | |",
                property_name(check)
            );
            continue;
        };
        let shrink = |phases| {
            let started = Instant::now();
            let shrunk = shrink_with(
                &scenario,
                &failure.schedule,
                &failure.violation,
                phases,
                budget,
                &|| false,
            );
            (shrunk, started.elapsed().as_secs_f64())
        };
        let (kept, kept_time) = shrink(Phases::KeepScenario);
        let (all, all_time) = shrink(Phases::All);
        assert_eq!(all.violation.property, check);
        before.push(kept.schedule.len());
        after.push(all.schedule.len());
        before_time += kept_time;
        after_time += all_time;
        println!("<!-- {} -->", composition(&all.schedule.events));
        let bound = match all.no_shorter_than {
            0 => "—".to_string(),
            n if n == all.schedule.len() => format!("{n} (shortest)"),
            n => n.to_string(),
        };
        let reductions = if all.reductions.is_empty() {
            "—".to_string()
        } else {
            all.reductions.join(", ")
        };
        println!(
            "| `{file}` | `{recipe}` | {} | {} | {} | {} ({}, {}, {kept_time:.2}s) | **{}** ({}, {}, {all_time:.2}s) | {reductions} | {bound} | {} |",
            property_name(check),
            failure.seed.unwrap_or(0),
            failure.schedule.len(),
            kept.schedule.len(),
            kept.attempts,
            kept.states,
            all.schedule.len(),
            all.attempts,
            all.states,
            all.ingredients.join(", "),
        );
    }
    let over = |lengths: &[usize]| lengths.iter().filter(|&&n| n > 25).count();
    let longest = |lengths: &[usize]| lengths.iter().max().copied().unwrap_or(0);
    println!(
        "\n{} cases; scenario kept: longest {} steps, {} over 25, {before_time:.1}s in all; \
         scenario reduced: longest {} steps, {} over 25, {after_time:.1}s in all",
        after.len(),
        longest(&before),
        over(&before),
        longest(&after),
        over(&after),
    );
}
