//! `leaks`: no recipe znode is left behind, judged twice.
//!
//! * **When a client finishes** (its logic says it is done: it closes its
//!   session and counts no node as its own any more), every ephemeral of its
//!   still-live session under the scenario's root must be on its way out: a
//!   delete for it sent and not yet answered. Anything else is a node the
//!   client forgot while its session lives — a release whose delete was lost
//!   to a `ConnectionLoss` and never retried, or a create whose reply was
//!   lost and whose node was never found. It blocks everyone queued behind
//!   it for as long as the session lives (in a long-running service, for
//!   ever), even though the session's close later hides it.
//! * **Once every client has finished and closed its session**, no recipe
//!   node is left under the root (the root itself may stay). Ephemerals go
//!   with their session, so what survives here is a persistent node, or an
//!   ephemeral of a session that is somehow still alive. Runs that end
//!   before every client is done and closed are not judged on this count.
//!
//! The classic leak is the orphaned sequential node: a create whose reply
//! was lost to a connection drop succeeded anyway, and the client, not
//! knowing its name, made another.

use std::collections::{BTreeMap, BTreeSet};

use zksim::{ClientId, Delivery, Happening, Op, OpId, SessionId};

use super::view::{is_under, who, End, Measured, Sessions, View};
use super::{Monitor, Property, Sim, StepLog, Violation};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeakMonitor {
    root: String,
    ended: BTreeSet<SessionId>,
    sessions: Sessions,
    /// Clients already judged as finished.
    finished: BTreeSet<ClientId>,
    /// Deletes sent and not answered yet: (client, op) → path.
    deleting: BTreeMap<(ClientId, OpId), String>,
    /// The first node forgotten by a finished client in its live session.
    forgotten: Option<String>,
    leaked: Measured<u64>,
}

impl LeakMonitor {
    pub fn new(root: &str) -> Self {
        LeakMonitor {
            root: root.to_string(),
            ended: BTreeSet::new(),
            sessions: Sessions::default(),
            finished: BTreeSet::new(),
            deleting: BTreeMap::new(),
            forgotten: None,
            leaked: Measured(0),
        }
    }
    pub fn leaked(&self) -> u64 {
        self.leaked.0
    }

    pub fn on_step(&mut self, view: &impl View, step: &StepLog) {
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
                _ => {}
            }
        }
        for client in 0..view.num_clients() {
            if self.finished.contains(&client) || !view.is_done(client) {
                continue;
            }
            self.finished.insert(client);
            self.judge_finished(view, client);
        }
    }

    /// `client` just finished: its live session's nodes must be going.
    fn judge_finished(&mut self, view: &impl View, client: ClientId) {
        let session = view.session_of(client);
        if !view.is_session_live(session) {
            return;
        }
        let going = |path: &String| {
            self.deleting
                .iter()
                .any(|(&(c, _), p)| c == client && p == path)
        };
        let forgotten: Vec<String> = view
            .ephemerals_of(session)
            .into_iter()
            .filter(|p| is_under(p, &self.root) && !going(p))
            .collect();
        self.leaked.0 += forgotten.len() as u64;
        if forgotten.is_empty() || self.forgotten.is_some() {
            return;
        }
        self.forgotten = Some(format!(
            "{} finished at tick {} while its session {session:#x} still owned {}, which it \
             counted as its own no longer (no delete for {} was on its way): a node left \
             behind in a live session blocks whoever queues behind it until the session ends",
            who(client),
            view.now(),
            forgotten.join(", "),
            if forgotten.len() == 1 { "it" } else { "them" },
        ));
    }

    pub fn on_finish(&mut self, end: &End) -> Result<(), Violation> {
        if let Some(explanation) = &self.forgotten {
            return Err(Violation {
                property: Property::NoLeaks,
                explanation: explanation.clone(),
            });
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
                    Some(c) => format!("{path} (ephemeral of {}'s session {s:#x})", who(c)),
                    None => format!("{path} (ephemeral of session {s:#x})"),
                },
            })
            .collect();
        self.leaked.0 += leaks.len() as u64;
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
}

impl Monitor for LeakMonitor {
    fn observe(&mut self, world: &Sim, step: &StepLog) -> Result<(), Violation> {
        self.on_step(world, step);
        Ok(())
    }
    fn finish(&mut self, world: &Sim) -> Result<(), Violation> {
        self.on_finish(&End::of(world))
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
        m.on_step(&FakeView::new(2), &[ended(1000, false)]);
        // Client 1 has not closed: not judged even with a node left.
        assert_eq!(m.on_finish(&end(&[("/lock", 0), ("/lock/x", 0)])), Ok(()));
        m.on_step(&FakeView::new(2), &[ended(1001, false)]);
        assert_eq!(
            m.on_finish(&end(&[("/", 0), ("/lock", 0), ("/locks", 0)])),
            Ok(())
        );
    }

    #[test]
    fn leftover_nodes_are_named_with_their_owners() {
        let mut m = LeakMonitor::new("/lock");
        m.on_step(&FakeView::new(2), &[ended(1000, false), ended(1001, false)]);
        let err = m
            .on_finish(&end(&[
                ("/lock", 0),
                ("/lock/n-0000000003", 1001),
                ("/lock/n-0000000004", 0),
            ]))
            .unwrap_err();
        assert_eq!(err.property, Property::NoLeaks);
        assert!(
            err.explanation
                .contains("/lock/n-0000000003 (ephemeral of client 1's session 0x3e9)"),
            "{}",
            err.explanation
        );
        assert!(err.explanation.contains("/lock/n-0000000004 (persistent)"));
        assert_eq!(m.leaked(), 2);
    }

    #[test]
    fn a_node_forgotten_in_a_live_session_is_caught_when_its_client_finishes() {
        let mut m = LeakMonitor::new("/lock");
        let mut v = FakeView::new(2);
        v.nodes = vec![
            ("/lock".into(), 1, 0),
            ("/lock/n-1".into(), 5, 1000),
            ("/lock/n-2".into(), 6, 1001),
        ];
        // Client 1 finishes with its delete of n-2 on its way: fine.
        v.done = vec![1];
        m.on_step(&v, &[delete_sent(1, 9, "/lock/n-2")]);
        // Client 0 finishes with n-1 owned by its live session and no delete.
        v.done = vec![0, 1];
        m.on_step(&v, &[]);
        let err = m.on_finish(&End::default()).unwrap_err();
        assert_eq!(err.property, Property::NoLeaks);
        assert!(
            err.explanation.contains(
                "client 0 finished at tick 0 while its session 0x3e8 still owned /lock/n-1"
            ),
            "{}",
            err.explanation
        );
        assert!(!err.explanation.contains("n-2"), "{}", err.explanation);
        assert_eq!(m.leaked(), 1);
    }

    #[test]
    fn a_delete_lost_with_the_connection_is_not_on_its_way() {
        use zksim::ZkError;
        let mut m = LeakMonitor::new("/lock");
        let mut v = FakeView::new(1);
        v.nodes = vec![("/lock".into(), 1, 0), ("/lock/n-1".into(), 5, 1000)];
        m.on_step(
            &v,
            &[
                delete_sent(0, 3, "/lock/n-1"),
                reply(0, 3, Err(ZkError::ConnectionLoss)),
            ],
        );
        v.done = vec![0];
        m.on_step(&v, &[]);
        assert!(m.on_finish(&End::default()).is_err());
        // A session that already ended owns nothing to judge.
        let mut m = LeakMonitor::new("/lock");
        v.ended = vec![1000];
        m.on_step(&v, &[]);
        assert_eq!(m.on_finish(&End::default()), Ok(()));
    }
}
