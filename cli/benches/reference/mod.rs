//! The reference scenario of docs/PERFORMANCE.md, shared by the benches:
//! `lock-sequential-small.toml` with 3 clients and no connection drop.

use zkcheck::scenario::Scenario;

pub fn reference() -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/lock-sequential-small.toml"
    );
    let mut scenario = Scenario::from_file(std::path::Path::new(path)).expect("the scenario loads");
    scenario.clients = 3;
    scenario.faults.connection_drops = 0;
    scenario
}
