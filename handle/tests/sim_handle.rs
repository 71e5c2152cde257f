//! The blocking lock handle on the simulator: OS threads over several
//! simulated sessions take the lock in turn.

#![cfg(not(zkcheck_loom))]

use std::time::Duration;

use zkhandle::contend::contend;
use zkhandle::sim::simulated_handles;
use zkhandle::AcquireError;

#[test]
fn os_threads_take_simulated_locks_in_turn() {
    for recipe in ["sequential", "naive", "seed002-curator-mutex"] {
        let handles = simulated_handles(recipe, "/lock", 3, zksim::Config::default()).unwrap();
        let report = contend(
            &handles,
            2,
            3,
            Duration::from_millis(2),
            Duration::from_secs(30),
        );
        assert!(report.failures.is_empty(), "{recipe}: {report:?}");
        assert_eq!(report.acquisitions, 18, "{recipe}: {report:?}");
        assert_eq!(report.max_inside, 1, "{recipe}: two inside at once");
        assert!(report.fences_increase(), "{recipe}: {:?}", report.fences);
    }
}

#[test]
fn a_simulated_timeout_leaves_nothing_behind() {
    let handles = simulated_handles("sequential", "/lock", 3, zksim::Config::default()).unwrap();
    let guard = handles[0].acquire().unwrap();
    assert_eq!(
        handles[1]
            .acquire_timeout(Duration::from_millis(100))
            .map(|g| *g.grant()),
        Err(AcquireError::TimedOut)
    );
    drop(guard);
    assert!(handles[2].acquire_timeout(Duration::from_secs(20)).is_ok());
    assert!(handles[1].acquire_timeout(Duration::from_secs(20)).is_ok());
}
