//! How fast the world steps and fingerprints: the explorer's hot path.
//!
//! ```text
//! cargo bench -p zksim --bench world
//! ```
//!
//! `replay` steps the demo workload's seed-42 schedule from a fresh world
//! (throughput = simulated events per second, clone of the start state
//! included); `fingerprint` and `clone` act on the world halfway through
//! that run; `enabled` lists its enabled events.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zksim::demo;
use zksim::script::Scripted;
use zksim::{Event, World};

fn schedule() -> Vec<Event> {
    let mut events = Vec::new();
    demo::run(42, 10_000, |_, _, event, _| events.push(event.clone()));
    events
}

fn halfway(events: &[Event]) -> World<Scripted> {
    let mut world = demo::world();
    let mut log = Vec::new();
    for event in &events[..events.len() / 2] {
        world.step(event, &mut log);
    }
    world
}

fn bench(c: &mut Criterion) {
    let events = schedule();
    let start = demo::world();
    let middle = halfway(&events);

    let mut group = c.benchmark_group("world");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("replay", |b| {
        let mut log = Vec::with_capacity(64);
        b.iter(|| {
            let mut world = start.clone();
            for event in &events {
                log.clear();
                world.step(black_box(event), &mut log);
            }
            world
        })
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("fingerprint", |b| {
        b.iter(|| black_box(&middle).fingerprint())
    });
    group.bench_function("clone", |b| b.iter(|| black_box(&middle).clone()));
    group.bench_function("enabled", |b| {
        let mut out = Vec::with_capacity(32);
        b.iter(|| {
            out.clear();
            black_box(&middle).enabled(&mut out);
            out.len()
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! { name = benches; config = config(); targets = bench }
criterion_main!(benches);
