//! ZooKeeper's own guarantees, both ways: a correct server's history
//! passes, each broken guarantee is caught with its story.

use zkjudge::build::Build;
use zkjudge::history::{OpRecord, Record, ResultRecord, TxnRecord};
use zkjudge::judges::zk::{Ephemerals, ReadApplied, SessionFifo, SessionZxids};
use zkjudge::verdict::{Config, Judge, Status, Verdict};

fn judge(j: &dyn Judge, h: &Build) -> Verdict {
    j.judge(&h.run(), &Config::default())
}

fn text(v: &Verdict) -> String {
    format!("{}\n{}", v.summary, v.story.join("\n"))
}

/// Two sessions writing, reading, one reconnecting to a follower that has
/// caught up, one expiring, the other closing: everything as ZooKeeper does.
fn healthy() -> Build {
    let mut h = Build::new();
    h.connect(1).connect(2);
    h.create(1, "/R/a", "ephemeral");
    h.set(2, "/R", -1);
    h.read(1, "getData", "/R", true);
    h.drop_connection(1);
    h.reattach(1, 1);
    h.read(1, "getData", "/R", false);
    h.sync(2, "/R");
    h.read(2, "exists", "/R/a", false);
    h.expire(1);
    h.close(2);
    h.end();
    h
}

#[test]
fn a_healthy_servers_history_passes_every_guarantee() {
    let h = healthy();
    for j in [
        &SessionFifo as &dyn Judge,
        &SessionZxids,
        &ReadApplied,
        &Ephemerals,
    ] {
        let v = judge(j, &h);
        assert_eq!(v.status, Status::Ok, "{}: {}", j.name(), text(&v));
    }
}

#[test]
fn replies_out_of_request_order_are_caught() {
    let mut h = Build::new();
    h.connect(1);
    let op = |p: &str| OpRecord {
        op: "getData".into(),
        path: Some(p.into()),
        ..OpRecord::default()
    };
    let first = h.request(1, op("/R"));
    let second = h.request(1, op("/L"));
    h.reply(1, second, 1, 0, Some(1), ResultRecord::default());
    h.reply(1, first, 1, 0, Some(1), ResultRecord::default());
    h.end();
    let v = judge(&SessionFifo, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(
        t.contains("session 0x1 got the reply to xid 2 before the reply to xid 1"),
        "{t}"
    );
    assert!(t.contains("(getData /L) at line 6"), "{t}");
    assert_eq!(v.lines, vec![4, 5, 6]);
}

#[test]
fn requests_of_a_dead_connection_may_go_unanswered() {
    let mut h = Build::new();
    h.connect(1);
    h.request(
        1,
        OpRecord {
            op: "getData".into(),
            path: Some("/R".into()),
            ..OpRecord::default()
        },
    );
    h.drop_connection(1);
    h.reattach(1, 1);
    h.read(1, "getData", "/R", false);
    h.end();
    assert_eq!(judge(&SessionFifo, &h).status, Status::Ok);
}

#[test]
fn a_session_sent_back_in_time_after_a_reconnect_is_caught() {
    let mut h = Build::new();
    h.connect(1);
    h.set(1, "/R", -1);
    h.set(1, "/R", -1);
    h.drop_connection(1);
    h.reattach(1, 2);
    h.read_at(1, "getData", "/R", false, 1);
    h.end();
    let v = judge(&SessionZxids, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(t.contains("went down from 3 to 1"), "{t}");
    assert!(t.contains("from s2"), "{t}");
    assert!(t.contains("reattached"), "names the reconnect: {t}");
    assert!(t.contains("dropped connection"), "names the fault: {t}");
    // The same stale read is also a read below the session's last zxid.
    let v = judge(&ReadApplied, &h);
    assert_eq!(v.status, Status::Violation);
    assert!(text(&v).contains("had already seen zxid 3"), "{}", text(&v));
}

#[test]
fn a_read_after_sync_older_than_the_leader_at_the_sync_is_caught() {
    let mut h = Build::new();
    h.connect(1).connect_on(2, 1);
    h.set(1, "/R", -1); // zxid 3: the leader's newest
    h.sync(2, "/R");
    // Session 2 had seen only zxid 2 (its connect) but synced at zxid 3.
    h.read_at(2, "getData", "/R", false, 2);
    h.end();
    let v = judge(&ReadApplied, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(text(&v).contains("synced at line"), "{}", text(&v));
    assert!(
        text(&v).contains("leader had committed zxid 3"),
        "{}",
        text(&v)
    );
    // Without the sync, the same read is allowed: session 2 saw nothing newer.
    let mut h = Build::new();
    h.connect(1).connect_on(2, 1);
    h.set(1, "/R", -1);
    h.read_at(2, "getData", "/R", false, 2);
    h.end();
    assert_eq!(judge(&ReadApplied, &h).status, Status::Ok);
}

#[test]
fn an_ephemeral_left_behind_by_its_sessions_close_is_caught() {
    let mut h = Build::new();
    h.connect(1);
    h.create(1, "/L/mine", "ephemeral");
    // The leader closes session 1 but forgets its ephemeral.
    h.push(Record::Commit {
        t: 9,
        zxid: h.zxid() + 1,
        session: 1,
        xid: None,
        txn: TxnRecord::CloseSession {
            ephemerals: Vec::new(),
            expired: true,
        },
    });
    h.end();
    let v = judge(&Ephemerals, &h);
    assert_eq!(v.status, Status::Violation);
    let t = text(&v);
    assert!(t.contains("session 0x1 expired at zxid 3"), "{t}");
    assert!(
        t.contains("/L/mine (created at zxid 2, line 5) was still there at the end"),
        "{t}"
    );
}

#[test]
fn guarantees_with_nothing_to_judge_are_incomplete() {
    let mut h = Build::new();
    h.connect(1);
    h.end();
    for j in [
        &SessionFifo as &dyn Judge,
        &SessionZxids,
        &ReadApplied,
        &Ephemerals,
    ] {
        let v = judge(j, &h);
        assert_eq!(v.status, Status::Incomplete, "{}: {}", j.name(), text(&v));
        assert!(v.summary.starts_with("nothing to judge"), "{}", v.summary);
    }
}

/// The history with the reply at record `index` lost: the server sent it
/// on a connection that was already gone, so the client never saw it.
fn with_lost_reply(h: &Build, index: usize) -> zkjudge::run::Run {
    let mut records = h.records();
    match &mut records[index] {
        Record::Reply { lost, .. } => *lost = true,
        other => panic!("record {index} is no reply: {other:?}"),
    }
    zkjudge::run::Run::from_records(records)
}

#[test]
fn a_zxid_only_a_lost_reply_carried_does_not_bind_the_session() {
    // Session 1's write commits at zxid 2 but its reply is lost with the
    // connection: the client saw zxid 1 at most, so a server that applied
    // only zxid 1 may answer it after the reconnect.
    let mut h = Build::new();
    h.connect(1);
    h.set(1, "/R", -1);
    let lost = h.records().len() - 1;
    h.drop_connection(1);
    h.reattach(1, 1);
    h.read_at(1, "getData", "/R", false, 1);
    h.end();
    let run = with_lost_reply(&h, lost);
    for j in [&SessionZxids as &dyn Judge, &ReadApplied] {
        let v = j.judge(&run, &Config::default());
        assert_eq!(v.status, Status::Ok, "{}: {}", j.name(), text(&v));
    }
    // The twin: the reply arrived, so the same read goes back in time.
    let v = judge(&SessionZxids, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    assert!(text(&v).contains("went down from 2 to 1"), "{}", text(&v));
}

#[test]
fn an_ephemeral_made_after_its_sessions_close_is_caught_as_made_after() {
    let mut h = Build::new();
    h.connect(1);
    let closed = h.close(1);
    // The leader takes a create for session 1 after closing it.
    h.push(Record::Commit {
        t: 9,
        zxid: closed + 1,
        session: 1,
        xid: Some(9),
        txn: TxnRecord::Create {
            path: "/L/late".into(),
            data: String::new(),
            ephemeral_owner: 1,
        },
    });
    h.end();
    let v = judge(&Ephemerals, &h);
    assert_eq!(v.status, Status::Violation, "{}", text(&v));
    let t = text(&v);
    assert!(
        t.contains("yet /L/late was created at zxid 3 (line 8), after its session was gone"),
        "{t}"
    );
}
