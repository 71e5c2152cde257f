//! The registered lock recipes on a real ZooKeeper: the correct ones finish
//! with mutual exclusion in the order the driver saw things, and the herd
//! figures tell the naive lock and the watch-lowest flaw from the
//! predecessor-watch lock, as the simulator's figures do.

use std::time::Duration;

use zkcheck::monitor::herd::LockFigures;
use zkreal::{drive_blocking, DriveConfig, RealRun, TestServer};
use zkrecipes::{registry, AnyRecipe, AppEvent, RecipeParams, Workload};
use zksim::Happening;

const CLIENTS: usize = 5;

fn run_recipe(server: &TestServer, name: &str, rounds: u32) -> RealRun<AnyRecipe> {
    let info = registry::find(name).unwrap_or_else(|| panic!("{name} is not registered"));
    let workload = Workload {
        rounds,
        hold_ticks: 1,
        think_ticks: 0,
    };
    let clients = (0..CLIENTS)
        .map(|client| {
            (info.build)(&RecipeParams {
                group: 0,
                role: info.name.into(),
                session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
                client,
                clients: CLIENTS,
                root: format!("/{name}"),
                workload,
            })
        })
        .collect();
    let config = DriveConfig {
        run_timeout: Duration::from_secs(30),
        ..DriveConfig::new(server.connect_string())
    };
    let run = drive_blocking(clients, &config).expect("drive");
    assert!(
        run.finished,
        "{name}: not every client finished: {:?}",
        run.clients
    );
    run
}

/// Never two exclusive holders, in the order the driver saw things.
fn assert_exclusive(name: &str, run: &RealRun<AnyRecipe>) {
    let mut holder = None;
    for h in &run.log {
        match h {
            Happening::App {
                client,
                event: AppEvent::Acquired { .. },
            } => {
                assert_eq!(
                    holder, None,
                    "{name}: client {client} acquired while {holder:?} held"
                );
                holder = Some(*client);
            }
            Happening::App {
                client,
                event: AppEvent::Released | AppEvent::LostLock,
            } => {
                assert_eq!(holder, Some(*client), "{name}");
                holder = None;
            }
            _ => {}
        }
    }
}

#[test]
fn the_reference_lock_wakes_one_waiter_per_release_on_a_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let run = run_recipe(&server, "sequential", 2);
    assert_exclusive("sequential", &run);
    let f = LockFigures::from_log(&run.log);
    eprintln!("sequential: {f:?} in {:?}", run.elapsed);
    assert_eq!((f.acquisitions, f.releases), (2 * CLIENTS, 2 * CLIENTS));
    assert!(f.max_wakeups_per_release() <= 1, "{f:?}");
    assert_eq!(f.wasted_wakeups, 0, "{f:?}");
}

#[test]
fn the_naive_lock_and_the_watch_lowest_flaw_herd_on_a_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    for name in ["naive", "sequential-watch-lowest"] {
        let run = run_recipe(&server, name, 1);
        assert_exclusive(name, &run);
        let f = LockFigures::from_log(&run.log);
        eprintln!("{name}: {f:?} in {:?}", run.elapsed);
        assert_eq!(f.acquisitions, CLIENTS, "{name}");
        assert!(
            f.max_wakeups_per_release() >= 2,
            "{name}: a release wakes several waiters: {f:?}"
        );
        assert!(f.wasted_wakeups > 0, "{name}: {f:?}");
    }
}

#[test]
fn the_read_write_lock_finishes_on_a_real_server() {
    let Some(server) = zkreal::require_server() else {
        return;
    };
    let run = run_recipe(&server, "rwlock", 1);
    let f = LockFigures::from_log(&run.log);
    eprintln!("rwlock: {f:?} in {:?}", run.elapsed);
    assert_eq!((f.acquisitions, f.releases), (CLIENTS, CLIENTS));
}
