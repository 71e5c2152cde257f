//! Seed 002/003 Apache `WriteLock` ports: both `ZNodeName` orderings, the
//! bare-id mix-up, `ProtocolSupport` retries and the `LockWatcher`.

use std::cmp::Ordering;

use crate::seeds_support::*;
use zkrecipes::seeds::znode_name::{head_set, tree_set, NameOrder, ZNodeName};
use zkrecipes::AppEvent;
use zksim::{CreateMode, EventType, Op, OpId, SessionEvent, ZkError};

const ORIGINAL: &str = "seed003-apache-writelock";
const ARTICLE: &str = "seed002-writelock";

#[test]
fn original_ordering_puts_the_smaller_session_first() {
    let a = ZNodeName::new("x-1-0000000005");
    let b = ZNodeName::new("x-2-0000000001");
    assert_eq!(a.compare(&b, NameOrder::PrefixFirst), Ordering::Less);
    assert_eq!(a.compare(&b, NameOrder::SequenceOnly), Ordering::Greater);
    // As strings: session 10 sorts before session 9.
    let ten = ZNodeName::new("/l/x-10-0000000009");
    let nine = ZNodeName::new("/l/x-9-0000000001");
    assert_eq!(ten.compare(&nine, NameOrder::PrefixFirst), Ordering::Less);
    // Names without a sequence: last in the original, first in the article's.
    let plain = ZNodeName::new("x-1-abc");
    assert_eq!(plain.sequence, -1);
    assert_eq!(plain.compare(&a, NameOrder::PrefixFirst), Ordering::Greater);
    assert_eq!(plain.compare(&a, NameOrder::SequenceOnly), Ordering::Less);
    // A bare name's prefix sorts after every full path ('/' < 'x').
    let set = tree_set([ten.clone(), nine.clone()], NameOrder::PrefixFirst);
    let bare = ZNodeName::new("x-9-0000000001");
    assert_eq!(head_set(&set, &bare, NameOrder::PrefixFirst).len(), 2);
}

/// start → ensurePathExists (dir exists) → findPrefixInChildren → create.
fn to_create(d: &mut Drive, listed: &[&str]) -> OpId {
    let (op, sent) = only(&d.start());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
    let (op, sent) = only(&d.reply(op, exists(Some(1))));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    let (op, sent) = only(&d.reply(op, children(listed)));
    assert_eq!(
        sent,
        Op::Create {
            path: format!("/lock/x-{}-", d.session),
            data: vec![0x12, 0x34],
            mode: CreateMode::EphemeralSequential
        }
    );
    op
}

fn list_after_create(d: &mut Drive, op: OpId, name: &str, czxid: i64) -> OpId {
    let out = d.reply(op, created(&format!("/lock/{name}"), czxid));
    assert!(matches!(
        out.events[..],
        [AppEvent::Enqueued { seq: Some(_) }]
    ));
    let (op, sent) = only(&out);
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
fn original_acquires_beside_a_holder_with_a_larger_session_id() {
    // Holder has session 2 and sequence 0; we (session 1) come later.
    let mut d = build(ORIGINAL, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, &["x-2-0000000000"]);
    let op = list_after_create(&mut d, op, "x-1-0000000001", 11);
    let out = d.reply(op, children(&["x-2-0000000000", "x-1-0000000001"]));
    assert!(out.sent.is_empty());
    assert_eq!(
        out.events,
        vec![acquired(11), AppEvent::ResourceWrite { fence: 11 }]
    );

    // The article's ordering waits for the holder instead.
    let mut d = build(ARTICLE, &params(0, 2, "/lock", 1), 1);
    let op = to_create(&mut d, &["x-2-0000000000"]);
    let op = list_after_create(&mut d, op, "x-1-0000000001", 11);
    let out = d.reply(op, children(&["x-2-0000000000", "x-1-0000000001"]));
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/x-2-0000000000".into(),
            watch: true
        }
    );
    assert!(out.events.is_empty());
}

#[test]
fn protocol_support_retries_ten_times_with_growing_sleeps() {
    let mut d = build(ARTICLE, &params(0, 2, "/lock", 1), 3);
    let op = to_create(&mut d, &[]);
    let mut op = list_after_create(&mut d, op, "x-3-0000000000", 5);
    // Attempt 0 fails: retried at once (retryDelay(0) does not sleep).
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    let (next, sent) = only(&out);
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    op = next;
    // Attempts 1..=8 sleep i * 500 ms = 5 i ticks, then re-execute.
    for i in 1..=8u64 {
        let before = d.now;
        assert!(d.reply(op, Err(ZkError::ConnectionLoss)).sent.is_empty());
        assert_eq!(d.timer, Some(before + 5 * i));
        let (next, _) = only(&d.fire_timer());
        op = next;
    }
    // The tenth loss still sleeps 9 × 500 ms, then is thrown out of lock().
    let before = d.now;
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.events.is_empty() && out.sent.is_empty());
    assert_eq!(d.timer, Some(before + 45));
    let out = d.fire_timer();
    assert!(out.sent.is_empty());
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
    assert!(d.is_done());
}

#[test]
fn session_expired_is_not_retried() {
    let mut d = build(ARTICLE, &params(0, 2, "/lock", 1), 3);
    let op = to_create(&mut d, &[]);
    let out = d.reply(op, Err(ZkError::SessionExpired));
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
}

/// Create reply lost; the retry finds our node by its session prefix.
fn reuse_after_lost_create(name: &str) -> (Drive, zksim::CxOutput<AppEvent>) {
    let mut d = build(name, &params(0, 2, "/lock", 1), 7);
    let op = to_create(&mut d, &[]);
    let (op, sent) = only(&d.reply(op, Err(ZkError::ConnectionLoss)));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    // findPrefixInChildren finds x-7-…; then lists again.
    let (op, _) = only(&d.reply(op, children(&["x-7-0000000003", "x-8-0000000004"])));
    let out = d.reply(op, children(&["x-8-0000000004", "x-7-0000000003"]));
    (d, out)
}

#[test]
fn original_bare_id_after_reuse_watches_itself_forever() {
    let (mut d, out) = reuse_after_lost_create(ORIGINAL);
    // Every full path sorts below the bare id: it watches the largest, itself here.
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/x-8-0000000004".into(),
            watch: true
        }
    );
    assert!(d.reply(op, exists(Some(4))).events.is_empty());
    // x-8 goes away; the LockWatcher re-runs lock(): now it watches its own node.
    let (op, _) = only(&d.watch(EventType::NodeDeleted, "/lock/x-8-0000000004"));
    let (op, sent) = only(&d.reply(op, exists(Some(1))));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    let (_, sent) = only(&d.reply(op, children(&["x-7-0000000003"])));
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/x-7-0000000003".into(),
            watch: true
        }
    );
}

#[test]
fn article_reuse_acquires_and_reads_its_fence() {
    let (mut d, out) = reuse_after_lost_create(ARTICLE);
    // First by sequence and id is the full path: owner. The czxid is unknown
    // (the create reply was lost), so the port reads it before reporting.
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/x-7-0000000003".into(),
            watch: false
        }
    );
    // The reused node is reported once the list shows it.
    assert_eq!(out.events, vec![AppEvent::Enqueued { seq: Some(3) }]);
    let out = d.reply(op, exists(Some(33)));
    assert_eq!(
        out.events,
        vec![acquired(33), AppEvent::ResourceWrite { fence: 33 }]
    );
}

#[test]
fn vanished_predecessor_returns_false_and_only_a_session_event_wakes_it() {
    let mut d = build(ARTICLE, &params(0, 2, "/lock", 1), 3);
    let op = to_create(&mut d, &[]);
    let op = list_after_create(&mut d, op, "x-3-0000000002", 5);
    let (op, sent) = only(&d.reply(op, children(&["x-3-0000000002", "x-4-0000000001"])));
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock/x-4-0000000001".into(),
            watch: true
        }
    );
    let out = d.reply(op, exists(None));
    assert!(out.sent.is_empty() && out.events.is_empty());
    assert_eq!(d.timer, None);
    // A connection blip reaches the registered LockWatcher: lock() runs again.
    let (_, sent) = only(&d.session_event(SessionEvent::Disconnected));
    assert_eq!(
        sent,
        Op::Exists {
            path: "/lock".into(),
            watch: false
        }
    );
}

#[test]
fn unlock_deletes_once_and_does_not_retry() {
    let mut d = build(ARTICLE, &params(0, 2, "/lock", 2), 3);
    let op = to_create(&mut d, &[]);
    let op = list_after_create(&mut d, op, "x-3-0000000000", 5);
    let out = d.reply(op, children(&["x-3-0000000000"]));
    assert_eq!(
        out.events,
        vec![acquired(5), AppEvent::ResourceWrite { fence: 5 }]
    );
    let (op, sent) = only(&d.fire_timer());
    assert_eq!(
        sent,
        Op::Delete {
            path: "/lock/x-3-0000000000".into(),
            version: -1
        }
    );
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.sent.is_empty());
    assert!(out.events.is_empty(), "Released came with the hold timer");
    assert_eq!(d.history.last(), Some(&AppEvent::Released));
    // Next round: findPrefixInChildren reuses the node the lost delete left.
    let (op, _) = only(&d.fire_timer());
    let (op, _) = only(&d.reply(op, exists(Some(1))));
    let (_, sent) = only(&d.reply(op, children(&["x-3-0000000000"])));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
}
