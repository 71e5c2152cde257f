//! Replaying the fault sequence of a VERDICTS counterexample on the real
//! ensemble with the recipe itself: the registered recipe runs unchanged
//! under the async driver, wrapped in `zkreal::ensemble::cue::Cued`; the
//! test thread conducts the faults at the moments the counterexample has
//! them (docs/VERDICTS.md, "Re-judged on a real ensemble").

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use zkreal::ensemble::cue::{wait_until, Cue, Cued, Role, Witness};
use zkreal::ensemble::Ensemble;
use zkreal::{drive_blocking, DriveConfig, DriveError, FaultProxy, RealRun};
use zkrecipes::{registry, AnyRecipe, RecipeParams, Workload};
use zksim::{Op, Response, ZkError};
use zookeeper_client as zk;

/// A replayed run: the driver's record and the recipe clients' count.
pub struct Replay {
    pub run: RealRun<Cued<AnyRecipe>>,
    pub clients: usize,
    /// What the conductor did, in order (printed with the verdict).
    pub notes: Vec<String>,
}

/// The scenario's workload (`scenarios/seeds/*.toml`: 2 rounds, hold 2, think 1).
const WORKLOAD: Workload = Workload {
    rounds: 2,
    hold_ticks: 2,
    think_ticks: 1,
};
/// The longest session timeout the ensemble grants (20 ticks): room for a
/// loaded machine between the faults.
const SESSION_TIMEOUT: Duration = Duration::from_secs(2);
const WAIT: Duration = Duration::from_secs(10);

/// The recipe's clients, cued, and the witness as the last client.
pub fn clients(recipe: &str, n: usize, root: &str, cue: &Cue) -> Vec<Cued<AnyRecipe>> {
    let info = registry::find(recipe).unwrap_or_else(|| panic!("{recipe} is not registered"));
    let mut out: Vec<Cued<AnyRecipe>> = (0..n)
        .map(|client| {
            let recipe = (info.build)(&RecipeParams::new(client, n, root, WORKLOAD, recipe));
            Cued::new(client, Role::Recipe(recipe), cue)
        })
        .collect();
    out.push(Cued::new(n, Role::Witness(Witness::new(root)), cue));
    out
}

/// Create `root` (persistent) through the leader and wait until both
/// followers have it.
pub fn make_root(ensemble: &Ensemble, roles: [usize; 3], root: &str) {
    let addr = ensemble.client_addr(roles[0]).to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let client = zk::Client::connector()
            .connect(&addr)
            .await
            .expect("a session for the setup");
        client
            .create(
                root,
                b"",
                &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
            )
            .await
            .expect("the root");
    });
    for &f in &roles[1..] {
        ensemble
            .wait_caught_up(f, roles[0])
            .expect("followers catch up");
    }
}

/// One proxy per role for a client that the conductor moves.
pub fn role_proxies(
    ensemble: &Ensemble,
    roles: [usize; 3],
    admitted: usize,
) -> Vec<Arc<FaultProxy>> {
    (0..3)
        .map(|r| {
            let proxy = FaultProxy::start(ensemble.client_addr(roles[r])).expect("a proxy");
            if r != admitted {
                proxy.refuse();
            }
            Arc::new(proxy)
        })
        .collect()
}

pub fn connect_string(proxies: &[Arc<FaultProxy>]) -> String {
    proxies
        .iter()
        .map(|p| p.connect_string())
        .collect::<Vec<_>>()
        .join(",")
}

type Driven = Result<RealRun<Cued<AnyRecipe>>, DriveError>;

/// The driver's thread while the test conducts. If the test fails
/// mid-way, dropping this clears the hooks (which hold the ensemble) and
/// waits for the run to end (its run timeout), so that the ensemble is
/// dropped — its servers stopped — before the test binary exits.
pub struct Conducting {
    cue: Cue,
    driver: Option<JoinHandle<Driven>>,
}

impl Conducting {
    /// Wait for the run to end; the hooks are cleared.
    pub fn finish(mut self) -> RealRun<Cued<AnyRecipe>> {
        let driver = self.driver.take().expect("not finished yet");
        let run = driver.join().expect("the driver thread").expect("drive");
        self.cue.clear_hooks();
        run
    }
}

impl Drop for Conducting {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            self.cue.clear_hooks();
            let _ = driver.join();
        }
    }
}

pub fn spawn_driver(cue: &Cue, clients: Vec<Cued<AnyRecipe>>, config: DriveConfig) -> Conducting {
    Conducting {
        cue: cue.clone(),
        driver: Some(std::thread::spawn(move || drive_blocking(clients, &config))),
    }
}

pub fn config(default: String, run_timeout: Duration) -> DriveConfig {
    DriveConfig {
        session_timeout: SESSION_TIMEOUT,
        run_timeout,
        ..DriveConfig::new(default)
    }
}

pub fn create_under(root: &str) -> impl Fn(&Op) -> bool + Send + Sync + Clone + 'static {
    let prefix = format!("{root}/");
    move |op: &Op| {
        matches!(op, Op::Create { path, mode, .. }
            if path.starts_with(&prefix) && mode.is_sequential())
    }
}

pub fn delete_under(root: &str) -> impl Fn(&Op) -> bool + Send + Sync + Clone + 'static {
    let prefix = format!("{root}/");
    move |op: &Op| matches!(op, Op::Delete { path, .. } if path.starts_with(&prefix))
}

/// Client `k` received a `Children` reply after a `ConnectionLoss`.
fn listed_after_loss(cue: &Cue, k: usize) -> bool {
    let mut lost = false;
    for (c, reply) in cue.replies() {
        match reply {
            _ if c != k => {}
            Err(ZkError::ConnectionLoss) => lost = true,
            Ok(Response::Children { .. }) if lost => return true,
            _ => {}
        }
    }
    false
}

/// Wait until every client (the witness too) is started by the driver:
/// every session is connected; then until both followers have applied them.
pub fn all_connected(cue: &Cue, n: usize, ensemble: &Ensemble, roles: [usize; 3]) {
    wait_until(WAIT, "every client to start", || cue.started() == n).expect("sessions");
    for &f in &roles[1..] {
        ensemble
            .wait_caught_up(f, roles[0])
            .expect("followers catch up");
    }
}

/// The lost create read on a lagging follower (seed 001 `leaks`, its
/// read/write lock, Curator's leader latch): client 0 alone, on the leader,
/// sends its first sequential create under `root`; at that moment follower
/// 1 starts lagging and client 0's answers are held; once the leader has
/// answered (applied the create), client 0's connection breaks and only
/// follower 1 takes it back. The recipe recovers there — on a follower that
/// has not applied its create. When it sends its next create the lag ends
/// and the other clients start; the witness looks 2 s later.
pub fn lost_create_on_lagging_follower(
    ensemble: Ensemble,
    recipe: &str,
    n: usize,
    root: &str,
) -> Replay {
    let ensemble = Arc::new(ensemble);
    let roles = ensemble.wait_settled(WAIT).expect("an ensemble settles");
    make_root(&ensemble, roles, root);
    let mut notes = vec![format!("roles (leader, f1, f2) = {roles:?}")];
    let victim = role_proxies(&ensemble, roles, 0);
    let cue = Cue::new(n + 1);
    let lag_error = Arc::new(Mutex::new(None::<String>));
    let replies_at_create = Arc::new(AtomicUsize::new(0));
    {
        let (ensemble, held, seen, err) = (
            ensemble.clone(),
            victim[0].clone(),
            replies_at_create.clone(),
            lag_error.clone(),
        );
        cue.on_send(
            0,
            0,
            Box::new(create_under(root)),
            Box::new(move || {
                if let Err(e) = ensemble.lag(roles[1], roles[0]) {
                    *err.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
                seen.store(held.replies_seen(), Ordering::SeqCst);
                held.pause_replies();
            }),
        );
    }
    // Others on the leader and on the follower that does not lag.
    let mut config = config(
        ensemble.client_addr(roles[2]).to_string(),
        Duration::from_secs(12),
    )
    .with_client_server(0, connect_string(&victim))
    .with_client_server(n, ensemble.client_addr(roles[0]).to_string());
    for k in 1..n {
        let role = if k % 2 == 1 { 0 } else { 2 };
        config = config.with_client_server(k, ensemble.client_addr(roles[role]).to_string());
    }
    let driver = spawn_driver(&cue, clients(recipe, n, root, &cue), config);
    all_connected(&cue, n + 1, &ensemble, roles);
    cue.open(0);
    let creates = create_under(root);
    cue.wait_sent(0, 1, &creates, WAIT)
        .expect("client 0 sends its create");
    notes.push("client 0 sends its create: follower 1 lags, its answers held".into());
    if let Some(e) = lag_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        panic!("{e}");
    }
    let before = replies_at_create.load(Ordering::SeqCst);
    wait_until(WAIT, "the leader to answer the create", || {
        victim[0].replies_seen() > before
    })
    .expect("the leader answers the create");
    victim[1].admit();
    victim[0].refuse();
    victim[0].drop_connections();
    victim[0].resume();
    notes.push("the leader answered (applied) it; the answer is lost with the connection; client 0 may reconnect to follower 1 only".into());
    // The recovery has listed (on the lagging follower) and created again;
    // the lag must end within syncLimit (10 s): give the recipe 6 s.
    let recovered = wait_until(Duration::from_secs(6), "client 0's recovery", || {
        cue.count_sent(0, &creates) >= 2 && listed_after_loss(&cue, 0)
    });
    match recovered {
        Ok(()) => notes.push("client 0 listed and sent a second create".into()),
        Err(e) => notes.push(format!("client 0 did not recover as expected ({e})")),
    }
    ensemble.end_lag(roles[1], roles[0]);
    for k in 1..n {
        cue.open(k);
    }
    notes.push("the lag ends; the other clients start".into());
    std::thread::sleep(Duration::from_secs(2));
    cue.open(n);
    notes.push("the witness looks".into());
    let run = driver.finish();
    Replay {
        run,
        clients: n,
        notes,
    }
}

/// The partitioned follower under a release (seed 002 `WriteLock`,
/// `fifo`): client 1 alone, on follower 1, takes the lock; client 2 (on
/// the leader) starts when client 1 has created its node. When client 1
/// sends its `delete` (the release), follower 1 is cut off from the other
/// servers: the delete is never applied, follower 1 drops its clients after
/// `syncLimit`, and client 1 reconnects to follower 2 only. Client 0 stays
/// behind its gate (the row needs two clients).
pub fn release_on_partitioned_follower(
    ensemble: Ensemble,
    recipe: &str,
    n: usize,
    root: &str,
) -> Replay {
    let ensemble = Arc::new(ensemble);
    let roles = ensemble.wait_settled(WAIT).expect("an ensemble settles");
    make_root(&ensemble, roles, root);
    let mut notes = vec![format!("roles (leader, f1, f2) = {roles:?}")];
    let victim = role_proxies(&ensemble, roles, 1);
    let cue = Cue::new(n + 1);
    {
        let ensemble = ensemble.clone();
        let (to_f2, from_f1) = (victim[2].clone(), victim[1].clone());
        cue.on_send(
            1,
            0,
            Box::new(delete_under(root)),
            Box::new(move || {
                ensemble.partition(roles[1]);
                to_f2.admit();
                from_f1.refuse();
            }),
        );
    }
    let config = config(
        ensemble.client_addr(roles[0]).to_string(),
        Duration::from_secs(8),
    )
    .with_client_server(1, connect_string(&victim));
    let driver = spawn_driver(&cue, clients(recipe, n, root, &cue), config);
    all_connected(&cue, n + 1, &ensemble, roles);
    cue.open(1);
    let creates = create_under(root);
    cue.wait_sent(1, 1, &creates, WAIT)
        .expect("client 1 creates its node");
    cue.open(2);
    notes.push("client 1 created its node; client 2 starts".into());
    cue.wait_sent(1, 1, &delete_under(root), WAIT)
        .expect("client 1 releases");
    notes.push("client 1 sends its delete: follower 1 is cut off; client 1 may reconnect to follower 2 only".into());
    let run = driver.finish();
    // The ensemble (and its partition) goes with the last Arc.
    drop(ensemble);
    Replay {
        run,
        clients: n,
        notes,
    }
}
