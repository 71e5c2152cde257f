//! Shared by `shards.rs` and `shards_cli.rs`: the scenarios, one shard run
//! through the library as `check --shard k/n --json` runs it, and the
//! comparison of a merge with one unsharded run.

use zkcheck::explore::Options;
use zkcheck::progress::Progress;
use zkcheck::scenario::{Scenario, Search};
use zkcheck_cli::merge::Input;
use zkcheck_cli::shard::Shard;
use zkcheck_cli::summary::Summary;

pub fn shipped(name: &str) -> String {
    format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A correct recipe under faults, and its twin that ignores its session.
pub const CORRECT: &str = "lock-sequential-faults.toml";
pub const BROKEN: &str = "lock-sequential-ignore-session.toml";

pub fn whole(file: &str, strategy: Search, seed: u64, schedules: u64) -> (Scenario, Options) {
    let scenario = Scenario::from_file(std::path::Path::new(&shipped(file))).unwrap();
    let mut options = Options::from_scenario(&scenario);
    options.strategy = strategy;
    options.seed = seed;
    options.schedules = schedules;
    options.jobs = 2;
    (scenario, options)
}

/// One shard through the library, as `check --shard k/n --json` runs it.
pub fn run_shard(
    scenario: &Scenario,
    whole: &Options,
    shard: Shard,
    progress: &Progress,
) -> Summary {
    let explored = shard.narrow(whole);
    let verdict = zkcheck::verdict::run(scenario, &explored, progress);
    Summary::of_check(scenario, whole, shard, &verdict)
}

pub fn shards(scenario: &Scenario, whole: &Options, n: u64) -> Vec<Input> {
    (0..n)
        .map(|index| Input {
            origin: format!("shard-{index}.json"),
            summary: run_shard(
                scenario,
                whole,
                Shard { index, count: n },
                &Progress::hidden(),
            ),
        })
        .collect()
}

/// The merge describes the same run as `one`, field by field.
#[track_caller]
pub fn assert_same_run(merged: &Summary, one: &Summary) {
    assert_eq!(merged.verdict, one.verdict);
    assert_eq!(merged.counterexample, one.counterexample);
    assert_eq!(merged.schedules, one.schedules);
    assert_eq!(merged.events, one.events);
    assert_eq!(merged.runs_cut, one.runs_cut);
    assert_eq!(merged.figures, one.figures);
    let (m, o) = (merged.seeds.as_ref().unwrap(), one.seeds.as_ref().unwrap());
    assert_eq!(
        (m.sweep, &m.completed, &m.missing),
        (o.sweep, &o.completed, &o.missing)
    );
    assert_eq!(merged.scenario, one.scenario);
    assert_eq!(merged.options, one.options);
}
