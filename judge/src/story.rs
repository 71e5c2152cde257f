//! How verdicts name things: sessions as ZooKeeper prints them, records by
//! their line, faults in words.

use crate::history::{FaultRecord, Record, SessionEvent};
use crate::run::Run;

/// `session 0x1f`, as zkCli and the server logs print session ids.
pub fn session(id: i64) -> String {
    format!("session {id:#x}")
}

/// `line 12`.
pub fn line(run: &Run, index: usize) -> String {
    format!("line {}", run.line(index))
}

/// A fault in words, with its line.
pub fn fault(run: &Run, index: usize) -> String {
    let Record::Fault { t, fault } = run.record(index) else {
        return format!("{} (not a fault)", line(run, index));
    };
    let what = match fault {
        FaultRecord::Drop {
            conn,
            session: s,
            reason,
        } => format!("dropped connection {conn} of {} ({reason})", session(*s)),
        FaultRecord::Silence { session: s, reason } => {
            format!("silenced {} until it expires ({reason})", session(*s))
        }
        FaultRecord::Lag {
            server,
            ticks,
            reason,
        } => format!("made follower s{server} lag for {ticks} ticks ({reason})"),
        FaultRecord::Partition {
            server,
            ticks,
            reason,
        } => format!("cut follower s{server} from the leader for {ticks} ticks ({reason})"),
        FaultRecord::Heal { server } => format!("healed s{server}"),
    };
    format!("the server {what} at tick {t} ({})", line(run, index))
}

/// The fault before `index`, as a clause: `; the last fault before it: …`.
pub fn fault_clause(run: &Run, index: usize) -> String {
    match run.fault_before(index) {
        Some(f) => format!("the last fault before it: {}", fault(run, f)),
        None => "no fault before it".into(),
    }
}

/// How a session ended, if it did: `session 0x2 expired at zxid 9 (line 40)`.
pub fn session_end(run: &Run, id: i64) -> Option<String> {
    let (zxid, index, expired) = run.tree.sessions.get(&id)?.ended?;
    Some(format!(
        "{} {} at zxid {zxid} ({})",
        session(id),
        if expired { "expired" } else { "was closed" },
        line(run, index)
    ))
}

/// The session events of `id` before record `index`, newest first, as
/// words (`disconnected at tick 4 (line 20)`), at most `n`.
pub fn session_events(run: &Run, id: i64, index: usize, n: usize) -> Vec<String> {
    run.records[..index.min(run.records.len())]
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(i, (_, r))| match r {
            Record::Session {
                t, session, event, ..
            } if *session == id => Some(format!(
                "{} at tick {t} ({})",
                match event {
                    SessionEvent::Created => "created",
                    SessionEvent::Reattached => "reattached",
                    SessionEvent::Refused => "refused a reattach (expired)",
                    SessionEvent::Disconnected => "disconnected",
                    SessionEvent::Expired => "expired",
                    SessionEvent::Closed => "closed",
                },
                line(run, i)
            )),
            _ => None,
        })
        .take(n)
        .collect()
}
