//! Seed 000/001 OuYangLiang lock and read/write lock ports.

use crate::seeds_support::*;
use zkrecipes::AppEvent;
use zksim::{CreateMode, EventType, Op, SessionEvent, ZkError};

const LOCK: &str = "seed001-ouyang-lock";
const RW: &str = "seed001-ouyang-rwlock";

/// start → ensureResource (the resource node exists) → create; returns the create's op id.
fn to_create(d: &mut Drive, prefix: &str, client: usize) -> u32 {
    let (op, sent) = only(&d.start());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
    let (op2, sent) = only(&d.reply(op, exists(Some(1))));
    assert_eq!(
        sent,
        Op::Create {
            path: format!("/lock/{prefix}"),
            data: format!("client-{client}").into_bytes(),
            mode: CreateMode::EphemeralSequential
        }
    );
    op2
}

fn list_op(out: &zksim::CxOutput<AppEvent>) -> u32 {
    let (op, sent) = only(out);
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    op
}

#[test]
fn sorts_by_sequence_and_watches_the_previous_one() {
    let mut d = build(LOCK, &params(0, 3, "/lock", 1), 1);
    let op = to_create(&mut d, "lock-", 0);
    let out = d.reply(op, created("/lock/lock-0000000007", 70));
    assert_eq!(out.events, vec![AppEvent::Enqueued { seq: Some(7) }]);
    let op = list_op(&out);
    let out = d.reply(
        op,
        children(&["lock-0000000009", "lock-0000000007", "lock-0000000003"]),
    );
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/lock-0000000003".into(),
            watch: true
        }
    );
    d.reply(op, exists(Some(30)));
    // Session trouble and other paths' events do not wake it.
    assert!(d.session_event(SessionEvent::Disconnected).sent.is_empty());
    assert!(d
        .watch(EventType::NodeDeleted, "/lock/lock-0000000009")
        .sent
        .is_empty());
    // After the wakeup it lists again (unlike seed 004) …
    let op = list_op(&d.watch(EventType::NodeDeleted, "/lock/lock-0000000003"));
    // … and if someone is still ahead it waits again instead of acquiring.
    let out = d.reply(op, children(&["lock-0000000005", "lock-0000000007"]));
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/lock-0000000005".into(),
            watch: true
        }
    );
    // exists says gone: list again right away.
    let op = list_op(&d.reply(op, exists(None)));
    let out = d.reply(op, children(&["lock-0000000007"]));
    assert_eq!(
        out.events,
        vec![acquired(70), AppEvent::ResourceWrite { fence: 70 }]
    );
}

#[test]
fn retries_list_and_exists_after_connection_loss() {
    let mut d = build(LOCK, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, "lock-", 0);
    let op = list_op(&d.reply(op, created("/lock/lock-0000000002", 20)));
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.sent.is_empty() && out.events.is_empty());
    let op = list_op(&d.fire_timer());
    let (op, _) = only(&d.reply(op, children(&["lock-0000000001", "lock-0000000002"])));
    assert!(d.reply(op, Err(ZkError::ConnectionLoss)).sent.is_empty());
    let (_, sent) = only(&d.fire_timer());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/lock-0000000001".into(),
            watch: true
        }
    );
}

#[test]
fn connection_loss_on_create_with_children_throws_on_the_bare_name() {
    let mut d = build(LOCK, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, "lock-", 0);
    let op = list_op(&d.reply(op, Err(ZkError::ConnectionLoss)));
    // lockOnConnectionLoss: getData("lock-0000000001") — no leading '/':
    // the Java client throws IllegalArgumentException, nothing is sent.
    let out = d.reply(op, children(&["lock-0000000000", "lock-0000000001"]));
    assert!(out.sent.is_empty());
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
    assert!(d.is_done());
}

#[test]
fn connection_loss_on_create_with_no_children_locks_again() {
    let mut d = build(LOCK, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, "lock-", 0);
    let op = list_op(&d.reply(op, Err(ZkError::ConnectionLoss)));
    let (_, sent) = only(&d.reply(op, children(&[])));
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
}

#[test]
fn ensure_resource_falls_through_to_create_after_a_lost_exists() {
    let mut d = build(LOCK, &params(0, 2, "/lock", 1), 1);
    let (op, _) = only(&d.start());
    // exists is lost: ensureResource calls itself …
    assert!(d.reply(op, Err(ZkError::ConnectionLoss)).sent.is_empty());
    let (op, sent) = only(&d.fire_timer());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
    // … the inner call finds no node and creates it …
    let (op, sent) = only(&d.reply(op, exists(None)));
    let root = Op::Create {
        path: "/lock".into(),
        data: vec![],
        mode: CreateMode::Persistent,
    };
    assert_eq!(sent, root);
    // … and the outer call then falls through to its own create.
    let (op, sent) = only(&d.reply(op, created("/lock", 2)));
    assert_eq!(sent, root);
    let (_, sent) = only(&d.reply(op, Err(ZkError::NodeExists)));
    assert!(matches!(
        sent,
        Op::Create {
            mode: CreateMode::EphemeralSequential,
            ..
        }
    ));
}

#[test]
fn parse_sequence_reads_the_last_ten_characters() {
    // A suffix past 2^31 (S6) is "-2147483648": its last ten characters do
    // not fit an int, parseInt throws inside the sort and lock() gives up.
    let mut d = build(LOCK, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, "lock-", 0);
    let op = list_op(&d.reply(op, created("/lock/lock-0000000007", 70)));
    let out = d.reply(op, children(&["lock-0000000007", "lock--2147483648"]));
    assert!(out.sent.is_empty());
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
}

#[test]
fn release_retries_delete_and_a_late_nonode_is_thrown_but_released() {
    let mut d = build(LOCK, &params(0, 2, "/lock", 2), 1);
    let op = to_create(&mut d, "lock-", 0);
    let op = list_op(&d.reply(op, created("/lock/lock-0000000000", 10)));
    d.reply(op, children(&["lock-0000000000"]));
    let (op, sent) = only(&d.fire_timer());
    assert_eq!(
        sent,
        Op::Delete {
            path: "/lock/lock-0000000000".into(),
            version: -1
        }
    );
    assert!(d.reply(op, Err(ZkError::ConnectionLoss)).events.is_empty());
    let (op, sent2) = only(&d.fire_timer());
    assert_eq!(sent2, sent);
    let out = d.reply(op, Err(ZkError::NoNode));
    assert!(out.events.is_empty(), "Released came with the hold timer");
    assert_eq!(d.history.last(), Some(&AppEvent::Released));
    // Second round after thinking.
    let out = d.fire_timer();
    assert_eq!(out.events, vec![AppEvent::Requested { shared: false }]);
}

#[test]
fn reader_waits_only_for_the_last_earlier_writer() {
    let mut d = build(RW, &params(1, 3, "/lock", 1), 2);
    let op = to_create(&mut d, "readlock-", 1);
    let op = list_op(&d.reply(op, created("/lock/readlock-0000000004", 40)));
    let out = d.reply(
        op,
        children(&[
            "readlock-0000000004",
            "writelock-0000000001",
            "readlock-0000000000",
            "writelock-0000000002",
            "readlock-0000000003",
        ]),
    );
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/writelock-0000000002".into(),
            watch: true
        }
    );
    d.reply(op, exists(Some(2)));
    let op = list_op(&d.watch(EventType::NodeDeleted, "/lock/writelock-0000000002"));
    let out = d.reply(
        op,
        children(&[
            "readlock-0000000000",
            "readlock-0000000003",
            "readlock-0000000004",
        ]),
    );
    assert_eq!(
        out.events,
        vec![
            AppEvent::Acquired {
                fence: 40,
                shared: true
            },
            AppEvent::ResourceWrite { fence: 40 }
        ]
    );
}

#[test]
fn writer_waits_for_any_earlier_node() {
    let mut d = build(RW, &params(0, 3, "/lock", 1), 2);
    let op = to_create(&mut d, "writelock-", 0);
    let op = list_op(&d.reply(op, created("/lock/writelock-0000000005", 50)));
    let out = d.reply(
        op,
        children(&[
            "writelock-0000000005",
            "readlock-0000000004",
            "writelock-0000000001",
        ]),
    );
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/readlock-0000000004".into(),
            watch: true
        }
    );
}
