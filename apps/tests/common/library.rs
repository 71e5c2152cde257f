//! The checks kazoo's and Curator's apps share, written once: each library
//! names its four apps and the state it reports once it has a session
//! again; `kazoo.rs` and `curator.rs` run these against both servers.

use std::time::Duration;

use zkapps::{named, states, AppCommand, Finished};

use super::*;

/// How a library starts one of its apps: (app, connect string) → command.
type Launch = Box<dyn Fn(&str, &str) -> AppCommand>;

/// One client library's apps.
pub struct Library {
    /// Prefix of the paths its runs use (`kazoo`, `curator`).
    pub name: &'static str,
    launch: Launch,
    /// Its session, lock, election and expiry-observer apps.
    pub apps: Apps,
    /// What it reports once connected again — to its old session after a
    /// drop, to a new one after LOST: kazoo `CONNECTED`, Curator `RECONNECTED`.
    pub reconnected: &'static str,
}

/// The names of a library's four apps (a script or a class).
pub struct Apps {
    pub session: &'static str,
    pub lock: &'static str,
    pub election: &'static str,
    pub expiry: &'static str,
}

impl Library {
    pub fn new(
        name: &'static str,
        launch: impl Fn(&str, &str) -> AppCommand + 'static,
        apps: Apps,
        reconnected: &'static str,
    ) -> Library {
        Library {
            name,
            launch: Box::new(launch),
            apps,
            reconnected,
        }
    }

    fn app(&self, app: &str, connect: &str) -> AppCommand {
        (self.launch)(app, connect)
    }

    fn unique(&self, what: &str) -> String {
        unique(&format!("{}-{what}", self.name))
    }

    fn lock_paths(&self, what: &str) -> [String; 4] {
        let base = self.unique(what);
        [
            "--lock".into(),
            format!("{base}/L"),
            "--resource".into(),
            format!("{base}/R"),
        ]
    }
}

pub fn session_creates_reads_writes_and_sees_its_watches_fire(lib: &Library, target: &Target) {
    let root = lib.unique("session");
    let done = lib
        .app(lib.apps.session, &target.connect_string())
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

/// Three workers, five increments each, under the lock; `twin` runs the
/// app that does not act on connection states (without faults, the same).
pub fn lock_guards_version_checked_increments(lib: &Library, target: &Target, twin: bool) {
    let mut command = lib
        .app(lib.apps.lock, &target.connect_string())
        .args(["--threads", "3", "--increments", "5"])
        .args(lib.lock_paths(if twin { "lock-twin" } else { "lock" }));
    if twin {
        command = command.arg("--ignore-lost");
    }
    check_clean_lock_run(&command.run(APP_LIMIT).unwrap(), 15);
}

pub fn election_gives_each_candidate_one_exclusive_turn(lib: &Library, target: &Target) {
    let base = lib.unique("election");
    let done = lib
        .app(lib.apps.election, &target.connect_string())
        .args(["--candidates", "3", "--path", &format!("{base}/E")])
        .args(["--resource", &format!("{base}/work")])
        .run(APP_LIMIT)
        .unwrap();
    check_election(&done, 3);
}

pub fn expiry_is_seen_as_suspended_then_lost(lib: &Library, target: &Target) {
    let proxy = target.proxy();
    let mut app = lib
        .app(lib.apps.expiry, &proxy.connect_string())
        .args(["--session-timeout-ms", &EXPIRING_SESSION_MS.to_string()])
        .args(["--path", &lib.unique("expiry")])
        .spawn()
        .unwrap();
    let session = app
        .wait_for("session", EARLY_LIMIT, |e| e["ev"] == "session")
        .unwrap();
    app.wait_for("ready", EARLY_LIMIT, |e| e["ev"] == "ready")
        .unwrap();
    expire(target, &proxy, &session_id(&session));
    let done = app.finish(APP_LIMIT).unwrap();
    // The library opens a new session after LOST.
    check_expiry(&done, &["SUSPENDED", "LOST", lib.reconnected]);
}

/// Run the lock app with one worker whose first hold of the lock is long,
/// expire its session while it holds the lock, and return the run.
fn lock_expired_while_held(lib: &Library, target: &Target, twin: bool) -> Finished {
    let proxy = target.proxy();
    let mut command = lib
        .app(lib.apps.lock, &proxy.connect_string())
        .args(["--threads", "1", "--increments", "2", "--hold-ms", "6000"])
        .args(["--session-timeout-ms", &EXPIRING_SESSION_MS.to_string()])
        .args(lib.lock_paths(if twin { "held-twin" } else { "held" }));
    if twin {
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
    app.finish(APP_LIMIT).unwrap()
}

pub fn lock_holder_stops_work_when_its_session_is_lost(lib: &Library, target: &Target) {
    let done = lock_expired_while_held(lib, target, false);
    done.expect_success();
    let story = done.story();
    let hold = first_hold(&done);
    assert!(states(hold, None).contains(&"LOST".to_string()), "{story}");
    assert_eq!(named(hold, "abandon").len(), 1, "{story}");
    assert!(named(hold, "write").is_empty(), "{story}");
    // It went on, under a lock taken again, to do both increments.
    assert_eq!(named(&done.events, "final")[0]["increments"], 2, "{story}");
}

pub fn lock_twin_writes_after_its_session_is_gone(lib: &Library, target: &Target) {
    let done = lock_expired_while_held(lib, target, true);
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

pub fn a_hanging_app_is_killed(lib: &Library) {
    // Nothing listens on this port: the app keeps trying to connect.
    let started = std::time::Instant::now();
    let err = lib
        .app(lib.apps.session, &closed_port())
        .run(Duration::from_secs(2))
        .unwrap_err();
    assert!(matches!(err, zkapps::AppError::TimedOut { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// The other direction: a dropped connection is not an expiry. The
/// session survives, the library reports SUSPENDED then reconnected, never
/// LOST, and the observer, waiting for a LOST that never comes, gives up
/// at its deadline with exit 1 — so the expiry checks above can fail.
pub fn a_dropped_connection_is_suspended_then_reconnected_not_lost(lib: &Library, target: &Target) {
    let proxy = target.proxy();
    let mut app = lib
        .app(lib.apps.expiry, &proxy.connect_string())
        .args(["--session-timeout-ms", "4000", "--deadline-s", "5"])
        .args(["--path", &lib.unique("drop")])
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
        ["SUSPENDED", lib.reconnected],
        "{story}"
    );
    assert!(named(&done.events, "new_session").is_empty(), "{story}");
}

// Used by kazoo.rs and curator.rs, not by every test binary that has `common`.
#[allow(unused_macros)]
/// Each test `name` of a library's file runs `library::shared(&lib,
/// target, args…)` against both servers, `lib` from the file's `library()`
/// (a library that is missing skips loudly, or fails under `CI=true`).
macro_rules! library_tests {
    ($($name:ident => $shared:ident $(($($arg:expr),*))?),* $(,)?) => {
        $(
            fn $name(target: &$crate::common::Target) {
                if let Some(lib) = library() {
                    $crate::common::library::$shared(&lib, target $($(, $arg)*)?);
                }
            }
        )*
        $crate::common::on_both_servers!($($name),*);
    };
}
#[allow(unused_imports)]
pub(crate) use library_tests;
