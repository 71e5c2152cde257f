//! Herd agreement: the registered `naive` and `sequential` locks with
//! N = 2, 4, 8 clients, fault-free, one round each, on the bench's two
//! sides (the simulator and the real server, or the real server and
//! `zkserve`); the herd figures must agree.
//!
//! "Agree" means: the multiset of wakeups per release, hence its max and
//! mean, is the same on both sides. Why that is sound although the two
//! runs interleave differently: with a hold of 2 ticks (200 ms on the real
//! server, far above a loopback round trip) every waiter has re-armed its
//! watch before the holder releases, on both sides. Then each release
//! wakes exactly the waiters its node is watched by: for `naive` every
//! waiter left (N−1, N−2, …, 1, 0 — the herd), for `sequential` the one
//! successor (1, …, 1, 0). Which client acquires when differs between
//! runs; the multisets do not. The simulator runs a fair scheduler: clients
//! take turns (round robin over the enabled client events), and time ticks
//! only when no client can move, as on an idle real server.

use zkcheck::monitor::herd::LockFigures;
use zkreal::{drive_blocking, DriveConfig};
use zkrecipes::{registry, AnyRecipe, AppEvent, RecipeParams, Workload};
use zksim::{Config, Event, Happening, World};

use super::bench::{Bench, Side};

const SIZES: [usize; 3] = [2, 4, 8];
const RECIPES: [&str; 2] = ["naive", "sequential"];
/// Simulator steps before a run is declared stuck.
const STEP_LIMIT: usize = 100_000;

fn clients(name: &str, n: usize, root: &str) -> Result<Vec<AnyRecipe>, String> {
    let info = registry::find(name).ok_or_else(|| format!("no recipe {name}"))?;
    let workload = Workload {
        rounds: 1,
        hold_ticks: 2,
        think_ticks: 1,
    };
    Ok((0..n)
        .map(|client| {
            (info.build)(&RecipeParams {
                group: 0,
                role: info.name.into(),
                session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
                client,
                clients: n,
                root: root.to_string(),
                workload,
            })
        })
        .collect())
}

/// A fair, deterministic schedule on one server: round robin over the
/// clients' enabled events, a tick only when nothing else can happen.
fn simulate(clients: Vec<AnyRecipe>) -> Result<Vec<Happening<AppEvent>>, String> {
    let config = Config {
        servers: 1,
        ..Config::default()
    };
    let mut log = Vec::new();
    let mut world = World::new_with_log(config, clients, &mut log);
    let n = world.num_clients();
    let mut turn = 0;
    let mut enabled = Vec::new();
    for _ in 0..STEP_LIMIT {
        if world.is_quiescent() {
            return Ok(log);
        }
        enabled.clear();
        world.enabled(&mut enabled);
        let client_of = |e: &Event| match e {
            Event::Request { client } | Event::Receive { client } | Event::Timer { client } => {
                Some(*client)
            }
            _ => None,
        };
        let pick = (0..n)
            .map(|k| (turn + k) % n)
            .find_map(|c| enabled.iter().find(|e| client_of(e) == Some(c)).cloned())
            .or_else(|| enabled.iter().find(|e| **e == Event::Tick).cloned());
        let Some(event) = pick else {
            return Err("simulation stuck: nothing enabled".into());
        };
        if let Some(c) = client_of(&event) {
            turn = (c + 1) % n;
        }
        world.step(&event, &mut log);
    }
    Err("simulation did not finish".into())
}

/// Whether the figures of both sides (`names`: left, right) agree.
fn agree(
    name: &str,
    n: usize,
    names: (&str, &str),
    a: &LockFigures,
    b: &LockFigures,
) -> Result<(), String> {
    let (left, right) = names;
    let mut s = a.wakeups_per_release.clone();
    let mut r = b.wakeups_per_release.clone();
    s.sort_unstable();
    r.sort_unstable();
    let expected_max = if name == "naive" { n - 1 } else { 1.min(n - 1) };
    let ok = s == r
        && a.acquisitions == n
        && b.acquisitions == n
        && a.max_wakeups_per_release() == expected_max
        && b.max_wakeups_per_release() == expected_max;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name} N={n}: wakeups per release (sorted) {left} {s:?} {right} {r:?}; \
             max {left} {} {right} {} (expected {expected_max}); \
             mean {left} {:.2} {right} {:.2}\n\
             {left} {a:?}\n{right} {b:?}",
            a.max_wakeups_per_release(),
            b.max_wakeups_per_release(),
            a.mean_wakeups_per_release(),
            b.mean_wakeups_per_release(),
        ))
    }
}

/// The lock's herd figures on one side.
fn figures(side: &Side, name: &str, n: usize, root: &str) -> Result<LockFigures, String> {
    match side {
        Side::Simulator => Ok(LockFigures::from_log(&simulate(clients(name, n, root)?)?)),
        Side::Server { name: server, addr } => {
            let config = DriveConfig::new(addr.to_string());
            let run =
                drive_blocking(clients(name, n, root)?, &config).map_err(|e| e.to_string())?;
            if !run.finished {
                return Err(format!("{name} N={n}: the run on {server} did not finish"));
            }
            Ok(LockFigures::from_log(&run.log))
        }
    }
}

fn compare(bench: &Bench, name: &str, n: usize, tag: usize) -> Result<(), String> {
    let root = format!("/herd-{name}-{n}-{tag}");
    let left = figures(&bench.left, name, n, &root)?;
    let right = figures(&bench.right, name, n, &root)?;
    let names = (bench.left.name(), bench.right.name());
    eprintln!(
        "herd {name} N={n}: wakeups per release {} {:?} {} {:?}",
        names.0, left.wakeups_per_release, names.1, right.wakeups_per_release
    );
    agree(name, n, names, &left, &right)
}

/// Run every comparison; returns how many ran.
pub fn run(bench: &mut Bench) -> usize {
    let mut ran = 0;
    for name in RECIPES {
        for n in SIZES {
            let result = compare(bench, name, n, ran);
            bench.record(&format!("herd {name} N={n}"), result);
            ran += 1;
        }
    }
    ran
}
