//! herd, leaks and liveness over a lock's histories, both ways.

use zkjudge::build::Build;
use zkjudge::judges::herd::Herd;
use zkjudge::judges::leaks::Leaks;
use zkjudge::judges::liveness::Liveness;
use zkjudge::verdict::{Config, Judge, Status, Verdict};

fn config() -> Config {
    Config {
        lock: Some("/L".into()),
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

fn figure(v: &Verdict, name: &str) -> String {
    v.figures
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// kazoo's Lock: each waiter watches its predecessor only; each release
/// wakes the one behind it.
fn predecessor_watch(clients: i64) -> Build {
    let mut h = Build::new();
    let mut nodes = Vec::new();
    for s in 1..=clients {
        h.connect(s);
        nodes.push(h.lock(s, "/L", &format!("{s:04}__lock__")));
    }
    for s in 2..=clients {
        h.read(s, "exists", &nodes[s as usize - 2], true);
    }
    for s in 1..=clients {
        h.set(s, "/R", -1);
        h.delete(s, &nodes[s as usize - 1]);
        if s < clients {
            h.notify(s + 1, "NodeDeleted", &nodes[s as usize - 1]);
        }
        h.close(s);
    }
    h.end();
    h
}

/// The naive lock: one plain ephemeral /L/lock, every waiter watching it.
fn naive(clients: i64) -> Build {
    let mut h = Build::new();
    for s in 1..=clients {
        h.connect(s);
    }
    for holder in 1..=clients {
        h.create(holder, "/L/lock", "ephemeral");
        for s in holder + 1..=clients {
            h.read(s, "exists", "/L/lock", true);
        }
        h.set(holder, "/R", -1);
        h.delete(holder, "/L/lock");
        for s in holder + 1..=clients {
            h.notify(s, "NodeDeleted", "/L/lock");
        }
    }
    for s in 1..=clients {
        h.close(s);
    }
    h.end();
    h
}

#[test]
fn herd_passes_a_predecessor_watch_lock_with_one_notification_per_release() {
    let v = judge(&Herd, &predecessor_watch(4));
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert_eq!(figure(&v, "releases"), "4");
    assert_eq!(figure(&v, "notifications per release (max)"), "1");
    assert_eq!(figure(&v, "notifications per release (mean)"), "0.75");
}

#[test]
fn herd_catches_the_naive_lock_waking_every_waiter() {
    let v = judge(&Herd, &naive(16));
    assert_eq!(v.status, Status::Violation);
    assert_eq!(figure(&v, "notifications per release (max)"), "15");
    let t = text(&v);
    assert!(t.contains("woke 15 sessions"), "{t}");
    assert!(t.contains("session 0x1 deleted /L/lock at zxid"), "{t}");
    assert!(t.contains("0x2, 0x3, 0x4, 0x5, 0x6, 0x7, …"), "{t}");
}

#[test]
fn herd_lets_a_writers_release_wake_the_readers_behind_it_together() {
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    let w = h.lock(1, "/L", "aa__lock__");
    h.lock(2, "/L", "bb__rlock__");
    h.lock(3, "/L", "cc__rlock__");
    h.read(2, "exists", &w, true);
    h.read(3, "exists", &w, true);
    h.delete(1, &w);
    h.notify(2, "NodeDeleted", &w).notify(3, "NodeDeleted", &w);
    h.end();
    assert_eq!(
        judge(&Herd, &h).status,
        Status::Ok,
        "{}",
        text(&judge(&Herd, &h))
    );
    // The same wakeups with a writer among them are a herd.
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    let w = h.lock(1, "/L", "aa__lock__");
    h.lock(2, "/L", "bb__rlock__");
    h.lock(3, "/L", "cc__lock__");
    h.read(2, "exists", &w, true);
    h.read(3, "exists", &w, true);
    h.delete(1, &w);
    h.notify(2, "NodeDeleted", &w).notify(3, "NodeDeleted", &w);
    h.end();
    assert_eq!(judge(&Herd, &h).status, Status::Violation);
}

#[test]
fn lock_judges_with_no_lock_activity_are_incomplete() {
    let mut h = Build::new();
    h.connect(1);
    h.set(1, "/R", -1);
    h.end();
    for j in [&Herd as &dyn Judge, &Leaks, &Liveness] {
        let v = judge(j, &h);
        assert_eq!(v.status, Status::Incomplete, "{}: {}", j.name(), text(&v));
    }
    // And without `end`, the end-of-run judges do not judge.
    let mut cut = predecessor_watch(2).records();
    cut.pop();
    let run = zkjudge::run::Run::from_records(cut);
    for j in [&Leaks as &dyn Judge, &Liveness] {
        let v = j.judge(&run, &config());
        assert_eq!(v.status, Status::Incomplete, "{}", j.name());
        assert!(v.summary.contains("no `end` record"), "{}", v.summary);
    }
}

#[test]
fn leaks_and_liveness_pass_a_run_where_everyone_released() {
    let h = predecessor_watch(3);
    for j in [&Leaks as &dyn Judge, &Liveness] {
        let v = judge(j, &h);
        assert_eq!(v.status, Status::Ok, "{}: {}", j.name(), text(&v));
    }
}

#[test]
fn a_waiter_still_watching_its_live_predecessor_is_neither_leak_nor_stuck() {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "lock-");
    h.lock(2, "/L", "lock-");
    h.read(2, "getData", &a, true);
    h.set(1, "/R", -1); // the holder acts
    h.end();
    for j in [&Leaks as &dyn Judge, &Liveness] {
        let v = judge(j, &h);
        assert_eq!(v.status, Status::Ok, "{}: {}", j.name(), text(&v));
    }
}

#[test]
fn leaks_catches_a_contender_forgotten_after_a_retried_create() {
    let mut h = Build::new();
    h.connect(1);
    let lost = h.lock(1, "/L", "_c_1-lock-"); // its reply was lost …
    h.lock(1, "/L", "_c_2-lock-"); // … so the app queued again
    h.set(1, "/R", -1);
    h.end();
    let v = judge(&Leaks, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(
        t.contains(&format!(
            "{lost} (created by session 0x1 at zxid 2, line 5)"
        )),
        "{t}"
    );
    assert!(
        t.contains("queued again with a newer contender and forgot this one"),
        "{t}"
    );
    assert_eq!(figure(&v, "leaked"), "1");
}

#[test]
fn leaks_catches_a_holder_that_never_acted() {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "lock-");
    h.delete(1, &a);
    h.close(1);
    h.lock(2, "/L", "lock-"); // granted, and then session 2 does nothing
    h.end();
    let v = judge(&Leaks, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(text(&v).contains("sent nothing after that"), "{}", text(&v));
}

#[test]
fn liveness_catches_a_waiter_whose_watch_fired_and_that_did_nothing() {
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    let a = h.lock(1, "/L", "lock-");
    let b = h.lock(2, "/L", "lock-");
    let _c = h.lock(3, "/L", "lock-");
    h.read(3, "exists", &b, true);
    h.read(2, "exists", &a, true);
    h.delete(2, &b); // 2 gives up: 3's watch fires …
    h.notify(3, "NodeDeleted", &b);
    h.set(1, "/R", -1);
    h.end(); // … and 3 never looks again: it waits behind 1 without a watch
    let v = judge(&Liveness, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(t.contains("session 0x3 waits for ever"), "{t}");
    assert!(
        t.contains("it waits behind lock-0000000000 (session 0x1)"),
        "{t}"
    );
    assert!(t.contains("exists /L/lock-0000000001"), "{t}");
    assert!(t.contains(", and it set none after"), "{t}");
    assert_eq!(
        judge(&Leaks, &h).status,
        Status::Ok,
        "a waiter is not a leak"
    );
}

#[test]
fn liveness_catches_a_waiter_that_never_watched() {
    let mut h = Build::new();
    h.connect(1).connect(2);
    h.lock(1, "/L", "lock-");
    h.lock(2, "/L", "lock-");
    h.set(1, "/R", -1);
    h.end();
    let v = judge(&Liveness, &h);
    assert_eq!(v.status, Status::Violation);
    assert!(
        text(&v).contains("session 0x2 never set a watch under /L"),
        "{}",
        text(&v)
    );
}

#[test]
fn liveness_counts_a_fired_watch_as_gone_even_when_its_node_lives_on() {
    // Watches are one-shot: session 2's data watch on its predecessor fires
    // when the holder touches that node, and the node lives on. Without a
    // new watch, nothing will tell session 2 when the node goes.
    let waiter = |rearm: bool| {
        let mut h = Build::new();
        h.connect(1).connect(2);
        let a = h.lock(1, "/L", "lock-");
        h.lock(2, "/L", "lock-");
        h.read(2, "getData", &a, true);
        h.set(1, &a, -1);
        h.notify(2, "NodeDataChanged", &a);
        if rearm {
            h.read(2, "getData", &a, true);
        }
        h.set(1, "/R", -1);
        h.end();
        judge(&Liveness, &h)
    };
    let v = waiter(false);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(t.contains("session 0x2 waits for ever"), "{t}");
    assert!(t.contains("getData /L/lock-0000000000"), "{t}");
    assert!(t.contains(", and it set none after"), "{t}");
    let v = waiter(true);
    assert_eq!(v.status, Status::Ok, "the watch set again: {}", text(&v));
}

#[test]
fn liveness_catches_a_waiter_watching_for_its_gone_predecessor_to_come_back() {
    // The classic race: session 3's predecessor went away before its
    // `exists`, which therefore set a watch for the name's creation. A
    // sequential name never comes back: session 3 waits behind session 1
    // for ever.
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    h.lock(1, "/L", "lock-");
    let b = h.lock(2, "/L", "lock-");
    h.lock(3, "/L", "lock-");
    h.delete(2, &b);
    assert_eq!(h.read(3, "exists", &b, true), None);
    h.set(1, "/R", -1);
    h.end();
    let v = judge(&Liveness, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(t.contains("session 0x3 waits for ever"), "{t}");
    assert!(
        t.contains("waits for a node that will never come back"),
        "{t}"
    );
}

#[test]
fn a_watching_read_whose_reply_was_lost_sets_no_watch() {
    // Session 2's exists on its predecessor reached the server, but the
    // reply went down with the connection: the client never learned of the
    // watch and will not re-register it after the reconnect. Nothing wakes it.
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "lock-");
    h.lock(2, "/L", "lock-");
    h.read(2, "exists", &a, true);
    let lost = h.records().len() - 1;
    h.drop_connection(2);
    h.reattach(2, 1);
    h.set(1, "/R", -1);
    h.end();
    let mut records = h.records();
    match &mut records[lost] {
        zkjudge::history::Record::Reply { lost, .. } => *lost = true,
        other => panic!("record {lost} is no reply: {other:?}"),
    }
    let run = zkjudge::run::Run::from_records(records);
    let v = Liveness.judge(&run, &config());
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(
        text(&v).contains("session 0x2 waits for ever"),
        "{}",
        text(&v)
    );
    // The twin: the reply arrived, the watch stands, session 2 waits well.
    let v = judge(&Liveness, &h);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
}

#[test]
fn herd_counts_an_expiry_that_takes_the_holders_node_as_a_release() {
    // The naive lock's holder expires: its ephemeral /L/lock goes with the
    // closeSession, and every waiter's watch fires at that zxid.
    let mut h = Build::new();
    for s in 1..=4 {
        h.connect(s);
    }
    h.create(1, "/L/lock", "ephemeral");
    for s in 2..=4 {
        h.read(s, "exists", "/L/lock", true);
    }
    h.silence(1);
    let expiry = h.expire(1);
    for s in 2..=4 {
        h.notify(s, "NodeDeleted", "/L/lock");
    }
    h.end();
    let v = judge(&Herd, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(
        v.summary.contains(&format!(
            "one change of /L at zxid {expiry} woke 3 sessions"
        )),
        "{}",
        text(&v)
    );
    assert_eq!(figure(&v, "releases"), "1");
    assert_eq!(figure(&v, "notifications charged to no zxid"), "0");
}

#[test]
fn liveness_names_the_newest_contender_of_a_session_that_queued_twice() {
    // Session 2's first create was retried (its reply lost): both its
    // contenders wait behind session 1, and it watches nothing. The one it
    // waits with is the newer; the older is the leak's to report.
    let mut h = Build::new();
    h.connect(1).connect(2);
    h.lock(1, "/L", "lock-");
    let older = h.lock(2, "/L", "lock-");
    let newer = h.lock(2, "/L", "lock-");
    h.set(1, "/R", -1);
    h.end();
    let v = judge(&Liveness, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(
        v.summary.contains(&format!(
            "{} of /L has nothing left to wait for",
            newer.trim_start_matches("/L/")
        )),
        "{}",
        text(&v)
    );
    assert_eq!(figure(&v, "stuck"), "1", "{}", text(&v));
    let v = judge(&Leaks, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(
        v.summary
            .contains(&format!("first: {}", older.trim_start_matches("/L/"))),
        "{}",
        text(&v)
    );
}

#[test]
fn herd_counts_sessions_woken_not_notifications() {
    // Session 2 watches its predecessor and /L's children: one release
    // fires both of its watches. One session woken is no herd.
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "lock-");
    h.lock(2, "/L", "lock-");
    h.read(2, "exists", &a, true);
    h.read(2, "getChildren", "/L", true);
    h.delete(1, &a);
    h.notify(2, "NodeDeleted", &a)
        .notify(2, "NodeChildrenChanged", "/L");
    h.end();
    let v = judge(&Herd, &h);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert_eq!(figure(&v, "notifications per release (max)"), "2");
}

#[test]
fn leaks_spares_a_holder_with_a_watch_that_can_still_fire() {
    // Session 1 watched its /config before it queued and was granted the
    // lock at once; it has not acted yet, but that watch can still wake it.
    let holder = |watch: bool| {
        let mut h = Build::new();
        h.connect(1);
        h.create(1, "/config", "persistent");
        h.read(1, "getData", "/config", watch);
        h.lock(1, "/L", "lock-");
        h.end();
        judge(&Leaks, &h)
    };
    let v = holder(true);
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    // The twin without the watch is the holder that never acted.
    let v = holder(false);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(text(&v).contains("sent nothing after that"), "{}", text(&v));
}

/// A queue lock after session 2's expiry: its contender went with it, and
/// the session that replaced it (4) re-set the old predecessor watch on
/// the holder's node — as Curator's retried `getData(predecessor, watch)`
/// does. The holder's release wakes session 3 (next in line) and 4.
/// `queued`: session 4 also holds a contender, so it waits in line too.
fn release_after_an_expiry(queued: bool) -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2).connect(3);
    let a = h.lock(1, "/L", "lock-");
    let b = h.lock(2, "/L", "lock-");
    h.lock(3, "/L", "lock-");
    h.read(2, "getData", &a, true);
    h.read(3, "getData", &b, true);
    h.silence(2);
    h.expire(2);
    h.notify(3, "NodeDeleted", &b);
    h.read(3, "getData", &a, true);
    h.connect(4);
    if queued {
        h.lock(4, "/L", "lock-");
    }
    h.read(4, "getData", &a, true);
    h.set(1, "/R", -1);
    h.delete(1, &a);
    h.notify(3, "NodeDeleted", &a).notify(4, "NodeDeleted", &a);
    h.end();
    h
}

#[test]
fn herd_does_not_charge_a_wakeup_of_a_session_holding_no_contender() {
    let v = judge(&Herd, &release_after_an_expiry(false));
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
    assert_eq!(figure(&v, "woken sessions holding no contender"), "1");
    assert_eq!(figure(&v, "notifications per release (max)"), "2");
    // The twin: session 4 queued as well, so two waiters woke — a herd.
    let v = judge(&Herd, &release_after_an_expiry(true));
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(v.summary.contains("woke 2 sessions"), "{}", text(&v));
    assert!(
        text(&v).contains("2 notifications to 2 waiting sessions (0x3, 0x4"),
        "{}",
        text(&v)
    );
    assert_eq!(figure(&v, "woken sessions holding no contender"), "0");
}

/// Session 1's first contender (A) is followed by session 2's (X), then
/// session 1 queues again (B: its first create's reply was lost and its
/// retry did not find A) and watches B's predecessor X; session 2 watches
/// A. `found`: session 1 finds A after all and deletes it.
fn queued_behind_itself(found: bool) -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2);
    let a = h.lock(1, "/L", "aa__lock__");
    let x = h.lock(2, "/L", "xx__lock__");
    h.lock(1, "/L", "aa__lock__");
    h.read(1, "exists", &x, true);
    h.read(2, "exists", &a, true);
    if found {
        h.delete(1, &a);
        h.notify(2, "NodeDeleted", &a);
        h.set(2, "/R", -1);
    }
    h.end();
    h
}

#[test]
fn leaks_catches_a_session_queued_behind_its_own_forgotten_contender() {
    let v = judge(&Leaks, &queued_behind_itself(false));
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(
        t.contains("first: aa__lock__0000000000 of session 0x1"),
        "{t}"
    );
    assert!(
        t.contains(
            "newer contender aa__lock__0000000002 waits behind it: the session waits for itself"
        ),
        "{t}"
    );
    // The twin: the session found its first contender and removed it.
    let v = judge(&Leaks, &queued_behind_itself(true));
    assert_eq!(v.status, Status::Ok, "{}", text(&v));
}
