//! Curator 5.4 against both servers — the real ZooKeeper 3.8 server
//! (`real::…`) and `zkcheck serve` (`serve::…`), the same checks: the basic session,
//! an `InterProcessMutex` (and its twin that does not act on connection
//! states), a `LeaderLatch` election, and an expiry seen as SUSPENDED then
//! LOST. The apps are compiled once into the cargo target dir. The checks
//! are kazoo's too (`common/library.rs`).

mod common;

use common::library::{library_tests, Apps, Library};
use zkapps::{require, Curator};

fn library() -> Option<Library> {
    let curator = require(Curator::find(std::path::Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    ))))?;
    let apps = Apps {
        session: "CuratorSession",
        lock: "CuratorMutex",
        election: "CuratorLeader",
        expiry: "CuratorExpiry",
    };
    // Curator opens a new session after LOST and says RECONNECTED.
    let launch = move |app: &str, connect: &str| curator.app(app, connect);
    Some(Library::new("curator", launch, apps, "RECONNECTED"))
}

#[test]
fn a_hanging_app_is_killed() {
    if let Some(lib) = library() {
        common::library::a_hanging_app_is_killed(&lib);
    }
}

library_tests!(
    session_creates_reads_writes_and_sees_its_watches_fire => session_creates_reads_writes_and_sees_its_watches_fire,
    mutex_guards_version_checked_increments => lock_guards_version_checked_increments(false),
    mutex_twin_without_listener_runs_the_same_without_faults => lock_guards_version_checked_increments(true),
    election_gives_each_candidate_one_exclusive_turn => election_gives_each_candidate_one_exclusive_turn,
    expiry_is_seen_as_suspended_then_lost => expiry_is_seen_as_suspended_then_lost,
    mutex_holder_with_listener_stops_work_when_its_session_is_lost => lock_holder_stops_work_when_its_session_is_lost,
    mutex_twin_without_listener_writes_after_its_session_is_gone => lock_twin_writes_after_its_session_is_gone,
    a_dropped_connection_is_suspended_then_reconnected_not_lost => a_dropped_connection_is_suspended_then_reconnected_not_lost,
);
