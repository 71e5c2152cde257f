//! The herd figures over random schedules of the naive lock: whatever the
//! interleaving, the number of rounds and the follower lag, one release of
//! an N-client lock can wake at most its N−1 waiters, and every `NodeDeleted`
//! wakeup of a fault-free run is charged to exactly one release (issue 15:
//! path-only attribution once charged a release with 4 wakeups of 4 clients);
//! a create wakes each client at most once, and no more than the clients.
//! Back to back under the timing model (issue 35), the naive lock's herd is
//! charged to creates and its max per lock write is near N−1; the
//! predecessor-watch lock's stays at 1.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::SeedableRng;
use zkcheck::explore::random::RandomChooser;
use zkcheck::monitor::herd::LockFigures;
use zkcheck::monitor::herd::WakeupLedger;
use zkcheck::scenario::Scenario;
use zkrecipes::AppEvent;
use zksim::{Delivery, EventType, FaultBudget, Happening};

/// The whole history of one random schedule: what starting the world did,
/// then every step.
fn history(s: &Scenario, seed: u64) -> Vec<Happening<AppEvent>> {
    let mut history = Vec::new();
    let clients = (0..s.clients)
        .map(|i| (s.recipe_info().unwrap().build)(&s.params(i)))
        .collect();
    let _ = zksim::World::new_with_log(s.config(), clients, &mut history);
    let mut chooser = RandomChooser::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    zkcheck::run::drive(s, &mut chooser, |_, _, log| history.extend_from_slice(log));
    history
}

/// `NodeDeleted` events delivered to a client between its `Requested` and
/// its `Acquired`/`GaveUp`, counted straight from the history.
fn node_deleted_wakeups(history: &[Happening<AppEvent>]) -> usize {
    wakeups_of(history, EventType::NodeDeleted)
}

/// Events of `kind` delivered to a waiting client, straight from the history.
fn wakeups_of(history: &[Happening<AppEvent>], kind: EventType) -> usize {
    let mut waiting = BTreeSet::new();
    let mut n = 0;
    for h in history {
        match h {
            Happening::App { client, event } => match event {
                AppEvent::Requested { .. } => {
                    waiting.insert(*client);
                }
                AppEvent::Acquired { .. } | AppEvent::GaveUp => {
                    waiting.remove(client);
                }
                _ => {}
            },
            Happening::Delivered {
                client,
                delivery: Delivery::Watch(e),
            } if e.kind == kind && waiting.contains(client) => n += 1,
            _ => {}
        }
    }
    n
}

fn naive(clients: usize, rounds: u32, servers: usize, faults: FaultBudget) -> Scenario {
    let mut s = Scenario::lock("naive", clients);
    s.workload.rounds = rounds;
    s.ensemble.servers = servers;
    s.faults = faults;
    s
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 200,
        rng_seed: RngSeed::Fixed(15),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn no_release_wakes_more_than_its_waiters_and_every_wakeup_is_charged(
        clients in 2usize..=6,
        rounds in 1u32..=3,
        servers in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let s = naive(clients, rounds, servers, FaultBudget::default());
        let history = history(&s, seed);
        let f = LockFigures::from_log(&history);
        prop_assert_eq!(f.acquisitions, clients * rounds as usize, "the run finished");
        prop_assert!(
            f.max_wakeups_per_release() < clients,
            "a release woke {} of {} clients: {:?}", f.max_wakeups_per_release(), clients,
            f.wakeups_per_release
        );
        let charged: usize = f.wakeups_per_release.iter().sum();
        prop_assert_eq!(charged, node_deleted_wakeups(&history));
        let mut ledger = WakeupLedger::new();
        history.iter().for_each(|h| { ledger.observe(h); });
        for (i, c) in ledger.creates().iter().enumerate() {
            let woken: BTreeSet<_> = c.woken.iter().map(|(c, _)| *c).collect();
            prop_assert_eq!(woken.len(), c.woken.len(), "create #{} woke {:?}", i, c.woken);
            prop_assert!(c.others_woken() < clients, "create #{} woke {:?}", i, c.woken);
        }
        let to_creates: usize = f.wakeups_per_create.iter().sum();
        prop_assert_eq!(to_creates, wakeups_of(&history, EventType::NodeCreated));
    }

    /// Connection drops send clients to other (lagging) servers, whose
    /// catching up wakes them for nodes the leader deleted before. N−1 is no
    /// bound here: a releaser whose delete's reply was lost asks again, may
    /// watch its own node, and is woken with the others when its clean-up
    /// deletes it. What stays true: one deletion wakes a client once, so no
    /// release is charged twice to one client, and nothing is charged that
    /// was not delivered.
    #[test]
    fn under_connection_drops_one_release_wakes_each_client_at_most_once(
        clients in 2usize..=5,
        rounds in 1u32..=3,
        seed in any::<u64>(),
    ) {
        let drops = FaultBudget { connection_drops: 3, ..FaultBudget::default() };
        let s = naive(clients, rounds, 3, drops);
        let history = history(&s, seed);
        let mut ledger = WakeupLedger::new();
        history.iter().for_each(|h| { ledger.observe(h); });
        for (i, r) in ledger.releases().iter().enumerate() {
            let woken: BTreeSet<_> = r.woken.iter().map(|(c, _)| *c).collect();
            prop_assert_eq!(woken.len(), r.woken.len(), "release #{} woke {:?}", i, r.woken);
        }
        let charged: usize = ledger.releases().iter().map(|r| r.woken.len()).sum();
        prop_assert!(charged <= node_deleted_wakeups(&history));
    }
}

/// Issue 15's seed, end to end: `scenarios/lock-naive.toml`'s seed 10 has a
/// client that releases and asks again before its delete is taken; its
/// next-round wakeup is not its own release's.
#[test]
fn lock_naive_seed_10_charges_no_release_with_four_wakeups() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/lock-naive.toml");
    let s = Scenario::from_file(std::path::Path::new(path)).unwrap();
    let f = LockFigures::from_log(&history(&s, 10));
    assert_eq!(f.acquisitions, 8);
    assert_eq!(
        f.max_wakeups_per_release(),
        3,
        "{:?}",
        f.wakeups_per_release
    );
    let out = zkcheck::explore::random::run_random(&s, 10);
    assert_eq!(out.figures.max_wakeups_per_release(), 3);
}

/// Issue 35, both ways, under the calibrated timing model with no hold
/// (`compare --hold-ticks 0`): the naive lock's waiters mostly find the node
/// already released and watch for its creation, so the herd is charged to
/// creates — one write wakes nearly every other client — and the monitor
/// calls it a herd; the predecessor-watch lock wakes at most one waiter per
/// write and passes.
#[test]
fn back_to_back_the_naive_herd_is_charged_to_creates() {
    use zkcheck::monitor::Property;
    use zkcheck::scenario::Timing;
    use zkcheck_cli::timing::run_timed;
    const N: usize = 16;
    for seed in 0..2 {
        let mut s = zkcheck_cli::compare::scenario_timed("naive", N, false, Timing::default());
        s.workload.hold_ticks = 0;
        let (out, _) = run_timed(&s, seed);
        let f = &out.figures;
        assert_eq!(f.acquisitions, N as u64, "seed {seed}: the run finished");
        assert!(
            f.max_wakeups_per_write() >= N as u64 - 2,
            "seed {seed}: max {} per write, {:?}",
            f.max_wakeups_per_write(),
            f.wakeups_per_write
        );
        assert!(
            f.max_wakeups_per_release() <= 1,
            "the releases alone show no herd"
        );
        assert!(f.violations.contains_key(&Property::NoHerd), "seed {seed}");
        let mut s = zkcheck_cli::compare::scenario_timed("sequential", N, false, Timing::default());
        s.workload.hold_ticks = 0;
        let (out, _) = run_timed(&s, seed);
        let f = &out.figures;
        assert_eq!(f.acquisitions, N as u64, "seed {seed}: the run finished");
        assert_eq!(f.max_wakeups_per_write(), 1, "seed {seed}");
        assert!(!f.violations.contains_key(&Property::NoHerd), "seed {seed}");
    }
}
