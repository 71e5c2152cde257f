//! Seed 002 `DistributedQueue` port: offer, take, peek/poll.

use crate::seeds_support::*;
use zkrecipes::AppEvent;
use zksim::{CreateMode, EventType, Op, OpId, Response, SessionEvent, ZkError};

const TAKE: &str = "seed002-queue";
const POLL: &str = "seed002-queue-poll";

/// Constructor: exists(dir) → it exists; returns the first op after it.
fn constructed(d: &mut Drive) -> (OpId, Op) {
    let (op, sent) = only(&d.start());
    assert_eq!(
        sent,
        Op::Exists {
            path: "/q".into(),
            watch: false
        }
    );
    only(&d.reply(op, exists(Some(1))))
}

#[test]
fn producer_offers_persistent_sequential_items_and_reports_them_when_confirmed() {
    let mut d = build(TAKE, &params(2, 4, "/q", 2), 1);
    let (op, sent) = constructed(&mut d);
    assert_eq!(
        sent,
        Op::Create {
            path: "/q/qn-".into(),
            data: b"2000000".to_vec(),
            mode: CreateMode::PersistentSequential
        }
    );
    // Queue node missing: create it and offer again.
    let (op, sent) = only(&d.reply(op, Err(ZkError::NoNode)));
    assert!(matches!(
        sent,
        Op::Create {
            mode: CreateMode::Persistent,
            ..
        }
    ));
    let (op, _) = only(&d.reply(op, created("/q", 2)));
    let out = d.reply(op, created("/q/qn-0000000000", 3));
    assert_eq!(out.events, vec![AppEvent::Offered { item: 2_000_000 }]);
    let (op, sent) = only(&d.fire_timer());
    assert!(matches!(sent, Op::Create { ref data, .. } if data == b"2000001"));
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.events.is_empty(), "not confirmed, not offered");
    assert!(d.is_done() && d.closed, "the exception stops the producer");
}

#[test]
fn take_reads_the_smallest_then_deletes_and_skips_vanished_heads() {
    let mut d = build(TAKE, &params(1, 2, "/q", 2), 1);
    let (op, sent) = constructed(&mut d);
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/q".into(),
            watch: true
        }
    );
    let out = d.reply(op, children(&["qn-0000000010", "junk", "qn-0000000009"]));
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::GetData {
            path: "/q/qn-0000000009".into(),
            watch: false
        }
    );
    // Someone else took it: next head.
    let (op, sent) = only(&d.reply(op, Err(ZkError::NoNode)));
    assert_eq!(
        sent,
        Op::GetData {
            path: "/q/qn-0000000010".into(),
            watch: false
        }
    );
    let (op, sent) = only(&d.reply(op, data(b"7", 10)));
    assert_eq!(
        sent,
        Op::Delete {
            path: "/q/qn-0000000010".into(),
            version: -1
        }
    );
    let out = d.reply(op, Ok(Response::Deleted));
    assert_eq!(out.events, vec![AppEvent::Taken { item: 7 }]);
    // Second take: empty → await the child watch.
    let (op, _) = only(&out);
    assert!(d.reply(op, children(&[])).sent.is_empty());
    let (_, sent) = only(&d.watch(EventType::NodeChildrenChanged, "/q"));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/q".into(),
            watch: true
        }
    );
}

#[test]
fn lost_delete_reply_loses_the_item_and_the_consumer() {
    let mut d = build(TAKE, &params(1, 2, "/q", 1), 1);
    let (op, _) = constructed(&mut d);
    let (op, _) = only(&d.reply(op, children(&["qn-0000000000"])));
    let (op, _) = only(&d.reply(op, data(b"5", 3)));
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(out.events.is_empty() && out.sent.is_empty());
    assert!(d.is_done());
}

#[test]
fn a_disconnect_opens_the_latch_and_the_list_that_follows_kills_take() {
    let mut d = build(TAKE, &params(1, 2, "/q", 1), 1);
    let (op, _) = constructed(&mut d);
    assert!(d.reply(op, children(&[])).sent.is_empty());
    let (op, sent) = only(&d.session_event(SessionEvent::Disconnected));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/q".into(),
            watch: true
        }
    );
    d.reply(op, Err(ZkError::ConnectionLoss));
    assert!(d.is_done());
}

#[test]
fn poll_consumer_peeks_then_removes_and_sleeps_when_empty() {
    let mut d = build(POLL, &params(1, 2, "/q", 1), 1);
    let (op, sent) = constructed(&mut d);
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/q".into(),
            watch: false
        }
    );
    assert!(d.reply(op, children(&[])).sent.is_empty());
    assert!(d.timer.is_some());
    let (op, _) = only(&d.fire_timer());
    let (op, sent) = only(&d.reply(op, children(&["qn-0000000004"])));
    assert_eq!(
        sent,
        Op::GetData {
            path: "/q/qn-0000000004".into(),
            watch: false
        }
    );
    // peek() got it; poll() lists again and removes.
    let (op, sent) = only(&d.reply(op, data(b"0", 4)));
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/q".into(),
            watch: false
        }
    );
    let (op, _) = only(&d.reply(op, children(&["qn-0000000004"])));
    let (op, sent) = only(&d.reply(op, data(b"0", 4)));
    assert_eq!(
        sent,
        Op::Delete {
            path: "/q/qn-0000000004".into(),
            version: -1
        }
    );
    let out = d.reply(op, Ok(Response::Deleted));
    assert_eq!(out.events, vec![AppEvent::Taken { item: 0 }]);
    assert!(
        d.is_done() && d.closed,
        "its share (1 producer × 1 round) is done"
    );
}

#[test]
fn shares_are_split_among_consumers() {
    // 5 clients: producers 0, 2, 4 (3 × 2 = 6 items); consumers 1, 3 take 3 each.
    for c in [1usize, 3] {
        let mut d = build(TAKE, &params(c, 5, "/q", 2), 1);
        let (mut op, _) = constructed(&mut d);
        for k in 0..3u8 {
            assert!(!d.is_done());
            let (o, _) = only(&d.reply(op, children(&["qn-0000000001"])));
            let (o, _) = only(&d.reply(o, data(&[b'1' + k], 1)));
            let out = d.reply(o, Ok(Response::Deleted));
            if k < 2 {
                op = only(&out).0;
            }
        }
        assert!(d.is_done());
    }
}
