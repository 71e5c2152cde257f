//! The blocking lock handle on a real ZooKeeper (the test server the
//! oracle tests use: `SKIPPED` loudly without ZooKeeper, a failure under
//! `CI=true`).

#![cfg(not(zkcheck_loom))]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zkhandle::contend::contend;
use zkhandle::{AcquireError, LockHandle};
use zkreal::require_server;

fn fresh_root(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("/zkhandle-test-{name}-{nanos}")
}

#[test]
fn os_threads_take_the_sequential_lock_in_turn() {
    let Some(server) = require_server() else {
        return;
    };
    let root = fresh_root("threads");
    let handles: Vec<LockHandle> = (0..3)
        .map(|_| LockHandle::connect(&server.connect_string(), "sequential", &root).unwrap())
        .collect();
    let report = contend(
        &handles,
        2,
        3,
        Duration::from_millis(10),
        Duration::from_secs(30),
    );
    for h in handles {
        assert_eq!(h.close(), None, "the driver ran");
    }
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(report.acquisitions, 18, "{report:?}");
    assert_eq!(
        report.max_inside, 1,
        "two threads inside at once: {report:?}"
    );
    assert!(report.fences_increase(), "fences: {:?}", report.fences);
    assert_eq!(report.lost, 0);
}

#[test]
fn a_timed_out_acquire_leaves_nothing_behind() {
    let Some(server) = require_server() else {
        return;
    };
    let root = fresh_root("timeout");
    let cs = server.connect_string();
    let holder = LockHandle::connect(&cs, "sequential", &root).unwrap();
    let impatient = LockHandle::connect(&cs, "sequential", &root).unwrap();
    let third = LockHandle::connect(&cs, "sequential", &root).unwrap();

    let guard = holder.acquire().unwrap();
    assert_eq!(
        impatient
            .acquire_timeout(Duration::from_millis(500))
            .map(|g| *g.grant()),
        Err(AcquireError::TimedOut)
    );
    drop(guard);
    // The impatient handle's node was in line before the third's; had it
    // been left there (its session is still open), the third would wait forever.
    let got = third.acquire_timeout(Duration::from_secs(20));
    assert!(got.is_ok(), "{got:?}");
    drop(got);
    // And the impatient handle still works.
    assert!(impatient.acquire_timeout(Duration::from_secs(20)).is_ok());
}

#[test]
fn a_dropped_request_leaves_nothing_behind() {
    let Some(server) = require_server() else {
        return;
    };
    let root = fresh_root("cancel");
    let cs = server.connect_string();
    let holder = LockHandle::connect(&cs, "sequential", &root).unwrap();
    let other = LockHandle::connect(&cs, "sequential", &root).unwrap();
    let guard = holder.acquire().unwrap();
    // Ask, then walk away while the holder still holds.
    let pending = other.request().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(pending);
    drop(guard);
    // The holder takes it again: the dropped request is not in its way.
    assert!(holder.acquire_timeout(Duration::from_secs(20)).is_ok());
    // Closing the holder's session frees the lock for the other handle.
    assert_eq!(holder.close(), None);
    let next = other
        .acquire_timeout(Duration::from_secs(20))
        .map(|g| *g.grant());
    assert!(next.is_ok(), "{next:?}");
}

#[test]
fn unknown_and_non_lock_recipes_are_refused() {
    assert!(LockHandle::connect("127.0.0.1:1", "no-such-recipe", "/x").is_err());
    assert!(LockHandle::connect("127.0.0.1:1", "seed002-queue", "/x").is_err());
}

#[test]
fn a_broken_connection_marks_the_guard_lost() {
    use std::net::{Ipv4Addr, SocketAddr};
    use std::time::Instant;
    use zkreal::{DriveConfig, FaultProxy};

    let Some(server) = require_server() else {
        return;
    };
    let root = fresh_root("lost");
    let proxy = FaultProxy::start(SocketAddr::from((Ipv4Addr::LOCALHOST, server.port()))).unwrap();
    let holder = LockHandle::connect_with(
        DriveConfig::new(proxy.connect_string()),
        "sequential",
        &root,
    )
    .unwrap();
    let other = LockHandle::connect(&server.connect_string(), "sequential", &root).unwrap();

    let guard = holder.acquire().unwrap();
    assert!(!guard.is_lost());
    proxy.drop_connections();
    let start = Instant::now();
    while !guard.is_lost() && start.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        guard.is_lost(),
        "Disconnected while holding must mark the guard lost"
    );
    // The recipe let go of its node when the session came back; the other
    // session can take the lock even while the lost guard is still alive.
    assert!(other.acquire_timeout(Duration::from_secs(20)).is_ok());
    drop(guard);
    // And the holder's handle works again.
    assert!(holder.acquire_timeout(Duration::from_secs(20)).is_ok());
}
