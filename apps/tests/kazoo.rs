//! kazoo 2.11 against both servers — the real ZooKeeper 3.8 server
//! (`real::…`) and `zkcheck serve` (`serve::…`), the same checks: the basic
//! session, a `Lock` (and its twin that ignores LOST), an `Election`, and
//! an expiry seen as SUSPENDED then LOST. The checks are Curator's too
//! (`common/library.rs`).

mod common;

use common::library::{library_tests, Apps, Library};
use zkapps::{require, Kazoo};

fn library() -> Option<Library> {
    let kazoo = require(Kazoo::find())?;
    let apps = Apps {
        session: "session.py",
        lock: "lock.py",
        election: "election.py",
        expiry: "expiry.py",
    };
    // kazoo opens a new session after LOST and says CONNECTED.
    let launch = move |app: &str, connect: &str| kazoo.app(app, connect);
    Some(Library::new("kazoo", launch, apps, "CONNECTED"))
}

#[test]
fn a_hanging_app_is_killed() {
    if let Some(lib) = library() {
        common::library::a_hanging_app_is_killed(&lib);
    }
}

library_tests!(
    session_creates_reads_writes_and_sees_its_watches_fire => session_creates_reads_writes_and_sees_its_watches_fire,
    lock_guards_version_checked_increments => lock_guards_version_checked_increments(false),
    lock_twin_ignoring_lost_runs_the_same_without_faults => lock_guards_version_checked_increments(true),
    election_gives_each_candidate_one_exclusive_turn => election_gives_each_candidate_one_exclusive_turn,
    expiry_is_seen_as_suspended_then_lost => expiry_is_seen_as_suspended_then_lost,
    lock_holder_stops_work_when_its_session_is_lost => lock_holder_stops_work_when_its_session_is_lost,
    lock_twin_ignoring_lost_writes_after_its_session_is_gone => lock_twin_writes_after_its_session_is_gone,
    a_dropped_connection_is_suspended_then_reconnected_not_lost => a_dropped_connection_is_suspended_then_reconnected_not_lost,
);
