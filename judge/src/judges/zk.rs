//! ZooKeeper's own guarantees, judged on what the server did (a check of
//! the server under test, and of the history's recorder):
//!
//! - `session-fifo`: a session's replies come in the order of its requests;
//! - `session-zxids`: the zxids a session's replies carry never decrease,
//!   across reconnects to other servers;
//! - `read-applied`: a read is answered by a server that has applied at
//!   least the session's last seen zxid — after a `sync`, at least the
//!   leader's zxid when the sync arrived;
//! - `ephemerals`: no ephemeral outlives its session (nor is made after it).

use std::collections::{BTreeMap, VecDeque};

use crate::history::{Record, SessionEvent};
use crate::run::Run;
use crate::story;
use crate::verdict::{Config, Judge, Verdict};

pub struct SessionFifo;
pub struct SessionZxids;
pub struct ReadApplied;
pub struct Ephemerals;

fn op_at(run: &Run, reply: usize) -> String {
    run.request(reply)
        .map(|(_, op)| match &op.path {
            Some(p) => format!("{} {p}", op.op),
            None => op.op.clone(),
        })
        .unwrap_or_else(|| "?".into())
}

impl Judge for SessionFifo {
    fn name(&self) -> &'static str {
        "session-fifo"
    }

    fn judge(&self, run: &Run, _: &Config) -> Verdict {
        // Per session: the xids asked on its current connection and not yet
        // answered, oldest first, with their request's index.
        let mut asked: BTreeMap<i64, VecDeque<(i32, usize)>> = BTreeMap::new();
        let mut replies = 0;
        for (i, (_, r)) in run.records.iter().enumerate() {
            match r {
                Record::Request { session, xid, .. } if *xid >= 0 => {
                    asked.entry(*session).or_default().push_back((*xid, i));
                }
                // A new connection: what the old one asked died with it.
                Record::Session {
                    session,
                    event: SessionEvent::Created | SessionEvent::Reattached,
                    ..
                } => {
                    asked.remove(session);
                }
                Record::Reply { session, xid, .. } if *xid >= 0 => {
                    let queue = asked.entry(*session).or_default();
                    let Some(at) = queue.iter().position(|(x, _)| x == xid) else {
                        continue;
                    };
                    replies += 1;
                    if at > 0 {
                        let (skipped, asked_at) = queue[0];
                        let (_, this_asked) = queue[at];
                        return Verdict::violation(
                            self.name(),
                            format!(
                                "{} got the reply to xid {xid} before the reply to xid {skipped}, which it asked first",
                                story::session(*session)
                            ),
                        )
                        .story([
                            format!("{} asked xid {skipped} at {}", story::session(*session), story::line(run, asked_at)),
                            format!("then xid {xid} at {}", story::line(run, this_asked)),
                            format!(
                                "the server answered xid {xid} ({}) at {} while xid {skipped} was still unanswered: ZooKeeper answers a session's requests in the order they were sent",
                                op_at(run, i),
                                story::line(run, i)
                            ),
                            story::fault_clause(run, i),
                        ])
                        .cite(run, [asked_at, this_asked, i]);
                    }
                    queue.pop_front();
                }
                _ => {}
            }
        }
        if replies == 0 {
            return Verdict::incomplete(self.name(), "nothing to judge: no reply to a request");
        }
        Verdict::ok(
            self.name(),
            format!("{replies} replies, each session's in the order it asked"),
        )
        .figure("replies", replies)
    }
}

impl Judge for SessionZxids {
    fn name(&self) -> &'static str {
        "session-zxids"
    }

    fn judge(&self, run: &Run, _: &Config) -> Verdict {
        let mut last: BTreeMap<i64, (i64, usize)> = BTreeMap::new();
        let mut judged = 0;
        for (i, (_, r)) in run.records.iter().enumerate() {
            let Record::Reply {
                session,
                zxid,
                lost: false,
                server,
                ..
            } = r
            else {
                continue;
            };
            if *zxid < 0 {
                continue;
            }
            judged += 1;
            if let Some(&(seen, at)) = last.get(session) {
                if *zxid < seen {
                    let mut story = vec![
                        format!(
                            "{} saw zxid {seen} in the reply at {}",
                            story::session(*session),
                            story::line(run, at)
                        ),
                        format!(
                            "then the reply at {} from s{server} ({}) carried zxid {zxid}: the client went back in time",
                            story::line(run, i),
                            op_at(run, i)
                        ),
                    ];
                    let events = story::session_events(run, *session, i, 2);
                    if !events.is_empty() {
                        story.push(format!(
                            "its session events between, newest first: {}",
                            events.join("; ")
                        ));
                    }
                    story.push(story::fault_clause(run, i));
                    return Verdict::violation(
                        self.name(),
                        format!(
                            "{}'s reply zxids went down from {seen} to {zxid}",
                            story::session(*session)
                        ),
                    )
                    .story(story)
                    .cite(run, [at, i]);
                }
            }
            if last.get(session).is_none_or(|(z, _)| zxid >= z) {
                last.insert(*session, (*zxid, i));
            }
        }
        if judged == 0 {
            return Verdict::incomplete(self.name(), "nothing to judge: no reply was sent");
        }
        Verdict::ok(
            self.name(),
            format!("{judged} replies; no session's zxid ever went down"),
        )
        .figure("replies", judged)
    }
}

impl Judge for ReadApplied {
    fn name(&self) -> &'static str {
        "read-applied"
    }

    fn judge(&self, run: &Run, _: &Config) -> Verdict {
        // Per session: the newest zxid it has seen (and where), and the
        // floor its last sync set (the leader's zxid then, and where).
        let mut seen: BTreeMap<i64, (i64, usize)> = BTreeMap::new();
        let mut synced: BTreeMap<i64, (i64, usize)> = BTreeMap::new();
        let mut judged = 0;
        for (i, (_, r)) in run.records.iter().enumerate() {
            let Record::Reply {
                session,
                zxid,
                lost,
                applied,
                server,
                ..
            } = r
            else {
                continue;
            };
            if *lost {
                continue;
            }
            let request = run.request(i);
            if let Some((q, op)) = request {
                if op.op == "sync" {
                    synced.insert(*session, (run.zxid_before(q), q));
                }
            }
            if let Some(applied) = applied {
                judged += 1;
                let floor_seen = seen.get(session).copied();
                let floor_sync = synced.get(session).copied();
                let broken = [(floor_sync, true), (floor_seen, false)]
                    .into_iter()
                    .filter_map(|(f, sync)| f.map(|f| (f, sync)))
                    .find(|((floor, _), _)| applied < floor);
                if let Some(((floor, at), sync)) = broken {
                    let why = if sync {
                        format!(
                            "{} synced at {}, when the leader had committed zxid {floor}",
                            story::session(*session),
                            story::line(run, at)
                        )
                    } else {
                        format!(
                            "{} had already seen zxid {floor} (the reply at {})",
                            story::session(*session),
                            story::line(run, at)
                        )
                    };
                    return Verdict::violation(
                        self.name(),
                        format!(
                            "{}'s read ({}) was answered by s{server} from zxid {applied}, older than zxid {floor} it was owed",
                            story::session(*session),
                            op_at(run, i)
                        ),
                    )
                    .story([
                        why,
                        format!(
                            "its read was answered at {} by s{server}, which had applied only zxid {applied}: a stale read",
                            story::line(run, i)
                        ),
                        story::fault_clause(run, i),
                    ])
                    .cite(run, [at, i]);
                }
            }
            if *zxid >= 0 && seen.get(session).is_none_or(|(z, _)| zxid > z) {
                seen.insert(*session, (*zxid, i));
            }
        }
        if judged == 0 {
            return Verdict::incomplete(
                self.name(),
                "nothing to judge: no reply says what its server had applied",
            );
        }
        Verdict::ok(
            self.name(),
            format!("{judged} reads, each from a server at least as new as its session had seen"),
        )
        .figure("reads", judged)
    }
}

impl Judge for Ephemerals {
    fn name(&self) -> &'static str {
        "ephemerals"
    }

    fn judge(&self, run: &Run, _: &Config) -> Verdict {
        let mut judged = 0;
        for life in run.tree.lives() {
            if life.ephemeral_owner == 0 {
                continue;
            }
            let Some((end, index, _)) = run
                .tree
                .sessions
                .get(&life.ephemeral_owner)
                .and_then(|s| s.ended)
            else {
                continue;
            };
            judged += 1;
            let after = life.created > end;
            let outlived = life.deleted.is_none_or(|d| d > end);
            if after || outlived {
                let ended = story::session_end(run, life.ephemeral_owner).unwrap_or_default();
                let fate = match (after, life.deleted, life.deleted_at) {
                    (true, _, _) => format!(
                        "yet {} was created at zxid {} ({}), after its session was gone",
                        life.path,
                        life.created,
                        story::line(run, life.created_at)
                    ),
                    (false, Some(d), Some(at)) => format!(
                        "yet {} (created at zxid {}, {}) lived on until zxid {d} ({})",
                        life.path,
                        life.created,
                        story::line(run, life.created_at),
                        story::line(run, at)
                    ),
                    _ => format!(
                        "yet {} (created at zxid {}, {}) was still there at the end of the history",
                        life.path,
                        life.created,
                        story::line(run, life.created_at)
                    ),
                };
                return Verdict::violation(
                    self.name(),
                    format!(
                        "{} outlived its session {:#x}",
                        life.path, life.ephemeral_owner
                    ),
                )
                .story([ended, fate])
                .cite(
                    run,
                    [index, life.created_at].into_iter().chain(life.deleted_at),
                );
            }
        }
        if judged == 0 {
            return Verdict::incomplete(
                self.name(),
                "nothing to judge: no session that owned an ephemeral ended",
            );
        }
        Verdict::ok(
            self.name(),
            format!("{judged} ephemerals of ended sessions, each gone with its session"),
        )
        .figure("ephemerals", judged)
    }
}
