//! election-safety, election-liveness and queue, both ways.

use zkjudge::build::Build;
use zkjudge::judges::election::{ElectionLiveness, ElectionSafety};
use zkjudge::judges::queue::Queue;
use zkjudge::verdict::{Config, Judge, Status, Verdict};

fn config() -> Config {
    Config {
        leader: Some("/E".into()),
        queue: Some("/Q".into()),
        resource: Some("/R".into()),
        ..Config::default()
    }
}

fn judge(j: &dyn Judge, h: &Build) -> Verdict {
    j.judge(&h.run(), &config())
}

fn text(v: &Verdict) -> String {
    format!("{}\n{}\n{:?}", v.summary, v.story.join("\n"), v.figures)
}

/// Three candidates (Curator's LeaderLatch names); the first leads and
/// writes, is silenced and expires; the second takes over and writes.
fn handover() -> Build {
    let mut h = Build::new();
    for s in 1..=3 {
        h.connect(s);
        h.lock(s, "/E", &format!("_c_{s}-latch-"));
    }
    h.set(1, "/R", -1);
    h.silence(1);
    h.expire(1);
    h.set(2, "/R", -1);
    h.end();
    h
}

#[test]
fn election_passes_a_clean_handover_after_an_expiry() {
    let h = handover();
    let v = judge(&ElectionSafety, &h);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    let v = judge(&ElectionLiveness, &h);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert!(v.summary.contains("after the last fault"), "{}", v.summary);
    assert!(v.summary.contains("session 0x2 led /E"), "{}", v.summary);
}

#[test]
fn election_catches_two_leaders_acting_at_once() {
    let mut h = Build::new();
    for s in 1..=2 {
        h.connect(s);
        h.lock(s, "/E", &format!("_c_{s}-latch-"));
    }
    h.set(1, "/R", -1);
    h.set(2, "/R", -1); // 2 believes it leads, but 1 still does
    h.end();
    let v = judge(&ElectionSafety, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(
        t.contains(
            "two leaders acting at once: session 0x2 wrote /R at zxid 6 while session 0x1 led /E"
        ),
        "{t}"
    );
    assert!(
        t.contains("_c_1-latch-0000000000 (session 0x1), _c_2-latch-0000000001 (session 0x2)"),
        "{t}"
    );
}

#[test]
fn election_catches_a_group_left_without_a_leader_after_the_last_fault() {
    let mut h = Build::new();
    for s in 1..=2 {
        h.connect(s);
        h.lock(s, "/E", &format!("_c_{s}-latch-"));
    }
    h.set(1, "/R", -1);
    h.close(2); // the other candidate has gone home
    h.silence(1);
    h.expire(1);
    h.end();
    let v = judge(&ElectionLiveness, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(t.contains("no leader after the last fault"), "{t}");
    assert!(t.contains("silenced session 0x1"), "{t}");
    assert!(t.contains("candidates at the end: none"), "{t}");
}

#[test]
fn election_with_nothing_to_judge_is_incomplete() {
    let mut h = Build::new();
    h.connect(1);
    h.end();
    for j in [&ElectionSafety as &dyn Judge, &ElectionLiveness] {
        assert_eq!(judge(j, &h).status, Status::Incomplete, "{}", j.name());
    }
}

/// A producer queues three items; two consumers take them and report each
/// by creating /R/<data>.
fn consumed() -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    let mut items = Vec::new();
    for n in 0..3 {
        items.push(h.create_with(
            1,
            "/Q/entry-",
            "persistent_sequential",
            &format!("item-{n}"),
        ));
    }
    for (n, item) in items.iter().enumerate() {
        let consumer = 2 + (n as i64 % 2);
        h.delete(consumer, item);
        h.create(consumer, &format!("/R/item-{n}"), "persistent");
    }
    h.end();
    h
}

#[test]
fn queue_passes_items_each_consumed_once() {
    let v = judge(&Queue, &consumed());
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert!(
        v.summary.starts_with("3 items taken from /Q"),
        "{}",
        v.summary
    );
}

#[test]
fn queue_catches_an_item_taken_and_never_reported() {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let item = h.create_with(1, "/Q/entry-", "persistent_sequential", "item-0");
    h.delete(2, &item); // taken; the reply is lost with the connection
    h.drop_connection(2);
    h.end();
    let v = judge(&Queue, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(
        t.contains("item \"item-0\" was taken from /Q but never reported consumed"),
        "{t}"
    );
    assert!(t.contains("session 0x2 took it: deleted at zxid 4"), "{t}");
    assert!(t.contains("nobody ever created /R/item-0"), "{t}");
    assert!(t.contains("disconnected"), "{t}");
}

#[test]
fn queue_catches_an_item_consumed_twice() {
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    // The producer's create was retried: two nodes, one item.
    let a = h.create_with(1, "/Q/entry-", "persistent_sequential", "item-0");
    let b = h.create_with(1, "/Q/entry-", "persistent_sequential", "item-0");
    h.delete(2, &a);
    h.create(2, "/R/item-0", "persistent");
    h.delete(3, &b);
    h.create_exists(3, "/R/item-0");
    h.end();
    let v = judge(&Queue, &h);
    assert_eq!(v.status, Status::Violation);
    assert!(
        text(&v).contains("item \"item-0\" was consumed 2 times"),
        "{}",
        text(&v)
    );
}

#[test]
fn queue_catches_a_report_of_an_item_never_queued_and_is_incomplete_with_nothing_queued() {
    let mut h = consumed();
    h.create(2, "/R/ghost", "persistent");
    let v = judge(&Queue, &h);
    assert_eq!(v.status, Status::Violation);
    assert!(
        v.summary
            .contains("\"ghost\" was reported consumed but never queued"),
        "{}",
        v.summary
    );
    let mut h = Build::new();
    h.connect(1);
    h.end();
    assert_eq!(judge(&Queue, &h).status, Status::Incomplete);
}

#[test]
fn election_does_not_count_a_closed_sessions_candidate_as_leader() {
    // Session 1's candidate is persistent (an app bug): it outlives the
    // session, stays lowest, and nobody can lead. A candidate of a closed
    // session is no leader.
    let after_expiry = |cleaned_up: bool| {
        let mut h = Build::new();
        h.connect(1).connect(2);
        let stale = h.create(1, "/E/_c_1-latch-", "persistent_sequential");
        h.lock(2, "/E", "_c_2-latch-");
        h.set(1, "/R", -1);
        h.silence(1);
        h.expire(1);
        if cleaned_up {
            h.delete(2, &stale);
        }
        h.end();
        judge(&ElectionLiveness, &h)
    };
    let v = after_expiry(false);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(t.contains("no leader after the last fault"), "{t}");
    assert!(
        t.contains("candidates at the end: _c_1-latch-0000000000 (session 0x1), _c_2-latch-0000000001 (session 0x2)"),
        "{t}"
    );
    // The twin: once session 2 removes the stale candidate, it leads.
    let v = after_expiry(true);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert!(v.summary.contains("session 0x2 led /E"), "{}", v.summary);
}

#[test]
fn queue_does_not_count_an_item_still_queued_as_lost() {
    // Two items queued, one taken and reported: the other is still in the
    // queue at the end, not lost.
    let mut h = Build::new();
    h.connect(1).connect(2);
    let first = h.create_with(1, "/Q/entry-", "persistent_sequential", "item-0");
    h.create_with(1, "/Q/entry-", "persistent_sequential", "item-1");
    h.delete(2, &first);
    h.create(2, "/R/item-0", "persistent");
    h.end();
    let v = judge(&Queue, &h);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert!(
        v.summary.starts_with(
            "1 items taken from /Q, each reported consumed exactly once (1 left in the queue)"
        ),
        "{}",
        v.summary
    );
}

/// Two candidates lead in turn and leave; then one more fault (a dropped
/// connection). `resign`: the second deletes its own node (its term is
/// over); else it goes with its session's expiry, a fault of its own.
fn over_then_a_fault(resign: bool) -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let first = h.lock(1, "/E", "_c_1-latch-");
    let second = h.lock(2, "/E", "_c_2-latch-");
    h.set(1, "/R", -1);
    h.delete(1, &first);
    h.set(2, "/R", -1);
    if resign {
        h.delete(2, &second);
    } else {
        h.silence(2);
        h.expire(2);
    }
    h.drop_connection(1);
    h.end();
    h
}

#[test]
fn election_liveness_passes_an_election_over_before_the_last_fault() {
    let v = judge(&ElectionLiveness, &over_then_a_fault(true));
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert!(
        v.summary.contains(
            "the election was over before the last fault (the server dropped connection 1 of session 0x1"
        ),
        "{}",
        v.summary
    );
    assert!(
        v.summary
            .contains("its last candidate, _c_2-latch-0000000001 of session 0x2, resigned at zxid"),
        "{}",
        v.summary
    );
    // The twin: the last candidate did not resign, its session expired —
    // the group was left without a leader.
    let v = judge(&ElectionLiveness, &over_then_a_fault(false));
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(
        text(&v).contains("no leader after the last fault"),
        "{}",
        text(&v)
    );
}
