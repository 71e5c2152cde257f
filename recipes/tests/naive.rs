//! The naive (herd) lock, fed by hand: exact ops and events.

use crate::common::*;
use zkrecipes::lock::flaws::NaiveNoRewatch;
use zkrecipes::lock::NaiveLock;
use zkrecipes::testkit::{created, exists};
use zkrecipes::AppEvent;
use zksim::{Client, EventType, Response, SessionEvent, SessionRequest, ZkError};

const LOCK: &str = "/lock/lock";

#[test]
fn creates_the_lock_node_and_holds_it_under_its_czxid() {
    let (mut h, out) = started::<NaiveLock>(0, 1);
    assert_eq!(out.events, [REQ]);
    assert_eq!(out.sent, [(1, create_ephemeral(LOCK))]);
    let out = h.reply(1, created(LOCK, 9, ME));
    let mut want = vec![AppEvent::Enqueued { seq: None }];
    want.extend(acquired(9));
    assert_eq!(out.events, want);
    let out = h.fire_timer().unwrap();
    assert_eq!(out.sent, [(2, delete(LOCK))]);
    assert_eq!(
        out.events,
        [AppEvent::ResourceWrite { fence: 9 }, AppEvent::Released]
    );
    assert_eq!(out.session_request, Some(SessionRequest::Close));
    assert!(h.client.is_done());
}

#[test]
fn on_node_exists_watches_and_races_again_on_deletion() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    let out = h.reply(1, Err(ZkError::NodeExists));
    assert_eq!(out.sent, [(2, exists_watch(LOCK))]);
    let out = h.reply(2, exists(Some((3, OTHER))));
    assert!(out.sent.is_empty() && out.events.is_empty());
    let out = h.watch(EventType::NodeDeleted, LOCK);
    assert_eq!(out.sent, [(3, create_ephemeral(LOCK))]);
    // Lost the race again: back to watching.
    let out = h.reply(3, Err(ZkError::NodeExists));
    assert_eq!(out.sent, [(4, exists_watch(LOCK))]);
}

#[test]
fn creates_at_once_when_exists_says_the_node_is_gone() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    h.reply(1, Err(ZkError::NodeExists));
    let out = h.reply(2, exists(None));
    assert_eq!(out.sent, [(3, create_ephemeral(LOCK))]);
}

#[test]
fn flawed_no_rewatch_waits_when_exists_says_the_node_is_gone() {
    let (mut h, _) = started::<NaiveNoRewatch>(0, 1);
    h.reply(1, Err(ZkError::NodeExists));
    let out = h.reply(2, exists(None));
    assert!(
        out.sent.is_empty(),
        "W2: waits for a NodeDeleted that will not come"
    );
    // Only someone creating the node wakes it: it then watches again.
    let out = h.watch(EventType::NodeCreated, LOCK);
    assert_eq!(out.sent, [(3, exists_watch(LOCK))]);
}

#[test]
fn connection_loss_on_create_checks_the_owner_and_adopts_its_node() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    let out = h.reply(1, Err(ZkError::ConnectionLoss));
    assert_eq!(out.sent, [(2, exists_watch(LOCK))]);
    let out = h.reply(2, exists(Some((7, ME))));
    let mut want = vec![AppEvent::Enqueued { seq: None }];
    want.extend(acquired(7));
    assert_eq!(out.events, want);
}

#[test]
fn disconnect_while_holding_loses_the_lock_and_cleans_up_only_its_own_node() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    h.reply(1, created(LOCK, 9, ME));
    let out = h.session(SessionEvent::Disconnected);
    assert_eq!(out.events, [AppEvent::LostLock]);
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    assert_eq!(
        out.sent,
        [
            (2, sync(LOCK)),
            (3, exists_nowatch(LOCK)),
            (4, create_ephemeral(LOCK))
        ]
    );
    assert!(h.reply(2, Ok(Response::Synced)).sent.is_empty());
    // Still ours: delete it.
    let out = h.reply(3, exists(Some((9, ME))));
    assert_eq!(out.sent, [(5, delete(LOCK))]);
    let out = h.reply(4, Err(ZkError::NodeExists));
    assert_eq!(out.sent, [(6, exists_watch(LOCK))]);
    let out = h.reply(6, exists(None));
    assert_eq!(out.sent, [(7, create_ephemeral(LOCK))]);
}

#[test]
fn cleanup_never_deletes_another_clients_node() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    h.reply(1, created(LOCK, 9, ME));
    h.session(SessionEvent::Disconnected);
    h.session(SessionEvent::SyncConnected);
    h.reply(2, Ok(Response::Synced));
    let out = h.reply(3, exists(Some((12, OTHER))));
    assert!(out.sent.is_empty());
}

#[test]
fn disconnect_while_waiting_gives_up() {
    let (mut h, _) = started::<NaiveLock>(0, 1);
    h.reply(1, Err(ZkError::NodeExists));
    h.reply(2, exists(Some((3, OTHER))));
    let out = h.session(SessionEvent::Disconnected);
    assert_eq!(out.events, [AppEvent::GaveUp]);
    // Nothing of ours to clean up: just try again.
    let out = h.session(SessionEvent::SyncConnected);
    assert_eq!(out.events, [REQ]);
    assert_eq!(out.sent, [(3, create_ephemeral(LOCK))]);
}
