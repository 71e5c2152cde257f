//! `leaks`: no recipe znode is left behind, judged at the end of a run in
//! two ways.
//!
//! * **Before sessions close.** When the run ends with sessions still live
//!   (nothing but time or a fault could happen, so no cleanup is under way),
//!   every ephemeral a live session owns under the scenario's root must be a
//!   node its client still counts as its own: the node of its current
//!   attempt (the sequence number of its last `Enqueued` while it waits or
//!   holds), or one it has sent a delete for that is not answered yet.
//!   Clients that are done are not judged this way: they closed their
//!   session (or tried to, and it will expire), which removes their nodes.
//!   Anything else is a node the client forgot while its session lives — a
//!   release whose delete was lost to a `ConnectionLoss` and never retried,
//!   a create whose reply was lost and whose node was never found. It blocks
//!   everyone queued behind it for as long as the session lives (in a
//!   long-running service, for ever). A client that waits or holds without
//!   having said where it queued (no `Enqueued`) is not judged this way.
//! * **Once every client has finished and closed its session**, no recipe
//!   node is left under the root (the root itself may stay). Ephemerals go
//!   with their session, so what survives here is a persistent node, or an
//!   ephemeral of a session that is somehow still alive. A client that
//!   finishes by closing its session rather than deleting its node first
//!   leaks nothing: the close removes it.
//!
//! The classic leak is the orphaned sequential node: a create whose reply
//! was lost to a connection drop succeeded anyway, and the client, not
//! knowing its name, made another.

use std::collections::{BTreeMap, BTreeSet};

use zkrecipes::lock::names::sequence_of;
use zkrecipes::AppEvent;
use zksim::{ClientId, Delivery, Happening, Op, OpId, SessionId};

use super::view::{is_under, who, End, Measured, Sessions, View};
use super::{Kinds, Monitor, Property, StepLog, Tally, Violation};

/// What a client counts as its own node right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Own {
    /// Nothing: not asking, or between rounds.
    Nothing,
    /// Asking or holding, but it has not said where it queued.
    Unknown,
    /// Asking or holding through the node with this sequence number.
    Seq(i64),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeakMonitor {
    root: String,
    ended: BTreeSet<SessionId>,
    sessions: Sessions,
    own: BTreeMap<ClientId, Own>,
    /// Deletes sent and not answered yet: (client, op) → path.
    deleting: BTreeMap<(ClientId, OpId), String>,
    leaked: Measured<u64>,
}

impl LeakMonitor {
    /// Whether a delete this monitor follows is still unanswered.
    pub fn deletes_in_flight(&self) -> bool {
        !self.deleting.is_empty()
    }

    /// This monitor under a renaming of clients (symmetry reduction).
    pub(crate) fn renamed(&self, r: &zksim::rename::Renaming) -> Self {
        LeakMonitor {
            root: r.text(&self.root),
            ended: self.ended.iter().map(|&s| r.session(s)).collect(),
            sessions: self.sessions.renamed(r),
            own: self.own.iter().map(|(&c, o)| (r.client(c), *o)).collect(),
            deleting: self
                .deleting
                .iter()
                .map(|(&(c, op), path)| ((r.client(c), op), r.text(path)))
                .collect(),
            leaked: self.leaked.clone(),
        }
    }

    pub fn new(root: &str) -> Self {
        LeakMonitor {
            root: root.to_string(),
            ended: BTreeSet::new(),
            sessions: Sessions::default(),
            own: BTreeMap::new(),
            deleting: BTreeMap::new(),
            leaked: Measured(0),
        }
    }
    pub fn leaked(&self) -> u64 {
        self.leaked.0
    }

    /// Nodes of live sessions that their clients no longer count as theirs.
    fn forgotten(&self, end: &End) -> Vec<String> {
        let mut found = Vec::new();
        for (c, &session) in end.sessions.iter().enumerate() {
            // A done client has closed its session (or tried: a close lost
            // with the connection leaves it to expire): what it still owns
            // goes with it.
            let done = end.done.get(c).copied().unwrap_or(false);
            if done || end.is_crashed(c) || self.ended.contains(&session) {
                continue;
            }
            let own = self.own.get(&c).copied().unwrap_or(Own::Nothing);
            if own == Own::Unknown {
                continue;
            }
            let going = |path: &str| self.deleting.iter().any(|(&(d, _), p)| d == c && p == path);
            for (path, owner) in &end.nodes {
                if *owner != session || !is_under(path, &self.root) || going(path) {
                    continue;
                }
                let name = path.rsplit('/').next().unwrap_or(path);
                if own != Own::Nothing && sequence_of(name).map(Own::Seq) == Some(own) {
                    continue;
                }
                found.push(format!(
                    "{path} (of {}'s live session {session:#x})",
                    who(c)
                ));
            }
        }
        found
    }
}

impl Monitor for LeakMonitor {
    /// Deletes sent and answered, what clients own, sessions that end.
    const READS: Kinds = Kinds::SENT
        .union(Kinds::DELIVERED)
        .union(Kinds::APP)
        .union(Kinds::SESSION_ENDED);

    fn pass<V: View + ?Sized>(&mut self, view: &V) {
        self.sessions.refresh(view);
    }

    fn observe<V: View + ?Sized>(&mut self, view: &V, step: &StepLog) -> Result<(), Violation> {
        self.sessions.refresh(view);
        for happening in step {
            match happening {
                Happening::SessionEnded { session, .. } => {
                    self.ended.insert(*session);
                }
                Happening::Sent {
                    client,
                    op,
                    request: Op::Delete { path, .. },
                } => {
                    self.deleting.insert((*client, *op), path.clone());
                }
                Happening::Delivered {
                    client,
                    delivery: Delivery::Reply { op, .. },
                } => {
                    self.deleting.remove(&(*client, *op));
                }
                Happening::App { client, event } => {
                    let own = match event {
                        AppEvent::Requested { .. } => Own::Unknown,
                        AppEvent::Enqueued { seq: Some(seq) } => Own::Seq(*seq),
                        AppEvent::Enqueued { seq: None } => Own::Unknown,
                        AppEvent::Released
                        | AppEvent::LostLock
                        | AppEvent::GaveUp
                        | AppEvent::Abdicated => Own::Nothing,
                        _ => continue,
                    };
                    self.own.insert(*client, own);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn finish(&mut self, end: &End) -> Result<(), Violation> {
        if !end.progress_possible {
            let forgotten = self.forgotten(end);
            if !forgotten.is_empty() {
                self.leaked.0 = forgotten.len() as u64;
                return Err(Violation {
                    property: Property::NoLeaks,
                    explanation: format!(
                        "the run ended with {} that no client counts as its own any more (not \
                         the node it queues or holds through, no delete on its way): {} — a \
                         node left in a live session blocks whoever queues behind it until the \
                         session ends",
                        if forgotten.len() == 1 {
                            "a node"
                        } else {
                            "nodes"
                        },
                        forgotten.join(", "),
                    ),
                });
            }
        }
        let all_closed =
            end.done.iter().all(|&d| d) && end.sessions.iter().all(|s| self.ended.contains(s));
        if !all_closed {
            return Ok(());
        }
        let leaks: Vec<String> = end
            .nodes
            .iter()
            .filter(|(path, _)| is_under(path, &self.root))
            .map(|(path, owner)| match *owner {
                0 => format!("{path} (persistent)"),
                s => match self.sessions.client_of(s) {
                    Some(c) => format!("{path} (ephemeral of {}'s session {s})", who(c)),
                    None => format!("{path} (ephemeral of session {s})"),
                },
            })
            .collect();
        self.leaked.0 = leaks.len() as u64;
        if leaks.is_empty() {
            return Ok(());
        }
        Err(Violation {
            property: Property::NoLeaks,
            explanation: format!(
                "every client finished and closed its session, yet {} recipe node{} remain{} under {}: {}",
                leaks.len(),
                if leaks.len() == 1 { "" } else { "s" },
                if leaks.len() == 1 { "s" } else { "" },
                self.root,
                leaks.join(", "),
            ),
        })
    }

    fn tally(&self, tally: &mut Tally) {
        tally.leaked_nodes += self.leaked();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testkit::*;

    fn end(nodes: &[(&str, SessionId)]) -> End {
        End {
            quiescent: true,
            progress_possible: false,
            done: vec![true, true],
            sessions: vec![1000, 1001],
            nodes: nodes.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            crashed: Vec::new(),
            paused: false,
        }
    }

    #[test]
    fn a_clean_root_passes_and_unclosed_runs_are_not_judged() {
        let mut m = LeakMonitor::new("/lock");
        m.observe(&FakeView::new(2), &[ended(1000, false)]).unwrap();
        // Client 1 has not closed: not judged even with a node left.
        assert_eq!(m.finish(&end(&[("/lock", 0), ("/lock/x", 0)])), Ok(()));
        m.observe(&FakeView::new(2), &[ended(1001, false)]).unwrap();
        assert_eq!(
            m.finish(&end(&[("/", 0), ("/lock", 0), ("/locks", 0)])),
            Ok(())
        );
    }

    #[test]
    fn leftover_nodes_are_named_with_their_owners() {
        let mut m = LeakMonitor::new("/lock");
        m.observe(&FakeView::new(2), &[ended(1000, false), ended(1001, false)])
            .unwrap();
        let err = m
            .finish(&end(&[
                ("/lock", 0),
                ("/lock/n-0000000003", 1001),
                ("/lock/n-0000000004", 0),
            ]))
            .unwrap_err();
        assert_eq!(err.property, Property::NoLeaks);
        assert!(
            err.explanation
                .contains("/lock/n-0000000003 (ephemeral of client 1's session 1001)"),
            "{}",
            err.explanation
        );
        assert!(err.explanation.contains("/lock/n-0000000004 (persistent)"));
        assert_eq!(m.leaked(), 2);
    }

    fn live(nodes: &[(&str, SessionId)]) -> End {
        End {
            done: vec![false, false],
            sessions: vec![1000, 1001],
            nodes: nodes.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            ..End::default()
        }
    }

    #[test]
    fn a_node_forgotten_in_a_live_session_is_caught() {
        let mut m = LeakMonitor::new("/lock");
        // Client 0 released n-1 (its delete lost) and queues through n-3;
        // client 1 queues through n-2.
        m.observe(
            &FakeView::new(2),
            &[
                req(0),
                enq(0, 1),
                acq(0, 5),
                delete_sent(0, 7, "/lock/n-0000000001"),
                rel(0),
                reply(0, 7, Err(zksim::ZkError::ConnectionLoss)),
                req(1),
                enq(1, 2),
                req(0),
                enq(0, 3),
            ],
        )
        .unwrap();
        let end = live(&[
            ("/lock", 0),
            ("/lock/n-0000000001", 1000),
            ("/lock/n-0000000002", 1001),
            ("/lock/n-0000000003", 1000),
        ]);
        let err = m.finish(&end).unwrap_err();
        assert_eq!(err.property, Property::NoLeaks);
        assert!(
            err.explanation
                .contains("/lock/n-0000000001 (of client 0's live session 0x3e8)"),
            "{}",
            err.explanation
        );
        assert!(
            !err.explanation.contains("n-0000000002"),
            "{}",
            err.explanation
        );
        assert!(
            !err.explanation.contains("n-0000000003"),
            "{}",
            err.explanation
        );
        // A cut-off run (cleanup may be under way) is not judged.
        let mut cut = end.clone();
        cut.progress_possible = true;
        assert_eq!(m.finish(&cut), Ok(()));
    }

    #[test]
    fn a_delete_on_its_way_an_unsaid_place_and_an_ended_session_are_not_leaks() {
        let mut m = LeakMonitor::new("/lock");
        m.observe(
            &FakeView::new(2),
            &[
                req(0),
                enq(0, 1),
                delete_sent(0, 7, "/lock/n-0000000001"),
                gave_up(0),
                // Client 1 waits but never said where it queued.
                req(1),
                ended(1000, true),
            ],
        )
        .unwrap();
        let end = live(&[
            ("/lock", 0),
            ("/lock/n-0000000001", 1000),
            ("/lock/n-0000000002", 1001),
        ]);
        assert_eq!(m.finish(&end), Ok(()));
        let mut m = LeakMonitor::new("/lock");
        m.observe(&FakeView::new(2), &[req(0), enq(0, 1), gave_up(0)])
            .unwrap();
        let mut end = live(&[("/lock", 0), ("/lock/n-0000000001", 1000)]);
        assert!(m.finish(&end).is_err());
        end.sessions = vec![1000, 1001];
        m.observe(&FakeView::new(2), &[ended(1000, true)]).unwrap();
        assert_eq!(m.finish(&end), Ok(()));
    }
}
