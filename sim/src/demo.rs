//! A fixed multi-client workload with faults, driven by a seeded RNG: the
//! determinism demonstration behind `examples/trace.rs` and
//! `tests/golden.rs` (same seed, same trace, same hash, on any machine).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fingerprint::StableHasher;
use crate::proto::{CreateMode, Op, SessionEvent};
use crate::script::{Observed, Scripted, Step};
use crate::world::{Config, Event, FaultBudget, Happening, World};

/// The world the demo runs: 3 servers, 4 scripted clients that build a
/// small tree under `/demo`, watch it, hold ephemerals and close, with a
/// budget of every fault kind.
pub fn world() -> World<Scripted> {
    World::new(config(), clients())
}

pub fn config() -> Config {
    Config {
        servers: 3,
        session_timeout: 10,
        pause_ticks: 8,
        sync_limit: 3,
        max_time: 60,
        faults: FaultBudget {
            connection_drops: 2,
            expiries: 1,
            pauses: 1,
            crashes: 1,
            partitions: 1,
            kills: 1,
        },
        pins: Vec::new(),
        parents: Vec::new(),
    }
}

fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: Vec::new(),
        mode,
    }
}

pub fn clients() -> Vec<Scripted> {
    use CreateMode::*;
    vec![
        Scripted::new(vec![
            Step::Send(create("/demo", Persistent)),
            Step::SendNoWait(create("/demo/job-", PersistentSequential)),
            Step::SendNoWait(create("/demo/job-", PersistentSequential)),
            Step::Send(Op::GetChildren {
                path: "/demo".into(),
                watch: true,
            }),
            Step::WaitWatch,
            Step::Send(Op::GetData {
                path: "/demo".into(),
                watch: true,
            }),
            Step::Close,
        ]),
        Scripted::new(vec![
            Step::Sleep(2),
            Step::Send(create("/demo/lock-", EphemeralSequential)),
            Step::Send(Op::Exists {
                path: "/demo/x".into(),
                watch: true,
            }),
            Step::Send(Op::SetData {
                path: "/demo".into(),
                data: b"1".to_vec(),
                version: -1,
            }),
            Step::Sleep(3),
            Step::Close,
        ]),
        Scripted::new(vec![
            Step::Sleep(1),
            Step::Send(Op::Sync { path: "/".into() }),
            Step::Send(Op::GetChildren {
                path: "/demo".into(),
                watch: false,
            }),
            Step::Send(create("/demo/x", Persistent)),
            Step::Send(Op::Delete {
                path: "/demo/x".into(),
                version: -1,
            }),
            Step::WaitSession(SessionEvent::Disconnected),
            Step::Send(Op::GetData {
                path: "/demo".into(),
                watch: false,
            }),
        ]),
        Scripted::new(vec![
            Step::Send(Op::Exists {
                path: "/demo".into(),
                watch: true,
            }),
            Step::WaitWatch,
            Step::Send(Op::GetChildren {
                path: "/demo".into(),
                watch: true,
            }),
            Step::Sleep(5),
            Step::Send(create("/demo/e3", Ephemeral)),
            Step::Close,
        ]),
    ]
}

/// What a demo run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub steps: usize,
    /// Hash of every step's event and happenings, then the final state.
    pub trace_hash: u64,
    pub final_fingerprint: u64,
}

/// Run the demo under `seed` for at most `max_steps` steps: at each step a
/// ChaCha8 RNG seeded with `seed` picks an enabled event (see [`pick`]).
/// `on_step` sees each step (index, world after it, event, happenings).
pub fn run(
    seed: u64,
    max_steps: usize,
    mut on_step: impl FnMut(usize, &World<Scripted>, &Event, &[Happening<Observed>]),
) -> Summary {
    use std::hash::{Hash, Hasher};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut world = world();
    let mut enabled = Vec::new();
    let mut log = Vec::new();
    let mut trace = StableHasher::new();
    let mut steps = 0;
    while steps < max_steps {
        enabled.clear();
        world.enabled(&mut enabled);
        if enabled.is_empty() {
            break;
        }
        let event = pick(&mut rng, &mut enabled);
        log.clear();
        world.step(&event, &mut log);
        event.hash(&mut trace);
        log.hash(&mut trace);
        on_step(steps, &world, &event, &log);
        steps += 1;
    }
    let final_fingerprint = world.fingerprint();
    final_fingerprint.hash(&mut trace);
    Summary {
        steps,
        trace_hash: trace.finish(),
        final_fingerprint,
    }
}

/// One in [`FAULT_ODDS`] steps injects a fault (when one is possible);
/// otherwise the step is picked uniformly among the other enabled events.
/// Uniform choice over everything would spend the whole fault budget in the
/// first few steps, before the clients did anything worth disturbing.
pub fn pick(rng: &mut ChaCha8Rng, enabled: &mut Vec<Event>) -> Event {
    let faults = enabled
        .iter()
        .filter(|e| matches!(e, Event::Fault(_)))
        .count();
    let others = enabled.len() - faults;
    // `enabled` is sorted, faults last.
    let index = if faults > 0 && (others == 0 || rng.random_range(0..FAULT_ODDS) == 0) {
        others + rng.random_range(0..faults)
    } else {
        rng.random_range(0..others)
    };
    enabled.swap_remove(index)
}

/// See [`pick`].
pub const FAULT_ODDS: u32 = 20;
