//! The judges of the replayed VERDICTS rows, on a real run's log: the same
//! property, in the same words, as the checker's monitor for that row
//! (`checker/src/monitor/{leaks,fifo,election}.rs`), reduced to what a real
//! run can show. A real run never "ends with nothing but time to happen":
//! a stuck run is one that timed out with no recipe progress after the
//! witness looked (the judges check that too).
//!
//! Clients `0..n` are the recipe's; the witness (see
//! `zkreal::ensemble::cue::Witness`) is client `n`.

use std::collections::BTreeMap;

use zkrecipes::AppEvent;
use zksim::{Delivery, Happening, Op, OpId, Response, SessionId};

/// A judge of a stuck run: `Ok(Some(why))` is the row's violation,
/// `Ok(None)` none, `Err` a run that cannot be judged (not stuck, no look).
pub type Judge =
    fn(&[Happening<AppEvent>], &[Vec<SessionId>], usize, &str) -> Result<Option<String>, String>;

/// The trailing sequence number of a sequential node's name.
pub fn sequence_of(name: &str) -> Option<i64> {
    let digits = name.get(name.len().checked_sub(10)?..)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

/// What the witness saw: each child's path and ephemeral owner, and where
/// in the log it began to look.
pub struct Look {
    pub at: usize,
    pub nodes: Vec<(String, SessionId)>,
}

/// The witness's listing, or why there is none.
pub fn look(log: &[Happening<AppEvent>], witness: usize) -> Result<Look, String> {
    let mut at = None;
    let mut asked: BTreeMap<OpId, String> = BTreeMap::new();
    let mut nodes = Vec::new();
    for (i, h) in log.iter().enumerate() {
        match h {
            Happening::Sent {
                client,
                op,
                request,
            } if *client == witness => {
                at.get_or_insert(i);
                if let Op::Exists { path, .. } = request {
                    asked.insert(*op, path.clone());
                }
            }
            Happening::Delivered {
                client,
                delivery:
                    Delivery::Reply {
                        op,
                        reply: Ok(Response::Exists(Some(stat))),
                    },
            } if *client == witness => {
                if let Some(path) = asked.remove(op) {
                    nodes.push((path, stat.ephemeral_owner));
                }
            }
            _ => {}
        }
    }
    let at = at.ok_or("the witness never looked (its gate was not opened in time)")?;
    Ok(Look { at, nodes })
}

/// The children client `client` listed under `root` first after a
/// `ConnectionLoss`: what its recovery saw.
pub fn listing_after_loss(
    log: &[Happening<AppEvent>],
    client: usize,
    root: &str,
) -> Option<Vec<String>> {
    let mut lost = false;
    let mut listings: BTreeMap<OpId, ()> = BTreeMap::new();
    for h in log {
        match h {
            Happening::Sent {
                client: c,
                op,
                request: Op::GetChildren { path, .. },
            } if *c == client && path == root && lost => {
                listings.insert(*op, ());
            }
            Happening::Delivered {
                client: c,
                delivery: Delivery::Reply { op, reply },
            } if *c == client => match reply {
                Err(zksim::ZkError::ConnectionLoss) => lost = true,
                Ok(Response::Children { names, .. }) if listings.contains_key(op) => {
                    let mut names = names.clone();
                    names.sort();
                    return Some(names);
                }
                _ => {}
            },
            _ => {}
        }
    }
    None
}

/// Recipe progress after the witness looked: the run was not stuck.
pub fn progress_after(log: &[Happening<AppEvent>], at: usize) -> Option<String> {
    log[at..].iter().find_map(|h| match h {
        Happening::App { client, event }
            if matches!(
                event,
                AppEvent::Acquired { .. } | AppEvent::Elected | AppEvent::Released
            ) =>
        {
            Some(format!(
                "client {client}: {event:?} after the witness looked"
            ))
        }
        _ => None,
    })
}

fn ended_before(log: &[Happening<AppEvent>], at: usize) -> Vec<SessionId> {
    log[..at]
        .iter()
        .filter_map(|h| match h {
            Happening::SessionEnded { session, .. } => Some(*session),
            _ => None,
        })
        .collect()
}

/// The client whose session `owner` is (any of its sessions).
fn owner_client(sessions: &[Vec<SessionId>], n: usize, owner: SessionId) -> Option<usize> {
    (0..n.min(sessions.len())).find(|&c| sessions[c].contains(&owner))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Own {
    Nothing,
    Unknown,
    Seq(i64),
}

/// `leaks`: when the run is stuck, a node under `root` of a live session
/// that its client no longer counts as its own (not the node of its
/// current attempt). `Ok(Some(explanation))` is the violation.
pub fn leaks(
    log: &[Happening<AppEvent>],
    sessions: &[Vec<SessionId>],
    n: usize,
    root: &str,
) -> Result<Option<String>, String> {
    let look = look(log, n)?;
    if let Some(p) = progress_after(log, look.at) {
        return Err(format!("the run was not stuck: {p}"));
    }
    let mut own = vec![Own::Nothing; n];
    for h in &log[..look.at] {
        if let Happening::App { client, event } = h {
            if *client >= n {
                continue;
            }
            own[*client] = match event {
                AppEvent::Requested { .. } => Own::Unknown,
                AppEvent::Enqueued { seq: Some(s) } => Own::Seq(*s),
                AppEvent::Enqueued { seq: None } => Own::Unknown,
                AppEvent::Released | AppEvent::LostLock | AppEvent::GaveUp => Own::Nothing,
                _ => continue,
            };
        }
    }
    let ended = ended_before(log, look.at);
    let mut found = Vec::new();
    for (path, owner) in &look.nodes {
        let Some(c) = owner_client(sessions, n, *owner) else {
            continue;
        };
        if !path.starts_with(&format!("{root}/")) || ended.contains(owner) {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        match own[c] {
            Own::Unknown => continue,
            Own::Seq(s) if sequence_of(name) == Some(s) => continue,
            _ => found.push(format!("{path} (of client {c}'s live session {owner:#x})")),
        }
    }
    Ok((!found.is_empty()).then(|| {
        format!(
            "the run is stuck with a node that no client counts as its own: {}",
            found.join(", ")
        )
    }))
}

/// `fifo`: a client acquires ahead of another that enqueued before it
/// asked and still waits with its session alive.
pub fn fifo(log: &[Happening<AppEvent>], sessions: &[Vec<SessionId>], n: usize) -> Option<String> {
    let mut asked = vec![None; n];
    let mut waiting: Vec<Option<(usize, Option<i64>)>> = vec![None; n];
    let mut ended = Vec::new();
    for (i, h) in log.iter().enumerate() {
        match h {
            Happening::SessionEnded { session, .. } => ended.push(*session),
            Happening::App { client, event } if *client < n => match event {
                AppEvent::Requested { .. } => asked[*client] = Some(i),
                AppEvent::Enqueued { seq } => waiting[*client] = Some((i, *seq)),
                AppEvent::Acquired { .. } => {
                    let a = *client;
                    waiting[a] = None;
                    let Some(asked_at) = asked[a] else { continue };
                    for b in (0..n).filter(|&b| b != a) {
                        let alive = sessions
                            .get(b)
                            .and_then(|s| s.last())
                            .is_some_and(|s| !ended.contains(s));
                        if let Some((enq, seq)) = waiting[b] {
                            if enq < asked_at && alive {
                                return Some(format!(
                                    "client {a} acquired the lock ahead of client {b}, which \
                                     was already in line (sequence {seq:?}) before client {a} \
                                     asked and still waits with its session alive"
                                ));
                            }
                        }
                    }
                }
                AppEvent::GaveUp | AppEvent::LostLock | AppEvent::Released => {
                    waiting[*client] = None;
                }
                _ => {}
            },
            _ => {}
        }
    }
    None
}

/// `election`, "no leader emerged": the run is stuck, every candidate still
/// runs, nobody leads, and the lowest node under `root` belongs to a live
/// session whose client no longer waits through it (its latest create was
/// another node's).
pub fn no_leader(
    log: &[Happening<AppEvent>],
    sessions: &[Vec<SessionId>],
    n: usize,
    root: &str,
) -> Result<Option<String>, String> {
    let look = look(log, n)?;
    if let Some(p) = progress_after(log, look.at) {
        return Err(format!("the run was not stuck: {p}"));
    }
    let mut leading = vec![false; n];
    let mut latest_create: Vec<Option<String>> = vec![None; n];
    for h in &log[..look.at] {
        match h {
            Happening::App { client, event } if *client < n => match event {
                AppEvent::Elected => leading[*client] = true,
                AppEvent::Abdicated => leading[*client] = false,
                _ => {}
            },
            Happening::Sent {
                client,
                request: Op::Create { path, .. },
                ..
            } if *client < n && path.starts_with(&format!("{root}/")) => {
                latest_create[*client] = Some(path.clone());
            }
            _ => {}
        }
    }
    if leading.iter().any(|l| *l) {
        return Ok(None);
    }
    let ended = ended_before(log, look.at);
    let lowest = look
        .nodes
        .iter()
        .filter(|(p, _)| p.starts_with(&format!("{root}/")))
        .min_by_key(|(p, _)| sequence_of(p).unwrap_or(i64::MAX));
    let Some((path, owner)) = lowest else {
        return Ok(None);
    };
    let Some(c) = owner_client(sessions, n, *owner) else {
        return Ok(None);
    };
    let mine = latest_create[c]
        .as_deref()
        .is_some_and(|prefix| path.starts_with(prefix));
    if mine || ended.contains(owner) {
        return Ok(None);
    }
    Ok(Some(format!(
        "the run is stuck and nobody leads: the lowest node {path} belongs to client {c}'s \
         live session {owner:#x}, and client {c} no longer waits through it (its latest \
         create was {})",
        latest_create[c].as_deref().unwrap_or("none")
    )))
}

#[cfg(test)]
mod tests {
    //! Both directions of each judge on small hand-made logs.

    use super::*;
    use zksim::{CreateMode, Stat};

    fn app(client: usize, event: AppEvent) -> Happening<AppEvent> {
        Happening::App { client, event }
    }

    fn sent(client: usize, op: OpId, request: Op) -> Happening<AppEvent> {
        Happening::Sent {
            client,
            op,
            request,
        }
    }

    fn exists_reply(client: usize, op: OpId, owner: SessionId) -> Happening<AppEvent> {
        Happening::Delivered {
            client,
            delivery: Delivery::Reply {
                op,
                reply: Ok(Response::Exists(Some(Stat {
                    ephemeral_owner: owner,
                    ..Stat::default()
                }))),
            },
        }
    }

    fn exists(path: &str) -> Op {
        Op::Exists {
            path: path.into(),
            watch: false,
        }
    }

    /// Client 0 queues through `own_seq`; the witness (client 2) finds
    /// lock-0000000000 and lock-0000000001, both of client 0's session 7.
    fn lock_log(own_seq: i64) -> Vec<Happening<AppEvent>> {
        vec![
            app(0, AppEvent::Requested { shared: false }),
            app(0, AppEvent::Enqueued { seq: Some(own_seq) }),
            app(1, AppEvent::Requested { shared: false }),
            sent(2, 0, exists("/lock/lock-0000000000")),
            sent(2, 1, exists("/lock/lock-0000000001")),
            exists_reply(2, 0, 7),
            exists_reply(2, 1, 7),
        ]
    }

    #[test]
    fn leaks_flags_a_forgotten_node_of_a_live_session_and_only_that() {
        let sessions = vec![vec![7], vec![8]];
        let bad = leaks(&lock_log(1), &sessions, 2, "/lock").unwrap();
        assert!(
            bad.as_deref()
                .is_some_and(|e| e.contains("/lock/lock-0000000000 (of client 0")),
            "{bad:?}"
        );
        // Only its own node left: nothing forgotten.
        let mut good = lock_log(1);
        good.remove(3);
        good.remove(4);
        assert_eq!(leaks(&good, &sessions, 2, "/lock").unwrap(), None);
        // A run that went on after the look is no stuck run.
        let mut moving = lock_log(1);
        moving.push(app(
            1,
            AppEvent::Acquired {
                fence: 1,
                shared: false,
            },
        ));
        assert!(leaks(&moving, &sessions, 2, "/lock").is_err());
    }

    #[test]
    fn fifo_flags_a_jump_over_an_earlier_waiter_and_not_a_fair_order() {
        let sessions = vec![vec![7], vec![8], vec![9]];
        let jump = vec![
            app(1, AppEvent::Requested { shared: false }),
            app(1, AppEvent::Enqueued { seq: Some(0) }),
            app(
                1,
                AppEvent::Acquired {
                    fence: 5,
                    shared: false,
                },
            ),
            app(2, AppEvent::Requested { shared: false }),
            app(2, AppEvent::Enqueued { seq: Some(1) }),
            app(1, AppEvent::Released),
            app(1, AppEvent::Requested { shared: false }),
            app(1, AppEvent::Enqueued { seq: Some(0) }),
            app(
                1,
                AppEvent::Acquired {
                    fence: 5,
                    shared: false,
                },
            ),
        ];
        assert!(fifo(&jump, &sessions, 3).is_some_and(|e| e.contains("client 1 acquired")));
        let mut fair = jump.clone();
        fair.insert(
            6,
            app(
                2,
                AppEvent::Acquired {
                    fence: 6,
                    shared: false,
                },
            ),
        );
        fair.insert(7, app(2, AppEvent::Released));
        assert_eq!(fifo(&fair, &sessions, 3), None);
    }

    #[test]
    fn no_leader_flags_an_orphan_first_in_line_and_not_a_live_leader() {
        let sessions = vec![vec![7], vec![8]];
        let create = |path: &str| Op::Create {
            path: path.into(),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        let stuck = vec![
            sent(0, 0, create("/leader/_c_a-lock-")),
            sent(0, 1, create("/leader/_c_b-lock-")),
            sent(2, 0, exists("/leader/_c_a-lock-0000000000")),
            sent(2, 1, exists("/leader/_c_b-lock-0000000002")),
            exists_reply(2, 0, 7),
            exists_reply(2, 1, 7),
        ];
        let bad = no_leader(&stuck, &sessions, 2, "/leader").unwrap();
        assert!(bad.is_some_and(|e| e.contains("_c_a-lock-0000000000")));
        let mut led = stuck.clone();
        led.insert(2, app(1, AppEvent::Elected));
        assert_eq!(no_leader(&led, &sessions, 2, "/leader").unwrap(), None);
        // The lowest node is the client's current one: no orphan.
        let mut own = stuck.clone();
        own.remove(1);
        assert_eq!(no_leader(&own, &sessions, 2, "/leader").unwrap(), None);
    }
}
