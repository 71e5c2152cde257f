//! Curator 5.4 against both servers — the real ZooKeeper 3.8 server
//! (`real::…`) and `zkcheck serve` (`serve::…`), the same checks: the basic session,
//! an `InterProcessMutex` (and its twin that does not act on connection
//! states), a `LeaderLatch` election, and an expiry seen as SUSPENDED then
//! LOST. The apps are compiled once into the cargo target dir.

mod common;

use std::time::Duration;

use common::*;
use zkapps::{named, require, states, Curator};

/// Whether `target` cannot run Curator's lock and election recipes
/// because it does not create containers (their parents), which serve
/// answered Unimplemented before the simulator's containers reached it
/// (docs/SERVE.md, "What differs"). Said loudly, and checked: the app must
/// then fail on exactly that — an `UnimplementedException` — and not
/// otherwise; once serve creates containers the probe says so and the
/// whole test runs.
fn lacks_containers(target: &Target, curator: &Curator, app: &str) -> bool {
    if target.creates_containers() {
        return false;
    }
    eprintln!(
        "KNOWN DIFFERENCE (docs/SERVE.md): serve answers createContainer with \
         Unimplemented; {app} cannot create its parent node. Checking that this, \
         and only this, is what stops Curator's recipes."
    );
    // The mutex says why it retries; the latch only that it never leads.
    let base = unique(&format!("no-container-{app}"));
    let args = [
        "--threads".to_string(),
        "1".into(),
        "--increments".into(),
        "1".into(),
        "--lock".into(),
        format!("{base}/L"),
    ];
    let done = curator
        .app("CuratorMutex", &target.connect_string())
        .args(args)
        .args(["--resource", &format!("{base}/R"), "--deadline-s", "4"])
        .run(APP_LIMIT)
        .unwrap();
    let story = done.story();
    assert!(!done.succeeded(), "{story}");
    let retries = named(&done.events, "retry");
    assert!(!retries.is_empty(), "{story}");
    assert!(
        retries
            .iter()
            .all(|e| e["reason"] == "UnimplementedException"),
        "{story}"
    );
    true
}

fn curator() -> Option<Curator> {
    require(Curator::find(std::path::Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    ))))
}

fn session_creates_reads_writes_and_sees_its_watches_fire(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    let root = unique("curator-session");
    let done = curator
        .app("CuratorSession", &target.connect_string())
        .args(["--root", &root])
        .run(APP_LIMIT)
        .unwrap();
    done.expect_success();
    assert_eq!(
        without_sessions(&done),
        expected_session_events(&root),
        "{}",
        done.story()
    );
}

fn mutex_guards_version_checked_increments(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    if lacks_containers(target, &curator, "CuratorMutex") {
        return;
    }
    let base = unique("curator-lock");
    let done = curator
        .app("CuratorMutex", &target.connect_string())
        .args(["--threads", "3", "--increments", "5"])
        .args([
            "--lock",
            &format!("{base}/L"),
            "--resource",
            &format!("{base}/R"),
        ])
        .run(APP_LIMIT)
        .unwrap();
    check_clean_lock_run(&done, 15);
}

fn mutex_twin_without_listener_runs_the_same_without_faults(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    if lacks_containers(target, &curator, "CuratorMutex") {
        return;
    }
    let base = unique("curator-lock-twin");
    let done = curator
        .app("CuratorMutex", &target.connect_string())
        .args(["--threads", "3", "--increments", "5", "--ignore-lost"])
        .args([
            "--lock",
            &format!("{base}/L"),
            "--resource",
            &format!("{base}/R"),
        ])
        .run(APP_LIMIT)
        .unwrap();
    check_clean_lock_run(&done, 15);
}

fn election_gives_each_candidate_one_exclusive_turn(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    if lacks_containers(target, &curator, "CuratorLeader") {
        return;
    }
    let base = unique("curator-election");
    let done = curator
        .app("CuratorLeader", &target.connect_string())
        .args(["--candidates", "3", "--path", &format!("{base}/E")])
        .args(["--resource", &format!("{base}/work")])
        .run(APP_LIMIT)
        .unwrap();
    check_election(&done, 3);
}

fn expiry_is_seen_as_suspended_then_lost(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    let proxy = target.proxy();
    let mut app = curator
        .app("CuratorExpiry", &proxy.connect_string())
        .args(["--session-timeout-ms", &EXPIRING_SESSION_MS.to_string()])
        .args(["--path", &unique("curator-expiry")])
        .spawn()
        .unwrap();
    let session = app
        .wait_for("session", EARLY_LIMIT, |e| e["ev"] == "session")
        .unwrap();
    app.wait_for("ready", EARLY_LIMIT, |e| e["ev"] == "ready")
        .unwrap();
    expire(target, &proxy, &session_id(&session));
    let done = app.finish(APP_LIMIT).unwrap();
    // Curator opens a new session after LOST: RECONNECTED.
    check_expiry(&done, &["SUSPENDED", "LOST", "RECONNECTED"]);
}

/// Run the lock app with one worker whose first hold of the lock is long,
/// expire its session while it holds the lock, and return the run.
fn lock_expired_while_held(target: &Target, ignore_lost: bool) -> Option<zkapps::Finished> {
    let curator = curator()?;
    if lacks_containers(target, &curator, "CuratorMutex") {
        return None;
    }
    let proxy = target.proxy();
    let base = unique(if ignore_lost {
        "curator-held-twin"
    } else {
        "curator-held"
    });
    let mut command = curator
        .app("CuratorMutex", &proxy.connect_string())
        .args(["--threads", "1", "--increments", "2", "--hold-ms", "6000"])
        .args(["--session-timeout-ms", &EXPIRING_SESSION_MS.to_string()])
        .args([
            "--lock",
            &format!("{base}/L"),
            "--resource",
            &format!("{base}/R"),
        ]);
    if ignore_lost {
        command = command.arg("--ignore-lost");
    }
    let mut app = command.spawn().unwrap();
    let session = app
        .wait_for("session", EARLY_LIMIT, |e| e["ev"] == "session")
        .unwrap();
    // The worker holds the lock and has read the resource: it is in its hold.
    app.wait_for("read", EARLY_LIMIT, |e| e["ev"] == "read")
        .unwrap();
    expire(target, &proxy, &session_id(&session));
    Some(app.finish(APP_LIMIT).unwrap())
}

fn mutex_holder_with_listener_stops_work_when_its_session_is_lost(target: &Target) {
    let Some(done) = lock_expired_while_held(target, false) else {
        return;
    };
    done.expect_success();
    let story = done.story();
    let hold = first_hold(&done);
    assert!(states(hold, None).contains(&"LOST".to_string()), "{story}");
    assert_eq!(named(hold, "abandon").len(), 1, "{story}");
    assert!(named(hold, "write").is_empty(), "{story}");
    // It went on, under a lock taken again, to do both increments.
    assert_eq!(named(&done.events, "final")[0]["increments"], 2, "{story}");
}

fn mutex_twin_without_listener_writes_after_its_session_is_gone(target: &Target) {
    let Some(done) = lock_expired_while_held(target, true) else {
        return;
    };
    done.expect_success();
    let story = done.story();
    let hold = first_hold(&done);
    let lost = hold
        .iter()
        .position(|e| e["ev"] == "state" && e["state"] == "LOST")
        .unwrap_or_else(|| panic!("no LOST while the lock was held:\n{story}"));
    // The write the lock no longer guards: after LOST, before release.
    assert_eq!(named(&hold[lost..], "write").len(), 1, "{story}");
    assert!(named(hold, "abandon").is_empty(), "{story}");
}

#[test]
fn a_hanging_app_is_killed() {
    let Some(curator) = curator() else {
        return;
    };
    // Nothing listens on this port: the app keeps trying to connect.
    let started = std::time::Instant::now();
    let err = curator
        .app("CuratorSession", "127.0.0.1:1")
        .run(Duration::from_secs(2))
        .unwrap_err();
    assert!(matches!(err, zkapps::AppError::TimedOut { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The other direction: a dropped connection is not an expiry. The
/// session survives, the library reports SUSPENDED then RECONNECTED, never
/// LOST, and the observer, waiting for a LOST that never comes, gives up
/// at its deadline with exit 1 — so the expiry checks above can fail.
fn a_dropped_connection_is_suspended_then_reconnected_not_lost(target: &Target) {
    let Some(curator) = curator() else {
        return;
    };
    let proxy = target.proxy();
    let mut app = curator
        .app("CuratorExpiry", &proxy.connect_string())
        .args(["--session-timeout-ms", "4000", "--deadline-s", "5"])
        .args(["--path", &unique("curator-drop")])
        .spawn()
        .unwrap();
    app.wait_for("ready", EARLY_LIMIT, |e| e["ev"] == "ready")
        .unwrap();
    proxy.drop_connections();
    let done = app.finish(APP_LIMIT).unwrap();
    let story = done.story();
    assert_eq!(done.status.code(), Some(1), "{story}");
    assert_eq!(
        after_first_connect(states(&done.events, None)),
        ["SUSPENDED", "RECONNECTED"],
        "{story}"
    );
    assert!(named(&done.events, "new_session").is_empty(), "{story}");
}

on_both_servers!(
    session_creates_reads_writes_and_sees_its_watches_fire,
    mutex_guards_version_checked_increments,
    mutex_twin_without_listener_runs_the_same_without_faults,
    election_gives_each_candidate_one_exclusive_turn,
    expiry_is_seen_as_suspended_then_lost,
    mutex_holder_with_listener_stops_work_when_its_session_is_lost,
    mutex_twin_without_listener_writes_after_its_session_is_gone,
    a_dropped_connection_is_suspended_then_reconnected_not_lost,
);
