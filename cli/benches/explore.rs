//! Exploration speed for the sequential lock with 3 clients:
//! random schedules per second and BFS distinct states per second, on one
//! and two threads; and random-mode events per second on
//! `scenarios/lock-sequential-faults.toml` (issue 9's target: ≥ 3 M per
//! core). docs/PERFORMANCE.md has the full-size figures.
//!
//! `cargo bench -p zkcheck-cli --bench explore`

/// The allocator the `zkcheck` binary uses, so that figures match the CLI.
#[global_allocator]
static ALLOCATOR: zkcheck_cli::allocator::Mimalloc = zkcheck_cli::allocator::Mimalloc;

mod reference;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

use zkcheck::explore::exhaustive::Exhaustive;
use zkcheck::explore::random::run_random;
use zkcheck::explore::Explorer;
use zkcheck::progress::Progress;
use zkcheck::scenario::Scenario;

fn random_schedules(c: &mut Criterion) {
    let scenario = Scenario::lock("sequential", 3);
    let mut group = c.benchmark_group("sequential-3");
    group.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    group.bench_function("random schedule", |b| {
        b.iter(|| {
            seed += 1;
            black_box(run_random(&scenario, seed))
        })
    });
    group.finish();
}

/// Random mode's hot path: one batch of seeded runs of the faults scenario
/// per iteration, its throughput counted in events (steps), so criterion
/// prints events per second on one thread.
fn random_events(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/lock-sequential-faults.toml"
    );
    let scenario = Scenario::from_file(std::path::Path::new(path)).expect("the scenario loads");
    const SEEDS: u64 = 200;
    let events: usize = (0..SEEDS)
        .map(|seed| run_random(&scenario, seed).steps)
        .sum();
    let mut group = c.benchmark_group("lock-sequential-faults");
    group.throughput(Throughput::Elements(events as u64));
    group.bench_function("random events, 200 seeds", |b| {
        b.iter(|| {
            (0..SEEDS)
                .map(|seed| black_box(run_random(&scenario, seed)).steps)
                .sum::<usize>()
        })
    });
    group.finish();
}

fn bfs_states(c: &mut Criterion) {
    let mut scenario = Scenario::lock("sequential", 3);
    scenario.ensemble.servers = 1;
    scenario.ensemble.max_time = 1;
    scenario.workload.hold_ticks = 1;
    scenario.workload.think_ticks = 0;
    // The full space of 3 clients is past 10^6 states: measure the first
    // 50 000, without symmetry or partial-order reduction (the plain
    // explorer's cost per state).
    let mut bfs = Exhaustive::bfs(200).with_symmetry(false).with_por(false);
    bfs.max_states = 50_000;
    let states = bfs
        .explore(&scenario, &Progress::hidden())
        .distinct_states
        .unwrap_or(1);
    let mut group = c.benchmark_group("sequential-3");
    group.sample_size(10);
    group.throughput(Throughput::Elements(states));
    group.bench_function("bfs states", |b| {
        b.iter(|| black_box(bfs.explore(&scenario, &Progress::hidden())))
    });
    let mut parallel = Exhaustive::bfs(200)
        .with_jobs(2)
        .with_symmetry(false)
        .with_por(false);
    parallel.max_states = bfs.max_states;
    group.bench_function("bfs states, 2 jobs", |b| {
        b.iter(|| black_box(parallel.explore(&scenario, &Progress::hidden())))
    });
    // The same number of distinct states with symmetry on: each stands
    // for up to 3! states of the plain search, at a higher cost per key.
    let mut symmetric = Exhaustive::bfs(200).with_por(false);
    symmetric.max_states = bfs.max_states;
    group.bench_function("bfs states, symmetry", |b| {
        b.iter(|| black_box(symmetric.explore(&scenario, &Progress::hidden())))
    });
    group.finish();
}

/// Partial-order reduction on the reference scenario of docs/PERFORMANCE.md
/// (`lock-sequential-small.toml` with 3 clients and no drop), exhausted
/// under symmetry: BFS and DFS with sleep sets on and off. The same
/// distinct states either way; the events stepped are printed once, the
/// time per whole search is criterion's.
fn por_reference(c: &mut Criterion) {
    let scenario = reference::reference();
    let mut group = c.benchmark_group("por-reference-3");
    group.sample_size(10);
    for (name, dfs, por) in [
        ("bfs, por", false, true),
        ("bfs, no por", false, false),
        ("dfs, por", true, true),
        ("dfs, no por", true, false),
    ] {
        let search = if dfs {
            Exhaustive::dfs(200)
        } else {
            Exhaustive::bfs(200)
        }
        .with_por(por);
        let r = search.explore(&scenario, &Progress::hidden());
        eprintln!(
            "por-reference-3/{name}: {:?} distinct states, {} events, {}",
            r.distinct_states,
            r.events,
            r.por.as_deref().unwrap_or("")
        );
        group.bench_function(name, |b| {
            b.iter(|| black_box(search.explore(&scenario, &Progress::hidden())))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    random_schedules,
    random_events,
    bfs_states,
    por_reference
);
criterion_main!(benches);
