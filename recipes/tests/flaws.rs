//! Each deliberately broken lock differs from the correct one exactly where
//! intended: the same inputs, fed to both, give different outputs at that
//! point and nowhere before it.

use crate::common::*;
use zkrecipes::lock::flaws::{
    SequentialBlindRetry, SequentialIgnoreSession, SequentialNoRecheck, SequentialStringSort,
    SequentialWatchLowest,
};
use zkrecipes::lock::SequentialLock;
use zkrecipes::testkit::{children, created, exists, Harness};
use zkrecipes::{AppEvent, Recipe};
use zksim::{EventType, SessionEvent, SessionRequest, ZkError};

const MINE: &str = "lock-c1s16a1-0000000002";

/// Client 1's node `MINE` (czxid 5) exists; listing is op 2. Checks that
/// the way there is the same as the correct recipe's.
fn enqueued<R: Recipe>() -> Harness<R> {
    let (mut h, out) = started::<R>(1, 1);
    assert_eq!(out.sent, [(1, create_seq("/lock/lock-c1s16a1-"))]);
    let out = h.reply(1, created(&format!("/lock/{MINE}"), 5, ME));
    assert_eq!(out.events, [enq(2)]);
    assert_eq!(out.sent, [(2, children_of("/lock"))]);
    h
}

/// ... and it waits on `pred` (op 3, node still there).
fn waiting_on<R: Recipe>(pred: &str) -> Harness<R> {
    let mut h = enqueued::<R>();
    let out = h.reply(2, children(&[pred, MINE]));
    assert_eq!(out.sent, [(3, exists_watch(&format!("/lock/{pred}")))]);
    h.reply(3, exists(Some((4, OTHER))));
    h
}

#[test]
fn no_recheck_takes_the_lock_on_wakeup_where_the_correct_one_relists() {
    let pred = "lock-c0s32a1-0000000001";
    let path = format!("/lock/{pred}");
    let mut good = waiting_on::<SequentialLock>(pred);
    let mut bad = waiting_on::<SequentialNoRecheck>(pred);
    let out = good.watch(EventType::NodeDeleted, &path);
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
    assert!(out.events.is_empty());
    let out = bad.watch(EventType::NodeDeleted, &path);
    assert!(out.sent.is_empty());
    assert_eq!(out.events, acquired(5));
}

#[test]
fn no_recheck_also_trusts_exists_saying_gone() {
    let pred = "lock-c0s32a1-0000000001";
    let mut bad = enqueued::<SequentialNoRecheck>();
    bad.reply(2, children(&[pred, MINE]));
    let out = bad.reply(3, exists(None));
    assert_eq!(out.events, acquired(5));
}

#[test]
fn ignore_session_keeps_holding_through_disconnect_and_expiry() {
    let mut good = enqueued::<SequentialLock>();
    let mut bad = enqueued::<SequentialIgnoreSession>();
    good.reply(2, children(&[MINE]));
    bad.reply(2, children(&[MINE]));
    assert_eq!(
        good.session(SessionEvent::Disconnected).events,
        [AppEvent::LostLock]
    );
    assert!(bad.session(SessionEvent::Disconnected).events.is_empty());
    let out = bad.session(SessionEvent::Expired);
    assert!(out.events.is_empty(), "W5: still believes it holds");
    assert_eq!(out.session_request, Some(SessionRequest::Reopen));
    bad.set_session(0x11);
    let out = bad.session(SessionEvent::SyncConnected);
    assert!(out.sent.is_empty() && out.events.is_empty());
    // The hold runs its course: the late write under the dead fence.
    let out = bad.fire_timer().unwrap();
    assert_eq!(
        out.events,
        [AppEvent::ResourceWrite { fence: 5 }, AppEvent::Released]
    );
    assert_eq!(out.sent, [(3, delete(&format!("/lock/{MINE}")))]);
}

#[test]
fn ignore_session_asks_again_where_the_correct_one_waits_for_the_disconnect() {
    let pred = "lock-c0s32a1-0000000001";
    let mut good = enqueued::<SequentialLock>();
    let mut bad = enqueued::<SequentialIgnoreSession>();
    // The listing's reply is lost with the connection.
    assert!(good.reply(2, Err(ZkError::ConnectionLoss)).sent.is_empty());
    assert_eq!(
        bad.reply(2, Err(ZkError::ConnectionLoss)).sent,
        [(3, children_of("/lock"))]
    );
    let out = bad.reply(3, children(&[pred, MINE]));
    assert_eq!(out.sent, [(4, exists_watch(&format!("/lock/{pred}")))]);
    assert_eq!(
        bad.reply(4, Err(ZkError::ConnectionLoss)).sent,
        [(5, exists_watch(&format!("/lock/{pred}")))]
    );
}

#[test]
fn watch_lowest_watches_the_holder_instead_of_the_predecessor() {
    let names = ["lock-c2s48a1-0000000000", "lock-c0s32a1-0000000001", MINE];
    let mut good = enqueued::<SequentialLock>();
    let mut bad = enqueued::<SequentialWatchLowest>();
    assert_eq!(
        good.reply(2, children(&names)).sent,
        [(3, exists_watch("/lock/lock-c0s32a1-0000000001"))]
    );
    assert_eq!(
        bad.reply(2, children(&names)).sent,
        [(3, exists_watch("/lock/lock-c2s48a1-0000000000"))]
    );
    // Still re-lists on wakeup, and still acquires when lowest.
    let out = bad.watch(EventType::NodeDeleted, "/lock/lock-c2s48a1-0000000000");
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
    assert_eq!(bad.reply(4, children(&[MINE])).events, acquired(5));
}

#[test]
fn blind_retry_creates_again_without_looking() {
    let (mut good, _) = started::<SequentialLock>(1, 1);
    let (mut bad, _) = started::<SequentialBlindRetry>(1, 1);
    assert_eq!(
        good.reply(1, Err(ZkError::ConnectionLoss)).sent,
        [(2, children_of("/lock"))]
    );
    assert_eq!(
        bad.reply(1, Err(ZkError::ConnectionLoss)).sent,
        [(2, create_seq("/lock/lock-c1s16a2-"))]
    );
}

#[test]
fn blind_retry_waits_on_its_own_orphan() {
    // The first create did make a node (seq 1) before the connection broke.
    let orphan = "lock-c1s16a1-0000000001";
    let mine = "lock-c1s16a2-0000000002";
    let (mut good, _) = started::<SequentialLock>(1, 1);
    let (mut bad, _) = started::<SequentialBlindRetry>(1, 1);
    bad.reply(1, Err(ZkError::ConnectionLoss));
    bad.reply(2, created(&format!("/lock/{mine}"), 6, ME));
    let out = bad.reply(3, children(&[orphan, mine]));
    assert_eq!(
        out.sent,
        [(4, exists_watch(&format!("/lock/{orphan}")))],
        "waits on itself"
    );
    // The correct recipe finds and adopts the orphan instead.
    good.reply(1, Err(ZkError::ConnectionLoss));
    let out = good.reply(2, children(&[orphan]));
    assert_eq!(out.sent, [(3, exists_nowatch(&format!("/lock/{orphan}")))]);
}

#[test]
fn string_sort_lets_a_smaller_tag_jump_the_line() {
    // c9's node came first (seq 1); MINE (c1, seq 2) is second.
    let names = ["lock-c9s128a1-0000000001", MINE];
    let mut good = enqueued::<SequentialLock>();
    let mut bad = enqueued::<SequentialStringSort>();
    let out = good.reply(2, children(&names));
    assert_eq!(
        out.sent,
        [(3, exists_watch("/lock/lock-c9s128a1-0000000001"))]
    );
    assert!(out.events.is_empty());
    let out = bad.reply(2, children(&names));
    assert!(out.sent.is_empty());
    assert_eq!(out.events, acquired(5), "W1: holds while c9 holds");
}

#[test]
fn flawed_variants_still_finish_a_clean_run() {
    // Without faults every variant does its round and closes.
    fn run<R: Recipe>() {
        let mut h = enqueued::<R>();
        assert_eq!(h.reply(2, children(&[MINE])).events, acquired(5));
        let out = h.fire_timer().unwrap();
        assert_eq!(out.session_request, Some(SessionRequest::Close));
        assert!(h.client.is_done());
    }
    run::<SequentialNoRecheck>();
    run::<SequentialIgnoreSession>();
    run::<SequentialWatchLowest>();
    run::<SequentialBlindRetry>();
    run::<SequentialStringSort>();
}
