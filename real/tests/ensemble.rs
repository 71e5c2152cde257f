//! The three-server ensemble harness on its own: it starts, one server
//! leads, and a lag or a partition of a follower does what the ensemble
//! conformance scripts rely on.

use std::time::Duration;

use zkreal::ensemble::{require_ensemble, Mode};

#[test]
fn ensemble_starts_lags_and_partitions_a_follower() {
    let Some(ensemble) = require_ensemble() else {
        return;
    };
    let roles = ensemble.wait_settled(Duration::from_secs(20)).unwrap();
    eprintln!(
        "ensemble up in {:?}, roles {roles:?}",
        ensemble.startup_time()
    );
    let [leader, f1, _f2] = roles;
    ensemble.lag(f1, leader);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(ensemble.state(f1).mode, Mode::Follower);
    ensemble.unlag(f1, leader).unwrap();
    ensemble.partition(f1);
    std::thread::sleep(Duration::from_millis(2600));
    assert_eq!(
        ensemble.state(f1).mode,
        Mode::Down,
        "{}",
        ensemble.log_tail(f1)
    );
    ensemble.heal(f1, leader).unwrap();
}
