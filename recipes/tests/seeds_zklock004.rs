//! Seed 004 `ZkLock` port: what it sorts, what it watches, what it does
//! after a wakeup and on errors.

use crate::seeds_support::*;
use zkrecipes::AppEvent;
use zksim::{CreateMode, EventType, Op, Response, SessionEvent, ZkError};

const NAME: &str = "seed004-zklock";

/// Runs start → root exists → create, returns the driver after the create reply
/// (with the GetChildren op id).
fn up_to_list(created_name: &str, czxid: i64) -> (Drive, u32) {
    let mut d = build(NAME, &params(1, 3, "/lock", 1), 7);
    let (op, sent) = only(&d.start());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
    assert_eq!(d.history, vec![AppEvent::Requested { shared: false }]);
    let (op, sent) = only(&d.reply(op, exists(Some(1))));
    assert_eq!(
        sent,
        Op::Create {
            path: "/lock/lock_".into(),
            data: b"lock".to_vec(),
            mode: CreateMode::EphemeralSequential
        }
    );
    let out = d.reply(op, created(&format!("/lock/{created_name}"), czxid));
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    (d, op)
}

#[test]
fn first_in_line_acquires_with_its_own_czxid_as_fence() {
    let (mut d, op) = up_to_list("lock_0000000003", 42);
    let out = d.reply(op, children(&["lock_0000000004", "lock_0000000003"]));
    assert!(out.sent.is_empty());
    assert_eq!(
        out.events,
        vec![acquired(42), AppEvent::ResourceWrite { fence: 42 }]
    );
    assert!(d.timer.is_some(), "hold timer armed");
    // Hold over: last write, delete own node, Released, close (1 round).
    let (op, sent) = only(&d.fire_timer());
    assert_eq!(
        sent,
        Op::Delete {
            path: "/lock/lock_0000000003".into(),
            version: -1
        }
    );
    let out = d.reply(op, Ok(Response::Deleted));
    assert!(out.events.is_empty(), "Released came with the hold timer");
    assert_eq!(d.history.last(), Some(&AppEvent::Released));
    assert!(d.closed && d.is_done());
}

#[test]
fn creates_the_business_root_when_missing() {
    let mut d = build(NAME, &params(0, 2, "/lock", 1), 7);
    let (op, _) = only(&d.start());
    let (op, sent) = only(&d.reply(op, exists(None)));
    assert_eq!(
        sent,
        Op::Create {
            path: "/lock".into(),
            data: b"lock".to_vec(),
            mode: CreateMode::Persistent
        }
    );
    // A racing creator made it first: NodeExists is an exception → return false.
    let out = d.reply(op, Err(ZkError::NodeExists));
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
    assert!(d.is_done());
}

#[test]
fn sorts_whole_names_as_strings() {
    // A negative suffix (cversion overflow, S6) sorts before the others as a string.
    let (mut d, op) = up_to_list("lock_0000000001", 5);
    let out = d.reply(op, children(&["lock_0000000001", "lock_-2147483648"]));
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/lock_-2147483648".into(),
            watch: true
        }
    );
    assert!(
        out.events.is_empty(),
        "not acquired: the string sort puts '-' first"
    );
}

#[test]
fn wakes_on_node_deleted_and_acquires_without_listing_again() {
    let (mut d, op) = up_to_list("lock_0000000005", 50);
    let out = d.reply(
        op,
        children(&["lock_0000000005", "lock_0000000001", "lock_0000000003"]),
    );
    let (op, sent) = only(&out);
    // Watches the name just before its own, with the default watcher.
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/lock_0000000003".into(),
            watch: true
        }
    );
    assert!(d.reply(op, exists(Some(30))).sent.is_empty());
    // Session trouble is ignored.
    assert!(d
        .session_event(SessionEvent::Disconnected)
        .events
        .is_empty());
    // The predecessor (a waiter!) goes away: the lock is assumed at once.
    let out = d.watch(EventType::NodeDeleted, "/lock/lock_0000000003");
    assert!(out.sent.is_empty(), "no GetChildren after the wakeup");
    assert_eq!(
        out.events,
        vec![acquired(50), AppEvent::ResourceWrite { fence: 50 }]
    );
}

#[test]
fn exists_finding_nothing_still_waits_forever() {
    let (mut d, op) = up_to_list("lock_0000000005", 50);
    let (op, _) = only(&d.reply(op, children(&["lock_0000000004", "lock_0000000005"])));
    let out = d.reply(op, exists(None));
    assert!(out.sent.is_empty() && out.events.is_empty());
    assert!(!d.is_done());
    assert_eq!(d.timer, None, "nothing will ever wake it but a NodeDeleted");
}

#[test]
fn connection_loss_while_acquiring_gives_up_and_failed_delete_skips_close() {
    let (mut d, op) = up_to_list("lock_0000000001", 9);
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert_eq!(out.events, vec![AppEvent::GaveUp]);

    let (mut d, op) = up_to_list("lock_0000000001", 9);
    d.reply(op, children(&["lock_0000000001"]));
    let (op, _) = only(&d.fire_timer());
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.events.is_empty(), "Released came with the hold timer");
    assert_eq!(d.history.last(), Some(&AppEvent::Released));
    assert!(d.is_done());
    assert!(!d.closed, "close() threw before zooKeeper.close()");
}
