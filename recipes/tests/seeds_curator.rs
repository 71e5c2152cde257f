//! Seed 002 Curator ports: protected names, RetryLoop, the lock loop, the
//! (absent) connection-state handling of the mutex and the leader selector's.

use crate::seeds_support::*;
use zkrecipes::AppEvent;
use zksim::{CreateMode, EventType, Op, OpId, Response, SessionEvent, ZkError};

const MUTEX: &str = "seed002-curator-mutex";
const LEADER: &str = "seed002-curator-leader";
const OURS: &str = "_c_00000001-0000-4000-8000-000000000001-lock-";

fn create_op(out: &zksim::CxOutput<zkrecipes::AppEvent>) -> OpId {
    let (op, sent) = only(out);
    assert_eq!(
        sent,
        Op::Create {
            path: format!("/lock/{OURS}"),
            data: b"client-1".to_vec(),
            mode: CreateMode::EphemeralSequential
        }
    );
    op
}

fn list(out: &zksim::CxOutput<zkrecipes::AppEvent>) -> OpId {
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
fn sorts_by_the_suffix_after_lock_and_watches_the_predecessor_with_get_data() {
    let mut d = build(MUTEX, &params(1, 3, "/lock", 1), 5);
    let op = create_op(&d.start());
    let out = d.reply(op, created(&format!("/lock/{OURS}0000000002"), 20));
    assert!(out.events.contains(&AppEvent::Enqueued { seq: Some(2) }));
    let op = list(&out);
    let other = "_c_00000000-0000-4000-8000-000000000001-lock-";
    let out = d.reply(
        op,
        children(&[
            &format!("{OURS}0000000002"),
            &format!("{other}0000000001"),
            "_c_ff-lock-0000000000",
        ]),
    );
    let (op, sent) = only(&out);
    assert_eq!(
        sent,
        Op::GetData {
            path: format!("/lock/{other}0000000001"),
            watch: true
        }
    );
    // The predecessor already went: NoNode → list again at once.
    let op = list(&d.reply(op, Err(ZkError::NoNode)));
    let (op, _) = only(&d.reply(
        op,
        children(&[&format!("{OURS}0000000002"), &format!("{other}0000000001")]),
    ));
    assert!(d.reply(op, data(b"client-0", 10)).sent.is_empty());
    // Any event wakes the waiting thread, a Disconnected too.
    let op = list(&d.session_event(SessionEvent::Disconnected));
    let out = d.reply(op, children(&[&format!("{OURS}0000000002")]));
    assert_eq!(
        out.events,
        vec![acquired(20), AppEvent::ResourceWrite { fence: 20 }]
    );
}

#[test]
fn retried_create_finds_its_protected_node_and_reads_the_fence() {
    let mut d = build(MUTEX, &params(1, 2, "/lock", 1), 5);
    let op = create_op(&d.start());
    assert!(d.reply(op, Err(ZkError::ConnectionLoss)).sent.is_empty());
    assert_eq!(d.timer, Some(10), "first backoff: 1 s");
    let op = list(&d.fire_timer());
    let (op, sent) = only(&d.reply(
        op,
        children(&["_c_x-lock-0000000000", &format!("{OURS}0000000001")]),
    ));
    assert_eq!(
        sent,
        Op::Exists {
            path: format!("/lock/{OURS}0000000001"),
            watch: false
        }
    );
    let op = list(&d.reply(op, exists(Some(15))));
    let (op, sent) = only(&d.reply(
        op,
        children(&["_c_x-lock-0000000000", &format!("{OURS}0000000001")]),
    ));
    assert_eq!(
        sent,
        Op::GetData {
            path: "/lock/_c_x-lock-0000000000".into(),
            watch: true
        }
    );
    d.reply(op, data(b"", 1));
    let op = list(&d.watch(EventType::NodeDeleted, "/lock/_c_x-lock-0000000000"));
    let out = d.reply(op, children(&[&format!("{OURS}0000000001")]));
    assert_eq!(
        out.events,
        vec![acquired(15), AppEvent::ResourceWrite { fence: 15 }]
    );
}

#[test]
fn retry_loop_gives_up_after_three_retries() {
    let mut d = build(MUTEX, &params(1, 2, "/lock", 1), 5);
    let op = create_op(&d.start());
    let op = list(&d.reply(op, created(&format!("/lock/{OURS}0000000001"), 15)));
    let mut op = op;
    for backoff in [10u64, 20, 40] {
        let before = d.now;
        assert!(d.reply(op, Err(ZkError::ConnectionLoss)).sent.is_empty());
        assert_eq!(d.timer, Some(before + backoff));
        op = list(&d.fire_timer());
    }
    // Fourth failure: the exception leaves acquire; the node is deleted (guaranteed).
    let out = d.reply(op, Err(ZkError::ConnectionLoss));
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Delete {
            path: format!("/lock/{OURS}0000000001"),
            version: -1
        }
    );
}

#[test]
fn the_holder_ignores_connection_state_and_an_expired_handle_is_replaced() {
    let mut d = build(MUTEX, &params(1, 2, "/lock", 1), 5);
    let op = create_op(&d.start());
    let op = list(&d.reply(op, created(&format!("/lock/{OURS}0000000001"), 15)));
    d.reply(op, children(&[&format!("{OURS}0000000001")]));
    assert!(d
        .session_event(SessionEvent::Disconnected)
        .events
        .is_empty());
    let out = d.session_event(SessionEvent::Expired);
    assert!(
        out.events.is_empty(),
        "no LostLock: InterProcessMutex has no state listener"
    );
    assert!(d.reopened);
    // Hold over: Released, release deletes; NoNode (the session took it) is fine.
    let out = d.fire_timer();
    assert_eq!(
        out.events,
        vec![AppEvent::ResourceWrite { fence: 15 }, AppEvent::Released]
    );
    let (op, _) = only(&out);
    assert!(d.reply(op, Err(ZkError::NoNode)).events.is_empty());
    assert!(d.is_done() && d.closed);
}

#[test]
fn max_wait_runs_out_deletes_the_node_and_skips_the_round() {
    let mut d = build(MUTEX, &params(1, 2, "/lock", 1), 5);
    let op = create_op(&d.start());
    let op = list(&d.reply(op, created(&format!("/lock/{OURS}0000000001"), 15)));
    let (op, _) = only(&d.reply(
        op,
        children(&["_c_x-lock-0000000000", &format!("{OURS}0000000001")]),
    ));
    d.reply(op, data(b"", 1));
    assert_eq!(d.timer, Some(600));
    let op = list(&d.fire_timer());
    let (op, _) = only(&d.reply(
        op,
        children(&["_c_x-lock-0000000000", &format!("{OURS}0000000001")]),
    ));
    let out = d.reply(op, data(b"", 1));
    assert_eq!(out.events, vec![AppEvent::GaveUp]);
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Delete {
            path: format!("/lock/{OURS}0000000001"),
            version: -1
        }
    );
    assert!(d.is_done());
}

#[test]
fn leader_is_elected_abdicates_on_disconnect_and_requeues() {
    let mut d = build(LEADER, &params(1, 2, "/lock", 2), 5);
    let op = create_op(&d.start());
    assert!(d.history.is_empty(), "an election reports no lock events");
    let op = list(&d.reply(op, created(&format!("/lock/{OURS}0000000001"), 15)));
    let out = d.reply(op, children(&[&format!("{OURS}0000000001")]));
    assert_eq!(out.events, vec![AppEvent::Elected]);
    let out = d.session_event(SessionEvent::Disconnected);
    assert_eq!(out.events, vec![AppEvent::Abdicated]);
    assert_eq!(
        out.sent.len(),
        2,
        "guaranteed delete + requeued create: {:?}",
        out.sent
    );
    assert_eq!(
        out.sent[0].1,
        Op::Delete {
            path: format!("/lock/{OURS}0000000001"),
            version: -1
        }
    );
    assert!(
        matches!(&out.sent[1].1, Op::Create { path, .. } if path.contains("000000000002-lock-"))
    );
    // Second term ends normally: release, then close (2 terms done).
    let create = out.sent[1].0;
    let name = "_c_00000001-0000-4000-8000-000000000002-lock-0000000003";
    let op = list(&d.reply(create, created(&format!("/lock/{name}"), 30)));
    d.reply(op, children(&[name]));
    let out = d.fire_timer();
    assert_eq!(out.events, vec![AppEvent::Abdicated]);
    let (op, _) = only(&out);
    d.reply(op, Ok(Response::Deleted));
    assert!(d.is_done() && d.closed);
}

#[test]
fn an_interrupted_protected_create_is_found_and_deleted_in_the_background() {
    let mut d = build(LEADER, &params(1, 2, "/lock", 1), 5);
    let create = create_op(&d.start());
    // SUSPENDED while the create is in flight: the task is cancelled.
    let out = d.session_event(SessionEvent::Disconnected);
    assert!(out.events.is_empty(), "not leading: nothing to abdicate");
    assert_eq!(out.sent.len(), 2, "{:?}", out.sent);
    let (find, sent) = out.sent[0].clone();
    assert_eq!(
        sent,
        Op::GetChildren {
            path: "/lock".into(),
            watch: false
        }
    );
    assert!(
        matches!(&out.sent[1].1, Op::Create { path, .. } if path.contains("000000000002-lock-"))
    );
    // The first create did apply; its reply is lost.
    d.reply(create, Err(ZkError::ConnectionLoss));
    let out = d.reply(
        find,
        children(&[&format!("{OURS}0000000000"), "other-lock-0000000001"]),
    );
    let (_, sent) = only(&out);
    assert_eq!(
        sent,
        Op::Delete {
            path: format!("/lock/{OURS}0000000000"),
            version: -1
        }
    );
}
