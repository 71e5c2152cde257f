//! The predecessor-watch lock, fed by hand: exact ops and events.

use crate::common::*;
use zkrecipes::lock::SequentialLock;
use zkrecipes::testkit::{children, created, exists, Harness};
use zkrecipes::AppEvent;
use zksim::{Client, EventType, SessionEvent, SessionRequest, ZkError};

const MINE: &str = "lock-c1s16a1-0000000002";
const PRED: &str = "lock-c0s32a1-0000000001";

/// Client 1 has created its node (seq 2, czxid 5) and sent the listing (op 2).
fn enqueued() -> Harness<SequentialLock> {
    let (mut h, out) = started::<SequentialLock>(1, 1);
    assert_eq!(out.events, [REQ]);
    assert_eq!(out.sent, [(1, create_seq("/lock/lock-c1s16a1-"))]);
    let out = h.reply(1, created(&format!("/lock/{MINE}"), 5, ME));
    assert_eq!(out.events, [enq(2)]);
    assert_eq!(out.sent, [(2, children_of("/lock"))]);
    h
}

/// ... and learnt that `PRED` is before it: watching it with op 3.
fn waiting() -> Harness<SequentialLock> {
    let mut h = enqueued();
    let out = h.reply(2, children(&[MINE, PRED]));
    assert_eq!(out.sent, [(3, exists_watch(&format!("/lock/{PRED}")))]);
    assert!(out.events.is_empty());
    let out = h.reply(3, exists(Some((4, OTHER))));
    assert!(out.sent.is_empty() && out.events.is_empty());
    h
}

#[test]
fn lowest_node_acquires_at_once_and_releases_after_the_hold() {
    let mut h = enqueued();
    let out = h.reply(2, children(&[MINE]));
    assert_eq!(out.events, acquired(5));
    assert!(out.sent.is_empty());
    assert_eq!(h.timer(), Some(4));
    let out = h.fire_timer().unwrap();
    assert_eq!(
        out.events,
        [AppEvent::ResourceWrite { fence: 5 }, AppEvent::Released]
    );
    assert_eq!(out.sent, [(3, delete(&format!("/lock/{MINE}")))]);
    assert_eq!(out.session_request, Some(SessionRequest::Close));
    assert!(h.client.is_done());
}

#[test]
fn waits_on_its_predecessor_and_relists_when_it_goes() {
    let mut h = waiting();
    // A stale or foreign watch does nothing.
    let out = h.watch(EventType::NodeDeleted, "/lock/lock-c2s48a1-0000000000");
    assert!(out.sent.is_empty() && out.events.is_empty());
    let out = h.watch(EventType::NodeDeleted, &format!("/lock/{PRED}"));
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
    assert!(out.events.is_empty(), "must not assume the lock (W3)");
    let out = h.reply(4, children(&[MINE]));
    assert_eq!(out.events, acquired(5));
}

#[test]
fn relists_when_exists_says_the_predecessor_is_gone() {
    let mut h = enqueued();
    h.reply(2, children(&[MINE, PRED]));
    let out = h.reply(3, exists(None));
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
    assert!(out.events.is_empty());
}

#[test]
fn watches_the_next_lower_node_by_sequence_not_by_name() {
    let mut h = enqueued();
    // By string, c9… sorts after MINE (c1…); by sequence it is lower (1 < 2)
    // and c0…'s node (seq 3) is higher.
    let out = h.reply(
        2,
        children(&["lock-c0s32a1-0000000003", MINE, "lock-c9s128a1-0000000001"]),
    );
    assert_eq!(
        out.sent,
        [(3, exists_watch("/lock/lock-c9s128a1-0000000001"))]
    );
    // With three lower nodes it watches the nearest one only.
    let mut h = enqueued();
    let out = h.reply(
        2,
        children(&[
            "lock-c2s48a1-0000000000",
            MINE,
            "lock-c9s128a1-0000000001",
            "other-node",
        ]),
    );
    assert_eq!(
        out.sent,
        [(3, exists_watch("/lock/lock-c9s128a1-0000000001"))]
    );
}

#[test]
fn connection_loss_on_create_looks_for_its_node_and_adopts_it() {
    let (mut h, _) = started::<SequentialLock>(1, 1);
    let out = h.reply(1, Err(ZkError::ConnectionLoss));
    assert_eq!(out.sent, [(2, children_of("/lock"))]);
    assert!(out.events.is_empty());
    let out = h.reply(2, children(&[PRED, MINE]));
    assert_eq!(out.sent, [(3, exists_nowatch(&format!("/lock/{MINE}")))]);
    let out = h.reply(3, exists(Some((5, ME))));
    assert_eq!(out.events, [enq(2)]);
    assert_eq!(out.sent, [(4, children_of("/lock"))]);
}

#[test]
fn connection_loss_on_create_creates_again_when_its_node_is_not_there() {
    let (mut h, _) = started::<SequentialLock>(1, 1);
    h.reply(1, Err(ZkError::ConnectionLoss));
    let out = h.reply(2, children(&[PRED]));
    assert_eq!(out.sent, [(3, create_seq("/lock/lock-c1s16a2-"))]);
}

#[test]
fn after_a_disconnect_the_lost_create_is_not_adopted_but_cleaned_up() {
    let (mut h, _) = started::<SequentialLock>(1, 1);
    // The Java client fails the op first, then tells the watcher.
    h.reply(1, Err(ZkError::ConnectionLoss)); // sends op 2 (queued)
    let out = h.session(SessionEvent::Disconnected);
    assert_eq!(out.events, [AppEvent::GaveUp]);
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    // A new request queues anew: a new node, not the old one.
    assert_eq!(out.sent, [(3, create_seq("/lock/lock-c1s16a2-"))]);
    // The abandoned lookup's answer is ignored.
    assert!(h.reply(2, children(&[MINE])).sent.is_empty());
    let new = "lock-c1s16a2-0000000004";
    let out = h.reply(3, created(&format!("/lock/{new}"), 8, ME));
    assert_eq!(out.events, [enq(4)]);
    // The old attempt's node (seq 2) is lower, but it is ours: deleted,
    // not waited on. PRED's node (seq 3) queued while we were away: wait.
    let pred = "lock-c0s32a1-0000000003";
    let out = h.reply(4, children(&[MINE, pred, new]));
    assert_eq!(
        out.sent,
        [
            (5, delete(&format!("/lock/{MINE}"))),
            (6, exists_watch(&format!("/lock/{pred}")))
        ]
    );
}

#[test]
fn deletes_its_own_leftovers_and_does_not_wait_on_them() {
    let mut h = enqueued();
    let leftover = "lock-c1s16a0-0000000001";
    let out = h.reply(2, children(&[leftover, MINE]));
    assert_eq!(out.sent, [(3, delete(&format!("/lock/{leftover}")))]);
    assert_eq!(out.events, acquired(5));
}

#[test]
fn disconnect_while_holding_loses_the_lock_and_retries_with_a_new_node() {
    let mut h = enqueued();
    h.reply(2, children(&[MINE]));
    let out = h.session(SessionEvent::Disconnected);
    assert_eq!(out.events, [AppEvent::LostLock]);
    assert_eq!(h.timer(), None, "the hold timer is cancelled");
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    assert_eq!(
        out.sent,
        [
            (3, delete(&format!("/lock/{MINE}"))),
            (4, create_seq("/lock/lock-c1s16a2-"))
        ]
    );
}

#[test]
fn disconnect_while_waiting_gives_up_and_ignores_the_old_watch() {
    let mut h = waiting();
    let out = h.session(SessionEvent::Disconnected);
    assert_eq!(out.events, [AppEvent::GaveUp]);
    assert!(out.sent.is_empty());
    // While disconnected nothing is sent.
    let out = h.watch(EventType::NodeDeleted, &format!("/lock/{PRED}"));
    assert!(out.sent.is_empty() && out.events.is_empty());
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    assert_eq!(
        out.sent,
        [
            (4, delete(&format!("/lock/{MINE}"))),
            (5, create_seq("/lock/lock-c1s16a2-"))
        ]
    );
}

#[test]
fn expiry_while_holding_loses_the_lock_and_retries_in_a_new_session() {
    let mut h = enqueued();
    h.reply(2, children(&[MINE]));
    let out = h.session(SessionEvent::Expired);
    assert_eq!(out.events, [AppEvent::LostLock]);
    assert_eq!(out.session_request, Some(SessionRequest::Reopen));
    h.set_session(0x11);
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    // The old node died with the session: nothing to clean up.
    assert_eq!(out.sent, [(3, create_seq("/lock/lock-c1s17a2-"))]);
}

#[test]
fn release_lost_to_connection_loss_is_retried_on_reconnect() {
    let mut h = enqueued();
    h.reply(2, children(&[MINE]));
    let out = h.fire_timer().unwrap();
    assert_eq!(out.sent, [(3, delete(&format!("/lock/{MINE}")))]);
    h.reply(3, Err(ZkError::ConnectionLoss));
    let out = h.session(SessionEvent::Disconnected);
    assert!(out.events.is_empty(), "released already, nothing to lose");
    // The run is over (one round) and the session closed: nothing more.
    let out = h.session(SessionEvent::SyncConnected);
    assert!(out.sent.is_empty());
}

#[test]
fn thinks_between_rounds_then_asks_again() {
    let (mut h, _) = started::<SequentialLock>(1, 2);
    h.reply(1, created(&format!("/lock/{MINE}"), 5, ME));
    h.reply(2, children(&[MINE]));
    let out = h.fire_timer().unwrap();
    assert_eq!(out.events.last(), Some(&AppEvent::Released));
    assert_eq!(out.session_request, None);
    assert_eq!(h.timer(), Some(4 + 2));
    let out = h.fire_timer().unwrap();
    assert_eq!(out.events, [REQ]);
    assert_eq!(out.sent, [(4, create_seq("/lock/lock-c1s16a2-"))]);
    assert!(!h.client.is_done());
}

#[test]
fn root_create_lost_is_sent_again() {
    let mut h = Harness::new(
        <SequentialLock as zkrecipes::Recipe>::new(&params(1, 1)),
        ME,
    );
    h.start();
    // The Java order: the op fails first, then `Disconnected` comes.
    let out = h.reply(0, Err(ZkError::ConnectionLoss));
    assert_eq!(out.sent, [(1, create_persistent("/lock"))]);
    assert!(out.events.is_empty());
    assert!(h.session(SessionEvent::Disconnected).sent.is_empty());
    assert!(h.session(SessionEvent::SyncConnected).sent.is_empty());
    let out = h.reply(1, created("/lock", 1, 0));
    assert_eq!(out.events, [REQ]);
    // Had the loss come after `Disconnected`, the reconnect asks again.
    let mut h = Harness::new(
        <SequentialLock as zkrecipes::Recipe>::new(&params(1, 1)),
        ME,
    );
    h.start();
    h.session(SessionEvent::Disconnected);
    assert!(h.reply(0, Err(ZkError::ConnectionLoss)).sent.is_empty());
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.sent, [(1, create_persistent("/lock"))]);
}

#[test]
fn nested_roots_create_every_ancestor() {
    let mut p = params(0, 1);
    p.root = "/app/locks".into();
    let mut h = Harness::new(<SequentialLock as zkrecipes::Recipe>::new(&p), ME);
    let out = h.start();
    assert_eq!(
        out.sent,
        [
            (0, create_persistent("/app")),
            (1, create_persistent("/app/locks"))
        ]
    );
    // Only the last reply counts.
    assert!(h.reply(0, Err(ZkError::NodeExists)).events.is_empty());
    let out = h.reply(1, created("/app/locks", 2, 0));
    assert_eq!(out.sent, [(2, create_seq("/app/locks/lock-c0s16a1-"))]);
}
