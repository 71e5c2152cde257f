//! The `owner` monitor skips judging again while nothing it reads has moved
//! (no new belief, and the leader's last zxid and next session id as they
//! were at its last judgement). This holds the shortcut to the monitor that
//! judges at every step, along random runs of every shipped scenario: the
//! same verdict at every step, with violations found and runs passed, and
//! many steps on which the shortcut applies.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use zkcheck::explore::random::RandomChooser;
use zkcheck::monitor::NodeFacts;
use zkcheck::monitor::{Monitor, View};
use zkcheck::run::drive_from;
use zkcheck::scenario::Scenario;
use zkcheck::state::SystemState;
use zkcheck::testkit::OwnerMonitor;
use zksim::{Client, ClientId, SessionId, Tick, World};

use crate::shipped::scenario_files;

/// The world, without its leader version: a monitor reading it must judge
/// at every step.
struct Unversioned<'a, C: Client>(&'a World<C>);

impl<C: Client> View for Unversioned<'_, C> {
    fn now(&self) -> Tick {
        self.0.now()
    }
    fn num_clients(&self) -> usize {
        self.0.num_clients()
    }
    fn session_of(&self, client: ClientId) -> SessionId {
        self.0.session_of(client)
    }
    fn is_crashed(&self, client: ClientId) -> bool {
        self.0.is_crashed(client)
    }
    fn is_session_live(&self, session: SessionId) -> bool {
        self.0.is_session_live(session)
    }
    fn node(&self, path: &str) -> Option<NodeFacts> {
        View::node(self.0, path)
    }
    fn child_by_czxid(&self, dir: &str, czxid: i64) -> Option<String> {
        View::child_by_czxid(self.0, dir, czxid)
    }
}

#[test]
fn skipping_an_unchanged_judgement_never_changes_a_verdict() {
    let (mut steps, mut shortcut_steps, mut broken_runs, mut clean_runs) = (0u64, 0u64, 0, 0);
    for (name, text) in scenario_files() {
        let scenario = Scenario::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        for seed in 0..25 {
            let mut start = Vec::new();
            let model = SystemState::with_start_log(&scenario, &mut start);
            let mut quick = OwnerMonitor::new(&scenario.root);
            let mut every = OwnerMonitor::new(&scenario.root);
            let mut version = View::leader_version(&model.world);
            let mut broke = false;
            let mut on_step = |world: &World<_>, log: &[_]| {
                let now = View::leader_version(world);
                if now == version {
                    shortcut_steps += 1;
                }
                version = now;
                steps += 1;
                let fast = quick.observe(world, log);
                let full = every.observe(&Unversioned(world), log);
                broke |= full.is_err();
                assert_eq!(fast, full, "{name} seed {seed}, tick {}", world.now());
            };
            on_step(&model.world, &start);
            let mut chooser = RandomChooser::new(ChaCha8Rng::seed_from_u64(seed));
            drive_from(
                model,
                scenario.explore.max_steps.min(3_000),
                &mut chooser,
                |m, _, log| on_step(&m.world, log),
            );
            if broke {
                broken_runs += 1;
            } else {
                clean_runs += 1;
            }
        }
    }
    // Both ways: holders judged wrong and runs that pass, and a shortcut
    // that is actually taken (most steps change neither the leader's tree
    // nor any session).
    assert!(
        broken_runs >= 10,
        "runs with an owner violation: {broken_runs}"
    );
    assert!(clean_runs >= 100, "runs without: {clean_runs}");
    assert!(
        shortcut_steps * 2 > steps,
        "steps with the leader unchanged: {shortcut_steps} of {steps}"
    );
}
